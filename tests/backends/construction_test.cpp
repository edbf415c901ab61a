// Every backend's construction, graph-state and capture allocations, pinned to the byte against
// sglang-backends.md sections 1, 2 and 8 (two presets, two page sizes, SWA, environment effects).
#include <gtest/gtest.h>

#include "backends/registry.hpp"
#include "core/units.hpp"
#include "device/cpu_device.hpp"
#include "runner/memory_probe.hpp"

namespace attnbench {
namespace {

constexpr std::int64_t kWrapperWs = 8 * MiB;  // FlashInfer int workspace (and its pinned twin)

MemoryReport measure(const std::string& model, ServerArgs s = {}, std::optional<std::string> prefill = std::nullopt) {
  MemoryRequest r;
  r.model = find_model_preset(model);
  r.server = s;
  r.server.sglang_version = "30cb848d4";  // the figures of sglang-backends.md (SGLang main @30cb848d4)
  r.backends = backend_names();
  r.prefill_backend = prefill;
  return measure_memory(r, [] { return std::make_unique<CpuDevice>(); });
}

std::int64_t dev(const MemoryReport& r, const std::string& b, const std::string& phase) {
  return r.backend(b)->phase(phase)->device_bytes;
}
std::int64_t pin(const MemoryReport& r, const std::string& b, const std::string& phase) {
  return r.backend(b)->phase(phase)->pinned_bytes;
}
std::int64_t tag_bytes(const MemoryReport& r, const std::string& b, const std::string& phase, const std::string& tag) {
  std::int64_t n = 0;
  for (const auto& t : r.backend(b)->phase(phase)->tags)
    if (t.tag == tag) n += t.bytes;
  return n;
}

// Llama-3.1-8B, R = 4096: F1 384 MiB + F2/F3/F4 (16,388 + 16,384 + 16,388) + four 8 MiB int workspaces
// + two 128 KiB kv_lens buffers.
constexpr std::int64_t kFlashInferCtorLlama = 402653184 + 49160 + 4 * kWrapperWs + 2 * 131072;  // 436,518,920
// T1 512 MiB + T2 round_up(max(8192 * 32, 132), 8) * 4 = 1 MiB + T3 4 B.
constexpr std::int64_t kTrtllmCtorLlama = 536870912 + 1048576 + 4;  // 537,919,492

TEST(Construction, Llama8bMatchesSection8ToTheByte) {
  const MemoryReport r = measure("llama-3.1-8b");
  EXPECT_EQ(dev(r, "flashinfer", "construct"), kFlashInferCtorLlama);
  EXPECT_EQ(pin(r, "flashinfer", "construct"), 4 * kWrapperWs);
  EXPECT_EQ(dev(r, "trtllm_mha", "construct"), kTrtllmCtorLlama);
  EXPECT_EQ(pin(r, "trtllm_mha", "construct"), 0);
  EXPECT_EQ(dev(r, "trtllm_mha_legacy", "construct"), kFlashInferCtorLlama + kTrtllmCtorLlama);  // 929.3 MiB
  EXPECT_EQ(pin(r, "trtllm_mha_legacy", "construct"), 4 * kWrapperWs);
  const auto s = memory_saving(r, "trtllm_mha_legacy", "trtllm_mha");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->device_bytes, 436518920);  // 416.3 MiB
  EXPECT_EQ(s->pinned_bytes, 32 * MiB);
  EXPECT_EQ(s->kv_tokens, 436518920 / 131072);
}

TEST(Construction, GraphStateAndCaptureAtPageSize64) {
  const MemoryReport r = measure("llama-3.1-8b");
  // FlashInfer: kv_indices 256 * 131072 int32 (128 MiB), custom mask 32 MiB, qk/qo indptr clones [R + 1].
  EXPECT_EQ(dev(r, "flashinfer", "graph_state"), 134217728 + 33554432 + 2 * 16388);
  // 36 captured sizes: one decode wrapper each (8 MiB + 8 MiB pinned) + arange(bs + 1) (tensor cores).
  EXPECT_EQ(dev(r, "flashinfer", "capture"), 36 * kWrapperWs + 4 * (4243 + 36));
  EXPECT_EQ(pin(r, "flashinfer", "capture"), 36 * kWrapperWs);
  // TRTLLM: cache_seqlens [256] + page_table [256, 2048]; per bs cu_seqlens_q/k: 34,232 B over 36 sizes.
  for (const char* b : {"trtllm_mha", "trtllm_mha_legacy"}) {
    EXPECT_EQ(dev(r, b, "graph_state"), 1024 + 256 * 2048 * 4) << b;
    EXPECT_EQ(dev(r, b, "capture"), 34232) << b;
    EXPECT_EQ(pin(r, b, "capture"), 0) << b;
  }
}

TEST(Construction, PageSize16GrowsOnlyTheTrtllmPageTable) {
  ServerArgs s;
  s.page_size = 16;
  const MemoryReport r = measure("llama-3.1-8b", s);
  EXPECT_EQ(dev(r, "trtllm_mha", "graph_state"), 1024 + 8388608);
  EXPECT_EQ(dev(r, "trtllm_mha", "construct"), kTrtllmCtorLlama);
  EXPECT_EQ(dev(r, "flashinfer", "construct"), kFlashInferCtorLlama);
}

TEST(Construction, QwenArchitectureGets512MiBFlashInferWorkspace) {
  const MemoryReport r = measure("qwen2.5-7b");
  EXPECT_EQ(tag_bytes(r, "flashinfer", "construct", "flashinfer.workspace_buffer"), 512 * MiB);
  // T2 with 28 config heads: round_up(8192 * 28, 8) * 4.
  EXPECT_EQ(tag_bytes(r, "trtllm_mha", "construct", "trtllm_mha.multi_ctas_kv_counter_buffer"), 8192 * 28 * 4);
  // T1 was sized on entry, before the FlashInfer parent .set() the variable: still the 512 MiB default.
  EXPECT_EQ(tag_bytes(r, "trtllm_mha_legacy", "construct", "trtllm_mha.workspace_buffer"), 512 * MiB);
  // context 32768: kv_indices [256 * 32768] int32.
  EXPECT_EQ(tag_bytes(r, "flashinfer", "graph_state", "flashinfer.cuda_graph_kv_indices[0]"), 256LL * 32768 * 4);
}

TEST(Construction, DeterministicInferenceAndEnvironmentWorkspace) {
  ServerArgs det;
  det.enable_deterministic_inference = true;
  const MemoryReport r = measure("llama-3.1-8b", det);
  EXPECT_EQ(tag_bytes(r, "trtllm_mha_legacy", "construct", "flashinfer.workspace_buffer"), 2048 * MiB);
  EXPECT_EQ(tag_bytes(r, "trtllm_mha_legacy", "construct", "trtllm_mha.workspace_buffer"), 512 * MiB);
  ServerArgs env;
  env.env_flashinfer_workspace_size = 256 * MiB;  // set at process start: both workspaces follow it
  const MemoryReport e = measure("llama-3.1-8b", env);
  EXPECT_EQ(tag_bytes(e, "trtllm_mha_legacy", "construct", "flashinfer.workspace_buffer"), 256 * MiB);
  EXPECT_EQ(tag_bytes(e, "trtllm_mha_legacy", "construct", "trtllm_mha.workspace_buffer"), 256 * MiB);
  EXPECT_EQ(tag_bytes(e, "trtllm_mha", "construct", "trtllm_mha.workspace_buffer"), 256 * MiB);
}

TEST(Construction, SlidingWindowDoublesFlashInferWrapperSets) {
  const MemoryReport r = measure("gemma-3-12b");
  // 7 wrappers (ragged once; paged, verify, decode twice), 4 kv_lens buffers, doubled indptrs.
  EXPECT_EQ(pin(r, "flashinfer", "construct"), 7 * kWrapperWs);
  EXPECT_EQ(dev(r, "flashinfer", "construct"), 402653184 + 7 * kWrapperWs + 4 * 131072 + 2 * 16388 + 16384 + 2 * 16388);
  EXPECT_GT(tag_bytes(r, "flashinfer", "construct", "flashinfer.decode_wrappers[1].int_workspace"), 0);
  // Graph state: two kv_indices buffers; capture: two decode wrappers per size, no tensor cores (16 / 8 < 4).
  EXPECT_EQ(tag_bytes(r, "flashinfer", "graph_state", "flashinfer.cuda_graph_kv_indices[1]"), 256LL * 131072 * 4);
  EXPECT_EQ(dev(r, "flashinfer", "capture"), 2 * 36 * kWrapperWs);
  // TRTLLM has no per-window state: the kernel applies the window.
  EXPECT_EQ(dev(r, "trtllm_mha", "construct"), 536870912 + 8192 * 16 * 4 + 4);
}

TEST(Construction, SharedBuffersAreCountedOnceInAProcess) {
  // With flashinfer as the prefill backend in the same process, the legacy backend's F1 is the prefill
  // backend's: its construction no longer pays 384 MiB, and the saving shrinks to the wrappers.
  const MemoryReport r = measure("llama-3.1-8b", {}, std::string("flashinfer"));
  EXPECT_EQ(tag_bytes(r, "trtllm_mha_legacy", "construct", "flashinfer.workspace_buffer"), 0);
  EXPECT_EQ(tag_bytes(r, "flashinfer", "construct", "flashinfer.workspace_buffer"), 0);
  const auto s = memory_saving(r, "trtllm_mha_legacy", "trtllm_mha");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->device_bytes, kFlashInferCtorLlama - 402653184);
  CpuDevice d;
  ModelRunner mr(d, find_model_preset("llama-3.1-8b"), ServerArgs{});
  auto a = find_backend("trtllm_mha").create(mr);
  const std::int64_t after_first = d.ledger().live()[MemKind::device];
  auto b = find_backend("trtllm_mha").create(mr);
  EXPECT_EQ(d.ledger().live()[MemKind::device] - after_first, 1048576) << "only T2 is per instance";
}

TEST(Construction, KeepIndptrVariantAddsTheTwoSmallBuffers) {
  ServerArgs s;
  s.trtllm_keep_indptr = true;
  const MemoryReport r = measure("llama-3.1-8b", s);
  EXPECT_EQ(dev(r, "trtllm_mha", "construct"), kTrtllmCtorLlama + 16388 + 16384);
}

TEST(Construction, SpeculativeDecodingCapturesVerifyAndGrowsGraphState) {
  ServerArgs s;
  s.speculative_num_draft_tokens = 4;
  const MemoryReport r = measure("llama-3.1-8b", s);
  // kv_indices and mask scale with max_num_tokens = 256 * 4 (512 MiB + 128 MiB).
  EXPECT_EQ(tag_bytes(r, "flashinfer", "graph_state", "flashinfer.cuda_graph_kv_indices[0]"), 512 * MiB);
  EXPECT_EQ(tag_bytes(r, "flashinfer", "graph_state", "flashinfer.cuda_graph_custom_mask"), 128 * MiB);
  // 51 capture sizes of TARGET_VERIFY: a paged prefill wrapper each (8 MiB + 128 KiB, 8 MiB pinned).
  EXPECT_EQ(pin(r, "flashinfer", "capture"), 51 * kWrapperWs);
  EXPECT_EQ(dev(r, "flashinfer", "capture"), 51 * (kWrapperWs + 131072));
  // TRTLLM with speculation: decode, target-verify and draft-extend groups (cache_seqlens [256],
  // cu_seqlens_q/k [257] each, a page table [256, 2048] each) plus page_table_draft_decode.
  EXPECT_EQ(dev(r, "trtllm_mha", "graph_state"), 4 * (256 * 2048 * 4) + 3 * 1024 + 6 * 4 * 257);
}

}  // namespace
}  // namespace attnbench
