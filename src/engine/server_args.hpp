// SGLang server-side parameters that shape attention backends, with SGLang's names and defaults, and the
// simulated process environment (os.environ) that SGLang reads and writes while constructing backends.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/model_config.hpp"
#include "engine/sglang_profile.hpp"

namespace attnbench {

struct ServerArgs {
  int context_len = 0;  // --context-length; 0: the model's
  // SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN (--allow-overwrite-longer-context-len): without it SGLang refuses a
  // --context-length above the model's derived one (configs/model_config.py, ModelConfig._derive_context_length:
  // ValueError "User-specified context_length (N) is greater than the derived context_length (M)"); with it, it
  // warns and takes N.
  bool allow_overwrite_longer_context_len = false;
  // --max-running-requests: R = req_to_token_pool.size = the backend's max_bs (alignment 1 at TP1 without
  // two-batch overlap: utils/common.py L3665). SGLang derives it from token capacity
  // (clamp(cap/context*512, 2048, 4096), kv_cache_configurator.py L1819-1832); 4096 is the H200 value.
  int max_running_requests = 4096;
  // --cuda-graph-max-bs: 256 on an H200 at tp<4 (server_args.py L4774-4782); 160 when memory is unknown.
  int cuda_graph_max_bs = 256;
  std::vector<int> cuda_graph_bs;  // --cuda-graph-bs: explicit capture list; empty: SGLang's default list
  bool disable_cuda_graph = false;
  // --page-size. FlashInfer ignores it (always token granular); TRTLLM-MHA accepts 16/32/64/128 and SGLang
  // forces anything else to 64 (arg_groups/overrides.py L2173-2186), so 64 is attnbench's default.
  int page_size = 64;
  int speculative_num_draft_tokens = 0;  // --speculative-num-draft-tokens; 0: no speculative decoding
  bool enable_deterministic_inference = false;
  // Environment at process start (unset: std::nullopt).
  std::optional<std::int64_t> env_flashinfer_workspace_size;  // SGLANG_FLASHINFER_WORKSPACE_SIZE, bytes
  std::optional<bool> env_flashinfer_use_tensor_core;         // SGLANG_FLASHINFER_USE_TENSOR_CORE
  bool env_flashinfer_use_paged = false;                      // SGLANG_FLASHINFER_USE_PAGED
  // Which "inherit AttentionBackend" variant trtllm_mha models: false = drop kv_indptr / kv_last_page_len
  // (PRs #30830, #35219; design.md), true = keep them (PRs #31394, #44073).
  bool trtllm_keep_indptr = false;

  // --sglang: the modelled SGLang release (engine/sglang_profile.hpp); its facts gate the backends' branches.
  std::string sglang_version = "0.5.23";
  // --arch: the GPU architecture whose path the backends take (90 = SM90, 100 = SM100, 120 = SM120);
  // 0: the device's (a CUDA device's compute capability; the CPU device models an H200, SM90).
  int arch = 0;
  // SGLANG_TRTLLM_MHA_DECODE_SEQ_LEN_SPLITS (0.5.23 environ.py L1267-1270; default 1, values < 1 raise):
  // trtllm_mha decode sorts the batch by length and runs it in this many groups per layer (L1531-1561).
  int trtllm_decode_seq_len_splits = 1;
  // --kv-layout: auto (the profile's: one allocation per layer with K and V as its halves in 0.5.23,
  // separate buffers before) or separate (0.5.23's fallback when K and V shapes differ, memory_pool.py
  // L2646-2648: fmha_v2 prefill then copies the batch's pages every layer).
  std::string kv_layout = "auto";

  const SglangProfile& profile() const { return find_sglang_profile(sglang_version); }
  // Whether the KV pool allocates each layer's K and V as the two halves of one buffer.
  bool fused_kv_pool() const { return kv_layout == "auto" && profile().fused_kv_pool; }

  int effective_context_len(const ModelConfig& m) const { return context_len > 0 ? context_len : m.context_len; }
  // The decode capture list: cuda_graph_bs, or SGLang's default for cuda_graph_max_bs capped at R.
  std::vector<int> capture_batch_sizes() const;
};

// SGLang's default decode capture list for a max batch size (server_args.py L5049-5064):
//   no spec: [1,2,4,8,12] + range(16,257,8) + range(272,512,16) + range(512,max_bs+1,32)
//   spec:    range(1,9) + range(10,33,2) + range(40,65,4) + range(72,257,8) + range(272,max_bs+1,16)
// filtered to <= max_bs; max_bs is appended when missing (newer _generate_decode_cuda_graph_batch_sizes).
// The tails above 256 are from SGLang releases after the pinned commit [uncertain at 30cb848d4].
std::vector<int> default_capture_batch_sizes(int max_bs, bool speculative);

// The process environment SGLang consults (os.environ), seeded from ServerArgs and written by backends
// (FlashInfer's ctor .set()s SGLANG_FLASHINFER_WORKSPACE_SIZE for Qwen archs and deterministic mode).
class ProcessEnv {
 public:
  explicit ProcessEnv(const ServerArgs& args);
  bool is_set(const std::string& name) const { return vars_.count(name) != 0; }
  std::int64_t get_int(const std::string& name, std::int64_t fallback) const;
  std::optional<bool> get_bool(const std::string& name) const;  // "true"/"1" or "false"/"0"; nullopt if unset
  void set_int(const std::string& name, std::int64_t value) { vars_[name] = std::to_string(value); }

 private:
  std::map<std::string, std::string> vars_;
};

// Range and consistency checks of the server arguments against a model; throws InputError naming the option.
void validate_server_args(const ServerArgs& args, const ModelConfig& model);

}  // namespace attnbench
