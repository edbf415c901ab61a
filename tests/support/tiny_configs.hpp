// Small config.json files of the model classes whose SGLang rules the tests pin (not published shapes: those live
// in tests/data/), written into a test's temporary folder; each returns the file's path.
#pragma once

#include <string>

#include "support/test_util.hpp"

namespace attnbench::test {

// Cohere2 (Command-R7B's class): sliding_window 32 on layers 0-2 of every 4 (sliding_window_pattern 4), the window
// known to no model runner; head_dim 256 / 4 = 64 (commandr.py derives it from hidden_size).
inline std::string write_cohere2_tiny(const TempDir& d) {
  const std::string path = d.file("command-r7b-tiny.json");
  write_file(path, R"({"architectures": ["Cohere2ForCausalLM"], "num_hidden_layers": 4, "num_attention_heads": 4,
    "num_key_value_heads": 2, "hidden_size": 256, "head_dim": 64, "max_position_embeddings": 4096, "sliding_window": 32,
    "sliding_window_pattern": 4, "torch_dtype": "bfloat16"})");
  return path;
}

// Qwen2.5-VL: a multimodal class (SGLang's is_multimodal under default server args), flat config, 8 / 2 heads,
// head_dim 512 / 8 = 64.
inline std::string write_qwen25_vl_tiny(const TempDir& d) {
  const std::string path = d.file("qwen2.5-vl-tiny.json");
  write_file(path, R"({"architectures": ["Qwen2_5_VLForConditionalGeneration"], "num_hidden_layers": 2,
    "num_attention_heads": 8, "num_key_value_heads": 2, "hidden_size": 512, "max_position_embeddings": 4096,
    "torch_dtype": "bfloat16"})");
  return path;
}

}  // namespace attnbench::test
