// Statistics of timing samples: median and percentiles as numpy computes them by default (linear
// interpolation between closest ranks), spread, mean and standard deviation; and the asymptotic Mann-Whitney
// U test (two-sided, normal approximation with tie and continuity correction, as
// scipy.stats.mannwhitneyu(method="asymptotic")). The gate (report/compare.cpp) uses core/rank_test.hpp's
// mann_whitney_test, which takes the exact distribution for small samples: with 5 samples per side this
// approximation never goes below p = 0.012, so at alpha 0.01 it could never confirm a slowdown.
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

// Result of a two-sided Mann-Whitney U test of samples a vs b.
struct MannWhitney {
  double u = 0;        // U statistic of `a` (number of pairs with a > b, ties counted 1/2)
  double z = 0;        // standardised statistic (continuity and tie corrected); 0 when every value ties
  double p_value = 1;  // two-sided, normal approximation
  bool ties = false;   // two equal values in the pooled sample
};

// Mann-Whitney U test of `a` against `b` (both non-empty, finite): U of a, z with continuity correction and
// the tie-corrected variance n1*n2/12 * ((n+1) - sum(t^3 - t) / (n (n-1))), p = erfc(|z| / sqrt 2).
// Throws std::invalid_argument on an empty or non-finite input.
MannWhitney mann_whitney_u(std::span<const double> a, std::span<const double> b);

}  // namespace attnbench
