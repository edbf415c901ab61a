// Statistics of timing samples: median and percentiles as numpy computes them by default (linear
// interpolation between closest ranks), spread, mean and standard deviation; and the asymptotic Mann-Whitney
// U test (two-sided, normal approximation with tie and continuity correction, as
// scipy.stats.mannwhitneyu(method="asymptotic")). The gate (report/compare.cpp) uses core/rank_test.hpp's
// mann_whitney_test, which takes the exact distribution for small samples: with 5 samples per side this
// approximation never goes below p = 0.012, so at alpha 0.01 it could never confirm a slowdown.
#pragma once

#include <cstddef>
#include <cstdint>
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
  double var = 0;      // the tie-corrected variance of U under the null (0 when every value ties)
};

// Mann-Whitney U test of `a` against `b` (both non-empty, finite): U of a, z with continuity correction and
// the tie-corrected variance n1*n2/12 * ((n+1) - sum(t^3 - t) / (n (n-1))), p = erfc(|z| / sqrt 2).
// Throws std::invalid_argument on an empty or non-finite input.
MannWhitney mann_whitney_u(std::span<const double> a, std::span<const double> b);

// Percentile bootstrap of median(a) / median(b): the 5th and 95th percentiles of that ratio over
// kBootstrapResamples resamples of both sample sets. Reproducible everywhere: mt19937_64 seeded with `seed`,
// indices from its raw 64-bit draws (modulo), never from a standard distribution (whose algorithm each
// standard library chooses), so every library gives the same band.
//
// The cost is bounded: a resample of a side draws min(n, kMaxBootstrapDraws) values (the median of a resample
// is selected in linear time, not sorted), so one band costs at most kBootstrapResamples * 2 *
// kMaxBootstrapDraws draws (8,192,000) however many samples a row holds (100,000 samples per row took 88 s a
// pair before). Up to the bound (the sampler stops at 200 samples by default) every sample is resampled with
// replacement, the plain bootstrap. Beyond it, an m-out-of-n bootstrap (Bickel, Goetze & van Zwet 1997) with
// m = kMaxBootstrapDraws: a median of m draws scatters sqrt(n / m) times as widely as one of n (its variance
// is 1 / (4 n f(median)^2)), so each resampled median's distance from the side's sample median is scaled by
// sqrt(m / n) to estimate the spread of the n-sample median the row reports.
inline constexpr int kBootstrapResamples = 1000;
inline constexpr std::size_t kMaxBootstrapDraws = 4096;

struct BootstrapBand {
  double lo = 0, hi = 0;             // 5th and 95th percentiles of the resampled ratios
  int resamples = 0;                 // kBootstrapResamples
  std::size_t draws_a = 0, draws_b = 0;  // values drawn per resample of a / of b (at most kMaxBootstrapDraws)
};

// Throws std::invalid_argument when a or b is empty or holds a value that is not finite and > 0.
BootstrapBand bootstrap_median_ratio(std::span<const double> a, std::span<const double> b,
                                     std::uint64_t seed = 0x5eedULL);

}  // namespace attnbench
