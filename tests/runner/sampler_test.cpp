// sample(): stopping rules, warm-up handling and the first-run outlier flag, driven by a fake clock that
// advances by exactly the duration each fake measurement reports.
#include "runner/sampler.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <utility>
#include <vector>

namespace attnbench {
namespace {

class FakeClock : public Clock {
 public:
  double now_s() override { return t_s; }
  double t_s = 1000.0;  // arbitrary origin: only differences matter
};

// Replays `warmup` values for the first calls, then cycles through `values`; each call advances the clock.
class FakeMeasurement {
 public:
  FakeMeasurement(FakeClock& clock, std::vector<double> warmup, std::vector<double> values)
      : clock_(clock), warmup_(std::move(warmup)), values_(std::move(values)) {}

  double operator()() {
    const std::size_t i = calls_++;
    const double us = i < warmup_.size() ? warmup_[i] : values_[(i - warmup_.size()) % values_.size()];
    clock_.t_s += us * 1e-6;
    return us;
  }
  std::size_t calls() const { return calls_; }

 private:
  FakeClock& clock_;
  std::vector<double> warmup_;
  std::vector<double> values_;
  std::size_t calls_ = 0;
};

Samples run(const SamplingPolicy& p, FakeMeasurement& m, FakeClock& clock) {
  return sample(
      p, [&m] { return m(); }, clock);
}

TEST(Sampler, SteadySequenceConvergesAtMinSamples) {
  FakeClock clock;
  FakeMeasurement m(clock, {900, 800, 700}, {100});
  SamplingPolicy p;  // warmup 3, min 10, max 200, 5 %, 1 s
  const Samples s = run(p, m, clock);
  EXPECT_EQ(s.stop_reason, "converged");
  ASSERT_EQ(s.us.size(), 10u);
  EXPECT_EQ(m.calls(), 13u);
  EXPECT_EQ(s.warmup_runs, 3);
  EXPECT_EQ(s.summary.n, 10);
  EXPECT_EQ(s.summary.median, 100.0);
  EXPECT_EQ(s.summary.spread_pct, 0.0);
}

TEST(Sampler, WarmupValuesAreNotKept) {
  FakeClock clock;
  FakeMeasurement m(clock, {111, 222}, {5, 6, 7});
  SamplingPolicy p;
  p.warmup = 2;
  p.min_samples = 3;
  p.target_spread_pct = 1000;  // converge as soon as min_samples exist
  const Samples s = run(p, m, clock);
  EXPECT_EQ(s.us, (std::vector<double>{5, 6, 7}));
  EXPECT_EQ(s.warmup_runs, 2);
  EXPECT_EQ(s.summary.max, 7.0);
}

TEST(Sampler, ConvergesOnceOutliersLeaveTheP10P90Band) {
  // One fast and one slow sample, then steady: with n samples p10 sits at rank 0.1 (n - 1) and p90 at
  // 0.9 (n - 1); both land on a 100 only from n = 11 on (n = 10: p10 95, p90 120, spread 25 %).
  FakeClock clock;
  std::vector<double> values = {300, 50};
  values.resize(1000, 100.0);
  FakeMeasurement m(clock, {}, values);
  SamplingPolicy p;
  p.warmup = 0;
  const Samples s = run(p, m, clock);
  EXPECT_EQ(s.stop_reason, "converged");
  EXPECT_EQ(s.us.size(), 11u);
  EXPECT_LE(s.summary.spread_pct, p.target_spread_pct);
}

TEST(Sampler, NoisySequenceRunsUntilTheBudget) {
  // 100, 200, 100, ... never converges (spread ~100 %). Sampling time after k samples: 67 -> 10000 µs,
  // 68 -> 10200 µs; a 10150 µs budget therefore ends the loop at exactly 68 samples.
  // The warm-up run takes 5 s of clock time: it must not count against the budget.
  FakeClock clock;
  FakeMeasurement m(clock, {5e6}, {100, 200});
  SamplingPolicy p;
  p.warmup = 1;
  p.time_budget_s = 0.01015;
  const Samples s = run(p, m, clock);
  EXPECT_EQ(s.stop_reason, "time budget");
  EXPECT_EQ(s.us.size(), 68u);
  EXPECT_GT(s.summary.spread_pct, p.target_spread_pct);
}

TEST(Sampler, BudgetNeverCutsBelowThreeSamples) {
  FakeClock clock;
  FakeMeasurement m(clock, {}, {10e6, 20e6});  // every sample alone exceeds the 1 s budget
  SamplingPolicy p;
  p.warmup = 0;
  const Samples s = run(p, m, clock);
  EXPECT_EQ(s.stop_reason, "time budget");
  EXPECT_EQ(s.us.size(), 3u);
}

TEST(Sampler, MaxSamplesCapsTheLoop) {
  FakeClock clock;
  FakeMeasurement m(clock, {}, {100, 200});
  SamplingPolicy p;
  p.max_samples = 25;
  p.time_budget_s = 1e9;
  const Samples s = run(p, m, clock);
  EXPECT_EQ(s.stop_reason, "max samples");
  EXPECT_EQ(s.us.size(), 25u);
  EXPECT_EQ(m.calls(), 28u);  // 3 warm-up + 25
}

TEST(Sampler, SingleSampleCapWinsOverBudgetFloor) {
  // max_samples 1: the budget floor is min(3, 1) = 1; one sample of spread 0 converges.
  FakeClock clock;
  FakeMeasurement m(clock, {}, {10e6});
  SamplingPolicy p;
  p.warmup = 0;
  p.min_samples = 1;
  p.max_samples = 1;
  const Samples s = run(p, m, clock);
  EXPECT_EQ(s.us.size(), 1u);
  EXPECT_EQ(s.stop_reason, "converged");
}

TEST(Sampler, FirstWarmupOutlierIsFlagged) {
  SamplingPolicy p;
  {
    FakeClock clock;
    FakeMeasurement m(clock, {301, 100, 100}, {100});  // 301 > 3 * median 100
    EXPECT_TRUE(run(p, m, clock).first_sample_outlier);
  }
  {
    FakeClock clock;
    FakeMeasurement m(clock, {300, 100, 100}, {100});  // exactly 3x is not an outlier
    EXPECT_FALSE(run(p, m, clock).first_sample_outlier);
  }
  {
    FakeClock clock;
    FakeMeasurement m(clock, {100, 5000, 5000}, {100});  // only the very first warm-up call counts
    EXPECT_FALSE(run(p, m, clock).first_sample_outlier);
  }
  {
    FakeClock clock;
    FakeMeasurement m(clock, {}, {100});
    SamplingPolicy no_warmup = p;
    no_warmup.warmup = 0;
    const Samples s = run(no_warmup, m, clock);
    EXPECT_FALSE(s.first_sample_outlier);
    EXPECT_EQ(s.warmup_runs, 0);
  }
}

TEST(Sampler, InvalidPolicyIsRejectedBeforeMeasuring) {
  FakeClock clock;
  FakeMeasurement m(clock, {}, {100});
  auto bad = [](auto edit) {
    SamplingPolicy p;
    edit(p);
    return p;
  };
  EXPECT_THROW(run(bad([](SamplingPolicy& p) { p.warmup = -1; }), m, clock), std::invalid_argument);
  EXPECT_THROW(run(bad([](SamplingPolicy& p) { p.min_samples = 0; }), m, clock), std::invalid_argument);
  EXPECT_THROW(run(bad([](SamplingPolicy& p) { p.max_samples = 9; }), m, clock), std::invalid_argument);
  EXPECT_THROW(run(bad([](SamplingPolicy& p) { p.time_budget_s = 0; }), m, clock), std::invalid_argument);
  EXPECT_THROW(run(bad([](SamplingPolicy& p) { p.time_budget_s = -1; }), m, clock), std::invalid_argument);
  EXPECT_EQ(m.calls(), 0u);
}

TEST(Sampler, SteadyClockIsMonotonicAndInSeconds) {
  SteadyClock clock;
  const double a = clock.now_s();
  double x = 0;
  for (int i = 0; i < 100000; ++i) x += i * 1e-9;
  const double b = clock.now_s();
  EXPECT_GE(b, a);
  EXPECT_LT(b - a, 60.0) << x;  // seconds, not nanoseconds
}

TEST(Sampler, InterruptStopsAfterTheCallInFlight) {
  // warmup 3, then up to 500 samples of 1-2 s that never converge (0 % spread) within a budget of 10^6 s.
  const SamplingPolicy p{3, 500, 500, 0.0, 1e6};
  // raise_at: the call (1-based) after which the stop rises; 0 = already raised, -1 = never.
  const auto run_until = [&p](int raise_at) {
    FakeClock clock;
    FakeMeasurement m(clock, {}, {1e6, 2e6});
    std::atomic<bool> stop{raise_at == 0};
    Samples s = sample(p, [&] { const double us = m(); if (static_cast<int>(m.calls()) == raise_at) stop = true; return us; },
                       clock, &stop);
    return std::make_pair(s, m.calls());
  };
  const auto [before, calls_before] = run_until(0);  // one warm-up call, one sample
  EXPECT_EQ(before.stop_reason, "interrupted");
  EXPECT_EQ(before.warmup_runs, 1);
  EXPECT_EQ(before.us.size(), 1u);
  EXPECT_EQ(calls_before, 2u);
  const auto [mid, calls_mid] = run_until(7);  // raised by the 4th sample: that sample is the last
  EXPECT_EQ(mid.stop_reason, "interrupted");
  EXPECT_EQ(mid.warmup_runs, 3);
  EXPECT_EQ(mid.summary.n, 4);
  EXPECT_EQ(calls_mid, 7u);
  const auto [never, calls_never] = run_until(-1);  // the policy runs its course
  EXPECT_EQ(never.stop_reason, "max samples");
  EXPECT_EQ(never.us.size(), 500u);
  EXPECT_EQ(calls_never, 503u);
}

}  // namespace
}  // namespace attnbench
