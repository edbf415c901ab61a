// Helpers shared by tests: temp dirs, running the attnbench binary, reading files, text lines.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace attnbench::test {

// A fresh directory under the system temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "attnbench-test-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (std::filesystem::path(path_) / name).string(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
}

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The lines of `text`, without their '\n'.
inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

struct RunResult {
  int exit_code;
  std::string out;
  std::string err;
};

// The binary the hostile-input tests run: ATTNBENCH_HOSTILE_BINARY when set (e.g. an older build, to count the
// inputs it gets wrong), else the attnbench built with the tests.
inline std::string hostile_binary() {
  const char* other = std::getenv("ATTNBENCH_HOSTILE_BINARY");
  return other && *other ? other : ATTNBENCH_BINARY;
}

// Runs the built attnbench binary with `args` (a shell-quoted string), capturing stdout and stderr.
inline RunResult run_attnbench(const std::string& args, const TempDir& dir) {
  const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  const std::string cmd = std::string(ATTNBENCH_BINARY) + " " + args + " >" + out + " 2>" + err;
  const int status = std::system(cmd.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return {code, read_file(out), read_file(err)};
}

}  // namespace attnbench::test
