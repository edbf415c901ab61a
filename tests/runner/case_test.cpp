// Case expansion: a pure function; order and count pinned against a literal table; validation before any
// allocation.
#include "runner/case.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "support/errors.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

TEST(ExpandCases, CartesianProductInTheDocumentedOrder) {
  RunPlan p;
  p.models = {"tiny"};
  p.modes = {"decode", "extend"};
  p.page_sizes = {16, 64};
  p.batches = {1, 4};
  p.kv_lens = {100};
  p.prefix_lens = {0, 32};
  p.extend_lens = {64};
  p.backends = {"trtllm_mha"};
  const auto cases = expand_cases(p);
  std::vector<std::string> ids;
  for (const auto& c : cases) ids.push_back(c.id);
  const std::vector<std::string> want = {
      "decode/tiny/b=1/kv=100/p=16/bf16",           "decode/tiny/b=4/kv=100/p=16/bf16",
      "decode/tiny/b=1/kv=100/p=64/bf16",           "decode/tiny/b=4/kv=100/p=64/bf16",
      "extend/tiny/b=1/prefix=0/ext=64/p=16/bf16",  "extend/tiny/b=1/prefix=32/ext=64/p=16/bf16",
      "extend/tiny/b=4/prefix=0/ext=64/p=16/bf16",  "extend/tiny/b=4/prefix=32/ext=64/p=16/bf16",
      "extend/tiny/b=1/prefix=0/ext=64/p=64/bf16",  "extend/tiny/b=1/prefix=32/ext=64/p=64/bf16",
      "extend/tiny/b=4/prefix=0/ext=64/p=64/bf16",  "extend/tiny/b=4/prefix=32/ext=64/p=64/bf16",
  };
  EXPECT_EQ(ids, want);
  EXPECT_EQ(cases[1].new_lens, (std::vector<std::int32_t>{1, 1, 1, 1}));
  EXPECT_EQ(cases[1].prefix_lens, (std::vector<std::int32_t>{100, 100, 100, 100}));
  EXPECT_EQ(cases[5].kv_len_max(), 96);
}

TEST(ExpandCases, VerifyAndDistributions) {
  RunPlan p;
  p.models = {"tiny"};
  p.modes = {"verify"};
  p.batches = {8};
  p.kv_lens = {200};
  p.length_dist = "uniform";
  p.length_min = 50;
  p.draft_tokens = 3;
  p.seeds = {1, 2};
  const auto cases = expand_cases(p);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].id, "verify/tiny/b=8/kv=200/uniform[50,L]/draft=3/p=64/bf16/seed=1");
  EXPECT_EQ(cases[0].server.speculative_num_draft_tokens, 3);
  for (int i = 0; i < 8; ++i) {
    EXPECT_GE(cases[0].prefix_lens[i], 50);
    EXPECT_LE(cases[0].prefix_lens[i], 200);
    EXPECT_EQ(cases[0].new_lens[i], 3);
  }
  EXPECT_NE(cases[0].prefix_lens, cases[1].prefix_lens);
  EXPECT_EQ(expand_cases(p)[1].prefix_lens, cases[1].prefix_lens) << "same seed, same lengths";
}

// --length-min above a length it is drawn up to is bad input naming both (not fixed lengths under the
// distribution's name); equal to it, or under the fixed distribution, it is fine.
TEST(ExpandCases, LengthMinAboveTheLengthIsAnError) {
  RunPlan p;
  p.models = {"tiny"};
  p.modes = {"decode"};
  p.batches = {4};
  p.kv_lens = {100};
  p.length_dist = "zipf";
  p.length_min = 2000;
  auto message = [&p] {
    try {
      expand_cases(p);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(), "--length-min: 2000 is above --kv-len 100 (lengths are drawn in [--length-min, L])");
  p.modes = {"extend"};
  p.prefix_lens = {0};
  p.extend_lens = {512};
  p.length_dist = "uniform";
  p.length_min = 600;
  EXPECT_EQ(message(), "--length-min: 600 is above --extend-len 512 (lengths are drawn in [--length-min, L])");
  p.prefix_lens = {100};
  p.extend_lens = {1024};
  EXPECT_EQ(message(), "--length-min: 600 is above --prefix-len 100 (lengths are drawn in [--length-min, L])");
  p.modes = {"verify"};
  p.verify_kv_lens = {300};
  EXPECT_EQ(message(), "--length-min: 600 is above --verify-kv-len 300 (lengths are drawn in [--length-min, L])");
  p.length_min = 300;  // equal: every drawn length is L
  EXPECT_EQ(message(), "no error");
  p.length_min = 600;
  p.length_dist = "fixed";  // fixed lengths ignore --length-min
  EXPECT_EQ(message(), "no error");
}

TEST(ExpandCases, TraceGivesTheBatch) {
  test::TempDir d;
  test::write_file(d.file("t.csv"), "request_id,prefix_len,extend_len\na,10,5\nb,0,7\n");
  RunPlan p;
  p.models = {"tiny"};
  p.modes = {"extend", "decode"};
  p.trace = d.file("t.csv");
  const auto cases = expand_cases(p);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].id, "extend/tiny/trace=t.csv/b=2/p=64/bf16");
  EXPECT_EQ(cases[0].prefix_lens, (std::vector<std::int32_t>{10, 0}));
  EXPECT_EQ(cases[0].new_lens, (std::vector<std::int32_t>{5, 7}));
  EXPECT_EQ(cases[1].prefix_lens, (std::vector<std::int32_t>{15, 7}));
}

void expect_bad(RunPlan p, const std::string& culprit) {
  test::expect_input_error([&] { expand_cases(p); }, culprit);
}

TEST(ExpandCases, RejectsBadAxesNamingTheOption) {
  RunPlan ok;
  ok.models = {"tiny"};
  RunPlan p = ok;
  p.kv_lens = {5000};  // tiny's context is 4096
  expect_bad(p, "--kv-len");
  p = ok;
  p.batches = {0};
  expect_bad(p, "--batch");
  p = ok;
  p.modes = {"prefill"};
  expect_bad(p, "--mode");
  p = ok;
  p.dtypes = {"int4"};
  expect_bad(p, "--dtype");
  p = ok;
  p.page_sizes = {8};
  p.backends = {"trtllm_mha"};
  expect_bad(p, "--page-size");
  p = ok;
  p.length_dist = "normal";
  expect_bad(p, "--length-dist");
  p = ok;
  p.model.server.max_running_requests = 2;
  p.batches = {4};
  expect_bad(p, "--batch");
}

}  // namespace
}  // namespace attnbench
