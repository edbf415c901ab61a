// Real models from config.json files (tests/data/, README there): `attnbench memory` against figures computed
// by hand from sglang-backends.md sections 1, 2 and 8 (the formulas of tests/backends/construction_test.cpp),
// and `attnbench validate` through the binary on the CPU, every mode and every backend.
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <nlohmann/json.hpp>

#include "backends/registry.hpp"
#include "core/units.hpp"
#include "device/cpu_device.hpp"
#include "engine/model_config.hpp"
#include "report/results_io.hpp"
#include "runner/memory_probe.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

const std::string kData = ATTNBENCH_SOURCE_DIR "/tests/data/";

// What a model's shape makes each backend allocate (R = 4096 requests, CUDA-graph max bs 256, 36 captured
// sizes summing to 4243, page size 64).
struct Figures {
  std::int64_t fi_construct, fi_construct_pinned, fi_graph_state, fi_capture, fi_capture_pinned;
  std::int64_t trt_construct, trt_graph_state, trt_capture;
};

constexpr std::int64_t R = 4096, kGraphBs = 256, kSizes = 36, kSizeSum = 4243, kWrapperWs = 8 * MiB, kKvLens = 128 * KiB;

// `heads` and `kv_heads` per rank (tp 1 here, so also the config's), `windowed`: any layer has a window (two
// FlashInfer wrapper sets), `qwen`: a Qwen architecture (512 MiB FlashInfer workspace), `t1_prefix`: XQA's
// 8 MiB of semaphores before TRTLLM's workspace (SGLang 0.5.23 on SM90; none at 30cb848d4).
Figures by_hand(std::int64_t heads, std::int64_t kv_heads, std::int64_t context, bool windowed, bool qwen,
                std::int64_t t1_prefix) {
  const std::int64_t W = windowed ? 2 : 1;
  const bool tensor_cores = heads / kv_heads >= 4;
  Figures f{};
  // F1 + kv_indptr and qo_indptr [R + 1] per set + kv_last_page_len [R] + ragged wrapper + paged, verify and
  // decode wrappers per set (8 MiB each, and as much pinned) + a 128 KiB kv_lens per paged / verify wrapper.
  f.fi_construct = (qwen ? 512 : 384) * MiB + W * 2 * 4 * (R + 1) + 4 * R + (1 + 3 * W) * kWrapperWs + 2 * W * kKvLens;
  f.fi_construct_pinned = (1 + 3 * W) * kWrapperWs;
  // kv_indices [256 * context] int32 per set, custom mask [256 * context] uint8, qk / qo indptr clones per set.
  f.fi_graph_state = W * 4 * kGraphBs * context + kGraphBs * context + 2 * W * 4 * (R + 1);
  // Per captured size a decode wrapper per set, and arange(bs + 1) with tensor cores.
  f.fi_capture = W * kSizes * kWrapperWs + (tensor_cores ? W * 4 * (kSizeSum + kSizes) : 0);
  f.fi_capture_pinned = W * kSizes * kWrapperWs;
  // T1 512 MiB + T2 round_up(max(8192 * config heads, 132), 8) * 4 + T3 4 B.
  f.trt_construct = t1_prefix + 512 * MiB + 8192 * heads * 4 + 4;
  // cache_seqlens [256] + page_table [256, ceil(context / 64)]; cu_seqlens_q / k [bs + 1] per captured size.
  f.trt_graph_state = 4 * kGraphBs + 4 * kGraphBs * ((context + 63) / 64);
  f.trt_capture = 8 * (kSizeSum + kSizes);
  return f;
}

struct RealModel {
  const char* file;
  const char* name;
  std::int64_t heads, kv_heads, context;
  bool windowed, qwen;
  std::int64_t fi_construct;  // the first figure, worked out by hand once more
};

const RealModel kModels[] = {
    // 512 MiB + 2 * 16,388 + 16,384 + 4 * 8 MiB + 2 * 128 KiB
    {"qwen3-32b/config.json", "qwen3-32b", 64, 8, 40960, false, true, 570736648},
    // Mistral's sliding_window 4096 is not applied (SGLang's MistralForCausalLM is LlamaForCausalLM, which takes
    // no window): one wrapper set, 384 MiB + 2 * 16,388 + 16,384 + 4 * 8 MiB + 2 * 128 KiB, as Llama.
    {"mistral-7b-v0.1.json", "mistral-7b-v0.1", 32, 8, 32768, false, false, 436518920},
    // 384 MiB + 4 * 16,388 + 16,384 + 7 * 8 MiB + 4 * 128 KiB: two wrapper sets for the windows.
    {"gpt-oss-20b/config.json", "gpt-oss-20b", 64, 8, 131072, true, false, 461979664},
    {"gemma-3-27b.json", "gemma-3-27b", 32, 16, 131072, true, false, 461979664},
    // Gemma-2: the scale and logit cap change no allocation (two wrapper sets for its windows, as GPT-OSS).
    {"gemma-2-9b.json", "gemma-2-9b", 16, 8, 8192, true, false, 461979664},
    // Qwen3-30B-A3B: a Qwen class not in SGLang's 512 MiB list (Qwen2, Qwen3, MiMo, Qwen3-VL(-MoE) only:
    // flashinfer_backend.py L421-431 of 0.5.23): the 384 MiB default, as Llama.
    {"qwen3-30b-a3b.json", "qwen3-30b-a3b", 32, 4, 40960, false, false, 436518920},
    // Llama-3.1-70B at TP1 constructs FlashInfer exactly as Llama-3.1-8B does (sglang-backends.md section 8).
    {"llama-3.1-70b.json", "llama-3.1-70b", 64, 8, 131072, false, false, 436518920},
    // head_dim 64 with GQA 4, and a group of 3: the same FlashInfer construction (no window, not Qwen).
    {"llama-3.2-1b.json", "llama-3.2-1b", 32, 8, 131072, false, false, 436518920},
    {"llama-3.2-3b.json", "llama-3.2-3b", 24, 8, 131072, false, false, 436518920},
    // Granite: its attention_multiplier scale changes no allocation (constructed as Llama).
    {"granite-3.1-8b.json", "granite-3.1-8b", 32, 8, 131072, false, false, 436518920},
    // Gemma-3-12B with its published rope_scaling (linear, factor 8): under transformers 5.19, which SGLang 0.5.23
    // pins, Gemma3TextConfig keys its rope parameters by layer type, so get_context_length finds no factor and the
    // context stays 131072 (it was 131072 x 8 under transformers 4); the construction is GPT-OSS's (two wrapper sets).
    {"gemma-3-12b-it.json", "gemma-3-12b-it", 16, 8, 131072, true, false, 461979664},
    // EXAONE-4.0-32B: three layers of four windowed ("LLLG", sliding_window 4096), so two wrapper sets as GPT-OSS;
    // llama3 rope_scaling leaves the context at 131072 (SGLang's get_context_length takes no llama3 factor).
    {"exaone-4.0-32b/config.json", "exaone-4.0-32b", 40, 8, 131072, true, false, 461979664},
};

std::int64_t phase(const MemoryReport& r, const std::string& b, const std::string& p, bool pinned = false) {
  const auto* ph = r.backend(b)->phase(p);
  return pinned ? ph->pinned_bytes : ph->device_bytes;
}

TEST(RealModels, MemoryMatchesFiguresComputedByHand) {
  for (const RealModel& m : kModels) {
    SCOPED_TRACE(m.file);
    MemoryRequest req;
    req.model = find_model_preset(kData + m.file);
    req.server.sglang_version = "30cb848d4";  // the figures of sglang-backends.md
    req.backends = backend_names();
    const MemoryReport r = measure_memory(req, [] { return std::make_unique<CpuDevice>(); });
    const Figures f = by_hand(m.heads, m.kv_heads, m.context, m.windowed, m.qwen, 0);
    EXPECT_EQ(f.fi_construct, m.fi_construct);
    EXPECT_EQ(phase(r, "flashinfer", "construct"), f.fi_construct);
    EXPECT_EQ(phase(r, "flashinfer", "construct", true), f.fi_construct_pinned);
    EXPECT_EQ(phase(r, "flashinfer", "graph_state"), f.fi_graph_state);
    EXPECT_EQ(phase(r, "flashinfer", "capture"), f.fi_capture);
    EXPECT_EQ(phase(r, "flashinfer", "capture", true), f.fi_capture_pinned);
    EXPECT_EQ(phase(r, "trtllm_mha", "construct"), f.trt_construct);
    EXPECT_EQ(phase(r, "trtllm_mha", "construct", true), 0);
    EXPECT_EQ(phase(r, "trtllm_mha_legacy", "construct"), f.fi_construct + f.trt_construct);
    EXPECT_EQ(phase(r, "trtllm_mha_legacy", "construct", true), f.fi_construct_pinned);
    for (const char* b : {"trtllm_mha", "trtllm_mha_legacy"}) {
      EXPECT_EQ(phase(r, b, "graph_state"), f.trt_graph_state) << b;
      EXPECT_EQ(phase(r, b, "capture"), f.trt_capture) << b;
      EXPECT_EQ(phase(r, b, "capture", true), 0) << b;
    }
    const auto s = memory_saving(r, "trtllm_mha_legacy", "trtllm_mha");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->device_bytes, f.fi_construct) << "the change saves FlashInfer's whole construction";
  }
}

TEST(RealModels, MemoryCommandOnConfigFiles) {
  // The binary, from another directory, at the default SGLang (0.5.23: T1 has XQA's 8 MiB in front).
  test::TempDir d;
  for (const RealModel& m : kModels) {
    SCOPED_TRACE(m.file);
    const auto r = test::run_attnbench("memory --device cpu --format json --model " + kData + m.file, d);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_NE(j["model"].get<std::string>().find(m.name), std::string::npos) << j["model"];
    const Figures f = by_hand(m.heads, m.kv_heads, m.context, m.windowed, m.qwen, 8 * MiB);
    std::map<std::string, std::int64_t> total;
    for (const auto& b : j["backends"]) {
      ASSERT_FALSE(b.contains("error")) << b["error"];
      for (const auto& p : b["phases"]) total[b["backend"].get<std::string>()] += p["device_bytes"].get<std::int64_t>();
    }
    EXPECT_EQ(total["flashinfer"], f.fi_construct + f.fi_graph_state + f.fi_capture);
    EXPECT_EQ(total["trtllm_mha"], f.trt_construct + f.trt_graph_state + f.trt_capture);
    EXPECT_EQ(total["trtllm_mha_legacy"], f.fi_construct + f.trt_construct + f.trt_graph_state + f.trt_capture);
  }
}

// Why a row may be skipped: the two limits SGLang's FlashInfer backend has for these models.
// `windowed`: the model as read has a window on some layer (Mistral's is not applied, as in SGLang).
std::string expected_skip(const std::string& model, bool windowed, const ResultRow& row) {
  if (row.backend != "flashinfer") return "";
  if (model == "gpt-oss-20b") return "SGLang's FlashInfer backend does not pass attention sinks to its kernels";
  if (row.case_id.rfind("verify/", 0) == 0 && windowed)
    return "SGLang's FlashInfer EAGLE verify on a windowed layer reads each request's first min(seq_len, window) + N cache slots, not its last window (no kv_start_idx; 0.5.23: flashinfer_backend.py L2284-2293, eagle_info.py L90-133): not modelled";
  return "";
}

struct ValidateRun {
  const char* file;
  const char* name;
  const char* options;  // lengths past each window, so the windows cut
};

class RealModelValidate : public ::testing::TestWithParam<ValidateRun> {};

TEST_P(RealModelValidate, EveryModeAndBackendOnTheCpu) {
  const ValidateRun& run = GetParam();
  test::TempDir d;
  const std::string csv = d.file("v.csv");
  const auto r = test::run_attnbench(std::string("validate --device cpu --quiet --model ") + kData + run.file +
                                         " --mode decode,extend,verify --backend all --batch 2 --extend-len 16" +
                                         " --draft-tokens 3 --page-size 16 " + run.options + " --out " + csv,
                                     d);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto rows = read_results_csv(csv);
  ASSERT_EQ(rows.size(), 3u * 3u) << "3 modes x 3 backends";
  for (const ResultRow& row : rows) {
    SCOPED_TRACE(row.case_id + " " + row.backend);
    EXPECT_NE(row.case_id.find(std::string("/") + run.name + "/L="), std::string::npos);
    EXPECT_EQ(row.case_id.find(','), std::string::npos);
    EXPECT_EQ(row.case_id.find("/sinks") != std::string::npos, std::string(run.name) == "gpt-oss-20b")
        << "GPT-OSS runs with its sinks without --sinks";
    const std::string skip = expected_skip(run.name, find_model_preset(kData + run.file).has_sliding_window(), row);
    if (!skip.empty()) {
      EXPECT_EQ(row.status, RowStatus::skipped);
      EXPECT_NE(row.note.find(skip), std::string::npos) << row.note;
      continue;
    }
    EXPECT_EQ(row.status, RowStatus::ok) << row.note;
    ASSERT_TRUE(row.ref_pass.has_value());
    EXPECT_TRUE(*row.ref_pass);
    if (row.backend == "trtllm_mha") {
      EXPECT_NE(row.bitwise_equal_to.find("trtllm_mha_legacy"), std::string::npos);
    }
  }
}

// A Gemma-2 whose cap bites (attn_logit_softcapping 1: the logits of the seeded data reach several units, and
// Gemma-2's real 50 changes the outputs by less than the bf16 tolerance): every mode and backend validates on the
// CPU against the uncapped reference, as SGLang runs it (FlashInfer: the cap is given to forward() but fixed at
// plan(), where SGLang passes none; trtllm_mha: no cap parameter at all); every row says so. A backend that
// applied the cap would fail here (ReferenceLayer.TakesTheModelsScaleAndTheBackendsLogitCap: the references
// differ beyond the tolerance).
TEST(RealModels, Gemma2LogitCapIsDroppedAsSglangDropsIt) {
  test::TempDir d;
  test::write_file(d.file("g2cap.json"), R"({"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2",
      "num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 64,
      "max_position_embeddings": 4096, "sliding_window": 24, "torch_dtype": "bfloat16",
      "query_pre_attn_scalar": 48, "attn_logit_softcapping": 1.0})");
  const std::string csv = d.file("v.csv");
  const auto r = test::run_attnbench("validate --device cpu --quiet --model " + d.file("g2cap.json") +
                                         " --mode decode,extend,verify --backend all --batch 2 --extend-len 16"
                                         " --draft-tokens 3 --page-size 16 --kv-len 60 --prefix-len 40 --out " + csv,
                                     d);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto rows = read_results_csv(csv);
  ASSERT_EQ(rows.size(), 3u * 3u) << "3 modes x 3 backends";
  int checked = 0;
  for (const ResultRow& row : rows) {
    SCOPED_TRACE(row.case_id + " " + row.backend);
    if (row.backend == "flashinfer" && row.case_id.rfind("verify/", 0) == 0) {
      EXPECT_EQ(row.status, RowStatus::skipped) << "a window with verify, as for every windowed model";
      continue;
    }
    ASSERT_EQ(row.status, RowStatus::ok) << row.note;
    ASSERT_TRUE(row.ref_pass.has_value());
    EXPECT_TRUE(*row.ref_pass) << row.note;
    ++checked;
    const std::string why = row.backend == "flashinfer"
                                ? "uncapped: SGLang's FlashInfer backend passes logits_soft_cap to forward() only, "
                                  "not to plan(), where FlashInfer fixes it (the model's 1 is dropped; sglang#33915)"
                                : "uncapped: SGLang's trtllm_mha passes no logit soft cap to its kernels (the model's "
                                  "1 is ignored)";
    EXPECT_NE(row.note.find(why), std::string::npos) << row.note;
    EXPECT_EQ(row.note.find("not compared"), std::string::npos) << "all uncapped: compared" << row.note;
    if (row.backend != "flashinfer") {
      const std::string other = row.backend == "trtllm_mha" ? "trtllm_mha_legacy" : "trtllm_mha";
      EXPECT_NE(row.bitwise_equal_to.find(other), std::string::npos) << "the same kernels";
    }
  }
  EXPECT_EQ(checked, 8);
}

// Phi-3-mini (microsoft/Phi-3-mini-4k-instruct's published shape: hidden_size 3072 / 32 heads = head_dim 96):
// a head size attnbench's kernels do not take is exit 2 naming the file and where head_dim came from, in every command.
TEST(RealModels, UnsupportedHeadDimIsRefusedNamingWhereItCameFrom) {
  test::TempDir d;
  test::write_file(d.file("phi-3-mini.json"), R"({"architectures": ["Phi3ForCausalLM"], "model_type": "phi3",
      "hidden_size": 3072, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
      "max_position_embeddings": 4096, "sliding_window": 2047, "torch_dtype": "bfloat16"})");
  for (const char* cmd : {"memory --device cpu", "validate --device cpu --quiet --mode decode --batch 1 --kv-len 64"}) {
    SCOPED_TRACE(cmd);
    const auto r = test::run_attnbench(std::string(cmd) + " --model " + d.file("phi-3-mini.json"), d);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("--model " + d.file("phi-3-mini.json") + ": head_dim 96 (derived as hidden_size 3072 / num_attention_heads 32) "
                         "is not supported (64, 128 or 256"),
              std::string::npos)
        << r.err;
  }
  // A written head_dim the kernels do not take names the key alone.
  test::write_file(d.file("hd80.json"), R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 2560,
      "head_dim": 80, "num_hidden_layers": 2, "num_attention_heads": 32, "num_key_value_heads": 8,
      "max_position_embeddings": 4096, "torch_dtype": "bfloat16"})");
  const auto r = test::run_attnbench("memory --device cpu --model " + d.file("hd80.json"), d);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--model " + d.file("hd80.json") + ": head_dim 80 (head_dim) is not supported (64, 128 or 256"),
            std::string::npos)
      << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    TestsData, RealModelValidate,
    ::testing::Values(ValidateRun{"qwen3-32b/config.json", "qwen3-32b", "--layers 2 --kv-len 100 --prefix-len 40"},
                      ValidateRun{"mistral-7b-v0.1.json", "mistral-7b-v0.1", "--layers 2 --kv-len 4150 --prefix-len 4120"},
                      ValidateRun{"gpt-oss-20b/config.json", "gpt-oss-20b", "--layers 2 --kv-len 200 --prefix-len 150"},
                      // 6 layers: the sixth is Gemma's full-attention layer.
                      ValidateRun{"gemma-3-27b.json", "gemma-3-27b", "--layers 6 --kv-len 1100 --prefix-len 1050"},
                      // As published: heads, head_dim, scale and pattern are transformers' class defaults (8 / 4
                      // heads of 256, window 1024 on five layers of six).
                      ValidateRun{"gemma-3-4b-it/config.json", "gemma-3-4b-it", "--layers 6 --kv-len 1100 --prefix-len 1050"},
                      // Layer 0 windowed (4096), layer 1 global; scale 256**-0.5; its cap 50 dropped by both backends.
                      ValidateRun{"gemma-2-9b.json", "gemma-2-9b", "--layers 2 --kv-len 4150 --prefix-len 4120"},
                      ValidateRun{"llama-3.1-70b.json", "llama-3.1-70b", "--layers 2 --kv-len 100 --prefix-len 40"},
                      // Scale attention_multiplier 1/128, not 128**-0.5: every backend and the reference take it.
                      ValidateRun{"granite-3.1-8b.json", "granite-3.1-8b", "--layers 2 --kv-len 100 --prefix-len 40"},
                      // 4 layers: "LLLG" windows layers 0-2 (4095 keys each), layer 3 global; 40 / 8 heads (GQA 5).
                      ValidateRun{"exaone-4.0-32b/config.json", "exaone-4.0-32b", "--layers 4 --kv-len 4150 --prefix-len 4120"}),
    [](const ::testing::TestParamInfo<ValidateRun>& i) {
      std::string n = i.param.name;
      for (char& c : n)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return n;
    });

}  // namespace
}  // namespace attnbench
