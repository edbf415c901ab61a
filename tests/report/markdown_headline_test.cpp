// The Markdown report's first lines and its ratios: KV-cache tokens of a saving counted over the full model's
// layers (and said so), the GPU and the SGLang version named first, "lower is better" beside latency, figures
// linked; and the property that every ratio lies inside the noise band printed with it (bootstrap with raw
// samples, p10 / p90 - p90 / p10 without).
#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <sstream>
#include <string>

#include "report/markdown.hpp"
#include "support/backend_catalog.hpp"
#include "support/result_rows.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

const char* kDecode = "decode/llama-3.1-8b/L=6/b=64/kv=4096/p=64/bf16";

ResultRow timed(const std::string& backend, const std::string& timing, double p10, double median, double p90) {
  ResultRow r = test::llama_row(kDecode, backend, timing);
  test::set_step_us(r, p10, median, p90);
  r.ctor_device_bytes = backend == "trtllm_mha" ? 537919492 : 974438412;
  r.ctor_pinned_bytes = backend == "trtllm_mha" ? 0 : 33554432;
  return r;
}

// The case behind the issue: equal medians, p10 / p10 = 1.016 and p90 / p90 = 1.017 (the old band,
// "1.000 (1.016-1.017)", missed the ratio it was printed with).
ResultSet issue_set() {
  ResultSet s;
  s.rows = {timed("trtllm_mha", "eager", 98.5, 100.0, 103.4), timed("trtllm_mha_legacy", "eager", 96.95, 100.0, 101.67)};
  return s;
}

std::string report(const ResultSet& s, const MarkdownExtras& extras = {}) {
  std::ostringstream os;
  write_markdown_report(os, s, nullptr, "", test::standard_catalog(), {}, extras);
  return os.str();
}

using test::has;
using test::lines;

TEST(MarkdownHeadline, KvTokensCountTheFullModelsLayers) {
  MarkdownExtras x;
  x.model_layers = {{"llama-3.1-8b", 32}};
  const std::string md = report(issue_set(), x);
  // 436,518,920 B saved / (2 x 8 x 128 x 2 B x 32 layers = 131,072 B) = 3,330 tokens, as `attnbench memory` says.
  EXPECT_TRUE(has(md, "- **Memory:** trtllm_mha_legacy - trtllm_mha saves **416.30 MiB device (436,518,920 B) + "
                      "32.00 MiB pinned host memory per instance** = 3,330 KV-cache tokens of llama-3.1-8b at "
                      "131,072 B per token (the full model: 32 layers; this run stepped 6); from the rows"))
      << md;
  EXPECT_TRUE(has(md, "(2 x 8 KV heads x 128 head_dim x 2 B (bf16) x 32 layers)")) << md;
  EXPECT_TRUE(has(md, "KV bytes per token are the full model's")) << md;
  EXPECT_FALSE(has(md, "17,762")) << md;
  // A model whose depth is unknown: the run's layers, and the report says so.
  const std::string unknown = report(issue_set());
  EXPECT_TRUE(has(unknown, "17,762 KV-cache tokens of llama-3.1-8b at 24,576 B per token (the 6 layers this run "
                           "stepped; the model's depth is unknown)"))
      << unknown;
  EXPECT_TRUE(has(unknown, "the rows' `layers` are the layers this run stepped")) << unknown;
}

// An fp8 KV cache (the case id names it): a token holds 1 byte per element, so the same saving is twice the
// tokens: 436,518,920 / (2 x 8 x 128 x 1 B x 32 = 65,536 B) = 6,660.
TEST(MarkdownHeadline, KvTokensOfAnFp8CacheCountOneBytePerElement) {
  ResultSet s = issue_set();
  for (ResultRow& r : s.rows) r.case_id = std::string(kDecode) + "/kvcache=fp8_e4m3";
  MarkdownExtras x;
  x.model_layers = {{"llama-3.1-8b", 32}};
  const std::string md = report(s, x);
  EXPECT_TRUE(has(md, "= 6,660 KV-cache tokens of llama-3.1-8b at 65,536 B per token")) << md;
  EXPECT_TRUE(has(md, "(2 x 8 KV heads x 128 head_dim x 1 B (fp8_e4m3) x 32 layers)")) << md;
}

TEST(MarkdownHeadline, NamesTheGpuAndTheSglangVersionFirst) {
  ResultSet s = issue_set();
  s.environment = {{"gpu_name", "NVIDIA H200"}, {"sm_count", "132"}, {"driver_version", "13.0"},
                   {"sglang_version", "0.5.5"}};
  std::vector<std::string> l = lines(report(s));
  ASSERT_GE(l.size(), 3u);
  EXPECT_EQ(l[0], "## attnbench: trtllm_mha_legacy -> trtllm_mha");
  EXPECT_EQ(l[2], "**GPU:** NVIDIA H200 (132 SMs, driver 13.0); **SGLang:** 0.5.5");
  // No environment (a CSV): the rows' device, and the version is not recorded.
  ResultSet cpu = issue_set();
  for (ResultRow& r : cpu.rows) r.device = "cpu (2 threads)";
  l = lines(report(cpu));
  EXPECT_EQ(l[2],
            "**GPU:** none (device: cpu (2 threads)); **SGLang:** version not recorded (these results name no SGLang "
            "profile)");
  // A CSV of GPU rows: the GPU named from the rows.
  l = lines(report(issue_set()));
  EXPECT_EQ(l[2].rfind("**GPU:** NVIDIA H200 (from the rows; no environment recorded); **SGLang:** ", 0), 0u) << l[2];
}

TEST(MarkdownHeadline, LatencySaysLowerIsBetter) {
  const std::string md = report(issue_set());
  EXPECT_TRUE(has(md, "- **Latency** (step time, lower is better) trtllm_mha / trtllm_mha_legacy: median 1.000")) << md;
  EXPECT_TRUE(has(md, "(below 1: trtllm_mha is faster)")) << md;
  EXPECT_TRUE(has(md, "µs, median (p10-p90), lower is better.")) << md;
}

TEST(MarkdownRatio, TheIssuesRatioNowLiesInItsBand) {
  const ResultSet s = issue_set();
  const auto r = latency_ratio(s.rows[0], s.rows[1]);
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->ratio, 1.0);
  ASSERT_TRUE(r->has_band);
  EXPECT_FALSE(r->bootstrap);
  EXPECT_DOUBLE_EQ(r->lo, 98.5 / 101.67);
  EXPECT_DOUBLE_EQ(r->hi, 103.4 / 96.95);
  const std::string md = report(s);
  EXPECT_TRUE(has(md, "| 1.000 (0.969-1.067) |")) << md;
  EXPECT_FALSE(has(md, "1.016-1.017")) << md;
  EXPECT_TRUE(has(md, "p10 / p90 - p90 / p10")) << md;
}

// Random rows (p10 <= median <= p90, with and without raw samples): the ratio is always inside its band, both
// as computed and as printed.
TEST(MarkdownRatio, AlwaysInsideItsBand) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const auto random_row = [&](const std::string& backend, bool samples) {
    ResultRow r = test::llama_row(kDecode, backend, "eager");
    const double median = 10 + 1000 * u(rng);
    if (samples) {
      const int n = 5 + static_cast<int>(u(rng) * 40);
      for (int i = 0; i < n; ++i) r.samples_us.push_back(median * (0.8 + 0.5 * u(rng) * u(rng)));
      std::vector<double> v = r.samples_us;
      std::sort(v.begin(), v.end());
      const auto pct = [&](double q) {
        const double pos = (v.size() - 1) * q;
        const std::size_t i = static_cast<std::size_t>(pos);
        return i + 1 < v.size() ? v[i] + (v[i + 1] - v[i]) * (pos - i) : v[i];
      };
      r.step_p10_us = pct(0.1);
      r.step_median_us = pct(0.5);
      r.step_p90_us = pct(0.9);
    } else {
      r.step_median_us = median;
      r.step_p10_us = median * (1 - 0.2 * u(rng));
      r.step_p90_us = median * (1 + 0.2 * u(rng));
    }
    return r;
  };
  int bootstrapped = 0;
  for (int i = 0; i < 300; ++i) {
    const bool samples = i % 2 == 0;
    const ResultRow a = random_row("trtllm_mha", samples), b = random_row("trtllm_mha_legacy", samples);
    const auto r = latency_ratio(a, b);
    ASSERT_TRUE(r);
    ASSERT_TRUE(r->has_band);
    EXPECT_EQ(r->bootstrap, samples);
    bootstrapped += r->bootstrap;
    EXPECT_LE(r->lo, r->ratio) << i;
    EXPECT_LE(r->ratio, r->hi) << i;
    // Deterministic: the same rows give the same band.
    const auto again = latency_ratio(a, b);
    EXPECT_EQ(again->lo, r->lo);
    EXPECT_EQ(again->hi, r->hi);
  }
  EXPECT_EQ(bootstrapped, 150);

  // Printed: a report of many such cases, every "r (lo-hi)" cell checked.
  ResultSet s;
  for (int i = 0; i < 40; ++i) {
    const std::string id = "decode/llama-3.1-8b/L=6/b=" + std::to_string(i + 1) + "/kv=4096/p=64/bf16";
    for (const char* backend : {"trtllm_mha", "trtllm_mha_legacy", "flashinfer"}) {
      ResultRow r = random_row(backend, i % 3 == 0);
      r.case_id = id;
      s.rows.push_back(r);
    }
  }
  const std::string md = report(s);
  const std::regex cell(R"((\d+\.\d{3}) \((\d+\.\d{3})-(\d+\.\d{3})\))");
  int n = 0;
  for (auto it = std::sregex_iterator(md.begin(), md.end(), cell); it != std::sregex_iterator(); ++it, ++n) {
    EXPECT_LE(std::stod((*it)[2]), std::stod((*it)[1])) << it->str();
    EXPECT_LE(std::stod((*it)[1]), std::stod((*it)[3])) << it->str();
  }
  EXPECT_EQ(n, 80);  // 40 cases x 2 ratio columns
  // Both kinds of band occur, and the text explains both.
  EXPECT_TRUE(has(md, "with raw samples (JSON): the 5th-95th percentiles of the ratio of medians over 1000 bootstrap "
                      "resamples"))
      << md;
  EXPECT_TRUE(has(md, "from p10 / p90 (CSV rows, or under 5 samples): p10 / p90 - p90 / p10")) << md;
}

TEST(MarkdownRatio, BootstrapBandNarrowsWithMoreSamples) {
  // Two equal distributions: with 200 samples each, the band of the median ratio is much narrower than the
  // spread band of the same rows, and holds 1.
  std::mt19937_64 rng(11);
  std::normal_distribution<double> noise(100.0, 5.0);
  ResultRow a = test::llama_row(kDecode, "trtllm_mha", "eager"), b = test::llama_row(kDecode, "flashinfer", "eager");
  for (ResultRow* r : {&a, &b}) {
    for (int i = 0; i < 200; ++i) r->samples_us.push_back(noise(rng));
    r->step_median_us = 100.0;
    r->step_p10_us = 100.0 - 1.2816 * 5.0;
    r->step_p90_us = 100.0 + 1.2816 * 5.0;
  }
  const auto boot = latency_ratio(a, b);
  ASSERT_TRUE(boot && boot->bootstrap);
  ResultRow a_csv = a, b_csv = b;
  a_csv.samples_us.clear();
  b_csv.samples_us.clear();
  const auto range = latency_ratio(a_csv, b_csv);
  ASSERT_TRUE(range && !range->bootstrap);
  EXPECT_LT(boot->hi - boot->lo, 0.25 * (range->hi - range->lo));
  EXPECT_LT(boot->lo, 1.0);
  EXPECT_GT(boot->hi, 1.0);
  // Rows not ok, or without a median: no ratio.
  b.status = RowStatus::skipped;
  EXPECT_FALSE(latency_ratio(a, b));
}

TEST(MarkdownHeadline, FiguresAreLinkedOrExplained) {
  MarkdownExtras x;
  x.figures = {"plots/ratio_llama-3.1-8b.png", "my plots/bandwidth_fraction.png"};
  const std::string md = report(issue_set(), x);
  EXPECT_TRUE(has(md, "### Figures\n\n![ratio_llama-3.1-8b](plots/ratio_llama-3.1-8b.png)\n"
                      "![bandwidth_fraction](<my plots/bandwidth_fraction.png>)\n"))
      << md;
  const std::string without = report(issue_set());
  EXPECT_FALSE(has(without, "### Figures"));
  EXPECT_TRUE(has(without, "`python3 scripts/plot.py RESULTS.csv --out plots`")) << without;
  EXPECT_TRUE(has(without, "`attnbench report RESULTS --plots plots`")) << without;
}

}  // namespace
}  // namespace attnbench
