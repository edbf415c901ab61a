// Summary statistics of timing samples: median and percentiles as numpy computes them by default
// (linear interpolation between closest ranks), spread, mean and standard deviation.
#pragma once

#include <span>

namespace attnbench {

// All fields are in the unit of the samples (µs for timings) except n (a count) and spread_pct (percent).
struct Summary {
  int n = 0;
  double median = 0, p10 = 0, p90 = 0, min = 0, max = 0, mean = 0;
  double stddev = 0;      // sample standard deviation (divides by n - 1); 0 when n < 2
  double spread_pct = 0;  // (p90 - p10) / median * 100; 0 when median is 0
};

// Percentile q in [0, 100] of `sorted` (ascending, non-empty), numpy's default "linear" method:
// position (n - 1) * q / 100, interpolated between the two closest ranks.
double percentile_sorted(std::span<const double> sorted, double q);

// Summarizes `samples` (any order; the span is only read). Empty input gives all zeros and n = 0.
// Throws std::invalid_argument when a sample is NaN or infinite (such a sample is a measurement bug).
Summary summarize(std::span<const double> samples);

}  // namespace attnbench
