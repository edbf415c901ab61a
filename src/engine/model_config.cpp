#include "engine/model_config.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string_view>

#include "core/errors.hpp"
#include "core/files.hpp"
#include "engine/hf_config.hpp"

namespace attnbench {

// configs/models/*.json as embedded at build time (generated model_presets.cpp), in listing order.
extern const EmbeddedFile kModelPresetFiles[];
extern const std::size_t kModelPresetFileCount;

int ModelConfig::layer_sliding_window_size(int layer) const {
  if (!has_sliding_window()) return -1;
  if (!sliding_layers.empty() && !sliding_layers[static_cast<std::size_t>(layer) % sliding_layers.size()])
    return -1;  // a full-attention layer
  return sliding_window + sliding_window_offset;
}

std::string ModelConfig::tp_split_problem() const {
  if (num_attention_heads % tp_size != 0)
    return std::to_string(num_attention_heads) + " attention heads are not divisible by tp " + std::to_string(tp_size);
  if (num_qo_heads() % num_kv_heads() != 0)
    return "query heads per rank (" + std::to_string(num_qo_heads()) + ") not divisible by KV heads per rank (" +
           std::to_string(num_kv_heads()) + ")";
  return {};
}

float ModelConfig::sm_scale() const {
  if (attention_multiplier > 0.0) return static_cast<float>(attention_multiplier);
  if (query_pre_attn_scalar > 0.0) return static_cast<float>(std::pow(query_pre_attn_scalar, -0.5));
  return 1.0f / std::sqrt(static_cast<float>(head_dim));
}

long long ModelConfig::kv_bytes_per_token() const {
  return 2LL * num_layers * num_kv_heads() * head_dim * dtype_size(kv_dtype());
}

const std::vector<ModelConfig>& model_presets() {
  static const std::vector<ModelConfig> presets = [] {
    std::vector<ModelConfig> v;
    for (std::size_t i = 0; i < kModelPresetFileCount; ++i) {
      const EmbeddedFile& f = kModelPresetFiles[i];
      v.push_back(parse_hf_config(std::string_view(f.data, f.size), f.path, model_name_from_path(f.path)));
    }
    return v;
  }();
  return presets;
}

namespace {
bool is_preset_name(const std::string& name) {
  for (const auto& m : model_presets())
    if (m.name == name) return true;
  return false;
}
bool names_a_path(const std::string& name_or_path) {
  std::error_code ec;
  return name_or_path.find('/') != std::string::npos ||
         (name_or_path.size() >= 5 && name_or_path.compare(name_or_path.size() - 5, 5, ".json") == 0) ||
         std::filesystem::exists(name_or_path, ec);
}
}  // namespace

std::string model_config_file(const std::string& name_or_path) {
  if (is_preset_name(name_or_path) || !names_a_path(name_or_path)) return "";
  return hf_config_path(name_or_path);
}

ModelConfig find_model_preset(const std::string& name_or_path) {
  for (const auto& m : model_presets())
    if (m.name == name_or_path) return m;
  if (names_a_path(name_or_path)) return read_hf_config(name_or_path);
  std::string names;
  for (const auto& m : model_presets()) names += (names.empty() ? "" : ", ") + m.name;
  throw InputError("--model: unknown preset '" + printable(name_or_path) + "' (known: " + names +
                   "; or a path to a config.json)");
}

}  // namespace attnbench
