// Server arguments: SGLang's capture lists, the process environment and validation.
#include "engine/server_args.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "support/errors.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

TEST(CaptureList, MatchesSglangCountsForTheH200AndUnknownMemoryDefaults) {
  // sglang-backends.md section 0: 36 sizes for max_bs 256, 24 for 160, 51 with speculative decoding.
  const auto l256 = default_capture_batch_sizes(256, false);
  EXPECT_EQ(l256.size(), 36u);
  EXPECT_EQ(l256.front(), 1);
  EXPECT_EQ(l256.back(), 256);
  EXPECT_EQ(default_capture_batch_sizes(160, false).size(), 24u);
  EXPECT_EQ(default_capture_batch_sizes(256, true).size(), 51u);
  const std::vector<int> head = {1, 2, 4, 8, 12, 16, 24, 32};
  EXPECT_TRUE(std::equal(head.begin(), head.end(), l256.begin()));
  EXPECT_EQ(default_capture_batch_sizes(512, false).size(), 52u);
}

TEST(CaptureList, AppendsMaxBsWhenTheListMissesIt) {
  const auto l = default_capture_batch_sizes(100, false);
  EXPECT_EQ(l.back(), 100);
  EXPECT_EQ(l[l.size() - 2], 96);
}

TEST(CaptureList, ExplicitListAndRequestPoolCap) {
  ServerArgs a;
  a.cuda_graph_bs = {8, 1, 8, 4};
  EXPECT_EQ(a.capture_batch_sizes(), (std::vector<int>{1, 4, 8}));
  ServerArgs b;
  b.max_running_requests = 20;
  EXPECT_EQ(b.capture_batch_sizes(), (std::vector<int>{1, 2, 4, 8, 12, 16, 20}));
}

// SGLang's get_batch_sizes_to_capture ends in sorted(set(...)): a cap that is itself in the list is not captured
// twice, and an explicit list is capped like the default one.
TEST(CaptureList, CapAlreadyInTheListAndExplicitListsAreCapped) {
  ServerArgs a;
  a.max_running_requests = 16;
  EXPECT_EQ(a.capture_batch_sizes(), (std::vector<int>{1, 2, 4, 8, 12, 16}));
  ServerArgs b;
  b.cuda_graph_bs = {8, 64};
  b.max_running_requests = 4;
  EXPECT_EQ(b.capture_batch_sizes(), (std::vector<int>{4}));
  ServerArgs c;
  c.cuda_graph_bs = {2, 64, 8};
  c.max_running_requests = 10;
  EXPECT_EQ(c.capture_batch_sizes(), (std::vector<int>{2, 8, 10}));
  ServerArgs d;
  d.cuda_graph_bs = {2, 8};
  d.max_running_requests = 10;  // nothing past the cap: nothing added
  EXPECT_EQ(d.capture_batch_sizes(), (std::vector<int>{2, 8}));
}

TEST(ProcessEnv, SeededFromArgsAndWritable) {
  ServerArgs a;
  ProcessEnv e(a);
  EXPECT_FALSE(e.is_set("SGLANG_FLASHINFER_WORKSPACE_SIZE"));
  EXPECT_EQ(e.get_int("SGLANG_FLASHINFER_WORKSPACE_SIZE", 7), 7);
  e.set_int("SGLANG_FLASHINFER_WORKSPACE_SIZE", 123);
  EXPECT_EQ(e.get_int("SGLANG_FLASHINFER_WORKSPACE_SIZE", 7), 123);
  a.env_flashinfer_workspace_size = 99;
  a.env_flashinfer_use_tensor_core = false;
  ProcessEnv f(a);
  EXPECT_EQ(f.get_int("SGLANG_FLASHINFER_WORKSPACE_SIZE", 0), 99);
  EXPECT_EQ(f.get_bool("SGLANG_FLASHINFER_USE_TENSOR_CORE"), std::optional<bool>(false));
}

void expect_input_error(const ServerArgs& a, const ModelConfig& m, const std::string& option) {
  test::expect_input_error([&] { validate_server_args(a, m); }, option);
}

TEST(ValidateServerArgs, RejectsOutOfRangeValuesNamingTheOption) {
  const ModelConfig m = find_model_preset("llama-3.1-8b");
  ServerArgs ok;
  EXPECT_NO_THROW(validate_server_args(ok, m));
  ServerArgs a = ok;
  a.max_running_requests = -1;
  expect_input_error(a, m, "--max-running-requests");
  a = ok;
  a.context_len = -5;
  expect_input_error(a, m, "--context-len");
  a = ok;
  a.page_size = 24;
  expect_input_error(a, m, "--page-size");
  a = ok;
  a.cuda_graph_max_bs = 0;
  expect_input_error(a, m, "--cuda-graph-max-bs");
  a = ok;
  a.speculative_num_draft_tokens = -2;
  expect_input_error(a, m, "--speculative-num-draft-tokens");
  ModelConfig bad = m;
  bad.tp_size = 3;
  expect_input_error(ok, bad, "--tp-size");
}

// SGLang's ModelConfig._derive_context_length: a --context-length above the derived one raises unless
// SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN is set (--allow-overwrite-longer-context-len); at or below it, it is taken.
TEST(ValidateServerArgs, ContextLengthAboveTheDerivedOneNeedsSglangsOverride) {
  const ModelConfig m = find_model_preset("llama-3.1-8b");  // derived context 131072
  ServerArgs a;
  a.context_len = m.context_len;
  EXPECT_NO_THROW(validate_server_args(a, m));
  a.context_len = 4096;
  EXPECT_NO_THROW(validate_server_args(a, m));
  a.context_len = m.context_len + 1;
  const std::string e = test::error_of([&] { validate_server_args(a, m); });
  EXPECT_TRUE(test::has(e, "--context-length (--context-len): 131073 is greater than llama-3.1-8b's derived context length 131072")) << e;
  EXPECT_TRUE(test::has(e, "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN")) << e;
  EXPECT_TRUE(test::has(e, "--allow-overwrite-longer-context-len")) << e;
  a.allow_overwrite_longer_context_len = true;
  EXPECT_NO_THROW(validate_server_args(a, m));
  EXPECT_EQ(a.effective_context_len(m), 131073);
}

}  // namespace
}  // namespace attnbench
