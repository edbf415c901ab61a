// A sweep: every case in order, rows handed to the sink as soon as a case's rows exist, progress on
// stderr, and a sticky device error turning the remaining cases into skipped rows.
#pragma once

#include <atomic>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "runner/case_runner.hpp"

namespace attnbench {

struct SweepSummary {
  int rows = 0, ok = 0, skipped = 0, failed = 0, oom = 0, ref_failures = 0;
  int cases_done = 0;
  bool interrupted = false;  // settings.interrupt was raised: the remaining cases did not run
  bool all_good() const { return failed == 0 && oom == 0 && ref_failures == 0 && !interrupted; }
};

// Where progress goes: nothing (quiet), one line per finished case (a log), or, on a terminal, a status line
// rewritten while a case runs (case i of n, its id, elapsed, estimated time left) and a line per finished case.
struct Progress {
  std::ostream* out = nullptr;
  bool terminal = false;
  std::string label;  // e.g. "rank 1/4" in a sharded sweep: starts every line; "" for none
};

// Runs `cases` in order. settings.interrupt (when set; e.g. raised by SIGINT) is checked before every case and
// by the sampler after every timed call: the case in flight ends after at most one more step per row and is
// dropped (its rows would hold too few samples; a --resume run measures it again), rows already handed to
// `sink` are complete, and the sweep returns with interrupted = true.
SweepSummary run_sweep(const std::vector<Case>& cases, const std::vector<std::string>& backends,
                       const DeviceMaker& make_device, const RunSettings& settings,
                       const std::function<void(const ResultRow&)>& sink, const Progress& progress);

}  // namespace attnbench
