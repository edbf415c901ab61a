// Models: the attention shape of a model as one tensor-parallel rank of SGLang sees it, read from a Hugging
// Face config.json (engine/hf_config.hpp). The presets are such files, shipped in configs/models/ and embedded
// into the binary at build time (cmake/embed_model_presets.cmake): one source of truth, no C++ table.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace attnbench {

// Which keys the layers' sliding windows hide in one step, as a backend computes it
// (AttentionBackend::layer_windows; the reference and the work figures follow it: runner/case_work.hpp case_as_run).
enum class LayerWindows : std::uint8_t {
  all,          // every key outside the layer's window: the model's attention
  none,         // none: SGLang's FlashInfer where the model runner knows no window (Cohere2)
  cached_only,  // only cached keys; the step's new tokens see each other causally: SGLang's FlashInfer ragged
                // extend on Hopper, whose ragged wrapper is planned without a window (docs/facts-0.5.23.md s13)
};

struct ModelConfig {
  std::string name;          // preset name or the file's name (case ids use it): "llama-3.1-8b", "qwen3-32b"
  std::string architecture;  // HF architectures[0]; the FlashInfer backend sizes its workspace by it
  int num_layers = 0;
  int num_attention_heads = 0;  // config value, all ranks (TRTLLM's counter buffer uses this, not per rank)
  int num_key_value_heads = 0;  // config value, all ranks
  int head_dim = 0;
  std::string head_dim_from;  // a config.json's: where head_dim came from, for errors ("derived as hidden_size ...")
  std::string source;  // the config.json --model named (as shown in errors); empty for a preset
  int context_len = 0;          // model default context length (SGLang --context-length overrides)
  int tp_size = 1;              // tensor parallel degree the preset is for (a config.json has none: 1)
  int sliding_window = -1;      // config.sliding_window in tokens; -1: no layer has a window
  // Which layers are windowed, as a pattern repeated over the layers: layer l is windowed when
  // sliding_layers[l % size] (Gemma-3's sliding_window_pattern 6: five true, one false; GPT-OSS: true, false).
  // The config's per-layer list is kept at its shortest period (--layers takes at most num_layers: resolve_model).
  // Empty: every layer is windowed. Meaningful only when sliding_window > 0.
  std::vector<bool> sliding_layers;
  // The layer's window, layer.sliding_window_size = sliding_window + sliding_window_offset: -1 for the classes that
  // pass config.sliding_window - 1 (Gemma-2 / 3, GPT-OSS), 0 for Cohere2 (models/commandr.py L206-210 passes
  // config.sliding_window itself).
  int sliding_window_offset = -1;
  // Whether SGLang's model runner learns the window (the class has get_attention_sliding_window_size, or is on the
  // hybrid-SWA list: model_runner_components/load_model_utils.py L144-157). FlashInfer builds its two wrapper sets
  // from it; without it (Cohere2) FlashInfer plans one set with no window and applies none
  // (AttentionBackend::layer_windows), while trtllm_mha passes every layer's own window to its kernels.
  bool runner_sliding_window = true;
  // The config's sliding_window where SGLang's model class ignores it (Mistral-7B, a Qwen2 with
  // use_sliding_window true: every layer runs full attention; engine/hf_config.cpp read_windows). -1: none.
  int window_ignored = -1;
  bool has_sinks = false;       // learned attention-sink logits per head (GPT-OSS): the run's --sinks default
  // SGLang's model_config.is_multimodal under default server args: a multimodal class, or a config whose language
  // model sits in text_config, unless the class has multimodal off by default (Gemma3ForConditionalGeneration,
  // Llama4ForConditionalGeneration, ...). FlashInfer then runs every extend on its paged path (no ragged wrapper).
  bool is_multimodal = false;
  // Gemma-2 / Gemma-3's query_pre_attn_scalar: SGLang's layer scaling is query_pre_attn_scalar**-0.5 there
  // (models/gemma2.py and gemma3_causal.py: self.scaling = config.query_pre_attn_scalar**-0.5), not
  // head_dim**-0.5 (Gemma-3-27B: 168**-0.5, head_dim 128). 0: not given, or an architecture that ignores it.
  double query_pre_attn_scalar = 0.0;
  // Granite's attention_multiplier: SGLang's layer scaling itself there (models/granite.py, granitemoe.py:
  // self.scaling = config.attention_multiplier). 0: not given, or an architecture that ignores it.
  double attention_multiplier = 0.0;
  // SGLang's RadixAttention logit_cap: Gemma-2's attn_logit_softcapping (models/gemma2.py passes
  // logit_cap=config.attn_logit_softcapping; gemma3_causal.py passes logit_cap=0.0). 0: none.
  float attn_logit_cap = 0.0f;
  DType dtype = DType::bf16;    // model dtype: queries, outputs, new K/V; the KV cache unless kv_fp8 says fp8
  // --kv-cache-dtype fp8_e4m3 / fp8_e5m2: the KV cache's fp8 format. Any non-fp8 value: the cache is in `dtype`.
  DType kv_fp8 = DType::bf16;
  // Per-tensor KV scales as SGLang passes them (layer.k_scale_float / v_scale_float): 1.0 unless a checkpoint
  // gives one (layers/radix_attention.py; sglang-backends.md §3.1 forward_decode). Stored = value / scale,
  // read = stored * scale. Used only with an fp8 cache.
  float k_scale = 1.0f;
  float v_scale = 1.0f;

  // The layer's scaling as SGLang's model hands it to RadixAttention (a Python float, float32 in the kernels):
  // attention_multiplier (Granite) or query_pre_attn_scalar**-0.5 when the model has one, else 1 / sqrt(head_dim) as attnbench has always computed
  // it in float (Llama & co.: self.scaling = self.head_dim**-0.5). Every backend, the case list and the float64
  // reference take it from here.
  float sm_scale() const;
  DType kv_dtype() const { return is_fp8(kv_fp8) ? kv_fp8 : dtype; }  // the KV pool's storage dtype
  int num_qo_heads() const { return num_attention_heads / tp_size; }                   // per rank
  int num_kv_heads() const { return std::max(1, num_key_value_heads / tp_size); }     // per rank
  // What keeps tp_size from splitting the heads as SGLang requires (the query heads evenly over the ranks, each
  // rank's query heads a multiple of its KV heads; tp_size >= 1 assumed), else empty. One rule for the file's
  // attnbench.tp_size (hf_config.cpp) and the --tp-size override (server_args.cpp).
  std::string tp_split_problem() const;
  // True when any layer has a window (FlashInfer then builds two wrapper sets).
  bool has_sliding_window() const { return sliding_window > 0; }
  // SGLang's layer.sliding_window_size for layer `layer`: config.sliding_window - 1 on windowed layers (Cohere2:
  // config.sliding_window), -1 on full-attention layers (models/gemma3_causal.py L59-60, gpt_oss.py L123-124).
  int layer_sliding_window_size(int layer) const;
  // The model as a backend that applies no layer window runs it: every layer full attention.
  ModelConfig without_windows() const {
    ModelConfig m = *this;
    m.sliding_window = -1;
    m.sliding_layers.clear();
    return m;
  }
  // Bytes of KV cache one token occupies on this rank: 2 (K and V) * layers * kv_heads * head_dim * kv dtype size.
  long long kv_bytes_per_token() const;
};

// The head sizes of the backends' kernels that attnbench models (its CPU and CUDA kernels are built for these).
constexpr bool modelled_head_dim(int head_dim) { return head_dim == 64 || head_dim == 128 || head_dim == 256; }
constexpr const char* kModelledHeadDims = "64, 128 or 256: the head sizes of the backends' kernels that attnbench models";

// The presets (configs/models/*.json as embedded at build time), in listing order.
const std::vector<ModelConfig>& model_presets();
// `name_or_path` is a preset name, or a path to a config.json when it is no preset's name and names an
// existing file, ends with ".json" or contains '/'. Throws InputError naming --model (and listing the presets
// when a name is unknown, or naming the file and key when a file is bad: engine/hf_config.hpp).
ModelConfig find_model_preset(const std::string& name_or_path);
// The file a --model value reads (a config.json, or a model folder's), "" for a preset name: an input that no
// output may overwrite.
std::string model_config_file(const std::string& name_or_path);

// One embedded preset file: its path in the source tree and its text (generated model_presets.cpp).
struct EmbeddedFile {
  const char* path;
  const char* data;
  std::size_t size;
};

}  // namespace attnbench
