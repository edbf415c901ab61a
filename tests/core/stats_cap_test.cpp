// bootstrap_median_ratio: the report's noise band of a ratio of medians. Its cost is bounded (100,000 samples
// per row took 88 s a pair, 400,000 over 300 s): at most kMaxBootstrapDraws draws per side and resample. Up to
// the bound the band is the plain bootstrap, value for value what the report printed before; beyond it the
// m-out-of-n bootstrap, rescaled, still describes the noise of the n-sample median (checked against the
// median's asymptotic spread). Assertions are on the draws and the band, never on wall time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "core/stats.hpp"
#include "report/markdown.hpp"
#include "support/result_rows.hpp"

namespace attnbench {
namespace {

// The band as the report computed it before the bound (report/markdown.cpp, sorting every resample).
std::pair<double, double> unbounded_band(const std::vector<double>& a, const std::vector<double>& b) {
  std::mt19937_64 rng(0x5eedULL);
  std::vector<double> ra(a.size()), rb(b.size()), ratios;
  const auto median_of_resample = [&rng](const std::vector<double>& from, std::vector<double>& into) {
    for (double& x : into) x = from[rng() % from.size()];
    std::sort(into.begin(), into.end());
    return percentile_sorted(into, 50);
  };
  for (int i = 0; i < 1000; ++i) {
    const double ma = median_of_resample(a, ra);
    const double mb = median_of_resample(b, rb);
    ratios.push_back(ma / mb);
  }
  std::sort(ratios.begin(), ratios.end());
  return {percentile_sorted(ratios, 5), percentile_sorted(ratios, 95)};
}

// n values uniform in [lo, lo + width), from a seeded generator's raw draws.
std::vector<double> uniform(std::size_t n, double lo, double width, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<double> v(n);
  for (double& x : v) x = lo + width * static_cast<double>(g() >> 11) / 9007199254740992.0;
  return v;
}

TEST(StatsCap, UpToTheBoundTheBandIsThePlainBootstrapExactly) {
  // Odd and even sizes (the median of an even resample interpolates), on each side of the other, up to the bound.
  for (const auto& [na, nb] : std::vector<std::pair<std::size_t, std::size_t>>{
           {5, 5}, {5, 6}, {6, 9}, {37, 200}, {200, 200}, {kMaxBootstrapDraws, 101}}) {
    const std::vector<double> a = uniform(na, 100, 10, na), b = uniform(nb, 95, 20, nb + 1);
    const BootstrapBand band = bootstrap_median_ratio(a, b);
    const auto [lo, hi] = unbounded_band(a, b);
    EXPECT_EQ(band.lo, lo) << na << " x " << nb;
    EXPECT_EQ(band.hi, hi) << na << " x " << nb;
    EXPECT_EQ(band.draws_a, na);
    EXPECT_EQ(band.draws_b, nb);
    EXPECT_EQ(band.resamples, 1000);
  }
  // Ties (discrete timings) too.
  const std::vector<double> a = {5, 5, 5, 6, 6, 7, 7, 7, 7, 8}, b = {6, 6, 6, 6, 6, 6, 7};
  const BootstrapBand band = bootstrap_median_ratio(a, b);
  EXPECT_EQ(std::make_pair(band.lo, band.hi), unbounded_band(a, b));
}

TEST(StatsCap, TwoHundredThousandSamplesDrawAtMostTheBound) {
  // 200,000 samples per side, uniform on [100, 110): median 105, density 0.1. The median of n samples has the
  // standard deviation 1 / (2 f sqrt(n)) = 0.01118; the ratio of two such (independent) medians
  // sqrt(2) * 0.01118 / 105 = 1.506e-4; its 5th-95th percentiles lie 1.645 of those either side of 1.
  constexpr std::size_t n = 200000;
  const std::vector<double> a = uniform(n, 100, 10, 1), b = uniform(n, 100, 10, 2);
  const BootstrapBand band = bootstrap_median_ratio(a, b);
  EXPECT_EQ(band.draws_a, kMaxBootstrapDraws);
  EXPECT_EQ(band.draws_b, kMaxBootstrapDraws);
  EXPECT_EQ(band.resamples, kBootstrapResamples);
  EXPECT_LE(band.resamples * (band.draws_a + band.draws_b), std::size_t{1000} * 2 * 4096);
  const double expected_width = 2 * 1.645 * std::sqrt(2.0) * (1 / (2 * 0.1 * std::sqrt(double(n)))) / 105;
  // The rescaled band has the n-sample width (within 25%: a bootstrap of 1000 resamples); without the rescaling
  // it would be sqrt(200000 / 4096) = 7 times as wide.
  EXPECT_GT(band.hi - band.lo, 0.75 * expected_width) << band.lo << " " << band.hi;
  EXPECT_LT(band.hi - band.lo, 1.25 * expected_width) << band.lo << " " << band.hi;
  // Centred on the samples' ratio of medians.
  std::vector<double> sa = a, sb = b;
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  const double ratio = percentile_sorted(sa, 50) / percentile_sorted(sb, 50);
  EXPECT_LT(band.lo, ratio);
  EXPECT_GT(band.hi, ratio);
  // Reproducible: the same band again, and a bounded side beside an unbounded one.
  const BootstrapBand again = bootstrap_median_ratio(a, b);
  EXPECT_EQ(again.lo, band.lo);
  EXPECT_EQ(again.hi, band.hi);
  const BootstrapBand mixed = bootstrap_median_ratio(a, std::vector<double>(b.begin(), b.begin() + 50));
  EXPECT_EQ(mixed.draws_a, kMaxBootstrapDraws);
  EXPECT_EQ(mixed.draws_b, 50u);
}

TEST(StatsCap, JustBeyondTheBoundTheBandMatchesThePlainBootstrap) {
  // 2 x the bound: the rescaled m-out-of-n band against the plain bootstrap of every sample, within 25% in
  // width and in centre (a shift of at most a quarter of the width).
  const std::vector<double> a = uniform(2 * kMaxBootstrapDraws, 50, 30, 11), b = uniform(2 * kMaxBootstrapDraws, 48, 30, 12);
  const BootstrapBand band = bootstrap_median_ratio(a, b);
  ASSERT_EQ(band.draws_a, kMaxBootstrapDraws);
  const auto [lo, hi] = unbounded_band(a, b);
  EXPECT_NEAR(band.hi - band.lo, hi - lo, 0.25 * (hi - lo));
  EXPECT_NEAR((band.hi + band.lo) / 2, (hi + lo) / 2, 0.25 * (hi - lo));
}

// `attnbench report`'s ratio of two rows of 200,000 raw samples each: a bootstrap band (the bound applied),
// holding the rows' ratio.
TEST(StatsCap, ReportRatioOfTwoHundredThousandSampleRows) {
  ResultRow a = test::llama_row("decode/llama-3.1-8b/L=6/b=64/kv=4096/p=64/bf16", "trtllm_mha", "eager");
  ResultRow b = test::llama_row("decode/llama-3.1-8b/L=6/b=64/kv=4096/p=64/bf16", "trtllm_mha_legacy", "eager");
  a.samples_us = uniform(200000, 100, 10, 3);
  b.samples_us = uniform(200000, 102, 10, 4);
  test::set_step_us(a, 101, 105, 109);
  test::set_step_us(b, 103, 107, 111);
  const auto r = latency_ratio(a, b);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->bootstrap);
  EXPECT_DOUBLE_EQ(r->ratio, 105.0 / 107);
  const BootstrapBand band = bootstrap_median_ratio(a.samples_us, b.samples_us);
  EXPECT_EQ(band.draws_a, kMaxBootstrapDraws);
  EXPECT_EQ(r->lo, std::min(band.lo, r->ratio));
  EXPECT_EQ(r->hi, std::max(band.hi, r->ratio));
  EXPECT_LT(r->hi - r->lo, 0.002);  // the n-sample band (~5e-4 wide) widened to the rows' ratio at most
}

TEST(StatsCap, RefusesEmptyAndNonPositiveSamples) {
  const std::vector<double> ok = {1, 2, 3, 4, 5};
  EXPECT_THROW(bootstrap_median_ratio({}, ok), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ratio(ok, {}), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ratio(ok, std::vector<double>{1, 2, 0, 4, 5}), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ratio(std::vector<double>{1, 2, NAN, 4, 5}, ok), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ratio(std::vector<double>{1, 2, INFINITY, 4, 5}, ok), std::invalid_argument);
}

}  // namespace
}  // namespace attnbench
