// Case expansion: a pure function; order and count pinned against a literal table; validation before any
// allocation.
#include "runner/case.hpp"

#include <gtest/gtest.h>

#include "core/case_id.hpp"
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

// --dtype auto (the default) runs each model in its config's dtype, as SGLang's --dtype auto: an fp16 config in fp16,
// a bf16 preset in bf16; a dtype that auto and a named value both give runs once, in --dtype's order.
TEST(ExpandCases, DtypeAutoIsEachModelsConfigDtype) {
  test::TempDir d;
  test::write_file(d.file("half.json"),
                   R"({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2, "num_attention_heads": 4,
                       "num_key_value_heads": 2, "head_dim": 64, "max_position_embeddings": 4096,
                       "torch_dtype": "float16"})");
  RunPlan p;
  EXPECT_EQ(p.dtypes, std::vector<std::string>{"auto"});
  p.models = {"tiny", d.file("half.json")};
  p.batches = {2};
  p.kv_lens = {16};
  p.backends = {"trtllm_mha"};
  auto dtypes_of = [](const std::vector<Case>& cases) {
    std::vector<std::string> out;
    for (const Case& c : cases) out.push_back(c.model.name + ":" + std::string(dtype_name(c.model.dtype)));
    return out;
  };
  EXPECT_EQ(dtypes_of(expand_cases(p)), (std::vector<std::string>{"tiny:bf16", "half:fp16"}));
  p.dtypes = {"auto", "bf16"};
  EXPECT_EQ(dtypes_of(expand_cases(p)), (std::vector<std::string>{"tiny:bf16", "half:fp16", "half:bf16"}));
  p.dtypes = {"fp32", "auto"};
  EXPECT_EQ(dtypes_of(expand_cases(p)),
            (std::vector<std::string>{"tiny:fp32", "tiny:bf16", "half:fp32", "half:fp16"}));
  p.dtypes = {"fp64"};
  EXPECT_THROW(
      try { expand_cases(p); } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("--dtype: unknown dtype 'fp64' (expected auto, bf16, fp16 or fp32)"),
                  std::string::npos)
            << e.what();
        throw;
      },
      InputError);
}

// Every id the expansion builds is one parse_case_id reads back (core/case_id.hpp: the results readers check
// a row's columns against it), naming the case's mode, model, batch, page size, dtype, seed and sinks.
TEST(ExpandCases, EveryIdReadsBackAsItsCase) {
  test::TempDir d;
  test::write_file(d.file("t,1.csv"), "request_id,prefix_len,extend_len\na,10,5\nb,0,7\n");
  RunPlan p;
  p.models = {"tiny", "tiny-swa"};
  p.modes = {"decode", "extend", "verify"};
  p.dtypes = {"bf16", "fp16"};
  p.page_sizes = {16, 64};
  p.batches = {1, 3};
  p.kv_lens = {0, 100};
  p.prefix_lens = {0, 32};
  p.extend_lens = {64};
  p.length_dist = "uniform";
  p.length_min = 1;
  p.draft_tokens = 3;
  p.seeds = {1, 7};
  p.sinks = true;
  p.model.layers = 2;
  p.model.tp_size = 2;
  p.model.kv_cache_dtype = "fp8_e4m3";
  std::vector<Case> cases = expand_cases(p);
  p = RunPlan();
  p.models = {"tiny"};
  p.modes = {"decode", "extend", "verify"};
  p.trace = d.file("t,1.csv");
  for (Case& c : expand_cases(p)) cases.push_back(std::move(c));
  // 2 models x 2 dtypes x 3 modes x 2 page sizes x 4 length axes (2 batches x 2 lengths) x 2 seeds, + 3
  ASSERT_EQ(cases.size(), 192u + 3);
  for (const Case& c : cases) {
    const std::optional<CaseIdParts> id = parse_case_id(c.id);
    ASSERT_TRUE(id.has_value()) << c.id;
    EXPECT_EQ(format_case_id(*id), c.id);
    EXPECT_EQ(id->mode, forward_mode_name(c.mode)) << c.id;
    EXPECT_EQ(id->model, c.model.name) << c.id;
    EXPECT_EQ(id->batch, c.batch) << c.id;
    EXPECT_EQ(id->page_size, c.server.page_size) << c.id;
    EXPECT_EQ(id->dtype, dtype_name(c.model.dtype)) << c.id;
    EXPECT_EQ(id->seed_or_default(), c.seed) << c.id;
    EXPECT_EQ(id->sinks, c.sinks) << c.id;
    if (id->layers) {
      EXPECT_EQ(*id->layers, c.model.num_layers) << c.id;
    }
  }
  EXPECT_EQ(cases.front().id,
            "decode/tiny/L=2/tp=2/b=1/kv=0/uniform[1,L]/p=16/bf16/kvcache=fp8_e4m3/seed=1/sinks");
  EXPECT_EQ(cases.back().id, "verify/tiny/trace=t,1.csv/b=2/p=64/bf16");
}

}  // namespace
}  // namespace attnbench
