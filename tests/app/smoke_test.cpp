// configs/smoke.toml end to end through the binary: exit 0, every row ok and validated, the two TRTLLM
// backends bit-identical, and the CSV readable back with the schema.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report/results_io.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

TEST(Smoke, SmokeConfigRunsEndToEnd) {
  test::TempDir d;
  const std::string csv = d.file("smoke.csv");
  const auto r = test::run_attnbench(
      "run --config " ATTNBENCH_SOURCE_DIR "/configs/smoke.toml --device cpu --out " + csv, d);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto rows = read_results_csv(csv);
  ASSERT_EQ(rows.size(), 4u * 3u) << "4 cases (decode, 2 extend, verify) x 3 backends, eager only on the CPU";
  for (const ResultRow& row : rows) {
    EXPECT_EQ(row.status, RowStatus::ok) << row.case_id << " " << row.backend << ": " << row.note;
    ASSERT_TRUE(row.ref_pass.has_value());
    EXPECT_TRUE(*row.ref_pass) << row.case_id << " " << row.backend;
    EXPECT_GT(row.samples, 0);
    if (row.backend == "trtllm_mha") {
      EXPECT_NE(row.bitwise_equal_to.find("trtllm_mha_legacy"), std::string::npos);
    }
    if (row.backend == "trtllm_mha_legacy") {
      EXPECT_NE(row.bitwise_equal_to.find("trtllm_mha"), std::string::npos);
    }
  }
  EXPECT_NE(r.out.find("12 rows: 12 ok"), std::string::npos) << r.out;
}

TEST(Smoke, ValidateExitsZeroAndReproCommandsRegenerateARow) {
  test::TempDir d;
  const std::string csv = d.file("v.csv");
  const auto r = test::run_attnbench("validate --config " ATTNBENCH_SOURCE_DIR "/configs/smoke.toml --out " + csv, d);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = read_results_csv(csv);
  ASSERT_FALSE(rows.empty());
  EXPECT_FALSE(rows[0].step_median_us.has_value()) << "validate does not time";
  // The repro of row 5 regenerates exactly that row (same case, backend and correctness figures).
  const ResultRow& want = rows[5];
  const std::string repro = want.repro.substr(std::string("attnbench ").size());
  const auto again = test::run_attnbench(repro + " --out " + d.file("again.csv"), d);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const auto got = read_results_csv(d.file("again.csv"));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].case_id, want.case_id);
  EXPECT_EQ(got[0].backend, want.backend);
  EXPECT_EQ(got[0].ref_max_abs_err, want.ref_max_abs_err);
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

TEST(Smoke, JsonCarriesRawSamplesAndTheMarkdownReportNamesEveryCaseAndTheSaving) {
  test::TempDir d;
  const auto r = test::run_attnbench(
      "run --config " ATTNBENCH_SOURCE_DIR "/configs/smoke.toml --device cpu --quiet --out " + d.file("s.csv"), d);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(test::read_file(d.file("s.json")));  // beside the CSV by default
  ASSERT_EQ(j["rows"].size(), 12u);
  for (const auto& row : j["rows"]) {
    EXPECT_EQ(row["samples_us"].size(), row["samples"].get<std::size_t>()) << row["case_id"];
    EXPECT_FALSE(row["ledger"].empty());
  }
  const auto md = test::run_attnbench("report " + d.file("s.json"), d);
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("416.30 MiB"), std::string::npos) << "the saving, from the rows' construction bytes";
  for (const auto& row : j["rows"]) EXPECT_NE(md.out.find(row["case_id"].get<std::string>()), std::string::npos);
  EXPECT_NE(md.out.find("attnbench run --config"), std::string::npos) << "the command that reproduces it";
}

}  // namespace
}  // namespace attnbench
