// run_sweep: a stop raised while a case runs (SIGINT / SIGTERM in a real sweep) ends the case's sampling after
// the call in flight and drops that case, instead of sampling it to the end of its policy.
#include "runner/sweep.hpp"

#include <gtest/gtest.h>

#include <atomic>

#include "backends/registry.hpp"
#include "device/cpu_device.hpp"

namespace attnbench {
namespace {

TEST(Sweep, StopRaisedDuringACaseEndsItsSamplingAndDropsIt) {
  RunPlan plan;  // the defaults (decode, b=16, kv 1024, page 64) on the tiny model, two seeds: two cases
  plan.models = {"tiny"};
  plan.seeds = {1, 2};
  const std::vector<Case> cases = expand_cases(plan);
  ASSERT_EQ(cases.size(), 2u);
  RunSettings s;
  s.sampling = SamplingPolicy{1, 3, 3, 5.0, 60};  // warmup, min / max samples, spread %, budget s
  std::atomic<bool> stop{false};
  s.interrupt = &stop;
  bool raise_on_next_device = false;
  // In the second sweep the case's first device raises the stop, as SIGINT would mid-case; that case's policy
  // alone (100,000 samples, a spread of 0 that CPU timings never reach, 10^6 s) would run for hours without it.
  const DeviceMaker make = [&] {
    if (raise_on_next_device) stop = true;
    return std::make_unique<CpuDevice>();
  };
  std::vector<ResultRow> rows;
  const SweepSummary first_only =
      run_sweep({cases[0]}, backend_names(), make, s, [&](const ResultRow& r) { rows.push_back(r); }, Progress{});
  EXPECT_FALSE(first_only.interrupted);
  ASSERT_EQ(rows.size(), backend_names().size());
  for (const ResultRow& r : rows) EXPECT_EQ(r.samples, 3) << r.backend;

  raise_on_next_device = true;
  s.sampling = SamplingPolicy{1, 100000, 100000, 0.0, 1e6};
  rows.clear();
  const SweepSummary sum =
      run_sweep({cases[1], cases[0]}, backend_names(), make, s, [&](const ResultRow& r) { rows.push_back(r); },
                Progress{});
  EXPECT_TRUE(sum.interrupted);
  EXPECT_EQ(sum.cases_done, 0);
  EXPECT_TRUE(rows.empty()) << "the interrupted case's rows hold too few samples: none is handed to the sink";
  EXPECT_FALSE(sum.all_good());
}

}  // namespace
}  // namespace attnbench
