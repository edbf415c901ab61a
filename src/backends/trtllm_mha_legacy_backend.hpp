// TRTLLMHAAttnBackend as SGLang has it today: `class TRTLLMHAAttnBackend(FlashInferAttnBackend)` (L96).
// Its constructor runs the whole FlashInfer constructor first (L129-131), so it pays for every FlashInfer
// allocation, then adds its own; every attention method is overridden by the TRTLLM implementation and
// init_cuda_graph_state does not call super(). The FlashInfer state is built and never read.
#pragma once

#include "backends/flashinfer_backend.hpp"
#include "backends/trtllm_mha_backend.hpp"

namespace attnbench {

class TrtllmMhaLegacyBackend : public TrtllmMhaMethods<FlashInferBackend> {
 public:
  // The workspace size is read on entry (L120-127), before super().__init__() can .set() the environment:
  // the arguments are evaluated before the FlashInfer base is constructed.
  explicit TrtllmMhaLegacyBackend(ModelRunner& model_runner)
      : TrtllmMhaMethods(model_runner, TrtllmMhaImpl::workspace_bytes_at_entry(model_runner), model_runner) {}

  std::string_view name() const override { return "trtllm_mha_legacy"; }
};

}  // namespace attnbench
