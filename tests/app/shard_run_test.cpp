// Sharded sweeps through the binary: two CPU ranks (one by --shard, one by torchrun's variables), merged, equal
// to the one-process run in case set and every non-timing column; report and compare take the merged file;
// merge's refusals and the launcher garbage exit 2 naming the culprit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "report/results_io.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using test::RunResult;
using test::TempDir;

// A small sweep: 8 cases of the tiny presets in three modes, two backends, CPU, seconds.
const std::string kSweep =
    " --model tiny,tiny-swa --mode decode,extend,verify --backend trtllm_mha,flashinfer --batch 1,2 --kv-len 24"
    " --extend-batch 1 --prefix-len 8 --extend-len 16 --verify-batch 2 --page-size 16 --device cpu --warmup 0"
    " --min-samples 2 --max-samples 3 --time-budget 0.05 -q";

// `env` (VAR=value ...) before the binary; no launcher variable leaks in from the test's environment.
RunResult attnbench(const std::string& args, const TempDir& dir, const std::string& env = "") {
  const std::string clean =
      "env -u RANK -u WORLD_SIZE -u LOCAL_RANK -u SLURM_PROCID -u SLURM_NTASKS -u SLURM_LOCALID "
      "-u SLURM_ARRAY_TASK_ID -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE -u OMPI_COMM_WORLD_LOCAL_RANK ";
  const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  const std::string cmd = clean + env + " '" + ATTNBENCH_BINARY + "' " + args + " >'" + out + "' 2>'" + err + "'";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, test::read_file(out), test::read_file(err)};
}

// Every column but those of timing (and the note, which carries the sampler's stop reason and the load).
std::vector<std::string> non_timing(const ResultRow& r) {
  const std::vector<ResultCell> cells = result_row_cells(r);
  const std::vector<std::string>& cols = results_csv_columns();
  const std::set<std::string> timing = {"step_median_us", "step_p10_us", "step_p90_us", "step_min_us", "step_max_us",
                                        "step_spread_pct", "samples", "metadata_median_us", "forward_median_us",
                                        "tflops", "tb_per_s", "bw_fraction", "note"};
  std::vector<std::string> out;
  for (std::size_t c = 0; c < cols.size(); ++c) {
    if (timing.count(cols[c])) continue;
    out.push_back(cols[c] + "=" + std::visit([](const auto& v) -> std::string {
                    using T = std::decay_t<decltype(v)>;
                    if constexpr (std::is_same_v<T, std::monostate>) return "";
                    else if constexpr (std::is_same_v<T, std::string>) return v;
                    else return std::to_string(v);
                  }, cells[c]));
  }
  return out;
}

class ShardRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    const RunResult whole = attnbench("run" + kSweep + " --out " + dir_->file("whole.csv"), *dir_);
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    const RunResult r0 = attnbench("run" + kSweep + " --shard 0/2 --out " + dir_->file("s.csv"), *dir_);
    ASSERT_EQ(r0.exit_code, 0) << r0.err;
    // Rank 1 as torchrun starts it: no --shard, its variables in the environment.
    const RunResult r1 = attnbench("run" + kSweep + " --out " + dir_->file("s.csv"), *dir_,
                                   "RANK=1 WORLD_SIZE=2 LOCAL_RANK=1");
    ASSERT_EQ(r1.exit_code, 0) << r1.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static TempDir* dir_;
};
TempDir* ShardRun::dir_ = nullptr;

TEST_F(ShardRun, EachRankWritesItsOwnFiles) {
  for (const char* f : {"s.rank0-of-2.csv", "s.rank0-of-2.json", "s.rank1-of-2.csv", "s.rank1-of-2.json"})
    EXPECT_TRUE(fs::exists(dir_->file(f))) << f;
  EXPECT_FALSE(fs::exists(dir_->file("s.csv")));
  const ResultSet r1 = load_result_set(dir_->file("s.rank1-of-2.json"));
  std::map<std::string, std::string> env(r1.environment.begin(), r1.environment.end());
  EXPECT_EQ(env["shard"], "1/2");
  EXPECT_EQ(env["shard_source"], "torchrun");
  EXPECT_EQ(env["sweep_case_count"], "8");
  // The run's own wall time and both bandwidth probes (the read one is bw_fraction's denominator).
  for (const char* key : {"wall_seconds", "read_bandwidth_bytes_per_s", "copy_bandwidth_bytes_per_s"}) {
    ASSERT_TRUE(env.count(key)) << key;
    EXPECT_GT(std::atof(env[key].c_str()), 0.0) << key;
  }
  for (const ResultRow& r : read_results_csv(dir_->file("s.rank1-of-2.csv"))) {
    if (r.bw_fraction && r.tb_per_s) {  // bytes per second over the read probe's figure
      EXPECT_NEAR(*r.bw_fraction, *r.tb_per_s * 1e12 / std::atof(env["read_bandwidth_bytes_per_s"].c_str()),
                  1e-6 * *r.bw_fraction);
    }
  }
  // Each rank ran part of the sweep, not all of it, and its repro commands do not name the shard.
  const std::vector<ResultRow> a = read_results_csv(dir_->file("s.rank0-of-2.csv"));
  const std::vector<ResultRow> b = read_results_csv(dir_->file("s.rank1-of-2.csv"));
  EXPECT_GT(a.size(), 0u);
  EXPECT_GT(b.size(), 0u);
  EXPECT_EQ(a.size() + b.size(), read_results_csv(dir_->file("whole.csv")).size());
  for (const ResultRow& r : a) EXPECT_THAT(r.repro, ::testing::Not(HasSubstr("--shard")));
}

TEST_F(ShardRun, MergedEqualsTheOneProcessRun) {
  TempDir d;
  const RunResult m = attnbench("merge " + dir_->file("s.rank1-of-2.json") + " " + dir_->file("s.rank0-of-2.csv") +
                                    " --out " + d.file("merged.csv"),
                                d);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_THAT(m.err, HasSubstr("2 shard(s), 8 case(s)"));
  const std::vector<ResultRow> whole = read_results_csv(dir_->file("whole.csv"));
  const std::vector<ResultRow> merged = read_results_csv(d.file("merged.csv"));
  ASSERT_EQ(merged.size(), whole.size());
  for (std::size_t i = 0; i < whole.size(); ++i)  // the same rows in the same (sweep) order
    EXPECT_EQ(non_timing(merged[i]), non_timing(whole[i])) << i;
  const ResultSet mj = load_result_set(d.file("merged.json"));
  EXPECT_EQ(mj.rows.size(), whole.size());
  // The raw samples came along: as many timed rows as in the one-process run, each with its samples.
  const ResultSet wj = load_result_set(dir_->file("whole.json"));
  EXPECT_GT(wj.samples.size(), 0u);
  EXPECT_EQ(mj.samples.size(), wj.samples.size());
  for (const auto& [k, v] : mj.samples) EXPECT_TRUE(wj.samples.count(k)) << k;
  std::map<std::string, std::string> env(mj.environment.begin(), mj.environment.end());
  EXPECT_EQ(env["merged_shards"], "2");
  {  // the longest rank's wall time (they ran side by side), once
    std::map<std::string, std::string> e0, e1;
    for (const auto& [k, v] : load_result_set(dir_->file("s.rank0-of-2.json")).environment) e0[k] = v;
    for (const auto& [k, v] : load_result_set(dir_->file("s.rank1-of-2.json")).environment) e1[k] = v;
    EXPECT_DOUBLE_EQ(std::atof(env["wall_seconds"].c_str()),
                     std::max(std::atof(e0["wall_seconds"].c_str()), std::atof(e1["wall_seconds"].c_str())));
    EXPECT_EQ(std::count_if(mj.environment.begin(), mj.environment.end(),
                            [](const auto& kv) { return kv.first == "wall_seconds"; }),
              1);
  }
  EXPECT_FALSE(env.count("shard"));
  EXPECT_THAT(mj.command, ::testing::Not(HasSubstr("--shard")));

  // report and compare take the merged file like any other.
  const RunResult rep = attnbench("report " + d.file("merged.json"), d);
  EXPECT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_THAT(rep.out, HasSubstr("trtllm_mha"));
  const RunResult cmp = attnbench("compare " + dir_->file("whole.json") + " " + d.file("merged.json") +
                                      " --max-slowdown 1000 --format json",
                                  d);
  EXPECT_EQ(cmp.exit_code, 0) << cmp.err << cmp.out;
  const nlohmann::json cj = nlohmann::json::parse(cmp.out);
  EXPECT_EQ(cj["summary"]["pairs"], whole.size());  // every row paired: the same keys on both sides
  EXPECT_EQ(cj["summary"]["missing_in_new"], 0);
  EXPECT_EQ(cj["summary"]["only_in_new"], 0);
  EXPECT_EQ(cj["summary"]["correctness_regressions"], 0);

  // --out - / --json -: stdout.
  const RunResult so = attnbench("merge " + dir_->file("s.rank0-of-2.json") + " " + dir_->file("s.rank1-of-2.json") + " --out -", d);
  ASSERT_EQ(so.exit_code, 0) << so.err;
  EXPECT_EQ(std::count(so.out.begin(), so.out.end(), '\n'), static_cast<long>(whole.size()) + 1);
  const RunResult sj = attnbench("merge " + dir_->file("s.rank0-of-2.json") + " " + dir_->file("s.rank1-of-2.json") +
                                     " --out " + d.file("m2.csv") + " --json -",
                                 d);
  ASSERT_EQ(sj.exit_code, 0) << sj.err;
  EXPECT_EQ(nlohmann::json::parse(sj.out)["rows"].size(), whole.size());
}

TEST_F(ShardRun, MergeRefusals) {
  TempDir d;
  const std::string s0 = dir_->file("s.rank0-of-2.json"), s1 = dir_->file("s.rank1-of-2.json");
  struct Bad {
    std::string args, says;
  };
  // A shard run with other options (another seed) and a shard whose rows were cut short.
  ASSERT_EQ(attnbench("run" + kSweep + " --seed 2 --shard 1/2 --out " + d.file("o.csv"), d).exit_code, 0);
  nlohmann::json cut = nlohmann::json::parse(test::read_file(s1));
  cut["rows"].erase(cut["rows"].size() - 1);
  test::write_file(d.file("cut.json"), cut.dump());
  // A shard row whose batch contradicts its case_id (an edited report).
  nlohmann::json odd = nlohmann::json::parse(test::read_file(s1));
  odd["rows"][0]["batch"] = odd["rows"][0]["batch"].get<int>() + 10;
  test::write_file(d.file("odd.json"), odd.dump());
  const std::vector<Bad> bad = {
      {s1 + " --out " + d.file("m.csv"), "1 of 2 shard(s) missing: 0/2"},
      {s0 + " " + s0 + " " + s1 + " --out " + d.file("m.csv"), "shard 0/2 is given twice"},
      {s0 + " " + dir_->file("whole.json") + " --out " + d.file("m.csv"), "whole.json is not a shard"},
      {s0 + " " + d.file("o.rank1-of-2.json") + " --out " + d.file("m.csv"), "--seed 2 (vs 1)"},
      {s0 + " " + d.file("cut.json") + " --out " + d.file("m.csv"), "is incomplete"},
      {s0 + " " + d.file("odd.json") + " --out " + d.file("m.csv"), "odd.json: row 0: batch '"},
      {s0 + " " + d.file("odd.json") + " --out " + d.file("m.csv"), "' contradicts case_id '"},
      {s0 + " " + s1 + " --out " + dir_->file("s.rank0-of-2.csv"), "--out"},  // a shard's own CSV
      {s0 + " " + s1 + " --out " + d.file("m.csv") + " --json " + s1, "--json"},
      {s0 + " " + s1 + " --out - --json -", "only one of them"},
      {s0 + " " + s1, "--out"},
      {d.file("none.csv") + " " + s1 + " --out " + d.file("m.csv"), "JSON report"},
  };
  const std::string before0 = test::read_file(s0), before1 = test::read_file(s1);
  for (const Bad& b : bad) {
    const RunResult r = attnbench("merge " + b.args, d);
    EXPECT_EQ(r.exit_code, 2) << b.args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(b.says)) << b.args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;  // one line
  }
  EXPECT_FALSE(fs::exists(d.file("m.csv")));
  EXPECT_EQ(test::read_file(s0), before0);  // inputs untouched
  EXPECT_EQ(test::read_file(s1), before1);
}

TEST_F(ShardRun, ListCasesShowsTheShare) {
  TempDir d;
  const RunResult a = attnbench("run" + kSweep + " --list-cases --shard 0/2", d);
  const RunResult b = attnbench("run" + kSweep + " --list-cases", d, "SLURM_PROCID=1 SLURM_NTASKS=2 SLURM_LOCALID=0");
  const RunResult all = attnbench("run" + kSweep + " --list-cases", d);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_THAT(b.err, HasSubstr("rank 1/2 (slurm)"));
  std::multiset<std::string> ids;
  for (const std::string* out : {&a.out, &b.out}) {
    std::istringstream in(*out);
    for (std::string l; std::getline(in, l);) ids.insert(l);
  }
  std::multiset<std::string> expect;
  std::istringstream in(all.out);
  for (std::string l; std::getline(in, l);) expect.insert(l);
  EXPECT_EQ(ids, expect);
  EXPECT_EQ(expect.size(), 8u);
}

TEST(ShardCli, LauncherGarbageAndMissingOutAreBadInput) {
  TempDir d;
  struct Bad {
    std::string env, args, says;
  };
  const std::vector<Bad> bad = {
      {"RANK=x WORLD_SIZE=2 LOCAL_RANK=0", " --out " + d.file("x.csv"), "RANK='x'"},
      {"RANK=2 WORLD_SIZE=2 LOCAL_RANK=0", " --out " + d.file("x.csv"), "RANK=2 is not below WORLD_SIZE=2"},
      {"OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2", " --out " + d.file("x.csv"), "OMPI_COMM_WORLD_LOCAL_RANK"},
      {"SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=3 SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_TASK_STEP=2",
       " --out " + d.file("x.csv"), "SLURM_ARRAY_TASK_STEP"},
      {"RANK=0 WORLD_SIZE=2 LOCAL_RANK=0", "", "--out"},  // the default --out differs between ranks
      {"", " --shard 0/2 --out -", "--out -"},
      {"", " --shard 2/2 --out " + d.file("x.csv"), "--shard"},
      {"", " --device cuda:x --out " + d.file("x.csv"), "--device"},
  };
  for (const Bad& b : bad) {
    const RunResult r = attnbench("validate" + kSweep + b.args, d, b.env);
    EXPECT_EQ(r.exit_code, 2) << b.env << b.args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(b.says)) << b.env << b.args;
  }
  // Nothing was written.
  for (const auto& e : fs::directory_iterator(d.path()))
    EXPECT_THAT(e.path().filename().string(), ::testing::StartsWith("std")) << e.path();
}

}  // namespace
}  // namespace attnbench
