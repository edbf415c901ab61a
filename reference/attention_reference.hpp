// The reference: dense attention of one request in double precision with Eigen, on contiguous Q/K/V.
// It knows nothing about pages, indptr, block tables or backends (the runner gathers K/V by logical
// position from the pool through req_to_token): that independence is what makes it a reference.
// Checked against a naive loop and hand-computed cases by tests/reference/attention_reference_test.cpp.
#pragma once

#include <span>
#include <vector>

namespace attnbench {

struct ReferenceCase {
  int q_len = 0;
  int kv_len = 0;
  int num_qo_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int q_start_pos = 0;  // absolute position of query row 0; key m sits at position m
  bool causal = true;   // key m visible to query j iff m <= q_start_pos + j
  int window_left = -1;  // >= 0: also m >= q_start_pos + j - window_left ...
  int window_spares_from = -1;  // ... unless m >= window_spares_from (>= 0): keys the window never hides (a
                                // step's new tokens, where a backend windows only cached keys)
  double sm_scale = 1.0;
  double logits_soft_cap = 0.0;  // > 0: logits = cap * tanh(logits / cap)
  std::vector<double> sinks;     // empty or [num_qo_heads]: a logit per head joining the denominator only
};

// q: [q_len, Hq, D]; k, v: [kv_len, Hkv, D] (row-major); o: [q_len, Hq, D]; lse: [q_len, Hq] or empty
// (natural log of the sum of exp(logit), sinks included). A query with no visible key gets o = 0, lse = -inf.
// Throws std::invalid_argument on inconsistent sizes.
void reference_attention(const ReferenceCase& c, std::span<const double> q, std::span<const double> k,
                         std::span<const double> v, std::span<double> o, std::span<double> lse);

}  // namespace attnbench
