// Models from Hugging Face config.json files: the presets (configs/models/, embedded) keep exactly the shapes
// of the C++ table they replace; every window form real configs use; every malformed input is an InputError
// naming the file and the key.
#include "engine/hf_config.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "core/errors.hpp"
#include "engine/model_config.hpp"
#include "support/errors.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

const std::string kData = ATTNBENCH_SOURCE_DIR "/tests/data/";

// The InputError message of `f`, or "" when it does not throw one.
using test::error_of;

ModelConfig parse(const std::string& text) { return parse_hf_config(text, "m.json", "m"); }
std::string parse_error(const std::string& text) { return error_of([&] { parse(text); }); }

// The smallest valid config, with `extra` keys spliced in; a key of `extra` replaces the base's (a key given
// twice is refused).
std::string config(const std::string& extra = "") {
  const std::pair<const char*, const char*> base[] = {
      {"architectures", R"(["LlamaForCausalLM"])"}, {"num_hidden_layers", "4"}, {"num_attention_heads", "8"},
      {"num_key_value_heads", "2"},                 {"head_dim", "64"},         {"max_position_embeddings", "2048"},
      {"hidden_size", "512"},                       {"torch_dtype", R"("bfloat16")"}};
  std::string out = "{";
  for (const auto& [key, value] : base) {
    if (extra.find("\"" + std::string(key) + "\":") != std::string::npos) continue;
    out += (out.size() > 1 ? ", \"" : "\"") + std::string(key) + "\": " + value;
  }
  return out + (extra.empty() ? std::string() : ", " + extra) + "}";
}

std::vector<int> windows(const ModelConfig& m, int layers) {
  std::vector<int> w;
  for (int l = 0; l < layers; ++l) w.push_back(m.layer_sliding_window_size(l));
  return w;
}

// The C++ table the preset files replace, field by field (model_config.cpp before configs/models/).
struct OldPreset {
  const char* name;
  const char* arch;
  int layers, heads, kv_heads, head_dim, context, tp, window, pattern;
};
constexpr OldPreset kOldPresets[] = {
    {"llama-3.1-8b", "LlamaForCausalLM", 32, 32, 8, 128, 131072, 1, -1, 0},
    {"llama-3.1-70b-tp8", "LlamaForCausalLM", 80, 64, 8, 128, 131072, 8, -1, 0},
    {"qwen2.5-7b", "Qwen2ForCausalLM", 28, 28, 4, 128, 32768, 1, -1, 0},
    {"gemma-3-12b", "Gemma3ForCausalLM", 48, 16, 8, 256, 131072, 1, 1024, 6},
    {"tiny", "LlamaForCausalLM", 2, 4, 2, 64, 4096, 1, -1, 0},
    {"tiny-swa", "Gemma3ForCausalLM", 2, 4, 2, 64, 4096, 1, 32, 2},
};

TEST(ModelPresetFiles, KeepEveryFieldOfTheTableTheyReplaceInListingOrder) {
  const auto& presets = model_presets();
  ASSERT_EQ(presets.size(), std::size(kOldPresets));
  for (std::size_t i = 0; i < presets.size(); ++i) {
    const ModelConfig& m = presets[i];
    const OldPreset& o = kOldPresets[i];
    SCOPED_TRACE(o.name);
    EXPECT_EQ(m.name, o.name);
    EXPECT_EQ(m.architecture, o.arch);
    EXPECT_EQ(m.num_layers, o.layers);
    EXPECT_EQ(m.num_attention_heads, o.heads);
    EXPECT_EQ(m.num_key_value_heads, o.kv_heads);
    EXPECT_EQ(m.head_dim, o.head_dim);
    EXPECT_EQ(m.context_len, o.context);
    EXPECT_EQ(m.tp_size, o.tp);
    EXPECT_EQ(m.sliding_window, o.window);
    EXPECT_EQ(m.dtype, DType::bf16);
    EXPECT_FALSE(m.has_sinks);
    // The old rule, also beyond the preset's layers (--layers more than it has).
    for (int l = 0; l < 3 * o.layers + 7; ++l) {
      const int old = o.window <= 0 ? -1 : (o.pattern > 0 && (l + 1) % o.pattern == 0) ? -1 : o.window - 1;
      ASSERT_EQ(m.layer_sliding_window_size(l), old) << "layer " << l;
    }
  }
}

TEST(ModelPresetFiles, EveryFileInConfigsModelsIsEmbeddedUnderItsStem) {
  std::set<std::string> stems, names;
  for (const auto& e : std::filesystem::directory_iterator(ATTNBENCH_SOURCE_DIR "/configs/models"))
    if (e.path().extension() == ".json") stems.insert(e.path().stem().string());
  for (const auto& m : model_presets()) names.insert(m.name);
  EXPECT_EQ(stems, names) << "a file in configs/models/ is missing from ATTNBENCH_MODEL_PRESETS in CMakeLists.txt";
  // The embedded text is the file's text: a preset read from its file is the same model.
  for (const auto& m : model_presets()) {
    const ModelConfig f = find_model_preset(ATTNBENCH_SOURCE_DIR "/configs/models/" + m.name + ".json");
    EXPECT_EQ(f.name, m.name);
    EXPECT_EQ(f.num_layers, m.num_layers);
    EXPECT_EQ(f.context_len, m.context_len);
    EXPECT_EQ(f.tp_size, m.tp_size);
    EXPECT_EQ(windows(f, 12), windows(m, 12));
  }
}

TEST(HfConfig, RealConfigsFromTestsData) {
  const ModelConfig q = find_model_preset(kData + "qwen3-32b/config.json");
  EXPECT_EQ(q.name, "qwen3-32b");  // the folder's name
  EXPECT_EQ(q.architecture, "Qwen3ForCausalLM");
  EXPECT_EQ(q.num_layers, 64);
  EXPECT_EQ(q.num_qo_heads(), 64);
  EXPECT_EQ(q.num_kv_heads(), 8);
  EXPECT_EQ(q.head_dim, 128);
  EXPECT_EQ(q.context_len, 40960);
  EXPECT_EQ(q.tp_size, 1);
  EXPECT_FALSE(q.has_sliding_window()) << "use_sliding_window false";
  EXPECT_FALSE(q.has_sinks);

  const ModelConfig mi = find_model_preset(kData + "mistral-7b-v0.1.json");
  EXPECT_EQ(mi.name, "mistral-7b-v0.1");  // the stem
  EXPECT_EQ(mi.architecture, "MistralForCausalLM");
  EXPECT_EQ(mi.head_dim, 128) << "hidden_size 4096 / 32 heads";
  EXPECT_EQ(mi.num_kv_heads(), 8);
  EXPECT_EQ(mi.context_len, 32768);
  EXPECT_FALSE(mi.has_sliding_window()) << "SGLang's MistralForCausalLM (models/llama.py) takes no window";
  EXPECT_EQ(mi.window_ignored, 4096);
  EXPECT_EQ(windows(mi, 32), std::vector<int>(32, -1)) << "every layer full attention, as SGLang runs it";

  const ModelConfig g = find_model_preset(kData + "gpt-oss-20b/config.json");
  EXPECT_EQ(g.name, "gpt-oss-20b");
  EXPECT_EQ(g.architecture, "GptOssForCausalLM");
  EXPECT_EQ(g.num_layers, 24);
  EXPECT_EQ(g.num_qo_heads(), 64);
  EXPECT_EQ(g.num_kv_heads(), 8);
  EXPECT_EQ(g.head_dim, 64);
  EXPECT_EQ(g.context_len, 131072);
  EXPECT_TRUE(g.has_sinks);
  EXPECT_EQ(g.sliding_layers, (std::vector<bool>{true, false})) << "24 alternating layer types, kept as their period";
  for (int l = 0; l < 24; ++l) EXPECT_EQ(g.layer_sliding_window_size(l), l % 2 == 0 ? 127 : -1) << l;

  const ModelConfig ge = find_model_preset(kData + "gemma-3-27b.json");
  EXPECT_EQ(ge.architecture, "Gemma3ForConditionalGeneration");
  EXPECT_EQ(ge.num_layers, 62);
  EXPECT_EQ(ge.num_qo_heads(), 32);
  EXPECT_EQ(ge.num_kv_heads(), 16);
  EXPECT_EQ(ge.head_dim, 128);
  EXPECT_EQ(ge.context_len, 131072);
  int full = 0;
  for (int l = 0; l < 62; ++l) {
    EXPECT_EQ(ge.layer_sliding_window_size(l), (l + 1) % 6 == 0 ? -1 : 1023) << l;
    full += ge.layer_sliding_window_size(l) == -1;
  }
  EXPECT_EQ(full, 10);

  const ModelConfig l = find_model_preset(kData + "llama-3.1-70b.json");
  EXPECT_EQ(l.name, "llama-3.1-70b");
  EXPECT_EQ(l.num_layers, 80);
  EXPECT_EQ(l.num_attention_heads, 64);
  EXPECT_EQ(l.num_key_value_heads, 8);
  EXPECT_EQ(l.head_dim, 128);
  EXPECT_EQ(l.tp_size, 1);
  EXPECT_FALSE(l.has_sliding_window());
}

TEST(HfConfig, WindowForms) {
  // On the classes that window by config.layer_types (Gemma-3, GPT-OSS): layer_types, or Gemma-3's
  // sliding_window_pattern N (every Nth layer global), from which transformers derives it.
  const std::string g3 = R"("architectures": ["Gemma3ForCausalLM"], "query_pre_attn_scalar": 64, )";
  const std::string oss = R"("architectures": ["GptOssForCausalLM"], )";
  const ModelConfig p = parse(config(g3 + R"("sliding_window": 512, "sliding_window_pattern": 3)"));
  EXPECT_EQ(windows(p, 7), (std::vector<int>{511, 511, -1, 511, 511, -1, 511}));
  // layer_types, any pattern; kept as its shortest period.
  const ModelConfig t = parse(config(
      oss + R"("sliding_window": 64, "layer_types": ["full_attention", "sliding_attention", "sliding_attention", "full_attention"])"));
  EXPECT_EQ(windows(t, 4), (std::vector<int>{-1, 63, 63, -1}));
  EXPECT_EQ(t.sliding_layers, (std::vector<bool>{false, true, true})) << "full, sliding, sliding, full: period 3";
  EXPECT_EQ(windows(t, 7), (std::vector<int>{-1, 63, 63, -1, 63, 63, -1})) << "--layers beyond the list repeats it";
  // layer_types wins over sliding_window_pattern, as transformers derives the one from the other.
  const ModelConfig tp = parse(config(
      g3 + R"("sliding_window": 64, "sliding_window_pattern": 2, "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"])"));
  EXPECT_EQ(windows(tp, 4), (std::vector<int>{63, 63, 63, -1}));
  // Every layer sliding: sliding_layers empty.
  const ModelConfig all = parse(config(
      oss + R"("sliding_window": 4096, "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention"])"));
  EXPECT_TRUE(all.sliding_layers.empty());
  EXPECT_EQ(windows(all, 4), std::vector<int>(4, 4095));
  // A window no layer uses is no window (FlashInfer then builds one wrapper set); null is no window.
  const ModelConfig none = parse(config(
      oss + R"("sliding_window": 64, "layer_types": ["full_attention", "full_attention", "full_attention", "full_attention"])"));
  EXPECT_FALSE(none.has_sliding_window());
  EXPECT_EQ(none.sliding_window, -1);
  EXPECT_FALSE(parse(config(oss + R"("sliding_window": null)")).has_sliding_window());
  // Without layer_types or a pattern those classes' window is refused, not guessed (transformers would fill in
  // a class default: Gemma-3's pattern 6, GPT-OSS alternating).
  for (const std::string& cls : {g3, oss})
    EXPECT_TRUE(test::has(parse_error(config(cls + R"("sliding_window": 4096)")),
                          "layer_types: missing (required with a sliding_window on "));
  // use_sliding_window / max_window_layers (Qwen2 / 3's form) are read and checked on every class, and decide
  // nothing on the windowed ones (their SGLang classes do not read them): see WindowsFollowSglangsModelClass.
  EXPECT_TRUE(test::has(parse_error(config(oss + R"("sliding_window": 8, "use_sliding_window": true)")),
                        "max_window_layers: missing (required with use_sliding_window true)"));
}

// SGLang 0.5.23 applies a config's window only in the model classes that pass it to their attention layers
// (models/gemma2.py, gemma3_causal.py, gemma3_mm.py, gpt_oss.py); models/llama.py (Llama, Phi-3), mistral.py,
// mixtral.py, qwen2.py, qwen3.py and the Qwen MoE files never read it: every layer runs full attention there, and
// attnbench models it so (noting the ignored window); any other class that would window is refused.
// SGLang's model_config.is_multimodal under default server args (configs/model_config.py L690-717, L809-827): a
// multimodal class or a config with a text_config, except the classes with multimodal off by default.
TEST(HfConfig, MultimodalFollowsSglangsDefaults) {
  EXPECT_TRUE(parse(config(R"("architectures": ["Qwen2_5_VLForConditionalGeneration"])")).is_multimodal);
  EXPECT_TRUE(parse(config(R"("architectures": ["Mistral3ForConditionalGeneration"])")).is_multimodal);
  EXPECT_FALSE(parse(config(R"("architectures": ["LlamaForCausalLM"])")).is_multimodal);
  EXPECT_FALSE(parse(config(R"("architectures": ["Gemma3ForCausalLM"], "query_pre_attn_scalar": 64)")).is_multimodal);
  // a language model in text_config: multimodal whatever the class, but for the classes SGLang turns it off for
  const std::string text = R"("text_config": {"num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 64, "max_position_embeddings": 4096})";
  EXPECT_TRUE(parse(R"({"architectures": ["LlavaForConditionalGeneration"], )" + text + "}").is_multimodal);
  EXPECT_TRUE(parse(R"({"architectures": ["SomeNewVlmForConditionalGeneration"], )" + text + "}").is_multimodal);
  const std::string gemma_text = R"("text_config": {"num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 64, "max_position_embeddings": 4096, "query_pre_attn_scalar": 64})";
  EXPECT_FALSE(parse(R"({"architectures": ["Gemma3ForConditionalGeneration"], )" + gemma_text + "}").is_multimodal);
}

TEST(HfConfig, WindowsFollowSglangsModelClass) {
  for (const char* arch : {"MistralForCausalLM", "LlamaForCausalLM", "Phi3ForCausalLM", "MixtralForCausalLM",
                           "PhimoeForCausalLM", "Starcoder2ForCausalLM", "Qwen2_5_VLForConditionalGeneration",
                           "Glm4ForCausalLM", "InternLM2ForCausalLM", "HunYuanDenseV1ForCausalLM"}) {
    SCOPED_TRACE(arch);
    const ModelConfig m = parse(config(R"("architectures": [")" + std::string(arch) + R"("], "sliding_window": 4096)"));
    EXPECT_FALSE(m.has_sliding_window());
    EXPECT_EQ(m.window_ignored, 4096);
    EXPECT_EQ(windows(m, 4), std::vector<int>(4, -1));
  }
  for (const char* arch : {"Qwen2ForCausalLM", "Qwen3ForCausalLM", "Qwen2MoeForCausalLM", "Qwen3MoeForCausalLM"}) {
    SCOPED_TRACE(arch);
    const ModelConfig on = parse(config(R"("architectures": [")" + std::string(arch) +
                                        R"("], "sliding_window": 100, "use_sliding_window": true, "max_window_layers": 2)"));
    EXPECT_FALSE(on.has_sliding_window()) << "use_sliding_window true: still full attention in SGLang";
    EXPECT_EQ(on.window_ignored, 100);
    const ModelConfig off = parse(config(R"("architectures": [")" + std::string(arch) +
                                         R"("], "sliding_window": 100, "use_sliding_window": false, "max_window_layers": 2)"));
    EXPECT_FALSE(off.has_sliding_window());
    EXPECT_EQ(off.window_ignored, -1) << "the config itself says no window: nothing ignored";
  }
  // Malformed window keys are refused whatever the class (read before the class decides).
  EXPECT_TRUE(test::has(parse_error(config(R"("architectures": ["MistralForCausalLM"], "sliding_window": 0)")),
                  "sliding_window: must be in [1, "));
  // A class whose window rule attnbench does not model: exit 2 naming the key, when the config would window: Olmo-2 / 3
  // and Step3p5 window by their own rules (layer_types with sliding_window - 1; layer_types without the minus one and
  // other head counts) ...
  for (const char* arch : {"Olmo2ForCausalLM", "Step3p5ForCausalLM"}) {
    const std::string e = parse_error(config(R"("architectures": [")" + std::string(arch) + R"("], "sliding_window": 64)"));
    EXPECT_TRUE(test::has(e, "sliding_window: 64 on " + std::string(arch) + ": SGLang 0.5.23's window rule")) << e;
  }
  // ... and accepted when nothing would be windowed.
  EXPECT_FALSE(parse(config(R"("architectures": ["Olmo2ForCausalLM"], "sliding_window": null)")).has_sliding_window());
  EXPECT_FALSE(parse(config(
      R"("architectures": ["Step3p5ForCausalLM"], "sliding_window": 64, "use_sliding_window": false)")).has_sliding_window());
}

// EXAONE 4.0 (models/exaone4.py L161-166): layer l is windowed when (l + 1) % len(sliding_window_pattern) != 0,
// with sliding_window - 1, and the runner holds the window; layer_types is not read by SGLang's class (transformers
// needs it beside a string pattern). What SGLang could not load, or loads with a window on no layer, is refused.
TEST(HfConfig, Exaone4WindowsByItsPatternsLength) {
  const std::string types4 = R"("layer_types": ["full_attention", "full_attention", "full_attention", "full_attention"])";
  const std::string exaone = R"("architectures": ["Exaone4ForCausalLM"], "sliding_window": 4096, )";
  const ModelConfig lllg = parse(config(exaone + R"("sliding_window_pattern": "LLLG", )" + types4));
  EXPECT_EQ(windows(lllg, 4), (std::vector<int>{4095, 4095, 4095, -1})) << "the pattern, not layer_types";
  EXPECT_TRUE(lllg.runner_sliding_window);
  const ModelConfig lg = parse(config(R"("num_hidden_layers": 6, )" + exaone + R"("sliding_window_pattern": "LG",
      "layer_types": ["full_attention", "full_attention", "full_attention", "full_attention", "full_attention", "full_attention"])"));
  EXPECT_EQ(windows(lg, 6), (std::vector<int>{4095, -1, 4095, -1, 4095, -1}));
  const ModelConfig lg_utf8 = parse(config(exaone + R"("sliding_window_pattern": "\u00e9G", )" + types4));
  EXPECT_EQ(windows(lg_utf8, 4), (std::vector<int>{4095, -1, 4095, -1})) << "len() counts code points, not bytes";
  const ModelConfig g = parse(config(exaone + R"("sliding_window_pattern": "G", )" + types4));
  EXPECT_FALSE(g.has_sliding_window()) << "a pattern of length 1: every layer global";
  // No window at all: nothing windowed, whatever the pattern (transformers sets the pattern to 0) ...
  EXPECT_FALSE(parse(config(R"("architectures": ["Exaone4ForCausalLM"], "sliding_window": null, "sliding_window_pattern": 4, )" +
                            types4))
                   .has_sliding_window());
  // ... where the file writes layer_types: else transformers derives them as (i + 1) % 0, which raises.
  EXPECT_TRUE(test::has(parse_error(config(R"("architectures": ["Exaone4ForCausalLM"], "sliding_window": null)")),
                        "layer_types: missing beside sliding_window null on Exaone4ForCausalLM: transformers 5.19's "
                        "Exaone4Config then sets sliding_window_pattern to 0"));
  // Refused: an integer pattern (len() of an int raises), a string without layer_types (transformers' derivation
  // raises), no pattern beside a window (the runner's window on no layer), a pattern of another type.
  EXPECT_TRUE(test::has(parse_error(config(exaone + R"("sliding_window_pattern": 4)")),
                        "sliding_window_pattern: 4 with sliding_window 4096 on Exaone4ForCausalLM: SGLang's exaone4.py "
                        "(L165) takes len() of the pattern, which an integer fails"));
  EXPECT_TRUE(test::has(parse_error(config(exaone + R"("sliding_window_pattern": "LLLG")")),
                        "layer_types: missing beside sliding_window_pattern \"LLLG\" with sliding_window 4096 on "
                        "Exaone4ForCausalLM: transformers 5.19's Exaone4Config derives it"));
  for (const char* none : {R"("sliding_window_pattern": null)", R"("sliding_window_pattern": "")", R"("sliding_window_pattern": 0)",
                           R"("use_sliding_window": false)"}) {
    SCOPED_TRACE(none);
    EXPECT_TRUE(test::has(parse_error(config(exaone + std::string(none) + ", " + types4)),
                          "with sliding_window 4096 on Exaone4ForCausalLM: SGLang's exaone4.py (L164-166) then windows no "
                          "layer while the model runner holds the window"));
  }
  EXPECT_TRUE(test::has(parse_error(config(exaone + R"("sliding_window_pattern": ["L", "G"], )" + types4)),
                        "sliding_window_pattern: must be a string such as \"LLLG\" (got [\"L\",\"G\"])"));
  // With model_type exaone4 the absent keys take Exaone4Config's defaults: sliding_window 4096 and the integer
  // pattern 4, which SGLang could not load; the error says where the 4 came from.
  const std::string e = parse_error(config(R"("architectures": ["Exaone4ForCausalLM"], "model_type": "exaone4")"));
  EXPECT_TRUE(test::has(e, "sliding_window_pattern: 4 with sliding_window 4096 on Exaone4ForCausalLM")) << e;
  EXPECT_TRUE(test::has(e, "not written: 4, the class default of transformers 5.19's Exaone4Config")) << e;
}

// Cohere2 (commandr.py L206-210): the layer_types sliding layers get sliding_window itself (no minus one), and the
// model runner learns no window (no get_attention_sliding_window_size), so FlashInfer applies none.
TEST(HfConfig, Cohere2WindowsItsSlidingLayersWithTheWindowItselfAndNoRunnerWindow) {
  const ModelConfig by_types = parse(config(
      R"("architectures": ["Cohere2ForCausalLM"], "sliding_window": 4096, "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"])"));
  EXPECT_TRUE(by_types.has_sliding_window());
  EXPECT_FALSE(by_types.runner_sliding_window);
  EXPECT_EQ(windows(by_types, 4), (std::vector<int>{4096, 4096, 4096, -1}));
  // Command-R7B writes sliding_window_pattern 4 and no layer_types (transformers derives them: every 4th global).
  const ModelConfig by_pattern = parse(config(
      R"("architectures": ["Cohere2ForCausalLM"], "num_hidden_layers": 8, "sliding_window": 4096, "sliding_window_pattern": 4)"));
  EXPECT_EQ(windows(by_pattern, 8), (std::vector<int>{4096, 4096, 4096, -1, 4096, 4096, 4096, -1}));
  // Every layer full: no window, and so nothing for FlashInfer to drop.
  const ModelConfig all_full = parse(config(
      R"("architectures": ["Cohere2ForCausalLM"], "sliding_window": 4096, "layer_types": ["full_attention", "full_attention", "full_attention", "full_attention"])"));
  EXPECT_FALSE(all_full.has_sliding_window());
  EXPECT_TRUE(all_full.runner_sliding_window);
  // Neither key: transformers' class default, which attnbench does not guess.
  EXPECT_TRUE(test::has(parse_error(config(R"("architectures": ["Cohere2ForCausalLM"], "sliding_window": 4096)")),
                        "layer_types: missing (required with a sliding_window on Cohere2ForCausalLM"));
  // Gemma keeps its minus one and its runner window.
  const ModelConfig gemma = parse(config(
      R"("architectures": ["Gemma3ForCausalLM"], "query_pre_attn_scalar": 64, "sliding_window": 512, "sliding_window_pattern": 2)"));
  EXPECT_TRUE(gemma.runner_sliding_window);
  EXPECT_EQ(windows(gemma, 4), (std::vector<int>{511, -1, 511, -1}));
  EXPECT_FALSE(by_types.without_windows().has_sliding_window());
  EXPECT_EQ(windows(by_types.without_windows(), 4), std::vector<int>(4, -1));
}

TEST(HfConfig, DefaultsDtypesTextConfigAndTheAttnbenchKey) {
  // num_key_value_heads defaults to the attention heads; head_dim to hidden_size / heads.
  const ModelConfig d = parse(R"({"architectures": ["X"], "num_hidden_layers": 2, "num_attention_heads": 4,
                                  "hidden_size": 512, "max_position_embeddings": 100, "torch_dtype": "float16"})");
  EXPECT_EQ(d.num_key_value_heads, 4);
  EXPECT_EQ(d.head_dim, 128);
  EXPECT_EQ(d.dtype, DType::fp16);
  EXPECT_EQ(d.name, "m");
  EXPECT_EQ(d.tp_size, 1);
  // head_dim wins over hidden_size (Gemma: 3840 / 16 would be 240).
  EXPECT_EQ(parse(config(R"("hidden_size": 3840)")).head_dim, 64);
  // Newer transformers write "dtype"; SGLang's dtype "auto" runs float32 (or no dtype) as float16, Gemma as bfloat16.
  EXPECT_EQ(parse(R"({"architectures": ["X"], "num_hidden_layers": 1, "num_attention_heads": 1, "head_dim": 64,
                      "max_position_embeddings": 8, "dtype": "bfloat16"})").dtype, DType::bf16);
  EXPECT_EQ(parse(R"({"architectures": ["X"], "num_hidden_layers": 1, "num_attention_heads": 1, "head_dim": 64,
                      "max_position_embeddings": 8, "torch_dtype": "float32"})").dtype, DType::fp16);
  EXPECT_EQ(parse(R"({"architectures": ["X"], "num_hidden_layers": 1, "num_attention_heads": 1, "head_dim": 64,
                      "max_position_embeddings": 8})").dtype, DType::fp16);
  EXPECT_EQ(parse(R"({"architectures": ["X"], "model_type": "gemma3", "num_hidden_layers": 1, "num_attention_heads": 1,
                      "num_key_value_heads": 1, "head_dim": 64, "sliding_window_pattern": 1, "max_position_embeddings": 8, "torch_dtype": "float32"})").dtype, DType::bf16);
  // A multimodal config: attention keys in text_config, dtype at the top.
  const ModelConfig mm = parse(R"({"architectures": ["Gemma3ForConditionalGeneration"], "torch_dtype": "float16",
      "num_hidden_layers": 99, "text_config": {"num_hidden_layers": 6, "num_attention_heads": 8, "num_key_value_heads": 4,
      "head_dim": 256, "max_position_embeddings": 4096, "sliding_window": 512, "sliding_window_pattern": 6,
      "query_pre_attn_scalar": 256}})");
  EXPECT_EQ(mm.num_layers, 6);
  EXPECT_EQ(mm.dtype, DType::fp16);
  EXPECT_EQ(windows(mm, 6), (std::vector<int>{511, 511, 511, 511, 511, -1}));
  // attnbench's own key: the name in case ids and the tensor-parallel degree; unknown keys elsewhere are ignored.
  const ModelConfig a = parse(config(R"("attnbench": {"name": "big-tp4", "tp_size": 4}, "rope_scaling": {"x": [1, 2]},
                                        "quantization_config": null, "vocab_size": 1)"));
  EXPECT_EQ(a.name, "big-tp4");
  EXPECT_EQ(a.tp_size, 4);
  EXPECT_EQ(a.num_qo_heads(), 2);
  // Sinks follow the architecture (GPT-OSS has no config key for them).
  EXPECT_TRUE(parse(R"({"architectures": ["GptOssForCausalLM"], "num_hidden_layers": 1, "num_attention_heads": 1,
                        "head_dim": 64, "max_position_embeddings": 8})").has_sinks);
  EXPECT_FALSE(parse(config()).has_sinks);
}

TEST(HfConfig, NamesFromPathsStayUsableInCaseIds) {
  EXPECT_EQ(model_name_from_path("tests/data/qwen3-32b/config.json"), "qwen3-32b");
  EXPECT_EQ(model_name_from_path("/x/mistral-7b.json"), "mistral-7b");
  EXPECT_EQ(model_name_from_path("config.json"), "config");
  EXPECT_EQ(model_name_from_path("/m/My Model,v2/config.json"), "My-Model-v2");
  EXPECT_EQ(model_name_from_path("a/b\nc.json"), "b-c");
}

TEST(HfConfig, MalformedConfigsNameTheKey) {
  const auto has = [](const std::string& msg, const std::string& part) {
    return msg.find(part) != std::string::npos ? ::testing::AssertionSuccess()
                                               : ::testing::AssertionFailure() << "'" << part << "' not in: " << msg;
  };
  // Nested 100,000 deep, inside a key or at the top: refused before parsing (nlohmann's parser recursed once per
  // level and overflowed the stack); 64 levels are still read (and then refused for what they hold).
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_TRUE(has(parse_error(deep), "--model m.json: JSON nested deeper than 64 levels (at byte 64)"));
  EXPECT_TRUE(has(parse_error(R"({"architectures": )" + deep + "}"), "--model m.json: JSON nested deeper than 64 levels"));
  EXPECT_TRUE(has(parse_error(R"({"x": )" + std::string(63, '[') + std::string(63, ']') + "}"),
                  "--model m.json: architectures: missing (required"));
  EXPECT_TRUE(has(parse_error(R"({"architectures": ["X"], "num_attention_heads": 4, "head_dim": 64,
                                  "max_position_embeddings": 8})"),
                  "--model m.json: num_hidden_layers: missing (required)"));
  EXPECT_TRUE(has(parse_error(R"({"num_hidden_layers": 1, "num_attention_heads": 4, "head_dim": 64,
                                  "max_position_embeddings": 8})"),
                  "--model m.json: architectures: missing"));
  EXPECT_TRUE(has(parse_error(config(R"("architectures": [])")), "architectures: must be a non-empty list"));
  EXPECT_TRUE(has(parse_error(config(R"("architectures": ["a b"])")), "architectures: 'a b' is not a class name"));
  // Wrong types.
  EXPECT_TRUE(has(parse_error(config(R"("num_attention_heads": "8")")), "num_attention_heads: must be an integer (got \"8\")"));
  EXPECT_TRUE(has(parse_error(config(R"("num_attention_heads": 8.0)")), "num_attention_heads: must be an integer (got 8.0)"));
  EXPECT_TRUE(has(parse_error(config(R"("num_attention_heads": null)")), "num_attention_heads: must be an integer (got null)"));
  EXPECT_TRUE(has(parse_error(config(R"("use_sliding_window": "no")")), "use_sliding_window: must be true or false"));
  // Out of range.
  EXPECT_TRUE(has(parse_error(config(R"("num_attention_heads": 0)")), "num_attention_heads: must be in [1, 1024] (got 0)"));
  EXPECT_TRUE(has(parse_error(config(R"("num_key_value_heads": -2)")), "num_key_value_heads: must be in [1, 1024] (got -2)"));
  EXPECT_TRUE(has(parse_error(config(R"("num_hidden_layers": 9999999999999999999)")), "num_hidden_layers: must be in"));
  EXPECT_TRUE(has(parse_error(config(R"("sliding_window": 0)")), "sliding_window: must be in [1, "));
  EXPECT_TRUE(has(parse_error(config(R"("max_position_embeddings": 16777217)")), "max_position_embeddings: must be in"));
  // Heads not divisible; no way to the head dim.
  EXPECT_TRUE(has(parse_error(config(R"("num_key_value_heads": 3)")),
                  "num_key_value_heads: 8 attention heads are not divisible by 3 KV heads"));
  EXPECT_TRUE(has(parse_error(R"({"architectures": ["X"], "num_hidden_layers": 1, "num_attention_heads": 3,
                                  "max_position_embeddings": 8})"),
                  "head_dim: missing, and no hidden_size"));
  EXPECT_TRUE(has(parse_error(R"({"architectures": ["X"], "num_hidden_layers": 1, "num_attention_heads": 3,
                                  "hidden_size": 100, "max_position_embeddings": 8})"),
                  "hidden_size: 100 is not divisible by num_attention_heads 3"));
  // Dtypes.
  EXPECT_TRUE(has(parse_error(config(R"("torch_dtype": "float64")")),
                  "torch_dtype: unknown dtype 'float64' (expected bfloat16, float16 or float32)"));
  EXPECT_TRUE(has(parse_error(config(R"("torch_dtype": 16)")), "torch_dtype: must be a string"));
  // Window forms.
  EXPECT_TRUE(has(parse_error(config(R"("sliding_window": 8, "layer_types": ["sliding_attention"])")),
                  "layer_types: must be a list of num_hidden_layers (4) layer types"));
  EXPECT_TRUE(has(parse_error(config(
                      R"("sliding_window": 8, "layer_types": ["sliding_attention", "full_attention", "chunked_attention", 7])")),
                  "layer_types[2]: unsupported layer type 'chunked_attention'"));
  EXPECT_TRUE(has(parse_error(config(
                      R"("layer_types": ["sliding_attention", "full_attention", "full_attention", "full_attention"])")),
                  "sliding_window: missing, but layer_types has sliding_attention layers"));
  EXPECT_TRUE(has(parse_error(config(R"("sliding_window": 8, "use_sliding_window": true)")),
                  "max_window_layers: missing (required with use_sliding_window true)"));
  // text_config and the attnbench key.
  EXPECT_TRUE(has(parse_error(config(R"("text_config": [1])")), "text_config: must be an object"));
  EXPECT_TRUE(has(parse_error(R"({"architectures": ["X"], "text_config": {"num_hidden_layers": 1, "num_attention_heads": 1,
                                  "head_dim": 64}})"),
                  "text_config.max_position_embeddings: missing (required: none of max_sequence_length, seq_length"));
  EXPECT_TRUE(has(parse_error(config(R"("rope_scaling": [8])")), "rope_scaling: must be an object or null"));
  EXPECT_TRUE(has(parse_error(config(R"("rope_scaling": {"factor": -2})")), "rope_scaling.factor: must be a positive"));
  EXPECT_TRUE(has(parse_error(config(R"("max_position_embeddings": 4194304, "rope_scaling": {"factor": 8})")),
                  "max_position_embeddings: 4194304 x rope_scaling factor 8.0 is beyond 16M tokens"));
  EXPECT_TRUE(has(parse_error(config(R"("seq_length": "long")")), "seq_length: must be an integer"));
  EXPECT_TRUE(has(parse_error(config(R"("attnbench": {"nmae": "x"})")), "attnbench.nmae: unknown key (known: name, tp_size)"));
  EXPECT_TRUE(has(parse_error(config(R"("attnbench": {"name": "a/b"})")),
                  "attnbench.name: 'a/b' has a character outside [A-Za-z0-9._+-]"));
  EXPECT_TRUE(has(parse_error(config(R"("attnbench": {"tp_size": 0})")), "attnbench.tp_size: must be in [1, 1024]"));
  // (8 attention heads, 2 KV heads: tp 16 leaves no query head on a rank, tp 3 splits them unevenly; tp 4: 2 query
  // heads and 1 KV head (replicated) a rank, tp 8: 1 and 1.)
  EXPECT_TRUE(has(parse_error(config(R"("attnbench": {"tp_size": 16})")),
                  "attnbench.tp_size: 8 attention heads are not divisible by tp 16"));
  EXPECT_TRUE(has(parse_error(config(R"("attnbench": {"tp_size": 3})")),
                  "attnbench.tp_size: 8 attention heads are not divisible by tp 3"));
  EXPECT_EQ(parse(config(R"("attnbench": {"tp_size": 4})")).num_qo_heads(), 2);
  EXPECT_EQ(parse(config(R"("attnbench": {"tp_size": 8})")).num_kv_heads(), 1);
  // Not JSON, not an object.
  EXPECT_TRUE(has(parse_error("{\"architectures\": "), "--model m.json: not valid JSON ("));
  EXPECT_TRUE(has(parse_error("[1, 2]"), "--model m.json: top level: must be a JSON object (got [1,2])"));
  // Control characters in echoed values are escaped.
  const std::string esc = parse_error(config("\"torch_dtype\": \"bf\\u001b[31m16\""));
  EXPECT_TRUE(has(esc, "unknown dtype 'bf\\x1b[31m16'"));
  EXPECT_EQ(esc.find('\x1b'), std::string::npos);
  const std::string raw = parse_error("{\"a\": \"x\ny\"}");  // a raw newline in a string is invalid JSON
  EXPECT_TRUE(has(raw, "not valid JSON"));
  EXPECT_EQ(raw.find('\n'), std::string::npos);
}

// Hostile and unmodelled configs: a key given twice, MLA (DeepSeek-V2/V3), chunked attention (Llama-4) are
// refused naming the key; Gemma-2, whose config states no window pattern, alternates windowed and global layers.
// The model's context length as SGLang derives it (utils/hf_transformers_utils.py get_context_length): the first of
// max_sequence_length, seq_length, max_seq_len, model_max_length, max_position_embeddings; times rope_scaling's
// factor unless it gives original_max_position_embeddings or is llama3's.
TEST(HfConfig, ContextLengthAsSglangDerivesIt) {
  auto ctx = [](const std::string& extra) { return parse(config(extra)).context_len; };
  EXPECT_EQ(ctx(R"("max_position_embeddings": 32768)"), 32768);
  // None of the keys: SGLang's 2048 fallback is reached only after transformers has filled in its class default,
  // which attnbench cannot know: refused (the MalformedConfigsNameTheKey case above).
  // The key order: max_sequence_length before seq_length before ... before max_position_embeddings.
  EXPECT_EQ(ctx(R"("max_position_embeddings": 32768, "seq_length": 8192)"), 8192);
  EXPECT_EQ(ctx(R"("max_position_embeddings": 32768, "model_max_length": 16384, "max_seq_len": 12288)"), 12288);
  EXPECT_EQ(ctx(R"("seq_length": 8192, "max_sequence_length": 4096)"), 4096);
  EXPECT_EQ(ctx(R"("max_position_embeddings": 32768, "model_max_length": 16384)"), 16384);
  // rope_scaling: the factor multiplies (a linear 8 over 131072: 1048576), except beside
  // original_max_position_embeddings (YaRN as Qwen / GPT-OSS write it) or for llama3's; no factor: 1; null: 1.
  EXPECT_EQ(ctx(R"("max_position_embeddings": 131072, "rope_scaling": {"factor": 8.0, "rope_type": "linear"})"), 1048576);
  // transformers 5's name for it, rope_parameters, is read the same (the written rope_scaling first, as transformers).
  EXPECT_EQ(ctx(R"("max_position_embeddings": 4096, "rope_parameters": {"rope_type": "linear", "factor": 4.0})"), 16384);
  EXPECT_EQ(ctx(R"("max_position_embeddings": 4096, "rope_parameters": {"rope_type": "default", "rope_theta": 1e4})"), 4096);
  EXPECT_EQ(ctx(R"("max_position_embeddings": 4096, "rope_scaling": null, "rope_parameters": {"factor": 2.0})"), 8192);
  EXPECT_EQ(ctx(R"("max_position_embeddings": 4096, "rope_scaling": {"factor": 2.0}, "rope_parameters": {"factor": 3.0})"), 8192);
  EXPECT_EQ(ctx(R"("max_position_embeddings": 32768, "rope_scaling": {"factor": 4.0, "type": "yarn",
                   "original_max_position_embeddings": 32768})"), 32768);
  EXPECT_EQ(ctx(R"("max_position_embeddings": 131072, "rope_scaling": {"factor": 8.0, "rope_type": "llama3",
                   "low_freq_factor": 1.0})"), 131072);
  EXPECT_EQ(ctx(R"("max_position_embeddings": 4096, "rope_scaling": {"type": "longrope", "long_factor": [1.0]})"), 4096);
  EXPECT_EQ(ctx(R"("max_position_embeddings": 4096, "rope_scaling": null)"), 4096);
  EXPECT_EQ(ctx(R"("max_position_embeddings": 4096, "rope_scaling": {"factor": 2.5, "rope_type": "dynamic"})"), 10240);
  // The text config's keys, for a multimodal config (SGLang's hf_text_config).
  const std::string mm = R"({"architectures": ["Gemma3ForConditionalGeneration"], "max_position_embeddings": 999,
      "text_config": {"num_hidden_layers": 6, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 128,
      "max_position_embeddings": 131072, "rope_scaling": {"factor": 8.0, "rope_type": "linear"}, "sliding_window": 1024,
      "sliding_window_pattern": 6, "query_pre_attn_scalar": 168}})";
  // Gemma-3's config class keys its rope parameters by layer type under transformers 5.19 (SGLang 0.5.23's pin):
  // no top-level factor, so 131072 (transformers 5.19 itself reads the published config so: the twenty-first session's note).
  EXPECT_EQ(parse(mm).context_len, 131072);
  // ... by the text config's model_type, else the top level's, else the class; a Llama class keeps the factor.
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = mm;
    t.replace(t.find(from), from.size(), to);
    return parse(t).context_len;
  };
  EXPECT_EQ(with(R"("architectures": ["Gemma3ForConditionalGeneration"])", R"("architectures": ["LlamaForCausalLM"])"),
            1048576);
  EXPECT_EQ(with(R"("architectures": ["Gemma3ForConditionalGeneration"])",
                 R"("architectures": ["LlamaForCausalLM"], "model_type": "gemma3")"), 131072);
  EXPECT_EQ(with(R"("text_config": {)", R"("model_type": "llama", "text_config": {"model_type": "gemma3_text", )"), 131072);
  EXPECT_EQ(with(R"("text_config": {)", R"("model_type": "gemma3", "text_config": {"model_type": "llama", )"), 1048576);
}

// Models whose layers are not all MHA / GQA attention (hybrids with Mamba or linear attention), and heads under
// another family's keys, are refused naming the key, not read as plain decoders.
TEST(HfConfig, HybridModelsAndForeignHeadKeysAreRefused) {
  const std::pair<const char*, const char*> hybrids[] = {
      {R"("architectures": ["JambaForCausalLM"], "attn_layer_period": 8, "attn_layer_offset": 4)", "attn_layer_period: 8"},
      {R"("architectures": ["NemotronHForCausalLM"], "hybrid_override_pattern": "M-M*-")", "hybrid_override_pattern: \"M-M*-\""},
      {R"("architectures": ["Qwen3NextForCausalLM"], "full_attention_interval": 4)", "full_attention_interval: 4"},
      {R"("architectures": ["FalconH1ForCausalLM"], "mamba_d_ssm": 3072)", "mamba_d_ssm: 3072"},
      {R"("architectures": ["GraniteMoeHybridForCausalLM"], "layers_block_type": ["mamba", "attention"])", "layers_block_type: "},
      {R"("architectures": ["RecurrentGemmaForCausalLM"], "block_types": ["recurrent", "attention"])", "block_types: "},
      {R"("architectures": ["KimiLinearForCausalLM"], "linear_attn_config": {"kda_layers": [1, 2]})", "linear_attn_config: "},
  };
  for (const auto& [extra, key] : hybrids) {
    const std::string e = parse_error(config(extra));
    EXPECT_TRUE(test::has(e, key)) << e;
    EXPECT_TRUE(test::has(e, "a hybrid attention / state-space or linear-attention model")) << e;
  }
  // Falcon's multi-query flag without num_key_value_heads: all 71 heads would have been taken as KV heads.
  const std::string falcon = R"({"architectures": ["FalconForCausalLM"], "num_hidden_layers": 2, "num_attention_heads": 71,
                                 "hidden_size": 4544, "multi_query": true})";
  EXPECT_TRUE(test::has(parse_error(falcon), "multi_query: true: the model's heads are given under a key attnbench does not read"));
  // Cross-layer KV sharing (HunYuan-Large's use_cla, Gemma-3n's num_kv_shared_layers): fewer layers cache K / V.
  EXPECT_TRUE(test::has(parse_error(config(R"("architectures": ["HunYuanMoEV1ForCausalLM"], "use_cla": true, "cla_share_factor": 2)")),
                        "use_cla: true: cross-layer KV sharing (HunYuanMoEV1ForCausalLM) is not modelled"));
  EXPECT_TRUE(test::has(parse_error(config(R"("architectures": ["Gemma3nForConditionalGeneration"], "num_kv_shared_layers": 15)")),
                        "num_kv_shared_layers: 15: cross-layer KV sharing"));
  EXPECT_EQ(parse(config(R"("use_cla": false, "num_kv_shared_layers": 0)")).num_layers, 4);
  // With num_key_value_heads written, such a key is unknown and ignored, as SGLang ignores unknown keys.
  EXPECT_EQ(parse(config(R"("num_kv_heads": 1)")).num_key_value_heads, 2);
}

// MiniMax's attn_type_list with softmax attention (1) on every layer is a plain decoder; anything else is refused.
TEST(HfConfig, AttnTypeListOfSoftmaxLayersOnlyIsAPlainDecoder) {
  EXPECT_EQ(parse(config(R"("attn_type_list": [1, 1, 1, 1])")).num_layers, 4);
  for (const char* bad : {R"("architectures": ["MiniMaxM1ForCausalLM"], "attn_type_list": [0, 0, 0, 1])",
                          R"("attn_type_list": "1111")", R"("attn_type_list": [1, 1.0])"}) {
    const std::string e = parse_error(config(bad));
    EXPECT_TRUE(test::has(e, "attn_type_list: ")) << e;
    EXPECT_TRUE(test::has(e, "a hybrid linear / softmax attention model")) << e;
  }
}

// Grok (models/grok.py, Grok1Attention): the logit cap is max(attn_logit_softcapping, 0) with 30 where the config
// writes none, head_dim is the config's or 128 (never hidden_size / heads), only the tanh cap and no attention
// temperature are modelled.
TEST(HfConfig, GrokCapsLogitsAt30UnlessTheConfigSaysOtherwise) {
  // Grok-1's published shape (hpcai-tech/grok-1): 48 / 8 heads of 128 in a hidden size of 6144, no head_dim.
  const std::string grok1 = R"({"architectures": ["Grok1ModelForCausalLM"], "num_hidden_layers": 64, "num_attention_heads": 48,
                                "num_key_value_heads": 8, "hidden_size": 6144, "max_position_embeddings": 8192,
                                "torch_dtype": "bfloat16"})";
  const ModelConfig g = parse(grok1);
  EXPECT_EQ(g.head_dim, 128);
  EXPECT_EQ(g.attn_logit_cap, 30.0f);
  EXPECT_EQ(g.sm_scale(), 1.0f / std::sqrt(128.0f));
  // head_dim 128 whatever hidden_size / heads gives (8192 / 32 = 256 would be the generic rule).
  EXPECT_EQ(parse(config(R"("architectures": ["Grok1ForCausalLM"], "head_dim": null, "hidden_size": 8192, "num_attention_heads": 32, "num_key_value_heads": 8)")).head_dim, 128);
  EXPECT_EQ(parse(config(R"("architectures": ["Grok1ForCausalLM"], "attn_logit_softcapping": 50.0)")).attn_logit_cap, 50.0f);
  EXPECT_EQ(parse(config(R"("architectures": ["Grok1ForCausalLM"], "attn_logit_softcapping": 0)")).attn_logit_cap, 0.0f);
  EXPECT_EQ(parse(config(R"("architectures": ["Grok1ForCausalLM"], "attn_logit_softcapping": -1)")).attn_logit_cap, 0.0f);
  EXPECT_EQ(parse(config(R"("architectures": ["Grok1ForCausalLM"], "attn_temperature_len": -1)")).attn_logit_cap, 30.0f);
  // Other classes ignore the keys, as SGLang does.
  EXPECT_EQ(parse(config(R"("attn_logit_softcapping": 50.0)")).attn_logit_cap, 0.0f);
  const std::pair<const char*, const char*> refused[] = {
      {R"("architectures": ["Grok1ForCausalLM"], "attn_logit_softcapping": null)", "attn_logit_softcapping: null (SGLang's max(None, 0.0) raises"},
      {R"("architectures": ["Grok1ForCausalLM"], "attn_logit_softcapping": "30")", "attn_logit_softcapping: must be a positive finite number"},
      {R"("architectures": ["Grok1ForCausalLM"], "attn_logit_softcapping_method": "clip")", "attn_logit_softcapping_method: \"clip\": only SGLang's default tanh cap"},
      {R"("architectures": ["Grok1ForCausalLM"], "attn_temperature_len": 1024)", "attn_temperature_len: 1024: Grok's attention temperature"},
  };
  for (const auto& [extra, want] : refused) {
    const std::string e = parse_error(config(extra));
    EXPECT_TRUE(test::has(e, want)) << e;
  }
}

// Granite's muP attention scale: SGLang's GraniteAttention / GraniteMoeAttention take config.attention_multiplier
// as the layer scaling; other architectures ignore the key.
TEST(HfConfig, GraniteScaleIsTheAttentionMultiplier) {
  const ModelConfig g = parse(config(R"("architectures": ["GraniteForCausalLM"], "attention_multiplier": 0.0078125)"));
  EXPECT_EQ(g.sm_scale(), 0.0078125f);
  const ModelConfig moe = parse(config(R"("architectures": ["GraniteMoeForCausalLM"], "attention_multiplier": 0.015625, "hidden_size": 512)"));
  EXPECT_EQ(moe.sm_scale(), 0.015625f);
  const ModelConfig llama = parse(config(R"("attention_multiplier": 0.0078125)"));
  EXPECT_EQ(llama.sm_scale(), 1.0f / std::sqrt(64.0f));
  EXPECT_TRUE(test::has(parse_error(config(R"("architectures": ["GraniteForCausalLM"])")),
                  "attention_multiplier: missing (required for GraniteForCausalLM"));
  EXPECT_TRUE(test::has(parse_error(config(R"("architectures": ["GraniteForCausalLM"], "attention_multiplier": 0)")),
                  "attention_multiplier: must be a positive finite number"));
  // GraniteMoe derives head_dim = hidden_size / heads (granitemoe.py), whatever head_dim the config writes.
  const ModelConfig gm = parse(config(
      R"("architectures": ["GraniteMoeForCausalLM"], "attention_multiplier": 0.015625, "hidden_size": 1536, "num_attention_heads": 24, "num_key_value_heads": 8, "head_dim": 128)"));
  EXPECT_EQ(gm.head_dim, 64);
  EXPECT_TRUE(test::has(parse_error(config(R"("architectures": ["GraniteMoeForCausalLM"], "attention_multiplier": 0.015625, "head_dim": 64, "hidden_size": null)")),
                        "hidden_size: missing (required: GraniteMoeForCausalLM derives head_dim"));
  EXPECT_EQ(parse(config(R"("architectures": ["GraniteForCausalLM"], "attention_multiplier": 0.0078125, "hidden_size": 1536)")).head_dim, 64)
      << "dense Granite keeps a written head_dim";
  // So do Cohere / Cohere2 (commandr.py L158), OLMo / OLMo-2, StableLM, StarCoder2, InternLM2 and Persimmon; Arcee
  // and Solar take a written head_dim (getattr), as Llama does.
  for (const char* arch : {"CohereForCausalLM", "Olmo2ForCausalLM", "Starcoder2ForCausalLM", "InternLM2ForCausalLM"}) {
    SCOPED_TRACE(arch);
    EXPECT_EQ(parse(config(std::string(R"("architectures": [")") + arch +
                           R"("], "hidden_size": 2048, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 64)"))
                  .head_dim,
              128);
  }
  EXPECT_EQ(parse(config(R"("architectures": ["ArceeForCausalLM"], "hidden_size": 2048, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 64)"))
                .head_dim,
            64);
}

// Phi-3-small's scale (phi3_small.py L129-134): mup_attn_multiplier / head_dim when mup_use_scaling, else
// head_dim**-0.5; its config class is remote code, so both keys are required rather than guessed.
TEST(HfConfig, Phi3SmallScaleIsMupAttnMultiplierOverHeadDim) {
  const std::string arch = R"("architectures": ["Phi3SmallForCausalLM"], )";
  EXPECT_EQ(parse(config(arch + R"("mup_use_scaling": true, "mup_attn_multiplier": 1.0)")).sm_scale(), 1.0f / 64.0f);
  EXPECT_EQ(parse(config(arch + R"("mup_use_scaling": true, "mup_attn_multiplier": 2.0)")).sm_scale(), 2.0f / 64.0f);
  EXPECT_EQ(parse(config(arch + R"("mup_use_scaling": false, "mup_attn_multiplier": 2.0)")).sm_scale(), 1.0f / 8.0f);
  EXPECT_TRUE(test::has(parse_error(config(arch + R"("mup_attn_multiplier": 1.0)")),
                        "mup_use_scaling: missing (required for Phi3SmallForCausalLM"));
  EXPECT_TRUE(test::has(parse_error(config(arch + R"("mup_use_scaling": true)")),
                        "mup_attn_multiplier: missing (required for Phi3SmallForCausalLM"));
  EXPECT_EQ(parse(config(R"("mup_use_scaling": true, "mup_attn_multiplier": 1.0)")).sm_scale(), 1.0f / 8.0f)
      << "other classes ignore the keys";
}

// Exaone-4 writes sliding_window_pattern as a string ("LLLG") beside layer_types, which spell the same layers:
// on another class the string is left to layer_types (Exaone4ForCausalLM reads it by its own rule:
// Exaone4WindowsByItsPatternsLength); without layer_types a string is malformed.
TEST(HfConfig, StringWindowPatternBesideLayerTypes) {
  const std::string types = R"("layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"])";
  const std::string e = parse_error(config(R"("architectures": ["Olmo2ForCausalLM"], "sliding_window": 4096,
                                              "sliding_window_pattern": "LLLG", )" + types));
  EXPECT_TRUE(test::has(e, "sliding_window: 4096 on Olmo2ForCausalLM: SGLang 0.5.23's window rule for this model class is not modelled")) << e;
  const ModelConfig gemma = parse(config(R"("architectures": ["Gemma3ForCausalLM"], "query_pre_attn_scalar": 64,
                                            "sliding_window": 512, "sliding_window_pattern": "LLLG", )" + types));
  EXPECT_EQ(gemma.sliding_window, 512);
  EXPECT_EQ(gemma.sliding_layers, (std::vector<bool>{true, true, true, false}));
  EXPECT_TRUE(test::has(parse_error(config(R"("sliding_window": 8, "sliding_window_pattern": "LLLG")")),
                  "sliding_window_pattern: must be an integer (got \"LLLG\")"));
}

TEST(HfConfig, DuplicateKeysMlaAndChunkedAttentionAreRefusedGemma2Alternates) {
  // Duplicate keys, at the top level and nested; the same key in two different objects is fine.
  EXPECT_EQ(parse_error(config(R"("x": 1, "x": 2)")), "--model m.json: x: given twice in one object (which one is meant?)");
  EXPECT_EQ(parse_error(R"({"architectures": ["X"], "num_hidden_layers": 4, "num_attention_heads": 32,
                            "num_attention_heads": 8, "hidden_size": 4096, "max_position_embeddings": 8})"),
            "--model m.json: num_attention_heads: given twice in one object (which one is meant?)");
  EXPECT_EQ(parse_error(config(R"("text_config": {"a": {"b\u001b": 1, "b\u001b": 1}})")),
            "--model m.json: b\\x1b: given twice in one object (which one is meant?)");
  EXPECT_EQ(parse(config(R"("a": {"k": 1}, "b": {"k": 1}, "c": [{"k": 1}, {"k": 2}])")).num_layers, 4);

  // DeepSeek-V3 (hidden 7168 / 128 heads = 56) and DeepSeek-V2-Lite (2048 / 16 = 128: read as MHA it would pass).
  EXPECT_EQ(parse_error(R"({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
                            "num_attention_heads": 128, "num_key_value_heads": 128, "num_hidden_layers": 61,
                            "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
                            "v_head_dim": 128, "max_position_embeddings": 163840, "torch_dtype": "bfloat16"})"),
            "--model m.json: kv_lora_rank: 512: multi-head latent attention (MLA, DeepseekV3ForCausalLM) is not "
            "modelled; attnbench models the MHA / GQA backends");
  EXPECT_NE(parse_error(R"({"architectures": ["DeepseekV2ForCausalLM"], "hidden_size": 2048, "num_attention_heads": 16,
                            "num_hidden_layers": 27, "kv_lora_rank": 512, "q_lora_rank": null,
                            "max_position_embeddings": 163840})")
                .find("kv_lora_rank: 512: multi-head latent attention (MLA, DeepseekV2ForCausalLM)"),
            std::string::npos);
  EXPECT_EQ(parse(config(R"("kv_lora_rank": null)")).head_dim, 64) << "null: no MLA";

  // Llama-4 (text_config nesting): chunked local attention.
  EXPECT_EQ(parse_error(R"({"architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
                            "text_config": {"hidden_size": 5120, "head_dim": 128, "num_attention_heads": 40,
                            "num_key_value_heads": 8, "num_hidden_layers": 48, "max_position_embeddings": 10485760,
                            "attention_chunk_size": 8192}, "vision_config": {"hidden_size": 1408}})"),
            "--model m.json: text_config.attention_chunk_size: 8192: chunked local attention "
            "(Llama4ForConditionalGeneration) is not modelled");

  // Llama-3.2-11B-Vision (Mllama): cross-attention layers, which SGLang gives FlashInfer's second wrapper set.
  EXPECT_EQ(parse_error(R"({"architectures": ["MllamaForConditionalGeneration"], "model_type": "mllama",
                            "text_config": {"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
                            "num_hidden_layers": 40, "max_position_embeddings": 131072,
                            "cross_attention_layers": [3, 8, 13, 18, 23, 28, 33, 38]}, "torch_dtype": "bfloat16"})"),
            "--model m.json: architectures: MllamaForConditionalGeneration: an encoder-decoder model "
            "(cross-attention layers) is not modelled");

  // Encoder-only classes (bert.py L241-248 and the others SGLang builds as AttentionType.ENCODER_ONLY): refused.
  for (const char* enc : {"BertModel", "XLMRobertaModel", "EmbeddingGemma2Model", "SDARForCausalLM"})
    EXPECT_EQ(parse_error(config(std::string(R"("architectures": [")") + enc + R"("])")),
              std::string("--model m.json: architectures: ") + enc +
                  ": an encoder-only / bidirectional model (SGLang builds its attention as ENCODER_ONLY: non-causal, "
                  "no decode) is not modelled; attnbench models causal decoders");
  // A derived head_dim keeps the head_dim key's range (model_fuzz found Cohere2's hidden_size 204096 / 64 heads).
  EXPECT_EQ(parse_error(config(R"("architectures": ["Cohere2ForCausalLM"], "hidden_size": 204096, "num_attention_heads": 64,
                                  "num_key_value_heads": 8)")),
            "--model m.json: hidden_size: 204096 / num_attention_heads 64 gives head_dim 3189, above 1024");
  // EmbeddingGemma: a Gemma-3 text config with use_bidirectional_attention true (gemma3_causal.py L238-245:
  // DECODER_BIDIRECTIONAL) is refused; false or null is a causal Gemma-3, and other classes ignore the key.
  const std::string gemma3 = R"("architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
                                "sliding_window": 512, "sliding_window_pattern": 6)";
  EXPECT_EQ(parse_error(config(gemma3 + R"(, "use_bidirectional_attention": true)")),
            "--model m.json: use_bidirectional_attention: true: bidirectional prompt attention (EmbeddingGemma; "
            "SGLang's Gemma3Attention takes AttentionType.DECODER_BIDIRECTIONAL, models/gemma3_causal.py L238-245) "
            "is not modelled; attnbench models causal decoders");
  EXPECT_EQ(parse(config(gemma3 + R"(, "use_bidirectional_attention": false)")).sliding_window, 512);
  EXPECT_EQ(parse(config(gemma3 + R"(, "use_bidirectional_attention": null)")).sliding_window, 512);
  EXPECT_EQ(parse(config(R"("architectures": ["LlamaForCausalLM"], "use_bidirectional_attention": true)")).num_layers, 4);
  // Qwen2.5-1M: dual chunk attention (a query of 5 x head_dim reaches the attention); null is none.
  EXPECT_TRUE(test::has(parse_error(config(R"("architectures": ["Qwen2ForCausalLM"], "dual_chunk_attention_config":
                                              {"chunk_size": 262144, "local_size": 8192})")),
                        "dual_chunk_attention_config: {\"chunk_size\":262144,\"local_size\":8192}: dual chunk attention "
                        "(Qwen2ForCausalLM) is not modelled"));
  EXPECT_EQ(parse(config(R"("dual_chunk_attention_config": null)")).num_layers, 4);
  // ChatGLM's keys (configs/chatglm.py: num_layers, multi_query_group_num) on another class than ChatGLMModel (whose
  // keys are mapped: ChatGlmKeysAsSglangsChatGlmConfigReadsThem) are named, not read as something else.
  EXPECT_EQ(parse_error(R"({"architectures": ["X"], "num_layers": 40, "num_attention_heads": 32,
                            "multi_query_group_num": 2, "kv_channels": 128, "hidden_size": 4096, "seq_length": 131072})"),
            "--model m.json: multi_query_group_num: 2: the model's heads are given under a key attnbench does not read "
            "(it reads num_attention_heads and num_key_value_heads)");
  EXPECT_EQ(parse_error(R"({"architectures": ["X"], "num_layers": 40, "num_attention_heads": 32,
                            "num_key_value_heads": 2, "head_dim": 128, "seq_length": 131072})"),
            "--model m.json: num_layers: 40: the model's layers are given under a key attnbench does not read (it reads "
            "num_hidden_layers)");
  EXPECT_EQ(parse_error(config(R"("num_key_value_heads": null, "multi_query_group_num": 2)")).find("multi_query_group_num: 2: the "
                                                                                                 "model's heads are given"),
            std::string("--model m.json: ").size());

  // Gemma-2 9B's config.json: sliding_window 4096 and no pattern: even layers windowed, odd layers global.
  const ModelConfig g2 = parse(R"({"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "hidden_size": 3584,
                                   "head_dim": 256, "num_attention_heads": 16, "num_key_value_heads": 8,
                                   "num_hidden_layers": 42, "max_position_embeddings": 8192, "sliding_window": 4096,
                                   "cache_implementation": "hybrid", "torch_dtype": "float32",
                                   "query_pre_attn_scalar": 256, "attn_logit_softcapping": 50.0})");
  EXPECT_EQ(g2.sliding_layers, (std::vector<bool>{true, false}));
  EXPECT_EQ(windows(g2, 4), (std::vector<int>{4095, -1, 4095, -1}));
  EXPECT_EQ(g2.dtype, DType::bf16) << "float32 Gemma runs as bfloat16";
  // SGLang's gemma2.py (L173: use_sliding_window = layer_id % 2 == 0 and hasattr(config, "sliding_window"))
  // windows the even layers whatever layer_types says; so does attnbench.
  const ModelConfig g2t = parse(config(R"("architectures": ["Gemma2ForCausalLM"], "sliding_window": 16,
                                          "query_pre_attn_scalar": 64, "attn_logit_softcapping": null,
                                          "layer_types": ["full_attention", "full_attention", "full_attention", "sliding_attention"])"));
  EXPECT_EQ(windows(g2t, 4), (std::vector<int>{15, -1, 15, -1}));
}

// The attention scale and logit cap: query_pre_attn_scalar**-0.5 on Gemma-2 / Gemma-3 (SGLang's gemma2.py and
// gemma3_causal.py), Gemma-2's attn_logit_softcapping as the cap (gemma3_causal.py passes logit_cap=0.0); other
// architectures keep head_dim**-0.5 and no cap and ignore both keys, as SGLang's classes do.
TEST(HfConfig, GemmaScaleAndLogitCap) {
  const ModelConfig g2 = find_model_preset(kData + "gemma-2-9b.json");
  EXPECT_EQ(g2.name, "gemma-2-9b");
  EXPECT_EQ(g2.architecture, "Gemma2ForCausalLM");
  EXPECT_EQ(g2.num_layers, 42);
  EXPECT_EQ(g2.num_qo_heads(), 16);
  EXPECT_EQ(g2.num_kv_heads(), 8);
  EXPECT_EQ(g2.head_dim, 256);
  EXPECT_EQ(g2.context_len, 8192);
  EXPECT_EQ(g2.dtype, DType::bf16) << "float32 Gemma runs as bfloat16";
  EXPECT_EQ(windows(g2, 4), (std::vector<int>{4095, -1, 4095, -1})) << "even layers windowed, odd layers global";
  EXPECT_EQ(g2.query_pre_attn_scalar, 256.0);
  EXPECT_EQ(g2.sm_scale(), 0.0625f) << "256**-0.5";
  EXPECT_EQ(g2.attn_logit_cap, 50.0f) << "attn_logit_softcapping; final_logit_softcapping (30) is not attention's";

  // Gemma-3-27B: 168**-0.5 (0.0771517), not head_dim 128's 0.0883883; its attn_logit_softcapping is null.
  const ModelConfig g3 = find_model_preset(kData + "gemma-3-27b.json");
  EXPECT_EQ(g3.query_pre_attn_scalar, 168.0);
  EXPECT_EQ(g3.sm_scale(), static_cast<float>(1.0 / std::sqrt(168.0)));
  EXPECT_NEAR(g3.sm_scale(), 0.0771517, 1e-7);
  EXPECT_NE(g3.sm_scale(), 1.0f / std::sqrt(128.0f));
  EXPECT_EQ(g3.attn_logit_cap, 0.0f);
  // The Gemma-3 presets state their published 256 (head_dim 256: the same scale as before) and 64 (tiny-swa).
  EXPECT_EQ(find_model_preset("gemma-3-12b").sm_scale(), 0.0625f);
  EXPECT_EQ(find_model_preset("tiny-swa").sm_scale(), 0.125f);
  // Everything else: 1 / sqrt(head_dim) in float, no cap.
  for (const ModelConfig& m : model_presets())
    if (m.architecture.rfind("Gemma", 0) != 0) {
      EXPECT_EQ(m.sm_scale(), 1.0f / std::sqrt(static_cast<float>(m.head_dim))) << m.name;
      EXPECT_EQ(m.attn_logit_cap, 0.0f) << m.name;
    }

  // Gemma-2: a non-integer scalar (Gemma-2 27B: 144 = 4608 / 32), and a null cap (RadixAttention's None: no cap).
  const std::string g2_base = R"("architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", )";
  const ModelConfig g2b = parse(config(g2_base + R"("query_pre_attn_scalar": 144.0, "attn_logit_softcapping": null)"));
  EXPECT_EQ(g2b.sm_scale(), static_cast<float>(1.0 / 12.0));
  EXPECT_EQ(g2b.attn_logit_cap, 0.0f);
  EXPECT_EQ(parse(config(g2_base + R"("query_pre_attn_scalar": 64, "attn_logit_softcapping": 30)")).attn_logit_cap, 30.0f);
  // Gemma-3 passes logit_cap=0.0 whatever its config says.
  const std::string g3_base = R"("architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", )";
  EXPECT_EQ(parse(config(g3_base + R"("query_pre_attn_scalar": 64, "attn_logit_softcapping": 50.0)")).attn_logit_cap, 0.0f);
  EXPECT_EQ(parse(config(g3_base + R"("query_pre_attn_scalar": 64, "attn_logit_softcapping": "x")")).attn_logit_cap, 0.0f);
  // Llama ignores both keys (SGLang's LlamaAttention: self.scaling = self.head_dim**-0.5, no logit_cap).
  const ModelConfig l = parse(config(R"("query_pre_attn_scalar": 16, "attn_logit_softcapping": 50.0)"));
  EXPECT_EQ(l.sm_scale(), 0.125f);
  EXPECT_EQ(l.query_pre_attn_scalar, 0.0);
  EXPECT_EQ(l.attn_logit_cap, 0.0f);

  // Bad values: one line naming the key.
  const std::string num = ": must be a positive finite number within float32's normal range (got ";
  const std::string notnum = ": must be a positive finite number or null (got ";
  EXPECT_EQ(parse_error(config(g2_base + R"("query_pre_attn_scalar": 0, "attn_logit_softcapping": 50)")),
            "--model m.json: query_pre_attn_scalar" + num + "0)");
  EXPECT_EQ(parse_error(config(g2_base + R"("query_pre_attn_scalar": -256, "attn_logit_softcapping": 50)")),
            "--model m.json: query_pre_attn_scalar" + num + "-256)");
  EXPECT_EQ(parse_error(config(g2_base + R"("query_pre_attn_scalar": 1e39, "attn_logit_softcapping": 50)")),
            "--model m.json: query_pre_attn_scalar" + num + "1e+39)");
  EXPECT_EQ(parse_error(config(g2_base + R"("query_pre_attn_scalar": "256", "attn_logit_softcapping": 50)")),
            "--model m.json: query_pre_attn_scalar" + notnum + "\"256\")");
  EXPECT_EQ(parse_error(config(g2_base + R"("query_pre_attn_scalar": true, "attn_logit_softcapping": 50)")),
            "--model m.json: query_pre_attn_scalar" + notnum + "true)");
  EXPECT_EQ(parse_error(config(g2_base + R"("query_pre_attn_scalar": 256, "attn_logit_softcapping": 0)")),
            "--model m.json: attn_logit_softcapping" + num + "0)");
  EXPECT_EQ(parse_error(config(g2_base + R"("query_pre_attn_scalar": 256, "attn_logit_softcapping": -50.0)")),
            "--model m.json: attn_logit_softcapping" + num + "-50.0)");
  EXPECT_EQ(parse_error(config(g2_base + R"("query_pre_attn_scalar": 256, "attn_logit_softcapping": [50])")),
            "--model m.json: attn_logit_softcapping" + notnum + "[50])");
  EXPECT_EQ(parse_error(config(g2_base + R"("query_pre_attn_scalar": 256, "attn_logit_softcapping": 1e-300)")),
            "--model m.json: attn_logit_softcapping" + num + "1e-300)");
  // Absent without a model_type (no transformers class, so no class default): refused rather than guessed; with
  // one, the class default (HfClassDefaults tests); a null scalar, which transformers' Gemma classes refuse: refused.
  const std::string g2_bare = R"("architectures": ["Gemma2ForCausalLM"], )";
  EXPECT_EQ(parse_error(config(g2_bare + R"("attn_logit_softcapping": 50)")),
            "--model m.json: query_pre_attn_scalar: missing (required for Gemma2ForCausalLM: SGLang scales its "
            "attention by query_pre_attn_scalar**-0.5)");
  EXPECT_TRUE(test::has(parse_error(config(g3_base + R"("query_pre_attn_scalar": null)")),
                        "--model m.json: query_pre_attn_scalar: null, which transformers 5.19's Gemma3TextConfig"));
  EXPECT_EQ(parse_error(config(R"("architectures": ["Gemma3ForCausalLM"], "query_pre_attn_scalar": null)")),
            "--model m.json: query_pre_attn_scalar: null (required for Gemma3ForCausalLM: SGLang scales its "
            "attention by query_pre_attn_scalar**-0.5)");
  EXPECT_EQ(parse_error(config(g2_bare + R"("query_pre_attn_scalar": 256)")),
            "--model m.json: attn_logit_softcapping: missing (required for Gemma2ForCausalLM: SGLang passes it as "
            "the attention logit cap; write null for none)");
  // Under text_config, the key is named with its prefix.
  EXPECT_EQ(parse_error(R"({"architectures": ["Gemma3ForConditionalGeneration"], "text_config": {"num_hidden_layers": 6,
      "num_attention_heads": 8, "head_dim": 256, "max_position_embeddings": 4096, "query_pre_attn_scalar": 0.0}})"),
            "--model m.json: text_config.query_pre_attn_scalar" + num + "0.0)");
}

// The command line: a bad key exits 2 with one line naming the file and the key.
TEST(HfConfig, BadGemmaKeyExitsTwoNamingIt) {
  test::TempDir d;
  test::write_file(d.file("g2.json"), config(R"("architectures": ["Gemma2ForCausalLM"], "query_pre_attn_scalar": 256,
                                               "attn_logit_softcapping": -1)"));
  const auto r = test::run_attnbench("validate --device cpu --quiet --model " + d.file("g2.json") + " --mode decode", d);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--model " + d.file("g2.json") + ": attn_logit_softcapping: must be a positive finite number"),
            std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(HfConfig, FilesThatAreMissingNotRegularOrTooLarge) {
  test::TempDir d;
  EXPECT_EQ(error_of([&] { find_model_preset(d.file("nope.json")); }),
            "--model " + d.file("nope.json") + ": no such file (expected a preset name, a config.json or a model folder)");
  // A model folder (SGLang's --model-path) is read through its config.json, named after the folder; a folder
  // without one, or whose config.json is not a file, is refused naming it.
  std::filesystem::create_directory(d.file("dir"));
  EXPECT_EQ(error_of([&] { find_model_preset(d.file("dir")); }), "--model " + d.file("dir") + ": a folder without a config.json");
  std::filesystem::create_directory(d.file("dir/config.json"));
  EXPECT_EQ(error_of([&] { find_model_preset(d.file("dir")); }),
            "--model " + d.file("dir/config.json") + ": not a regular file (a directory)");
  std::filesystem::create_directory(d.file("My Model"));
  test::write_file(d.file("My Model/config.json"), config(R"("num_hidden_layers": 3)"));
  const ModelConfig from_folder = find_model_preset(d.file("My Model"));
  EXPECT_EQ(from_folder.name, "My-Model");
  EXPECT_EQ(from_folder.num_layers, 3);
  EXPECT_EQ(find_model_preset(d.file("My Model/")).name, "My-Model") << "a trailing slash names the same folder";
  EXPECT_EQ(error_of([&] { read_hf_config("/dev/null"); }), "--model /dev/null: not a regular file (a character device)");
  test::write_file(d.file("nul.json"), std::string("{\n\"a\": 1,\0\n}", 12));
  EXPECT_EQ(error_of([&] { read_hf_config(d.file("nul.json")); }), "--model " + d.file("nul.json") + " line 2: contains a NUL byte");
  test::write_file(d.file("big.json"), config("\"pad\": \"" + std::string(kMaxHfConfigBytes, 'x') + "\""));
  EXPECT_EQ(error_of([&] { find_model_preset(d.file("big.json")); }),
            "--model " + d.file("big.json") + ": larger than 1048576 bytes (" +
                std::to_string(std::filesystem::file_size(d.file("big.json"))) + " bytes)");
  // Just under the limit is read.
  const std::string fits = config("\"pad\": \"");
  test::write_file(d.file("fits.json"), fits + std::string(kMaxHfConfigBytes - fits.size() - 2, 'x') + "\"}");
  EXPECT_EQ(find_model_preset(d.file("fits.json")).name, "fits");
  // A file in the working directory is found by its name; a preset name is never taken for a file.
  test::write_file(d.file("bad.json"), config(R"("num_attention_heads": -1)"));
  EXPECT_NE(error_of([&] { find_model_preset(d.file("bad.json")); })
                .find("--model " + d.file("bad.json") + ": num_attention_heads: must be in [1, 1024] (got -1)"),
            std::string::npos);
  EXPECT_EQ(find_model_preset("tiny").num_layers, 2);
  // Unknown names still list the presets.
  const std::string unknown = error_of([] { find_model_preset("gpt-9"); });
  EXPECT_NE(unknown.find("--model: unknown preset 'gpt-9' (known: llama-3.1-8b, "), std::string::npos) << unknown;
}

// The dtype as SGLang 0.5.23 reads it (configs/model_config.py L881: _get_and_verify_dtype(hf_text_config)):
// text_config's own dtype before the top level's (get_hf_text_config gives the sub-config the parent's only when
// it has none), "dtype" before "torch_dtype" in one object (transformers 5.19 keeps dtype when both are written),
// the text config's model_type for Gemma's float32 rule; GPT-OSS with MXFP4 weights is declared bfloat16 by
// arg_groups/model_overrides/gpt_oss.py L56-63, whatever the config writes.
TEST(HfConfig, DtypeAsSglangReadsItTextConfigFirstDtypeOverTorchDtypeGptOssMxfp4) {
  EXPECT_EQ(parse(config(R"("torch_dtype": "bfloat16", "dtype": "float16")")).dtype, DType::fp16);
  EXPECT_EQ(parse(config(R"("dtype": "bfloat16", "torch_dtype": "float16")")).dtype, DType::bf16);
  EXPECT_EQ(parse(config(R"("dtype": null, "torch_dtype": "float16")")).dtype, DType::fp16) << "null: not written";
  const std::string text = R"("num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4, "head_dim": 64, "max_position_embeddings": 64,
                                 "sliding_window_pattern": 1)";
  // text_config's dtype wins over the top level's; the top level's is the fallback.
  EXPECT_EQ(parse(R"({"architectures": ["X"], "torch_dtype": "bfloat16", "text_config": {)" + text +
                  R"(, "torch_dtype": "float16"}})").dtype, DType::fp16);
  EXPECT_EQ(parse(R"({"architectures": ["X"], "torch_dtype": "bfloat16", "text_config": {)" + text + "}}").dtype,
            DType::bf16);
  EXPECT_EQ(parse(R"({"architectures": ["X"], "text_config": {)" + text + R"(, "dtype": "bfloat16"}})").dtype, DType::bf16);
  // A text dtype that is not a string is named under text_config.
  EXPECT_EQ(parse_error(R"({"architectures": ["X"], "text_config": {)" + text + R"(, "dtype": 16}})"),
            "--model m.json: text_config.dtype: must be a string (got 16)");
  // PaliGemma-style: the top-level model_type is not Gemma's, the text config's is: float32 runs as bfloat16.
  EXPECT_EQ(parse(R"({"architectures": ["X"], "model_type": "paligemma", "torch_dtype": "float32", "text_config": {)" +
                  text + R"(, "model_type": "gemma"}})").dtype, DType::bf16);
  EXPECT_EQ(parse(R"({"architectures": ["X"], "model_type": "gemma3", "torch_dtype": "float32", "text_config": {)" +
                  text + R"(, "model_type": "llava_text"}})").dtype, DType::fp16);
  // gpt-oss-120b's published config: MXFP4 experts and no torch_dtype, which SGLang serves in bfloat16 (not the
  // float16 of an absent dtype under "auto"); a float16 config too. Without MXFP4 the config's dtype rules.
  const std::string oss = R"({"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "num_hidden_layers": 36,
      "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "max_position_embeddings": 131072,
      "sliding_window": 128, "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention",
      "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention",
      "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention",
      "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention",
      "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention",
      "sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention",
      "sliding_attention", "full_attention"])";
  const std::string mxfp4 = R"(, "quantization_config": {"modules_to_not_convert": ["model.layers.*.self_attn"],
      "quant_method": "mxfp4"})";
  const ModelConfig g = parse(oss + mxfp4 + "}");
  EXPECT_EQ(g.dtype, DType::bf16);
  EXPECT_EQ(g.num_layers, 36);
  EXPECT_TRUE(g.has_sinks);
  EXPECT_EQ(windows(g, 4), (std::vector<int>{127, -1, 127, -1}));
  EXPECT_EQ(parse(oss + mxfp4 + R"(, "torch_dtype": "float16"})").dtype, DType::bf16);
  EXPECT_EQ(parse(oss + "}").dtype, DType::fp16) << "no MXFP4, no dtype: SGLang's auto gives float16";
  EXPECT_EQ(parse(oss + R"(, "quantization_config": {"quant_method": "fp8"}})").dtype, DType::fp16);
  EXPECT_EQ(parse(oss + R"(, "quantization_config": {"quant_method": "mxfp4"}, "torch_dtype": "float16"})").dtype,
            DType::bf16);
  // Only GPT-OSS has the override.
  EXPECT_EQ(parse(config(R"("torch_dtype": "float16", "quantization_config": {"quant_method": "mxfp4"})")).dtype,
            DType::fp16);
}

// The sub-config SGLang's get_hf_text_config takes (utils/hf_transformers/common.py L583-604), in its order:
// thinker_config (its text_config where it has one), llm_config, language_config, text_config; keys and errors
// under that object's name; the dtype that object's, else the top level's, and a thinker's for its text_config.
TEST(HfConfig, SubConfigInSglangsOrder) {
  auto attn = [](int layers, int heads) {
    return R"("num_hidden_layers": )" + std::to_string(layers) + R"(, "num_attention_heads": )" +
           std::to_string(heads) + R"(, "num_key_value_heads": 2, "head_dim": 128, "max_position_embeddings": 4096)";
  };
  // InternVL-style: llm_config holds the language model; a vision_config beside it is ignored.
  const ModelConfig internvl = parse(R"({"architectures": ["InternVLChatModel"], "torch_dtype": "bfloat16",
      "vision_config": {"num_hidden_layers": 24, "num_attention_heads": 16}, "llm_config": {)" + attn(28, 28) + "}}");
  EXPECT_EQ(internvl.num_layers, 28);
  EXPECT_EQ(internvl.num_attention_heads, 28);
  EXPECT_EQ(internvl.dtype, DType::bf16) << "the top level's dtype where llm_config has none";
  EXPECT_TRUE(internvl.is_multimodal);
  // llm_config before text_config, language_config before text_config.
  EXPECT_EQ(parse(R"({"architectures": ["X"], "text_config": {)" + attn(3, 4) + R"(}, "llm_config": {)" + attn(5, 8) +
                  "}}").num_layers, 5);
  EXPECT_EQ(parse(R"({"architectures": ["X"], "text_config": {)" + attn(3, 4) + R"(}, "language_config": {)" +
                  attn(7, 8) + R"(, "torch_dtype": "float16"}, "torch_dtype": "bfloat16"})").dtype, DType::fp16);
  // Qwen2.5-Omni-style: thinker_config.text_config; the thinker's dtype, not the text_config's own.
  const ModelConfig omni = parse(R"({"architectures": ["X"], "thinker_config": {"torch_dtype": "bfloat16",
      "text_config": {)" + attn(36, 16) + R"(, "torch_dtype": "float16"}}, "text_config": {)" + attn(3, 4) + "}}");
  EXPECT_EQ(omni.num_layers, 36);
  EXPECT_EQ(omni.dtype, DType::bf16);
  // A thinker without a text_config is the attention object itself.
  EXPECT_EQ(parse(R"({"architectures": ["X"], "thinker_config": {)" + attn(9, 8) + "}}").num_layers, 9);
  // Errors name the key under its sub-config.
  EXPECT_EQ(parse_error(R"({"architectures": ["X"], "llm_config": {"num_hidden_layers": 2}})"),
            "--model m.json: llm_config.num_attention_heads: missing (required)");
  EXPECT_EQ(parse_error(R"({"architectures": ["X"], "thinker_config": {"text_config": {"num_hidden_layers": 2}}})"),
            "--model m.json: thinker_config.text_config.num_attention_heads: missing (required)");
  EXPECT_EQ(parse_error(R"({"architectures": ["X"], "llm_config": [1]})"), "--model m.json: llm_config: must be an object (got [1])");
}

// ChatGLM's keys (SGLang's ChatGLMConfig, configs/chatglm.py; models/chatglm.py GLMAttention): GLM-4-9B-chat's and
// ChatGLM3-6B's published attention keys; multi_query_attention false takes the attention heads as KV heads; the
// class defaults where a key is absent; head_dim is hidden_size // heads whatever kv_channels says.
TEST(HfConfig, ChatGlmKeysAsSglangsChatGlmConfigReadsThem) {
  const ModelConfig glm4 = parse(R"({"architectures": ["ChatGLMModel"], "model_type": "chatglm", "num_layers": 40,
      "hidden_size": 4096, "num_attention_heads": 32, "multi_query_attention": true, "multi_query_group_num": 2,
      "kv_channels": 128, "seq_length": 131072, "rope_ratio": 500, "padded_vocab_size": 151552,
      "ffn_hidden_size": 13696, "torch_dtype": "bfloat16"})");
  EXPECT_EQ(glm4.num_layers, 40);
  EXPECT_EQ(glm4.num_attention_heads, 32);
  EXPECT_EQ(glm4.num_key_value_heads, 2);
  EXPECT_EQ(glm4.head_dim, 128);
  EXPECT_EQ(glm4.context_len, 131072);
  EXPECT_EQ(glm4.dtype, DType::bf16);
  const ModelConfig glm3 = parse(R"({"architectures": ["ChatGLMModel"], "model_type": "chatglm", "num_layers": 28,
      "hidden_size": 4096, "num_attention_heads": 32, "multi_query_attention": true, "multi_query_group_num": 2,
      "kv_channels": 128, "seq_length": 8192, "torch_dtype": "float16"})");
  EXPECT_EQ(glm3.num_layers, 28);
  EXPECT_EQ(glm3.num_key_value_heads, 2);
  EXPECT_EQ(glm3.context_len, 8192);
  EXPECT_EQ(glm3.dtype, DType::fp16);
  const ModelConfig mha = parse(R"({"architectures": ["ChatGLMModel"], "num_attention_heads": 16, "kv_channels": 64,
      "multi_query_group_num": 2})");
  EXPECT_EQ(mha.num_layers, 28) << "ChatGLMConfig's default num_layers";
  EXPECT_EQ(mha.num_key_value_heads, 16) << "multi_query_attention false: every head has its K / V";
  EXPECT_EQ(mha.head_dim, 256) << "4096 // 16, not kv_channels";
  EXPECT_EQ(mha.context_len, 2048) << "ChatGLMConfig's default seq_length";
  // A group count that does not divide the heads is named with where it came from.
  const std::string e = parse_error(R"({"architectures": ["ChatGLMModel"], "num_layers": 2, "num_attention_heads": 32,
      "multi_query_attention": true, "multi_query_group_num": 5})");
  EXPECT_NE(e.find("num_key_value_heads"), std::string::npos) << e;
  EXPECT_NE(e.find("multi_query_group_num"), std::string::npos) << e;
}

// A UTF-8 byte order mark: transformers opens config.json as "utf-8" and Python's json.loads refuses a leading
// U+FEFF (transformers 5.19: "It looks like the config file ... is not a valid JSON file"), so SGLang cannot load
// it; nlohmann would skip it silently. Refused, exit 2, through the binary too.
TEST(HfConfig, Utf8ByteOrderMarkIsRefused) {
  EXPECT_EQ(parse_error("\xEF\xBB\xBF" + config()),
            "--model m.json: top level: starts with a UTF-8 byte order mark, which transformers' config reader "
            "(Python's json) refuses, so SGLang could not load this file; save it without the BOM");
  EXPECT_EQ(parse(" " + config()).num_layers, 4) << "leading whitespace is fine";
  test::TempDir d;
  test::write_file(d.file("bom.json"), "\xEF\xBB\xBF" + config());
  const auto r = test::run_attnbench("memory --device cpu --model " + d.file("bom.json"), d);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--model " + d.file("bom.json") + ": top level: starts with a UTF-8 byte order mark"),
            std::string::npos) << r.err;
}

TEST(HfConfig, BadFilesExitTwoThroughTheBinary) {
  test::TempDir d;
  test::write_file(d.file("bad.json"), config(R"("torch_dtype": "int4")"));
  for (const std::string& cmd : {std::string("memory --device cpu --model "), "validate --device cpu --out " + d.file("x.csv") + " --model "}) {
    const auto r = test::run_attnbench(cmd + d.file("bad.json"), d);
    EXPECT_EQ(r.exit_code, 2) << cmd << r.err;
    EXPECT_NE(r.err.find("--model " + d.file("bad.json") + ": torch_dtype: unknown dtype 'int4'"), std::string::npos) << r.err;
  }
}

// transformers 5.19's class defaults (configs/hf-class-defaults.json): an absent key takes the class default of the
// object's model_type, as SGLang sees it through transformers' AutoConfig. Each expectation below was checked by
// loading the same text with transformers 5.19 (AutoConfig.from_pretrained(...).get_text_config()).

// The per-layer windows of a Gemma-3 with sliding_window 1024 and the class's sliding_window_pattern 6: SGLang's
// layer.sliding_window_size 1023 on the sliding layers, -1 on layers 5, 11, 17, ... (index + 1 a multiple of 6).
std::vector<int> gemma3_windows(int layers) {
  std::vector<int> w;
  for (int l = 0; l < layers; ++l) w.push_back((l + 1) % 6 == 0 ? -1 : 1023);
  return w;
}

TEST(HfClassDefaults, PublishedGemma3_4bItTakesGemma3TextConfigDefaults) {
  // google/gemma-3-4b-it as published: text_config writes no heads, head_dim, context, scale or pattern.
  const ModelConfig m = read_hf_config(kData + "gemma-3-4b-it");
  EXPECT_EQ(m.name, "gemma-3-4b-it");
  EXPECT_EQ(m.architecture, "Gemma3ForConditionalGeneration");
  EXPECT_EQ(m.num_attention_heads, 8);   // Gemma3TextConfig L81
  EXPECT_EQ(m.num_key_value_heads, 4);   // L82
  EXPECT_EQ(m.head_dim, 256);            // L83 (not 2560 / 8 = 320)
  EXPECT_EQ(m.num_layers, 34);           // written
  EXPECT_EQ(m.context_len, 131072);      // L85; rope factor 8 keyed by layer type, not multiplied
  EXPECT_EQ(m.sliding_window, 1024);     // written
  EXPECT_EQ(windows(m, 34), gemma3_windows(34));  // sliding_window_pattern 6, L109-115
  EXPECT_DOUBLE_EQ(m.query_pre_attn_scalar, 256.0);  // L96
  EXPECT_FLOAT_EQ(m.sm_scale(), 1.0f / 16.0f);
  EXPECT_EQ(m.attn_logit_cap, 0.0f);
  EXPECT_EQ(m.dtype, DType::bf16);
}

TEST(HfClassDefaults, PublishedGemma3_12bItHeadDimIsTheClassDefaultNotHiddenOverHeads) {
  // google/gemma-3-12b-it as published: heads 16 / 8, no head_dim: 256 (Gemma3TextConfig L83), not 3840 / 16 = 240.
  const ModelConfig m = read_hf_config(kData + "gemma-3-12b-it-published");
  EXPECT_EQ(m.num_attention_heads, 16);
  EXPECT_EQ(m.num_key_value_heads, 8);
  EXPECT_EQ(m.head_dim, 256);
  EXPECT_EQ(m.num_layers, 48);
  EXPECT_EQ(m.context_len, 131072);
  EXPECT_EQ(m.sliding_window, 1024);
  EXPECT_EQ(windows(m, 48), gemma3_windows(48));
  EXPECT_DOUBLE_EQ(m.query_pre_attn_scalar, 256.0);
  EXPECT_FLOAT_EQ(m.sm_scale(), 1.0f / 16.0f);
  // The same shapes as the fixture that writes the defaults out.
  const ModelConfig written = read_hf_config(kData + "gemma-3-12b-it.json");
  EXPECT_EQ(written.head_dim, m.head_dim);
  EXPECT_EQ(written.context_len, m.context_len);
  EXPECT_EQ(windows(written, 48), windows(m, 48));
}

const char* kGemma3Text = R"({"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "hidden_size": 1152,
  "num_hidden_layers": 26, "num_attention_heads": 4, "num_key_value_heads": 1, "sliding_window": 512)";
const char* kGemma2 = R"({"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "hidden_size": 3584,
  "num_hidden_layers": 42, "num_attention_heads": 16, "num_key_value_heads": 8)";

TEST(HfClassDefaults, AKeyWrittenNullStaysNull) {
  // Gemma2Config's attn_logit_softcapping: absent -> the class default 50.0 (L91); null -> None: no cap.
  const ModelConfig absent = parse(std::string(kGemma2) + "}");
  EXPECT_FLOAT_EQ(absent.attn_logit_cap, 50.0f);
  EXPECT_EQ(absent.sliding_window, 4096);  // L88, on the even layers (gemma2.py)
  EXPECT_EQ(absent.head_dim, 256);         // L74, not 3584 / 16 = 224
  EXPECT_EQ(absent.context_len, 8192);     // L76
  EXPECT_DOUBLE_EQ(absent.query_pre_attn_scalar, 256.0);  // L87
  const ModelConfig null_cap = parse(std::string(kGemma2) + R"(, "attn_logit_softcapping": null})");
  EXPECT_EQ(null_cap.attn_logit_cap, 0.0f);
  // Gemma3TextConfig's sliding_window null stays None, so the sliding layers the class derives have no window: SGLang's
  // get_attention_sliding_window_size (None - 1) fails; refused, naming the derived layer_types.
  const std::string e = parse_error(R"({"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
      "num_hidden_layers": 6, "sliding_window": null})");
  EXPECT_TRUE(test::has(e, "sliding_window: null, but layer_types has sliding_attention layers (layer_types not written: "
                     "derived as transformers 5.19's Gemma3TextConfig")) << e;
  // A null where the class types the key without None: transformers refuses it, so does attnbench, naming the class.
  const std::string kv = parse_error(R"({"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
      "num_hidden_layers": 2, "num_key_value_heads": null})");
  EXPECT_TRUE(test::has(kv, "num_key_value_heads: null, which transformers 5.19's Gemma3TextConfig (model_type gemma3_text")) << kv;
  EXPECT_TRUE(test::has(kv, "leave the key out for the class default 4")) << kv;
  // Where the class types it with None (LlamaConfig's num_key_value_heads), null is None: num_attention_heads (L89-90).
  const ModelConfig llama = parse(R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048,
      "num_hidden_layers": 2, "num_attention_heads": 16, "num_key_value_heads": null})");
  EXPECT_EQ(llama.num_key_value_heads, 16);
  EXPECT_EQ(llama.head_dim, 128);
  EXPECT_EQ(llama.context_len, 2048);  // LlamaConfig L71
}

TEST(HfClassDefaults, AWrittenKeyBeatsTheClassDefault) {
  const ModelConfig m = parse(std::string(kGemma3Text) +
                              R"(, "head_dim": 72, "query_pre_attn_scalar": 144, "max_position_embeddings": 32768,
                                 "sliding_window_pattern": 3})");
  EXPECT_EQ(m.num_attention_heads, 4);
  EXPECT_EQ(m.num_key_value_heads, 1);
  EXPECT_EQ(m.head_dim, 72);
  EXPECT_EQ(m.context_len, 32768);
  EXPECT_DOUBLE_EQ(m.query_pre_attn_scalar, 144.0);
  EXPECT_EQ(windows(m, 6), (std::vector<int>{511, 511, -1, 511, 511, -1}));  // the written pattern 3
  // Written layer_types beat the pattern; the defaults fill only what is absent (1152 / 4 = 288 is not taken).
  const ModelConfig d = parse(std::string(kGemma3Text) + "}");
  EXPECT_EQ(d.head_dim, 256);
  EXPECT_EQ(d.context_len, 131072);
  EXPECT_EQ(windows(d, 12), (std::vector<int>{511, 511, 511, 511, 511, -1, 511, 511, 511, 511, 511, -1}));
  // Mistral's num_key_value_heads default is 8 (MistralConfig L68), not num_attention_heads.
  const ModelConfig mistral = parse(R"({"architectures": ["MistralForCausalLM"], "model_type": "mistral",
      "hidden_size": 4096, "num_hidden_layers": 2, "num_attention_heads": 32})");
  EXPECT_EQ(mistral.num_key_value_heads, 8);
  EXPECT_EQ(mistral.context_len, 131072);
  // Granite's attention_multiplier: GraniteConfig's 1.0 (L86), which granite.py hands RadixAttention as the scale.
  const ModelConfig granite = parse(R"({"architectures": ["GraniteForCausalLM"], "model_type": "granite",
      "hidden_size": 4096, "num_hidden_layers": 2, "num_attention_heads": 32, "max_position_embeddings": 4096})");
  EXPECT_FLOAT_EQ(granite.sm_scale(), 1.0f);
}

TEST(HfClassDefaults, TheClassIsTheObjectsModelType) {
  // No model_type: no class, no defaults (transformers could not pick one): refused as before.
  EXPECT_TRUE(test::has(parse_error(R"({"architectures": ["Gemma3ForCausalLM"], "hidden_size": 1152, "num_hidden_layers": 2,
      "num_attention_heads": 4, "head_dim": 256, "max_position_embeddings": 8192})"),
                  "query_pre_attn_scalar: missing"));
  // A gemma3 top level: its text_config is a Gemma3TextConfig even when text_config names no model_type.
  const ModelConfig mm = parse(R"({"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
      "text_config": {"hidden_size": 2560, "num_hidden_layers": 6, "sliding_window": 1024}})");
  EXPECT_EQ(mm.num_attention_heads, 8);
  EXPECT_EQ(mm.head_dim, 256);
  // A default that breaks a written value is named in the error as the class default it is.
  const std::string e = parse_error(R"({"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
      "num_hidden_layers": 2, "num_attention_heads": 6})");
  EXPECT_TRUE(test::has(e, "num_key_value_heads: 6 attention heads are not divisible by 4 KV heads [not written: 4, the class "
                     "default of transformers 5.19's Gemma3TextConfig")) << e;
}

TEST(HfClassDefaults, TheDefaultsFileMissingOrMalformedIsAClearError) {
  // The table built in parses and has the Gemma entries.
  const HfClassDefaults& built_in = hf_class_defaults();
  for (const char* mt : {"gemma3_text", "gemma2", "gemma3", "gemma", "mistral", "llama"})
    EXPECT_TRUE(built_in.model_types.contains(mt)) << mt;
  EXPECT_EQ(built_in.model_types["gemma3"]["text_config"]["model_type"], "gemma3_text");
  const std::string missing = error_of([] { read_hf_class_defaults("/no/such/hf-class-defaults.json"); });
  EXPECT_TRUE(test::has(missing, "class defaults /no/such/hf-class-defaults.json: no such file")) << missing;
  const std::string not_json = error_of([] { parse_hf_class_defaults("{\"model_types\": {", "d.json"); });
  EXPECT_TRUE(test::has(not_json, "d.json: not valid JSON")) << not_json;
  const std::string no_source = error_of(
      [] { parse_hf_class_defaults(R"({"model_types": {"x": {"class": "X", "defaults": {}}}})", "d.json"); });
  EXPECT_TRUE(test::has(no_source, "d.json: model_types.x._source: missing")) << no_source;
  const std::string bad_sub = error_of([] {
    parse_hf_class_defaults(R"({"model_types": {"x": {"_source": "f.py:1", "class": "X",
        "text_config": {"model_type": "y", "fixed": true}}}})", "d.json");
  });
  EXPECT_TRUE(test::has(bad_sub, "model_types.x.text_config.model_type: 'y' is no entry")) << bad_sub;
  // $ATTNBENCH_HF_CLASS_DEFAULTS names another table: a missing or malformed one fails every config it would read.
  test::TempDir d;
  test::write_file(d.file("bad.json"), "[1]");
  const char* old = std::getenv("ATTNBENCH_HF_CLASS_DEFAULTS");
  const std::string restore = old ? old : "";
  ::setenv("ATTNBENCH_HF_CLASS_DEFAULTS", d.file("none.json").c_str(), 1);
  const std::string e1 = parse_error(config());
  ::setenv("ATTNBENCH_HF_CLASS_DEFAULTS", d.file("bad.json").c_str(), 1);
  const std::string e2 = parse_error(config());
  if (old) ::setenv("ATTNBENCH_HF_CLASS_DEFAULTS", restore.c_str(), 1); else ::unsetenv("ATTNBENCH_HF_CLASS_DEFAULTS");
  EXPECT_TRUE(test::has(e1, "none.json: no such file")) << e1;
  EXPECT_TRUE(test::has(e2, "bad.json: model_types: missing or not an object")) << e2;
  EXPECT_EQ(parse(config()).num_layers, 4);  // back on the built-in table
}

}  // namespace
}  // namespace attnbench
