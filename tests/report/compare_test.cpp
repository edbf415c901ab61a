// compare: pairing, the noise-aware latency verdicts (Mann-Whitney with samples, p10-p90 without), the gate
// (confirmed slowdown, memory growth, correctness, missing rows), refusals (schema, GPU, driver), the
// writers, and the committed H200 results against themselves.
#include "report/compare.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "support/golden.hpp"
#include "support/result_rows.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

ResultRow row(const std::string& backend, const std::string& timing, double median, double p10, double p90) {
  return test::measured_row(backend, timing, median, p10, p90);
}

// 30 tight samples around `center` (±0.5 µs), deterministic.
std::vector<double> tight(double center, double phase = 1.0) {
  std::vector<double> v;
  for (int i = 0; i < 30; ++i) v.push_back(center + 0.5 * std::sin(i * phase));
  return v;
}

// One row with tight samples around 100 µs.
ResultSet one_row_set(double center = 100.0) {
  ResultSet s;
  s.rows = {row("trtllm_mha", "eager", center, center - 0.5, center + 0.5)};
  s.samples[sample_key(s.rows[0])] = tight(center);
  return s;
}

ResultSet three_row_set() {
  ResultSet s;
  s.rows = {row("flashinfer", "eager", 110, 109, 111), row("trtllm_mha", "eager", 100, 99, 101),
            row("trtllm_mha", "graph", 90, 89, 91)};
  for (const ResultRow& r : s.rows) s.samples[sample_key(r)] = tight(*r.step_median_us);
  s.environment = {{"gpu_name", "NVIDIA H200"}, {"driver_version", "13.0"}};
  return s;
}

TEST(CompareGate, IdenticalSetsPass) {
  const ResultSet s = three_row_set();
  const CompareResult r = compare_results(s, s);
  EXPECT_FALSE(r.failed);
  EXPECT_TRUE(r.failures.empty());
  ASSERT_EQ(r.pairs.size(), 3u);
  for (const PairResult& p : r.pairs) {
    EXPECT_EQ(p.verdict, "same") << p.case_id;
    EXPECT_EQ(p.method, "mann-whitney");
    ASSERT_TRUE(p.p_value);
    EXPECT_DOUBLE_EQ(*p.p_value, 1.0);
    ASSERT_TRUE(p.change);
    EXPECT_DOUBLE_EQ(*p.change, 0.0);
    EXPECT_EQ(p.memory.size(), 2u);  // ctor device + pinned are set, the other memory columns are not
    EXPECT_TRUE(p.correctness.empty());
  }
}

TEST(CompareGate, TwentyPercentSlowerWithTightSamplesFails) {
  const ResultSet base = one_row_set(100);
  const ResultSet now = one_row_set(120);
  const CompareResult r = compare_results(base, now);
  ASSERT_EQ(r.pairs.size(), 1u);
  EXPECT_EQ(r.pairs[0].verdict, "slower");
  ASSERT_TRUE(r.pairs[0].p_value);
  EXPECT_LT(*r.pairs[0].p_value, 1e-6);
  EXPECT_NEAR(*r.pairs[0].change, 0.2, 0.01);
  EXPECT_TRUE(r.failed);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_NE(r.failures[0].find("slower"), std::string::npos) << r.failures[0];
  EXPECT_NE(r.failures[0].find(sample_key(base.rows[0])), std::string::npos) << r.failures[0];
}

TEST(CompareGate, UsesTheRowsOwnSamplesWithoutASampleMap) {
  ResultSet base = one_row_set(100), now = one_row_set(120);
  base.rows[0].samples_us = base.samples.begin()->second;
  now.rows[0].samples_us = now.samples.begin()->second;
  base.samples.clear();
  now.samples.clear();
  const CompareResult r = compare_results(base, now);
  EXPECT_EQ(r.pairs[0].method, "mann-whitney");
  EXPECT_EQ(r.pairs[0].verdict, "slower");
  EXPECT_TRUE(r.failed);
}

TEST(CompareGate, ConfirmedSlowdownBelowThresholdPasses) {
  // 3% slower and significant: the verdict says so, but 3% < max_slowdown 5% -> pass; at 2% allowed -> fail.
  const CompareResult r = compare_results(one_row_set(100), one_row_set(103));
  EXPECT_EQ(r.pairs[0].verdict, "slower");
  EXPECT_FALSE(r.failed);
  CompareOptions strict;
  strict.max_slowdown = 0.02;
  EXPECT_TRUE(compare_results(one_row_set(100), one_row_set(103), strict).failed);
}

TEST(CompareGate, TwentyPercentSlowerWithinNoiseIsAmbiguousAndPasses) {
  ResultSet base = one_row_set(100), now = one_row_set(120);
  // Wide, overlapping samples: base 50..140 (median 95), new = base * 1.2 (median 114); scipy p = 0.241.
  std::vector<double> b, n;
  for (int k = -5; k < 5; ++k) {
    b.push_back(100 + 10 * k);
    n.push_back((100 + 10 * k) * 1.2);
  }
  base.samples[sample_key(base.rows[0])] = b;
  now.samples[sample_key(now.rows[0])] = n;
  const CompareResult r = compare_results(base, now);
  EXPECT_EQ(r.pairs[0].verdict, "ambiguous");
  EXPECT_NEAR(*r.pairs[0].p_value, 0.24096755111721346, 1e-9);
  EXPECT_DOUBLE_EQ(*r.pairs[0].base_median_us, 95.0);  // medians of the samples, not of the rows
  EXPECT_DOUBLE_EQ(*r.pairs[0].new_median_us, 114.0);
  EXPECT_FALSE(r.failed);
}

TEST(CompareGate, TwentyPercentFasterPasses) {
  const CompareResult r = compare_results(one_row_set(100), one_row_set(80));
  EXPECT_EQ(r.pairs[0].verdict, "faster");
  EXPECT_NEAR(*r.pairs[0].change, -0.2, 0.01);
  EXPECT_FALSE(r.failed);
}

TEST(CompareGate, OneByteMoreConstructionMemoryFails) {
  const ResultSet base = three_row_set();
  ResultSet now = base;
  *now.rows[1].ctor_device_bytes += 1;
  const CompareResult r = compare_results(base, now);
  EXPECT_TRUE(r.failed);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_NE(r.failures[0].find("ctor_device_bytes grew by 1 B"), std::string::npos) << r.failures[0];
  bool found = false;
  for (const MemoryDelta& d : r.pairs[1].memory)
    if (d.column == "ctor_device_bytes") {
      EXPECT_EQ(d.delta(), 1);
      found = true;
    }
  EXPECT_TRUE(found);
  CompareOptions tolerant;
  tolerant.max_memory_growth = 1;
  EXPECT_FALSE(compare_results(base, now, tolerant).failed);
  // Less memory never fails; a column missing in BASE is not compared (missing in NEW fails:
  // EvidenceMissingInNewFails).
  ResultSet less = base, base_without = base;
  *less.rows[1].ctor_device_bytes -= 4096;
  base_without.rows[2].ctor_pinned_bytes.reset();
  const CompareResult rl = compare_results(base_without, less);
  EXPECT_FALSE(rl.failed);
  EXPECT_EQ(rl.pairs[2].memory.size(), 1u);
}

TEST(CompareGate, CorrectnessRegressionsFail) {
  const ResultSet base = three_row_set();
  ResultSet now = base;
  now.rows[0].ref_pass = false;
  CompareResult r = compare_results(base, now);
  EXPECT_TRUE(r.failed);
  ASSERT_EQ(r.pairs[0].correctness.size(), 1u);
  EXPECT_EQ(r.pairs[0].correctness[0], "ref_pass 1 -> 0");

  now = base;
  now.rows[2].status = RowStatus::oom;
  r = compare_results(base, now);
  EXPECT_TRUE(r.failed);
  EXPECT_EQ(r.pairs[2].verdict, "n/a");
  EXPECT_EQ(r.pairs[2].correctness.at(0), "status ok -> oom");

  // Losing bit-identity is reported; by itself it is not a gate failure...
  now = base;
  now.rows[1].bitwise_equal_to = "";
  r = compare_results(base, now);
  EXPECT_FALSE(r.failed);
  ASSERT_EQ(r.pairs[1].correctness.size(), 1u);
  EXPECT_EQ(r.pairs[1].correctness[0], "bitwise_equal_to lost trtllm_mha_legacy");
  // ... except between the two backends that must stay bit-identical (the change under test: design's "no
  // behavioural change"), named from either side.
  CompareOptions must;
  must.must_stay_identical = {"trtllm_mha_legacy", "trtllm_mha"};
  r = compare_results(base, now, must);
  EXPECT_TRUE(r.failed);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_NE(r.failures[0].find("no longer bit-identical to trtllm_mha_legacy"), std::string::npos) << r.failures[0];
  std::swap(must.must_stay_identical.baseline, must.must_stay_identical.candidate);
  EXPECT_TRUE(compare_results(base, now, must).failed);
  // Another backend losing its equality to trtllm_mha_legacy stays a report.
  ResultSet base_fi = base, now_fi = base;
  base_fi.rows[0].bitwise_equal_to = "trtllm_mha_legacy";
  now_fi.rows[0].bitwise_equal_to = "";
  EXPECT_FALSE(compare_results(base_fi, now_fi, must).failed);
  // A row that became failed fails once, for its status, not again for its lost equality.
  now = base;
  now.rows[1].bitwise_equal_to = "";
  now.rows[1].status = RowStatus::failed;
  r = compare_results(base, now, must);
  EXPECT_TRUE(r.failed);
  for (const std::string& f : r.failures) EXPECT_EQ(f.find("bit-identical"), std::string::npos) << f;
}

TEST(CompareGate, MissingRowFailsOnlyInNewIsReported) {
  const ResultSet base = three_row_set();
  ResultSet now = base;
  now.rows.erase(now.rows.begin() + 1);
  CompareResult r = compare_results(base, now);
  EXPECT_TRUE(r.failed);
  ASSERT_EQ(r.missing_in_new.size(), 1u);
  EXPECT_EQ(r.missing_in_new[0], sample_key(base.rows[1]));
  EXPECT_EQ(r.pairs.size(), 2u);

  r = compare_results(now, base);  // the extra row is only in NEW
  EXPECT_FALSE(r.failed);
  ASSERT_EQ(r.only_in_new.size(), 1u);
  EXPECT_EQ(r.only_in_new[0], sample_key(base.rows[1]));
}

TEST(CompareGate, OkToSkippedIsReportedAndFails) {
  // A row that was ok and is now skipped measures nothing: NEW is no evidence for it.
  const ResultSet base = three_row_set();
  ResultSet now = base;
  now.rows[0].status = RowStatus::skipped;
  now.rows[0].ref_pass.reset();
  const CompareResult r = compare_results(base, now);
  EXPECT_TRUE(r.failed);
  EXPECT_EQ(r.pairs[0].verdict, "skipped");
  EXPECT_EQ(r.pairs[0].correctness.at(0), "status ok -> skipped");
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0], sample_key(base.rows[0]) + ": status ok -> skipped");
}

TEST(CompareGate, OkToAnythingElseFails) {
  for (const RowStatus status : {RowStatus::skipped, RowStatus::failed, RowStatus::oom}) {
    const ResultSet base = three_row_set();
    ResultSet now = base;
    for (ResultRow& row : now.rows) {
      row.status = status;
      row.note = "why\nnot";
      row.ref_pass.reset();
    }
    const CompareResult r = compare_results(base, now);
    EXPECT_TRUE(r.failed) << status;
    ASSERT_EQ(r.failures.size(), 4u) << status;  // three pairs, and nothing was compared
    EXPECT_EQ(r.failures[0], sample_key(base.rows[0]) + ": status ok -> " + row_status_name(status) + " (why\\nnot)");
    EXPECT_EQ(r.failures[3], "nothing compared: none of the 3 pairs is ok on both sides");
  }
  // Rows that were not ok may stay as they were: not a regression.
  ResultSet base = three_row_set();
  base.rows[0].status = RowStatus::skipped;
  ResultSet now = base;
  EXPECT_FALSE(compare_results(base, now).failed);
}

TEST(CompareGate, FailedReferenceFailsOnEitherSide) {
  const ResultSet good = three_row_set();
  ResultSet bad = good;
  bad.rows[1].ref_pass = false;
  bad.rows[1].ref_max_abs_err = 0.5;
  const std::string key = sample_key(good.rows[1]);

  CompareResult r = compare_results(bad, bad);  // both sides failed it
  EXPECT_TRUE(r.failed);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0], key + ": ref_pass 0 in BASE and NEW: both failed the reference check (max abs error 0.5 and 0.5)");

  r = compare_results(bad, good);  // the baseline failed it
  EXPECT_TRUE(r.failed);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0], key + ": ref_pass 0 in BASE: the baseline failed the reference check (max abs error 0.5), so it is no evidence");

  ResultSet unknown = good;  // BASE without a verdict, NEW failed
  unknown.rows[1].ref_pass.reset();
  r = compare_results(unknown, bad);
  EXPECT_TRUE(r.failed);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0], key + ": ref_pass 0 in NEW (max abs error 0.5)");

  r = compare_results(good, bad);  // the regression, as before
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0], key + ": ref_pass 1 -> 0 (max abs error 0.5)");
}

TEST(CompareGate, ComparingNothingFails) {
  const ResultSet full = three_row_set();
  ResultSet empty;
  CompareResult r = compare_results(empty, empty);
  EXPECT_TRUE(r.failed);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0], "nothing compared: neither BASE nor NEW has a row");

  r = compare_results(empty, full);
  EXPECT_TRUE(r.failed);
  EXPECT_EQ(r.failures.back(), "nothing compared: BASE has no row (NEW has 3)");

  r = compare_results(full, empty);
  EXPECT_TRUE(r.failed);
  EXPECT_EQ(r.failures.back(), "nothing compared: NEW has no row (BASE has 3)");

  ResultSet other = full;
  for (ResultRow& row : other.rows)
    row.case_id = "decode/llama-3.1-8b/L=6/b=64/kv=8192/p=64/bf16";  // another kv
  other.samples.clear();
  r = compare_results(full, other);
  EXPECT_TRUE(r.failed);
  EXPECT_EQ(r.failures.back(), "nothing compared: BASE (3 rows) and NEW (3 rows) have no case_id|backend|timing in common");

  ResultSet skipped = full;  // pairs, but none with a measurement on both sides
  for (ResultRow& row : skipped.rows) row.status = RowStatus::skipped;
  r = compare_results(skipped, skipped);
  EXPECT_TRUE(r.failed);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0], "nothing compared: none of the 3 pairs is ok on both sides");

  std::ostringstream table;
  write_compare_table(table, compare_results(empty, empty));
  EXPECT_NE(table.str().find("compare: FAIL: 0 pairs"), std::string::npos) << table.str();
}

// n samples per side: base 100, 101, ...; new the same times `factor`.
ResultSet samples_set(int n, double factor) {
  ResultSet s = one_row_set(100 * factor);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back((100 + i) * factor);
  s.samples[sample_key(s.rows[0])] = v;
  return s;
}

TEST(CompareGate, FiveSamplesPerSideCanConfirmASlowdown) {
  // The normal approximation cannot go below p = 0.012 with 5 per side; the exact test reaches 2/252.
  const CompareResult r = compare_results(samples_set(5, 1.0), samples_set(5, 1.2));
  EXPECT_EQ(r.pairs[0].verdict, "slower");
  EXPECT_EQ(r.pairs[0].method, "mann-whitney");
  EXPECT_NEAR(*r.pairs[0].p_value, 2.0 / 252, 1e-12);
  EXPECT_TRUE(r.failed);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_NE(r.failures[0].find("+20.0% slower (Mann-Whitney p = 0.0079)"), std::string::npos) << r.failures[0];
  EXPECT_TRUE(r.warnings.empty());
}

// A hostile NEW file: each row one raw sample, 3x BASE's median, BASE with tied samples. The exact test would take
// 1 vs 200 untied to p = 2 / 201, but ties make it asymptotic, whose best p there is 0.086: "ambiguous" passed the
// gate; it is "too few samples" (a failure with --strict).
TEST(CompareGate, OneNewSampleBesideTiedBaseSamplesIsTooFewNotAmbiguous) {
  ResultSet base = one_row_set(), now = one_row_set();
  std::vector<double> b(200);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = 100.0 + static_cast<double>(i % 20);
  base.samples[sample_key(base.rows[0])] = b;
  now.samples[sample_key(now.rows[0])] = {330.0};
  CompareOptions strict;
  strict.strict = true;
  const CompareResult r = compare_results(base, now, strict);
  EXPECT_TRUE(r.pairs[0].too_few_samples);
  EXPECT_NE(r.pairs[0].verdict.find("too few samples (200 vs 1, with tied values: the best p they could give is 0.0"),
            std::string::npos)
      << r.pairs[0].verdict;
  EXPECT_TRUE(r.failed);
  // Two NEW samples: the same.
  now.samples[sample_key(now.rows[0])] = {330.0, 331.0};
  EXPECT_TRUE(compare_results(base, now, strict).pairs[0].too_few_samples);
  // Untied BASE: exact, p = 2 / 201 < 0.01 is reachable and reached: slower, a failure without --strict.
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = 100.0 + 0.1 * static_cast<double>(i);
  base.samples[sample_key(base.rows[0])] = b;
  now.samples[sample_key(now.rows[0])] = {330.0};
  const CompareResult e = compare_results(base, now);
  EXPECT_EQ(e.pairs[0].verdict, "slower");
  EXPECT_TRUE(e.failed);
}

TEST(CompareGate, TooFewSamplesForAVerdictWarnsOrWithStrictFails) {
  const std::string key = sample_key(one_row_set().rows[0]);
  const std::string verdict = "too few samples (4 vs 4; at least 5 per side needed at alpha 0.01)";
  CompareResult r = compare_results(samples_set(4, 1.0), samples_set(4, 1.2));
  EXPECT_EQ(r.pairs[0].verdict, verdict);
  EXPECT_TRUE(r.pairs[0].too_few_samples);
  EXPECT_NEAR(*r.pairs[0].p_value, 2.0 / 70, 1e-12);
  EXPECT_FALSE(r.failed);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], key + ": " + verdict +
                               ": a +20.0% change can be neither confirmed nor ruled out (a failure with --strict)");
  std::ostringstream table, js;
  write_compare_table(table, r);
  EXPECT_NE(table.str().find("compare: PASS: 1 pairs: 0 faster, 0 slower, 0 same, 0 ambiguous, 0 skipped, 0 n/a, 1 too few samples"),
            std::string::npos)
      << table.str();
  write_compare_json(js, r);
  EXPECT_EQ(nlohmann::json::parse(js.str())["summary"]["verdicts"]["too few samples"], 1);

  CompareOptions strict;
  strict.strict = true;
  r = compare_results(samples_set(4, 1.0), samples_set(4, 1.2), strict);
  EXPECT_TRUE(r.failed);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0], key + ": " + verdict + ": a +20.0% change can be neither confirmed nor ruled out (--strict)");
  EXPECT_TRUE(r.warnings.empty());

  // Faster, 2 vs 3, another alpha: the same verdict, with that alpha's minimum.
  CompareOptions loose;
  loose.alpha = 0.05;
  r = compare_results(samples_set(2, 1.0), samples_set(3, 0.7), loose);
  EXPECT_EQ(r.pairs[0].verdict, "too few samples (2 vs 3; at least 4 per side needed at alpha 0.05)");
  // A change below min_effect needs no test: "same", even with 2 samples.
  r = compare_results(samples_set(2, 1.0), samples_set(2, 1.01), strict);
  EXPECT_EQ(r.pairs[0].verdict, "same");
  EXPECT_FALSE(r.failed);
  // 3 against 10 can reach alpha 0.01 (2 / C(13, 3) = 0.007): a verdict.
  r = compare_results(samples_set(3, 1.0), samples_set(10, 1.2), strict);
  EXPECT_EQ(r.pairs[0].verdict, "slower");
}

TEST(CompareRefusals, ValuesOutsideTheirDomainAreInputErrors) {
  const ResultSet good = three_row_set();
  const auto message = [&](const ResultSet& base, const ResultSet& now) -> std::string {
    try {
      compare_results(base, now);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no InputError";
  };
  const std::string key = sample_key(good.rows[1]);
  ResultSet bad = good;
  bad.rows[1].step_median_us = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(message(good, bad), "compare: NEW row 1 (" + key + "): step_median_us 'nan' is not a finite number >= 0");
  bad = good;
  bad.rows[1].step_p90_us = std::numeric_limits<double>::infinity();
  EXPECT_EQ(message(bad, good), "compare: BASE row 1 (" + key + "): step_p90_us 'inf' is not a finite number >= 0");
  bad = good;
  bad.rows[1].ctor_device_bytes = -1;
  EXPECT_EQ(message(good, bad), "compare: NEW row 1 (" + key + "): ctor_device_bytes '-1' is not an integer >= 0");
  bad = good;
  bad.rows[1].status = static_cast<RowStatus>(99);  // a value outside the enum (readers refuse unknown text)
  EXPECT_EQ(message(good, bad), "compare: NEW row 1 (" + key + "): status '?' is not ok, skipped, failed or oom");
  bad = good;
  bad.samples[key][3] = -1;
  EXPECT_EQ(message(good, bad), "compare: NEW samples of " + key + ": samples_us[3] '-1' is not a finite number >= 0");
  bad = good;
  bad.samples.clear();
  bad.rows[1].samples_us = {1, std::numeric_limits<double>::quiet_NaN()};
  EXPECT_EQ(message(good, bad), "compare: NEW row 1 (" + key + "): samples_us[1] 'nan' is not a finite number >= 0");
}

// Rows whose step statistics contradict each other are refused, not judged: a median of 1e308 inside a
// p10-p90 of 99-101 read as "ambiguous" and passed; an ok row with samples and no median read as "n/a".
TEST(CompareRefusals, InconsistentStepStatisticsAreInputErrors) {
  const ResultSet good = three_row_set();
  const std::string key = sample_key(good.rows[1]);
  const auto message = [&](const ResultSet& now) -> std::string {
    try {
      compare_results(good, now);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no InputError";
  };
  ResultSet bad = good;
  bad.rows[1].step_median_us = 1e308;
  EXPECT_EQ(message(bad), "compare: NEW row 1 (" + key + "): step_median_us '1e+308' is above step_p90_us '101': " +
                              "the step statistics are out of order");
  bad = good;
  bad.rows[1].step_p10_us = 400;
  EXPECT_EQ(message(bad), "compare: NEW row 1 (" + key + "): step_p10_us '400' is above step_median_us '100': " +
                              "the step statistics are out of order");
  bad = good;
  bad.rows[1].step_min_us = 100.5;
  EXPECT_EQ(message(bad), "compare: NEW row 1 (" + key + "): step_min_us '100.5' is above step_p10_us '99': " +
                              "the step statistics are out of order");
  bad = good;
  bad.rows[1].step_median_us.reset();
  EXPECT_EQ(message(bad), "compare: NEW row 1 (" + key + "): status ok with 30 samples but step_median_us empty: " +
                              "a measured step takes more than 0 us");
  bad = good;
  bad.rows[1].step_median_us = 0;
  bad.rows[1].step_p10_us = 0;
  EXPECT_EQ(message(bad), "compare: NEW row 1 (" + key + "): status ok with 30 samples but step_median_us '0': " +
                              "a measured step takes more than 0 us");
  // In order, equal values included; a row that took no samples (validate) needs no median.
  ResultSet fine = good;
  fine.rows[1].step_min_us = 99;
  fine.rows[1].step_max_us = 101;
  fine.rows[1].step_p10_us = 100;
  EXPECT_NO_THROW(compare_results(good, fine));
  fine.rows[1].samples = 0;
  fine.rows[1].step_median_us.reset();
  fine.rows[1].step_p10_us.reset();
  fine.rows[1].step_p90_us.reset();
  fine.samples.erase(key);
  EXPECT_EQ(compare_results(fine, fine).failures, std::vector<std::string>{});
}

// Evidence BASE had and NEW lost fails the gate: each of these passed before (n/a latency, no memory delta, no
// reference verdict).
TEST(CompareGate, EvidenceMissingInNewFails) {
  ResultSet base = three_row_set();
  base.samples.clear();  // the p10-p90 path (CSV) unless stated
  const std::string key = sample_key(base.rows[1]);
  const auto failures_with = [&](const std::function<void(ResultRow&)>& edit) {
    ResultSet now = base;
    edit(now.rows[1]);
    const CompareResult r = compare_results(base, now);
    EXPECT_TRUE(r.failed);
    return r.failures;
  };
  EXPECT_EQ(failures_with([](ResultRow& r) {
              r.samples = 0;
              r.step_median_us.reset();
              r.step_p10_us.reset();
              r.step_p90_us.reset();
            }),
            std::vector<std::string>{key + ": latency measured in BASE (30 samples), none in NEW (0 samples, " +
                                     "step_median_us empty)"});
  EXPECT_EQ(failures_with([](ResultRow& r) {
              r.step_median_us = 150;  // +50%: with no band in NEW it read as "ambiguous"
              r.step_p10_us.reset();
              r.step_p90_us.reset();
            }),
            std::vector<std::string>{key + ": step_p10_us / step_p90_us in BASE, missing in NEW: no noise band to " +
                                     "judge the latency by"});
  EXPECT_EQ(failures_with([](ResultRow& r) { r.ctor_device_bytes.reset(); }),
            std::vector<std::string>{key + ": ctor_device_bytes recorded in BASE (537919492 B), missing in NEW: " +
                                     "memory growth cannot be ruled out"});
  const std::vector<std::string> ref = failures_with([](ResultRow& r) { r.ref_pass.reset(); });
  EXPECT_EQ(ref, std::vector<std::string>{key + ": ref_pass 1 -> empty: NEW ran no reference check where BASE "
                                                "passed one"});
  // Counted as a correctness regression in the summary.
  ResultSet now = base;
  now.rows[1].ref_pass.reset();
  std::ostringstream table;
  write_compare_table(table, compare_results(base, now));
  EXPECT_NE(table.str().find("1 correctness regressions"), std::string::npos) << table.str();
  // With raw samples on both sides a missing band does not matter (the rank test uses the samples).
  ResultSet with_samples = three_row_set();
  ResultSet no_band = with_samples;
  no_band.rows[1].step_p10_us.reset();
  no_band.rows[1].step_p90_us.reset();
  EXPECT_FALSE(compare_results(with_samples, no_band).failed);
  // The other way round (NEW gained evidence) passes.
  EXPECT_FALSE(compare_results(no_band, with_samples).failed);
  ResultSet less = base;
  less.rows[1].ctor_device_bytes.reset();
  less.rows[1].ref_pass.reset();
  EXPECT_FALSE(compare_results(less, base).failed);
}

TEST(CompareGate, CsvOnlyFallsBackToP10P90Ranges) {
  ResultSet base, now;
  const auto add = [](ResultSet& s, const std::string& backend, double med, double p10, double p90) {
    s.rows.push_back(row(backend, "eager", med, p10, p90));
  };
  add(base, "a_slower", 100, 99, 101), add(now, "a_slower", 120, 119, 121);        // disjoint, +20%
  add(base, "b_noisy", 100, 70, 130), add(now, "b_noisy", 120, 90, 150);           // overlap, +20%
  add(base, "c_same", 100, 99, 101), add(now, "c_same", 101, 100, 102);            // overlap, +1%
  add(base, "d_faster", 100, 99, 101), add(now, "d_faster", 80, 79, 81);           // disjoint, -20%
  add(base, "e_small", 100, 99.9, 100.1), add(now, "e_small", 101, 100.9, 101.1);  // disjoint, +1%
  const CompareResult r = compare_results(base, now);
  ASSERT_EQ(r.pairs.size(), 5u);
  const std::vector<std::string> want = {"slower", "ambiguous", "same", "faster", "same"};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(r.pairs[i].verdict, want[i]) << r.pairs[i].backend;
    EXPECT_EQ(r.pairs[i].method, "p10-p90");
    EXPECT_FALSE(r.pairs[i].p_value);
  }
  EXPECT_TRUE(r.failed);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_NE(r.failures[0].find("a_slower"), std::string::npos);
}

TEST(CompareRefusals, DifferentSchemaVersionsAreInputErrors) {
  const ResultSet base = three_row_set();
  ResultSet now = base;
  for (ResultRow& r : now.rows) r.schema_version = 3;
  EXPECT_THROW(compare_results(base, now), InputError);
  now.rows[0].schema_version = 2;  // mixed within one set
  EXPECT_THROW(compare_results(base, now), InputError);
}

TEST(CompareRefusals, GpuOrDriverMismatchIsInputErrorUnlessAllowed) {
  const ResultSet base = three_row_set();
  ResultSet now = base;
  now.environment = {{"gpu_name", "NVIDIA H100 80GB HBM3"}, {"driver_version", "13.0"}};
  try {
    compare_results(base, now);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "compare: BASE ran on NVIDIA H200, NEW on NVIDIA H100 80GB HBM3; --allow-env-mismatch to "
              "compare anyway");
  }
  CompareOptions allow;
  allow.allow_env_mismatch = true;
  const CompareResult r = compare_results(base, now, allow);
  EXPECT_FALSE(r.failed);
  ASSERT_EQ(r.warnings.size(), 1u);

  now.environment = {{"gpu_name", "NVIDIA H200"}, {"driver_version", "12.8"}};
  EXPECT_THROW(compare_results(base, now), InputError);

  // CSV only (no environment): the rows' device column tells the GPU.
  ResultSet csv_base = base, csv_now = base;
  csv_base.environment.clear();
  csv_now.environment.clear();
  for (ResultRow& r : csv_now.rows) r.device = "cpu";
  EXPECT_THROW(compare_results(csv_base, csv_now), InputError);
  EXPECT_NO_THROW(compare_results(csv_base, csv_base));
  // Rows of two devices in NEW: no single GPU, and not BASE's (this skipped the check before).
  csv_now = csv_base;
  csv_now.rows[0].device = "NVIDIA H100 80GB HBM3";
  try {
    compare_results(csv_base, csv_now);
    ADD_FAILURE() << "two devices in NEW accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "compare: BASE ran on NVIDIA H200, NEW on NVIDIA H100 80GB HBM3 + NVIDIA H200; --allow-env-mismatch "
              "to compare anyway");
  }
}

TEST(CompareRefusals, DuplicateKeyIsInputError) {
  ResultSet s = three_row_set();
  s.rows.push_back(s.rows[0]);
  EXPECT_THROW(compare_results(s, three_row_set()), InputError);
}

TEST(CompareWriters, TableMarkdownCsvJsonCarryVerdictsAndGate) {
  const ResultSet base = three_row_set();
  ResultSet now = base;
  now.samples[sample_key(now.rows[1])] = tight(130);
  now.rows.pop_back();
  const CompareResult r = compare_results(base, now);
  ASSERT_TRUE(r.failed);

  std::ostringstream table, md, js;
  std::stringstream csv;
  write_compare_table(table, r);
  EXPECT_NE(table.str().find("compare: FAIL: 2 pairs: 0 faster, 1 slower, 1 same"), std::string::npos)
      << table.str();
  EXPECT_NE(table.str().find("missing in NEW (1)"), std::string::npos);
  EXPECT_NE(table.str().find("+30.0%"), std::string::npos);

  write_compare_markdown(md, r);
  EXPECT_NE(md.str().find("**FAIL**"), std::string::npos);
  EXPECT_NE(md.str().find("| slower |"), std::string::npos) << md.str();

  write_compare_csv(csv, r);
  std::vector<std::string> lines;
  for (std::string l; std::getline(csv, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 1u + 2u + 1u);  // header, two pairs, one missing
  EXPECT_EQ(lines[0].rfind(
                "case_id,backend,timing,base_status,new_status,base_median_us,new_median_us,change_pct,", 0),
            0u);
  const auto cells = [](const std::string& l) {  // commas outside quotes + 1
    std::size_t n = 1;
    bool quoted = false;
    for (const char c : l) {
      if (c == '"') quoted = !quoted;
      n += c == ',' && !quoted;
    }
    return n;
  };
  for (const std::string& l : lines) EXPECT_EQ(cells(l), cells(lines[0])) << l;
  EXPECT_NE(lines[2].find(",slower,mann-whitney,"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find(",missing,"), std::string::npos) << lines[3];

  write_compare_json(js, r);
  const auto j = nlohmann::json::parse(js.str());
  EXPECT_EQ(j["failed"], true);
  EXPECT_EQ(j["pairs"].size(), 2u);
  EXPECT_EQ(j["pairs"][1]["verdict"], "slower");
  EXPECT_EQ(j["missing_in_new"].size(), 1u);
  EXPECT_EQ(j["summary"]["verdicts"]["slower"], 1);
}

TEST(CompareLoad, CommittedH200ResultsLoadAndCompareWithThemselves) {
  const std::string dir = std::string(ATTNBENCH_SOURCE_DIR) + "/results/h200/";
  const ResultSet csv = load_result_set(dir + "pr-evidence.csv");
  const ResultSet js = load_result_set(dir + "pr-evidence.json");
  ASSERT_EQ(csv.rows.size(), 285u);
  ASSERT_EQ(js.rows.size(), csv.rows.size());
  // The JSON (schema 2) also holds every row's raw samples and ledger, which the CSV has no columns for; the
  // rest of each row is the same.
  for (std::size_t i = 0; i < js.rows.size(); ++i) {
    ResultRow j = js.rows[i];
    if (j.status == RowStatus::ok) {
      EXPECT_EQ(static_cast<int>(j.samples_us.size()), j.samples) << j.case_id << " " << j.backend;
      EXPECT_FALSE(j.ledger.empty()) << j.case_id << " " << j.backend;
    }
    j.samples_us.clear();
    j.ledger.clear();
    EXPECT_EQ(j, csv.rows[i]) << i << ": " << j.case_id << " " << j.backend << " " << j.timing;
  }
  EXPECT_FALSE(js.environment.empty());
  const CompareResult r = compare_results(csv, js);
  EXPECT_FALSE(r.failed);
  EXPECT_EQ(r.pairs.size(), 285u);
}

// ---- golden outputs: every writer, byte for byte ---------------------------------------------------------

// Every verdict, memory growth and shrink, correctness changes, a row missing in NEW, one only in NEW, an
// accepted environment difference, a case id with a comma (CSV quoting).
CompareResult rich_result() {
  ResultSet base = three_row_set(), now = three_row_set();
  const auto add = [](ResultSet& s, ResultRow r, bool samples) {
    if (samples) s.samples[sample_key(r)] = tight(*r.step_median_us);
    s.rows.push_back(std::move(r));
  };
  add(base, row("trtllm_mha_legacy", "eager", 100, 70, 130), false);  // p10-p90, overlapping: ambiguous
  add(now, row("trtllm_mha_legacy", "eager", 120, 90, 150), false);
  ResultRow sk = row("trtllm_mha_legacy", "graph", 100, 99, 101);
  add(base, sk, true);
  sk.status = RowStatus::skipped;
  sk.ref_pass.reset();
  add(now, sk, false);
  ResultRow comma = row("odd", "eager", 50, 49, 51);
  comma.case_id = "decode/llama-3.1-8b/L=6/b=64/kv=4096/uniform[1,L]/p=64/bf16";  // a comma in the id
  add(base, comma, true);  // missing in NEW
  ResultRow extra = row("extra", "graph", 10, 9, 11);
  add(now, extra, true);  // only in NEW
  ResultRow failed = row("flashinfer", "graph", 100, 99, 101);
  add(base, failed, true);
  failed.status = RowStatus::failed;
  failed.note = "CUDA error, \"illegal\" address";
  failed.ref_pass.reset();
  add(now, failed, false);
  now.samples[sample_key(now.rows[0])] = tight(80);   // flashinfer eager: faster
  now.samples[sample_key(now.rows[1])] = tight(130);  // trtllm_mha eager: slower, beyond the gate
  *now.rows[1].ctor_device_bytes += 4096;
  *now.rows[2].ctor_device_bytes -= 2 << 20;  // graph: same latency, less memory
  now.rows[2].step_peak_device_bytes = 100;
  base.rows[2].step_peak_device_bytes = 100;
  now.rows[2].bitwise_equal_to = "";
  now.rows[3].ref_pass = false;
  now.environment = {{"gpu_name", "NVIDIA H100"}, {"driver_version", "13.0"}};
  CompareOptions opt;
  opt.allow_env_mismatch = true;
  return compare_results(base, now, opt);
}

TEST(CompareGolden, TableMarkdownCsvJson) {
  const CompareResult r = rich_result();
  std::ostringstream table, md, csv, js;
  write_compare_table(table, r);
  write_compare_markdown(md, r);
  write_compare_csv(csv, r);
  write_compare_json(js, r);
  test::expect_golden("compare.txt", table.str());
  test::expect_golden("compare.md", md.str());
  test::expect_golden("compare.csv", csv.str());
  test::expect_golden("compare.json", js.str());

  const ResultSet s = three_row_set();
  const CompareResult same = compare_results(s, s);
  std::ostringstream same_table, same_md, same_csv;
  write_compare_table(same_table, same);
  write_compare_markdown(same_md, same);
  write_compare_csv(same_csv, same);
  test::expect_golden("compare-same.txt", same_table.str());
  test::expect_golden("compare-same.md", same_md.str());
  test::expect_golden("compare-same.csv", same_csv.str());
}

// The command wires the catalog's change into the gate: the binary fails a NEW whose trtllm_mha row lost its
// bit-identity to trtllm_mha_legacy, and passes the same files otherwise.
TEST(CompareCli, LeanLosingLegacyBitIdentityFailsTheGate) {
  test::TempDir d;
  const ResultSet base = three_row_set();
  ResultSet now = base;
  now.rows[1].bitwise_equal_to = "";
  const std::string b = d.file("base.json"), n = d.file("new.json");
  write_results_json(b, base.environment, "attnbench run", base.rows);
  write_results_json(n, now.environment, "attnbench run", now.rows);
  const auto same = test::run_attnbench("compare " + b + " " + b, d);
  EXPECT_EQ(same.exit_code, 0) << same.err;
  const auto lost = test::run_attnbench("compare " + b + " " + n, d);
  EXPECT_EQ(lost.exit_code, 1) << lost.out;
  EXPECT_NE(lost.err.find("no longer bit-identical to trtllm_mha_legacy"), std::string::npos) << lost.err;
  EXPECT_NE(lost.out.find("1 correctness regressions"), std::string::npos) << lost.out;
}


}  // namespace
}  // namespace attnbench
