#include "engine/hf_config.hpp"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/files.hpp"

namespace attnbench {
// configs/hf-class-defaults.json as embedded at build time (CMakeLists.txt).
extern const char* const kHfClassDefaultsText;
extern const std::size_t kHfClassDefaultsSize;
}  // namespace attnbench

namespace attnbench {

namespace {

using nlohmann::json;

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-' || c == '+';
}

// A JSON value as it appears in the file, ASCII only, shortened for a message.
std::string shown(const json& v) {
  std::string s = v.dump(-1, ' ', /*ensure_ascii=*/true);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return printable(s);
}

// The shortest period of `v`: the p for which v[i] == v[i % p] for every i.
std::vector<bool> shortest_period(const std::vector<bool>& v) {
  for (std::size_t p = 1; p < v.size(); ++p) {
    bool ok = true;
    for (std::size_t i = p; i < v.size() && ok; ++i) ok = v[i] == v[i % p];
    if (ok) return std::vector<bool>(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(p));
  }
  return v;
}

// Reads keys of one config object; every error names the source and the key.
class ConfigReader {
 public:
  ConfigReader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    std::string msg = "--model " + source_ + ": " + key + ": " + what;
    if (const std::string n = note(key); !n.empty()) msg += " [" + n + "]";
    throw InputError(msg);
  }

  // Where a value came from when the file did not write it (transformers' class defaults, apply_class_defaults),
  // by key as errors name it ("text_config.num_key_value_heads"; "layer_types[3]" finds "layer_types"); "" if written.
  std::string note(const std::string& key) const {
    auto it = notes_.find(key.substr(0, key.find('[')));
    return it == notes_.end() ? "" : it->second;
  }
  void set_notes(std::map<std::string, std::string> notes) { notes_ = std::move(notes); }

  // The value of `key` in `obj` (named `prefix + key` in errors), or nullptr when absent or null.
  static const json* find(const json& obj, const std::string& key) {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return nullptr;
    return &*it;
  }

  // An integer in [lo, hi]; nullopt when absent or null.
  std::optional<int> integer(const json& obj, const std::string& prefix, const std::string& key, long long lo,
                             long long hi) const {
    const json* v = find(obj, key);
    if (!v) return std::nullopt;
    const std::string name = prefix + key;
    if (!v->is_number_integer()) fail(name, "must be an integer (got " + shown(*v) + ")");
    long long x = 0;
    if (v->is_number_unsigned()) {
      const auto u = v->get<unsigned long long>();
      x = u > static_cast<unsigned long long>(LLONG_MAX) ? LLONG_MAX : static_cast<long long>(u);
    } else {
      x = v->get<long long>();
    }
    if (x < lo || x > hi)
      fail(name, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "] (got " + shown(*v) + ")");
    return static_cast<int>(x);
  }

  int required_integer(const json& obj, const std::string& prefix, const std::string& key, long long lo,
                       long long hi) const {
    if (auto x = integer(obj, prefix, key, lo, hi)) return *x;
    fail(prefix + key, obj.contains(key) ? "must be an integer (got null)" : "missing (required)");
  }

  std::optional<std::string> string(const json& obj, const std::string& prefix, const std::string& key) const {
    const json* v = find(obj, key);
    if (!v) return std::nullopt;
    if (!v->is_string()) fail(prefix + key, "must be a string (got " + shown(*v) + ")");
    return v->get<std::string>();
  }

  // A positive finite number (integer or not) that a float32 holds: SGLang hands these to the kernels as float32;
  // nullopt when absent or null (JSON null: Python None, "no value").
  std::optional<double> positive_number(const json& obj, const std::string& prefix, const std::string& key) const {
    const json* v = find(obj, key);
    if (!v) return std::nullopt;
    const std::string name = prefix + key;
    if (!v->is_number()) fail(name, "must be a positive finite number or null (got " + shown(*v) + ")");
    const double x = v->get<double>();
    if (!std::isfinite(x) || x <= 0.0 || x > static_cast<double>(FLT_MAX) || x < static_cast<double>(FLT_MIN))
      fail(name, "must be a positive finite number within float32's normal range (got " + shown(*v) + ")");
    return x;
  }

  // positive_number that must be written: a missing or null key fails with "(required for `why`)".
  double required_positive_number(const json& obj, const std::string& prefix, const std::string& key,
                                  const std::string& why) const {
    if (const std::optional<double> x = positive_number(obj, prefix, key)) return *x;
    fail(prefix + key, std::string(obj.contains(key) ? "null" : "missing") + " (required for " + why + ")");
  }

  std::optional<bool> boolean(const json& obj, const std::string& prefix, const std::string& key) const {
    const json* v = find(obj, key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) fail(prefix + key, "must be true or false (got " + shown(*v) + ")");
    return v->get<bool>();
  }

 private:
  std::string source_;
  std::map<std::string, std::string> notes_;
};

// architectures[0]: a Python class name.
std::string read_architecture(const ConfigReader& r, const json& root, const json& tc, const std::string& tp) {
  const json* a = ConfigReader::find(root, "architectures");
  std::string key = "architectures";
  if (!a && &tc != &root) {
    a = ConfigReader::find(tc, "architectures");
    key = tp + "architectures";
  }
  if (!a) r.fail("architectures", "missing (required: SGLang picks the model class and its rules by it)");
  if (!a->is_array() || a->empty() || !(*a)[0].is_string())
    r.fail(key, "must be a non-empty list of class names (got " + shown(*a) + ")");
  const std::string arch = (*a)[0].get<std::string>();
  if (arch.empty() || arch.size() > 128)
    r.fail(key, "'" + printable(arch) + "' is not a class name");
  for (char c : arch)
    if (!name_char(c)) r.fail(key, "'" + printable(arch) + "' is not a class name");
  return arch;
}

// SGLang's derived context length (utils/hf_transformers/common.py L677-694, get_context_length, read by
// configs/model_config.py L1293 as the model's context_len when --context-length is not given): the first of
// CONTEXT_LENGTH_KEYS = [max_sequence_length, seq_length, max_seq_len, model_max_length, max_position_embeddings]
// that the text config has, times rope_scaling's "factor" unless rope_scaling also gives
// original_max_position_embeddings or its rope_type is llama3 (SGLang's 2048 when no key is there is not taken:
// see the end). rope_scaling is what transformers 5.19 (the version SGLang 0.5.23 pins) makes of the file: the
// written rope_scaling, else rope_parameters (its new name; the same object), except for the config classes that key
// their rope parameters by layer type (kRopeByLayerType): there rope_scaling is {"sliding_attention": {...},
// "full_attention": {...}} whatever the file wrote, has no top-level factor, and the factor is 1. So Gemma-3
// 4B-27B's published {"factor": 8, "rope_type": "linear"} leaves their context at max_position_embeddings (131072;
// it multiplied under transformers 4, sgl-project/sglang#20387), while a Llama config's linear factor multiplies.
// The product is capped at 16M tokens like --context-length.
// transformers 5.19's model types whose config's convert_rope_params_to_dict keys rope_parameters by layer type
// (models/<type>/configuration_<type>.py): read from the wheel.
constexpr const char* kRopeByLayerType[] = {"gemma3",  "gemma3_text", "gemma3n", "gemma3n_text",
                                            "gemma4",  "gemma4_text", "olmo3",   "mimo_v2_flash"};
// Architectures of those config classes, for a config that names no model_type (transformers needs one; attnbench
// reads what is written and goes by the class).
constexpr const char* kRopeByLayerTypeArchs[] = {"Gemma3ForCausalLM", "Gemma3ForConditionalGeneration",
                                                 "Gemma3nForCausalLM", "Gemma3nForConditionalGeneration",
                                                 "Gemma4ForCausalLM", "Gemma4ForConditionalGeneration",
                                                 "Olmo3ForCausalLM", "MiMoV2FlashForCausalLM"};
bool rope_by_layer_type(const std::string& model_type, const std::string& text_model_type, const std::string& arch) {
  const auto in = [](const auto& list, const std::string& v) {
    return std::find(std::begin(list), std::end(list), v) != std::end(list);
  };
  if (!text_model_type.empty()) return in(kRopeByLayerType, text_model_type);
  if (!model_type.empty()) return in(kRopeByLayerType, model_type);
  return in(kRopeByLayerTypeArchs, arch);
}

int read_context_len(const ConfigReader& r, const json& tc, const std::string& tp, bool rope_per_layer_type) {
  double factor = 1.0;
  const char* rope_key = "rope_scaling";
  const json* rs = ConfigReader::find(tc, "rope_scaling");
  if (rs == nullptr || rs->is_null()) {
    if (const json* rp = ConfigReader::find(tc, "rope_parameters"); rp && !rp->is_null()) {
      rs = rp;
      rope_key = "rope_parameters";
    }
  }
  if (rs && !rs->is_null()) {
    if (!rs->is_object()) r.fail(tp + rope_key, "must be an object or null (got " + shown(*rs) + ")");
    if (!rope_per_layer_type) {
      if (const std::optional<double> f = r.positive_number(*rs, tp + rope_key + ".", "factor")) factor = *f;
      if (ConfigReader::find(*rs, "original_max_position_embeddings")) factor = 1.0;
      if (const json* t = ConfigReader::find(*rs, "rope_type"); t && t->is_string() && t->get<std::string>() == "llama3")
        factor = 1.0;
    }
  }
  for (const char* key : {"max_sequence_length", "seq_length", "max_seq_len", "model_max_length", "max_position_embeddings"}) {
    const std::optional<int> v = r.integer(tc, tp, key, 1, 1 << 24);
    if (!v) continue;
    const double len = std::floor(factor * *v);  // Python's int(factor * val)
    if (len > (1 << 24))
      r.fail(tp + key, std::to_string(*v) + " x rope_scaling factor " + shown(json(factor)) +
                           " is beyond 16M tokens (SGLang's derived context length)");
    return std::max(1, static_cast<int>(len));
  }
  // SGLang falls back to 2048 only when the config object has none of the keys; transformers' config classes
  // fill max_position_embeddings with their own default first (Gemma3TextConfig: 131072; apply_class_defaults does
  // for the model types it knows). For any other model_type the default is unknown: refused rather than guessed.
  r.fail(tp + "max_position_embeddings",
         "missing (required: none of max_sequence_length, seq_length, max_seq_len, model_max_length or "
         "max_position_embeddings is written, and transformers would fill in its class default)");
}

// dtype (or torch_dtype, its older name) with SGLang's dtype "auto": a float32 (or absent) config dtype runs as
// float16, or bfloat16 for Gemma (configs/model_config.py L881: _get_and_verify_dtype(self.hf_text_config, dtype),
// L2284-2321). SGLang reads the text config's dtype and model_type: a text_config's own dtype first, the top level's
// only when it has none (utils/hf_transformers/common.py get_hf_text_config L565-580); within one object
// transformers 5.19 keeps "dtype" when both names are written (torch_dtype is its backward-compatible alias).
// GPT-OSS with MXFP4 weights runs as bfloat16 whatever the config says: arg_groups/model_overrides/gpt_oss.py
// L56-63 declares dtype "bfloat16" when quantization_config.quant_method is "mxfp4" (the published gpt-oss-20b /
// 120b configs), overriding "auto" and --dtype alike.
DType read_dtype(const ConfigReader& r, const json& root, const json& tc, const std::string& tp,
                 const std::string& model_type, const std::string& arch) {
  if (arch == "GptOssForCausalLM")
    if (const json* q = ConfigReader::find(root, "quantization_config"); q && q->is_object())
      if (const json* method = ConfigReader::find(*q, "quant_method");
          method && method->is_string() && method->get<std::string>() == "mxfp4")
        return DType::bf16;
  std::optional<std::string> s;
  std::string key;
  for (const auto* obj : {&tc, &root}) {
    const std::string prefix = obj == &root ? "" : tp;
    for (const char* k : {"dtype", "torch_dtype"}) {
      if (s) break;
      s = r.string(*obj, prefix, k);
      if (s) key = prefix + k;
    }
  }
  const DType float32_runs_as = model_type.rfind("gemma", 0) == 0 ? DType::bf16 : DType::fp16;
  if (!s) return float32_runs_as;
  if (*s == "bfloat16") return DType::bf16;
  if (*s == "float16") return DType::fp16;
  if (*s == "float32") return float32_runs_as;
  r.fail(key, "unknown dtype '" + printable(*s) + "' (expected bfloat16, float16 or float32)");
}

// Model classes of SGLang 0.5.23 whose attention takes no window whatever the config says (no "window" in
// their files). The classes that do and that attnbench models are in read_windows: models/gemma2.py,
// gemma3_causal.py / gemma3_mm.py and gpt_oss.py, each setting layer.sliding_window_size = sliding_window - 1.
// All of them read in the 0.5.23 wheel (sglang-0.5.23-cp311, models/): llama.py, mistral.py (MistralForCausalLM is
// LlamaForCausalLM; Mistral3ForConditionalGeneration, L94, a Llava wrapper around it), mixtral.py, qwen2.py,
// qwen3.py, the Qwen MoE files, starcoder2.py, mimo.py, qwen2_vl.py, qwen2_5_vl.py, qwen3_vl.py, glm4.py,
// internlm2.py, minicpm.py, ernie4.py, hunyuan.py, arcee.py and apertus.py never mention a window; phimoe.py keeps
// sliding_window in its config class only (L56, L73; its RadixAttention, L306-314, takes none). Phi-3.5-MoE writes
// sliding_window 131072, StarCoder2 4096: SGLang runs both on full attention. Classes that window by rules
// attnbench does not model stay refused by read_windows: Olmo2 / 3 with layer_types (olmo2.py L125-129),
// Step3p5 (step3p5.py L440-445, no minus one) and Gemma3n. Cohere2 is modelled (read_windows), and on it SGLang
// 0.5.23's two backends disagree: commandr.py L206-210 gives each layer_types "sliding_attention" layer sliding_window_size =
// config.sliding_window (no minus one) but the class has no get_attention_sliding_window_size and is not on the
// hybrid-SWA list, so model_runner.sliding_window_size is None (model_runner_components/load_model_utils.py
// L144-157): FlashInfer then builds one wrapper set planned with window_left -1 (flashinfer_backend.py L411-418;
// FlashInfer 0.7.2 compiles the window in at plan(), so the per-layer window its forward() passes is dropped) and
// runs every layer on full attention, while trtllm_mha passes window_left = layer.sliding_window_size to every
// kernel (trtllm_mha_backend.py L1678, L1839-2018) and windows the sliding layers.
// SGLang 0.5.23's ModelConfig.is_multimodal with the default --enable-multimodal (None) and without
// --language-model-only (configs/model_config.py L690-717, L809-827): enable_multimodal is false for the classes of
// mm_disabled_models (L692-697), true otherwise; then a class of multimodal_model_archs (L2391-2492; the MiMo-V2
// entries, which also need vision and audio configs, left out) or a config whose hf_text_config is not the config
// itself (a text_config) is multimodal. FlashInferAttnBackend reads it (flashinfer_backend.py L405, L1048-1056):
// a multimodal model never takes the ragged extend path.
bool is_multimodal(const std::string& arch, bool has_text_config) {
  static const std::set<std::string> kDisabledByDefault = {
      "Gemma3ForConditionalGeneration", "Llama4ForConditionalGeneration", "Step3VLForConditionalGeneration",
      "InklingForConditionalGeneration"};
  static const std::set<std::string> kMultimodal = {
      "CLIPModel", "Cohere2VisionForConditionalGeneration", "Cosmos3EdgeForConditionalGeneration",
      "DeepseekVL2ForCausalLM", "Ernie4_5_VLMoeForConditionalGeneration", "MiniMaxM3SparseForConditionalGeneration",
      "Gemma3ForConditionalGeneration", "Gemma3nForConditionalGeneration", "Gemma4ForConditionalGeneration",
      "EmbeddingGemma2Model", "Gemma4UnifiedForConditionalGeneration", "DiffusionGemmaForBlockDiffusion",
      "Glm4vForConditionalGeneration", "Glm4vMoeForConditionalGeneration", "Glm5NextForConditionalGeneration",
      "GlmOcrForConditionalGeneration", "GlmAsrForConditionalGeneration", "GlmImageForConditionalGeneration",
      "Grok1VForCausalLM", "Grok1AForCausalLM", "LlavaLlamaForCausalLM", "Llama4ForConditionalGeneration",
      "LlavaMistralForCausalLM", "LlavaQwenForCausalLM", "LlavaForConditionalGeneration", "LlavaVidForCausalLM",
      "Lfm2VlForConditionalGeneration", "LightOnOCRForConditionalGeneration", "MiMoV2ASRForCausalLM", "MiniCPMO",
      "MiniCPMV", "Mistral3ForConditionalGeneration", "MultiModalityCausalLM", "MllamaForConditionalGeneration",
      "MossVLForConditionalGeneration", "NemotronH_Nano_VL_V2", "NemotronH_Nano_Omni_Reasoning_V3",
      "NemotronH_Omni_Reasoning_V3", "MuseGlimmerForConditionalGeneration", "MuseSparkForConditionalGeneration",
      "PixtralForConditionalGeneration", "Qwen2AudioForConditionalGeneration", "Qwen2VLForConditionalGeneration",
      "Qwen2_5_VLForConditionalGeneration", "Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration",
      "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration", "Qwen4ExpForConditionalGeneration",
      "InternS2PreviewForConditionalGeneration", "InternS2MobiusForConditionalGeneration",
      "Qwen3ASRForConditionalGeneration", "Qwen3OmniMoeForConditionalGeneration", "KimiVLForConditionalGeneration",
      "LocateAnythingForConditionalGeneration", "InternVLChatModel", "InternS1ForConditionalGeneration",
      "InternS1ProForConditionalGeneration", "Phi4MMForCausalLM", "VoxtralForConditionalGeneration",
      "WhisperForConditionalGeneration", "Step3VLForConditionalGeneration", "POINTSV15ChatModel", "DotsVLMForCausalLM",
      "Dots3NoteForCausalLM", "DotsOCRForCausalLM", "Sarashina2VisionForCausalLM", "NVILAForConditionalGeneration",
      "NVILALiteForConditionalGeneration", "DeepseekOCRForCausalLM", "UnlimitedOCRForCausalLM",
      "JetVLMForConditionalGeneration", "PaddleOCRVLForConditionalGeneration", "MiDashengLMModel",
      "StepVLForConditionalGeneration", "Step3p7ForConditionalGeneration", "KimiK25ForConditionalGeneration",
      "BailingMMNativeForConditionalGeneration", "BailingMM2NativeForConditionalGeneration",
      "BailingMoeV3VLForConditionalGeneration"};
  if (kDisabledByDefault.count(arch)) return false;
  return kMultimodal.count(arch) > 0 || has_text_config;
}

const std::set<std::string> kFullAttentionArchitectures = {
    "LlamaForCausalLM", "MistralForCausalLM", "Phi3ForCausalLM", "MixtralForCausalLM", "Qwen2ForCausalLM",
    "Qwen3ForCausalLM", "Qwen2MoeForCausalLM", "Qwen3MoeForCausalLM",
    "PhimoeForCausalLM", "Starcoder2ForCausalLM", "MiMoForCausalLM", "Qwen2VLForConditionalGeneration",
    "Qwen2_5_VLForConditionalGeneration", "Qwen3VLForConditionalGeneration", "Glm4ForCausalLM",
    "InternLM2ForCausalLM", "MiniCPMForCausalLM", "Ernie4_5_ForCausalLM", "HunYuanDenseV1ForCausalLM",
    "ArceeForCausalLM", "ApertusForCausalLM", "Mistral3ForConditionalGeneration"};

// Exaone4ForCausalLM (EXAONE 4.0), given a sliding_window: SGLang 0.5.23's Exaone4Attention windows layer l when
// config.sliding_window_pattern is truthy and (l + 1) % len(sliding_window_pattern) != 0 (models/exaone4.py
// L161-166; EXAONE-4.0-32B writes "LLLG": three windowed layers, then a global one), with sliding_window - 1 (L47-51),
// and reports that window to the model runner (get_attention_sliding_window_size, L548-549). It never reads
// layer_types, so neither does this rule. What SGLang could not load, or loads with a window on no layer, is refused:
//   - an integer pattern (the class default 4 among them): len() of an int raises;
//   - a string pattern without layer_types: transformers 5.19's Exaone4Config.__post_init__ derives layer_types as
//     (i + 1) % sliding_window_pattern (configuration_exaone4.py L103-109), which a string fails;
//   - no pattern (null, 0, ""): no layer is windowed, yet the runner holds the window, so FlashInfer would plan its
//     window wrapper set for no layer (not modelled).
std::vector<bool> exaone4_windowed(const ConfigReader& r, const json& tc, const std::string& tp, int window,
                                   std::size_t layers) {
  const std::string key = tp + "sliding_window_pattern";
  const std::string on = " with sliding_window " + std::to_string(window) + " on Exaone4ForCausalLM";
  const json* p = ConfigReader::find(tc, "sliding_window_pattern");
  const bool empty = !p || (p->is_number_integer() && p->get<long long>() == 0) || (p->is_string() && p->get<std::string>().empty());
  if (empty)
    r.fail(key, (p ? shown(*p) : std::string(tc.contains("sliding_window_pattern") ? "null" : "missing")) + on +
                    ": SGLang's exaone4.py (L164-166) then windows no layer while the model runner holds the window "
                    "(get_attention_sliding_window_size), a state attnbench does not model; write the pattern, "
                    "e.g. \"LLLG\", or sliding_window null");
  if (p->is_number())
    r.fail(key, shown(*p) + on + ": SGLang's exaone4.py (L165) takes len() of the pattern, which an integer "
                                 "fails, so SGLang could not load this file; EXAONE 4.0 writes a string such as "
                                 "\"LLLG\"");
  if (!p->is_string()) r.fail(key, "must be a string such as \"LLLG\" (got " + shown(*p) + ")");
  if (!ConfigReader::find(tc, "layer_types"))
    r.fail(tp + "layer_types", "missing beside sliding_window_pattern " + shown(*p) + on +
                                   ": transformers 5.19's Exaone4Config derives it as (i + 1) % "
                                   "sliding_window_pattern, which a string fails, so SGLang could not load this "
                                   "file; write layer_types");
  const std::string text = p->get<std::string>();  // Python's len(): code points, not UTF-8 bytes
  const auto period = static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
  std::vector<bool> windowed(layers);
  for (std::size_t l = 0; l < layers; ++l) windowed[l] = (l + 1) % period != 0;
  return windowed;
}

// Which layers are windowed, and the window; sets m.sliding_window and m.sliding_layers (or m.window_ignored).
void read_windows(const ConfigReader& r, const json& tc, const std::string& tp, ModelConfig& m) {
  const std::optional<int> window = r.integer(tc, tp, "sliding_window", 1, INT_MAX);
  const std::optional<bool> use = r.boolean(tc, tp, "use_sliding_window");
  // sliding_window_pattern is an integer (Gemma-3: every Nth layer global); a string ("LLLG", Exaone-4's) beside
  // layer_types, which spells the same per layer, is left to layer_types.
  // (Exaone4ForCausalLM reads its string pattern by its own rule: exaone4_windowed.)
  const bool exaone4 = m.architecture == "Exaone4ForCausalLM";
  const json* pattern_value = ConfigReader::find(tc, "sliding_window_pattern");
  const bool pattern_spelled_by_types =
      pattern_value && pattern_value->is_string() && ConfigReader::find(tc, "layer_types");
  const std::optional<int> pattern = pattern_spelled_by_types || exaone4
                                         ? std::nullopt
                                         : r.integer(tc, tp, "sliding_window_pattern", 1, INT_MAX);
  const std::optional<int> max_window_layers = r.integer(tc, tp, "max_window_layers", 0, INT_MAX);
  const json* types = ConfigReader::find(tc, "layer_types");
  const std::size_t n = static_cast<std::size_t>(m.num_layers);

  // The keys are checked whatever the class does with them (a malformed one is exit 2 on every class).
  std::vector<bool> from_types;
  if (types) {
    if (!types->is_array() || types->size() != n)
      r.fail(tp + "layer_types", "must be a list of num_hidden_layers (" + std::to_string(m.num_layers) +
                                     ") layer types (got " + shown(*types) + ")");
    for (std::size_t i = 0; i < types->size(); ++i) {
      const json& t = (*types)[i];
      const std::string key = tp + "layer_types[" + std::to_string(i) + "]";
      if (!t.is_string()) r.fail(key, "must be a string (got " + shown(t) + ")");
      const std::string s = t.get<std::string>();
      if (s == "sliding_attention")
        from_types.push_back(true);
      else if (s == "full_attention")
        from_types.push_back(false);
      else
        r.fail(key, "unsupported layer type '" + printable(s) + "' (expected sliding_attention or full_attention)");
    }
    const bool any = std::find(from_types.begin(), from_types.end(), true) != from_types.end();
    if (any && !window) {
      const std::string derived = r.note(tp + "layer_types");
      r.fail(tp + "sliding_window", std::string(tc.contains("sliding_window") ? "null" : "missing") +
                                        ", but layer_types has sliding_attention layers" +
                                        (derived.empty() ? "" : " (layer_types " + derived + ")"));
    }
  }
  if (use && *use) {
    if (!max_window_layers) r.fail(tp + "max_window_layers", "missing (required with use_sliding_window true)");
    if (!window) r.fail(tp + "sliding_window", "missing (required with use_sliding_window true)");
  }

  // What the config says, read generically (as transformers' classes read these keys): use_sliding_window false
  // switches the window off (Qwen2/3); layer_types names each layer; use_sliding_window true windows the layers
  // from max_window_layers on; sliding_window_pattern N makes every Nth layer global; sliding_window alone
  // windows every layer.
  std::vector<bool> windowed(n, true);
  auto by_pattern = [&] {  // Gemma-3's sliding_window_pattern N: every Nth layer global
    for (std::size_t l = 0; l < n; ++l) windowed[l] = (l + 1) % static_cast<std::size_t>(*pattern) != 0;
  };
  if (use && !*use)
    std::fill(windowed.begin(), windowed.end(), false);
  else if (types)
    windowed = from_types;
  else if (use && *use)
    for (std::size_t l = 0; l < n; ++l) windowed[l] = static_cast<int>(l) >= *max_window_layers;
  else if (pattern)
    by_pattern();
  auto none = [&] {  // no layer windowed: nothing for a class rule to change either
    m.sliding_window = -1;
    m.sliding_layers.clear();
    m.sliding_window_offset = -1;
    m.runner_sliding_window = true;
  };
  if (!window && exaone4 && !types)  // configuration_exaone4.py L101-109: pattern 0, then (i + 1) % 0
    r.fail(tp + "layer_types", "missing beside sliding_window null on Exaone4ForCausalLM: transformers 5.19's "
                               "Exaone4Config then sets sliding_window_pattern to 0 and derives layer_types as "
                               "(i + 1) % 0, which raises, so SGLang could not load this file; write layer_types");
  if (!window) return none();

  // What SGLang does with it is the model class's choice: only the classes that pass a window to their attention
  // layers (RadixAttention(sliding_window_size=...)) and report it to the model runner
  // (get_attention_sliding_window_size, read by model_runner_components/load_model_utils.py
  // resolve_sliding_window_size: FlashInfer's two wrapper sets follow from it) window anything. Checked in the
  // 0.5.23 wheel: models/llama.py (LlamaForCausalLM, Phi3ForCausalLM), mistral.py (MistralForCausalLM is
  // LlamaForCausalLM), mixtral.py, qwen2.py, qwen3.py, qwen2_moe.py and qwen3_moe.py never read the window:
  // SGLang runs Mistral-7B's or a Qwen2 with use_sliding_window true on full attention, so attnbench does too
  // (window_ignored records it). Any other class that would window: refused, its rule not modelled.
  const std::string& arch = m.architecture;
  const bool any_said = std::find(windowed.begin(), windowed.end(), true) != windowed.end();
  if (kFullAttentionArchitectures.count(arch)) {
    if (any_said) m.window_ignored = *window;
    return none();
  }
  if (arch == "Gemma2ForCausalLM") {
    // gemma2.py L173: use_sliding_window = layer_id % 2 == 0 and hasattr(config, "sliding_window"), whatever
    // else the config says. Its config.json states no pattern; read as "every layer windowed" it would time
    // half the layers with the wrong attention span (transformers' Gemma2 is_sliding = not layer_idx % 2 alike).
    for (std::size_t l = 0; l < n; ++l) windowed[l] = l % 2 == 0;
  } else if (arch == "Gemma3ForCausalLM" || arch == "Gemma3ForConditionalGeneration" || arch == "GptOssForCausalLM" ||
             arch == "Cohere2ForCausalLM") {
    // gemma3_causal.py L185, gpt_oss.py L452 and commandr.py L206-210 window the layers config.layer_types names,
    // which transformers fills in when the file has none (Gemma-3 and Cohere2 from sliding_window_pattern, defaults
    // 6 and 4; GPT-OSS alternating): apply_class_defaults derives it for those model types. With no model_type and
    // neither key the window is refused, not guessed.
    if (!types && !pattern)
      r.fail(tp + "layer_types", "missing (required with a sliding_window on " + arch +
                                     ": SGLang windows the layers config.layer_types names, which transformers "
                                     "derives from sliding_window_pattern or a class default; write layer_types or "
                                     "sliding_window_pattern)");
    if (types)
      windowed = from_types;
    else
      by_pattern();
    if (arch == "Cohere2ForCausalLM") {
      // Cohere2's layers take config.sliding_window itself (no minus one), and the class reports no window to the
      // model runner (no get_attention_sliding_window_size; not on the hybrid-SWA list): FlashInfer then applies
      // none (runner_sliding_window, AttentionBackend::layer_windows).
      m.sliding_window_offset = 0;
      m.runner_sliding_window = false;
    }
  } else if (exaone4) {
    windowed = exaone4_windowed(r, tc, tp, *window, n);
  } else if (any_said) {
    r.fail(tp + "sliding_window",
           std::to_string(*window) + " on " + arch + ": SGLang 0.5.23's window rule for this model class is not " +
               "modelled (modelled: the windows of Gemma2ForCausalLM, Gemma3ForCausalLM, "
               "Gemma3ForConditionalGeneration, GptOssForCausalLM, Cohere2ForCausalLM and Exaone4ForCausalLM; Llama, "
               "Mistral, Mixtral, Phi-3, "
               "Phi-3.5-MoE, Qwen2 / 3 and their VL classes, StarCoder2, GLM-4, InternLM2, MiniCPM, ERNIE-4.5, HunYuan, "
               "Arcee and Apertus run full attention in SGLang, as here)");
  }
  if (std::find(windowed.begin(), windowed.end(), true) == windowed.end()) return none();
  m.sliding_window = *window;
  m.sliding_layers = shortest_period(windowed);
  if (m.sliding_layers.size() == 1 && m.sliding_layers[0]) m.sliding_layers.clear();  // every layer
}

// The attention scale and logit cap of the architectures whose SGLang model class sets them from the config
// (the others compute head_dim**-0.5 and no cap, and ignore these keys as SGLang does):
//   Gemma2ForCausalLM (models/gemma2.py, Gemma2Attention): self.scaling = config.query_pre_attn_scalar**-0.5;
//     RadixAttention(..., logit_cap=self.config.attn_logit_softcapping, ...).
//   Gemma3ForCausalLM, Gemma3ForConditionalGeneration (models/gemma3_causal.py, Gemma3Attention; the multimodal
//     class runs its language model through it): self.scaling = config.query_pre_attn_scalar**-0.5;
//     RadixAttention(..., logit_cap=0.0, ...): a Gemma-3 config's attn_logit_softcapping (null in the published
//     files) is not read.
// SGLang reads the transformers config object, which fills an absent key with its class default; so does
// apply_class_defaults for the file's model_type (Gemma2Config: 256 and 50.0; Gemma3TextConfig: 256). A config with no
// model_type (no class, no defaults) must write query_pre_attn_scalar, and on Gemma-2 attn_logit_softcapping (null:
// no cap, as RadixAttention takes None).
void read_gemma_scale_and_cap(const ConfigReader& r, const json& tc, const std::string& tp, ModelConfig& m) {
  const bool gemma2 = m.architecture == "Gemma2ForCausalLM";
  const bool gemma3 = m.architecture == "Gemma3ForCausalLM" || m.architecture == "Gemma3ForConditionalGeneration";
  if (!gemma2 && !gemma3) return;
  m.query_pre_attn_scalar = r.required_positive_number(
      tc, tp, "query_pre_attn_scalar", m.architecture + ": SGLang scales its attention by query_pre_attn_scalar**-0.5");
  if (gemma2) {
    if (!tc.contains("attn_logit_softcapping"))
      r.fail(tp + "attn_logit_softcapping", "missing (required for Gemma2ForCausalLM: SGLang passes it as the "
                                            "attention logit cap; write null for none)");
    if (const std::optional<double> cap = r.positive_number(tc, tp, "attn_logit_softcapping"))
      m.attn_logit_cap = static_cast<float>(*cap);
  }
}

// Granite's attention scale (muP): GraniteForCausalLM (models/granite.py, GraniteAttention: self.scaling =
// config.attention_multiplier) and GraniteMoeForCausalLM (models/granitemoe.py: attention_multiplier=
// config.attention_multiplier, head_dim**-1 only when None) hand RadixAttention the config's attention_multiplier,
// not head_dim**-0.5 (Granite-3 8B: 1/128 against 128**-0.5 = 0.088). Written in every published Granite config;
// absent, GraniteConfig / GraniteMoeConfig fill 1.0 (configuration_granite.py L86, configuration_granitemoe.py L70),
// which granite.py L161 hands RadixAttention as it is: so SGLang serves scale 1.0, and apply_class_defaults fills
// it. Still refused with no model_type (no class to take a default from), and null (GraniteConfig refuses None).
void read_granite_scale(const ConfigReader& r, const json& tc, const std::string& tp, ModelConfig& m) {
  if (m.architecture != "GraniteForCausalLM" && m.architecture != "GraniteMoeForCausalLM") return;
  m.attention_multiplier = r.required_positive_number(
      tc, tp, "attention_multiplier", m.architecture + ": SGLang scales its attention by attention_multiplier");
}

// Phi-3-small (0.5.23 wheel, models/phi3_small.py L129-134, Phi3SmallSelfAttention): norm_factor = head_dim /
// config.mup_attn_multiplier when config.mup_use_scaling, else sqrt(head_dim); scale = 1 / norm_factor, handed to
// RadixAttention (L198). Its config class is the model's remote code, whose defaults attnbench cannot see: both keys
// are required (the published configs write mup_use_scaling true and mup_attn_multiplier 1.0: scale 1/128).
void read_phi3_small_scale(const ConfigReader& r, const json& tc, const std::string& tp, ModelConfig& m) {
  if (m.architecture != "Phi3SmallForCausalLM") return;
  const std::optional<bool> mup = r.boolean(tc, tp, "mup_use_scaling");
  if (!mup) r.fail(tp + "mup_use_scaling", "missing (required for Phi3SmallForCausalLM: SGLang picks its attention scale by it)");
  if (!*mup) return;  // sqrt(head_dim): attnbench's default
  const double mult = r.required_positive_number(
      tc, tp, "mup_attn_multiplier", m.architecture + ": SGLang scales its attention by mup_attn_multiplier / head_dim");
  m.attention_multiplier = mult / m.head_dim;
}

// Grok (0.5.23 wheel, models/grok.py, Grok1Attention; EntryClass L1020: Grok1ForCausalLM and its alias
// Grok1ModelForCausalLM): a logit cap whether or not the config writes one, L425 logit_cap =
// max(getattr(config, "attn_logit_softcapping", 30.0), 0.0), by getattr(config, "attn_logit_softcapping_method",
// "tanh") (L426); L359 head_dim = getattr(config, "head_dim", 128) (not hidden_size / heads: parse_hf_config); and an
// attention temperature (L440 xai_temperature_len = getattr(config, "attn_temperature_len", -1)), not modelled.
bool is_grok(const std::string& arch) { return arch == "Grok1ForCausalLM" || arch == "Grok1ModelForCausalLM"; }

void read_grok_cap(const ConfigReader& r, const json& tc, const std::string& tp, ModelConfig& m) {
  if (!is_grok(m.architecture)) return;
  double cap = 30.0;
  if (tc.contains("attn_logit_softcapping")) {
    const json& v = tc["attn_logit_softcapping"];
    if (v.is_null())
      r.fail(tp + "attn_logit_softcapping", "null (SGLang's max(None, 0.0) raises; write 0 for no cap, or leave it out for 30)");
    if (v.is_number() && v.get<double>() <= 0.0)
      cap = 0.0;  // max(cap, 0.0): no cap
    else
      cap = r.positive_number(tc, tp, "attn_logit_softcapping").value();
  }
  if (const json* meth = ConfigReader::find(tc, "attn_logit_softcapping_method"); meth && !(meth->is_string() && meth->get<std::string>() == "tanh"))
    r.fail(tp + "attn_logit_softcapping_method", shown(*meth) + ": only SGLang's default tanh cap is modelled");
  if (const json* t = ConfigReader::find(tc, "attn_temperature_len"); t && !(t->is_number() && t->get<double>() <= 0))
    r.fail(tp + "attn_temperature_len", shown(*t) + ": Grok's attention temperature (xai_temperature_len) is not modelled");
  m.attn_logit_cap = static_cast<float>(cap);
}

// The model_type whose class defaults the attention object takes ("" for none), as transformers picks the class:
// with a text_config, a multimodal class's own text class (Gemma3Config L222-223 always builds a Gemma3TextConfig;
// "fixed" in the table), else text_config's own model_type, else the one the top-level class defaults it to
// (Mistral3Config L83: "mistral"); without one, the top-level model_type (a multimodal class's text class when the
// file is flat: Qwen2VLConfig L179-184 builds its text config from the top-level keys).
std::string class_model_type(const HfClassDefaults& d, const std::string& root_type, const std::string& text_type,
                             bool has_text_config) {
  const json& types = d.model_types;
  std::string mt = has_text_config ? text_type : root_type;
  if (const auto it = types.find(root_type); it != types.end() && it->contains("text_config")) {
    const json& sub = (*it)["text_config"];
    if (!has_text_config || sub["fixed"].get<bool>() || text_type.empty()) mt = sub["model_type"].get<std::string>();
  }
  const auto it = types.find(mt);
  if (mt.empty() || it == types.end() || it->contains("text_config")) return "";
  return mt;
}

// Writes a default the file left out into `tc` and notes where it came from (for error messages).
void fill_default(json& tc, const std::string& tp, const std::string& key, const json& v, const std::string& from,
                  std::map<std::string, std::string>& notes) {
  tc[key] = v;
  notes[tp + key] = "not written: " + shown(v) + ", the class default of " + from;
}

// Fills `tc` (a copy of the attention object) with the class defaults of model_type `mt` beneath what it writes, as
// transformers' class does; records each filled key in `notes` (for error messages).
void apply_class_defaults(const ConfigReader& r, const HfClassDefaults& d, const std::string& mt, json& tc,
                          const std::string& tp, std::map<std::string, std::string>& notes) {
  const json& e = d.model_types[mt];
  const std::string cls = e["class"].get<std::string>();
  const std::string from = "transformers 5.19's " + cls + " (model_type " + mt + ", " + d.source + ")";
  if (const auto nn = e.find("typed_not_null"); nn != e.end())
    for (const json& k : *nn) {
      const std::string key = k.get<std::string>();
      if (const auto v = tc.find(key); v != tc.end() && v->is_null()) {
        const auto def = e["defaults"].find(key);
        r.fail(tp + key, "null, which " + from + " refuses (it types " + key + " without None), so SGLang could not "
                         "load this file; leave the key out for the class default" +
                             (def != e["defaults"].end() ? " " + shown(*def) : std::string()));
      }
    }
  if (const auto defs = e.find("defaults"); defs != e.end())
    for (auto it = defs->begin(); it != defs->end(); ++it)
      if (!tc.contains(it.key()) && !it->is_null())  // a None default is what attnbench's absent key means already
        fill_default(tc, tp, it.key(), *it, from, notes);
  const auto rule = e.find("layer_types_from_pattern");
  if (rule == e.end() || (tc.contains("layer_types") && !tc["layer_types"].is_null())) return;
  long long period = (*rule)["default"].get<long long>();
  std::string how = std::string("the class's fixed period ") + std::to_string(period);
  if (const auto key = rule->find("key"); key != rule->end()) {
    const std::string k = key->get<std::string>();
    how = k + " " + std::to_string(period) + " (the class default)";
    if (const auto v = tc.find(k); v != tc.end()) {
      if (v->is_null())
        r.fail(tp + k, "null, and layer_types is not written: " + from + " derives layer_types from " + k +
                           " ((i + 1) % None raises), so SGLang could not load this file; leave it out for the "
                           "class default " + std::to_string(period));
      if (!v->is_number_integer() || v->get<long long>() < 1) return;  // read_windows names what is wrong with it
      period = v->get<long long>();
      how = k + " " + std::to_string(period);
    }
  }
  const auto layers = tc.find("num_hidden_layers");
  if (layers == tc.end() || !layers->is_number_integer() || layers->get<long long>() < 1 ||
      layers->get<long long>() > 1024)
    return;  // read as num_hidden_layers, which names what is wrong
  json types = json::array();
  for (long long i = 0; i < layers->get<long long>(); ++i)
    types.push_back((i + 1) % period != 0 ? "sliding_attention" : "full_attention");
  tc["layer_types"] = std::move(types);
  notes[tp + "layer_types"] = "not written: derived as " + from + " derives it, every layer full attention whose "
                              "index + 1 is a multiple of " + how;
}

// ChatGLM (ChatGLM3, GLM-4-9B-chat: architectures ChatGLMModel, model_type chatglm), which SGLang 0.5.23 loads through
// its own ChatGLMConfig (configs/chatglm.py L13-70: num_layers 28, hidden_size 4096, num_attention_heads 32,
// seq_length 2048, multi_query_attention false, multi_query_group_num 1 by default) and serves with
// models/chatglm.py's GLMAttention: KV heads multi_query_group_num where multi_query_attention, else the attention
// heads (L63-67); head_dim hidden_size // heads (L78; kv_channels is not read there); scale head_dim**-0.5 (L81); no
// window. Rewritten into the keys attnbench reads (num_hidden_layers, num_key_value_heads; head_dim dropped so that
// it is derived as GLMAttention derives it), each noted for error messages.
void map_chatglm(const ConfigReader& r, json& tc, const std::string& tp, std::map<std::string, std::string>& notes) {
  const std::string from = "SGLang's ChatGLMConfig (configs/chatglm.py)";
  auto fill = [&](const char* key, const json& v) {
    if (!tc.contains(key) || tc[key].is_null()) fill_default(tc, tp, key, v, from, notes);
  };
  fill("num_layers", 28);
  fill("hidden_size", 4096);
  fill("num_attention_heads", 32);
  fill("seq_length", 2048);
  if (!tc.contains("num_hidden_layers")) {
    tc["num_hidden_layers"] = tc["num_layers"];
    notes[tp + "num_hidden_layers"] = "ChatGLM's num_layers (" + from + ": attribute_map)";
  }
  const bool mqa = r.boolean(tc, tp, "multi_query_attention").value_or(false);
  if (!tc.contains("num_key_value_heads")) {
    fill("multi_query_group_num", 1);
    tc["num_key_value_heads"] = mqa ? tc["multi_query_group_num"] : tc["num_attention_heads"];
    notes[tp + "num_key_value_heads"] = mqa ? "ChatGLM's multi_query_group_num (multi_query_attention true; SGLang's "
                                              "models/chatglm.py L63-67)"
                                            : "ChatGLM's num_attention_heads (multi_query_attention false; SGLang's "
                                              "models/chatglm.py L63-67)";
  }
  tc.erase("head_dim");
  notes[tp + "head_dim"] = "ChatGLM's hidden_size // num_attention_heads (SGLang's models/chatglm.py L78)";
}

// "attnbench": {"name": ..., "tp_size": ...}: attnbench's own key (SGLang ignores it as unknown).
void read_attnbench_key(const ConfigReader& r, const json& root, ModelConfig& m) {
  const json* a = ConfigReader::find(root, "attnbench");
  if (!a) return;
  if (!a->is_object()) r.fail("attnbench", "must be an object (got " + shown(*a) + ")");
  for (auto it = a->begin(); it != a->end(); ++it)
    if (it.key() != "name" && it.key() != "tp_size")
      r.fail("attnbench." + printable(it.key()), "unknown key (known: name, tp_size)");
  if (auto name = r.string(*a, "attnbench.", "name")) {
    if (name->empty() || name->size() > 64) r.fail("attnbench.name", "must be 1 to 64 characters");
    for (char c : *name)
      if (!name_char(c))
        r.fail("attnbench.name", "'" + printable(*name) + "' has a character outside [A-Za-z0-9._+-]");
    m.name = *name;
  }
  if (auto tp = r.integer(*a, "attnbench.", "tp_size", 1, 1024)) {
    // SGLang's rule, checked where the file says it (server_args.cpp checks a --tp-size override by the same helper).
    m.tp_size = *tp;
    if (const std::string problem = m.tp_split_problem(); !problem.empty()) r.fail("attnbench.tp_size", problem);
  }
}

}  // namespace


HfClassDefaults parse_hf_class_defaults(std::string_view text, const std::string& source) {
  const auto bad = [&](const std::string& key, const std::string& what) -> void {
    throw InputError(source + ": " + key + ": " + what + " (transformers' class defaults for --model config.json files)");
  };
  json root;
  check_json_nesting(text, kMaxJsonNesting, source);
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(source + ": not valid JSON (" + printable(e.what()) +
                     ") (transformers' class defaults for --model config.json files)");
  }
  if (!root.is_object() || !root.contains("model_types") || !root["model_types"].is_object())
    bad("model_types", "missing or not an object");
  HfClassDefaults d;
  d.source = source;
  for (auto it = root["model_types"].begin(); it != root["model_types"].end(); ++it) {
    if (it.key().rfind('_', 0) == 0) continue;  // a comment
    const std::string at = "model_types." + printable(it.key());
    const json& e = *it;
    if (!e.is_object()) bad(at, "must be an object");
    if (!e.contains("_source") || !e["_source"].is_string() || e["_source"].get<std::string>().empty())
      bad(at + "._source", "missing (each entry cites the transformers file and line it was read from)");
    if (!e.contains("class") || !e["class"].is_string()) bad(at + ".class", "missing or not a string");
    for (auto k = e.begin(); k != e.end(); ++k)
      if (k.key().rfind('_', 0) != 0 && k.key() != "class" && k.key() != "defaults" && k.key() != "typed_not_null" &&
          k.key() != "layer_types_from_pattern" && k.key() != "text_config")
        bad(at + "." + printable(k.key()),
            "unknown key (known: class, defaults, typed_not_null, layer_types_from_pattern, text_config)");
    if (const auto defs = e.find("defaults"); defs != e.end()) {
      if (!defs->is_object()) bad(at + ".defaults", "must be an object");
      for (auto k = defs->begin(); k != defs->end(); ++k)
        if (k->is_object() || k->is_array() || k->is_string())
          bad(at + ".defaults." + printable(k.key()), "must be a number, true / false or null (got " + shown(*k) + ")");
    }
    if (const auto nn = e.find("typed_not_null"); nn != e.end())
      if (!nn->is_array() || !std::all_of(nn->begin(), nn->end(), [](const json& k) { return k.is_string(); }))
        bad(at + ".typed_not_null", "must be a list of key names");
    if (const auto rule = e.find("layer_types_from_pattern"); rule != e.end()) {
      if (!rule->is_object() || !rule->contains("default") || !(*rule)["default"].is_number_integer() ||
          (*rule)["default"].get<long long>() < 1)
        bad(at + ".layer_types_from_pattern", "must be an object with a positive integer default");
      if (rule->contains("key") && !(*rule)["key"].is_string()) bad(at + ".layer_types_from_pattern.key", "must be a string");
    }
    if (const auto sub = e.find("text_config"); sub != e.end()) {
      if (!sub->is_object() || !sub->contains("model_type") || !(*sub)["model_type"].is_string() ||
          !sub->contains("fixed") || !(*sub)["fixed"].is_boolean())
        bad(at + ".text_config", "must be an object with model_type (a string) and fixed (true / false)");
      if (e.contains("defaults")) bad(at, "has both text_config and defaults (a multimodal class names its text class)");
    }
  }
  for (auto it = root["model_types"].begin(); it != root["model_types"].end(); ++it)
    if (it.key().rfind('_', 0) != 0 && it->contains("text_config")) {
      const std::string sub = (*it)["text_config"]["model_type"].get<std::string>();
      const auto target = root["model_types"].find(sub);
      if (target == root["model_types"].end() || target->contains("text_config"))
        bad("model_types." + printable(it.key()) + ".text_config.model_type",
            "'" + printable(sub) + "' is no entry with defaults in this file");
    }
  d.model_types = std::move(root["model_types"]);
  return d;
}

HfClassDefaults read_hf_class_defaults(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw InputError("class defaults " + printable(path) +
                     ": no such file (transformers' class defaults for --model config.json files)");
  return parse_hf_class_defaults(
      read_input_file(path, "class defaults", static_cast<std::int64_t>(kMaxHfConfigBytes)), printable(path));
}

const HfClassDefaults& hf_class_defaults() {
  static std::mutex mu;
  static std::optional<HfClassDefaults> cached;
  static std::string cached_for;
  const std::lock_guard<std::mutex> lock(mu);
  const char* env = std::getenv("ATTNBENCH_HF_CLASS_DEFAULTS");
  const std::string from = env && *env ? env : "";
  if (!cached || cached_for != from) {
    cached.reset();
    cached = from.empty() ? parse_hf_class_defaults(std::string_view(kHfClassDefaultsText, kHfClassDefaultsSize),
                                                    "configs/hf-class-defaults.json (built in)")
                          : read_hf_class_defaults(from);
    cached_for = from;
  }
  return *cached;
}

std::string model_name_from_path(const std::string& path) {
  const std::filesystem::path p(path);
  std::string name = p.stem().string();
  if (p.filename() == "config.json") {
    const std::filesystem::path parent = p.parent_path().filename();
    name = parent.empty() || parent == "." || parent == ".." ? "config" : parent.string();
  }
  for (char& c : name)
    if (!name_char(c)) c = '-';
  if (name.empty()) name = "model";
  if (name.size() > 64) name.resize(64);
  return name;
}

ModelConfig parse_hf_config(std::string_view text, const std::string& source, const std::string& default_name) {
  return parse_hf_config(text, source, default_name, hf_class_defaults());
}

ModelConfig parse_hf_config(std::string_view text, const std::string& source, const std::string& default_name,
                            const HfClassDefaults& defaults) {
  ConfigReader r(source);
  json root;
  // A key given twice in one object: nlohmann keeps the last silently, Python's json.load too, so the file
  // means whatever the last reader decides. Refused, naming the key.
  std::vector<std::set<std::string>> keys_in_open_objects;
  std::string duplicate;
  const json::parser_callback_t no_duplicate_keys = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      keys_in_open_objects.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      if (!keys_in_open_objects.empty()) keys_in_open_objects.pop_back();
    } else if (event == json::parse_event_t::key && !keys_in_open_objects.empty() && duplicate.empty() &&
               !keys_in_open_objects.back().insert(parsed.get<std::string>()).second) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  // A UTF-8 byte order mark: nlohmann skips it, but transformers reads config.json as "utf-8" and Python's json.loads
  // refuses a leading U+FEFF ("Unexpected UTF-8 BOM"), so SGLang cannot load the file: refused, not read.
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF")
    r.fail("top level", "starts with a UTF-8 byte order mark, which transformers' config reader (Python's json) refuses, "
                        "so SGLang could not load this file; save it without the BOM");
  check_json_nesting(text, kMaxJsonNesting, "--model " + source);
  try {
    root = json::parse(text, no_duplicate_keys);
  } catch (const json::exception& e) {
    throw InputError("--model " + source + ": not valid JSON (" + printable(e.what()) + ")");
  }
  if (!duplicate.empty()) r.fail(printable(duplicate), "given twice in one object (which one is meant?)");
  if (!root.is_object()) r.fail("top level", "must be a JSON object (got " + shown(root) + ")");
  // A multimodal config keeps the language model's keys in a sub-config, SGLang's hf_text_config
  // (utils/hf_transformers/common.py get_hf_text_config L583-604), taken in its order: thinker_config (Qwen2.5 /
  // Qwen3-Omni; its own text_config where it has one), llm_config (InternVL, POINTS), language_config (DeepSeek-VL2),
  // text_config. The dtype SGLang reads is that object's, else the top level's (L565-580: a sub-config without one
  // takes its parent's); a thinker's text_config takes the thinker's whatever it writes (L586-590).
  const json* text_config = nullptr;
  std::string tp;
  const json* dtype_obj = nullptr;  // the object whose dtype SGLang reads before the top level's
  std::string dtype_prefix;
  for (const char* key : {"thinker_config", "llm_config", "language_config", "text_config"}) {
    const json* sub_config = ConfigReader::find(root, key);
    if (!sub_config) continue;
    if (!sub_config->is_object()) r.fail(key, "must be an object (got " + shown(*sub_config) + ")");
    text_config = dtype_obj = sub_config;
    tp = dtype_prefix = std::string(key) + ".";
    if (std::string(key) == "thinker_config")
      if (const json* inner = ConfigReader::find(*sub_config, "text_config")) {
        if (!inner->is_object()) r.fail(tp + "text_config", "must be an object (got " + shown(*inner) + ")");
        text_config = inner;
        tp += "text_config.";
      }
    break;
  }
  const json& tc_file = text_config ? *text_config : root;

  ModelConfig m;
  m.name = default_name;
  m.architecture = read_architecture(r, root, tc_file, tp);
  std::string model_type, root_model_type, text_model_type;
  if (auto t = r.string(root, "", "model_type")) root_model_type = *t;
  if (text_config != nullptr)
    if (auto t2 = r.string(tc_file, tp, "model_type")) text_model_type = *t2;
  // The model_type SGLang's dtype rule reads: the text config's (hf_text_config.model_type), else the top level's.
  model_type = !text_model_type.empty() ? text_model_type : root_model_type;
  // What transformers' config class makes of the attention object: its class defaults beneath what the file writes.
  json tc_merged = tc_file;
  std::map<std::string, std::string> from_defaults;
  if (const std::string cls = class_model_type(defaults, root_model_type, text_model_type, text_config != nullptr);
      !cls.empty())
    apply_class_defaults(r, defaults, cls, tc_merged, tp, from_defaults);
  if (m.architecture == "ChatGLMModel") map_chatglm(r, tc_merged, tp, from_defaults);
  r.set_notes(std::move(from_defaults));
  const json& tc = tc_merged;

  // Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2: kv_lora_rank) caches one compressed latent per
  // token, not K and V per head; SGLang runs it on its MLA backends, which attnbench does not model. Read as
  // MHA it would be silent nonsense (DeepSeek-V2-Lite: 16 heads of hidden_size / heads = 128).
  if (const json* kv_lora = ConfigReader::find(tc, "kv_lora_rank"))
    r.fail(tp + "kv_lora_rank", shown(*kv_lora) + ": multi-head latent attention (MLA, " + m.architecture +
                                    ") is not modelled; attnbench models the MHA / GQA backends");
  // Chunked local attention (Llama-4: attention_chunk_size): most layers attend only within their chunk,
  // which attnbench's kernels and case rules do not model.
  if (const json* chunk = ConfigReader::find(tc, "attention_chunk_size"))
    r.fail(tp + "attention_chunk_size", shown(*chunk) + ": chunked local attention (" + m.architecture +
                                            ") is not modelled");
  // Dual chunk attention (Qwen2.5-1M: dual_chunk_attention_config): SGLang's get_rope builds a
  // DualChunkRotaryEmbedding (layers/rotary_embedding/factory.py L172-178) whose forward joins five query variants
  // along the last dimension (rope_variant.py L829-833): a query 5 x head_dim wide that only a dual-chunk attention
  // backend reads, none of the ones attnbench models.
  if (const json* dca = ConfigReader::find(tc, "dual_chunk_attention_config"); dca && !dca->is_null())
    r.fail(tp + "dual_chunk_attention_config", shown(*dca) + ": dual chunk attention (" + m.architecture +
                                                   ") is not modelled");
  // Encoder-decoder models (SGLang 0.5.23's is_encoder_decoder_model, configs/model_config.py L2540: Whisper,
  // Mllama, MossVL) run cross-attention layers over the encoder's states, for which FlashInfer keeps a second
  // wrapper set (flashinfer_backend.py L414, CROSS_ATTENTION); attnbench's cases and kernels are self-attention.
  for (const char* ed : {"WhisperForConditionalGeneration", "MllamaForConditionalGeneration", "MossVLForConditionalGeneration"})
    if (m.architecture == ed)
      r.fail("architectures", m.architecture + ": an encoder-decoder model (cross-attention layers) is not modelled");
  // Encoder-only and bidirectional models: SGLang 0.5.23 builds their RadixAttention with
  // AttentionType.ENCODER_ONLY (non-causal, every token seeing every other, no decode step): bert.py L241-248
  // (BertModel, Contriever, BertForSequenceClassification; roberta.py reuses its encoder), embedding_gemma2.py L191,
  // sdar.py L168, sdar_moe.py L253, llada2.py L1021 (diffusion LMs' block masks). attnbench's cases are causal decoders.
  for (const char* enc : {"BertModel", "Contriever", "BertForSequenceClassification", "XLMRobertaModel",
                          "XLMRobertaForSequenceClassification", "EmbeddingGemma2Model", "SDARForCausalLM",
                          "SDARMoeForCausalLM", "LLaDA2MoeModelLM"})
    if (m.architecture == enc)
      r.fail("architectures", m.architecture + ": an encoder-only / bidirectional model (SGLang builds its attention "
                              "as ENCODER_ONLY: non-causal, no decode) is not modelled; attnbench models causal decoders");
  // EmbeddingGemma: a Gemma-3 text config with use_bidirectional_attention true, which SGLang's Gemma3Attention
  // builds as AttentionType.DECODER_BIDIRECTIONAL (models/gemma3_causal.py L238-245; configs/model_config.py
  // is_embedding_gemma): an embedding model whose prompt attention is non-causal. The key is read on the Gemma-3
  // classes only (getattr on the text config); elsewhere SGLang ignores it, as attnbench does.
  if (m.architecture == "Gemma3ForCausalLM" || m.architecture == "Gemma3ForConditionalGeneration" ||
      m.architecture == "Gemma3TextModel")
    if (const std::optional<bool> bi = r.boolean(tc, tp, "use_bidirectional_attention"); bi && *bi)
      r.fail(tp + "use_bidirectional_attention",
             "true: bidirectional prompt attention (EmbeddingGemma; SGLang's Gemma3Attention takes "
             "AttentionType.DECODER_BIDIRECTIONAL, models/gemma3_causal.py L238-245) is not modelled; attnbench models "
             "causal decoders");
  // Hybrid models whose layers are not all attention layers, or whose layers carry a state-space block beside
  // attention (Jamba, Nemotron-H, Falcon-H1, Qwen3-Next, Granite-4 hybrids, RecurrentGemma): SGLang serves them
  // with its hybrid pools (Mamba / linear-attention state beside the KV cache) and backends, and caches K / V for
  // the attention layers only. Read as a plain decoder every layer would be an attention layer: silent nonsense
  // in every memory figure. Refused, naming the key that shows it (the keys these configs write).
  for (const char* key : {"layers_block_type", "hybrid_override_pattern", "attn_layer_period", "full_attention_interval",
                          "linear_num_value_heads", "block_types", "mamba_d_state", "mamba_d_ssm", "mamba_n_heads",
                          "mamba_num_heads", "ssm_cfg", "linear_attn_config"})
    if (const json* v = ConfigReader::find(tc, key))
      r.fail(tp + key, shown(*v) + ": a hybrid attention / state-space or linear-attention model (" + m.architecture +
                           ") is not modelled; attnbench models decoders whose every layer is MHA / GQA attention");
  // MiniMax-Text-01 / M1 (attn_type_list: 0 = a lightning (linear) attention layer, 1 = softmax attention; SGLang's
  // configs/model_config.py counts only the 1s as attention layers): hybrid unless every entry is 1.
  if (const json* types = ConfigReader::find(tc, "attn_type_list")) {
    const bool all_softmax = types->is_array() && std::all_of(types->begin(), types->end(), [](const json& t) {
                               return t.is_number_integer() && t.get<long long>() == 1;
                             });
    if (!all_softmax)
      r.fail(tp + "attn_type_list", shown(*types) + ": a hybrid linear / softmax attention model (" + m.architecture +
                                        ") is not modelled; attnbench models decoders whose every layer is MHA / GQA attention");
  }
  // Cross-layer KV sharing (HunYuan's use_cla / cla_share_factor, Gemma-3n's num_kv_shared_layers): some layers
  // read another layer's K / V and cache none of their own, so a pool of num_hidden_layers layers would be wrong.
  if (const std::optional<bool> cla = r.boolean(tc, tp, "use_cla"); cla && *cla)
    r.fail(tp + "use_cla", "true: cross-layer KV sharing (" + m.architecture + ") is not modelled");
  if (const json* shared = ConfigReader::find(tc, "num_kv_shared_layers");
      shared && !(shared->is_number_integer() && shared->get<long long>() == 0))
    r.fail(tp + "num_kv_shared_layers", shown(*shared) + ": cross-layer KV sharing (" + m.architecture + ") is not modelled");
  // K / V heads under another model family's key (Falcon's multi_query / num_kv_heads, GPT-2-style n_head, ChatGLM's
  // multi_query_group_num, which SGLang's configs/chatglm.py maps to n_head_kv): the
  // count attnbench would take for num_key_value_heads (all heads) would be wrong.
  if (!ConfigReader::find(tc, "num_key_value_heads"))
    for (const char* key : {"multi_query", "num_kv_heads", "n_head_kv", "n_head", "multi_query_group_num"})
      if (const json* v = ConfigReader::find(tc, key))
        r.fail(tp + key, shown(*v) + ": the model's heads are given under a key attnbench does not read "
                                     "(it reads num_attention_heads and num_key_value_heads)");
  // The layer count under another family's key (ChatGLM's num_layers, GPT-2-style n_layer): named, not "missing".
  if (!ConfigReader::find(tc, "num_hidden_layers"))
    for (const char* key : {"num_layers", "n_layer", "n_layers"})
      if (const json* v = ConfigReader::find(tc, key))
        r.fail(tp + key, shown(*v) + ": the model's layers are given under a key attnbench does not read (it reads "
                                     "num_hidden_layers)");
  m.num_layers = r.required_integer(tc, tp, "num_hidden_layers", 1, 1024);
  m.num_attention_heads = r.required_integer(tc, tp, "num_attention_heads", 1, 1024);
  m.num_key_value_heads = r.integer(tc, tp, "num_key_value_heads", 1, 1024).value_or(m.num_attention_heads);
  if (m.num_attention_heads % m.num_key_value_heads != 0)
    r.fail(tp + "num_key_value_heads", std::to_string(m.num_attention_heads) + " attention heads are not divisible by " +
                                           std::to_string(m.num_key_value_heads) + " KV heads");
  // Classes whose attention derives head_dim as hidden_size // num_attention_heads whatever the config writes (0.5.23
  // wheel, models/): GraniteMoe (granitemoe.py L235), Cohere / Cohere2 (commandr.py L158), OLMo (olmo.py L72),
  // OLMo-2 (olmo2.py L100), StableLM (stablelm.py L112), StarCoder2 (starcoder2.py L79), InternLM2 (internlm2.py
  // L113), Persimmon (persimmon.py L64); a head_dim key is still checked, then not used. (Granite's granite.py
  // L156-158, Arcee's arcee.py L135-137 and Solar's solar.py L128-130 take getattr(config, "head_dim", hidden_size //
  // heads), as here.)
  static const std::set<std::string> kHeadDimFromHidden = {
      "GraniteMoeForCausalLM", "CohereForCausalLM",   "Cohere2ForCausalLM",   "OlmoForCausalLM",
      "Olmo2ForCausalLM",      "StableLmForCausalLM", "Starcoder2ForCausalLM", "InternLM2ForCausalLM",
      "PersimmonForCausalLM"};
  const bool head_dim_from_hidden = kHeadDimFromHidden.count(m.architecture) > 0;
  constexpr int kMaxHeadDim = 1024;  // a written head_dim's range, and a derived one's
  const std::optional<int> head_dim_key = r.integer(tc, tp, "head_dim", 1, kMaxHeadDim);
  if (head_dim_key && !head_dim_from_hidden) {
    m.head_dim = *head_dim_key;
    m.head_dim_from = tp + "head_dim";
    if (const std::string n = r.note(tp + "head_dim"); !n.empty()) m.head_dim_from += " [" + n + "]";
  } else if (is_grok(m.architecture)) {
    m.head_dim = 128;  // models/grok.py, Grok1Attention: self.head_dim = getattr(config, "head_dim", 128)
  } else {
    const std::optional<int> hidden = r.integer(tc, tp, "hidden_size", 1, 1 << 20);
    if (!hidden && head_dim_from_hidden)
      r.fail(tp + "hidden_size", "missing (required: " + m.architecture + " derives head_dim as hidden_size / num_attention_heads)");
    if (!hidden) r.fail(tp + "head_dim", "missing, and no hidden_size to derive it from (hidden_size / num_attention_heads)");
    if (*hidden % m.num_attention_heads != 0)
      r.fail(tp + "hidden_size", std::to_string(*hidden) + " is not divisible by num_attention_heads " +
                                     std::to_string(m.num_attention_heads) +
                                     (head_dim_from_hidden ? " (" + m.architecture + " derives head_dim from them)"
                                                           : std::string(" (and there is no head_dim)")));
    m.head_dim = *hidden / m.num_attention_heads;
    if (m.head_dim > kMaxHeadDim)
      r.fail(tp + "hidden_size", std::to_string(*hidden) + " / num_attention_heads " +
                                     std::to_string(m.num_attention_heads) + " gives head_dim " +
                                     std::to_string(m.head_dim) + ", above " + std::to_string(kMaxHeadDim));
    m.head_dim_from = "derived as " + tp + "hidden_size " + std::to_string(*hidden) + " / num_attention_heads " +
                      std::to_string(m.num_attention_heads);
  }
  m.context_len = read_context_len(r, tc, tp, rope_by_layer_type(root_model_type, text_model_type, m.architecture));
  m.dtype = read_dtype(r, root, dtype_obj ? *dtype_obj : root, dtype_prefix, model_type, m.architecture);
  read_windows(r, tc, tp, m);
  m.has_sinks = m.architecture == "GptOssForCausalLM";  // learned sinks per head, no config key
  m.is_multimodal = is_multimodal(m.architecture, text_config != nullptr);
  read_gemma_scale_and_cap(r, tc, tp, m);
  read_granite_scale(r, tc, tp, m);
  read_phi3_small_scale(r, tc, tp, m);
  read_grok_cap(r, tc, tp, m);
  read_attnbench_key(r, root, m);
  return m;
}

std::string hf_config_path(const std::string& given) {
  // A model folder (what SGLang's --model-path takes, e.g. a Hugging Face snapshot): its config.json.
  std::error_code ec;
  if (std::filesystem::is_directory(given, ec)) return (std::filesystem::path(given) / "config.json").string();
  return given;
}

ModelConfig read_hf_config(const std::string& given) {
  std::error_code ec;
  auto st = std::filesystem::status(given, ec);
  if (ec || !std::filesystem::exists(st))
    throw InputError("--model " + printable(given) + ": no such file (expected a preset name, a config.json or a model folder)");
  const std::string path = hf_config_path(given);
  if (path != given) {
    st = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(st))
      throw InputError("--model " + printable(given) + ": a folder without a config.json");
  }
  // A regular file of at most kMaxHfConfigBytes, checked on the descriptor it is read from (core/files: a FIFO or
  // a device is refused before any read, a file swapped or grown meanwhile too), without NUL bytes.
  const std::string text = read_input_file(path, "--model", static_cast<std::int64_t>(kMaxHfConfigBytes));
  const std::string shown_path = printable(path);
  ModelConfig m = parse_hf_config(text, shown_path, model_name_from_path(path));
  m.source = shown_path;
  return m;
}

}  // namespace attnbench
