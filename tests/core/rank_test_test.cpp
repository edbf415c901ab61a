// core/rank_test: the exact Mann-Whitney distribution against brute-force enumeration of every arrangement,
// scipy's published figures, the method rule and the smallest reachable p-value.
#include "core/rank_test.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <vector>

namespace attnbench {
namespace {

// Every way to pick which n1 of the n1 + n2 ranks belong to the first sample, as U values (the number of
// (first, second) pairs where the first sample's value is larger). Ranks 0 .. n-1 stand for distinct values.
std::vector<int> all_u_values(int n1, int n2) {
  std::vector<int> us;
  const int n = n1 + n2;
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    if (__builtin_popcount(mask) != n1) continue;
    int u = 0, seconds_below = 0;
    for (int r = 0; r < n; ++r) {
      if (mask & (1u << r)) {
        u += seconds_below;
      } else {
        ++seconds_below;
      }
    }
    us.push_back(u);
  }
  return us;
}

TEST(RankTest, PmfEqualsBruteForceEnumeration) {
  for (int n1 = 1; n1 <= 7; ++n1) {
    for (int n2 = 1; n2 <= 7; ++n2) {
      const std::vector<int> us = all_u_values(n1, n2);
      std::map<int, int> count;
      for (int u : us) ++count[u];
      const std::vector<double> pmf = mann_whitney_u_pmf(n1, n2);
      ASSERT_EQ(pmf.size(), static_cast<std::size_t>(n1 * n2 + 1)) << n1 << "x" << n2;
      double sum = 0;
      for (int u = 0; u <= n1 * n2; ++u) {
        EXPECT_NEAR(pmf[u], static_cast<double>(count[u]) / us.size(), 1e-15) << n1 << "x" << n2 << " u=" << u;
        sum += pmf[u];
      }
      EXPECT_NEAR(sum, 1.0, 1e-12);
    }
  }
}

TEST(RankTest, ExactPEqualsTheBruteForceTwoSidedTail) {
  // Two-sided p of u: the share of arrangements at least as far from n1 n2 / 2 as u.
  for (int n1 = 1; n1 <= 6; ++n1) {
    for (int n2 = 1; n2 <= 6; ++n2) {
      const std::vector<int> us = all_u_values(n1, n2);
      const double mu = n1 * n2 / 2.0;
      for (int u = 0; u <= n1 * n2; ++u) {
        int extreme = 0;
        for (int v : us)
          if (std::abs(v - mu) >= std::abs(u - mu) - 1e-9) ++extreme;
        EXPECT_NEAR(mann_whitney_exact_p(u, n1, n2), static_cast<double>(extreme) / us.size(), 1e-14)
            << n1 << "x" << n2 << " u=" << u;
      }
    }
  }
}

TEST(RankTest, ScipyFigures) {
  // scipy.stats.mannwhitneyu([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]) (method "auto" -> "exact"): 2 / 252.
  const std::vector<double> low = {1, 2, 3, 4, 5}, high = {6, 7, 8, 9, 10};
  RankTest r = mann_whitney_test(low, high);
  EXPECT_EQ(r.method, RankMethod::exact);
  EXPECT_EQ(r.u, 0);
  EXPECT_NEAR(r.p_value, 0.007936507936507936, 1e-15);
  EXPECT_LT(r.p_value, 0.01);  // a slowdown at the default alpha is now confirmable
  r = mann_whitney_test(high, low);
  EXPECT_EQ(r.u, 25);
  EXPECT_NEAR(r.p_value, 2.0 / 252, 1e-15);
  // scipy's documentation example (males vs females, method="exact"): U1 = 17, p = 0.1111111111111111.
  const std::vector<double> males = {19, 22, 16, 29, 24}, females = {20, 11, 17, 12};
  r = mann_whitney_test(males, females);
  EXPECT_EQ(r.u, 17);
  EXPECT_EQ(r.method, RankMethod::exact);
  EXPECT_NEAR(r.p_value, 0.1111111111111111, 1e-15);
}

TEST(RankTest, ExactTestOnDataMatchesBruteForcePermutations) {
  // Interleaved data: U of a = 0 + 2 + 2 + 4 = 8, counted directly.
  const std::vector<double> a = {1, 4, 5, 8}, b = {2, 3, 6, 7, 9};
  int u = 0;
  for (double x : a)
    for (double y : b) u += x > y;
  const RankTest r = mann_whitney_test(a, b);
  EXPECT_EQ(r.u, u);
  const std::vector<int> us = all_u_values(4, 5);
  int extreme = 0;
  for (int v : us)
    if (std::abs(v - 10.0) >= std::abs(u - 10.0)) ++extreme;
  EXPECT_NEAR(r.p_value, static_cast<double>(extreme) / us.size(), 1e-14);
  EXPECT_FALSE(r.ties);
}

TEST(RankTest, TiesFallBackToTheAsymptoticTestOfTheGate) {
  const std::vector<double> a = {1, 2, 2, 3}, b = {2, 4, 5, 6};
  const RankTest r = mann_whitney_test(a, b);
  EXPECT_TRUE(r.ties);
  EXPECT_EQ(r.method, RankMethod::asymptotic);
  // The asymptotic formula by hand: U counted directly (ties 1/2), the tie-corrected variance.
  double u = 0;
  for (double x : a)
    for (double y : b) u += x > y ? 1.0 : (x == y ? 0.5 : 0.0);
  EXPECT_EQ(r.u, u);
  const double n1 = 4, n2 = 4, n = 8, tie_term = 3 * 3 * 3 - 3;  // one group of three 2s
  const double var = n1 * n2 / 12.0 * ((n + 1) - tie_term / (n * (n - 1)));
  const double z = -(std::abs(u - 8.0) - 0.5) / std::sqrt(var);
  EXPECT_NEAR(r.z, z, 1e-12);
  EXPECT_NEAR(r.p_value, std::erfc(std::abs(z) / std::sqrt(2.0)), 1e-12);
  // Every value equal: no evidence (p = 1, z = 0).
  const std::vector<double> same = {3, 3, 3};
  const RankTest s = mann_whitney_test(same, same);
  EXPECT_EQ(s.p_value, 1.0);
  EXPECT_EQ(s.z, 0.0);
}

TEST(RankTest, MethodRule) {
  EXPECT_EQ(rank_test_method(5, 5, false), RankMethod::exact);
  EXPECT_EQ(rank_test_method(8, 8, false), RankMethod::exact);
  EXPECT_EQ(rank_test_method(8, 500, false), RankMethod::exact);
  EXPECT_EQ(rank_test_method(9, 9, false), RankMethod::asymptotic);
  EXPECT_EQ(rank_test_method(5, 5, true), RankMethod::asymptotic);
  EXPECT_EQ(rank_test_method(3, kExactMaxLarger + 1, false), RankMethod::asymptotic);
  EXPECT_EQ(rank_test_method(0, 5, false), RankMethod::asymptotic);
  EXPECT_STREQ(rank_method_name(RankMethod::exact), "exact");
  EXPECT_STREQ(rank_method_name(RankMethod::asymptotic), "asymptotic");
  // Larger samples: the asymptotic p of the gate, unchanged.
  std::vector<double> a, b;
  for (int i = 0; i < 20; ++i) {
    a.push_back(i * 2.0);
    b.push_back(i * 2.0 + 1.5);
  }
  const RankTest r = mann_whitney_test(a, b);
  EXPECT_EQ(r.method, RankMethod::asymptotic);
  EXPECT_NEAR(r.p_value, std::erfc(std::abs(r.z) / std::sqrt(2.0)), 1e-15);
}

TEST(RankTest, LargestExactSizesStayExactAndFinite) {
  // C(10008, 8) ~ 2.5e27 arrangements: beyond 64-bit counts, within the 128-bit ones.
  const std::vector<double> pmf = mann_whitney_u_pmf(kExactMaxSmaller, kExactMaxLarger);
  ASSERT_EQ(pmf.size(), kExactMaxSmaller * kExactMaxLarger + 1);
  double sum = 0;
  for (double p : pmf) {
    ASSERT_TRUE(std::isfinite(p));
    ASSERT_GE(p, 0.0);
    sum += p;
  }
  EXPECT_NEAR(sum, 1.0, 1e-9);
  EXPECT_NEAR(pmf.front(), min_reachable_p(kExactMaxSmaller, kExactMaxLarger) / 2, 1e-40);
  EXPECT_EQ(pmf.front(), pmf.back());  // symmetric
  EXPECT_THROW(mann_whitney_u_pmf(9, 9), std::invalid_argument);
  EXPECT_THROW(mann_whitney_exact_p(26, 5, 5), std::invalid_argument);
}

// min_p: the best p the test's own method can give for the samples' sizes and ties (compare's "too few samples").
TEST(RankTest, MinPIsTheMethodsBestPForTheseSizesAndTies) {
  const std::vector<double> a = {1, 2, 3}, b = {4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(mann_whitney_test(a, b).min_p, min_reachable_p(3, 7));  // exact
  // 200 tied values against one far above: asymptotic (ties), and no arrangement of these values reaches 0.05:
  // the extreme U is what was observed, so p_value == min_p.
  std::vector<double> base(200);
  for (std::size_t i = 0; i < base.size(); ++i) base[i] = 10.0 + static_cast<double>(i % 20);  // 20 values, tied
  const std::vector<double> one = {100.0};
  const RankTest t = mann_whitney_test(one, base);
  EXPECT_EQ(t.method, RankMethod::asymptotic);
  EXPECT_GT(t.min_p, 0.05);
  EXPECT_NEAR(t.p_value, t.min_p, 1e-12);
  EXPECT_LT(min_reachable_p(1, 200), 0.01);  // what an untied sample of these sizes could reach (exact)
  // Every value tied: no test at all.
  EXPECT_EQ(mann_whitney_test(std::vector<double>{5.0, 5.0}, std::vector<double>{5.0, 5.0, 5.0}).min_p, 1.0);
  // A larger tied sample can reach alpha: min_p below p_value when the samples overlap.
  std::vector<double> lo(50), hi(50);
  for (std::size_t i = 0; i < 50; ++i) lo[i] = static_cast<double>(i % 10), hi[i] = static_cast<double>(i % 10) + 5;
  const RankTest u = mann_whitney_test(hi, lo);
  EXPECT_LT(u.min_p, 1e-6);
  EXPECT_LE(u.min_p, u.p_value);
}

TEST(RankTest, MinReachableP) {
  EXPECT_NEAR(min_reachable_p(5, 5), 2.0 / 252, 1e-15);
  EXPECT_NEAR(min_reachable_p(4, 4), 2.0 / 70, 1e-15);
  EXPECT_NEAR(min_reachable_p(3, 7), 2.0 / 120, 1e-15);
  EXPECT_EQ(min_reachable_p(1, 1), 1.0);  // 2 / C(2, 1) = 1
  EXPECT_EQ(min_reachable_p(0, 5), 1.0);
  // It is reached: fully separated samples give exactly it.
  const std::vector<double> a = {1, 2, 3}, b = {4, 5, 6, 7, 8, 9, 10};
  EXPECT_NEAR(mann_whitney_test(a, b).p_value, min_reachable_p(3, 7), 1e-15);
  // Beyond the exact sizes: the normal approximation at U = 0 (what 5 vs 5 gave before: 0.0122 > 0.01).
  const double n = 9, z = (n * n / 2 - 0.5) / std::sqrt(n * n * (2 * n + 1) / 12);
  EXPECT_NEAR(min_reachable_p(9, 9), std::erfc(z / std::sqrt(2.0)), 1e-15);
  const double z5 = (12.5 - 0.5) / std::sqrt(25.0 * 11 / 12);
  EXPECT_NEAR(std::erfc(z5 / std::sqrt(2.0)), 0.0122, 1e-4);  // the figure of the issue
  // Too few samples for any verdict at alpha: the gate can say so.
  EXPECT_GE(min_reachable_p(4, 4), 0.01);
  EXPECT_LT(min_reachable_p(5, 5), 0.01);
  EXPECT_EQ(min_samples_per_side(0.01), 5u);
  EXPECT_EQ(min_samples_per_side(0.05), 4u);
  EXPECT_EQ(min_samples_per_side(0.0), 0u);
}

TEST(RankTest, BadInputThrows) {
  const std::vector<double> empty, one = {1}, nan = {std::numeric_limits<double>::quiet_NaN()};
  EXPECT_THROW(mann_whitney_test(empty, one), std::invalid_argument);
  EXPECT_THROW(mann_whitney_test(one, nan), std::invalid_argument);
}

}  // namespace
}  // namespace attnbench
