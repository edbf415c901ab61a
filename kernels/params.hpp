// Kernel parameter structs: plain data, the same for the CPU kernels (kernels/cpu/) and the CUDA kernels
// (kernels/cuda/), so that one backend code path drives either. Pointers are device pointers on a GPU
// device and host pointers on the CPU device. Every buffer comment gives its shape and layout.
//
// Position convention for attention (all ops): request i has q_len_i query rows and kv_len_i keys.
//   query j has absolute position  qpos = q_start_pos[i] + j   (default: kv_len_i - q_len_i + j, i.e. the
//   queries are the last q_len_i tokens of the sequence), key m has position kpos = kv_start_pos[i] + m
//   (default 0). Key m is visible to query j iff (!causal || kpos <= qpos) and
//   (window_left < 0 || kpos >= qpos - window_left). A query row with no visible key outputs zeros and
//   lse = -inf.
#pragma once

#include <cstdint>

#include "core/dtype.hpp"

namespace attnbench {

// set_kv_buffer: k_cache[out_cache_loc[t]] = k_new[t], v_cache[...] = v_new[t] for every new token t.
// With an fp8 cache (cache_fp8 = fp8_e4m3 / fp8_e5m2) each element is quantized as SGLang's fp8 write does:
// stored = fp8(k / k_scale) (round to nearest even, saturating), v likewise with v_scale
// (mem_cache/memory_pool.py set_kv_buffer: cache_k.div_(k_scale).to(dtype); the fused fp8 write of
// trtllm_mha_backend.py L1604-1629 does the same with _default_kv_scale = 1.0). Otherwise a byte copy in dtype.
// out_cache_loc == nullptr: token t goes to row t (the q cast of trtllm_mha's fp8 extend, L1757-1762);
// v_new == nullptr: K only.
struct KvWriteParams {
  const void* k_new = nullptr;                 // [num_tokens, num_kv_heads, head_dim] dtype
  const void* v_new = nullptr;                 // [num_tokens, num_kv_heads, head_dim] dtype, or nullptr
  const std::int64_t* out_cache_loc = nullptr;  // [num_tokens] slot of each new token, or nullptr (row t)
  void* k_cache = nullptr;                      // [num_slots, num_kv_heads, head_dim] one layer, NHD
  void* v_cache = nullptr;                      // [num_slots, num_kv_heads, head_dim]
  int num_tokens = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  DType dtype = DType::bf16;
  DType cache_fp8 = DType::bf16;  // fp8_e4m3 / fp8_e5m2: the cache's format; any other value: the cache is in dtype
  float k_scale = 1.0f;
  float v_scale = 1.0f;
};

// Per-request lengths and their prefix sums (SGLang does these with torch ops on the device):
//   len_i   = min(seq_lens[i] - (sub ? sub[i] : 0) + add, clamp_max if clamp_max > 0)
//   lens_out[i] = len_i, indptr_out[0] = 0, indptr_out[i+1] = indptr_out[i] + len_i,
//   start_out[i] = seq_lens[i] - (sub ? sub[i] : 0) + add - len_i   (the trimmed-away head of a window).
// Any *_out may be nullptr; seq_lens == nullptr reads as zeros (so add = 1 gives arange(batch_size + 1)).
struct LengthsParams {
  const std::int32_t* seq_lens = nullptr;  // [batch_size] or nullptr
  const std::int32_t* sub = nullptr;       // [batch_size] or nullptr
  int add = 0;
  int clamp_max = 0;
  std::int32_t* lens_out = nullptr;    // [batch_size]
  std::int32_t* indptr_out = nullptr;  // [batch_size + 1]
  std::int32_t* start_out = nullptr;   // [batch_size]
  int batch_size = 0;
};

// FlashInfer kv_indices (SGLang's create_flashinfer_kv_indices_triton):
//   kv_indices[kv_indptr[i] + j] = req_to_token[req_pool_indices[i], kv_start[i] + j]
//   for j < kv_indptr[i+1] - kv_indptr[i].
struct KvIndicesParams {
  const std::int32_t* req_to_token = nullptr;      // [pool_rows, req_to_token_stride]
  std::int64_t req_to_token_stride = 0;
  const std::int32_t* req_pool_indices = nullptr;  // [batch_size]
  const std::int32_t* kv_indptr = nullptr;         // [batch_size + 1]
  const std::int32_t* kv_start = nullptr;          // [batch_size] or nullptr (0)
  std::int32_t* kv_indices = nullptr;              // [kv_indptr[batch_size]]
  int batch_size = 0;
};

// TRTLLM page table (SGLang's build_trtllm_mha_page_table):
//   page_table[i * row_stride + p] = req_to_token[req_pool_indices[i], p * page_size] / page_size + add
//   for p < min(ceil(seq_lens[i] / page_size), max_num_pages); the rest of the row is left untouched.
//   (row_stride 0 = max_num_pages; `add` and a wider stride build the halves of fmha_v2's stacked
//   [bs, 2, max_num_pages] block table: K pages, then V pages = K pages + the pool's V offset.)
struct PageTableParams {
  const std::int32_t* req_to_token = nullptr;  // [pool_rows, req_to_token_stride]
  std::int64_t req_to_token_stride = 0;
  const std::int32_t* req_pool_indices = nullptr;  // [batch_size]
  const std::int32_t* seq_lens = nullptr;          // [batch_size] cache_seqlens
  std::int32_t* page_table = nullptr;              // [batch_size, row_stride]
  int max_num_pages = 0;
  int page_size = 0;
  int batch_size = 0;
  std::int32_t add = 0;
  std::int64_t row_stride = 0;  // 0: max_num_pages
};

// How an attention op finds key/value m of request i.
enum class KvAddressing : std::uint8_t {
  ragged,         // k/v are [total_kv, num_kv_heads, head_dim] new-token rows; row kv_indptr[i] + m
  token_indices,  // k/v are the pool [num_slots, num_kv_heads, head_dim]; slot kv_indices[kv_indptr[i] + m]
  block_table,    // pool viewed as HND pages [num_pages, num_kv_heads, page_size, head_dim] of NHD storage:
                  // slot page_table[i, m / page_size] * page_size + m % page_size, m < kv_lens[i]
};

// One attention op over a batch of requests (see the position convention at the top of this file).
struct AttentionParams {
  const void* q = nullptr;                  // [total_q, num_qo_heads, head_dim]
  void* o = nullptr;                        // [total_q, num_qo_heads, head_dim], dtype
  float* lse = nullptr;                     // [total_q, num_qo_heads] natural-log sum of exp(scaled logits), or nullptr
  const std::int32_t* qo_indptr = nullptr;  // [batch_size + 1]; nullptr: q_len_per_req rows per request
  int q_len_per_req = 1;

  KvAddressing addressing = KvAddressing::token_indices;
  const void* k = nullptr;  // ragged: [total_kv, Hkv, D]; otherwise the layer's pool [num_slots, Hkv, D]
  const void* v = nullptr;
  const std::int32_t* kv_indptr = nullptr;   // [batch_size + 1] (ragged, token_indices)
  const std::int32_t* kv_indices = nullptr;  // [kv_indptr[batch_size]] (token_indices)
  const std::int32_t* kv_lens = nullptr;     // [batch_size] (block_table: cache_seqlens)
  const std::int32_t* page_table = nullptr;  // [batch_size, page_table_stride] (block_table)
  int page_table_stride = 0;
  int page_size = 1;

  const std::int32_t* q_start_pos = nullptr;   // [batch_size] or nullptr (kv_len - q_len)
  const std::int32_t* kv_start_pos = nullptr;  // [batch_size] or nullptr (0)

  int batch_size = 0;
  int total_q = 0;     // rows of q / o
  int max_q_len = 0;   // over the batch (launch shape)
  int max_kv_len = 0;  // over the batch (launch shape)
  int num_qo_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  DType dtype = DType::bf16;  // q, o and ragged k / v

  // fp8 KV cache (--kv-cache-dtype fp8_e4m3 / fp8_e5m2): pool k / v (token_indices, block_table) are stored in
  // kv_fp8 and read as stored * k_scale / v_scale; the kernels fold the scales as SGLang's calls do
  // (FlashInfer forward(k_scale, v_scale); TRTLLM bmm1_scale = q_scale * k_scale * sm_scale, bmm2_scale = v_scale,
  // trtllm_mha_backend.py _get_bmm_scales L425-440). Any non-fp8 kv_fp8: the pool is in dtype.
  // q_fp8: q is stored in kv_fp8 too (q_scale 1.0): trtllm_mha casts q to the fp8 KV dtype outside the XQA
  // decode kernel (L1757-1762). Ragged k / v (new tokens, FlashInfer's ragged extend) stay in dtype.
  DType kv_fp8 = DType::bf16;
  float k_scale = 1.0f;
  float v_scale = 1.0f;
  bool q_fp8 = false;
  // q_through_fp16: round a bf16 q to fp16 once before the logits. The CUDA decode kernel's fp8 path runs its MMAs
  // in fp16 (kernels/cuda/decode_attention.cu, kMmaBf16) and so converts a bf16 q to fp16 once per CTA; the CPU
  // decode entry sets this where that path runs (bf16 q over an fp8 pool) so that its twin rounds q the same way.
  bool q_through_fp16 = false;

  bool causal = true;
  int window_left = -1;            // -1: no window
  float sm_scale = 1.0f;           // applied to q.k
  float logits_soft_cap = 0.0f;    // 0: none; else logits = cap * tanh(logits / cap)
  const float* sinks = nullptr;    // [num_qo_heads] attention-sink logits, or nullptr

  // Split-KV (flash-decoding): a request's keys are processed in chunks of kv_chunk_size tokens, at most
  // max_num_chunks per request (a launch bound fixed by the plan), each writing a partial state that a merge
  // combines. The chunk size is read from *kv_chunk_size_ptr when that is set (a plan rewrites it between
  // CUDA-graph replays, as FlashInfer's plan rewrites its int workspace), else from kv_chunk_size.
  // A chunk size <= 0 means no split. Scratch layout in `workspace` (split_kv_workspace_bytes gives its size):
  //   partial o float [total_q, max_num_chunks, num_qo_heads, head_dim], then lse float [total_q, max_num_chunks,
  //   num_qo_heads]. CPU kernels compute every request in one pass and ignore all of this.
  // kv_chunk_size == kSplitKvEven: every request is cut into max_num_chunks even chunks of
  // max(kMinEvenKvChunk, round_up(ceil(kv_len / max_num_chunks), 64)) keys (decided on the device from the
  // real length, so it suits CUDA graphs; how TRTLLM's multi-CTA mode sizes its sub-sequences).
  int kv_chunk_size = 0;
  const std::int32_t* kv_chunk_size_ptr = nullptr;
  int max_num_chunks = 1;
  void* workspace = nullptr;
  std::int64_t workspace_bytes = 0;
  // TRTLLM's multi-CTA mode merges the chunks' partial states inside the decode kernel, through semaphores (ints,
  // zero between launches; the kernel leaves them zero): when set, with room for one per (request, KV head,
  // 64-row group), the CUDA decode merges that way instead of launching a merge kernel (kernels/cuda/
  // decode_attention.cu merge_in_kernel). CPU kernels ignore it.
  std::int32_t* merge_semaphores = nullptr;
  std::int64_t merge_semaphore_count = 0;
};

// The storage dtype of an op's k / v and q (see kv_fp8 above).
ATTNBENCH_HD DType kv_load_dtype(const AttentionParams& p) {
  return (is_fp8(p.kv_fp8) && p.addressing != KvAddressing::ragged) ? p.kv_fp8 : p.dtype;
}
ATTNBENCH_HD DType q_load_dtype(const AttentionParams& p) {
  return (is_fp8(p.kv_fp8) && p.q_fp8) ? p.kv_fp8 : p.dtype;
}
// The scales an op applies to the logits (times sm_scale) and the output: k_scale / v_scale for fp8 pool reads.
ATTNBENCH_HD float kv_k_scale(const AttentionParams& p) { return is_fp8(kv_load_dtype(p)) ? p.k_scale : 1.0f; }
ATTNBENCH_HD float kv_v_scale(const AttentionParams& p) { return is_fp8(kv_load_dtype(p)) ? p.v_scale : 1.0f; }

inline constexpr int kSplitKvEven = -1;
inline constexpr int kMinEvenKvChunk = 256;

// Bytes of split-KV scratch an AttentionParams needs (0 without a split).
inline std::int64_t split_kv_workspace_bytes(int total_q, int max_num_chunks, int num_qo_heads, int head_dim) {
  if (max_num_chunks <= 1) return 0;
  return static_cast<std::int64_t>(total_q) * max_num_chunks * num_qo_heads * (head_dim + 1) * 4;
}

// Row gather / scatter (torch index_select / index_copy_ as SGLang uses them around TRTLLM's kernels):
//   for r < rows: dst + (dst_index ? dst_index[r] : r) * dst_row_stride
//              <- src + (src_index ? src_index[r] : r) * src_row_stride, row_bytes bytes each.
// Strides in bytes (0: row_bytes). row_bytes must be a multiple of 4; rows must not overlap.
struct CopyRowsParams {
  void* dst = nullptr;
  const void* src = nullptr;
  const std::int32_t* dst_index = nullptr;  // [rows] or nullptr
  const std::int32_t* src_index = nullptr;  // [rows] or nullptr
  std::int64_t rows = 0;
  std::int64_t row_bytes = 0;
  std::int64_t dst_row_stride = 0;
  std::int64_t src_row_stride = 0;
};

// Merge of two attention states over disjoint key sets (FlashInfer merge_state):
//   o = (o1 * exp(lse1 - m) + o2 * exp(lse2 - m)) / (exp(lse1 - m) + exp(lse2 - m)), m = max(lse1, lse2).
struct MergeStateParams {
  const void* o1 = nullptr;    // [rows, num_heads, head_dim]
  const float* lse1 = nullptr;  // [rows, num_heads]
  const void* o2 = nullptr;
  const float* lse2 = nullptr;
  void* o = nullptr;  // [rows, num_heads, head_dim]; may alias o1
  int rows = 0;
  int num_heads = 0;
  int head_dim = 0;
  DType dtype = DType::bf16;
};

}  // namespace attnbench

namespace attnbench {

// Seeded uniform fill: data[i] = lo + (hi - lo) * u(seed, i), u from a counter-based hash (kernels/random.hpp),
// rounded to dtype. The same seed gives the same values on the CPU and on the GPU.
struct FillParams {
  void* data = nullptr;  // [n] of dtype
  std::int64_t n = 0;
  DType dtype = DType::bf16;
  std::uint64_t seed = 0;
  float lo = -1.0f;
  float hi = 1.0f;
};

}  // namespace attnbench
