// The options that shape a sweep's rows: what --resume compares (runner/sweep_options.hpp).
#include "runner/sweep_options.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "core/errors.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

RunPlan tiny_plan() {
  RunPlan p;
  p.models = {"tiny"};
  p.batches = {1, 2};
  p.kv_lens = {8};
  return p;
}

const std::vector<std::string> kBackends = {"flashinfer", "trtllm_mha"};

std::string value_of(const SweepOptions& o, const std::string& key) {
  for (const auto& [k, v] : o)
    if (k == key) return v;
  return "<absent>";
}

TEST(SweepOptions, ListTheRowShapingOptionsAndNotTheSelection) {
  RunPlan p = tiny_plan();
  const SweepOptions o = sweep_options(p, kBackends, false);
  EXPECT_EQ(value_of(o, "subcommand"), "run");
  EXPECT_EQ(value_of(o, "--batch"), "1,2");
  EXPECT_EQ(value_of(o, "--backend"), "flashinfer,trtllm_mha");
  EXPECT_EQ(value_of(o, "--time-budget"), "1");
  EXPECT_EQ(value_of(o, "--case-id"), "<absent>");
  EXPECT_EQ(value_of(o, "--filter"), "<absent>");
  // The selection does not change the fingerprint; every row-shaping option does.
  const std::string fp = options_fingerprint(o);
  EXPECT_EQ(fp.rfind("v1:", 0), 0u);
  EXPECT_EQ(fp.size(), 3u + 16u);
  p.filter = "b=1";
  p.case_id = "decode/tiny/b=1/kv=8/p=64/bf16";
  EXPECT_EQ(options_fingerprint(sweep_options(p, kBackends, false)), fp);
  const std::vector<std::function<void(RunPlan&)>> changes = {
      [](RunPlan& q) { q.batches = {1}; },           [](RunPlan& q) { q.seeds = {2}; },
      [](RunPlan& q) { q.sampling.warmup = 7; },      [](RunPlan& q) { q.sinks = true; },
      [](RunPlan& q) { q.model.server.page_size = 16; q.page_sizes = {16}; },
      [](RunPlan& q) { q.model.device = "cpu"; },   [](RunPlan& q) { q.zipf_s = 1.2; },
      [](RunPlan& q) { q.model.kv_cache_dtype = "fp8_e4m3"; },
  };
  for (std::size_t i = 0; i < changes.size(); ++i) {
    RunPlan q = tiny_plan();
    changes[i](q);
    EXPECT_NE(options_fingerprint(sweep_options(q, kBackends, false)), fp) << "change " << i;
  }
  EXPECT_NE(options_fingerprint(sweep_options(tiny_plan(), kBackends, true)), fp) << "validate vs run";
  EXPECT_NE(options_fingerprint(sweep_options(tiny_plan(), {"flashinfer"}, false)), fp) << "backends";
}

TEST(SweepOptions, TheTraceCountsByItsContents) {
  test::TempDir d;
  RunPlan p = tiny_plan();
  p.trace = d.file("t.csv");
  test::write_file(p.trace, "request_id,prefix_len,extend_len\nr0,1,2\n");
  const std::string a = options_fingerprint(sweep_options(p, kBackends, false));
  test::write_file(p.trace, "request_id,prefix_len,extend_len\nr0,3,2\n");
  const std::string b = options_fingerprint(sweep_options(p, kBackends, false));
  EXPECT_NE(a, b);
  EXPECT_EQ(value_of(sweep_options(p, kBackends, false), "--trace").rfind("fnv1a64:", 0), 0u);
}

TEST(SweepOptions, TextRoundTrips) {
  const SweepOptions o = sweep_options(tiny_plan(), kBackends, false);
  EXPECT_EQ(parse_options_text(options_text(o)), o);
  const auto env = options_environment(o);
  ASSERT_EQ(env.size(), 2u);
  EXPECT_EQ(env[0].first, "options_fingerprint");
  EXPECT_EQ(env[1].first, "options");
  EXPECT_NE(env[1].second.find("--batch=1,2; "), std::string::npos) << env[1].second;
}

std::string resume_error(const std::vector<std::pair<std::string, std::string>>& previous, const SweepOptions& now) {
  try {
    check_resume_options(previous, now, "r.csv", "r.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(SweepOptions, ResumeNamesTheOptionsThatDiffer) {
  const SweepOptions before = sweep_options(tiny_plan(), kBackends, false);
  const auto env = options_environment(before);
  EXPECT_EQ(resume_error(env, before), "accepted");
  RunPlan p = tiny_plan();
  p.batches = {4};
  p.modes = {"extend"};
  EXPECT_EQ(resume_error(env, sweep_options(p, kBackends, false)),
            "--resume: r.csv was written with other options: --mode decode (now extend), --batch 1,2 (now 4); run "
            "with those options, or without --resume to start again");
  EXPECT_EQ(resume_error({{"gpu_name", "x"}}, before),
            "--resume: r.json has no options_fingerprint (written by an older attnbench?): cannot tell whether r.csv "
            "holds the same sweep; run without --resume to start it again");
  // A fingerprint without the readable list still refuses, and says the fingerprints differ.
  EXPECT_NE(resume_error({{"options_fingerprint", "v1:0000000000000000"}}, before).find("the fingerprint"),
            std::string::npos);
}

}  // namespace
}  // namespace attnbench
