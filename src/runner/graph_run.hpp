// The graph row of one backend (CUDA; decode and verify), as SGLang's CUDA-graph runner does it
// (runner-internal): static inputs for the largest captured batch, graph state and the capture list
// (runner/phases.hpp), a replay checked against the eager output, then timed replays.
#pragma once

#include <vector>

#include "backends/attention_backend.hpp"
#include "report/results_io.hpp"
#include "runner/plan.hpp"
#include "runner/workload.hpp"

namespace attnbench {

// Fills `row` (status, notes, graph-state and capture bytes, timing). `eager_last` is the host copy of the
// eager step's last-layer output. A batch beyond the capture list, or a mode the backend does not capture,
// leaves a skipped row; a replay that differs from the eager output a failed one.
void run_graph(const Case& c, AttentionBackend& backend, Device& device, Workload& workload,
               const std::vector<unsigned char>& eager_last, const RunSettings& s, ResultRow& row);

}  // namespace attnbench
