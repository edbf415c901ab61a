#include "engine/server_args.hpp"

#include <algorithm>

#include "core/errors.hpp"

namespace attnbench {

std::vector<int> default_capture_batch_sizes(int max_bs, bool speculative) {
  std::vector<int> bs;
  auto range = [&bs](int a, int b, int step) {
    for (int x = a; x < b; x += step) bs.push_back(x);
  };
  if (!speculative) {
    bs = {1, 2, 4, 8, 12};
    range(16, 257, 8);
    range(272, 512, 16);
    range(512, max_bs + 1, 32);
  } else {
    range(1, 9, 1);
    range(10, 33, 2);
    range(40, 65, 4);
    range(72, 257, 8);
    range(272, max_bs + 1, 16);
  }
  std::erase_if(bs, [max_bs](int x) { return x > max_bs; });
  if (max_bs >= 1 && std::find(bs.begin(), bs.end(), max_bs) == bs.end()) bs.push_back(max_bs);
  return bs;
}

std::vector<int> ServerArgs::capture_batch_sizes() const {
  std::vector<int> v =
      cuda_graph_bs.empty() ? default_capture_batch_sizes(cuda_graph_max_bs, speculative_num_draft_tokens > 0) : cuda_graph_bs;
  // get_batch_sizes_to_capture (0.5.23 wheel, model_executor/runner/base_cuda_graph_runner.py L92-102), for the
  // default and an explicit list alike: where the list reaches past req_to_token_pool.size (the running-request
  // cap) that size is added, sizes above it are dropped, and the list is sorted without repeats (attention TP 1:
  // the alignment filter keeps every size).
  if (!v.empty() && *std::max_element(v.begin(), v.end()) > max_running_requests) v.push_back(max_running_requests);
  std::erase_if(v, [this](int b) { return b > max_running_requests; });
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

ProcessEnv::ProcessEnv(const ServerArgs& args) {
  if (args.env_flashinfer_workspace_size) set_int("SGLANG_FLASHINFER_WORKSPACE_SIZE", *args.env_flashinfer_workspace_size);
  if (args.env_flashinfer_use_tensor_core)
    vars_["SGLANG_FLASHINFER_USE_TENSOR_CORE"] = *args.env_flashinfer_use_tensor_core ? "true" : "false";
  if (args.env_flashinfer_use_paged) vars_["SGLANG_FLASHINFER_USE_PAGED"] = "true";
}

std::int64_t ProcessEnv::get_int(const std::string& name, std::int64_t fallback) const {
  auto it = vars_.find(name);
  return it == vars_.end() ? fallback : std::stoll(it->second);
}

std::optional<bool> ProcessEnv::get_bool(const std::string& name) const {
  auto it = vars_.find(name);
  if (it == vars_.end()) return std::nullopt;
  return it->second == "true" || it->second == "1";
}

void validate_server_args(const ServerArgs& a, const ModelConfig& m) {
  auto fail = [](const std::string& msg) { throw InputError(msg); };
  if (a.context_len < 0) fail("--context-length (--context-len): must be positive (got " + std::to_string(a.context_len) + ")");
  if (a.context_len > (1 << 24)) fail("--context-length (--context-len): " + std::to_string(a.context_len) + " is beyond 16M tokens");
  // SGLang's _derive_context_length (0.5.23 wheel, configs/model_config.py L1291-1329): a user-specified
  // context_length above the one derived from the config (get_context_length) raises ValueError unless
  // SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN is true (environ.py L320, EnvBool: true / 1 / yes / y) or is_in_ci()
  // (SGLANG_IS_IN_CI, SGLang's own test runs: not modelled); at or below it, it is taken.
  if (a.context_len > m.context_len && m.context_len > 0 && !a.allow_overwrite_longer_context_len)
    fail("--context-length (--context-len): " + std::to_string(a.context_len) + " is greater than " + m.name +
         "'s derived context length " + std::to_string(m.context_len) +
         " (SGLang refuses it unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN is set: pass "
         "--allow-overwrite-longer-context-len to model that)");
  if (a.max_running_requests < 1 || a.max_running_requests > (1 << 20))
    fail("--max-running-requests: must be in [1, 1048576] (got " + std::to_string(a.max_running_requests) + ")");
  if (a.cuda_graph_max_bs < 1 || a.cuda_graph_max_bs > 8192)
    fail("--cuda-graph-max-bs: must be in [1, 8192] (got " + std::to_string(a.cuda_graph_max_bs) + ")");
  for (int b : a.cuda_graph_bs)
    if (b < 1 || b > 8192) fail("--cuda-graph-bs: batch sizes must be in [1, 8192] (got " + std::to_string(b) + ")");
  if (a.page_size < 1 || a.page_size > 4096 || (a.page_size & (a.page_size - 1)) != 0)
    fail("--page-size: must be a power of two in [1, 4096] (got " + std::to_string(a.page_size) + ")");
  if (a.speculative_num_draft_tokens < 0 || a.speculative_num_draft_tokens > 64)
    fail("--speculative-num-draft-tokens: must be in [0, 64] (got " + std::to_string(a.speculative_num_draft_tokens) + ")");
  if (a.env_flashinfer_workspace_size && (*a.env_flashinfer_workspace_size < 1 || *a.env_flashinfer_workspace_size > (64LL << 30)))
    fail("--flashinfer-workspace-size: must be in [1, 64 GiB] bytes");
  const SglangProfile& profile = find_sglang_profile(a.sglang_version);
  if (a.arch != 0 && a.arch != 90 && a.arch != 100 && a.arch != 120)
    fail("--arch: " + std::to_string(a.arch) + " is not a modelled architecture (sm90, sm100, sm120)");
  if (a.trtllm_decode_seq_len_splits < 1 || a.trtllm_decode_seq_len_splits > 4096)
    fail("--trtllm-decode-seq-len-splits: must be in [1, 4096] (SGLang raises below 1; got " +
         std::to_string(a.trtllm_decode_seq_len_splits) + ")");
  if (a.trtllm_decode_seq_len_splits > 1 && !profile.decode_seq_len_splits)
    fail("--trtllm-decode-seq-len-splits: SGLang " + profile.version +
         " has no SGLANG_TRTLLM_MHA_DECODE_SEQ_LEN_SPLITS (it came with 0.5.23)");
  if (a.kv_layout != "auto" && a.kv_layout != "separate")
    fail("--kv-layout: expected auto or separate (got '" + a.kv_layout + "')");
  if (m.num_layers < 1) fail("--layers: must be at least 1");
  if (m.num_attention_heads < 1 || m.num_key_value_heads < 1)
    fail("--model: head counts must be positive");
  if (m.tp_size < 1) fail("--tp-size: must be at least 1");
  if (const std::string problem = m.tp_split_problem(); !problem.empty())
    fail("--tp-size: " + m.name + ": " + problem + " (--tp-size, else the model's attnbench.tp_size)");
  if (!modelled_head_dim(m.head_dim))
    fail("--model " + (m.source.empty() ? m.name : m.source) + ": head_dim " + std::to_string(m.head_dim) +
         (m.head_dim_from.empty() ? std::string() : " (" + m.head_dim_from + ")") + " is not supported (" +
         kModelledHeadDims + ")");
}

}  // namespace attnbench
