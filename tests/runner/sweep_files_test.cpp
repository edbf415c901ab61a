// Where a sweep writes, checked before anything is written.
#include "runner/sweep_files.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <unistd.h>

#include "core/errors.hpp"
#include "report/results_io.hpp"
#include "support/result_rows.hpp"
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
  const ResultRow r = test::tiny_row("flashinfer");
  prepare_sweep_files(f, /*rewrite=*/true, {r});
  ASSERT_TRUE(std::filesystem::is_directory(d.file("a/b")));
  const auto rows = read_results_csv(f.csv);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].case_id, r.case_id);
  EXPECT_FALSE(std::filesystem::exists(f.csv + ".resume-tmp"));
}

TEST(SweepFiles, AHardLinkOrASymlinkOfAnInputIsThatInput) {
  test::TempDir d;
  test::write_file(d.file("c.toml"), "batch = [1]\n");
  test::write_file(d.file("t.csv"), "request_id,prefix_len,extend_len\nr0,1,2\n");
  std::filesystem::create_hard_link(d.file("c.toml"), d.file("hl.csv"));
  std::filesystem::create_symlink(d.file("t.csv"), d.file("sym.json"));
  expect_bad([&] { sweep_files(d.file("hl.csv"), "", d.file("c.toml"), "", false); },
             "--out: '" + d.file("hl.csv") + "' is the --config file ('" + d.file("c.toml") + "')");
  expect_bad([&] { sweep_files(d.file("r.csv"), d.file("sym.json"), "", d.file("t.csv"), false); },
             "--json: '" + d.file("sym.json") + "' is the --trace file ('" + d.file("t.csv") + "')");
  std::filesystem::create_hard_link(d.file("t.csv"), d.file("r.csv"));
  std::filesystem::create_hard_link(d.file("t.csv"), d.file("r2.json"));
  expect_bad([&] { sweep_files(d.file("r.csv"), d.file("r2.json"), "", "", false); },
             "--json: '" + d.file("r2.json") + "' is the --out file");
  EXPECT_TRUE(same_file(d.file("hl.csv"), d.file("c.toml")));
  EXPECT_TRUE(same_file(d.file("x/../c.toml"), d.file("c.toml")));
  EXPECT_FALSE(same_file(d.file("new.csv"), d.file("c.toml")));
  EXPECT_FALSE(same_file("", ""));
}

ResultRow some_row(const std::string& id) {
  ResultRow r = test::tiny_row("flashinfer");
  r.case_id = id;
  return r;
}

TEST(SweepFiles, RowsGoOutOneByOneAndAFailedWriteIsAWriteError) {
  test::TempDir d;
  {
    ResultsFileWriter w(d.file("r.csv"), /*append=*/false);
    w.write(some_row("decode/tiny/b=1/kv=8/p=64/bf16"));
    EXPECT_EQ(read_results_csv(d.file("r.csv")).size(), 1u) << "on disk before the writer closes";
  }
  {
    ResultsFileWriter w(d.file("r.csv"), /*append=*/true);
    w.write(some_row("decode/tiny/b=1/kv=16/p=64/bf16"));
  }
  const auto rows = read_results_csv(d.file("r.csv"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].case_id, "decode/tiny/b=1/kv=16/p=64/bf16");
  try {
    ResultsFileWriter w("/dev/full", false);
    FAIL() << "the header went to /dev/full";
  } catch (const WriteError& e) {
    EXPECT_STREQ(e.what(), "cannot write '/dev/full': No space left on device");
  }
  EXPECT_THROW(ResultsFileWriter(d.file("no/such/dir.csv"), false), WriteError);
}

TEST(SweepFiles, TheJsonReportIsWrittenWholeAndItsEnvironmentReadBack) {
  test::TempDir d;
  const std::vector<std::pair<std::string, std::string>> env = {{"zeta", "1"}, {"alpha", "two"}, {"options", "a=b"}};
  write_sweep_json(d.file("r.json"), env, "attnbench run", {some_row(test::kTinyDecode)});
  write_results_json(d.file("direct.json"), env, "attnbench run", {some_row(test::kTinyDecode)});
  EXPECT_EQ(test::read_file(d.file("r.json")), test::read_file(d.file("direct.json"))) << "the same bytes";
  EXPECT_EQ(read_json_environment(d.file("r.json"), "--resume"), env) << "in file order";
  EXPECT_THROW(write_sweep_json("/dev/full", env, "x", {}), WriteError);
  EXPECT_THROW(write_sweep_json(d.file("no/such/dir.json"), env, "x", {}), WriteError);
  test::write_file(d.file("cut.json"), test::read_file(d.file("r.json")).substr(0, 40));
  EXPECT_THROW(read_json_environment(d.file("cut.json"), "--resume"), InputError);
  // Nested 100,000 deep (the parser recursed once per level: a stack overflow, exit 139): one clear error.
  test::write_file(d.file("deep.json"), std::string(100000, '[') + std::string(100000, ']'));
  try {
    read_json_environment(d.file("deep.json"), "--resume");
    ADD_FAILURE() << "a JSON file nested 100,000 deep was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--resume " + d.file("deep.json") + ": JSON nested deeper than 64 levels"),
              std::string::npos)
        << e.what();
  }
  for (const auto& e : std::filesystem::directory_iterator(d.path()))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << "a temporary file stayed";
}

TEST(SweepFiles, OneLockPerResultsFile) {
  test::TempDir d;
  const SweepFiles f = sweep_files(d.file("r.csv"), "", "", "", false);
  {
    const SweepLock first(f);
    try {
      const SweepLock second(f);
      FAIL() << "two writers";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), "--out " + f.csv + ": another attnbench run (pid " +
                                           std::to_string(::getpid()) + ") is writing it");
    }
  }
  EXPECT_NO_THROW(SweepLock again(f));
  const SweepFiles special{"/dev/null", d.file("j.json")};  // a device holds no results: not locked
  const SweepLock a(special);
  EXPECT_FALSE(std::filesystem::exists("/dev/null.lock"));
}

}  // namespace
}  // namespace attnbench
