// Where a sweep writes: the results CSV (--out) and the JSON report (--json), resolved and checked before
// anything is measured or written, so a bad path fails with exit 2 and leaves no file behind. Also how they are
// written: the CSV row by row (each row one write, checked), the JSON report all or nothing (a temporary file
// renamed into place), and one writer per results file (an advisory lock held for the run's lifetime).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/files.hpp"
#include "report/results_io.hpp"

namespace attnbench {

struct SweepFiles {
  std::string csv;   // --out, default results/local/run-<local time>.csv; "-": stdout
  std::string json;  // --json, default beside the CSV (.csv -> .json, else + ".json"); "-": stdout; "" (--out -
                     // without --json): none
};

// Resolves --out / --json and checks that neither is the other, the --config file or the --trace file (by
// name, and by device and inode: a symlink or a hard link of an input is that input), and that both can be
// written (a new file's missing directories are created later, by prepare_sweep_files; a relative path whose
// top directory is missing counts as under the working directory). "-" is stdout: at most one of the two,
// never with `resume`.
// `resume`: --resume, which needs an explicit --out. Throws InputError naming the option; creates nothing.
// `inputs`: the other files the run reads, as (path, option) pairs (the --model config files): neither output may be
// one of them either.
SweepFiles sweep_files(const std::string& out, const std::string& json, const std::string& config_file,
                       const std::string& trace, bool resume,
                       const std::vector<std::pair<std::string, std::string>>& inputs = {});

// Whether `path` can be written, without creating anything: an existing writable file that is not a
// directory, or a new file whose first existing ancestor directory is writable. InputError "<option>: '<path>'
// is a directory" or "<option>: cannot write '<path>' (...)".
void check_output_path(const std::string& path, const std::string& option);

// Whether `output` and `input` name the same file: the same name once made absolute, or (both existing) the
// same device and inode (symlinks followed, hard links alike). Empty paths name nothing.
bool same_file(const std::string& output, const std::string& input);

// Creates the files' directories; with `rewrite`, replaces the CSV by `kept` atomically (temp file + rename:
// no duplicates and nothing half-written), as --resume does after dropping a partial case's rows.
// Throws WriteError when the rewrite cannot be written.
void prepare_sweep_files(const SweepFiles& files, bool rewrite, const std::vector<ResultRow>& kept);

// One writer per results file: FileLock (core/files.hpp) on the CSV and on the JSON report, taken by the
// constructor (after prepare_sweep_files made their directories) and held until destruction. A file that exists
// and is not regular (/dev/null, /dev/full, a FIFO) is not locked: it holds no results to corrupt.
// Throws InputError "--out PATH: another attnbench run (pid N) is writing it" (or --json).
class SweepLock {
 public:
  explicit SweepLock(const SweepFiles& files);
  ~SweepLock();
  SweepLock(const SweepLock&) = delete;
  SweepLock& operator=(const SweepLock&) = delete;

 private:
  std::vector<std::unique_ptr<FileLock>> locks_;
};

// The results CSV of a sweep, written row by row: each line goes out in one write(2) call and is checked, so a
// crash loses nothing already written and a failed write (disk full, /dev/full) stops the sweep at the row that
// failed, with WriteError "cannot write 'PATH': <reason>" (exit 1).
class ResultsFileWriter {
 public:
  // Creates or truncates `path` and writes the header; with `append`, opens the existing results file for
  // appending rows. Throws WriteError when it cannot be opened or the header cannot be written.
  ResultsFileWriter(const std::string& path, bool append);
  ~ResultsFileWriter();
  ResultsFileWriter(const ResultsFileWriter&) = delete;
  ResultsFileWriter& operator=(const ResultsFileWriter&) = delete;

  void write(const ResultRow& row);

 private:
  void write_line(const std::string& line);
  std::string path_;
  int fd_ = -1;
};

// Writes the JSON report (report/results_io.hpp) to `path` all or nothing: the document is rendered first,
// then written through AtomicFile (a temporary file beside `path`, renamed into place once every byte reached
// the disk). Throws WriteError "cannot write 'PATH': <reason>"; the old report is then left whole.
void write_sweep_json(const std::string& path, const std::vector<std::pair<std::string, std::string>>& env,
                      const std::string& command, const std::vector<ResultRow>& rows);

// The "environment" object of the JSON report at `path`, in file order (values that are not strings as their
// JSON text). Throws InputError "<what> PATH: ..." when it cannot be read or is not a JSON report.
std::vector<std::pair<std::string, std::string>> read_json_environment(const std::string& path,
                                                                       const std::string& what);

}  // namespace attnbench
