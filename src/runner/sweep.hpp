// A sweep: every case in order, rows handed to the sink as soon as a case's rows exist, progress on
// stderr, and a sticky device error turning the remaining cases into skipped rows.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "runner/case_runner.hpp"

namespace attnbench {

struct SweepSummary {
  int rows = 0, ok = 0, skipped = 0, failed = 0, oom = 0, ref_failures = 0;
  bool all_good() const { return failed == 0 && oom == 0 && ref_failures == 0; }
};

SweepSummary run_sweep(const std::vector<Case>& cases, const std::vector<std::string>& backends,
                       const DeviceMaker& make_device, const RunSettings& settings,
                       const std::function<void(const ResultRow&)>& sink, std::ostream* progress);

}  // namespace attnbench
