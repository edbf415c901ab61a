// Where a sweep writes, checked before anything is written.
#include "runner/sweep_files.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "core/errors.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

void expect_bad(const std::function<void()>& f, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "accepted; expected " << message;
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(SweepFiles, JsonDefaultsToBesideTheCsv) {
  test::TempDir d;
  EXPECT_EQ(sweep_files(d.file("r.csv"), "", "", "", false).json, d.file("r.json"));
  EXPECT_EQ(sweep_files(d.file("r.out"), "", "", "", false).json, d.file("r.out.json"));
  EXPECT_EQ(sweep_files(d.file("r.csv"), d.file("j.json"), "", "", false).json, d.file("j.json"));
  // Without --out: results/local/run-<time>.csv under the working directory (whose results/ must exist).
  const auto cwd = std::filesystem::current_path();
  std::filesystem::create_directories(d.file("results"));
  std::filesystem::current_path(d.path());
  const SweepFiles def = sweep_files("", "", "", "", false);
  std::filesystem::current_path(cwd);
  EXPECT_EQ(def.csv.rfind("results/local/run-", 0), 0u) << def.csv;
  EXPECT_EQ(def.json, def.csv.substr(0, def.csv.size() - 4) + ".json");
}

TEST(SweepFiles, NoOutputOverwritesAnInputOrTheOtherOutput) {
  test::TempDir d;
  const std::string csv = d.file("r.csv");
  expect_bad([&] { sweep_files(csv, csv, "", "", false); }, "--json: '" + csv + "' is the --out file");
  expect_bad([&] { sweep_files(csv, "", csv, "", false); }, "--out: '" + csv + "' is the --config file");
  expect_bad([&] { sweep_files(csv, "", "", d.file("r.json"), false); },
             "--json: '" + d.file("r.json") + "' is the --trace file");
  expect_bad([&] { sweep_files("", "", "", "", true); }, "--resume: needs --out (the results file to complete)");
  expect_bad([&] { sweep_files(d.path(), "", "", "", false); }, "--out: '" + d.path() + "' is a directory");
  test::write_file(d.file("a-file"), "x");
  EXPECT_THROW(sweep_files(d.file("a-file") + "/x.csv", "", "", "", false), InputError);
  EXPECT_TRUE(std::filesystem::is_empty(d.path()) || !std::filesystem::exists(d.file("r.csv")));
}

TEST(SweepFiles, PrepareCreatesDirectoriesAndRewritesTheKeptRows) {
  test::TempDir d;
  const SweepFiles f = sweep_files(d.file("a/b/r.csv"), "", "", "", false);
  EXPECT_FALSE(std::filesystem::exists(d.file("a")));
  ResultRow r;
  r.case_id = "decode/tiny/b=1/kv=8/p=64/bf16";
  r.backend = "flashinfer";
  r.status = "ok";
  prepare_sweep_files(f, /*rewrite=*/true, {r});
  ASSERT_TRUE(std::filesystem::is_directory(d.file("a/b")));
  const auto rows = read_results_csv(f.csv);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].case_id, r.case_id);
  EXPECT_FALSE(std::filesystem::exists(f.csv + ".resume-tmp"));
}

}  // namespace
}  // namespace attnbench
