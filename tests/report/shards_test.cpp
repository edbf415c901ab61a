// attnbench merge (report/shards.hpp): shards of one sweep put back in sweep order, and every refusal: not a
// shard, another split, a shard twice or missing, other options / commit / SGLang version / case list, a case in
// two shards, rows of a case not the shard's, an incomplete shard.
#include "report/shards.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/errors.hpp"
#include "support/test_util.hpp"
#include "runner/shard.hpp"

namespace attnbench {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kIds = {"decode/a", "decode/b", "extend/c", "verify/d", "verify/e"};
const std::vector<std::string> kBackends = {"flashinfer", "trtllm_mha"};

ResultRow row(const std::string& id, const std::string& backend, const std::string& timing = "eager") {
  ResultRow r;
  r.case_id = id;
  r.backend = backend;
  r.timing = timing;
  r.mode = "decode";
  r.status = RowStatus::ok;
  r.samples_us = {1.0, 2.0};
  return r;
}

// Shard k of n holding `indices` of kIds, with rows of every backend; `options` the options text.
ResultSet shard(int k, int n, const std::vector<std::size_t>& indices,
                const std::string& options = "subcommand=run; --backend=flashinfer,trtllm_mha; --batch=1") {
  std::vector<Case> cases;
  for (const std::string& id : kIds) {
    Case c;
    c.id = id;
    cases.push_back(c);
  }
  ResultSet s;
  s.environment = {{"attnbench_version", "0.1.0"},
                   {"git_commit", "abc1234"},
                   {"gpu_name", "NVIDIA H200"},
                   {"gpu_uuid", "GPU-" + std::to_string(k)},
                   {"device_ordinal", std::to_string(k)},
                   {"sglang_version", "0.5.23"},
                   {"arch", "sm90"},
                   // what runner/sweep_options.cpp's options_fingerprint writes: the text's 64-bit FNV-1a
                   {"options_fingerprint", "v1:" + case_ids_hash({options}).substr(8)},
                   {"options", options}};
  for (auto& kv : shard_environment(ShardSpec{k, n, "torchrun", k}, cases, indices)) s.environment.push_back(kv);
  s.command = "attnbench run --config c.toml --shard " + std::to_string(k) + "/" + std::to_string(n) + " --out x.csv";
  for (const std::size_t i : indices)
    for (const std::string& b : kBackends) {
      s.rows.push_back(row(kIds[i], b));
      s.samples[sample_key(s.rows.back())] = s.rows.back().samples_us;
    }
  return s;
}

std::string merge_error(const std::vector<std::pair<std::string, ResultSet>>& in) {
  std::vector<std::string> w;
  try {
    merge_shard_sets(in, w);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void set_env(ResultSet& s, const std::string& key, const std::string& value) {
  for (auto& [k, v] : s.environment)
    if (k == key) v = value;
}

// A shard that lost graph rows is incomplete where the runner writes them: --timing names graph, a CUDA device
// (gpu_name), a case that is not extend, beside an eager row that is not skipped.
TEST(Merge, GraphRowsAreRequiredWhereTheRunnerWritesThem) {
  const std::string opts = "subcommand=run; --backend=flashinfer,trtllm_mha; --timing=eager,graph; --batch=1";
  // Shard k holding `indices`, extend/c an extend case, and a graph row beside each eager row that is not extend.
  const auto with_graphs = [&](int k, const std::vector<std::size_t>& indices) {
    ResultSet s = shard(k, 2, indices, opts);
    std::vector<ResultRow> rows;
    for (ResultRow r : s.rows) {
      if (r.case_id == "extend/c") r.mode = "extend";
      rows.push_back(r);
      if (r.mode == "extend") continue;
      r.timing = "graph";
      s.samples[sample_key(r)] = r.samples_us;
      rows.push_back(r);
    }
    s.rows = rows;
    return s;
  };
  const ResultSet a = with_graphs(0, {0, 2}), b = with_graphs(1, {1, 3, 4});
  std::vector<std::string> w;
  EXPECT_EQ(merge_shard_sets({{"a.json", a}, {"b.json", b}}, w).rows.size(), 2u * 2u * 4u + 2u);

  // One backend's graph row of one case gone: incomplete.
  ResultSet cut = b;
  std::erase_if(cut.rows, [](const ResultRow& r) { return r.case_id == "verify/d" && r.backend == "trtllm_mha" && r.timing == "graph"; });
  EXPECT_THAT(merge_error({{"a.json", a}, {"b.json", cut}}),
              HasSubstr("b.json (shard 1/2) is incomplete: 1 of its 3 case(s) lack rows (verify/d has no graph row of trtllm_mha)"));
  // Every graph row of the shard gone: incomplete too (not read as "a device without graphs").
  ResultSet none = b;
  std::erase_if(none.rows, [](const ResultRow& r) { return r.timing == "graph"; });
  EXPECT_THAT(merge_error({{"a.json", a}, {"b.json", none}}), HasSubstr("3 of its 3 case(s) lack rows"));
  // A graph row without its eager row.
  ResultSet eager_gone = b;
  std::erase_if(eager_gone.rows, [](const ResultRow& r) { return r.case_id == "decode/b" && r.backend == "flashinfer" && r.timing == "eager"; });
  EXPECT_THAT(merge_error({{"a.json", a}, {"b.json", eager_gone}}), HasSubstr("decode/b has no eager row of flashinfer"));
  // A case skipped whole (memory cap, sticky device error) has eager rows only; a CPU sweep has no graph rows.
  ResultSet skipped = none;
  for (ResultRow& r : skipped.rows) {
    r.status = RowStatus::skipped;
    r.note = "capped by memory: the case needs about 243.01 GiB";
  }
  EXPECT_EQ(merge_error({{"a.json", a}, {"b.json", skipped}}), "");
  ResultSet cpu_a = shard(0, 2, {0, 2}, opts), cpu_b = shard(1, 2, {1, 3, 4}, opts);
  for (ResultSet* s : {&cpu_a, &cpu_b})
    std::erase_if(s->environment, [](const auto& kv) { return kv.first == "gpu_name" || kv.first == "gpu_uuid"; });
  EXPECT_EQ(merge_error({{"a.json", cpu_a}, {"b.json", cpu_b}}), "");
}

TEST(Merge, PutsTheShardsBackInSweepOrder) {
  // Shard 0 holds cases 1, 3; shard 1 holds 0, 2, 4; given in reverse.
  std::vector<std::string> warnings;
  const ResultSet m = merge_shard_sets({{"r1.json", shard(1, 2, {0, 2, 4})}, {"r0.json", shard(0, 2, {1, 3})}}, warnings);
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(m.rows.size(), 10u);
  for (std::size_t i = 0; i < kIds.size(); ++i) {
    EXPECT_EQ(m.rows[2 * i].case_id, kIds[i]);
    EXPECT_EQ(m.rows[2 * i].backend, "flashinfer");
    EXPECT_EQ(m.rows[2 * i + 1].backend, "trtllm_mha");
  }
  EXPECT_EQ(m.samples.size(), 10u);
  EXPECT_EQ(m.command, "attnbench run --config c.toml --out x.csv");
  std::map<std::string, std::string> env(m.environment.begin(), m.environment.end());
  EXPECT_FALSE(env.count(kShardKey));
  EXPECT_FALSE(env.count(kShardCasesKey));
  EXPECT_FALSE(env.count(kShardSourceKey));
  EXPECT_EQ(env[kSweepCaseCountKey], "5");
  EXPECT_EQ(env[kMergedShardsKey], "2");
  EXPECT_EQ(env[kMergedDevicesKey], "0/2: NVIDIA H200 GPU-0 (cuda:0); 1/2: NVIDIA H200 GPU-1 (cuda:1)");
  EXPECT_EQ(env["git_commit"], "abc1234");
  // One shard (--shard 0/1) merges too; an empty shard (more ranks than cases) is fine.
  EXPECT_EQ(merge_shard_sets({{"a", shard(0, 1, {0, 1, 2, 3, 4})}}, warnings).rows.size(), 10u);
  EXPECT_EQ(merge_shard_sets({{"a", shard(0, 3, {0, 1, 2, 3, 4})}, {"b", shard(1, 3, {})}, {"c", shard(2, 3, {})}}, warnings)
                .rows.size(),
            10u);
}

TEST(Merge, WarnsAboutOtherGpus) {
  ResultSet b = shard(1, 2, {0, 2, 4});
  set_env(b, "gpu_name", "NVIDIA H100");
  std::vector<std::string> warnings;
  merge_shard_sets({{"a.json", shard(0, 2, {1, 3})}, {"b.json", b}}, warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("NVIDIA H100"));
}

TEST(Merge, RefusesWhatIsNotOneCompleteSweep) {
  const ResultSet s0 = shard(0, 2, {1, 3}), s1 = shard(1, 2, {0, 2, 4});
  struct Bad {
    std::vector<std::pair<std::string, ResultSet>> in;
    std::vector<std::string> says;
  };
  std::vector<Bad> bad;
  {  // a run without --shard
    ResultSet plain = s0;
    plain.environment.erase(std::remove_if(plain.environment.begin(), plain.environment.end(),
                                           [](const auto& kv) { return kv.first == kShardKey; }),
                            plain.environment.end());
    bad.push_back({{{"plain.json", plain}, {"b.json", s1}}, {"plain.json is not a shard"}});
  }
  bad.push_back({{{"a.json", s0}, {"c.json", shard(1, 3, {0, 2, 4})}}, {"c.json (shard 1/3)", "another split"}});
  bad.push_back({{{"a.json", s0}, {"a2.json", s0}, {"b.json", s1}}, {"shard 0/2 is given twice: a.json and a2.json"}});
  bad.push_back({{{"b.json", s1}}, {"1 of 2 shard(s) missing: 0/2"}});
  bad.push_back({{{"a.json", s0}, {"b.json", shard(1, 2, {0, 2, 4}, "subcommand=run; --backend=flashinfer,trtllm_mha; --batch=2")}},
                 {"b.json (shard 1/2) was run with other options than a.json (shard 0/2)", "--batch 2 (vs 1)"}});
  {
    ResultSet b = s1;
    set_env(b, "git_commit", "def5678");
    bad.push_back({{{"a.json", s0}, {"b.json", b}}, {"b.json (shard 1/2) has git_commit def5678", "abc1234"}});
  }
  {
    ResultSet b = s1;
    set_env(b, "sglang_version", "30cb848d4");
    bad.push_back({{{"a.json", s0}, {"b.json", b}}, {"sglang_version 30cb848d4"}});
  }
  {
    ResultSet b = s1;
    set_env(b, kSweepCaseIdsHashKey, "fnv1a64:0000000000000000");
    bad.push_back({{{"a.json", s0}, {"b.json", b}}, {"sweep_case_ids_hash", "different case lists"}});
  }
  {
    ResultSet b = s1;
    set_env(b, "options_fingerprint", "");  // present but other: and no options text differs
    bad.push_back({{{"a.json", s0}, {"b.json", b}}, {"other options", "fingerprints"}});
  }
  {  // the options text edited under its fingerprint (both shards alike, so the fingerprints still agree)
    ResultSet a = s0, b = s1;
    set_env(a, "options", "subcommand=run; --batch=1,2,4");
    set_env(b, "options", "subcommand=run; --batch=1,2,4");
    bad.push_back({{{"a.json", a}, {"b.json", b}}, {"a.json (shard 0/2): its options text does not hash to its options_fingerprint"}});
  }
  {  // another modelled architecture
    ResultSet b = s1;
    set_env(b, "arch", "sm100");
    bad.push_back({{{"a.json", s0}, {"b.json", b}}, {"arch sm100", "one modelled architecture"}});
  }
  {  // a row of another SGLang release than its shard's environment
    ResultSet b = s1;
    b.rows.front().sglang_version = "30cb848d4";
    bad.push_back({{{"a.json", s0}, {"b.json", b}}, {"of SGLang 30cb848d4 under an environment of SGLang 0.5.23"}});
  }
  // Case 1 in both shards (and so case 0 in neither, or a duplicate).
  bad.push_back({{{"a.json", s0}, {"b.json", shard(1, 2, {0, 1, 2, 4})}}, {"case decode/b is in two shards"}});
  bad.push_back({{{"a.json", s0}, {"b.json", shard(1, 2, {2, 4})}}, {"case 0 of the sweep's 5 is in no shard"}});
  {  // rows of another shard's case
    ResultSet b = s1;
    b.rows.push_back(row("decode/b", "flashinfer", "graph"));
    bad.push_back({{{"a.json", s0}, {"b.json", b}}, {"b.json (shard 1/2) has rows of case decode/b", "not one of its cases"}});
  }
  {  // interrupted: the last case has no trtllm_mha row
    ResultSet b = s1;
    b.rows.pop_back();
    bad.push_back({{{"a.json", s0}, {"b.json", b}}, {"b.json (shard 1/2) is incomplete: 1 of its 3 case(s)", "verify/e has no row of trtllm_mha", "--resume"}});
  }
  {  // a row twice
    ResultSet b = s1;
    b.rows.push_back(b.rows.front());
    bad.push_back({{{"a.json", s0}, {"b.json", b}}, {"two rows"}});
  }
  {  // garbage in the case list
    ResultSet b = s1;
    set_env(b, kShardCasesKey, "[[0, \"decode/a\"], [9, \"x\"]]");
    bad.push_back({{{"a.json", s0}, {"b.json", b}}, {"shard_cases holds [9,\"x\"]"}});
    ResultSet c = s1;
    set_env(c, kShardCasesKey, "[[0, ");
    bad.push_back({{{"a.json", s0}, {"c.json", c}}, {"shard_cases is not JSON"}});
    ResultSet deep = s1;  // nested past the limit: refused before the (recursive) parser sees it
    set_env(deep, kShardCasesKey, std::string(100000, '[') + std::string(100000, ']'));
    bad.push_back({{{"a.json", s0}, {"deep.json", deep}}, {"deep.json (shard 1/2): shard_cases: JSON nested deeper than 64 levels"}});
    ResultSet d = s1;
    set_env(d, kShardKey, "2/2");
    bad.push_back({{{"a.json", s0}, {"d.json", d}}, {"d.json: shard", "K >= N"}});
  }
  {  // the ids of a case list that adds up in count but not in names
    ResultSet b = s1;
    set_env(b, kShardCasesKey, "[[0, \"decode/a\"], [2, \"extend/X\"], [4, \"verify/e\"]]");
    bad.push_back({{{"a.json", s0}, {"b.json", b}}, {"do not add up"}});
  }
  for (const Bad& b : bad) {
    const std::string e = merge_error(b.in);
    ASSERT_FALSE(e.empty()) << b.says.front();
    EXPECT_THAT(e, HasSubstr("merge")) << e;
    for (const std::string& s : b.says) EXPECT_THAT(e, HasSubstr(s));
  }
}

// The committed two-GPU sweep (results/h200-x2/: torchrun, two H200s) merges, through the command, to the
// committed merged CSV and JSON report byte for byte: the completeness rule
// (missing_rows_of_case) accepts the real shards, graph rows and the memory-capped skips included.
TEST(Merge, CommittedTwoGpuShardsMergeToTheCommittedFiles) {
  const std::string dir = std::string(ATTNBENCH_SOURCE_DIR) + "/results/h200-x2/";
  test::TempDir d;
  MergeOptions o;
  o.shards = {dir + "pr-evidence.rank1-of-2.json", dir + "pr-evidence.rank0-of-2.csv"};
  o.out = d.file("merged.csv");
  std::ostringstream out;
  EXPECT_EQ(run_merge_command(o, out), 0);
  EXPECT_EQ(test::read_file(d.file("merged.csv")), test::read_file(dir + "pr-evidence.csv"));
  EXPECT_EQ(test::read_file(d.file("merged.json")), test::read_file(dir + "pr-evidence.json"));
  const ResultSet merged = load_result_set(d.file("merged.json"));
  EXPECT_EQ(merged.rows.size(), 285u);
}

TEST(Merge, CaseIdsHashIsOrdered) {
  EXPECT_EQ(case_ids_hash({"a", "b"}), case_ids_hash({"a", "b"}));
  EXPECT_NE(case_ids_hash({"a", "b"}), case_ids_hash({"b", "a"}));
  EXPECT_NE(case_ids_hash({"ab"}), case_ids_hash({"a", "b"}));
  EXPECT_EQ(case_ids_hash({}), "fnv1a64:cbf29ce484222325");  // FNV-1a's offset basis: nothing hashed
}

}  // namespace
}  // namespace attnbench
