#include "runner/sweep_files.hpp"

#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <utility>

#include "core/errors.hpp"

namespace attnbench {

namespace {

namespace fs = std::filesystem;

std::string default_results_path() {
  const std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "results/local/run-%Y%m%d-%H%M%S.csv", std::localtime(&t));
  return buf;
}

bool same_file(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  std::error_code ec;
  return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

// Whether `path` can be written, without creating anything: an existing writable file, or a new file whose
// first existing ancestor directory is writable.
void check_writable(const std::string& path, const std::string& option) {
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec)) throw InputError(option + ": '" + path + "' is a directory");
  if (fs::exists(p, ec)) {
    if (::access(path.c_str(), W_OK) != 0) throw InputError(option + ": cannot write '" + path + "'");
    return;
  }
  fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  while (!fs::exists(dir, ec) && dir.has_parent_path() && dir != dir.parent_path()) dir = dir.parent_path();
  if (!fs::exists(dir, ec) && dir.is_relative()) dir = ".";  // "results/local/x.csv" from an empty directory
  if (!fs::is_directory(dir, ec) || ::access(dir.c_str(), W_OK) != 0)
    throw InputError(option + ": cannot write '" + path + "' (" + dir.string() + " is not a writable directory)");
}

}  // namespace

SweepFiles sweep_files(const std::string& out, const std::string& json, const std::string& config_file,
                       const std::string& trace, bool resume) {
  SweepFiles f;
  f.csv = out.empty() ? default_results_path() : out;
  if (resume && out.empty()) throw InputError("--resume: needs --out (the results file to complete)");
  if (resume && out == "-") throw InputError("--resume: needs --out FILE (the results file to complete), not '-'");
  if (out == "-" && json == "-") throw InputError("--json: '-' (stdout) is already --out; give one of them a file");
  f.json = !json.empty()                          ? json
           : out == "-"                           ? std::string()  // CSV on stdout: a JSON file only when asked
           : fs::path(f.csv).extension() == ".csv" ? fs::path(f.csv).replace_extension(".json").string()
                                                   : f.csv + ".json";
  if (same_file(f.csv, f.json)) throw InputError("--json: '" + f.json + "' is the --out file");
  for (const auto& [output, option] : {std::pair{f.csv, std::string("--out")}, std::pair{f.json, std::string("--json")}}) {
    if (output.empty() || output == "-") continue;  // none, or stdout
    if (same_file(output, config_file)) throw InputError(option + ": '" + output + "' is the --config file");
    if (same_file(output, trace)) throw InputError(option + ": '" + output + "' is the --trace file");
  }
  if (f.csv != "-") check_writable(f.csv, "--out");
  if (!f.json.empty() && f.json != "-") check_writable(f.json, json.empty() ? "--out" : "--json");
  return f;
}

void prepare_sweep_files(const SweepFiles& files, bool rewrite, const std::vector<ResultRow>& kept) {
  for (const std::string& f : {files.csv, files.json}) {
    std::error_code ec;
    const auto parent = fs::path(f).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
  }
  if (!rewrite) return;
  const std::string tmp = files.csv + ".resume-tmp";
  {
    ResultsCsvWriter w(tmp);
    for (const ResultRow& r : kept) w.write(r);
  }
  fs::rename(tmp, files.csv);
}

}  // namespace attnbench
