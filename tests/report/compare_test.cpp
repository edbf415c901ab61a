// compare: pairing, the noise-aware latency verdicts (Mann-Whitney with samples, p10-p90 without), the gate
// (confirmed slowdown, memory growth, correctness, missing rows), refusals (schema, GPU, driver), the
// writers, and load_result_set on CSV and JSON files.
#include "report/compare.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "report/results_json.hpp"
#include "support/golden.hpp"
#include "support/result_rows.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

ResultRow row(const std::string& backend, const std::string& timing, double median, double p10, double p90) {
  ResultRow r = test::llama_row("decode/llama-3.1-8b/L=6/b=64/kv=4096/p=64/bf16", backend, timing);
  r.q_tokens = 64;
  r.samples = 30;
  r.step_median_us = median;
  r.step_p10_us = p10;
  r.step_p90_us = p90;
  r.ctor_device_bytes = 537919492;
  r.ctor_pinned_bytes = 0;
  r.ref_max_abs_err = 1e-3;
  r.bitwise_equal_to = backend == "trtllm_mha" ? "trtllm_mha_legacy" : "";
  return r;
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

TEST(CompareMannWhitney, MatchesHandComputedExampleWithTies) {
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

TEST(CompareMannWhitney, NoTiesAndDegenerateInputs) {
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
  // Less memory never fails; a column missing on one side is not compared.
  ResultSet less = base;
  *less.rows[1].ctor_device_bytes -= 4096;
  less.rows[2].ctor_pinned_bytes.reset();
  const CompareResult rl = compare_results(base, less);
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
  now.rows[2].status = "oom";
  r = compare_results(base, now);
  EXPECT_TRUE(r.failed);
  EXPECT_EQ(r.pairs[2].verdict, "n/a");
  EXPECT_EQ(r.pairs[2].correctness.at(0), "status ok -> oom");

  // Losing bit-identity is reported, not a gate failure.
  now = base;
  now.rows[1].bitwise_equal_to = "";
  r = compare_results(base, now);
  EXPECT_FALSE(r.failed);
  ASSERT_EQ(r.pairs[1].correctness.size(), 1u);
  EXPECT_EQ(r.pairs[1].correctness[0], "bitwise_equal_to lost trtllm_mha_legacy");
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

TEST(CompareGate, SkippedRowsAreReportedNotFailed) {
  const ResultSet base = three_row_set();
  ResultSet now = base;
  now.rows[0].status = "skipped";
  now.rows[0].ref_pass.reset();
  const CompareResult r = compare_results(base, now);
  EXPECT_FALSE(r.failed);
  EXPECT_EQ(r.pairs[0].verdict, "skipped");
  EXPECT_EQ(r.pairs[0].correctness.at(0), "status ok -> skipped");
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
  for (ResultRow& r : now.rows) r.schema_version = 2;
  EXPECT_THROW(compare_results(base, now), InputError);
  now.rows[0].schema_version = 1;  // mixed within one set
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

// A row with every optional set, so that a round trip covers every column.
ResultRow full_row(const std::string& backend) {
  ResultRow r = row(backend, "graph", 100.25, 99.5, 101.75);
  r.note = "with, \"quotes\"";
  r.kv_len_mean = 4096.5;
  r.kv_len_max = 8192;
  r.prefix_len_mean = 4095.5;
  r.sliding_window = 1024;
  r.seed = 1234567890123ULL;
  r.step_min_us = 98.0;
  r.step_max_us = 120.0;
  r.step_spread_pct = 2.25;
  r.metadata_median_us = 9.5;
  r.forward_median_us = 15.0;
  r.tflops = 0.5;
  r.tb_per_s = 4.25;
  r.bw_fraction = 0.99;
  r.ctor_driver_delta_bytes = 536870912;
  r.graph_state_device_bytes = 2097152;
  r.capture_device_bytes = 34234;
  r.capture_pinned_bytes = 0;
  r.step_peak_device_bytes = 4100;
  r.ref_rel_l2_err = 0.002;
  r.ref_mismatch_frac = 0;
  r.repro = "attnbench run --case-id 'x'";
  r.samples_us = {99.5, 100.25, 101.75};
  r.ledger = {{"construct", backend + ".workspace_buffer", "device", 536870912, true, 1}};
  return r;
}

// The CSV carries neither raw samples nor the ledger.
std::vector<ResultRow> without_json_only_fields(std::vector<ResultRow> rows) {
  for (ResultRow& r : rows) {
    r.samples_us.clear();
    r.ledger.clear();
  }
  return rows;
}

TEST(CompareLoad, ReadsCsvAndJsonReportsBack) {
  test::TempDir d;
  const std::vector<ResultRow> rows = {full_row("trtllm_mha"), full_row("trtllm_mha_legacy")};
  {
    ResultsCsvWriter w(d.file("r.csv"));
    for (const ResultRow& r : rows) w.write(r);
  }
  const ResultSet csv = load_result_set(d.file("r.csv"));
  EXPECT_EQ(csv.rows, without_json_only_fields(rows));
  EXPECT_TRUE(csv.samples.empty());
  EXPECT_TRUE(csv.environment.empty());

  const Environment env = {{"gpu_name", "NVIDIA H200"}, {"driver_version", "13.0"}};
  write_results_json(d.file("r.json"), env, "attnbench run --x", rows);
  const ResultSet js = load_result_set(d.file("r.json"));
  EXPECT_EQ(js.rows, rows);  // every column, the raw samples and the ledger
  EXPECT_EQ(js.environment, env);
  EXPECT_EQ(js.command, "attnbench run --x");
  ASSERT_EQ(js.samples.size(), 2u);
  EXPECT_EQ(js.samples.at(sample_key(rows[1])), rows[1].samples_us);

  // Older reports: no samples_us / ledger keys, ref_pass written as 1 / 0, empty text as null.
  auto j = nlohmann::json::parse(test::read_file(d.file("r.json")));
  j["rows"][1].erase("samples_us");
  j["rows"][1].erase("ledger");
  j["rows"][1]["ref_pass"] = 1;
  j["rows"][1]["bitwise_equal_to"] = nullptr;
  test::write_file(d.file("s.json"), j.dump());
  const ResultSet s = load_result_set(d.file("s.json"));
  ASSERT_EQ(s.samples.size(), 1u);
  EXPECT_TRUE(s.rows[1].samples_us.empty());
  EXPECT_EQ(s.rows[1].ref_pass, true);
  EXPECT_EQ(s.rows[1].bitwise_equal_to, "");
}

TEST(CompareLoad, MalformedJsonIsInputErrorNamingTheFile) {
  test::TempDir d;
  write_results_json(d.file("r.json"), {}, "cmd", {full_row("trtllm_mha")});
  const std::string text = test::read_file(d.file("r.json"));
  const auto expect_error = [&](const std::string& name, const std::string& content,
                                const std::string& what) {
    test::write_file(d.file(name), content);
    try {
      load_result_set(d.file(name));
      ADD_FAILURE() << name << ": expected InputError";
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(d.file(name)), std::string::npos) << msg;
      EXPECT_NE(msg.find(what), std::string::npos) << msg;
    }
  };
  expect_error("truncated.json", text.substr(0, text.size() / 2), "not valid JSON");

  auto j = nlohmann::json::parse(text);
  j["rows"][0].erase("tb_per_s");
  expect_error("missing.json", j.dump(), "missing column 'tb_per_s'");

  j = nlohmann::json::parse(text);
  j["rows"][0]["batch"] = "64";
  expect_error("type.json", j.dump(), "batch \"64\" is not an integer");

  j = nlohmann::json::parse(text);
  j["rows"][0]["schema_version"] = 2;
  j["schema_version"] = 1;
  expect_error("version.json", j.dump(), "schema_version 2, this attnbench reads 1");

  j = nlohmann::json::parse(text);
  j["rows"][0]["samples_us"] = {1.0, "x"};
  expect_error("samples.json", j.dump(), "samples_us");

  j = nlohmann::json::parse(text);
  j["rows"][0]["ledger"][0].erase("bytes");
  expect_error("ledger.json", j.dump(), "ledger entry");

  j = nlohmann::json::parse(text);
  j["rows"].push_back(j["rows"][0]);
  expect_error("dup.json", j.dump(), "two rows for");

  expect_error("memory.json", R"({"schema": "attnbench.memory", "schema_version": 1})", "attnbench.results");
  EXPECT_THROW(load_result_set(d.file("absent.json")), InputError);
}

TEST(CompareLoad, CommittedH200ResultsLoadAndCompareWithThemselves) {
  const std::string dir = std::string(ATTNBENCH_SOURCE_DIR) + "/results/h200/";
  const ResultSet csv = load_result_set(dir + "pr-evidence.csv");
  const ResultSet js = load_result_set(dir + "pr-evidence.json");
  ASSERT_EQ(csv.rows.size(), 285u);
  EXPECT_EQ(js.rows, csv.rows);
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
  sk.status = "skipped";
  sk.ref_pass.reset();
  add(now, sk, false);
  ResultRow comma = row("odd", "eager", 50, 49, 51);
  comma.case_id = "decode/odd,case/b=1";
  add(base, comma, true);  // missing in NEW
  ResultRow extra = row("extra", "graph", 10, 9, 11);
  add(now, extra, true);  // only in NEW
  ResultRow failed = row("flashinfer", "graph", 100, 99, 101);
  add(base, failed, true);
  failed.status = "failed";
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

TEST(ResultsJsonGolden, ExactBytes) {
  test::TempDir d;
  write_results_json(d.file("r.json"), {{"gpu_name", "NVIDIA H200"}, {"driver_version", "13.0"}},
                     "attnbench run --x", {full_row("trtllm_mha"), full_row("flashinfer")});
  test::expect_golden("results.json", test::read_file(d.file("r.json")));
}

}  // namespace
}  // namespace attnbench
