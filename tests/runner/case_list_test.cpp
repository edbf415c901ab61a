// The case list (`attnbench run --list-cases --format csv`) is an API read by scripts/peer_flashinfer.py:
// its header and its rows are pinned here byte for byte, over models and server settings that move every
// backend-derived column (FlashInfer's workspace for Qwen architectures, deterministic mode and the environment;
// use_tensor_cores from the GQA ratio and the environment; TRTLLM's workspace read on entry).
#include "runner/case_list.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "core/units.hpp"
#include "support/test_util.hpp"
#include "support/tiny_configs.hpp"

namespace attnbench {
namespace {

std::string case_list_text(const RunPlan& plan, const RunSettings& s, const std::vector<std::string>& timings) {
  std::ostringstream os;
  write_case_list_csv(os, expand_cases(plan), s, timings);
  return os.str();
}

const char* const kHeader =
    "case_list_version,case_id,mode,model,architecture,layers,num_qo_heads,num_kv_heads,num_attention_heads,head_dim,"
    "dtype,page_size,batch,q_tokens,prefix_lens,new_lens,draft_tokens,seed,sinks,layer_windows,sm_scale,context_len,"
    "max_running_requests,cuda_graph_max_bs,flashinfer_workspace_bytes,flashinfer_use_tensor_cores,"
    "flashinfer_use_paged,trtllm_workspace_bytes,timings,warmup,min_samples,max_samples,target_spread_pct,"
    "time_budget_s,flush_l2,kv_cache_dtype,k_scale,v_scale,runner_sliding_window_size,flashinfer_extend_ragged,config_sliding_window\n";

TEST(CaseList, HeaderIsTheColumnList) {
  std::string joined;
  for (const auto& c : case_list_columns()) joined += (joined.empty() ? "" : ",") + c;
  EXPECT_EQ(joined + "\n", kHeader);
}

TEST(CaseList, DefaultServerArgumentsAcrossModelsAndModes) {
  RunPlan p;
  p.models = {"tiny", "qwen2.5-7b", "tiny-swa", "llama-3.1-8b"};
  p.modes = {"decode", "extend", "verify"};
  p.page_sizes = {16};
  p.batches = {2};
  p.kv_lens = {40};
  p.prefix_lens = {8};
  p.extend_lens = {5};
  p.draft_tokens = 3;
  p.model.layers = 2;
  RunSettings s;
  const std::string want = std::string(kHeader) +
      "1,decode/tiny/L=2/b=2/kv=40/p=16/bf16,decode,tiny,LlamaForCausalLM,2,4,2,4,64,bf16,16,2,2,40;40,1;1,0,1,0,-1;-1,0.125,4096,4096,256,402653184,0,0,536870912,eager,3,10,200,5,1,1,bf16,1,1,-1,1,-1\n"
      "1,extend/tiny/L=2/b=2/prefix=8/ext=5/p=16/bf16,extend,tiny,LlamaForCausalLM,2,4,2,4,64,bf16,16,2,10,8;8,5;5,0,1,0,-1;-1,0.125,4096,4096,256,402653184,0,0,536870912,eager,3,10,200,5,1,1,bf16,1,1,-1,1,-1\n"
      "1,verify/tiny/L=2/b=2/kv=40/draft=3/p=16/bf16,verify,tiny,LlamaForCausalLM,2,4,2,4,64,bf16,16,2,6,40;40,3;3,3,1,0,-1;-1,0.125,4096,4096,256,402653184,0,0,536870912,eager,3,10,200,5,1,1,bf16,1,1,-1,1,-1\n"
      "1,decode/qwen2.5-7b/L=2/b=2/kv=40/p=16/bf16,decode,qwen2.5-7b,Qwen2ForCausalLM,2,28,4,28,128,bf16,16,2,2,40;40,1;1,0,1,0,-1;-1,0.0883883461356163,32768,4096,256,536870912,1,0,536870912,eager,3,10,200,5,1,1,bf16,1,1,-1,1,-1\n"
      "1,extend/qwen2.5-7b/L=2/b=2/prefix=8/ext=5/p=16/bf16,extend,qwen2.5-7b,Qwen2ForCausalLM,2,28,4,28,128,bf16,16,2,10,8;8,5;5,0,1,0,-1;-1,0.0883883461356163,32768,4096,256,536870912,1,0,536870912,eager,3,10,200,5,1,1,bf16,1,1,-1,1,-1\n"
      "1,verify/qwen2.5-7b/L=2/b=2/kv=40/draft=3/p=16/bf16,verify,qwen2.5-7b,Qwen2ForCausalLM,2,28,4,28,128,bf16,16,2,6,40;40,3;3,3,1,0,-1;-1,0.0883883461356163,32768,4096,256,536870912,1,0,536870912,eager,3,10,200,5,1,1,bf16,1,1,-1,1,-1\n"
      "1,decode/tiny-swa/L=2/b=2/kv=40/p=16/bf16,decode,tiny-swa,Gemma3ForCausalLM,2,4,2,4,64,bf16,16,2,2,40;40,1;1,0,1,0,31;-1,0.125,4096,4096,256,402653184,0,0,536870912,eager,3,10,200,5,1,1,bf16,1,1,31,1,32\n"
      "1,extend/tiny-swa/L=2/b=2/prefix=8/ext=5/p=16/bf16,extend,tiny-swa,Gemma3ForCausalLM,2,4,2,4,64,bf16,16,2,10,8;8,5;5,0,1,0,31;-1,0.125,4096,4096,256,402653184,0,0,536870912,eager,3,10,200,5,1,1,bf16,1,1,31,1,32\n"
      "1,verify/tiny-swa/L=2/b=2/kv=40/draft=3/p=16/bf16,verify,tiny-swa,Gemma3ForCausalLM,2,4,2,4,64,bf16,16,2,6,40;40,3;3,3,1,0,31;-1,0.125,4096,4096,256,402653184,0,0,536870912,eager,3,10,200,5,1,1,bf16,1,1,31,1,32\n"
      "1,decode/llama-3.1-8b/L=2/b=2/kv=40/p=16/bf16,decode,llama-3.1-8b,LlamaForCausalLM,2,32,8,32,128,bf16,16,2,2,40;40,1;1,0,1,0,-1;-1,0.0883883461356163,131072,4096,256,402653184,1,0,536870912,eager,3,10,200,5,1,1,bf16,1,1,-1,1,-1\n"
      "1,extend/llama-3.1-8b/L=2/b=2/prefix=8/ext=5/p=16/bf16,extend,llama-3.1-8b,LlamaForCausalLM,2,32,8,32,128,bf16,16,2,10,8;8,5;5,0,1,0,-1;-1,0.0883883461356163,131072,4096,256,402653184,1,0,536870912,eager,3,10,200,5,1,1,bf16,1,1,-1,1,-1\n"
      "1,verify/llama-3.1-8b/L=2/b=2/kv=40/draft=3/p=16/bf16,verify,llama-3.1-8b,LlamaForCausalLM,2,32,8,32,128,bf16,16,2,6,40;40,3;3,3,1,0,-1;-1,0.0883883461356163,131072,4096,256,402653184,1,0,536870912,eager,3,10,200,5,1,1,bf16,1,1,-1,1,-1\n";
  EXPECT_EQ(case_list_text(p, s, {"eager"}), want);
}

// --kv-cache-dtype fp8_e4m3: the id names the cache, kv_cache_dtype says it, SGLang's default scales are 1, and
// FlashInfer's decode takes tensor cores for fp8 even where Hq / Hkv < 4 (tiny: 4 / 2).
TEST(CaseList, Fp8KvCacheDtypeColumnsAndTensorCores) {
  RunPlan p;
  p.models = {"tiny"};
  p.batches = {2};
  p.kv_lens = {40};
  p.model.kv_cache_dtype = "fp8_e4m3";
  RunSettings s;
  const std::string want = std::string(kHeader) +
      "1,decode/tiny/b=2/kv=40/p=64/bf16/kvcache=fp8_e4m3,decode,tiny,LlamaForCausalLM,2,4,2,4,64,bf16,64,2,2,40;40,1;1,0,1,0,-1;-1,0.125,4096,4096,256,402653184,1,0,536870912,eager,3,10,200,5,1,1,fp8_e4m3,1,1,-1,1,-1\n";
  EXPECT_EQ(case_list_text(p, s, {"eager"}), want);
}

// runner_sliding_window_size is SGLang's model_runner.sliding_window_size: the windowed layers' window for Gemma-3
// (tiny-swa above: 31 = sliding_window - 1), -1 for Cohere2, whose layers carry sliding_window itself (layer 0..2
// of every 4) but whose class gives the model runner none (models/commandr.py): what tells a peer that SGLang's
// FlashInfer backend plans one wrapper set and applies no window there.
TEST(CaseList, Cohere2LayersHaveWindowsTheModelRunnerDoesNotKnow) {
  test::TempDir d;
  const std::string cfg = test::write_cohere2_tiny(d);
  RunPlan p;
  p.models = {cfg};
  p.batches = {1};
  p.kv_lens = {40};
  const std::string text = case_list_text(p, RunSettings{}, {"eager"});
  EXPECT_NE(text.find(",Cohere2ForCausalLM,4,4,2,4,64,"), std::string::npos) << text;
  EXPECT_NE(text.find(",32;32;32;-1,"), std::string::npos) << text;
  ASSERT_GE(text.size(), 9u);
  EXPECT_EQ(text.substr(text.size() - 9), ",-1,1,32\n") << text;  // config_sliding_window: 32 itself
}

// flashinfer_extend_ragged: 0 for a multimodal model, whose extend SGLang's FlashInfer runs on the paged path.
TEST(CaseList, AMultimodalModelsFlashInferExtendIsPaged) {
  test::TempDir d;
  const std::string cfg = test::write_qwen25_vl_tiny(d);
  RunPlan p;
  p.models = {cfg};
  p.modes = {"extend"};
  p.batches = {1};
  p.prefix_lens = {8};
  p.extend_lens = {5};
  const std::string text = case_list_text(p, RunSettings{}, {"eager"});
  ASSERT_GE(text.size(), 9u);
  EXPECT_EQ(text.substr(text.size() - 9), ",-1,0,-1\n") << text;
}

TEST(CaseList, EnvironmentAndDeterministicModeMoveTheDerivedColumns) {
  RunPlan p;
  p.models = {"tiny", "qwen2.5-7b"};
  p.modes = {"decode"};
  p.page_sizes = {32};
  p.batches = {3};
  p.kv_lens = {17};
  p.length_dist = "uniform";
  p.length_min = 2;
  p.seeds = {7};
  p.sinks = true;
  p.model.server.env_flashinfer_workspace_size = 123 * MiB;
  p.model.server.env_flashinfer_use_tensor_core = true;
  p.model.server.env_flashinfer_use_paged = true;
  p.model.server.max_running_requests = 64;
  p.model.server.cuda_graph_max_bs = 32;
  RunSettings s;
  s.flush_l2 = false;
  s.sampling.warmup = 1;
  s.sampling.min_samples = 2;
  s.sampling.max_samples = 9;
  s.sampling.target_spread_pct = 2.5;
  s.sampling.time_budget_s = 0.25;
  std::string got = case_list_text(p, s, {"eager", "graph"});
  p.model.server.enable_deterministic_inference = true;
  p.model.server.env_flashinfer_use_tensor_core = false;
  p.model.server.env_flashinfer_workspace_size.reset();
  got += case_list_text(p, s, {"graph"});
  const std::string want = std::string(kHeader) +
      "1,\"decode/tiny/b=3/kv=17/uniform[2,L]/p=32/bf16/seed=7/sinks\",decode,tiny,LlamaForCausalLM,2,4,2,4,64,bf16,32,3,3,13;16;8,1;1;1,0,7,1,-1;-1,0.125,4096,64,32,128974848,1,1,128974848,eager;graph,1,2,9,2.5,0.25,0,bf16,1,1,-1,0,-1\n"
      "1,\"decode/qwen2.5-7b/b=3/kv=17/uniform[2,L]/p=32/bf16/seed=7/sinks\",decode,qwen2.5-7b,Qwen2ForCausalLM,28,28,4,28,128,bf16,32,3,3,13;16;8,1;1;1,0,7,1,-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1,0.0883883461356163,32768,64,32,536870912,1,1,128974848,eager;graph,1,2,9,2.5,0.25,0,bf16,1,1,-1,0,-1\n" +
      std::string(kHeader) +
      "1,\"decode/tiny/b=3/kv=17/uniform[2,L]/p=32/bf16/seed=7/sinks\",decode,tiny,LlamaForCausalLM,2,4,2,4,64,bf16,32,3,3,13;16;8,1;1;1,0,7,1,-1;-1,0.125,4096,64,32,2147483648,0,1,536870912,graph,1,2,9,2.5,0.25,0,bf16,1,1,-1,0,-1\n"
      "1,\"decode/qwen2.5-7b/b=3/kv=17/uniform[2,L]/p=32/bf16/seed=7/sinks\",decode,qwen2.5-7b,Qwen2ForCausalLM,28,28,4,28,128,bf16,32,3,3,13;16;8,1;1;1,0,7,1,-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1;-1,0.0883883461356163,32768,64,32,2147483648,0,1,536870912,graph,1,2,9,2.5,0.25,0,bf16,1,1,-1,0,-1\n";
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace attnbench
