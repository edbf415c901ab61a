// AttentionBackend: the interface SGLang's attention backends implement (base_attn_backend.py @30cb848d4),
// reduced to what attnbench drives. Names follow SGLang's so that a SGLang developer finds their way.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/forward_batch.hpp"
#include "engine/model_runner.hpp"

namespace attnbench {

// What a RadixAttention layer tells the backend.
struct Layer {
  int layer_id = 0;
  float scaling = 1.0f;          // ModelConfig::sm_scale(): head_dim**-0.5, or query_pre_attn_scalar**-0.5 (Gemma-2/3)
  int sliding_window_size = -1;  // config.sliding_window - 1 on windowed layers, -1 otherwise
  float logit_cap = 0.0f;        // 0: none; Gemma-2: attn_logit_softcapping (ModelConfig::attn_logit_cap)
  const float* sinks = nullptr;  // [num_qo_heads] device, or nullptr
  float k_scale = 1.0f;          // layer.k_scale_float / v_scale_float (fp8 KV cache; SGLang's default 1.0)
  float v_scale = 1.0f;
};

// The tensors of one attention call, on the backend's device.
struct AttentionIO {
  const void* q = nullptr;  // [num_tokens, num_qo_heads, head_dim]
  const void* k = nullptr;  // [num_tokens, num_kv_heads, head_dim] the new tokens' keys
  const void* v = nullptr;  // [num_tokens, num_kv_heads, head_dim]
  // [num_tokens, num_qo_heads, head_dim]. SGLang's backends allocate their output per call; attnbench
  // passes one in (the runner poisons it first), which both backends would allocate alike.
  void* o = nullptr;
};

// Named facts a backend derives from the model and the server arguments as its constructor would, without
// being constructed (no device, no allocation), e.g. {"flashinfer_workspace_bytes", "402653184"}: what other
// programs need to size the same things (the case list's columns). Values are decimal integers, or "1" / "0"
// for flags. Published through BackendInfo::derived (registry.hpp).
using DerivedFacts = std::vector<std::pair<std::string, std::string>>;

// Whether a backend runs a case; `note` travels to the row either way (e.g. a path SGLang uses only on SM100).
struct Support {
  bool ok = true;
  std::string reason;
  static Support yes(std::string note = {}) { return {true, std::move(note)}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
};

// Writes the new tokens' K and V (io.k, io.v: [num_tokens, num_kv_heads, head_dim]) into the layer's pool
// buffers at the slots fb.out_cache_loc (SGLang's token_to_kv_pool.set_kv_buffer): one write_kv kernel on the
// model runner's device and stream. Every backend saves the KV cache through it.
void write_kv(const ModelRunner& model_runner, const AttentionIO& io, const Layer& layer, const ForwardBatch& fb);

// With an fp8 KV cache: which inputs of `mode` pass through fp8 before attention reads them (the float64
// reference quantizes exactly those). Cached tokens always do (they are stored in fp8).
struct Fp8ReadView {
  bool new_kv = true;  // this step's K / V are read back from the fp8 pool (false: FlashInfer's ragged extend)
  bool q = false;      // q is cast to the fp8 KV dtype (trtllm_mha outside the XQA decode kernel)
  bool operator<(const Fp8ReadView& o) const { return new_kv != o.new_kv ? new_kv < o.new_kv : q < o.q; }
};

class AttentionBackend {
 public:
  virtual ~AttentionBackend() = default;

  virtual std::string_view name() const = 0;
  // Whether this backend (as constructed) runs the step (its mode, eagerly or under a CUDA graph, with or without
  // attention sinks, with or without cached tokens), and if so any note every such row carries.
  virtual Support supports(const StepKind& step) const = 0;
  // What an fp8 KV cache quantizes in `mode` (meaningful only with --kv-cache-dtype fp8_*).
  virtual Fp8ReadView fp8_read_view(ForwardMode mode) const {
    (void)mode;
    return {};
  }

  // Whether the backend applies the layer's logit cap (layer.logit_cap) as SGLang runs it. Neither of SGLang's
  // backends does today: FlashInfer gets the cap at forward() but fixes it at plan(), where SGLang passes none
  // (kSglangPlansLogitCap, flashinfer_backend.hpp); trtllm_mha passes none to any of its kernels
  // (TrtllmMhaImpl::kAppliesLogitCap). So a capped model (Gemma-2) runs uncapped on both. The float64 reference
  // follows the backend, and backends that differ here are not compared with each other. Each backend decides
  // the cap in one place from this flag (FlashInferBackend::planned_layer, TrtllmMhaImpl::attention_params), so
  // what its kernels apply is what the reference assumes.
  virtual bool applies_logit_cap() const { return true; }
  // Which keys the layers' sliding windows (layer.sliding_window_size) hide in a step of `mode`. trtllm_mha applies
  // them everywhere; SGLang's FlashInfer backend not at all where the model runner knows no window
  // (ModelConfig::runner_sliding_window: on Cohere2 it plans one wrapper set without a window, and FlashInfer fixes
  // the window at plan()), and in its ragged extend only to the cached keys (the ragged wrapper is planned without
  // one). Like the cap: the reference follows it, and backends that differ here are not compared.
  virtual LayerWindows layer_windows(ForwardMode mode) const { return LayerWindows::all; }

  // Eager metadata for one step (SGLang's default: out_graph then in_graph).
  virtual void init_forward_metadata(const ForwardBatch& fb) {
    init_forward_metadata_out_graph(fb, false);
    init_forward_metadata_in_graph(fb);
  }
  // CUDA-graph metadata: the part done on the host before capture / replay ...
  virtual void init_forward_metadata_out_graph(const ForwardBatch& fb, bool in_capture) {}
  // ... and the part recorded into the graph.
  virtual void init_forward_metadata_in_graph(const ForwardBatch& fb) {}
  // Static buffers for graphs of up to max_bs requests / max_num_tokens tokens (called once).
  virtual void init_cuda_graph_state(int max_bs, int max_num_tokens) = 0;
  // seq_len given to padded slots of a captured batch.
  virtual int get_cuda_graph_seq_len_fill_value() const = 0;

  // SGLang's AttentionBackend.forward: decode modes go to forward_decode, the rest to forward_extend.
  void forward(const AttentionIO& io, const Layer& layer, const ForwardBatch& fb, bool save_kv_cache = true) {
    if (fb.forward_mode == ForwardMode::decode)
      forward_decode(io, layer, fb, save_kv_cache);
    else
      forward_extend(io, layer, fb, save_kv_cache);
  }
  virtual void forward_decode(const AttentionIO& io, const Layer& layer, const ForwardBatch& fb, bool save_kv_cache) = 0;
  virtual void forward_extend(const AttentionIO& io, const Layer& layer, const ForwardBatch& fb, bool save_kv_cache) = 0;
};

}  // namespace attnbench
