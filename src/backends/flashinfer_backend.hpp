// FlashInferAttnBackend (python/sglang/srt/layers/attention/flashinfer_backend.py @30cb848d4), modelled:
// the same allocations at construction, graph state and capture (sglang-backends.md sections 1a, 2a), the
// same per-step metadata (a fresh kv_indices from req_to_token, plan() with its device-to-host reads), and
// the same kernel calls (token-indexed paged decode; extend = ragged + paged + merge, or paged only).
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "backends/attention_backend.hpp"
#include "backends/flashinfer_wrappers.hpp"

namespace attnbench {

// The attention logit cap under SGLang's FlashInfer backend. FlashInfer (>= 0.2) compiles the cap into the module
// that plan() / begin_forward() selects (decode.py / prefill.py plan: get_batch_decode_module(...,
// logits_soft_cap > 0) / get_batch_prefill_module(..., logits_soft_cap > 0, ...), the cap defaulting to None -> 0);
// the deprecated forward(..., logits_soft_cap=...) only stores a runtime scalar that a module planned without a cap
// never reads. SGLang passes logits_soft_cap=layer.logit_cap to forward() / forward_return_lse() only
// (sglang-backends.md §3.1 L269, L275-276; flashinfer_backend.py forward_decode / forward_extend) and none to
// any plan: decode begin_forward(kv_indptr, kv_indices, kv_last_page_len, Hq, Hkv, D, 1, data_type, q_data_type,
// non_blocking, fixed_split_size, disable_split_kv) (sglang-backends.md §3.1 table, L1725-1740), ragged
// begin_forward(qo_indptr, qo_indptr, Hq, Hkv, D, q_data_type) (L2121-2128; sglang-0.5.23.md §2.3 L2296-2304).
// So a capped model (Gemma-2: 50) runs uncapped on SGLang's FlashInfer backend: SGLang issue #33915 "FlashInfer
// backend drops attn_logit_softcapping ... gemma-2 and grok-1 run uncapped" (open; fixes #34093 and #38525 open,
// #33987 closed unmerged; FlashInfer issue #1193 "logit cap is wrong in flashinfer >= 0.2.0"). attnbench runs the
// same: FlashInferBackend::planned_layer gives the wrappers the cap the plan had, and SGLang's plans have none.
// Checked in the 0.5.23 wheel (sglang/srt/layers/attention/flashinfer_backend.py): no plan call passes
// logits_soft_cap (decode begin_forward L1840-1873, ragged L2296-2303, paged L2395-2414); forward_extend reads
// layer.logit_cap at L1370 and passes it to forward()/forward_return_lse() at L1435-1497, forward_decode at
// L1570; FlashInfer 0.7.2's deprecated forward() stores it as self._logits_soft_cap and calls run() (prefill.py
// L3214-3238), while plan() picked the module by logits_soft_cap > 0 (L2990).
inline constexpr bool kSglangPlansLogitCap = false;

class FlashInferBackend : public AttentionBackend {
 public:
  explicit FlashInferBackend(ModelRunner& model_runner, bool skip_prefill = false);

  std::string_view name() const override { return "flashinfer"; }
  Support supports(const StepKind& step) const override;
  // Extend with the ragged wrapper reads this step's K / V from the inputs, in the model dtype (L1243-1402).
  Fp8ReadView fp8_read_view(ForwardMode mode) const override;
  // SGLang plans its wrappers without the cap, which FlashInfer fixes at plan time (kSglangPlansLogitCap).
  bool applies_logit_cap() const override { return kSglangPlansLogitCap; }
  // One wrapper set planned without a window where the model runner has no window (Cohere2: commandr.py reports
  // none; flashinfer_backend.py L411-418), so no layer's window reaches the kernels (FlashInfer 0.7.2 picks the
  // windowed module at plan(): prefill.py L2989; forward() only stores window_left, L3233). And the ragged extend:
  // SGLang plans its ragged wrapper without a window (begin_forward without window_left, L2297-2304) and passes
  // none to it without a prefix (L1460-1471); with a prefix it passes the layer's to a module built without the
  // window (on Hopper the ragged wrapper is FA3: backend "auto", L501-525, which reads window_left only under a
  // compile-time flag, hopper/mainloop.cuh L195-198). So the new tokens see each other causally, while the paged
  // prefix half keeps the window (the prefix trimmed and a custom mask, L1942-1981). forward_extend follows this.
  LayerWindows layer_windows(ForwardMode mode) const override {
    if (!model_runner_.model_config.runner_sliding_window) return LayerWindows::none;
    return mode == ForwardMode::extend && extend_uses_ragged() ? LayerWindows::cached_only : LayerWindows::all;
  }
  // The layer as SGLang's plans leave it for the kernels: logit_cap 0 unless applies_logit_cap(), no window where
  // the runner knows none. The one place this backend decides the cap: forward_decode / forward_extend hand the
  // wrappers only this layer, and the wrappers pass its logit_cap through.
  Layer planned_layer(const Layer& layer) const {
    Layer l = layer;
    if (!applies_logit_cap()) l.logit_cap = 0.0f;
    if (!model_runner_.model_config.runner_sliding_window) l.sliding_window_size = -1;
    return l;
  }
  void init_forward_metadata(const ForwardBatch& fb) override;
  void init_forward_metadata_out_graph(const ForwardBatch& fb, bool in_capture) override;
  void init_cuda_graph_state(int max_bs, int max_num_tokens) override;
  int get_cuda_graph_seq_len_fill_value() const override { return 1; }  // L1239-1240
  void forward_decode(const AttentionIO& io, const Layer& layer, const ForwardBatch& fb, bool save_kv_cache) override;
  void forward_extend(const AttentionIO& io, const Layer& layer, const ForwardBatch& fb, bool save_kv_cache) override;

  // Bytes of the float workspace (F1) this constructor asks for, from the environment as it is now
  // (SGLANG_FLASHINFER_WORKSPACE_SIZE, default 384 MiB) after the architecture / deterministic overrides,
  // which it .set()s in `env` as the constructor does.
  static std::int64_t float_workspace_bytes(const ModelConfig& model, const ServerArgs& args, ProcessEnv& env);
  static std::int64_t float_workspace_bytes(ModelRunner& model_runner) {
    return float_workspace_bytes(model_runner.model_config, model_runner.server_args, model_runner.env);
  }
  // should_use_tensor_core (L2383-2429).
  static bool use_tensor_cores(const ModelConfig& model, const ProcessEnv& env);
  static bool use_tensor_cores(const ModelRunner& model_runner) {
    return use_tensor_cores(model_runner.model_config, model_runner.env);
  }
  // What the constructor derives, on a fresh environment: flashinfer_workspace_bytes (F1's size) and
  // flashinfer_use_tensor_cores ("1" / "0").
  static DerivedFacts derived_facts(const ModelConfig& model, const ServerArgs& args);

 protected:
  // Which wrapper set serves a layer: 0 for sliding-window layers, 1 for full layers when there are two
  // (_get_wrapper_idx, L1462-1472).
  int wrapper_index(const Layer& layer) const;

  ModelRunner& model_runner_;
  Device& device_;
  int num_qo_heads_, num_kv_heads_, head_dim_;
  DType dtype_;
  bool extend_uses_ragged() const;
  // Whether SGLang's FlashInfer backend runs an extend through its ragged wrapper (else its paged one).
  static bool extend_takes_ragged(const ModelConfig& model, const ServerArgs& args, const ProcessEnv& env);
  DType dtype_kv_;  // the KV cache dtype (fp8 with --kv-cache-dtype fp8_*)
  int num_wrappers_;  // 2 with a sliding window (L379-381)
  int max_bs_;        // req_to_token_pool.size
  int max_context_len_;
  bool skip_prefill_;
  bool use_tensor_cores_;

  // --- construction (section 1a) ---
  std::shared_ptr<Buffer> workspace_buffer_;  // F1 [ws bytes] uint8, shared "flashinfer_workspace"
  std::vector<Buffer> kv_indptr_;             // F2 per wrapper [max_bs + 1] int32, zeros
  Buffer kv_last_page_len_;                   // F3 [max_bs] int32, ones
  std::vector<Buffer> qo_indptr_;             // F4 per wrapper [max_bs + 1] int32, zeros (not skip_prefill)
  std::unique_ptr<RaggedPrefillWrapper> prefill_wrapper_ragged_;                // F5
  std::vector<std::unique_ptr<PagedPrefillWrapper>> prefill_wrappers_paged_;   // F6
  std::vector<std::unique_ptr<PagedPrefillWrapper>> prefill_wrappers_verify_;  // F7
  std::vector<std::unique_ptr<DecodeWrapper>> decode_wrappers_;                 // F8

  // --- CUDA-graph state (section 2a) ---
  std::vector<Buffer> cuda_graph_kv_indices_;  // per wrapper [max_num_tokens * max_context_len] int32, zeros
  Buffer cuda_graph_custom_mask_;              // [max_num_tokens * max_context_len] uint8, zeros
  std::vector<Buffer> cuda_graph_qk_indptr_;   // per wrapper [max_bs + 1] int32 (clone of kv_indptr)
  std::vector<Buffer> cuda_graph_qo_indptr_;   // per wrapper [max_bs + 1] int32 (clone of kv_indptr)
  std::map<int, std::vector<std::unique_ptr<DecodeWrapper>>> decode_cuda_graph_metadata_;
  std::map<int, std::vector<std::unique_ptr<PagedPrefillWrapper>>> prefill_cuda_graph_metadata_;

  // --- per step ---
  struct ForwardMetadata {
    ForwardMode mode = ForwardMode::decode;
    std::vector<DecodeWrapper*> decode_wrappers;
    std::vector<PagedPrefillWrapper*> prefill_wrappers;
    bool use_ragged = false;
    bool extend_no_prefix = true;
  };
  ForwardMetadata forward_metadata_;
  std::vector<Buffer> kv_indices_;    // per wrapper, this step's kv_indices (torch.empty each step)
  std::vector<Buffer> kv_start_;      // per wrapper [bs] int32: trimmed window heads (sliding window only)
  Buffer verify_qo_indptr_;           // target_verify: arange(0, bs*N+1, N), new each step (eager)
  std::vector<Buffer> verify_kv_indptr_;  // target_verify: per wrapper [bs + 1], new each step (eager)

 private:
  void update_decode(const ForwardBatch& fb, const std::vector<DecodeWrapper*>& wrappers, bool graph, bool fast_plan);
  void update_extend(const ForwardBatch& fb, bool use_ragged);
  void update_verify(const ForwardBatch& fb, const std::vector<PagedPrefillWrapper*>& wrappers, bool graph);
  // kv_indptr[w][0..bs] = prefix sum of the (trimmed) lengths; kv_start_[w] when trimmed. Returns the host lengths.
  std::vector<std::int32_t> build_indptr(int w, const std::int32_t* lens_dev, const std::vector<std::int32_t>& lens_host,
                                         int clamp, int batch_size, std::int32_t* indptr_dev);
};

}  // namespace attnbench
