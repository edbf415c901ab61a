// TRTLLMHAAttnBackend (python/sglang/srt/layers/attention/trtllm_mha_backend.py @30cb848d4), modelled.
//
// TrtllmMhaImpl is everything TRTLLM-MHA itself does: its allocations (T1-T3, section 1b), graph state
// (section 2b), page-table metadata and block-table kernel calls (section 3.2). Two backends use it:
//   trtllm_mha         TrtllmMhaBackend: inherits AttentionBackend directly (the change of SGLang #28808);
//   trtllm_mha_legacy  TrtllmMhaLegacyBackend (trtllm_mha_legacy_backend.hpp): inherits FlashInferBackend,
//                      as SGLang does today, and overrides every method with this same implementation.
#pragma once

#include <map>
#include <memory>
#include <utility>

#include "backends/attention_backend.hpp"
#include "kernels/params.hpp"

namespace attnbench {

class TrtllmMhaImpl {
 public:
  // workspace_bytes: T1's size as captured on constructor entry (workspace_bytes_at_entry).
  TrtllmMhaImpl(ModelRunner& model_runner, std::int64_t workspace_bytes);

  // L120-127: SGLANG_FLASHINFER_WORKSPACE_SIZE if it is in os.environ when the constructor is entered,
  // else DEFAULT_WORKSPACE_SIZE_MB = 512 (L63). Read before the parent constructor can change it.
  static std::int64_t workspace_bytes_at_entry(const ProcessEnv& env);
  static std::int64_t workspace_bytes_at_entry(const ModelRunner& model_runner) {
    return workspace_bytes_at_entry(model_runner.env);
  }
  // What the constructor derives, on a fresh environment: trtllm_workspace_bytes (T1's size).
  static DerivedFacts derived_facts(const ModelConfig& model, const ServerArgs& args);
  // Page size and head checks SGLang makes (overrides.py L2173-2186, ctor L220-243); InputError names the option.
  static void validate(const ModelConfig& model, const ServerArgs& args);

  Support supports(const StepKind& step) const;  // the TRTLLM paths do not depend on step.any_prefix
  // SGLang's trtllm_mha passes no logit soft cap to any kernel it calls, and nothing refuses a capped model:
  //   decode: trtllm_batch_decode_with_kv_cache(..., bmm1_scale, bmm2_scale, window_left, sinks, ...) has no cap
  //     parameter at all (FlashInfer 0.7.2 decode.py L3691-4568, signature in sglang-0.5.23.md §3.2);
  //   SM90/SM120 extend: trtllm_fmha_v2_prefill takes logits_soft_cap_scale=None (prefill.py L7497-7826) and
  //     SGLang's call (trtllm_mha_backend.py L1897-1921, sglang-0.5.23.md §1.4) does not pass it;
  //   SM100 extend: trtllm_batch_context_with_kv_cache (L1922-2031) gets bmm1/bmm2 scales, window, sinks only;
  //   bmm1_scale = q_scale * k_scale * layer.scaling (_get_bmm_scales L425-440): the scale, never the cap;
  //   the attention gates of 0.5.23 (arg_groups/attention_hook.py L198-237, sglang-0.5.23.md §1.6) check the
  //     SM, fp8_e4m3 on SM120 and context parallelism, not a cap.
  // So layer.logit_cap (Gemma-2's attn_logit_softcapping) is ignored: attnbench runs the same uncapped attention
  // and validates it against an uncapped reference (supports() notes it on every row).
  static constexpr bool kAppliesLogitCap = false;
  // Every mode writes K / V first and reads the pool; q goes to fp8 where cast_q() casts it.
  Fp8ReadView fp8_read_view(ForwardMode mode) const {
    Fp8ReadView v;
    v.q = !(is_xqa_arch(arch_) && mode != ForwardMode::extend);
    return v;
  }
  void init_forward_metadata(const ForwardBatch& fb);
  void init_forward_metadata_out_graph(const ForwardBatch& fb, bool in_capture);
  void init_forward_metadata_in_graph(const ForwardBatch& fb);
  void init_cuda_graph_state(int max_bs, int max_num_tokens);
  void forward_decode(const AttentionIO& io, const Layer& layer, const ForwardBatch& fb, bool save_kv_cache);
  void forward_extend(const AttentionIO& io, const Layer& layer, const ForwardBatch& fb, bool save_kv_cache);

 private:
  // TRTLLMMHAMetadata (dataclass L66-93): eager steps own their tensors, graph metadata views static ones.
  struct Metadata {
    Buffer cache_seqlens_buf, cu_seqlens_q_buf, cu_seqlens_k_buf, page_table_buf;  // owned (eager / per-bs)
    std::int32_t* cache_seqlens_int32 = nullptr;  // [bs]
    std::int32_t* cu_seqlens_q = nullptr;         // [bs + 1]
    std::int32_t* cu_seqlens_k = nullptr;         // [bs + 1]
    std::int32_t* page_table = nullptr;           // [bs, max_num_pages]
    int max_seq_len_q = 1;
    int batch_size = 0;
    // _init_fmha_v2_batch_pages (0.5.23 L1400-1436), every EXTEND forward on SM90/SM120 (fmha_v2 path):
    Buffer fmha_v2_num_pages, fmha_v2_first;       // [bs] int64
    Buffer fmha_v2_copy_rows, fmha_v2_copy_cols;   // [TP] int64 (TP = total pages of the batch)
    Buffer fmha_v2_block_table;                    // [bs, Mb] int32 (Mb = most pages of one request)
    Buffer fmha_v2_page_index;                     // [TP] int32: rows * max_num_pages + cols (the slow path's gather)
    std::int64_t fmha_v2_total_pages = 0;
    int fmha_v2_max_pages = 0;
    // The memoized stacked block table [bs, 2, max_num_pages] int32 of the fast path (L429-468): built by the
    // first layer's forward, reused by the others (forward_metadata.fmha_v2_block_tables).
    Buffer fmha_v2_block_tables;
    // Decode seq-len splits (0.5.23 L1531-1561): the batch order by length, [bs] int32 (argsort).
    Buffer split_order;
  };
  // Into md.page_table, or into `table` with `row_stride` (0: max_num_pages) and `add` added to every entry.
  void build_page_table(const ForwardBatch& fb, const Metadata& md, std::int32_t* table = nullptr,
                        std::int64_t row_stride = 0, std::int32_t add = 0) const;
  // index_select / index_copy_ of whole rows on the device (CopyRowsParams, kernels/params.hpp).
  void copy_rows(void* dst, const void* src, const std::int32_t* dst_index, const std::int32_t* src_index,
                 std::int64_t rows, std::int64_t row_bytes, std::int64_t dst_row_stride = 0) const;
  // The attention call over the pool through md's block table (SGLang's arguments: L1054-1068, L1163-1178).
  AttentionParams attention_params(const AttentionIO& io, const Layer& layer, const Metadata& md, int total_q) const;
  void attend(const AttentionIO& io, const Layer& layer, const Metadata& md, bool decode_kernel, int q_len_per_req,
              int total_q) const;
  // The decode kernel over one group of requests (all of them without seq-len splits).
  void attend_decode(const AttentionParams& base, int q_len_per_req) const;
  // The fp8 q cast (returns the buffer p.q now points into; empty when q stays in the model dtype).
  Buffer cast_q(const AttentionIO& io, int total_q, bool decode_kernel, AttentionParams& p) const;
  void init_fmha_v2_batch_pages(const ForwardBatch& fb, Metadata& md) const;
  void forward_extend_fmha_v2(const AttentionIO& io, const Layer& layer, const ForwardBatch& fb);
  void set_split_order(const ForwardBatch& fb, Metadata& md) const;
  Support supports_mode(const StepKind& step) const;  // supports() without the cap note
  // Whether plain EXTEND runs fmha_v2 (SM90/SM120 in SGLang 0.5.23) rather than the TRTLLM context kernel.
  bool use_fmha_v2() const { return use_fmha_v2_; }

  ModelRunner& model_runner_;
  Device& device_;
  int num_qo_heads_, num_kv_heads_, head_dim_, page_size_;
  DType dtype_;
  DType kv_dtype_;  // the KV cache dtype (data_type = kv_cache_dtype, L242-253)
  int max_context_len_;
  int max_num_pages_;  // ceil(context_len / page_size) (L203-205)
  int num_draft_tokens_;
  int arch_;                   // the path SGLang takes: 90 (XQA decode, fmha_v2 prefill in 0.5.23), 100, 120
  bool use_fmha_v2_ = false;   // 0.5.23 L367: is_sm90 or is_sm120
  int decode_seq_len_splits_ = 1;
  std::int64_t semaphore_bytes_ = 0;  // T1's XQA semaphore prefix (0.5.23 L308): 8 MiB on SM90/SM120

  // --- construction (section 1b) ---
  std::shared_ptr<Buffer> workspace_buffer_;  // T1 [W] uint8, zeros, shared "trtllm_mha_zero_workspace"
  Buffer multi_ctas_kv_counter_buffer_;       // T2 [round_up(max(B*Hq_cfg, sm_count), 8) * 4] uint8, zeros
  std::shared_ptr<Buffer> default_kv_scale_;  // T3 [1] float32, ones, shared "trtllm_mha_default_kv_scale"
  Buffer xqa_spec_dec_mask_;                  // T4 [R + 1, N, 2 * ceil(N / 32)] uint16 (0.5.23, XQA + spec only)

  // --- CUDA-graph state (section 2b) ---
  struct GraphGroup {
    Buffer cache_seqlens;  // [max_bs] int32
    Buffer cu_seqlens_q;   // [max_bs + 1] int32
    Buffer cu_seqlens_k;   // [max_bs + 1] int32
    Buffer page_table;     // [max_bs, max_num_pages] int32
  };
  GraphGroup decode_graph_, target_verify_graph_, draft_extend_graph_;
  Buffer page_table_draft_decode_;  // [max_bs, max_num_pages] int32 (speculative only)
  std::map<int, Metadata> decode_cuda_graph_metadata_;
  std::map<int, Metadata> target_verify_metadata_;

  Metadata eager_metadata_;
  const Metadata* forward_metadata_ = nullptr;
};

// Every attention method of TRTLLM-MHA, forwarded to one TrtllmMhaImpl, on top of `Base`: AttentionBackend for
// trtllm_mha, FlashInferBackend for trtllm_mha_legacy. Base is constructed first, then the implementation, so
// the legacy backend pays FlashInfer's allocations before TRTLLM's, as SGLang's constructor does (L129-131).
template <class Base>
class TrtllmMhaMethods : public Base {
 public:
  Support supports(const StepKind& step) const override { return impl_.supports(step); }
  Fp8ReadView fp8_read_view(ForwardMode mode) const override { return impl_.fp8_read_view(mode); }
  bool applies_logit_cap() const override { return TrtllmMhaImpl::kAppliesLogitCap; }
  // window_left = layer.sliding_window_size on every kernel call (0.5.23 trtllm_mha_backend.py L1678, L1839-2018),
  // whatever the model runner's window; also under the legacy backend, whose FlashInfer parent would apply none.
  LayerWindows layer_windows(ForwardMode) const override { return LayerWindows::all; }
  void init_forward_metadata(const ForwardBatch& fb) override { impl_.init_forward_metadata(fb); }
  void init_forward_metadata_out_graph(const ForwardBatch& fb, bool in_capture) override {
    impl_.init_forward_metadata_out_graph(fb, in_capture);
  }
  void init_forward_metadata_in_graph(const ForwardBatch& fb) override { impl_.init_forward_metadata_in_graph(fb); }
  // Does not call super(): none of FlashInfer's graph buffers, even under the legacy backend.
  void init_cuda_graph_state(int max_bs, int max_num_tokens) override { impl_.init_cuda_graph_state(max_bs, max_num_tokens); }
  int get_cuda_graph_seq_len_fill_value() const override { return 1; }  // L788-790
  void forward_decode(const AttentionIO& io, const Layer& layer, const ForwardBatch& fb, bool save_kv_cache) override {
    impl_.forward_decode(io, layer, fb, save_kv_cache);
  }
  void forward_extend(const AttentionIO& io, const Layer& layer, const ForwardBatch& fb, bool save_kv_cache) override {
    impl_.forward_extend(io, layer, fb, save_kv_cache);
  }

 protected:
  // trtllm_workspace_bytes: T1's size, read by the caller before Base's constructor can change the environment.
  template <class... BaseArgs>
  TrtllmMhaMethods(ModelRunner& model_runner, std::int64_t trtllm_workspace_bytes, BaseArgs&&... base_args)
      : Base(std::forward<BaseArgs>(base_args)...), impl_(model_runner, trtllm_workspace_bytes) {}

  TrtllmMhaImpl impl_;
};

class TrtllmMhaBackend : public TrtllmMhaMethods<AttentionBackend> {
 public:
  explicit TrtllmMhaBackend(ModelRunner& model_runner);

  std::string_view name() const override { return "trtllm_mha"; }

 private:
  // The variant of PRs #31394 / #44073 keeps these two (~32 KiB) for the multi-step draft wrapper.
  Buffer kv_indptr_;         // [max_bs + 1] int32, zeros (--trtllm-keep-indptr only)
  Buffer kv_last_page_len_;  // [max_bs] int32, ones (--trtllm-keep-indptr only)
};

}  // namespace attnbench
