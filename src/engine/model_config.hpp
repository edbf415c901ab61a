// Model presets: the attention shape of a model as one tensor-parallel rank of SGLang sees it.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace attnbench {

struct ModelConfig {
  std::string name;          // preset name, e.g. "llama-3.1-8b"
  std::string architecture;  // HF architectures[0]; the FlashInfer backend sizes its workspace by it
  int num_layers = 0;
  int num_attention_heads = 0;  // config value, all ranks (TRTLLM's counter buffer uses this, not per rank)
  int num_key_value_heads = 0;  // config value, all ranks
  int head_dim = 0;
  int context_len = 0;          // model default context length (SGLang --context-length overrides)
  int tp_size = 1;              // tensor parallel degree the preset is for
  int sliding_window = -1;      // config.sliding_window in tokens; -1: none
  int sliding_window_pattern = 0;  // every Nth layer is full attention (Gemma-3: 6); 0: all layers windowed
  DType dtype = DType::bf16;    // model and KV dtype

  int num_qo_heads() const { return num_attention_heads / tp_size; }                   // per rank
  int num_kv_heads() const { return std::max(1, num_key_value_heads / tp_size); }     // per rank
  bool has_sliding_window() const { return sliding_window > 0; }
  // SGLang's layer.sliding_window_size for layer `layer`: config.sliding_window - 1 on windowed layers,
  // -1 on full-attention layers (models/gemma3_causal.py L59-60).
  int layer_sliding_window_size(int layer) const;
  // Bytes of KV cache one token occupies on this rank: 2 (K and V) * layers * kv_heads * head_dim * dtype size.
  long long kv_bytes_per_token() const;
};

// Known presets, in listing order.
const std::vector<ModelConfig>& model_presets();
// Throws InputError naming --model and listing the presets when `name` is unknown.
ModelConfig find_model_preset(const std::string& name);

}  // namespace attnbench
