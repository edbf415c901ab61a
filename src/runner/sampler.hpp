// The measurement loop: warm up, then repeat a measurement until the spread is small, the time budget is
// spent or the sample cap is reached (nvbench's stopping criteria, hyperfine's first-run outlier warning).
// Time is read from an injectable Clock so the loop is unit-tested without real time.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "core/stats.hpp"

namespace attnbench {

struct SamplingPolicy {
  int warmup = 3;                  // calls whose values are discarded
  int min_samples = 10;            // convergence is not declared below this many samples
  int max_samples = 200;           // hard cap
  double target_spread_pct = 5.0;  // converged when (p90 - p10) / median * 100 <= this
  double time_budget_s = 1.0;      // wall time for sampling (warm-up excluded), measured on the Clock
};

// A source of wall time in seconds; only differences matter.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual double now_s() = 0;
};

// std::chrono::steady_clock, in seconds.
class SteadyClock : public Clock {
 public:
  double now_s() override;
};

struct Samples {
  std::vector<double> us;   // kept samples in measurement order, µs; warm-up values are not included
  Summary summary;          // of `us`
  std::string stop_reason;  // "converged", "time budget", "max samples" or "interrupted"
  bool first_sample_outlier = false;  // the first warm-up call took > 3x the median of `us`
  int warmup_runs = 0;                // warm-up calls made
};

// Throws std::invalid_argument unless warmup >= 0, 1 <= min_samples <= max_samples, target_spread_pct is
// finite and >= 0 and time_budget_s is finite and > 0: a precondition of sample(), for programs. The same rules
// on user input (--warmup, --min-samples, ...) are checked by validate(RunPlan) (runner/plan.hpp), which
// throws InputError naming the option.
void validate_sampling_policy(const SamplingPolicy& p);

// Runs `measure_once_us` (returns one measurement in µs) p.warmup times, then until a stop rule holds:
// "converged": >= min_samples samples and spread_pct <= target_spread_pct;
// "max samples": max_samples samples;
// "time budget": time_budget_s spent on `clock` since sampling began and >= min(3, max_samples) samples.
// "interrupted": `interrupt` (when given) was raised; checked after every call, so an interrupted run makes at
// most one warm-up call and one sample after the flag rises (a step of seconds no longer holds a SIGINT for
// minutes).
// Validates `p` first (std::invalid_argument). Exceptions from `measure_once_us` propagate; a NaN or infinite
// measurement throws std::invalid_argument (from summarize).
Samples sample(const SamplingPolicy& p, const std::function<double()>& measure_once_us, Clock& clock,
               const std::atomic<bool>* interrupt = nullptr);

}  // namespace attnbench
