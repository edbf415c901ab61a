// SGLang 0.5.23 against 30cb848d4: what each backend allocates at construction, for CUDA-graph state and at
// capture, for every preset and every TRTLLM page size, to the byte (docs/sglang-facts.md; 0.5.23
// trtllm_mha_backend.py L306-318 and L416-427). The expected figures are computed here from the facts'
// formulas, independently of the backends' code.
#include <gtest/gtest.h>

#include "backends/registry.hpp"
#include "core/errors.hpp"
#include "core/units.hpp"
#include "device/cpu_device.hpp"
#include "engine/sglang_profile.hpp"
#include "runner/memory_probe.hpp"

namespace attnbench {
namespace {

MemoryReport measure(const ModelConfig& model, const ServerArgs& s,
                     std::vector<std::string> backends = {"flashinfer", "trtllm_mha", "trtllm_mha_legacy"}) {
  MemoryRequest r;
  r.model = model;
  r.server = s;
  r.backends = std::move(backends);
  return measure_memory(r, [] { return std::make_unique<CpuDevice>(); });
}

std::int64_t phase_bytes(const MemoryReport& r, const std::string& b, const std::string& phase, bool pinned = false) {
  const MemoryPhase* p = r.backend(b)->phase(phase);
  if (!p) return 0;
  return pinned ? p->pinned_bytes : p->device_bytes;
}

std::int64_t tag_bytes(const MemoryReport& r, const std::string& b, const std::string& tag) {
  std::int64_t n = 0;
  for (const auto& t : r.backend(b)->phase("construct")->tags)
    if (t.tag == tag) n += t.bytes;
  return n;
}

ServerArgs args(const std::string& version, int page, int arch = 0) {
  ServerArgs s;
  s.sglang_version = version;
  s.page_size = page;
  s.arch = arch;
  return s;
}

TEST(SglangProfiles, ListedWithTheirFlashInferAndDefaultIs0523) {
  ASSERT_GE(sglang_profiles().size(), 2u);
  EXPECT_EQ(default_sglang_profile().version, "0.5.23");
  EXPECT_EQ(default_sglang_profile().flashinfer_version, "0.7.2");
  EXPECT_EQ(find_sglang_profile("30cb848d4").flashinfer_version, "0.6.15.post1");
  EXPECT_EQ(ServerArgs{}.sglang_version, "0.5.23");
  try {
    find_sglang_profile("0.4.0");
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--sglang: unknown SGLang version '0.4.0' (modelled: 0.5.23, 30cb848d4)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parse_arch("sm89"), InputError);
  EXPECT_EQ(parse_arch("sm100"), 100);
}

// Llama-3.1-8B on an H200: the 0.5.23 facts' section 4 table.
TEST(SglangProfiles, Llama8bOnSm90MatchesThe0523TotalsToTheByte) {
  const MemoryReport r = measure(find_model_preset("llama-3.1-8b"), args("0.5.23", 64));
  EXPECT_EQ(phase_bytes(r, "flashinfer", "construct"), 436518920);         // 416.30 MiB, unchanged
  EXPECT_EQ(phase_bytes(r, "trtllm_mha_legacy", "construct"), 982827020);  // 937.30 MiB (was 929.30)
  EXPECT_EQ(phase_bytes(r, "trtllm_mha", "construct"), 546308100);         // 521.00 MiB (was 513.00)
  EXPECT_EQ(tag_bytes(r, "trtllm_mha", "trtllm_mha.workspace_buffer"), 545259520);  // 8 MiB + 512 MiB
  EXPECT_EQ(phase_bytes(r, "trtllm_mha_legacy", "construct", true), 32 * MiB);
  EXPECT_EQ(phase_bytes(r, "trtllm_mha", "construct", true), 0);
  const auto saving = memory_saving(r, "trtllm_mha_legacy", "trtllm_mha");
  ASSERT_TRUE(saving);
  EXPECT_EQ(saving->device_bytes, 436518920);  // the saving of the change is unchanged
  EXPECT_EQ(saving->pinned_bytes, 32 * MiB);
}

TEST(SglangProfiles, Sm100KeepsTheOldWorkspace) {
  const MemoryReport r = measure(find_model_preset("llama-3.1-8b"), args("0.5.23", 64, 100));
  EXPECT_EQ(phase_bytes(r, "trtllm_mha_legacy", "construct"), 974438412);  // 929.30 MiB
  EXPECT_EQ(phase_bytes(r, "trtllm_mha", "construct"), 537919492);         // 513.00 MiB
}

// Every preset and every TRTLLM page size: 0.5.23 differs from 30cb848d4 by exactly the XQA semaphore prefix
// of TRTLLM's workspace on SM90 (and nothing on SM100). Construction of trtllm_mha only (graphs off), for
// speed: FlashInfer, the legacy class (FlashInfer + the same TRTLLM code), graph state and capture are
// compared by the tests around this one.
TEST(SglangProfiles, EveryPresetAndPageSizeDiffersOnlyByTheSemaphorePrefix) {
  for (const ModelConfig& m : model_presets()) {
    for (int page : {16, 32, 64, 128}) {
      if (page == 128 && m.num_qo_heads() == m.num_kv_heads()) continue;  // 30cb848d4 refuses it (GQA only)
      for (int arch : {90, 100}) {
        if (arch == 100 && page != 64) continue;  // SM100 at one page size (construction does not depend on it)
        SCOPED_TRACE(m.name + " page " + std::to_string(page) + " sm" + std::to_string(arch));
        ServerArgs a_now = args("0.5.23", page, arch), a_old = args("30cb848d4", page, arch);
        a_now.disable_cuda_graph = a_old.disable_cuda_graph = true;
        const MemoryReport now = measure(m, a_now, {"trtllm_mha"});
        const MemoryReport old = measure(m, a_old, {"trtllm_mha"});
        const std::int64_t prefix = arch == 90 ? 8 * MiB : 0;
        for (const std::string phase : {"construct"}) {
          for (bool pinned : {false, true}) {
            for (const char* b : {"trtllm_mha"}) {
              const std::int64_t extra = phase == "construct" && !pinned ? prefix : 0;
              EXPECT_EQ(phase_bytes(now, b, phase, pinned), phase_bytes(old, b, phase, pinned) + extra) << b << " " << phase;
            }
          }
        }
        // The workspace itself: 8 MiB of semaphores (SM90) + W, W = 512 MiB unless the environment sets it.
        EXPECT_EQ(tag_bytes(now, "trtllm_mha", "trtllm_mha.workspace_buffer"), prefix + 512 * MiB);
      }
    }
  }
}

// Graph state and capture are the same under both profiles (0.5.23 section 1.2: "same content").
TEST(SglangProfiles, GraphStateAndCaptureUnchanged) {
  const ModelConfig m = find_model_preset("llama-3.1-8b");
  for (int page : {16, 128}) {
    SCOPED_TRACE("page " + std::to_string(page));
    const MemoryReport now = measure(m, args("0.5.23", page));
    const MemoryReport old = measure(m, args("30cb848d4", page));
    for (const std::string phase : {"graph_state", "capture"})
      for (const char* b : {"flashinfer", "trtllm_mha", "trtllm_mha_legacy"})
        for (bool pinned : {false, true})
          EXPECT_EQ(phase_bytes(now, b, phase, pinned), phase_bytes(old, b, phase, pinned)) << b << " " << phase;
    // cache_seqlens [256] + page_table [256, ceil(131072 / page)] int32.
    EXPECT_EQ(phase_bytes(now, "trtllm_mha", "graph_state"), 4 * 256 + 4 * 256 * ceil_div(131072, page));
  }
}

TEST(SglangProfiles, SpeculativeMaskOnXqaOnly) {
  ServerArgs s = args("0.5.23", 64);
  s.speculative_num_draft_tokens = 4;
  const MemoryReport r = measure(find_model_preset("llama-3.1-8b"), s);
  // T4 [R + 1, N, 2 * ceil(N / 32)] uint16 = 4097 * 4 * 2 * 2 B (the facts' 65,552 B).
  EXPECT_EQ(tag_bytes(r, "trtllm_mha", "trtllm_mha.xqa_spec_dec_mask"), 65552);
  EXPECT_EQ(tag_bytes(r, "trtllm_mha_legacy", "trtllm_mha.xqa_spec_dec_mask"), 65552);
  s.arch = 100;
  EXPECT_EQ(tag_bytes(measure(find_model_preset("llama-3.1-8b"), s), "trtllm_mha", "trtllm_mha.xqa_spec_dec_mask"), 0);
  ServerArgs old = args("30cb848d4", 64);
  old.speculative_num_draft_tokens = 4;
  EXPECT_EQ(tag_bytes(measure(find_model_preset("llama-3.1-8b"), old), "trtllm_mha", "trtllm_mha.xqa_spec_dec_mask"), 0);
}

TEST(SglangProfiles, OptionsOfOneProfileAreRefusedOnTheOther) {
  ServerArgs s = args("30cb848d4", 64);
  s.trtllm_decode_seq_len_splits = 2;
  EXPECT_THROW(validate_server_args(s, find_model_preset("llama-3.1-8b")), InputError);
  s.sglang_version = "0.5.23";
  EXPECT_NO_THROW(validate_server_args(s, find_model_preset("llama-3.1-8b")));
  s.trtllm_decode_seq_len_splits = 0;
  EXPECT_THROW(validate_server_args(s, find_model_preset("llama-3.1-8b")), InputError);
  s.trtllm_decode_seq_len_splits = 1;
  s.kv_layout = "hnd";
  EXPECT_THROW(validate_server_args(s, find_model_preset("llama-3.1-8b")), InputError);
}

}  // namespace
}  // namespace attnbench
