// Model presets: per-rank heads, KV bytes per token, sliding-window layers.
#include "engine/model_config.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"

namespace attnbench {
namespace {

TEST(ModelPresets, Llama8bShapeAndKvBytesPerToken) {
  const ModelConfig m = find_model_preset("llama-3.1-8b");
  EXPECT_EQ(m.num_qo_heads(), 32);
  EXPECT_EQ(m.num_kv_heads(), 8);
  EXPECT_EQ(m.kv_bytes_per_token(), 2LL * 32 * 8 * 128 * 2);  // 131072
  EXPECT_FALSE(m.has_sliding_window());
  EXPECT_EQ(m.layer_sliding_window_size(3), -1);
}

TEST(ModelPresets, Llama70bAtTp8HasOneKvHeadPerRank) {
  const ModelConfig m = find_model_preset("llama-3.1-70b-tp8");
  EXPECT_EQ(m.num_qo_heads(), 8);
  EXPECT_EQ(m.num_kv_heads(), 1);
  EXPECT_EQ(m.num_attention_heads, 64);
}

TEST(ModelPresets, TpSplitProblemIsSglangsHeadRule) {
  ModelConfig m = find_model_preset("llama-3.1-70b-tp8");  // 64 query heads, 8 KV heads
  EXPECT_EQ(m.tp_split_problem(), "");
  m.tp_size = 16;  // 4 query heads a rank over one replicated KV head: allowed
  EXPECT_EQ(m.tp_split_problem(), "");
  m.tp_size = 3;
  EXPECT_EQ(m.tp_split_problem(), "64 attention heads are not divisible by tp 3");
  m.num_attention_heads = 12;  // 6 query heads a rank over 4 KV heads
  m.tp_size = 2;
  EXPECT_EQ(m.tp_split_problem(), "query heads per rank (6) not divisible by KV heads per rank (4)");
}

TEST(ModelPresets, GemmaWindowsFiveOfEverySixLayers) {
  const ModelConfig m = find_model_preset("gemma-3-12b");
  EXPECT_TRUE(m.has_sliding_window());
  int windowed = 0;
  for (int l = 0; l < m.num_layers; ++l) windowed += m.layer_sliding_window_size(l) == 1023;
  EXPECT_EQ(windowed, 40);
  EXPECT_EQ(m.layer_sliding_window_size(5), -1);
  EXPECT_EQ(m.layer_sliding_window_size(0), 1023);
}

TEST(ModelPresets, UnknownPresetNamesTheOptionAndTheChoices) {
  try {
    find_model_preset("gpt-9");
    FAIL();
  } catch (const InputError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("--model"), std::string::npos);
    EXPECT_NE(w.find("llama-3.1-8b"), std::string::npos);
  }
}

}  // namespace
}  // namespace attnbench
