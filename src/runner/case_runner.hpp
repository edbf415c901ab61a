// One case: per backend a fresh device context, the engine, construction (runner/phases.hpp), an untimed
// validation step (every layer; the first and last checked against the reference: validation_step.hpp),
// eager timing (timed_step.hpp), and on a GPU CUDA-graph state, capture and timed replays (graph_run.hpp).
// Produces the result rows of the case; cross-backend checks (bitwise equality) are filled in here.
#pragma once

#include <string>
#include <vector>

#include "report/results_io.hpp"
#include "runner/case.hpp"
#include "runner/case_work.hpp"
#include "runner/memory_probe.hpp"
#include "runner/plan.hpp"

namespace attnbench {

struct CaseOutcome {
  std::vector<ResultRow> rows;
  bool sticky_device_error = false;  // the device context is unusable: later GPU cases must not run
};

// Every backend of `backends` on the case, in order (a fresh device from `make_device` each), then the
// cross-backend checks; stops after a sticky device error. The case's memory estimate is checked once against
// a probe device (all rows skipped when it cannot fit) and again against each backend's device.
CaseOutcome run_case(const Case& c, const std::vector<std::string>& backends, const DeviceMaker& make_device,
                     const RunSettings& settings);

// A row of the case's shape with status "skipped" and `reason` (used by the sweep after a sticky error).
ResultRow skipped_row(const Case& c, const std::string& backend, const std::string& device, const std::string& timing,
                      const std::string& reason, const RunSettings& settings);

}  // namespace attnbench
