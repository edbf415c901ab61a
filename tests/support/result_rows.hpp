// Result rows the tests build on: an ok row of one model shape (llama_row: the Llama-3.1-8B shape of the report
// tests on an H200; tiny_row: the tiny preset's decode case on the CPU), each test then setting the figures it
// is about.
#pragma once

#include <string>

#include "report/results_io.hpp"

namespace attnbench::test {

// The identity and shape columns of a row.
struct RowShape {
  const char* device;
  const char* model;
  int layers, batch, num_qo_heads, num_kv_heads, head_dim, page_size;
};

// Llama-3.1-8B, 6 layers, batch 64, 32 / 8 heads, head_dim 128, page 64, on an H200.
inline constexpr RowShape kLlamaShape{"NVIDIA H200", "llama-3.1-8b", 6, 64, 32, 8, 128, 64};
// The tiny preset (2 layers, 4 / 2 heads, head_dim 64) at batch 1, page 64, on the CPU.
inline constexpr RowShape kTinyShape{"cpu (2 threads)", "tiny", 2, 1, 4, 2, 64, 64};
inline constexpr const char* kTinyDecode = "decode/tiny/b=1/kv=8/p=64/bf16";

// An ok bf16 row of `shape`, seed 1, that passed its reference check (errors 1e-3); the mode is case_id's
// first part. `case_id` names the shape's model, batch and page size (and its layers where it has "/L=").
inline ResultRow shaped_row(const RowShape& shape, const std::string& case_id, const std::string& backend,
                            const std::string& timing) {
  ResultRow r;
  r.case_id = case_id;
  r.backend = backend;
  r.device = shape.device;
  r.mode = case_id.substr(0, case_id.find('/'));
  r.timing = timing;
  r.status = RowStatus::ok;
  r.model = shape.model;
  r.layers = shape.layers;
  r.batch = shape.batch;
  r.num_qo_heads = shape.num_qo_heads;
  r.num_kv_heads = shape.num_kv_heads;
  r.head_dim = shape.head_dim;
  r.page_size = shape.page_size;
  r.dtype = "bf16";
  r.seed = 1;  // an id without "/seed=" is of seed 1 (readers check the columns an id names against it)
  r.ref_max_abs_err = 1e-3;  // a pass has its figures (readers refuse ref_pass 1 beside an empty error)
  r.ref_rel_l2_err = 1e-3;
  r.ref_pass = true;
  return r;
}

inline ResultRow llama_row(const std::string& case_id, const std::string& backend, const std::string& timing) {
  return shaped_row(kLlamaShape, case_id, backend, timing);
}

// kTinyDecode (one query token, kv_len_mean 9: the 8 cached tokens and the new one), seed 1.
inline ResultRow tiny_row(const std::string& backend, const std::string& timing = "eager") {
  ResultRow r = shaped_row(kTinyShape, kTinyDecode, backend, timing);
  r.q_tokens = 1;
  r.kv_len_mean = 9;
  r.seed = 1;
  return r;
}

// The step time's p10, median and p90 (µs).
inline void set_step_us(ResultRow& r, double p10, double median, double p90) {
  r.step_p10_us = p10;
  r.step_median_us = median;
  r.step_p90_us = p90;
}

inline constexpr const char* kLlamaDecode = "decode/llama-3.1-8b/L=6/b=64/kv=4096/p=64/bf16";

// A measured llama_row of kLlamaDecode: 64 query tokens, 30 samples, the step time's median / p10 / p90, the
// constructor memory of trtllm_mha (537919492 device bytes, no pinned), reference error 1e-3, and trtllm_mha
// bit-identical to trtllm_mha_legacy.
inline ResultRow measured_row(const std::string& backend, const std::string& timing, double median, double p10,
                              double p90) {
  ResultRow r = llama_row(kLlamaDecode, backend, timing);
  r.q_tokens = 64;
  r.samples = 30;
  set_step_us(r, p10, median, p90);
  r.ctor_device_bytes = 537919492;
  r.ctor_pinned_bytes = 0;
  r.ref_max_abs_err = 1e-3;
  r.bitwise_equal_to = backend == "trtllm_mha" ? "trtllm_mha_legacy" : "";
  return r;
}

}  // namespace attnbench::test
