// Option structs of every subcommand: plain data filled by the CLI (app/cli.cpp) and unit-tested by feeding
// argv vectors. Defaults are SGLang's where an option models SGLang.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/server_args.hpp"

namespace attnbench {

// Model preset and SGLang server arguments, shared by `memory` and `run`.
struct ModelOptions {
  std::string model = "llama-3.1-8b";
  int layers = 0;   // 0: the preset's
  int tp_size = 0;  // 0: the preset's tensor-parallel degree
  ServerArgs server;
  std::int64_t flashinfer_workspace_size = 0;   // SGLANG_FLASHINFER_WORKSPACE_SIZE; 0: unset
  std::string flashinfer_use_tensor_core;       // SGLANG_FLASHINFER_USE_TENSOR_CORE: "", "true" or "false"
  std::string device = "auto";
};

struct MemoryOptions {
  ModelOptions m;
  std::vector<std::string> backends = {"all"};
  std::string prefill_backend;  // empty: none
  std::string format = "table";  // table | csv | json
  std::string out;               // empty: stdout
};

// `run` and `validate`: a sweep. List-valued options expand to their cartesian product.
struct RunOptions {
  ModelOptions m;                        // m.model is unused: `models` lists the presets
  std::vector<std::string> models = {"llama-3.1-8b"};
  std::vector<int> page_sizes = {64};
  std::vector<std::string> backends = {"all"};
  std::vector<std::string> modes = {"decode"};
  std::vector<std::string> dtypes = {"bf16"};
  std::vector<int> batches = {16};
  std::vector<int> kv_lens = {1024};
  std::vector<int> prefix_lens = {0};
  std::vector<int> extend_lens = {512};
  std::vector<int> extend_batches, verify_batches, verify_kv_lens;
  std::string length_dist = "fixed";
  int length_min = 1;
  double zipf_s = 1.1;
  int draft_tokens = 4;
  std::string trace;
  std::vector<std::uint64_t> seeds = {1};
  bool sinks = false;
  std::vector<std::string> timing = {"eager", "graph"};  // graph rows only where the device has CUDA graphs
  int warmup = 3;
  int min_samples = 10;
  int max_samples = 200;
  double target_spread = 5.0;   // percent
  double time_budget = 1.0;     // seconds per timed row
  bool no_flush_l2 = false;
  bool capture_needed_only = false;
  double reference_flop_budget = 4e9;
  std::string case_id;          // run only the case with this id
  bool list_cases = false;      // print the expanded case ids and exit
  std::string list_format = "text";  // --format with --list-cases: text (ids) | csv (case_list.hpp)
  std::string out;              // results CSV; default results/local/run-<time>.csv
  std::string json;             // the JSON report (default: beside the CSV, .json)
  std::string report;           // "md": also print the Markdown report at the end
  std::string filter;           // ECMAScript regex: run only the cases whose id matches
  bool resume = false;          // skip cases already complete in --out, append the rest
  bool quiet = false;           // no progress on stderr
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
};

enum class Command { none, memory, list, env, run, validate, compare, report };

struct ParsedCli {
  Command command = Command::none;
  MemoryOptions memory;
  RunOptions run;
  CompareCliOptions compare;
  ReportOptions report;
  std::vector<std::string> args;  // the arguments as given (for repro commands)
  bool exit_now = false;  // --help / --version: print `output`, exit with exit_code
  int exit_code = 0;
  std::string output;
};

}  // namespace attnbench
