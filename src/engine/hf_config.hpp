// A model from a Hugging Face config.json: only the attention shapes, no weights. Reads the keys SGLang's
// model config reads and ignores every other key, as SGLang does. SGLang loads the file through transformers
// (5.19, its pin), whose config classes fill a key the file does not write with the class default: so does
// attnbench, beneath what the file writes, for the model types listed in configs/hf-class-defaults.json (data, with
// each default's transformers file and line; embedded at build time): gemma, gemma2, gemma3 (its text_config as
// gemma3_text), gemma3_text, cohere2, exaone4, gpt_oss, llama, mistral, mistral3 (text_config as its model_type, else
// mistral), mixtral, phi3, phimoe, qwen2, qwen2_moe, qwen3, qwen3_moe, qwen2_vl / qwen2_5_vl / qwen3_vl (their
// *_text classes), glm4, ernie4_5, hunyuan_v1_dense, arcee, apertus, starcoder2, granite, granitemoe. The class is
// the attention object's model_type (a multimodal class's text_config class, else text_config's own model_type);
// no model_type, no defaults. An absent key takes the default; one written null stays null (refused where the class
// types the key without None, as transformers refuses it); layer_types, absent or null, is derived as the class's
// __post_init__ derives it (Gemma-3: every sliding_window_pattern-th layer full, default 6). Then, over the merged
// object (the defaults named in errors where they matter):
//   architectures[0]                     -> architecture (SGLang's per-architecture rules key on it)
//   num_hidden_layers, num_attention_heads, num_key_value_heads (default: num_attention_heads)
//   head_dim (default: hidden_size / num_attention_heads), max_position_embeddings -> context_len
//   dtype or torch_dtype                 -> dtype: bfloat16, float16; float32 or absent become float16
//                                           (bfloat16 for model_type gemma*), as SGLang's dtype "auto" does;
//                                           text_config's before the top level's, "dtype" before "torch_dtype"
//                                           (as SGLang's hf_text_config and transformers 5.19 read them);
//                                           GPT-OSS with quantization_config.quant_method "mxfp4": bfloat16
//                                           (SGLang's gpt_oss model override)
//   sliding windows, in the forms real configs use (sliding_window: tokens, null = none):
//     layer_types ["sliding_attention" | "full_attention", ...] (GPT-OSS, newer Gemma-3 / Qwen exports),
//     use_sliding_window false (Qwen2/3: no window) or true with max_window_layers (layers >= it are windowed),
//     sliding_window_pattern N (Gemma-3: every Nth layer is full attention),
//     sliding_window alone (every layer is windowed), Gemma2ForCausalLM's even layers;
//   applied as SGLang 0.5.23's model class applies them: Gemma-2 on its even layers, Gemma-3 and GPT-OSS on the
//   layers layer_types (or Gemma-3's sliding_window_pattern) names, one of which is then required; ignored (every
//   layer full attention, window_ignored set) on Llama, Mistral, Mixtral, Phi-3 and Qwen2 / 3 / MoE, whose classes
//   take no window; Exaone-4 on every layer but each len(sliding_window_pattern)-th (a string, "LLLG");
//   refused (exit 2) on any other class that would window, its rule not modelled
//   architecture GptOssForCausalLM       -> has_sinks (GPT-OSS learns a sink logit per head; no config key)
// A multimodal config's sub-config holds the attention keys, the first of thinker_config (its text_config where it
// has one), llm_config, language_config and text_config (Gemma3ForConditionalGeneration), as SGLang's
// get_hf_text_config picks it; architectures are read at the top level first, model_type and the dtype in the
// sub-config first (a thinker's text_config: the thinker's dtype).
// attnbench's own key, which SGLang would ignore as unknown: "attnbench": {"name": "...", "tp_size": N}
// (the model's name in case ids, and the tensor-parallel degree the preset is for; --tp-size overrides).
// context_len: SGLang's derived context length (read_context_len in hf_config.cpp: the first context key, times
// rope_scaling's factor where SGLang's get_context_length applies it).
// A file starting with a UTF-8 byte order mark is refused (transformers' json.loads refuses it).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/model_config.hpp"

namespace attnbench {

constexpr std::size_t kMaxHfConfigBytes = 1 << 20;  // a config.json is a few KiB; refuse anything beyond 1 MiB

// Reads the config.json at `path` (a regular file of at most 1 MiB; a folder: its config.json, as SGLang's
// --model-path takes a model folder) and parses it; the model's name is attnbench.name, else
// model_name_from_path of the file. Throws InputError "--model PATH: <key>: <what>".
ModelConfig read_hf_config(const std::string& path);
// The file read_hf_config reads for `given`: a folder's config.json, else `given` itself (nothing checked).
std::string hf_config_path(const std::string& given);

// transformers' class defaults (configs/hf-class-defaults.json, validated): model_type -> its entry.
struct HfClassDefaults {
  std::string source;       // the file, for messages: "configs/hf-class-defaults.json"
  nlohmann::json model_types;  // as the file's "model_types", checked by parse_hf_class_defaults
};
// Parses and checks the text of a defaults file; throws InputError "<source>: <key>: <what>" when malformed.
HfClassDefaults parse_hf_class_defaults(std::string_view text, const std::string& source);
// Reads and parses the defaults file at `path`; a missing or unreadable file is an InputError naming it.
HfClassDefaults read_hf_class_defaults(const std::string& path);
// The table parse_hf_config uses: the file named by $ATTNBENCH_HF_CLASS_DEFAULTS when set (and not empty), else the
// configs/hf-class-defaults.json embedded at build time. Parsed once; a malformed table throws at every call.
const HfClassDefaults& hf_class_defaults();

// Parses the text of a config.json. `source` names it in errors ("--model <source>: <key>: <what>");
// `default_name` is the model's name when the text has no attnbench.name. The class defaults: hf_class_defaults(),
// or `defaults` given.
ModelConfig parse_hf_config(std::string_view text, const std::string& source, const std::string& default_name);
ModelConfig parse_hf_config(std::string_view text, const std::string& source, const std::string& default_name,
                            const HfClassDefaults& defaults);

// The name of a config file's model without attnbench.name: the parent folder's name for ".../config.json"
// (tests/data/qwen3-32b/config.json -> "qwen3-32b"), else the file's stem (mistral-7b.json -> "mistral-7b").
// Characters outside [A-Za-z0-9._+-] become '-', so case ids stay free of '/', ',' and spaces.
std::string model_name_from_path(const std::string& path);

// Error messages echo input through printable() (core/files.hpp): control characters escaped.

}  // namespace attnbench
