// SGLang's own attention-backend test shapes through `attnbench validate` on the CPU: every backend, decode /
// extend / verify, each output checked against the float64 reference. The shapes are SGLang's (facts only:
// heads, head_dim, page sizes, per-request prefix / new lengths, draft tokens, windows, KV dtypes); each group
// names the SGLang test it comes from. The tiny models are tests/data/sglang-kit/*.json (the kit's
// TinyModelConfig: head_dim 64 = hidden 256 / 4 heads), the GPT-OSS shape is tests/data/gpt-oss-20b.
//
// Sizes are kept small for speed (2 layers, context 512, a 32 MiB workspace, no CUDA graphs): the validation
// path is the same at any size.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "report/results_io.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

const std::string kData = ATTNBENCH_SOURCE_DIR "/tests/data/";
const std::string kKit = kData + "sglang-kit/";

// Skip reasons SGLang 0.5.23 itself gives (or the modelled limits attnbench states): a row may be skipped only
// for one of these.
const char* const kFlashinferSinks = "SGLang's FlashInfer backend does not pass attention sinks to its kernels";
const char* const kFlashinferSwaVerify = "SGLang's FlashInfer EAGLE verify on a windowed layer reads each request's first min(seq_len, window) + N cache slots, not its last window (no kv_start_idx; 0.5.23: flashinfer_backend.py L2284-2293, eagle_info.py L90-133): not modelled";

struct Shape {
  const char* name;     // SGLang's case name (or a short description)
  const char* source;   // where the shape comes from
  std::string model;    // a config.json path
  std::string trace;    // "prefix:new prefix:new ...": one request each (decode / verify: the whole is cached)
  std::string options;  // modes, page sizes, dtypes, draft tokens, ...
  int rows;             // rows expected (cases x backends)
};

// The trace CSV attnbench reads for `spec`.
std::string trace_csv(const std::string& spec) {
  std::ostringstream out;
  out << "request_id,prefix_len,extend_len\n";
  std::istringstream in(spec);
  int i = 0;
  for (std::string item; in >> item; ++i) out << "r" << i << "," << item.replace(item.find(':'), 1, ",") << "\n";
  return out.str();
}

constexpr const char* kDense = "SGLang test kit attention_unittest/attention_methods/dense_attention.py "
                               "(make_dense_cases), run by test/registered/attention/unittests/dense/test_flashinfer.py "
                               "and test_trtllm_mha.py";
constexpr const char* kDenseFlashinfer = "test/registered/attention/unittests/dense/test_flashinfer.py";
constexpr const char* kDenseTrtllm = "test/registered/attention/unittests/dense/test_trtllm_mha.py";
constexpr const char* kSwa = "dense_attention.py make_swa_*_input_config_cases and test_flashinfer.py "
                             "SWA_RAGGED_WINDOW_CASES (sliding_window_size 4 = config sliding_window 5)";
constexpr const char* kTrtllmUnit = "python/sglang/test/attention/test_trtllm_mha_backend.py (DEFAULT_CONFIG: "
                                    "GptOssForCausalLM, 64 / 8 heads, head_dim 64, page 64, bf16 / fp8_e4m3 KV)";

const std::string kAllModes = " --mode decode,extend,verify";
const std::string kTrtPages = " --page-size 16,32,64,128";  // TRTLLM-MHA's pages (0.5.23 arg_groups/overrides.py L1174-1187)

std::vector<Shape> shapes() {
  const std::string mha = kKit + "kit-mha.json", gqa = kKit + "kit-gqa.json", mqa = kKit + "kit-mqa.json";
  return {
      // Input layouts: prefix 0 / mid-page / exact page, new tokens across page edges, batch of 1 and 3.
      {"mha_extend_ragged_page_boundary", kDense, mha, "0:15 8:8 16:1", kAllModes + kTrtPages + " --draft-tokens 3", 3 * 4 * 3},
      {"mha_extend_zero_prefix_input_page_edges", kDense, mha, "0:15 0:16 0:17", kAllModes + kTrtPages + " --draft-tokens 3", 36},
      // mha_extend_cross_page_boundary (15, 2), mha_extend_prefix_exact_page (16, 2), mha_extend_page32_cross_boundary (31, 2)
      {"mha_extend_cross_and_exact_page", kDense, mha, "15:2 16:2 31:2", " --mode extend" + kTrtPages, 4 * 3},
      // mha_extend_total_exact_page (8, 8), also the MQA variant (make_dense_attention_config_cases)
      {"mqa_extend_total_exact_page", kDense, mqa, "8:8", kAllModes + kTrtPages + " --draft-tokens 3", 36},
      // mha_extend_page_size_1: FlashInfer only (SGLang forces TRTLLM-MHA's page size 1 to 64).
      {"mha_extend_page_size_1", kDenseFlashinfer, mha, "2:3 4:1", kAllModes + " --page-size 1 --backend flashinfer --draft-tokens 3", 3},
      // Decode around a page boundary (prefix 14, 15, 16 cached), GQA 4 / 2; and page 32 (31, 32).
      {"gqa_decode_page_boundary", kDense, gqa, "13:1 14:1 15:1", " --mode decode,verify" + kTrtPages + " --draft-tokens 3", 24},
      {"trtllm_mha_decode_page32_boundary", kDenseTrtllm, mha, "30:1 31:1", " --mode decode --page-size 32", 3},
      // MQA decode at batch 1 (prefix 7).
      {"mqa_decode_bsz1_nonzero_prefix", kDense, mqa, "6:1", " --mode decode,verify" + kTrtPages + " --draft-tokens 3", 24},
      // layout_extend_two_request_ragged: 12 / 12 heads.
      {"layout_extend_two_request_ragged", kDenseFlashinfer, kKit + "kit-mha12.json", "8:8 16:16", kAllModes + " --page-size 16 --draft-tokens 3", 9},
      // runner_eagle_verify_chain / runner_eagle_draft_decode_*_chain: prefix (4, 7), topk 1, 3 draft tokens;
      // EAGLE_DRAFT_RUNNER_CASES of the newer test_trtllm_mha.py: 4 and 6 draft tokens.
      {"runner_eagle_verify_chain_3", kDenseFlashinfer, mha, "3:1 6:1", " --mode verify --page-size 16 --draft-tokens 3", 3},
      {"runner_eagle_verify_chain_4", kDenseTrtllm, mha, "13:1 14:1 15:1", " --mode verify --page-size 16,32 --draft-tokens 4", 6},
      {"runner_eagle_verify_chain_6_gqa", kDenseTrtllm, gqa, "13:1 14:1 15:1", " --mode verify --page-size 16 --draft-tokens 6", 3},
      // Sliding window 4 (window_left 4): lengths below, at and beyond the window, with and without prefix.
      {"swa_extend_no_prefix_window_edges", kSwa, kKit + "kit-swa.json", "0:3 0:4 0:5", kAllModes + " --page-size 16,64 --draft-tokens 3", 18},
      {"swa_extend_prefix_window_edges", kSwa, kKit + "kit-swa.json", "3:2 4:2 5:2", kAllModes + " --page-size 16 --draft-tokens 3", 9},
      {"swa_window_extend_ragged_merge_beyond_window", kSwa, kKit + "kit-swa.json", "6:6 5:7", kAllModes + " --page-size 16 --draft-tokens 3", 9},
      {"swa_window_extend_ragged_no_prefix_beyond_window", kSwa, kKit + "kit-swa.json", "0:7 0:9", " --mode extend --page-size 32", 3},
      // test_trtllm_mha_backend.py basic_extend (64, 100, 80 new tokens, no prefix) and basic_decode (batch 4,
      // lengths in [64, 128]: here 64, 100, 80, 128), bf16 and fp8_e4m3 KV; GPT-OSS's learned sinks.
      {"basic_extend_bf16_kv_cache", kTrtllmUnit, kData + "gpt-oss-20b/config.json", "0:64 0:100 0:80",
       " --layers 2 --mode extend --page-size 64 --dtype bf16 --kv-cache-dtype auto", 3},
      {"basic_extend_fp8_kv_cache", kTrtllmUnit, kData + "gpt-oss-20b/config.json", "0:64 0:100 0:80",
       " --layers 2 --mode extend --page-size 64 --dtype bf16 --kv-cache-dtype fp8_e4m3", 3},
      {"basic_decode_fp8_kv_cache", kTrtllmUnit, kData + "gpt-oss-20b/config.json", "63:1 99:1 79:1 127:1",
       " --layers 2 --mode decode,verify --page-size 64 --dtype bf16 --kv-cache-dtype fp8_e4m3 --draft-tokens 4", 6},
      // Page 128 (sglang-backends.md section 6, test_trtllm_mha.py at 30cb848d4): XQA decode GQA 4 / 2 at
      // context 512; the SM100 trtllm-gen case, extend (0, 128) + (130, 5), GQA 4 / 2.
      {"xqa_decode_page128_gqa", kDenseTrtllm, gqa, "13:1 14:1 15:1", " --mode decode --page-size 128", 3},
      {"trtllm_gen_page128_extend_sm100", kDenseTrtllm, gqa, "0:128 130:5", " --mode extend,decode --page-size 128 --arch sm100", 6},
      // MHA at page 128 on SM90: SGLang 0.5.23 checks page 128 only off XQA (trtllm_mha_backend.py L374-390),
      // so it runs (attnbench refused it before).
      {"mha_page128_on_xqa", kDenseTrtllm, mha, "13:1 14:1 15:1", kAllModes + " --page-size 128 --draft-tokens 3", 9},
      // Real models of shapes no preset has (tests/data/README.md): head_dim 64 with GQA 4 (Llama-3.2-1B) and a
      // group of 3 (Llama-3.2-3B, 24 / 8 heads), at the kit's page-edge lengths, bf16 and fp8 KV.
      {"llama_3_2_1b_page_edges", kDense, kData + "llama-3.2-1b.json", "0:15 0:16 0:17",
       " --layers 2 --dtype bf16" + kAllModes + " --page-size 16,128 --draft-tokens 4", 18},
      {"llama_3_2_3b_fp8_ragged", kDense, kData + "llama-3.2-3b.json", "0:15 8:8 16:1",
       " --layers 2 --dtype bf16 --kv-cache-dtype fp8_e4m3" + kAllModes + " --page-size 32 --draft-tokens 4", 9},
  };
}

class SglangTestShapes : public ::testing::TestWithParam<Shape> {};

TEST_P(SglangTestShapes, ValidateOnTheCpu) {
  const Shape& s = GetParam();
  SCOPED_TRACE(std::string(s.name) + " from " + s.source);
  test::TempDir d;
  const std::string trace = d.file(std::string(s.name) + ".csv"), csv = d.file("v.csv");
  test::write_file(trace, trace_csv(s.trace));
  const bool one_backend = s.options.find("--backend") != std::string::npos;
  const std::string dtype = s.options.find("--dtype") != std::string::npos ? "" : " --dtype fp16";  // the kit's
  const auto r = test::run_attnbench("validate --device cpu --quiet --model " + s.model + " --trace " + trace + s.options +
                                         dtype + (one_backend ? "" : " --backend all") +
                                         " --context-length 512 --max-running-requests 8 --disable-cuda-graph"
                                         " --flashinfer-workspace-size 33554432 --out " + csv,
                                     d);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto rows = read_results_csv(csv);
  ASSERT_EQ(static_cast<int>(rows.size()), s.rows);
  int ok = 0;
  for (const ResultRow& row : rows) {
    SCOPED_TRACE(row.case_id + " " + row.backend);
    if (row.status == RowStatus::skipped) {
      const bool sinks = row.backend == "flashinfer" && row.case_id.find("/sinks") != std::string::npos;
      const bool swa_verify = row.backend == "flashinfer" && row.case_id.rfind("verify/kit-swa/", 0) == 0;
      EXPECT_TRUE(sinks || swa_verify) << "unexpected skip: " << row.note;
      EXPECT_TRUE(test::has(row.note, sinks ? kFlashinferSinks : kFlashinferSwaVerify)) << row.note;
      continue;
    }
    EXPECT_EQ(row.status, RowStatus::ok) << row.note;
    ASSERT_TRUE(row.ref_pass.has_value());
    EXPECT_TRUE(*row.ref_pass) << row.note;
    if (row.backend == "trtllm_mha") {
      EXPECT_TRUE(test::has(row.bitwise_equal_to, "trtllm_mha_legacy")) << row.bitwise_equal_to;
    }
    ++ok;
  }
  EXPECT_GT(ok, 0) << "every row skipped";
}

INSTANTIATE_TEST_SUITE_P(Grid, SglangTestShapes, ::testing::ValuesIn(shapes()),
                         [](const ::testing::TestParamInfo<Shape>& i) { return std::string(i.param.name); });

// SGLang's page-size-128 rule for trtllm_mha (GQA only) is architecture- and version-gated.
TEST(SglangTestShapes, Page128WithoutGqaIsRefusedWhereSglangRefusesIt) {
  test::TempDir d;
  const std::string base = "validate --device cpu --quiet --model " + kKit +
                           "kit-mha.json --mode decode --page-size 128 --batch 2 --kv-len 20 --context-length 512"
                           " --max-running-requests 8 --disable-cuda-graph --out " + d.file("v.csv");
  // SM100 (trtllm-gen): 0.5.23 checks it there (trtllm_mha_backend.py L374-390).
  auto r = test::run_attnbench(base + " --arch sm100", d);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(test::has(r.err, "--page-size: trtllm_mha with page size 128 needs grouped-query attention")) << r.err;
  EXPECT_TRUE(test::has(r.err, "L374-390")) << r.err;
  // 30cb848d4: the constructor's check on every architecture (L220-243).
  r = test::run_attnbench(base + " --sglang 30cb848d4", d);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(test::has(r.err, "L220-243")) << r.err;
  // `memory` follows the same rule: SM90 builds every backend at page 128 for an MHA model.
  r = test::run_attnbench("memory --device cpu --format json --page-size 128 --max-running-requests 8 --context-length 512"
                          " --model " + kKit + "kit-mha.json", d);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["backends"].size(), 3u) << r.out;
  for (const auto& b : j["backends"]) EXPECT_FALSE(b.contains("error")) << b.dump();
  // FlashInfer alone has no such rule anywhere.
  r = test::run_attnbench(base + " --arch sm100 --backend flashinfer", d);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace attnbench
