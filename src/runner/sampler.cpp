#include "runner/sampler.hpp"

#include <cmath>

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace attnbench {

double SteadyClock::now_s() {
  using Seconds = std::chrono::duration<double>;
  return std::chrono::duration_cast<Seconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void validate_sampling_policy(const SamplingPolicy& p) {
  if (p.warmup < 0) throw std::invalid_argument("sampling: warmup " + std::to_string(p.warmup) + " < 0");
  if (p.min_samples < 1) {
    throw std::invalid_argument("sampling: min_samples " + std::to_string(p.min_samples) + " < 1");
  }
  if (p.max_samples < p.min_samples) {
    throw std::invalid_argument("sampling: max_samples " + std::to_string(p.max_samples) + " < min_samples " +
                                std::to_string(p.min_samples));
  }
  if (!(p.target_spread_pct >= 0 && std::isfinite(p.target_spread_pct))) {
    throw std::invalid_argument("sampling: target_spread_pct " + std::to_string(p.target_spread_pct) +
                                " must be a finite number >= 0");
  }
  if (!(p.time_budget_s > 0 && std::isfinite(p.time_budget_s))) {
    throw std::invalid_argument("sampling: time_budget_s " + std::to_string(p.time_budget_s) +
                                " must be > 0");
  }
}

Samples sample(const SamplingPolicy& p, const std::function<double()>& measure_once_us, Clock& clock,
               const std::atomic<bool>* interrupt) {
  const auto interrupted = [interrupt] { return interrupt != nullptr && interrupt->load(); };
  validate_sampling_policy(p);
  Samples out;

  double first_warmup_us = 0;
  for (int i = 0; i < p.warmup; ++i) {
    const double us = measure_once_us();
    if (i == 0) first_warmup_us = us;
    out.warmup_runs = i + 1;
    if (interrupted()) break;
  }

  // Below this many samples the budget never stops the loop: a median of one or two samples means little.
  const int budget_floor = std::min(3, p.max_samples);
  const double start_s = clock.now_s();
  out.us.reserve(static_cast<std::size_t>(std::min(p.max_samples, 1024)));
  while (true) {
    out.us.push_back(measure_once_us());
    const int n = static_cast<int>(out.us.size());
    if (n >= p.min_samples && summarize(out.us).spread_pct <= p.target_spread_pct) {
      out.stop_reason = "converged";
      break;
    }
    if (n >= p.max_samples) {
      out.stop_reason = "max samples";
      break;
    }
    if (interrupted()) {
      out.stop_reason = "interrupted";
      break;
    }
    if (n >= budget_floor && clock.now_s() - start_s >= p.time_budget_s) {
      out.stop_reason = "time budget";
      break;
    }
  }

  out.summary = summarize(out.us);
  out.first_sample_outlier = out.warmup_runs > 0 && first_warmup_us > 3 * out.summary.median;
  return out;
}

}  // namespace attnbench
