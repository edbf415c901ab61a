// An ok result row of the Llama-3.1-8B shape the report tests build on (6 layers, batch 64, 32 / 8 heads,
// head_dim 128, page 64, bf16, on an H200); each test sets the figures it is about.
#pragma once

#include <string>

#include "report/results_io.hpp"

namespace attnbench::test {

inline ResultRow llama_row(const std::string& case_id, const std::string& backend, const std::string& timing) {
  ResultRow r;
  r.case_id = case_id;
  r.backend = backend;
  r.device = "NVIDIA H200";
  r.mode = case_id.substr(0, case_id.find('/'));
  r.timing = timing;
  r.status = "ok";
  r.model = "llama-3.1-8b";
  r.layers = 6;
  r.batch = 64;
  r.num_qo_heads = 32;
  r.num_kv_heads = 8;
  r.head_dim = 128;
  r.page_size = 64;
  r.dtype = "bf16";
  r.ref_pass = true;
  return r;
}

}  // namespace attnbench::test
