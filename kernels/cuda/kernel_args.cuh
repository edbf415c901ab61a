// The attention kernels' shared arguments: AttentionParams (kernels/params.hpp) reduced to device-friendly
// values (addressing as an int, the page size's shift precomputed), passed to every kernel by value.
// DecodeArgs (decode_attention.cu) and PrefillArgs (prefill_attention.cu) derive from AttentionArgs and add
// what only their kernels read; both fill the shared part through set_attention_args and find a request's
// rows and keys through request_view, so the two kernel families read q / k / v, the addressing and the
// masking parameters alike. Included by kernels/cuda/*.cu only (it has device code).
#pragma once

#include <cstdint>

#include "kernels/params.hpp"

namespace attnbench::cuda_detail {

struct AttentionArgs {
  const void* q;                   // [total_q, num_qo_heads, head_dim]
  void* o;                         // [total_q, num_qo_heads, head_dim]
  float* lse;                      // [total_q, num_qo_heads] or nullptr
  const std::int32_t* qo_indptr;   // [batch + 1] or nullptr (then q_len_per_req rows per request)
  int q_len_per_req;
  int addressing;                  // KvAddressing as int
  const void* k;                   // the KV pool (layout per addressing)
  const void* v;
  const std::int32_t* kv_indptr;   // [batch + 1] (token_indices, ragged)
  const std::int32_t* kv_indices;  // [kv_indptr[batch]] (token_indices)
  const std::int32_t* kv_lens;     // [batch] (block_table)
  const std::int32_t* page_table;  // [batch, page_table_stride] (block_table)
  int page_table_stride;
  int page_size;
  int page_shift;  // log2(page_size) when a power of two, else -1
  const std::int32_t* q_start_pos;   // [batch] or nullptr
  const std::int32_t* kv_start_pos;  // [batch] or nullptr
  int num_qo_heads;
  int num_kv_heads;
  int group;  // num_qo_heads / num_kv_heads
  bool causal;
  int window_left;
  float sm_scale;   // times k_scale for fp8 pool reads (TRTLLM's bmm1_scale)
  float out_scale;  // v_scale for fp8 pool reads (bmm2_scale), else 1
  DType q_t;        // storage dtype of q (kernels/params.hpp q_load_dtype)
  DType kv_t;       // storage dtype of k / v (kv_load_dtype)
  float soft_cap;  // 0: none
  const float* sinks;  // [num_qo_heads] or nullptr
};

// log2(page_size) when page_size is a positive power of two, else -1 (the kernels then divide).
inline int page_shift_of(int page_size) {
  if (page_size <= 0 || (page_size & (page_size - 1)) != 0) return -1;
  int shift = 0;
  while ((1 << shift) < page_size) ++shift;
  return shift;
}

// The shared fields of `a` from `p`; the derived struct's own fields are left as they are.
inline void set_attention_args(AttentionArgs& a, const AttentionParams& p) {
  a.q = p.q;
  a.o = p.o;
  a.lse = p.lse;
  a.qo_indptr = p.qo_indptr;
  a.q_len_per_req = p.q_len_per_req;
  a.addressing = static_cast<int>(p.addressing);
  a.k = p.k;
  a.v = p.v;
  a.kv_indptr = p.kv_indptr;
  a.kv_indices = p.kv_indices;
  a.kv_lens = p.kv_lens;
  a.page_table = p.page_table;
  a.page_table_stride = p.page_table_stride;
  a.page_size = p.page_size;
  a.page_shift = page_shift_of(p.page_size);
  a.q_start_pos = p.q_start_pos;
  a.kv_start_pos = p.kv_start_pos;
  a.num_qo_heads = p.num_qo_heads;
  a.num_kv_heads = p.num_kv_heads;
  a.group = p.num_qo_heads / p.num_kv_heads;
  a.causal = p.causal;
  a.window_left = p.window_left;
  a.sm_scale = p.sm_scale * kv_k_scale(p);
  a.out_scale = kv_v_scale(p);
  a.q_t = q_load_dtype(p);
  a.kv_t = kv_load_dtype(p);
  a.soft_cap = p.logits_soft_cap;
  a.sinks = p.sinks;
}

// Where request `req`'s rows and keys are: q rows [q_begin, q_begin + q_len), kv_len keys from kv_base (ragged /
// token_indices; 0 for block_table), and the positions of its first query row and first key (params.hpp:
// q_start_pos defaults to kv_len - q_len, kv_start_pos to 0).
struct RequestView {
  int q_begin, q_len, kv_len, kv_base, q_pos0, kv_pos0;
};

__device__ __forceinline__ RequestView request_view(const AttentionArgs& a, int req) {
  RequestView r;
  if (a.qo_indptr) {
    r.q_begin = a.qo_indptr[req];
    r.q_len = a.qo_indptr[req + 1] - r.q_begin;
  } else {
    r.q_begin = req * a.q_len_per_req;
    r.q_len = a.q_len_per_req;
  }
  if (a.addressing == static_cast<int>(KvAddressing::block_table)) {
    r.kv_base = 0;
    r.kv_len = a.kv_lens[req];
  } else {
    r.kv_base = a.kv_indptr[req];
    r.kv_len = a.kv_indptr[req + 1] - r.kv_base;
  }
  r.q_pos0 = a.q_start_pos ? a.q_start_pos[req] : r.kv_len - r.q_len;
  r.kv_pos0 = a.kv_start_pos ? a.kv_start_pos[req] : 0;
  return r;
}

}  // namespace attnbench::cuda_detail
