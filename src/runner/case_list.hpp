// The expanded cases as data (`attnbench run --list-cases --format csv`): everything another program needs
// to run the same workload itself (scripts/peer_flashinfer.py runs the real FlashInfer kernels on it), so
// both sides use the same lengths, seeds, page sizes, head counts and sampling policy.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "runner/case.hpp"
#include "runner/case_runner.hpp"

namespace attnbench {

inline constexpr int kCaseListSchemaVersion = 1;

// The column names, in order (pinned by a test; scripts/peer_flashinfer.py reads them by name).
const std::vector<std::string>& case_list_columns();

// One header line, then one line per case. Per-request and per-layer values are ';'-separated lists:
// prefix_lens, new_lens (tokens cached before the step / new this step, request by request) and
// layer_windows (SGLang's layer.sliding_window_size per layer, -1 = full attention). `timings` are the
// --timing values (eager, graph). Backend-derived values (FlashInfer's float workspace and use_tensor_cores,
// TRTLLM's zeroed workspace) are the registry's derived facts of the same names (backends/registry.hpp), computed
// as the backends' constructors compute them; std::logic_error if no registered backend derives one.
void write_case_list_csv(std::ostream& os, const std::vector<Case>& cases, const RunSettings& settings,
                         const std::vector<std::string>& timings);

}  // namespace attnbench
