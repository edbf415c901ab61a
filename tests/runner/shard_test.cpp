// Sharding a sweep (runner/shard.hpp): --shard K/N, the launchers' variables (torchrun, Open MPI, Slurm, a Slurm
// job array) and their garbage, the cost-balanced split of a real config's cases, the rank's files and GPU.
#include "runner/shard.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>

#include "app/cli.hpp"
#include "core/errors.hpp"
#include "device/device_factory.hpp"

namespace attnbench {
namespace {

using ::testing::HasSubstr;
using Vars = std::map<std::string, std::string>;

EnvLookup lookup(const Vars& vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// The InputError message of `f`, "" when it does not throw one.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Shard, ParsesKOfN) {
  const ShardSpec s = parse_shard_option("3/4");
  EXPECT_EQ(s.index, 3);
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(s.source, "--shard");
  EXPECT_TRUE(s.sharded());
  EXPECT_TRUE(parse_shard_option("0/1").sharded());  // explicit: files get .rank0-of-1, merge takes them
  for (const std::string bad : {"4/4", "1/0", "-1/2", "a/b", "01/2", "1/02", "1", "1/2/3", "", "/2", "1/", " 1/2",
                                "1/2 ", "+1/2", "0/65537", "99999999999/2"}) {
    const std::string e = error_of([&] { parse_shard_option(bad); });
    EXPECT_THAT(e, HasSubstr("--shard")) << "'" << bad << "'";
  }
  EXPECT_THAT(error_of([] { parse_shard_option("2/2"); }), HasSubstr("0/2 to 1/2"));
}

TEST(Shard, NoLauncherNoShard) {
  EXPECT_FALSE(shard_from_environment(lookup({})).has_value());
  EXPECT_FALSE(shard_from_environment(lookup({{"CUDA_VISIBLE_DEVICES", "0"}, {"HOME", "/root"}})).has_value());
  // A Slurm batch script outside srun: SLURM_PROCID without SLURM_NTASKS is no launch.
  EXPECT_FALSE(shard_from_environment(lookup({{"SLURM_PROCID", "0"}, {"SLURM_JOB_ID", "7"}})).has_value());
  const ShardSpec s = resolve_shard("", lookup({}));
  EXPECT_EQ(s.count, 1);
  EXPECT_FALSE(s.sharded());
}

TEST(Shard, ReadsEveryLauncher) {
  struct Expect {
    Vars vars;
    int index, count, local;
    std::string source;
  };
  const std::vector<Expect> cases = {
      {{{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}}, 3, 4, 1, "torchrun"},
      {{{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "5"}}, 5, 8, 5, "open mpi"},
      {{{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "0"}}, 0, 2, 0, "slurm"},
      {{{"SLURM_ARRAY_TASK_ID", "6"}, {"SLURM_ARRAY_TASK_MIN", "4"}, {"SLURM_ARRAY_TASK_MAX", "7"},
        {"SLURM_ARRAY_TASK_COUNT", "4"}},
       2, 4, 0, "slurm array"},
      // sbatch sets SLURM_NTASKS=1 and SLURM_ARRAY_TASK_STEP=1 in an array job's batch step
      {{{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_MAX", "1"},
        {"SLURM_ARRAY_TASK_COUNT", "2"}, {"SLURM_ARRAY_TASK_STEP", "1"}, {"SLURM_NTASKS", "1"}},
       0, 2, 0, "slurm array"},
      // An array job's batch step has Slurm's step variables of one task.
      {{{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_MAX", "3"},
        {"SLURM_ARRAY_TASK_COUNT", "4"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}, {"SLURM_LOCALID", "0"}},
       3, 4, 0, "slurm array"},
      // The innermost launcher decides: torchrun inside an srun step, mpirun inside a Slurm allocation.
      {{{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"},
        {"SLURM_LOCALID", "0"}},
       1, 2, 1, "torchrun"},
      {{{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
        {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_LOCALID", "0"}, {"SLURM_ARRAY_TASK_ID", "x"}},
       1, 2, 1, "open mpi"},
  };
  for (const Expect& e : cases) {
    const std::optional<ShardSpec> s = shard_from_environment(lookup(e.vars));
    ASSERT_TRUE(s.has_value()) << ::testing::PrintToString(e.vars);
    EXPECT_EQ(s->index, e.index) << ::testing::PrintToString(e.vars);
    EXPECT_EQ(s->count, e.count);
    EXPECT_EQ(s->local_rank, e.local);
    EXPECT_EQ(s->source, e.source);
    EXPECT_TRUE(s->sharded());
  }
  // A world of one process (torchrun --nproc-per-node 1, srun -n 1) is the whole sweep.
  const auto one = shard_from_environment(lookup({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"LOCAL_RANK", "0"}}));
  ASSERT_TRUE(one.has_value());
  EXPECT_FALSE(one->sharded());
}

TEST(Shard, LauncherGarbageNamesTheVariable) {
  const Vars torch = {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}};
  const auto with = [](Vars v, const std::string& k, const std::optional<std::string>& value) {
    if (value)
      v[k] = *value;
    else
      v.erase(k);
    return v;
  };
  struct Bad {
    Vars vars;
    std::string names;
  };
  std::vector<Bad> bad;
  for (const std::string garbage : {"x", "-1", "01", "1 ", " 1", "", "1.0", "0x1", "99999999", "１"})
    for (const std::string var : {"RANK", "WORLD_SIZE", "LOCAL_RANK"}) bad.push_back({with(torch, var, garbage), var});
  bad.push_back({with(torch, "LOCAL_RANK", std::nullopt), "LOCAL_RANK"});
  bad.push_back({with(torch, "WORLD_SIZE", std::nullopt), "WORLD_SIZE"});
  bad.push_back({with(torch, "RANK", std::nullopt), "RANK"});
  bad.push_back({with(torch, "WORLD_SIZE", "0"), "WORLD_SIZE"});
  bad.push_back({with(torch, "RANK", "2"), "RANK=2 is not below WORLD_SIZE=2"});
  bad.push_back({with(with(torch, "RANK", "0"), "LOCAL_RANK", "1"), "LOCAL_RANK=1 is above RANK=0"});
  bad.push_back({{{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}}, "OMPI_COMM_WORLD_LOCAL_RANK"});
  bad.push_back({{{"OMPI_COMM_WORLD_RANK", "4"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}},
                 "OMPI_COMM_WORLD_RANK=4"});
  bad.push_back({{{"SLURM_PROCID", "abc"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "0"}}, "SLURM_PROCID"});
  bad.push_back({{{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}}, "SLURM_LOCALID"});
  bad.push_back({{{"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "0"}}, "SLURM_PROCID"});
  bad.push_back({{{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "0"}}, "SLURM_PROCID=3 is not below SLURM_NTASKS=2"});
  const Vars array = {{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_MAX", "3"},
                      {"SLURM_ARRAY_TASK_COUNT", "4"}};
  bad.push_back({with(array, "SLURM_ARRAY_TASK_STEP", "2"), "SLURM_ARRAY_TASK_STEP"});
  bad.push_back({with(array, "SLURM_ARRAY_TASK_COUNT", "3"), "SLURM_ARRAY_TASK_COUNT"});  // --array=0,2,3
  bad.push_back({with(array, "SLURM_ARRAY_TASK_COUNT", std::nullopt), "SLURM_ARRAY_TASK_COUNT"});
  bad.push_back({with(array, "SLURM_ARRAY_TASK_MIN", std::nullopt), "SLURM_ARRAY_TASK_MIN"});
  bad.push_back({with(array, "SLURM_ARRAY_TASK_ID", "7"), "SLURM_ARRAY_TASK_ID=7"});
  bad.push_back({with(array, "SLURM_ARRAY_TASK_ID", "one"), "SLURM_ARRAY_TASK_ID"});
  bad.push_back({with(array, "SLURM_NTASKS", "2"), "SLURM_NTASKS=2"});
  for (const Bad& b : bad) {
    const std::string e = error_of([&] { shard_from_environment(lookup(b.vars)); });
    EXPECT_THAT(e, HasSubstr(b.names)) << ::testing::PrintToString(b.vars);
    // Every message says what to do instead.
    EXPECT_THAT(e, HasSubstr("--shard")) << e;
  }
  // --shard replaces the launcher: its garbage is not read.
  const ShardSpec s = resolve_shard("1/3", lookup({{"RANK", "x"}}));
  EXPECT_EQ(s.index, 1);
  EXPECT_EQ(s.count, 3);
}

TEST(Shard, FileNames) {
  const ShardSpec s{1, 4, "--shard", -1};
  EXPECT_EQ(shard_file_name("results/x.csv", s), "results/x.rank1-of-4.csv");
  EXPECT_EQ(shard_file_name("x.json", s), "x.rank1-of-4.json");
  EXPECT_EQ(shard_file_name("out", s), "out.rank1-of-4");
  EXPECT_EQ(shard_file_name("a.b/out", s), "a.b/out.rank1-of-4");
  EXPECT_EQ(shard_file_name("a.b/.out", s), "a.b/.out.rank1-of-4");
  EXPECT_EQ(shard_label(s), "rank 1/4");
}

TEST(Shard, DeviceOrdinals) {
  EXPECT_EQ(parse_device_ordinal("cuda:0"), 0);
  EXPECT_EQ(parse_device_ordinal("cuda:12"), 12);
  EXPECT_EQ(parse_device_ordinal("cuda"), -1);
  EXPECT_EQ(parse_device_ordinal("cpu"), -1);
  EXPECT_EQ(parse_device_choice("cuda:3"), DeviceChoice::cuda);
  for (const std::string bad : {"cuda:", "cuda:01", "cuda:-1", "cuda:x", "cuda:1 ", "cuda:99999"}) {
    EXPECT_THAT(error_of([&] { parse_device_choice(bad); }), HasSubstr("--device")) << bad;
  }
  EXPECT_THAT(error_of([] { parse_device_choice("tpu"); }), HasSubstr("cuda:N"));
  EXPECT_THAT(error_of([] { check_cuda_ordinal(2, 2, "--device cuda:2"); }),
              HasSubstr("--device cuda:2: only 2 GPU(s) visible (cuda:0 to cuda:1)"));
  EXPECT_THAT(error_of([] { check_cuda_ordinal(0, 0, "--device cuda:0"); }), HasSubstr("only 0 GPU(s) visible"));
  EXPECT_EQ(error_of([] { check_cuda_ordinal(1, 2, "x"); }), "");

  const Vars none;
  const ShardSpec plain;                       // no launcher
  const ShardSpec torch{1, 2, "torchrun", 1};  // local rank 1
  EXPECT_EQ(rank_cuda_ordinal("cuda", plain, 2, lookup(none)), 0);
  EXPECT_EQ(rank_cuda_ordinal("auto", plain, 2, lookup(none)), 0);
  EXPECT_EQ(rank_cuda_ordinal("cuda", torch, 2, lookup(none)), 1);
  EXPECT_EQ(rank_cuda_ordinal("cuda:0", torch, 2, lookup(none)), 0);  // --device cuda:N wins
  EXPECT_THAT(error_of([&] { rank_cuda_ordinal("cuda:2", torch, 2, lookup(none)); }), HasSubstr("--device cuda:2"));
  // One GPU bound to each rank by the launcher (Slurm --gpus-per-task=1): its only GPU.
  EXPECT_EQ(rank_cuda_ordinal("cuda", torch, 1, lookup({{"CUDA_VISIBLE_DEVICES", "5"}})), 0);
  // Two ranks, one GPU, nothing bound: they would share it.
  const std::string e = error_of([&] { rank_cuda_ordinal("cuda", torch, 1, lookup(none)); });
  EXPECT_THAT(e, HasSubstr("LOCAL_RANK=1"));
  EXPECT_THAT(e, HasSubstr("--device cuda:N"));
  EXPECT_THAT(error_of([&] { rank_cuda_ordinal("cuda", ShardSpec{3, 4, "slurm", 3}, 2, lookup(none)); }),
              HasSubstr("SLURM_LOCALID=3"));
}

TEST(Shard, AssignsByCostNotByCount) {
  // One case as costly as the nine others together: it gets a shard of its own.
  const std::vector<double> costs = {9, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  std::vector<std::string> ids;
  for (int i = 0; i < 10; ++i) ids.push_back("c" + std::to_string(i));
  const std::vector<int> s = assign_shards(costs, ids, 2);
  EXPECT_EQ(std::count(s.begin(), s.end(), s[0]), 1);
  // Equal costs: ties go by case id, so the input order does not change any case's shard.
  const std::vector<double> flat(7, 1.0);
  const std::vector<std::string> a = {"g", "b", "e", "a", "c", "f", "d"};
  std::vector<std::string> b = a;
  std::reverse(b.begin(), b.end());
  const std::vector<int> sa = assign_shards(flat, a, 3), sb = assign_shards(flat, b, 3);
  std::map<std::string, int> ma, mb;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ma[a[i]] = sa[i];
    mb[b[i]] = sb[i];
  }
  EXPECT_EQ(ma, mb);
  EXPECT_EQ(ma["a"], 0);
  EXPECT_EQ(ma["b"], 1);
  EXPECT_EQ(ma["c"], 2);
  EXPECT_EQ(ma["d"], 0);
}

RunPlan plan_of(const std::vector<std::string>& args) {
  ParsedCli cli = parse_cli(args);
  return cli.run.plan;
}

TEST(Shard, CaseCostFollowsTheWork) {
  const RunPlan p = plan_of({"run", "--config", ATTNBENCH_SOURCE_DIR "/configs/pr-evidence.toml"});
  const std::vector<Case> cases = expand_cases(p);
  std::map<std::string, double> cost;
  for (const Case& c : cases) cost[c.id] = case_cost(c, p, false, 3);
  const auto at = [&](const std::string& id) {
    EXPECT_TRUE(cost.count(id)) << id;
    return cost[id];
  };
  // More tokens, more cost; extend's float64 reference outweighs a small decode (since the reference runs
  // over (range, query head) it no longer outweighs a large one: b=64 kv=16384 costs more than b=1 ext=4096).
  EXPECT_LT(at("decode/llama-3.1-8b/L=6/b=1/kv=1024/p=64/bf16"), at("decode/llama-3.1-8b/L=6/b=256/kv=16384/p=64/bf16"));
  EXPECT_LT(at("decode/llama-3.1-8b/L=6/b=1/kv=1024/p=64/bf16"), at("extend/llama-3.1-8b/L=6/b=1/prefix=0/ext=4096/p=64/bf16"));
  EXPECT_LT(at("extend/llama-3.1-8b/L=6/b=1/prefix=0/ext=4096/p=64/bf16"),
            at("extend/llama-3.1-8b/L=6/b=4/prefix=4096/ext=4096/p=64/bf16"));
  EXPECT_LT(at("extend/llama-3.1-70b-tp8/L=6/b=1/prefix=0/ext=4096/p=64/bf16"),
            at("extend/llama-3.1-8b/L=6/b=1/prefix=0/ext=4096/p=64/bf16"));
  // validate has no timed rows; fewer backends, less cost.
  const Case& c = cases.front();
  EXPECT_LT(case_cost(c, p, true, 3), case_cost(c, p, false, 3));
  EXPECT_LT(case_cost(c, p, false, 1), case_cost(c, p, false, 3));
  for (const auto& [id, v] : cost) EXPECT_GT(v, 0) << id;
}

// Every case of configs/pr-evidence.toml in exactly one shard for N = 1..8, and the largest share within
// the bound: at most 1.05 x the ideal max(total / N, costliest case) (no split can beat the ideal) and at most
// total / N + the costliest case (any greedy list schedule).
TEST(Shard, PrEvidenceSplitsExactlyAndEvenly) {
  const RunPlan p = plan_of({"run", "--config", ATTNBENCH_SOURCE_DIR "/configs/pr-evidence.toml"});
  const std::vector<Case> cases = expand_cases(p);
  ASSERT_EQ(cases.size(), 54u);
  std::vector<double> cost;
  for (const Case& c : cases) cost.push_back(case_cost(c, p, false, 3));
  const double total = std::accumulate(cost.begin(), cost.end(), 0.0);
  const double biggest = *std::max_element(cost.begin(), cost.end());
  for (int n = 1; n <= 8; ++n) {
    std::vector<int> seen(cases.size(), 0);
    double worst = 0;
    std::size_t counted = 0;
    for (int k = 0; k < n; ++k) {
      const std::vector<std::size_t> mine = shard_case_indices(cases, p, false, 3, ShardSpec{k, n, "--shard", -1});
      EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));  // sweep order within a shard
      double load = 0;
      for (const std::size_t i : mine) {
        ++seen[i];
        load += cost[i];
      }
      counted += mine.size();
      worst = std::max(worst, load);
      // The same call gives the same share (every rank computes it on its own).
      EXPECT_EQ(mine, shard_case_indices(cases, p, false, 3, ShardSpec{k, n, "torchrun", k}));
    }
    EXPECT_EQ(counted, cases.size()) << "N=" << n;
    for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << cases[i].id << " N=" << n;
    const double ideal = std::max(total / n, biggest);
    std::printf("pr-evidence over %d shard(s): largest share %.1f s of modelled cost, ideal %.1f s (%.3fx)\n", n, worst,
                ideal, worst / ideal);
    EXPECT_LE(worst, 1.05 * ideal) << "N=" << n << " worst " << worst << " ideal " << ideal;
    EXPECT_LE(worst, total / n + biggest) << "N=" << n;
    if (n == 1) {
      EXPECT_DOUBLE_EQ(worst, total);
    }
  }
}

TEST(Shard, RankPlanFilesAndEnvironment) {
  const RunPlan p = plan_of({"run", "--model", "tiny", "--batch", "1,2,3", "--kv-len", "16,32", "--device", "cpu"});
  const std::vector<Case> cases = expand_cases(p);
  ASSERT_EQ(cases.size(), 6u);
  const RankPlan whole = plan_rank(ShardSpec{}, cases, p, false, 3, "x.csv", "");
  EXPECT_EQ(whole.cases.size(), 6u);
  EXPECT_EQ(whole.out, "x.csv");
  EXPECT_TRUE(whole.environment.empty());
  EXPECT_TRUE(whole.label.empty());

  const RankPlan r = plan_rank(ShardSpec{1, 2, "slurm", 1}, cases, p, false, 3, "d/x.csv", "d/y.json");
  EXPECT_EQ(r.out, "d/x.rank1-of-2.csv");
  EXPECT_EQ(r.json, "d/y.rank1-of-2.json");
  EXPECT_EQ(r.label, "rank 1/2");
  std::map<std::string, std::string> env(r.environment.begin(), r.environment.end());
  EXPECT_EQ(env[kShardKey], "1/2");
  EXPECT_EQ(env[kShardSourceKey], "slurm");
  EXPECT_EQ(env[kSweepCaseCountKey], "6");
  std::vector<std::string> ids;
  for (const Case& c : cases) ids.push_back(c.id);
  EXPECT_EQ(env[kSweepCaseIdsHashKey], case_ids_hash(ids));
  EXPECT_THAT(env[kShardCasesKey], HasSubstr(r.cases.front().id));
  EXPECT_FALSE(r.cases.empty());

  EXPECT_THAT(error_of([&] { plan_rank(ShardSpec{0, 2, "torchrun", 0}, cases, p, false, 3, "", ""); }),
              HasSubstr("--out"));
  EXPECT_THAT(error_of([&] { plan_rank(ShardSpec{0, 2, "--shard", -1}, cases, p, false, 3, "-", ""); }),
              HasSubstr("--out -"));
  EXPECT_THAT(error_of([&] { plan_rank(ShardSpec{0, 2, "--shard", -1}, cases, p, false, 3, "x.csv", "-"); }),
              HasSubstr("--json -"));
  // --list-cases writes nothing: no --out needed.
  EXPECT_EQ(plan_rank(ShardSpec{0, 2, "--shard", -1}, cases, p, false, 3, "", "", true).cases.size() +
                plan_rank(ShardSpec{1, 2, "--shard", -1}, cases, p, false, 3, "", "", true).cases.size(),
            6u);
}

}  // namespace
}  // namespace attnbench
