// What `memory`, `run` and `validate` are asked to do, as the command line says it. The CLI (app/cli.cpp)
// binds its options straight into these structs; validate() checks a RunPlan in one pass (InputError naming
// the option at fault, before anything is allocated or written); expand_cases (runner/case.hpp) turns it
// into cases and run_settings() into the runner's settings.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/model_config.hpp"
#include "engine/server_args.hpp"
#include "runner/sampler.hpp"

namespace attnbench {

// The model preset and SGLang's server arguments (and environment), shared by `memory` and `run`.
struct ModelOptions {
  std::string model = "llama-3.1-8b";  // `memory`; `run` lists its presets in RunPlan::models
  int layers = 0;   // 0: the preset's
  int tp_size = 0;  // 0: the preset's tensor-parallel degree
  ServerArgs server;
  std::int64_t flashinfer_workspace_size = 0;   // SGLANG_FLASHINFER_WORKSPACE_SIZE; 0: unset
  std::string flashinfer_use_tensor_core;       // SGLANG_FLASHINFER_USE_TENSOR_CORE: "", "true" or "false"
  std::string device = "auto";                  // auto | cpu | cuda
  std::string arch;                             // --arch: sm90 | sm100 | sm120; empty: the device's
  std::string kv_cache_dtype = "auto";          // SGLang's --kv-cache-dtype: auto | bf16 | fp16 | fp8_e4m3 | fp8_e5m2
};

// InputError "<option>: the value 'V' is given twice (a list holds each value once)" when `values` holds a value
// twice: a repeated sweep value would run (and report) the same cases twice, and --resume could not tell them
// apart. (An error rather than dropping the repeat: the command line says something it did not mean.)
// Defined for int, std::uint64_t and std::string.
template <class T>
void reject_repeated(const std::vector<T>& values, const std::string& option);

// The preset `name` with --layers / --tp-size / --kv-cache-dtype applied (InputError naming --model, --layers,
// --tp-size or --kv-cache-dtype).
ModelConfig resolve_model(const std::string& name, const ModelOptions& m);
// "attnbench: note: ...: sliding_window N not applied ..." on stderr, once per model and process, for a config whose
// window SGLang's class does not apply (ModelConfig::window_ignored); called once the model has passed validation.
void note_unapplied_window(const ModelConfig& model);
// The model dtypes a sweep runs `model` in, from --dtype's values in order: "auto" is the config's dtype as SGLang's
// --dtype auto (its default) resolves it (ModelConfig::dtype: hf_config's read_dtype), any other value parse_dtype's;
// a dtype two values resolve to runs once (auto,bf16 on a bf16 model: one dtype). InputError naming --dtype.
std::vector<DType> run_dtypes(const std::vector<std::string>& dtypes, const ModelConfig& model);
// Sets model.kv_fp8 from --kv-cache-dtype against model.dtype (after --dtype changed it); InputError naming
// --kv-cache-dtype.
void apply_kv_cache_dtype(ModelConfig& model, const ModelOptions& m);
// m.server with the environment options applied (InputError naming --flashinfer-workspace-size).
ServerArgs resolve_server_args(const ModelOptions& m);
// "all" expands to every registered backend, in registry order; names are checked against the registry
// (InputError naming --backend); a backend named twice through "all" and by name is kept once. (A name repeated
// as such is refused earlier, by validate() and make_memory_request(): reject_repeated.)
std::vector<std::string> resolve_backends(const std::vector<std::string>& names);

// A sweep (`run` / `validate`). List-valued axes expand to their cartesian product, in this order
// (outermost first): model, dtype, mode, page size, batch, lengths (decode / verify: kv_len; extend:
// prefix_len x extend_len), seed.
struct RunPlan {
  ModelOptions model;  // model.model is unused: `models` lists the presets
  std::vector<std::string> models = {"llama-3.1-8b"};
  std::vector<int> page_sizes = {64};
  std::vector<std::string> backends = {"all"};  // as given; resolve_backends() expands "all"
  std::vector<std::string> modes = {"decode"};
  std::vector<std::string> dtypes = {"auto"};  // "auto": each model's config dtype (run_dtypes)
  std::vector<int> batches = {16};
  std::vector<int> kv_lens = {1024};      // decode / verify: cached tokens per request before the step
  std::vector<int> prefix_lens = {0};     // extend: cached prefix per request
  std::vector<int> extend_lens = {512};   // extend: new tokens per request
  std::vector<int> extend_batches;        // extend: batch sizes (empty: `batches`)
  std::vector<int> verify_batches;        // verify: batch sizes (empty: `batches`)
  std::vector<int> verify_kv_lens;        // verify: cached tokens (empty: `kv_lens`)
  std::string length_dist = "fixed";      // fixed | uniform | zipf: per-request lengths in [length_min, L]
  int length_min = 1;
  double zipf_s = 1.1;
  int draft_tokens = 4;                   // verify: tokens per request (chain speculation, topk = 1)
  std::string trace;                      // CSV request_id,prefix_len,extend_len: replaces batch and lengths
  std::vector<std::uint64_t> seeds = {1};
  bool sinks = false;                     // attention-sink logits per head (GPT-OSS style)

  // Timing and validation.
  std::vector<std::string> timing = {"eager", "graph"};  // graph rows only where the device has CUDA graphs
  SamplingPolicy sampling;
  bool no_flush_l2 = false;
  bool capture_needed_only = false;
  double reference_flop_budget = 4e9;     // per layer; beyond it the reference checks sampled rows

  // Which of the expanded cases run (runner/selection.hpp).
  std::string case_id;  // only the case with this id
  std::string filter;   // regular expression (RE2, core/id_filter.hpp): only the cases whose id matches
};

// Every option of the plan, in one pass: the model and server arguments against each preset, page size and
// mode, the backends against each of them, the sweep axes, the length distribution, the timing and sampling
// policy and the reference budget. Throws InputError naming the option. Per-case limits (a request longer than
// the context, a batch beyond --max-running-requests) are checked by expand_cases, which calls this first.
void validate(const RunPlan& plan);

// Everything the runner needs besides the cases (runner/case_runner.hpp uses it per case).
struct RunSettings {
  bool timing = true;          // false: validate only (attnbench validate)
  bool graph = true;           // graph rows where the device has CUDA graphs and the mode is captured
  bool capture_all = true;     // capture every size of the capture list, as SGLang does (else only the one timed)
  bool flush_l2 = true;        // evict the L2 before every timed step
  SamplingPolicy sampling;
  double reference_flop_budget = 4e9;  // per layer; beyond it the reference checks sampled rows
  double read_bandwidth = 0;  // bytes/s, the read-only probe at start-up (bw_fraction's denominator)
  // Raised by SIGINT / SIGTERM (runner/sweep_command): sampling stops after the call in flight. Not owned.
  const std::atomic<bool>* interrupt = nullptr;
  // Every row's repro: "<repro_prefix> <repro_options> --backend B --case-id 'ID'", where repro_options are
  // the sweep's own options (so the case expands again) without --out, --backend and --case-id.
  std::string repro_prefix = "attnbench run";
  std::string repro_options;
};

// The settings of a validated plan; `args` is the command line as given (the rows' repro commands are built
// from it), `validate_only` is `attnbench validate` (no timing).
RunSettings run_settings(const RunPlan& plan, bool validate_only, const std::vector<std::string>& args);

// The sweep's own options for repro commands: `args` minus the subcommand and the options that select or
// place rows (--out, --json, --backend, --case-id, --filter, --shard, --resume, --list-cases, --quiet); values that
// a shell would split or expand are single-quoted.
std::string repro_options(const std::vector<std::string>& args);

}  // namespace attnbench
