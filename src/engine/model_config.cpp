#include "engine/model_config.hpp"

#include <algorithm>

#include "core/errors.hpp"

namespace attnbench {

int ModelConfig::layer_sliding_window_size(int layer) const {
  if (!has_sliding_window()) return -1;
  if (sliding_window_pattern > 0 && (layer + 1) % sliding_window_pattern == 0) return -1;  // global layer
  return sliding_window - 1;
}

long long ModelConfig::kv_bytes_per_token() const {
  return 2LL * num_layers * num_kv_heads() * head_dim * dtype_size(dtype);
}

const std::vector<ModelConfig>& model_presets() {
  static const std::vector<ModelConfig> presets = [] {
    std::vector<ModelConfig> v;
    // Llama-3.1-8B-Instruct config.json: 32 layers, 32 heads, 8 KV heads, head_dim 128, 131072 positions.
    v.push_back({"llama-3.1-8b", "LlamaForCausalLM", 32, 32, 8, 128, 131072, 1, -1, 0, DType::bf16});
    // Llama-3.1-70B at TP8: 64 heads / 8 KV heads overall, so 8 / 1 per rank; 80 layers.
    v.push_back({"llama-3.1-70b-tp8", "LlamaForCausalLM", 80, 64, 8, 128, 131072, 8, -1, 0, DType::bf16});
    // Qwen2.5-7B-Instruct: 28 layers, 28 heads, 4 KV heads, head_dim 128, 32768 positions. Qwen2 arch:
    // SGLang's FlashInfer backend raises its workspace to 512 MiB (flashinfer_backend.py L389-399).
    v.push_back({"qwen2.5-7b", "Qwen2ForCausalLM", 28, 28, 4, 128, 32768, 1, -1, 0, DType::bf16});
    // Gemma-3-12B: 48 layers, 16 heads, 8 KV heads, head_dim 256, sliding window 1024 on 5 of every 6
    // layers (sliding_window_pattern 6). A sliding window gives FlashInfer two wrapper sets (L379-381).
    v.push_back({"gemma-3-12b", "Gemma3ForCausalLM", 48, 16, 8, 256, 131072, 1, 1024, 6, DType::bf16});
    // Tiny shapes for tests: GQA 4/2, head_dim 64, 2 layers, short context.
    v.push_back({"tiny", "LlamaForCausalLM", 2, 4, 2, 64, 4096, 1, -1, 0, DType::bf16});
    // Tiny with a window on every other layer, for sliding-window tests.
    v.push_back({"tiny-swa", "Gemma3ForCausalLM", 2, 4, 2, 64, 4096, 1, 32, 2, DType::bf16});
    return v;
  }();
  return presets;
}

ModelConfig find_model_preset(const std::string& name) {
  for (const auto& m : model_presets())
    if (m.name == name) return m;
  std::string names;
  for (const auto& m : model_presets()) names += (names.empty() ? "" : ", ") + m.name;
  throw InputError("--model: unknown preset '" + name + "' (known: " + names + ")");
}

}  // namespace attnbench
