// libFuzzer target: a Hugging Face config.json given to --model (engine/hf_config.cpp, parse_hf_config: nlohmann
// JSON, the keys SGLang reads, windows in every form real configs use, text_config nesting, attnbench's own key).
// Expected outcomes: a model, or attnbench::InputError (exit 2 naming the key). Anything else is a finding: a
// crash, a sanitizer report, a hang or memory blow-up (libFuzzer's -timeout / -rss_limit_mb), another
// exception, or a model that breaks what the rest of attnbench relies on (heads divisible by KV heads, sizes in
// their ranges, a name that is safe in case ids, windows that are tokens or none) — reported as
// "model_fuzz finding" and aborted.
// Build and run: scripts/fuzz.sh model_fuzz (FUZZ_SECONDS per target, default 60). Seeds: fuzz/corpus/model_fuzz/
// (the presets and tests/data's real configs).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/errors.hpp"
#include "engine/hf_config.hpp"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "model_fuzz finding: %s\n", what.c_str());
  std::abort();
}

bool in(long long v, long long lo, long long hi) { return v >= lo && v <= hi; }

void check(const attnbench::ModelConfig& m) {
  if (m.name.empty()) finding("an empty model name");
  for (const char c : m.name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '+' && c != '-')
      finding("a model name with a character outside [A-Za-z0-9._+-]: " + m.name);
  if (!in(m.num_layers, 1, 1024)) finding("num_layers out of range");
  if (!in(m.num_attention_heads, 1, 1024) || !in(m.num_key_value_heads, 1, 1024)) finding("heads out of range");
  if (m.num_attention_heads % m.num_key_value_heads != 0) finding("heads not divisible by KV heads");
  if (!in(m.head_dim, 1, 1024)) finding("head_dim out of range");
  if (m.context_len < 1) finding("context_len < 1");
  if (m.tp_size < 1 || m.num_qo_heads() < 1 || m.num_kv_heads() < 1) finding("tp_size gives no heads per rank");
  if (m.sliding_window == 0 || m.sliding_window < -1) finding("a window that is neither tokens nor none");
  if (m.sliding_layers.size() > static_cast<std::size_t>(m.num_layers)) finding("a window pattern longer than the layers");
  // A layer's window is sliding_window - 1 (Gemma, GPT-OSS) or sliding_window itself (Cohere2), or -1.
  if (m.sliding_window_offset != -1 && m.sliding_window_offset != 0) finding("a window offset other than -1 or 0");
  for (int l = 0; l < m.num_layers; ++l) {
    const int w = m.layer_sliding_window_size(l);
    if (w != -1 && w != m.sliding_window + m.sliding_window_offset) finding("a layer window out of range");
    if (w < -1 || (m.sliding_window > 0 && w > m.sliding_window)) finding("a layer window out of range");
  }
  if (!std::isfinite(m.k_scale) || !std::isfinite(m.v_scale) || m.k_scale <= 0 || m.v_scale <= 0)
    finding("KV scales not finite and positive");
  if (m.kv_bytes_per_token() <= 0) finding("no KV bytes per token");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    check(attnbench::parse_hf_config(text, "fuzz.json", "fuzz"));
  } catch (const attnbench::InputError&) {
    // bad input, said so
  }
  return 0;
}
