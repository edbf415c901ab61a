// Where a sweep writes: the results CSV (--out) and the JSON report (--json), resolved and checked before
// anything is measured or written, so a bad path fails with exit 2 and leaves no file behind.
#pragma once

#include <string>
#include <vector>

#include "report/results_csv.hpp"

namespace attnbench {

struct SweepFiles {
  std::string csv;   // --out, default results/local/run-<local time>.csv; "-": stdout
  std::string json;  // --json, default beside the CSV (.csv -> .json, else + ".json"); "-": stdout; "" (--out -
                     // without --json): none
};

// Resolves --out / --json and checks that neither is the other, the --config file or the --trace file, and
// that both can be written (a new file's missing directories are created later, by prepare_sweep_files; a
// relative path whose top directory is missing counts as under the working directory). "-" is stdout: at most
// one of the two, never with `resume`.
// `resume`: --resume, which needs an explicit --out. Throws InputError naming the option; creates nothing.
SweepFiles sweep_files(const std::string& out, const std::string& json, const std::string& config_file,
                       const std::string& trace, bool resume);

// Creates the files' directories; with `rewrite`, replaces the CSV by `kept` atomically (temp file + rename:
// no duplicates and nothing half-written), as --resume does after dropping a partial case's rows.
void prepare_sweep_files(const SweepFiles& files, bool rewrite, const std::vector<ResultRow>& kept);

}  // namespace attnbench
