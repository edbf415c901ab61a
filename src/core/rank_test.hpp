// The two-sided Mann-Whitney U test with the exact null distribution for small samples, as
// scipy.stats.mannwhitneyu(method="auto") chooses it, and the asymptotic (normal) one otherwise.
//
// Why: with the normal approximation alone, 5 samples per side can never give p below 0.012, above the
// gate's default alpha of 0.01, so a slowdown could never be confirmed. The exact test reaches
// 2 / C(10, 5) = 0.0079 there. min_reachable_p says when no data of a given size could reach alpha, so the
// gate can say "too few samples for a verdict" instead of "no change".
//
// The rule (scipy's "auto", plus a bound on the work): exact when there are no ties in the pooled sample and
// the smaller sample has at most kExactMaxSmaller (8) values and the larger at most kExactMaxLarger (10,000);
// asymptotic otherwise (with ties the exact distribution above is not the null distribution; beyond 8 per side
// the normal approximation is close).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace attnbench {

inline constexpr std::size_t kExactMaxSmaller = 8;
inline constexpr std::size_t kExactMaxLarger = 10000;

enum class RankMethod { exact, asymptotic };

// "exact" or "asymptotic".
const char* rank_method_name(RankMethod m);

// The method mann_whitney_test uses for samples of n1 and n2 values (`ties`: two equal values anywhere in the
// pooled sample).
RankMethod rank_test_method(std::size_t n1, std::size_t n2, bool ties);

// The null distribution of U (the number of pairs (x, y), x from a sample of n1, y from one of n2, with x > y)
// without ties: element u is P(U = u), u = 0 .. n1 * n2. It is the coefficient list of the Gaussian binomial
// [n1 + n2 choose n1]_q over C(n1 + n2, n1), counted exactly in 128-bit integers.
// Requires min(n1, n2) <= kExactMaxSmaller and max(n1, n2) <= kExactMaxLarger (std::invalid_argument
// otherwise); n1 or n2 of 0 gives {1}.
std::vector<double> mann_whitney_u_pmf(std::size_t n1, std::size_t n2);

// The exact two-sided p-value of U = u (0 <= u <= n1 * n2): min(1, 2 * P(U <= min(u, n1 n2 - u))), as scipy's
// method="exact" computes it. Same size requirements as mann_whitney_u_pmf; u beyond n1 * n2 is
// std::invalid_argument.
double mann_whitney_exact_p(std::size_t u, std::size_t n1, std::size_t n2);

// The smallest two-sided p-value any data without ties can give with samples of n1 and n2 values under the
// method rank_test_method(n1, n2, false) picks: 2 / C(n1 + n2, n1) (at most 1) when exact, the normal
// approximation at U = 0 otherwise. 1 when a sample is empty. A gate whose rule is p < alpha cannot confirm
// anything when this is >= alpha: "too few samples for a verdict at alpha".
double min_reachable_p(std::size_t n1, std::size_t n2);

// The smallest n such that n samples on each side can give p < alpha (min_reachable_p(n, n) < alpha);
// 0 when no n up to 1000 can (alpha too small). E.g. 5 for alpha = 0.01, 4 for alpha = 0.05.
std::size_t min_samples_per_side(double alpha);

struct RankTest {
  double u = 0;        // U of `a`: pairs with a > b, ties counted 1/2
  double z = 0;        // standardised statistic (continuity and tie corrected); 0 when every value ties
  double p_value = 1;  // two-sided, by `method`
  RankMethod method = RankMethod::asymptotic;
  bool ties = false;   // two equal values in the pooled sample
  // The smallest p `method` could give for samples of these sizes, the pooled values' ties as they are: at the most
  // extreme U (every value of one side above every value of the other). Exact: min_reachable_p. Asymptotic: the
  // tie-corrected normal p there, which with ties can stay above alpha where the exact test would not (1 sample
  // against 200 with ties: 0.086; without ties, exact, 2 / 201): p_value >= min_p always, and a gate whose rule is
  // p < alpha can confirm nothing when min_p >= alpha. 1 when every value ties.
  double min_p = 1;
};

// Mann-Whitney U test of `a` against `b` (both non-empty, finite). z and the asymptotic p are exactly those of
// the gate's current test (report/compare.cpp mann_whitney_u: tie-corrected variance
// n1 n2 / 12 ((n + 1) - sum(t^3 - t) / (n (n - 1))), continuity correction, p = erfc(|z| / sqrt 2)); the
// exact p replaces the asymptotic one where rank_test_method says so.
// Throws std::invalid_argument on an empty or non-finite input.
RankTest mann_whitney_test(std::span<const double> a, std::span<const double> b);

}  // namespace attnbench
