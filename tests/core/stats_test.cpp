// summarize(): percentiles (numpy's default linear interpolation), spread, mean, sample stddev; and the
// Mann-Whitney U test against scipy's numbers.
// Expected values are computed by hand; the comments show the arithmetic.
#include "core/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace attnbench {
namespace {

// summarize(x) against a hand-computed Summary, field by field. n, min and max are always compared exactly;
// the other fields exactly when `exact`, else to within 4 ulps (EXPECT_DOUBLE_EQ). The input is only read.
struct SummaryCase {
  const char* name;
  std::vector<double> x;
  Summary want;  // {n, median, p10, p90, min, max, mean, stddev, spread_pct}
  bool exact;
};

TEST(Stats, HandComputedSummaries) {
  const SummaryCase cases[] = {
      {"empty input is all zeros", {}, {0, 0, 0, 0, 0, 0, 0, 0, 0}, true},
      {"one sample", {7.5}, {1, 7.5, 7.5, 7.5, 7.5, 7.5, 7.5, 0, 0}, true},
      // sorted: 1 2 3 4 5, n = 5. p10 at rank 0.4 -> 1 + 0.4 * (2 - 1) = 1.4; p90 at rank 3.6 -> 4.6;
      // median at rank 2 -> 3. mean 3; squared deviations 4 + 1 + 0 + 1 + 4 = 10, / (n - 1) = 2.5.
      // spread (4.6 - 1.4) / 3 * 100 = 106.67 %.
      {"odd count, unsorted input",
       {5, 1, 4, 2, 3},
       {5, 3.0, 1.4, 4.6, 1.0, 5.0, 3.0, std::sqrt(2.5), (4.6 - 1.4) / 3.0 * 100.0},
       false},
      // sorted: 10 20 30 40, n = 4. median at rank 1.5 -> 25; p10 at rank 0.3 -> 13; p90 at rank 2.7 -> 37.
      // mean 25; squared deviations 225 + 25 + 25 + 225 = 500, / 3. spread (37 - 13) / 25 * 100 = 96.
      {"even count interpolates the median",
       {40, 10, 30, 20},
       {4, 25.0, 13.0, 37.0, 10.0, 40.0, 25.0, std::sqrt(500.0 / 3.0), 96.0},
       false},
  };
  for (const SummaryCase& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<double> input = c.x;
    const Summary s = summarize(c.x);
    EXPECT_EQ(s.n, c.want.n);
    EXPECT_EQ(s.min, c.want.min);
    EXPECT_EQ(s.max, c.want.max);
    const std::tuple<const char*, double, double> computed[] = {
        {"median", s.median, c.want.median}, {"p10", s.p10, c.want.p10},
        {"p90", s.p90, c.want.p90},          {"mean", s.mean, c.want.mean},
        {"stddev", s.stddev, c.want.stddev}, {"spread_pct", s.spread_pct, c.want.spread_pct}};
    for (const auto& [field, got, want] : computed) {
      if (c.exact) {
        EXPECT_EQ(got, want) << field;
      } else {
        EXPECT_DOUBLE_EQ(got, want) << field;
      }
    }
    EXPECT_EQ(c.x, input) << "input must not be reordered";
  }
}

TEST(Stats, SkewedSampleMatchesNumpy) {
  // np.percentile([1, 3, 7, 15, 100, 2], [10, 50, 90]) == [1.5, 5.0, 57.5]:
  // sorted 1 2 3 7 15 100; ranks 0.5, 2.5, 4.5 -> 1.5, (3 + 7) / 2, 15 + 0.5 * 85.
  const std::vector<double> x = {1, 3, 7, 15, 100, 2};
  const Summary s = summarize(x);
  EXPECT_DOUBLE_EQ(s.p10, 1.5);
  EXPECT_DOUBLE_EQ(s.median, 5.0);
  EXPECT_DOUBLE_EQ(s.p90, 57.5);
  EXPECT_DOUBLE_EQ(s.mean, 128.0 / 6.0);
  EXPECT_DOUBLE_EQ(s.spread_pct, (57.5 - 1.5) / 5.0 * 100.0);
}

TEST(Stats, ElevenSamplesHitExactRanks) {
  // n = 11: p10 at rank 1.0 and p90 at rank 9.0 fall exactly on samples (no interpolation).
  std::vector<double> x;
  for (int i = 10; i >= 0; --i) x.push_back(100.0 + i);  // 110 ... 100, descending
  const Summary s = summarize(x);
  EXPECT_EQ(s.p10, 101.0);
  EXPECT_EQ(s.median, 105.0);
  EXPECT_EQ(s.p90, 109.0);
  EXPECT_DOUBLE_EQ(s.spread_pct, 8.0 / 105.0 * 100.0);
}

TEST(Stats, ZeroMedianGivesZeroSpread) {
  const std::vector<double> x = {-1, 0, 0, 0, 4};
  const Summary s = summarize(x);
  EXPECT_EQ(s.median, 0.0);
  EXPECT_EQ(s.spread_pct, 0.0);
  EXPECT_DOUBLE_EQ(s.p90, 2.4);  // rank 3.6: 0 + 0.6 * 4
}

TEST(Stats, PercentileSortedEndpoints) {
  const std::vector<double> x = {2, 4, 8};
  EXPECT_EQ(percentile_sorted(x, 0), 2.0);
  EXPECT_EQ(percentile_sorted(x, 100), 8.0);
  EXPECT_DOUBLE_EQ(percentile_sorted(x, 75), 6.0);  // rank 1.5
  EXPECT_THROW(percentile_sorted(x, 101), std::invalid_argument);
  EXPECT_THROW(percentile_sorted(std::vector<double>{}, 50), std::invalid_argument);
}

TEST(Stats, NonFiniteSampleIsRejected) {
  const std::vector<double> nan = {1, std::numeric_limits<double>::quiet_NaN()};
  const std::vector<double> inf = {1, std::numeric_limits<double>::infinity()};
  EXPECT_THROW(summarize(nan), std::invalid_argument);
  EXPECT_THROW(summarize(inf), std::invalid_argument);
}

TEST(StatsMannWhitney, MatchesHandComputedExampleWithTies) {
  // a = {1, 2, 2, 4}, b = {2, 3, 5}: mid-ranks 1, 3, 3, [3], [5], 6, [7] -> R_a = 13, U_a = 13 - 4*5/2 = 3.
  // mu = 4*3/2 = 6; ties: one group of 3 -> sum(t^3 - t) = 24; var = 4*3/12 * (8 - 24/(7*6)) = 7.428571;
  // z = -(|3 - 6| - 0.5) / sqrt(7.428571) = -0.917249; p = erfc(0.917249 / sqrt 2) = 0.359012
  // (scipy.stats.mannwhitneyu(a, b, method="asymptotic") gives 0.3590120537864294).
  const std::vector<double> a = {1, 2, 2, 4}, b = {2, 3, 5};
  const MannWhitney r = mann_whitney_u(a, b);
  EXPECT_DOUBLE_EQ(r.u, 3.0);
  EXPECT_NEAR(r.z, -0.9172492321316785, 1e-12);
  EXPECT_NEAR(r.p_value, 0.3590120537864294, 1e-12);
  // Swapping the sides mirrors U and z, the two-sided p stays.
  const MannWhitney s = mann_whitney_u(b, a);
  EXPECT_DOUBLE_EQ(s.u, 4 * 3 - 3.0);
  EXPECT_NEAR(s.z, 0.9172492321316785, 1e-12);
  EXPECT_NEAR(s.p_value, r.p_value, 1e-15);
}

TEST(StatsMannWhitney, NoTiesAndDegenerateInputs) {
  // {1,2,3} vs {4,5,6}: U = 0, var = 9/12 * 7 = 5.25, z = -(4.5 - 0.5)/sqrt(5.25), p = 0.0808556 (scipy).
  const std::vector<double> a = {1, 2, 3}, b = {4, 5, 6};
  EXPECT_NEAR(mann_whitney_u(a, b).p_value, 0.08085559837005224, 1e-12);
  const std::vector<double> same = {7, 7, 7};
  EXPECT_DOUBLE_EQ(mann_whitney_u(same, same).p_value, 1.0);  // all tied: no evidence
  const std::vector<double> empty;
  EXPECT_THROW(mann_whitney_u(empty, a), std::invalid_argument);
  const std::vector<double> nan = {1, NAN};
  EXPECT_THROW(mann_whitney_u(nan, a), std::invalid_argument);
}

}  // namespace
}  // namespace attnbench
