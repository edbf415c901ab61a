#include "runner/sweep_files.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/errors.hpp"
#include "core/files.hpp"
#include "report/results_io.hpp"

namespace attnbench {

namespace {

namespace fs = std::filesystem;

std::string default_results_path() {
  const std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "results/local/run-%Y%m%d-%H%M%S.csv", std::localtime(&t));
  return buf;
}

// Whether `path` exists and is not a regular file (a device, a FIFO): nothing to lock or rename there.
bool is_special(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
}

}  // namespace

bool same_file(const std::string& output, const std::string& input) {
  if (output.empty() || input.empty()) return false;
  std::error_code ec1, ec2;
  const fs::path a = fs::weakly_canonical(output, ec1), b = fs::weakly_canonical(input, ec2);
  if (!ec1 && !ec2 && a == b) return true;
  const std::optional<FileId> ia = file_id(output), ib = file_id(input);
  return ia && ib && *ia == *ib;
}

void check_output_path(const std::string& path, const std::string& option) {
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec)) throw InputError(option + ": '" + printable(path) + "' is a directory");
  if (fs::exists(p, ec)) {
    if (::access(path.c_str(), W_OK) != 0) throw InputError(option + ": cannot write '" + printable(path) + "'");
    return;
  }
  fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  while (!fs::exists(dir, ec) && dir.has_parent_path() && dir != dir.parent_path()) dir = dir.parent_path();
  if (!fs::exists(dir, ec) && dir.is_relative()) dir = ".";  // "results/local/x.csv" from an empty directory
  if (!fs::is_directory(dir, ec) || ::access(dir.c_str(), W_OK) != 0)
    throw InputError(option + ": cannot write '" + printable(path) + "' (" + printable(dir.string()) +
                     " is not a writable directory)");
}

SweepFiles sweep_files(const std::string& out, const std::string& json, const std::string& config_file,
                       const std::string& trace, bool resume,
                       const std::vector<std::pair<std::string, std::string>>& inputs) {
  SweepFiles f;
  f.csv = out.empty() ? default_results_path() : out;
  if (resume && out.empty()) throw InputError("--resume: needs --out (the results file to complete)");
  if (resume && out == "-") throw InputError("--resume: needs --out FILE (the results file to complete), not '-'");
  if (out == "-" && json == "-") throw InputError("--json: '-' (stdout) is already --out; give one of them a file");
  f.json = !json.empty()                          ? json
           : out == "-"                           ? std::string()  // CSV on stdout: a JSON file only when asked
           : fs::path(f.csv).extension() == ".csv" ? fs::path(f.csv).replace_extension(".json").string()
                                                   : f.csv + ".json";
  if (same_file(f.json, f.csv) && !is_special(f.csv))
    throw InputError("--json: '" + printable(f.json) + "' is the --out file");
  for (const auto& [output, option] : {std::pair{f.csv, std::string("--out")}, std::pair{f.json, std::string("--json")}}) {
    if (output.empty() || output == "-") continue;  // none, or stdout
    std::vector<std::pair<std::string, std::string>> read = {{config_file, "--config"}, {trace, "--trace"}};
    read.insert(read.end(), inputs.begin(), inputs.end());
    for (const auto& [input, input_option] : read) {
      if (same_file(output, input))
        throw InputError(option + ": '" + printable(output) + "' is the " + input_option + " file" +
                         (output == input ? "" : " ('" + printable(input) + "')"));
    }
  }
  if (f.csv != "-") check_output_path(f.csv, "--out");
  if (!f.json.empty() && f.json != "-") check_output_path(f.json, json.empty() ? "--out" : "--json");
  return f;
}

void prepare_sweep_files(const SweepFiles& files, bool rewrite, const std::vector<ResultRow>& kept) {
  for (const std::string& f : {files.csv, files.json}) {
    if (f.empty() || f == "-") continue;
    std::error_code ec;
    const auto parent = fs::path(f).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
  }
  if (!rewrite) return;
  AtomicFile csv(files.csv);
  csv.stream() << results_csv_header() << '\n';
  for (const ResultRow& r : kept) csv.stream() << results_csv_line(r) << '\n';
  csv.commit();
}

SweepLock::SweepLock(const SweepFiles& files) {
  // "-" (stdout) and an absent JSON need no lock.
  if (files.csv != "-" && !is_special(files.csv)) locks_.push_back(std::make_unique<FileLock>(files.csv, "--out"));
  if (!files.json.empty() && files.json != "-" && !is_special(files.json))
    locks_.push_back(std::make_unique<FileLock>(files.json, "--json"));
}

SweepLock::~SweepLock() = default;

ResultsFileWriter::ResultsFileWriter(const std::string& path, bool append) : path_(path) {
  // Not truncated on open: the lock below comes first.
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY | (append ? O_APPEND : 0);
  do {
    fd_ = ::open(path.c_str(), flags, 0666);
  } while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) throw WriteError("cannot write '" + printable(path_) + "': " + std::strerror(errno));
  // SweepLock locks the name (OUT.lock); a hard link is another name of the same file, so the file itself is
  // locked too (flock, held until this writer closes it): a second run writing it by another name stops here,
  // before it truncates or appends anything.
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
    int rc;
    do {
      rc = ::flock(fd_, LOCK_EX | LOCK_NB);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0 && errno == EWOULDBLOCK) {
      ::close(fd_);
      fd_ = -1;
      throw InputError("--out " + printable(path_) +
                       ": another attnbench run is writing this file (under another name: a hard link)");
    }
    if (!append && ::ftruncate(fd_, 0) != 0) {
      const int err = errno;
      ::close(fd_);
      fd_ = -1;
      throw WriteError("cannot write '" + printable(path_) + "': " + std::strerror(err));
    }
  }
  if (!append) write_line(results_csv_header());
}

ResultsFileWriter::~ResultsFileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void ResultsFileWriter::write(const ResultRow& row) { write_line(results_csv_line(row)); }

void ResultsFileWriter::write_line(const std::string& text) {
  const std::string line = text + '\n';
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw WriteError("cannot write '" + printable(path_) + "': " + std::strerror(n < 0 ? errno : EIO));
    done += static_cast<std::size_t>(n);
  }
}

void write_sweep_json(const std::string& path, const std::vector<std::pair<std::string, std::string>>& env,
                      const std::string& command, const std::vector<ResultRow>& rows) {
  AtomicFile out(path);  // a path that cannot be written fails before the work of rendering
  write_results_json(out.stream(), env, command, rows);
  out.commit();  // checks the stream, fsyncs, renames into place (WriteError otherwise)
}

std::vector<std::pair<std::string, std::string>> read_json_environment(const std::string& path,
                                                                       const std::string& what) {
  const std::string label = what + " " + printable(path);
  const std::string text = read_input_file(path, what, std::int64_t{1} << 31);
  // Only the environment is kept: the rows (with their raw samples) are skipped while parsing.
  using Json = nlohmann::ordered_json;  // keeps the environment in file order
  const auto keep = [](int depth, Json::parse_event_t event, Json& parsed) {
    if (depth == 1 && event == Json::parse_event_t::key) return parsed == "environment";
    return true;
  };
  check_json_nesting(text, kMaxJsonNesting, label);
  const Json j = Json::parse(text, keep, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw InputError(label + ": not a JSON report (it does not parse)");
  const auto it = j.find("environment");
  if (it == j.end() || !it->is_object()) throw InputError(label + ": no \"environment\" object");
  std::vector<std::pair<std::string, std::string>> env;
  for (const auto& [k, v] : it->items()) env.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
  return env;
}

}  // namespace attnbench
