// `attnbench run` / `validate` as a command: the runner's plan (bound straight from the command line by
// app/cli.cpp) and where its rows go; run_sweep_command selects the cases (--filter, --case-id, --shard,
// --resume), places and locks the output files, runs the sweep with SIGINT / SIGTERM stopping it gracefully,
// and prints the run table (report/run_summary.hpp) and the optional Markdown report.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "runner/plan.hpp"

namespace attnbench {

// `run` and `validate`: a sweep. What runs is the runner's plan, bound straight by the CLI; the rest says
// where the rows go.
struct RunOptions {
  RunPlan plan;
  bool list_cases = false;      // print the expanded case ids and exit
  std::string list_format = "text";  // --format with --list-cases: text (ids) | csv (case_list.hpp)
  std::string out;              // results CSV; default results/local/run-<time>.csv
  std::string json;             // the JSON report (default: beside the CSV, .json)
  std::string report;           // "md": also print the Markdown report at the end
  bool resume = false;          // skip cases already complete in --out, append the rest
  bool quiet = false;           // no progress on stderr
  std::string shard;            // --shard K/N (runner/shard.hpp); empty: the launcher's environment, if any
  std::string config_file;      // --config (set by the parser; results must never overwrite it)
};

// Runs the sweep; `args` are the command line as given (repro commands are built from them). Returns the exit
// code: 0 when every row is good (earlier rows kept by --resume included), 1 when any row failed, ran out of
// memory or missed the reference, 130 when a signal stopped it (the rows written are complete: --resume
// continues). Bad input throws InputError before anything is written.
int run_sweep_command(const RunOptions& options, const std::vector<std::string>& args, bool validate_only,
                      std::ostream& out);

}  // namespace attnbench
