// One case: per backend a fresh device context, the engine, construction (ledger + driver snapshots),
// an untimed validation step (every layer; the first and last checked against the reference), eager timing,
// and on a GPU CUDA-graph state, capture and timed replays (replay output compared with eager).
// Produces the result rows of the case; cross-backend checks (bitwise equality) are filled in here.
#pragma once

#include <string>
#include <vector>

#include "report/results_csv.hpp"
#include "runner/case.hpp"
#include "runner/memory_probe.hpp"
#include "runner/sampler.hpp"

namespace attnbench {

struct RunSettings {
  bool timing = true;          // false: validate only (attnbench validate)
  bool graph = true;           // graph rows where the device has CUDA graphs and the mode is captured
  bool capture_all = true;     // capture every size of the capture list, as SGLang does (else only the one timed)
  bool flush_l2 = true;        // evict the L2 before every timed step
  SamplingPolicy sampling;
  double reference_flop_budget = 4e9;  // per layer; beyond it the reference checks sampled rows
  double copy_bandwidth = 0;           // bytes/s measured at start-up (bw_fraction's denominator)
  // Every row's repro: "<repro_prefix> <repro_options> --backend B --case-id 'ID'", where repro_options are
  // the sweep's own options (so the case expands again) without --out, --backend and --case-id.
  std::string repro_prefix = "attnbench run";
  std::string repro_options;
};

struct CaseOutcome {
  std::vector<ResultRow> rows;
  bool sticky_device_error = false;  // the device context is unusable: later GPU cases must not run
};

CaseOutcome run_case(const Case& c, const std::vector<std::string>& backends, const DeviceMaker& make_device,
                     const RunSettings& settings);

// A row of the case's shape with status "skipped" and `reason` (used by the sweep after a sticky error).
ResultRow skipped_row(const Case& c, const std::string& backend, const std::string& device, const std::string& timing,
                      const std::string& reason, const RunSettings& settings);

// FLOPs and bytes of one step of the case (all layers), counted from the actual lengths; causal and
// windowed pairs counted as computed only where visible.
struct StepWork {
  double flops = 0;
  double bytes = 0;          // K/V read once per request and layer + q read + o written + new K/V written
  double kv_bytes_layer = 0;  // K/V bytes one layer reads (the working set the L2 sees)
};
StepWork step_work(const Case& c);

// Device bytes a case needs at most (KV pool, inputs, per-step metadata, plus an allowance for the backends'
// workspaces and graph buffers); a case beyond what the device has free becomes a skipped row that says so.
struct CaseMemory {
  std::int64_t kv_pool_bytes = 0;
  std::int64_t total_bytes = 0;
};
CaseMemory estimate_case_memory(const Case& c);

}  // namespace attnbench
