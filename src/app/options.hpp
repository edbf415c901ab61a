// Option structs of every subcommand: plain data filled by the CLI (app/cli.cpp) and unit-tested by feeding
// argv vectors. Defaults are SGLang's where an option models SGLang. The model, server and sweep options are
// the runner's own structs (runner/plan.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/shards.hpp"
#include "runner/plan.hpp"

namespace attnbench {

struct MemoryOptions {
  ModelOptions m;
  std::vector<std::string> backends = {"all"};
  std::string prefill_backend;  // empty: none
  std::string format = "table";  // table | csv | json
  std::string out;               // empty: stdout
  std::string config_file;       // --config (set by the parser; --out must never overwrite it)
};

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

// `compare BASE NEW`: the CI gate.
struct CompareCliOptions {
  std::string base, now;
  double max_slowdown = 0.05;        // fraction: fail on a confirmed slowdown beyond it
  std::int64_t max_memory_growth = 0;  // bytes
  double alpha = 0.01;
  double min_effect = 0.02;
  bool allow_env_mismatch = false;
  bool allow_version_mismatch = false;
  bool strict = false;  // --strict: a pair with too few samples for a latency verdict fails (else a warning)
  bool peers = false;  // --peers: BASE = model rows, NEW = library rows (*_lib): the peer comparison, not the gate
  std::string format = "table";  // table | md | csv | json
  std::string out;
};

// `report RESULTS`: the Markdown for a PR.
struct ReportOptions {
  std::string results;
  std::string memory;   // optional memory JSON (attnbench memory --format json)
  std::vector<std::string> peers;  // library rows (the library script's .json / .csv): "Model vs library"
  std::string format = "md";
  std::string out;
  std::string plots;  // --plots DIR: link DIR's PNGs (scripts/plot.py's output) under "### Figures"
};

// `env`: the machine, the build, whether a GPU is usable.
struct EnvOptions {
  std::string format = "text";  // text | json
};

enum class Command { none, memory, list, env, run, validate, compare, report, merge };

struct ParsedCli {
  Command command = Command::none;
  MemoryOptions memory;
  RunOptions run;
  CompareCliOptions compare;
  ReportOptions report;
  EnvOptions env;
  MergeOptions merge;  // report/shards.hpp
  std::vector<std::string> args;  // the arguments as given (for repro commands)
  bool exit_now = false;  // --help / --version: print `output`, exit with exit_code
  int exit_code = 0;
  std::string output;
};

}  // namespace attnbench
