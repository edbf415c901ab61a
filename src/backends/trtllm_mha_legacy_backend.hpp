// TRTLLMHAAttnBackend as SGLang has it today: `class TRTLLMHAAttnBackend(FlashInferAttnBackend)` (L96).
// Its constructor runs the whole FlashInfer constructor first (L129-131), so it pays for every FlashInfer
// allocation, then adds its own; every attention method is overridden by the TRTLLM implementation and
// init_cuda_graph_state does not call super(). The FlashInfer state is built and never read.
#pragma once

#include "backends/flashinfer_backend.hpp"
#include "backends/trtllm_mha_backend.hpp"

namespace attnbench {

class TrtllmMhaLegacyBackend : public FlashInferBackend {
 public:
  explicit TrtllmMhaLegacyBackend(ModelRunner& model_runner)
      : TrtllmMhaLegacyBackend(model_runner, TrtllmMhaImpl::workspace_bytes_at_entry(model_runner)) {}

  std::string_view name() const override { return "trtllm_mha_legacy"; }
  Support supports(ForwardMode mode, bool cuda_graph, bool sinks) const override {
    return impl_.supports(mode, cuda_graph, sinks);
  }
  void init_forward_metadata(const ForwardBatch& fb) override { impl_.init_forward_metadata(fb); }
  void init_forward_metadata_out_graph(const ForwardBatch& fb, bool in_capture) override {
    impl_.init_forward_metadata_out_graph(fb, in_capture);
  }
  void init_forward_metadata_in_graph(const ForwardBatch& fb) override { impl_.init_forward_metadata_in_graph(fb); }
  void init_cuda_graph_state(int max_bs, int max_num_tokens) override { impl_.init_cuda_graph_state(max_bs, max_num_tokens); }
  int get_cuda_graph_seq_len_fill_value() const override { return 1; }
  void forward_decode(const AttentionIO& io, const Layer& layer, const ForwardBatch& fb, bool save_kv_cache) override {
    impl_.forward_decode(io, layer, fb, save_kv_cache);
  }
  void forward_extend(const AttentionIO& io, const Layer& layer, const ForwardBatch& fb, bool save_kv_cache) override {
    impl_.forward_extend(io, layer, fb, save_kv_cache);
  }

 private:
  // The workspace size is read on entry (L120-127), before super().__init__() can .set() the environment.
  TrtllmMhaLegacyBackend(ModelRunner& model_runner, std::int64_t trtllm_workspace_bytes)
      : FlashInferBackend(model_runner), impl_(model_runner, trtllm_workspace_bytes) {}

  TrtllmMhaImpl impl_;
};

}  // namespace attnbench
