// The JSON report: environment, command, and every row with the CSV's columns (typed, null when empty).
#include "report/results_json.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/test_util.hpp"

namespace attnbench {
namespace {

TEST(ResultsJson, CarriesEnvironmentCommandAndTypedRows) {
  test::TempDir d;
  ResultRow a;
  a.case_id = "decode/tiny/b=1/kv=8/p=16/bf16";
  a.backend = "trtllm_mha";
  a.status = "ok";
  a.note = "with, \"quotes\"";
  a.seed = 7;
  a.step_median_us = 12.5;
  a.ref_pass = true;
  a.ctor_device_bytes = 537919492;
  ResultRow b = a;
  b.backend = "flashinfer";
  b.step_median_us.reset();
  b.ref_pass = false;
  write_results_json(d.file("r.json"), {{"gpu_name", "X"}, {"copy_bandwidth_bytes_per_s", "1e12"}}, "attnbench run --x",
                     {a, b});
  const auto j = nlohmann::json::parse(test::read_file(d.file("r.json")));
  EXPECT_EQ(j["schema_version"], kResultsSchemaVersion);
  EXPECT_EQ(j["environment"]["gpu_name"], "X");
  EXPECT_EQ(j["command"], "attnbench run --x");
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0].size(), results_csv_columns().size() + 2) << "the columns, samples_us and ledger";
  EXPECT_EQ(j["rows"][0]["note"], "with, \"quotes\"");
  EXPECT_EQ(j["rows"][0]["step_median_us"], 12.5);
  EXPECT_EQ(j["rows"][0]["ctor_device_bytes"], 537919492);
  EXPECT_EQ(j["rows"][0]["ref_pass"], true);
  EXPECT_EQ(j["rows"][0]["seed"], 7);
  EXPECT_TRUE(j["rows"][1]["step_median_us"].is_null());
  EXPECT_EQ(j["rows"][1]["ref_pass"], false);
  EXPECT_TRUE(j["rows"][1]["tflops"].is_null());
}

}  // namespace
}  // namespace attnbench
