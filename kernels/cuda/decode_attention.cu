// attention_decode on CUDA: few query rows per request (decode: 1; TRTLLM's verify: q_len_per_req up to 8).
//
// Computes, per request i, query row j and query head h (semantics: kernels/params.hpp, AttentionParams):
//   o[q_begin + j, h, :] = softmax_m(sm_scale * q . k_m (soft-capped), sink) . v_m over the visible keys m
// with the position convention of params.hpp (causal with q_start_pos / kv_start_pos, window_left, sinks in
// the denominator only, lse in natural log; a row with no visible key gives o = 0 and lse = -inf).
//   q, o  [total_q, num_qo_heads, head_dim]; rows per request: qo_indptr, else q_len_per_req
//   k, v  token_indices: the pool [num_slots, Hkv, D], slot kv_indices[kv_indptr[i] + m] (FlashInfer, page 1)
//         block_table:   the same pool as HND pages: slot page_table[i, m / page_size] * page_size + m % page_size
//         ragged:        [total_kv, Hkv, D], row kv_indptr[i] + m
//   lse   [total_q, num_qo_heads] float, optional
//   split-KV scratch in `workspace`: partial o float [total_q, max_num_chunks, Hq, D], then lse float
//         [total_q, max_num_chunks, Hq] (split_kv_workspace_bytes in params.hpp)
// CPU twin: attention_decode_cpu (kernels/cpu/attention_cpu.cpp); equal within bf16 / fp16 rounding.
// Checked by: ctest -L gpu -R DecodeAttention  (tests/gpu/decode_attention_test.cpp: both addressings, page
//             sizes 1/16/32/64/128, GQA 1/4/8, head_dim 64/128/256, bf16/fp16/fp32, windows, sinks, soft cap,
//             q_len_per_req 1/3/4/8/16, qo_indptr, split and no split, graph replay == eager, B=64 L=4096);
//             timing table: scripts/gpu_check.sh (DecodeAttentionBench).
//
// Fast path (bf16 / fp16, head_dim 64 / 128 / 256): one CTA of 4 warps per (request, KV head, row group of
// up to 64 (query row, head-in-group) pairs, KV chunk). K and V tiles of 64 keys stream through shared memory
// with 16-byte cp.async (zero-filled past the end), 2-4 stages deep (two_small_m_stages: two for at most 8 rows
// at head_dim 128 and for the wide fp8 CTAs; at 64 by the grid, two_stages_at_64; else default_stages /
// default_min_blocks: at head_dim 128 3 stages, 96 KiB, two CTAs per SM; at 256 3 stages, 192 KiB, one CTA per
// SM), XOR-swizzled so that ldmatrix is conflict-free, one barrier per tile. An fp8 pool (bf16 / fp16 model,
// e4m3 / e5m2 cache) streams its stored bytes (half the tile) and converts them in the ldmatrix fragments
// (fp8_k_lo ...), with no 16-bit copy of the tile. The tiles' page / token indices
// travel the same way, a ring of kStages index tiles in shared memory filled kStages - 1 tiles ahead: an index
// fetched one iteration ahead into registers left every tile waiting for a DRAM round trip (3.4 -> 4.1 TB/s).
// Each K/V tile is loaded ONCE for all query heads of the GQA group and all query rows of the request: those
// rows are the M rows of mma.sync m16n8k16 (bf16/fp16 in, fp32 accumulate); S = Q K^T takes K through
// ldmatrix, O += P V takes V through ldmatrix.trans, P stays in registers (the FA2 layout identity). With one
// m-tile (group * q_len <= 16) the 4 warps split each tile's four 16-key blocks; with 2 or 4 m-tiles they
// split the m-tiles. At most 8 rows (kSmallM: every decode preset) turn both products around: S^T = K Q^T (the
// keys are the 16 M rows, the query rows the 8 N columns) and O^T = V^T P^T, P^T reaching the PV MMA through
// movmatrix; no MMA row is padding. fp8 grids that fill at most half the SMs' CTA slots take CTAs of 8 warps
// over 128-key tiles (has_wide_ctas), grids of three or four waves at head_dim 128 CTAs of 1 warp over 16-key
// tiles, four times as many per SM (has_single_ctas), other grids of an even number (>= 2) of waves at head_dim 128
// / 256 CTAs of 2 warps over 32-key tiles, twice as many (has_narrow_ctas; ATTNBENCH_DECODE_WARPS=1|2|4|8 forces one).
// Online softmax in base 2, per warp; the warps' states merge through shared memory.
// Split-KV (flash-decoding): the grid has max_num_chunks CTAs per unit; each finds its key range on the device
// (fixed chunks from *kv_chunk_size_ptr or kv_chunk_size; kSplitKvEven from the real kv length), writes a
// normalised partial o and its lse, and a second kernel merges the chunks (and adds the sink), or with merge
// semaphores the chunks' last CTA (merge_in_kernel). No host sync, no allocation, grid sized from batch_size /
// heads / max_q_len / max_num_chunks only: capturable.
// Measured on the H200 (bf16, 32/8 heads, D 128; scripts/gpu_check.sh): 4.13-4.47 TB/s of KV at B*L >= 64*4k
// (0.98-1.06 of the copy bandwidth), token indices within 1% of the block table, B=1 L=32k split 2.39 TB/s.
// fp8 KV runs the MMAs in fp16 (kMmaBf16 in decode_mma_kernel: one conversion instruction per two values).
// Llama-3.1-8B, e4m3, trtllm_mha, graph (attnbench run; copy bandwidth 4.245 TB/s): with S^T = K Q^T and the
// wide CTAs (results/h200/fp8/run-2026-12-01c/) b=64 kv 4k / 16k 3.99 / 4.31 TB/s, b=256 kv 4k / 16k 4.23 / 4.37,
// b=256 kv 1k 3.66 (0.86: 3.9 lockstep waves, each opening with a page-table and a KV round trip; with the narrow
// CTAs, results/h200/fp8/narrow-ctas-2026-12-02/, 3.86-3.87 TB/s, 0.91-0.92; with the single-warp ones, one wave,
// results/h200/fp8/single-warp-2026-12-02/, 3.96 TB/s, 0.93 of that machine's 4.266), b=16 kv 16k
// 3.76 (0.89: 256 CTAs, 124 SMs with two, 8 with one); before (run-2026-12-01b/, S = Q K^T with 8 padding rows,
// 4-warp CTAs) 3.84 / 4.12, 3.97 / 3.97, 3.38 and 3.02. Head_dim 256 (Gemma-3-12B's global layer, bf16, b=16
// kv 16k, ncu): 639 -> 479 µs, DRAM 70% -> 93% of peak with S^T = K Q^T.
// Generic path (fp32, other head dims <= 512, misaligned pointers): one warp per (query row, head), online
// softmax key by key, no split. Slow; correct.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>

#include "core/dtype.hpp"
#include "kernels/cuda/fp8.cuh"
#include "core/errors.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/device_facts.cuh"
#include "kernels/cuda/device_ops.cuh"
#include "kernels/cuda/kernel_args.cuh"
#include "kernels/cuda/kernels_cuda.cuh"
#include "kernels/params.hpp"

namespace attnbench {

namespace decode_detail {

// A CTA of kW warps (4, or 8 for small grids: decode_wide_ctas) streams tiles of 16 kW keys.
constexpr int kWarps = 4;           // (the kernel's kThreads = 32 kW, kTileKeys = 16 kW keys per pipeline stage)
constexpr int kRowsPerCta = 64;     // (query row, head-in-group) pairs per CTA: up to 4 m-tiles of 16
constexpr int kGenericMaxHeadDim = 512;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// Stages of the K/V pipeline and CTAs per SM (kMinBlocks of __launch_bounds__). 16-bit KV: 32 KiB per stage at
// head_dim 128 (K + V), 3 stages = 96 KiB, two CTAs per SM; head_dim 256: 64 KiB per stage, 3 stages (192 KiB)
// and one CTA per SM, so that two tiles stay in flight (two stages at two CTAs per SM do not fit: with one
// stage in flight the KV read sat at 0.63-0.70 of the copy bandwidth on the H200; with two it reads 0.67-0.77:
// the stages were not what bounds it). fp8 KV (kFp8 = 1: e4m3, 2: e5m2): a stage holds the stored bytes, half
// the size: 4 stages of 16 KiB at head_dim 128 and three CTAs per SM, 3 stages of 32 KiB at 256 with two. On
// the H200 (Llama-3.1-8B, fp8_e4m3, kv 4096) 3 CTAs x 4 stages read 0.50-0.56 / 0.68-0.72 of the copy
// bandwidth at b = 64 / 256, 2 CTAs x 4 stages 0.56-0.60 / 0.58-0.63, 2 CTAs x 6 stages 0.57-0.59 / 0.58-0.62:
// more warps help and deeper pipelines do not, so the fp8 path is bound by the warps' latency, not the loads.
// kSmallM (transposed PV, D / 4 accumulators a thread): fp8 at head_dim 128 takes 3 stages and four CTAs per
// SM (4 x 49.75 KiB; 128 registers, 12-24 bytes spilled). With the fp16 MMAs (2026-12-01, H200, Llama-3.1-8B
// e4m3) 3 CTAs x 4 stages (134-138 registers, no spill) read 2.99 / 3.25 TB/s at b=64 kv 4k / 16k against 3.84
// / 4.12 for 4 x 3, and the same at b=256: four CTAs stay.
template <int D, int kFp8 = 0, bool kSmallM = false>
constexpr int default_stages() {
  if (kFp8 != 0) return D == 256 ? 3 : (kSmallM && D == 128 ? 3 : 4);
  return D == 64 ? 4 : 3;
}
template <int D, int kFp8 = 0, bool kSmallM = false>
constexpr int default_min_blocks() {
  if (kFp8 != 0) return D == 256 ? 2 : (kSmallM && D == 128 ? 4 : 3);
  return D == 256 ? 1 : 2;
}
// K and V stages, then a ring of kStages tiles of page / token indices ([kStages][tile keys] int32).
template <int D, int kStages, int kFp8 = 0, int kW = kWarps>
constexpr int smem_bytes() {
  constexpr int tile = 16 * kW;
  return kStages * 2 * tile * D * (kFp8 ? 1 : 2) + kStages * tile * 4;
}
// Wide CTAs (kW = 8, tiles of 128 keys) for the kSmallM fp8 kernels at head_dim <= 128 when the grid leaves
// the SMs short of warps: at most 2 CTAs of 4 warps per SM where 4 fit (TRTLLM's multi-CTA plan gives 2 x SMs
// CTAs for few (request, head) units, e.g. b=16 at 16k tokens). Three stages of 128 fp8 keys (96 KiB at head_dim
// 128) kept two 8-warp CTAs per SM: 16 warps instead of 8. Two stages (64 KiB of tiles; the final combine's 67 KiB
// sets the CTA's shared memory, the registers still two CTAs per SM) read faster: fewer bytes in flight a CTA, and
// the SMs read at nearly one rate (per-CTA trace, H100, Llama-3.1-8B e4m3 b=16 x 16k: big-CTA times 158-174 µs
// against 127-184 with three stages). H100 SXM, trtllm_mha, graph, forward µs a layer, 2 stages and the even split
// / 3 stages and the tail pieces (the default before; results/h100/wide-stages-2026-12-07/): b=16 kv 1k / 4k / 16k
// 0.976 / 0.968 / 0.962 (16k: 185.3 µs, 0.95 of the copy bandwidth); bf16 within 0.3 %. H200
// (results/h200/fp8/wide-check-2026-12-07/): 0.987 / 0.972 / 0.963 (16k: 138.1 µs, 0.91 of the copy bandwidth).
template <int D, int kFp8>
constexpr bool has_wide_ctas() { return kFp8 != 0 && D <= 128; }
// Two pipeline stages in the kSmallM kernels (launch_small_m; ATTNBENCH_DECODE_STAGES=3 takes the depths before
// 2026-12-07: three, four for the 4-warp kernel at head_dim 64): the wide CTAs (above), and every CTA shape at head
// dim 128. H100, Llama-3.1-8B, trtllm_mha, graph, two / three stages in the 4-warp, narrow and single CTAs
// (results/h100/small-m-stages-2026-12-07/x2/): fp8 b=64 and 256 0.975-0.985, bf16 b=16-256 0.986-1.000. Not at
// head_dim 256 (Gemma-3-12B bf16 b=64 1.09-1.10 slower with two); at 64 a rule on the grid (below: Llama-3.2-1B /
// GPT-OSS-20B 0.72-0.80 at b=64 but 1.02-1.08 slower at b=16).
template <int D, int kW>
constexpr bool two_small_m_stages() { return kW == 8 || D == 128; }
// The 4-warp kSmallM kernel at head_dim 64 has a two-stage instance too (has_two_stage_small_m), taken by a rule on
// the grid's CTAs an SM (two_stages_at_64): fp8 KV from kTwoStage64MinFp8 up; 16-bit KV above kTwoStage64Min16 (no
// split grid: the multi-CTA plans stop at 2 an SM) up to kTwoStage64Max16. H100, GPT-OSS-20B and Llama-3.2-1B,
// trtllm_mha, graph, kv 1k / 4k / 16k, two / four stages (results/h100/d64-stages-2026-12-07/):
// - fp8 (4 and 2 stages both leave 5 CTAs an SM, by registers): at most 2.2 CTAs an SM 1.0-1.17 slower (the deeper
//   pipeline hides more latency a CTA); 2.4 1.04-1.08 / 0.96-0.97 / 0.86; 2.7-2.9 1.00-1.07 / 0.92-0.97 / 0.85-0.87;
//   3.9-15.5 0.86-0.97 / 0.79-0.93 / 0.72-0.97. The kv length sets the crossing (short CTAs want depth), which a rule
//   on the grid cannot see: 2.5 keeps the 1k losses to b=44-48 (0-7 %) and the 4k / 16k gains from there.
// - bf16 (four stages' 65 KiB leave 3 CTAs an SM, two stages' 33 KiB 5): up to 1.94 0.99-1.07; 2.2-2.9 0.93-0.99,
//   3.9 0.76-0.83 (one wave instead of two), 7.8 0.93-0.96, 9.7 0.87-0.91, 11.6 0.98-1.01, 15.5 0.99-1.05.
template <int D, int kW>
constexpr bool has_two_stage_small_m() { return two_small_m_stages<D, kW>() || (D == 64 && kW == 4); }
inline constexpr double kTwoStage64MinFp8 = 2.5;
inline constexpr double kTwoStage64Min16 = 2.0;
inline constexpr double kTwoStage64Max16 = 10.0;
// Narrow CTAs (kW = 2, tiles of 32 keys, three stages, twice the CTAs per SM; kSmallM only): the same warps per SM
// in twice as many CTAs, so half the per-CTA prologue (page indices, first tiles) and combine per (request, KV
// head). They pay where the 4-warp grid needs an even number (>= 2) of waves of the SMs' CTA slots: the narrow grid
// then takes half as many, each as full; with an odd number its last wave is half empty, and within one wave it
// leaves the SMs short of warps. H200, Llama-3.1-8B decode, trtllm_mha, graph, forward us per layer narrow / 4-warp
// (results/h200/fp8/narrow-ctas-2026-12-02/): fp8 e4m3 (528 slots) 1.21 waves 0.75, 1.52 0.89-0.92, 1.94
// 0.93-0.97, 3.88 (b=256 kv 1k: 147.1 -> 140.3 us, 0.92 of the copy bandwidth) 0.95-0.99; 1.0 1.04-1.11, 2.42
// 1.17-1.19, 2.91 1.08-1.17; bf16 (264 slots) 1.21-1.94 waves 0.79-1.00, 7.76 0.96-0.98; 0.73-1.0 1.10-1.50.
// Gemma-3-12B (head_dim 256, bf16, the trtllm_mha plan): b=16 (2 chunks a request, 2 waves) 0.90-0.99, b=64 / 256
// (3.9 / 15.5 waves) 0.94-1.00, but b=1 (33 chunks of at most ~500 keys, 2 waves) 1.09-1.21: a CTA of a few tiles
// is latency-bound, and narrow CTAs run its 16-key blocks on half the warps, one after another. The rule
// (small_m_warps) takes them at head_dim 128 and 256, where they were measured, and only where the plan cuts a
// request into at most kNarrowMaxChunks chunks (at head_dim 128 the single-warp CTAs below take the grids of four
// waves); ATTNBENCH_DECODE_WARPS=2 forces them anywhere.
template <int D>
constexpr bool has_narrow_ctas() { return D == 128 || D == 256; }
inline constexpr int kNarrowMaxChunks = 2;
// Single-warp CTAs (kW = 1, tiles of 16 keys, three stages, four times the 4-warp CTAs per SM; kSmallM only,
// head_dim 128): the same warps per SM again, each its own CTA (no barrier couples it to another warp), so a grid of
// two to four 4-warp waves runs as one. They pay where that one wave is more than half full: H200, Llama-3.1-8B
// decode, trtllm_mha, graph, forward us per layer single / the best other shape, kv 1k / 4k
// (results/h200/fp8/single-warp-2026-12-02/): fp8 e4m3 (528 4-warp slots) at 2.42 4-warp waves 0.866 / 0.895
// (b=160), 2.91 0.907 / 0.963, 3.39 0.920 / 0.927, 3.88 (b=256) 0.954 / 0.972; bf16 (264 slots) 2.91 (b=96) 0.936 /
// 0.992, 3.88 0.975 / 0.995; but at 1.94 waves (half a single-warp wave) fp8 0.993 / 1.015 and bf16 1.065 / 1.095,
// and at 5.8 waves (bf16 b=192) 1.100 / 1.147. small_m_warps takes them where the 4-warp grid needs three or four
// waves.
template <int D>
constexpr bool has_single_ctas() { return D == 128; }


// AttentionParams reduced to what the kernels read: the shared part (kernels/cuda/kernel_args.cuh), then the
// launch shape and the split-KV state only the decode kernels read.
struct DecodeArgs : cuda_detail::AttentionArgs {
  int batch_size;
  int total_q;
  int max_q_len;  // rows per request the grid covers
  int row_groups;  // ceil(group * max_q_len / kRowsPerCta)
  // split-KV
  bool split;
  int num_chunks;  // CTAs per (request, KV head, row group): max_num_chunks when split, else 1
  int kv_chunk_size;
  const std::int32_t* kv_chunk_size_ptr;
  float* part_o;    // [total_q, num_chunks, Hq, D]
  float* part_lse;  // [total_q, num_chunks, Hq]
  int* semaphores;  // [batch, Hkv, row_groups], zero between launches: the merge in the kernel (XQA), or nullptr
};

// Visible keys [lo, hi) of query row j (params.hpp: causal and window; hi >= lo).
__device__ __forceinline__ void visible_keys(const DecodeArgs& a, const cuda_detail::RequestView& r, int j, int& lo, int& hi) {
  const int qpos = r.q_pos0 + j;
  lo = 0;
  hi = r.kv_len;
  if (a.causal) hi = min(hi, qpos - r.kv_pos0 + 1);
  if (a.window_left >= 0) lo = max(lo, qpos - a.window_left - r.kv_pos0);
  hi = max(hi, lo);
}

// Row of the K/V tensors (in units of [Hkv, D]) holding key m of the request.
__device__ __forceinline__ std::int64_t kv_slot(const DecodeArgs& a, int req, int kv_base, int m) {
  if (a.addressing == static_cast<int>(KvAddressing::block_table)) {
    const std::int32_t* row = a.page_table + static_cast<std::int64_t>(req) * a.page_table_stride;
    if (a.page_shift >= 0)
      return (static_cast<std::int64_t>(row[m >> a.page_shift]) << a.page_shift) + (m & (a.page_size - 1));
    return static_cast<std::int64_t>(row[m / a.page_size]) * a.page_size + m % a.page_size;
  }
  if (a.addressing == static_cast<int>(KvAddressing::token_indices)) return a.kv_indices[kv_base + m];
  return static_cast<std::int64_t>(kv_base) + m;  // ragged
}

// Keys [b, e) of KV chunk `chunk` (params.hpp, split-KV). Without a split, chunk 0 takes every key.
// The even split (TRTLLM's multi-CTA mode) divides only the keys some row of the request can see,
// [span_lo, span_hi): with a sliding window over a long sequence every chunk then holds window keys, instead
// of all but the last few chunks covering masked keys only.
__device__ __forceinline__ void chunk_range(const DecodeArgs& a, int kv_len, int span_lo, int span_hi, int chunk, int& b,
                                            int& e) {
  if (!a.split) {
    b = 0;
    e = kv_len;
    return;
  }
  int cs = a.kv_chunk_size_ptr ? *a.kv_chunk_size_ptr : a.kv_chunk_size;
  if (cs == kSplitKvEven) {
    const int span = max(0, span_hi - span_lo);
    const int even = (span + a.num_chunks - 1) / a.num_chunks;
    cs = max(kMinEvenKvChunk, (even + 63) / 64 * 64);
    const std::int64_t b64 = span_lo + static_cast<std::int64_t>(chunk) * cs;
    b = static_cast<int>(b64 < span_hi ? b64 : span_hi);
    e = chunk == a.num_chunks - 1 ? span_hi : static_cast<int>(b64 + cs < span_hi ? b64 + cs : span_hi);
    if (e < b) e = b;
    return;
  }
  if (cs <= 0) {  // the plan chose no split this time: chunk 0 takes every key, the others none
    b = chunk == 0 ? 0 : kv_len;
    e = kv_len;
    return;
  }
  const std::int64_t b64 = static_cast<std::int64_t>(chunk) * cs;
  b = static_cast<int>(b64 < kv_len ? b64 : kv_len);
  // The last chunk takes any rest, should a plan's chunk size leave more keys than max_num_chunks chunks hold.
  e = chunk == a.num_chunks - 1 ? kv_len : static_cast<int>(b64 + cs < kv_len ? b64 + cs : kv_len);
}

// ---- PTX helpers ---------------------------------------------------------------------------------------

using cuda_detail::smem_addr;  // kernels/cuda/device_ops.cuh

// 16 bytes global -> shared from address base + index * scale (index: a KV slot, from the ring's page or token
// indices), bypassing L1; zero-fills when !valid (nothing is read then). The multiply-add sits inside the
// volatile asm, so the address arithmetic stays where the copy is issued.
__device__ __forceinline__ void cp_async16_indexed(std::uint32_t dst, const void* base, std::int32_t index,
                                                   std::int32_t scale, bool valid) {
  const int n = valid ? 16 : 0;
  asm volatile(
      "{\n .reg .u64 addr;\n mad.wide.s32 addr, %1, %2, %3;\n cp.async.cg.shared.global [%0], [addr], 16, %4;\n}\n" ::"r"(
          dst),
      "r"(index), "r"(scale), "l"(base), "r"(n)
      : "memory");
}
// 4 bytes global -> shared (an index), through L1.
__device__ __forceinline__ void cp_async4(std::uint32_t dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

// The 8 x 8 b16 matrix whose fragment this thread holds (row lane / 4, columns 2 (lane % 4), + 1), transposed:
// the same fragment of the transpose.
__device__ __forceinline__ std::uint32_t movmatrix_trans(std::uint32_t x) {
  std::uint32_t r;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(r) : "r"(x));
  return r;
}

// c += a * b, m16n8k16, row.col, fp32 accumulate.
template <bool kBf16>
__device__ __forceinline__ void mma16816(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                         std::uint32_t b1) {
  if constexpr (kBf16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Two floats -> one 32-bit word of two 16-bit values (device_ops.cuh's pack2), keyed on the dtype flag the
// kernels carry.
template <bool kBf16>
__device__ __forceinline__ std::uint32_t pack2(float lo, float hi) {
  return cuda_detail::pack2<std::conditional_t<kBf16, __nv_bfloat16, __half>>(lo, hi);
}

// fp8 -> fp16 in the MMA's fragments (over an fp8 pool the MMAs run in fp16: kMmaBf16 in decode_mma_kernel). An
// ldmatrix of an fp8 tile viewed as b16 hands each thread 4 stored bytes per register; each conversion below
// turns two of them into one fp16x2 fragment word, in one instruction:
//   e4m3: the hardware conversion cvt.rn.f16x2.e4m3x2 (exact: every e4m3 value is an fp16), of the register's
//         low or high half (the lower byte becomes the lower fp16);
//   e5m2: a byte permute that puts each code in the high byte of an fp16 with zeros below (an e5m2 code is the
//         high byte of the fp16 of the same value).
// Converting to bf16 instead took a permute, a shift, a mask and a multiply per two values and left the kernel
// issue-bound (results/h200/fp8/README.md, third run). NaN codes, which the pool's saturating stores (fp8.cuh,
// __NV_SATFINITE) never write, stay NaN.
// prmt.b32 with a zero second operand (selector nibble 4 = a zero byte), written as PTX.
template <std::uint32_t kSel>
__device__ __forceinline__ std::uint32_t prmt(std::uint32_t x) {
  std::uint32_t r;
  asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(r) : "r"(x), "r"(0u), "n"(kSel));
  return r;
}
template <int kHalf>
__device__ __forceinline__ std::uint32_t e4m3x2_to_f16x2(std::uint32_t r) {
  std::uint32_t out;
  if constexpr (kHalf == 0) {
    asm("{\n .reg .b16 lo, hi;\n mov.b32 {lo, hi}, %1;\n cvt.rn.f16x2.e4m3x2 %0, lo;\n}\n" : "=r"(out) : "r"(r));
  } else {
    asm("{\n .reg .b16 lo, hi;\n mov.b32 {lo, hi}, %1;\n cvt.rn.f16x2.e4m3x2 %0, hi;\n}\n" : "=r"(out) : "r"(r));
  }
  return out;
}
// K fragments: bytes 0,1 (head_dim columns 4t, 4t+1 of a 16-column piece) and bytes 2,3 (4t+2, 4t+3).
template <int kFp8>
__device__ __forceinline__ std::uint32_t fp8_k_lo(std::uint32_t r) {
  if constexpr (kFp8 == 1) return e4m3x2_to_f16x2<0>(r);
  return prmt<0x1404u>(r);
}
template <int kFp8>
__device__ __forceinline__ std::uint32_t fp8_k_hi(std::uint32_t r) {
  if constexpr (kFp8 == 1) return e4m3x2_to_f16x2<1>(r);
  return prmt<0x3424u>(r);
}
// V fragments (ldmatrix.trans): bytes 0,2 (keys 2t, 2t+1 of column 2g) and bytes 1,3 (column 2g + 1). For e4m3
// one byte permute first puts them in the two halves (bytes 0, 2 | 1, 3; the even and odd fragments' permutes
// of one word are one instruction after common-subexpression elimination).
template <int kFp8>
__device__ __forceinline__ std::uint32_t fp8_v_even(std::uint32_t r) {
  if constexpr (kFp8 == 1) return e4m3x2_to_f16x2<0>(prmt<0x3120u>(r));
  return prmt<0x2404u>(r);
}
template <int kFp8>
__device__ __forceinline__ std::uint32_t fp8_v_odd(std::uint32_t r) {
  if constexpr (kFp8 == 1) return e4m3x2_to_f16x2<1>(prmt<0x3120u>(r));
  return prmt<0x3414u>(r);
}
// bf16x2 -> fp16x2 (q of a bf16 model over an fp8 pool, once per CTA): exact for |x| in [2^-14, 65504] (bf16's 8
// significant bits fit fp16's 11), rounded to nearest below 2^-14 (fp16 subnormals, steps of 2^-24); |x| >= 65520
// becomes inf and NaN stays NaN. The CPU twin rounds q the same way (attention_cpu.cpp, q_through_fp16).
__device__ __forceinline__ std::uint32_t bf16x2_to_f16x2(std::uint32_t w) {
  const float lo = __uint_as_float(w << 16), hi = __uint_as_float(w & 0xffff0000u);
  std::uint32_t out;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(out) : "f"(hi), "f"(lo));
  return out;
}

// 16-byte piece p of row `row` of a swizzled stage: where it lies, so that the 8 rows an ldmatrix reads at one
// piece fall in 8 different bank groups. Rows of 8 or more pieces: p ^ (row & 7); rows of 4 pieces (fp8 at
// head_dim 64, 64-byte rows, two rows per 128 bytes): p ^ ((row >> 1) & 3).
template <int kPieces>
__device__ __forceinline__ int swz(int p, int row) {
  if constexpr (kPieces >= 8) {
    return p ^ (row & 7);
  } else {
    static_assert(kPieces == 4, "swizzle of 4 or >= 8 pieces per row");
    return p ^ ((row >> 1) & 3);
  }
}

// ---- XQA's multi-block reduction, inside the kernel ------------------------------------------------------

// TRTLLM's XQA reduces a request's multi-CTA partial states in the decode kernel itself: the CTAs of one
// (request, KV head) count themselves in a semaphore in the workspace's first 8 MiB (0.5.23 SM90 / SM120:
// `semaphore = workspace_u8[:8 MiB]`, xqa_batch_decode_with_kv_cache L4719-4721; zero-initialised, T1) and the last
// to arrive merges every chunk's partial state and writes the output; no merge kernel runs
// ([unverified]: the exact arithmetic and work split of XQA's reduction). With DecodeArgs::semaphores set (the
// trtllm_mha backend, at most kMaxInKernelMergeChunks chunks), the kernel does the same: each CTA has stored its
// partials (part_o, part_lse), makes them visible (fence), counts itself, and the last CTA of the group merges
// them for its rows (every chunk, in chunk order: the result does not depend on which CTA is last) and resets the
// semaphore to 0 for the next launch. FlashInfer's split-KV decode merges in a separate kernel
// (decode_merge_kernel), which the flashinfer backend keeps.
// At most 4 chunks: the merging CTA issues every chunk's loads at once (lse and partial o: one L2 round trip;
// results/h200/fp8/merge-parallel-loads-2026-12-02/); on the H200 a serial merge of 16 chunks (Llama-3.1-70B TP8,
// b = 16: one KV head per rank) made that layer 5-10 % slower than the merge kernel (run-to-run noise ~3 %), while
// 2 chunks (Llama-3.1-8B, b = 16) gained up to 5 % (results/h200/fp8/run-2026-12-01f-merge-in-kernel/).
inline constexpr int kMaxInKernelMergeChunks = 4;

template <bool kBf16, int D, int kThreads>
__device__ __forceinline__ void merge_in_kernel(const DecodeArgs& a, int req, int kvh, int rg,
                                             const cuda_detail::RequestView& ri, int row0, int rows_valid) {
  __shared__ int last;
  const int sem = (req * a.num_kv_heads + kvh) * a.row_groups + rg;
  __threadfence();  // this CTA's partial states are visible before it is counted
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(a.semaphores + sem, 1) == a.num_chunks - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();  // the other CTAs' partials: read past L1 below (__ldcg)
  const int C = a.num_chunks, Hq = a.num_qo_heads, G = a.group;
  constexpr int kQuads = D / 4;  // float4 pieces of a row
  for (int item = threadIdx.x; item < rows_valid * kQuads; item += kThreads) {
    const int r = item / kQuads, d0 = (item % kQuads) * 4;
    const int R = row0 + r, head = kvh * G + R % G;
    const std::int64_t qrow = ri.q_begin + R / G;
    const float* lse = a.part_lse + qrow * C * Hq + head;  // chunk c at lse[c * Hq]
    const float* src = a.part_o + (qrow * C * Hq + head) * D + d0;
    constexpr int kC = kMaxInKernelMergeChunks;
    // Every chunk's lse and partial o in one round trip: each chunk's CTA wrote both before it was counted (an
    // empty chunk writes lse = -inf and o = 0), so the o loads need not wait for the lse; a chunk whose lse is
    // -inf is skipped below whatever its o holds.
    float l[kC];
    float4 u[kC];
#pragma unroll
    for (int c = 0; c < kC; ++c) {
      l[c] = c < C ? __ldcg(lse + static_cast<std::int64_t>(c) * Hq) : -INFINITY;
      u[c] = c < C ? __ldcg(reinterpret_cast<const float4*>(src + static_cast<std::int64_t>(c) * Hq * D))
                   : make_float4(0.f, 0.f, 0.f, 0.f);
    }
    float M = a.sinks ? a.sinks[head] : -INFINITY;
#pragma unroll
    for (int c = 0; c < kC; ++c) M = fmaxf(M, l[c]);
    auto* out = static_cast<std::uint16_t*>(a.o) + (qrow * Hq + head) * D + d0;
    if (M == -INFINITY) {  // nothing visible, no sink
      *reinterpret_cast<uint2*>(out) = make_uint2(0u, 0u);
      if (d0 == 0 && a.lse) a.lse[qrow * Hq + head] = -INFINITY;
      continue;
    }
    float L = a.sinks ? expf(a.sinks[head] - M) : 0.0f;
    float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int c = 0; c < kC; ++c) {  // in chunk order
      if (l[c] == -INFINITY) continue;
      const float w = expf(l[c] - M);
      L += w;
      s.x += w * u[c].x;
      s.y += w * u[c].y;
      s.z += w * u[c].z;
      s.w += w * u[c].w;
    }
    const float inv = 1.0f / L;
    uint2 packed;
    packed.x = pack2<kBf16>(s.x * inv, s.y * inv);
    packed.y = pack2<kBf16>(s.z * inv, s.w * inv);
    *reinterpret_cast<uint2*>(out) = packed;
    if (d0 == 0 && a.lse) a.lse[qrow * Hq + head] = M + logf(L);
  }
  if (threadIdx.x == 0) a.semaphores[sem] = 0;  // every CTA of the group has counted: ready for the next launch
}

// ---- fast path ---------------------------------------------------------------------------------------

// kFp8 = 0: K / V in the model's 16-bit dtype, copied into the swizzled stages and read by ldmatrix directly.
// kFp8 = 1 / 2 (e4m3 / e5m2 pool): the same cp.async pipeline moves the stored fp8 bytes into swizzled stages
// of half the size, and the MMA reads them as they are: ldmatrix (b16 view) gives each thread 4 fp8 values per
// register, converted into the fragments in registers (fp8_k_lo ...). K: a register holds head_dim
// columns 4t .. 4t+3 of one key; the k index of the QK^T MMA is permuted within each 16 columns (k 2t, 2t+1 <->
// columns 4t, 4t+1; k 2t+8, 2t+9 <-> 4t+2, 4t+3), and Q's A fragments are loaded with the same permutation, so
// the dot products are unchanged. V: ldmatrix.trans gives keys 2t, 2t+1 of columns 2g and 2g+1; the two are
// split into two n8 tiles (even and odd columns of a 16-column piece), whose outputs are put back in order at
// the final combine. k_scale is folded into the logit scale and v_scale into the output (AttentionArgs
// sm_scale / out_scale): no per-element scaling.
// kSmallM (group * q_len <= 8: every decode preset): S^T = K Q^T instead of S = Q K^T, and O^T = V^T P^T
// instead of O = P V. S^T's M rows are 16 keys and its 8 N columns the query rows (q row g is thread (g, t)'s B
// fragment, D / 8 registers), so a thread's scores are (key g | g + 8) x (query row 2t | 2t + 1): each row's max
// is reduced over the 8 lanes of one t, and the rescale factors of the O^T accumulators (whose columns are the
// same query rows) are the thread's own. P^T's B fragment (query row g; keys 2t, 2t + 1 | + 8) is S^T's C
// fragment packed as two 8 x 8 b16 matrices and transposed by movmatrix. The M rows of the PV MMA
// become 16 head_dim columns and its 8 N columns the query rows, so the MMA wastes no rows on padding: half the
// PV MMAs and half the accumulator registers (D / 4 floats a thread), which lets more CTAs stay resident. V^T's
// A fragments come from the same ldmatrix.trans as before (16-bit: matrices (keys 0-7 | 8-15) x (columns
// 16j + 0-7 | 8-15); fp8: the even / odd column words become A rows g / g + 8). (Before S^T, S = Q K^T ran 8
// padding rows in every QK^T MMA, held q in twice the registers and spilled 24 bytes in the fp8 kernel.)
template <bool kBf16, int D, int kStages, int kMinBlocks, int kFp8, bool kSmallM, int kW = kWarps>
__global__ void __launch_bounds__(32 * kW, kMinBlocks) decode_mma_kernel(const DecodeArgs a) {
  static_assert(kW == kWarps || kSmallM, "wide CTAs only with kSmallM (every warp its own 16 keys)");
  constexpr int kWarps = kW;                // (shadow the namespace's 4-warp shape)
  constexpr int kThreads = 32 * kW;
  constexpr int kTileKeys = 16 * kW;
  constexpr int kElem = kFp8 ? 1 : 2;                     // bytes per stored K / V element
  constexpr int kLdRowBytes = D * kElem;                  // one stored K or V row (a stage row)
  constexpr int kLdPieces = kLdRowBytes / 16;             // 16-byte copies of one stored row
  constexpr int kPiecesPerRow = D / 8;                    // 16-byte pieces of one 16-bit (output) row
  constexpr int kRowStep = kThreads / kLdPieces;          // rows the CTA covers in one pass
  constexpr int kRowsPerThread = kTileKeys / kRowStep;    // rows each thread copies per tile
  constexpr int kStageBytes = kTileKeys * kLdRowBytes;    // one of K or V, as stored
  constexpr int kKSteps = D / 16;                         // mma k-steps over head_dim
  constexpr int kNTiles = D / 8;                          // n8 tiles of the output
  constexpr int kOStride = D + 4;                         // fp32 row stride of the final combine
  static_assert(kThreads % kLdPieces == 0 && kTileKeys % kRowStep == 0, "tile shape");
  // fp8: two independent QK^T accumulators (even and odd k-steps; one ldmatrix serves both), which halves the
  // MMA dependency chain. (Not for 16-bit KV: at head_dim 256 the 8 extra registers spill.)
  constexpr bool kTwoAcc = kFp8 != 0;
  // The MMAs' input type. An fp8 pool runs them in fp16 whatever the model dtype: e4m3 and e5m2 codes convert
  // to fp16 exactly in one instruction per two values (e4m3x2_to_f16x2; e5m2: a byte move), where bf16 takes
  // four; q is converted once (bf16x2_to_f16x2) and P (in [0, 1]) is packed as fp16, which
  // keeps 3 more bits of it than bf16. On the H200 the bf16 conversions made the fp8 decode issue-bound
  // (ncu, b=256 kv=16384 e4m3: 64% of issue slots busy, the integer pipe the busiest, DRAM at 73%).
  // Outputs keep the model's dtype.
  constexpr bool kMmaBf16 = kBf16 && kFp8 == 0;

  extern __shared__ __align__(128) unsigned char smem[];
  const std::uint32_t smem_base = smem_addr(smem);

  int bid = blockIdx.x;
  const int chunk = bid % a.num_chunks;
  bid /= a.num_chunks;
  const int rg = bid % a.row_groups;
  bid /= a.row_groups;
  const int kvh = bid % a.num_kv_heads;
  const int req = bid / a.num_kv_heads;

  const cuda_detail::RequestView ri = cuda_detail::request_view(a, req);
  const int G = a.group;
  const int row0 = rg * kRowsPerCta;
  const int rows_valid = min(kRowsPerCta, G * ri.q_len - row0);
  if (rows_valid <= 0) return;  // (only with qo_indptr: a request shorter than max_q_len)

  int span_lo, span_hi, unused_lo, unused_hi;  // the keys any row of the request sees
  visible_keys(a, ri, 0, span_lo, unused_hi);
  visible_keys(a, ri, ri.q_len - 1, unused_lo, span_hi);
  int cbeg, cend;
  chunk_range(a, ri.kv_len, span_lo, span_hi, chunk, cbeg, cend);
  const int j_first = row0 / G, j_last = (row0 + rows_valid - 1) / G;
  int lo_f, hi_f, lo_l, hi_l;
  visible_keys(a, ri, j_first, lo_f, hi_f);
  visible_keys(a, ri, j_last, lo_l, hi_l);
  const int kbeg = max(cbeg, lo_f);  // visible bounds are non-decreasing in j: the union is [lo_f, hi_l)
  const int kend = min(cend, hi_l);
  const int mask_lo = max(kbeg, lo_l);  // [mask_lo, mask_hi): visible to every row of the CTA
  const int mask_hi = min(kend, hi_f);
  const int num_tiles = kend > kbeg ? (kend - kbeg + kTileKeys - 1) / kTileKeys : 0;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int m_tiles = (rows_valid + 15) / 16;
  const int ks_count = m_tiles == 1 ? kWarps : (m_tiles == 2 ? 2 : 1);  // warps sharing one m-tile
  const int mt = warp / ks_count, ks = warp % ks_count;
  const bool active = mt < m_tiles;

  // This thread's two rows of scores: rows g and g + 8 of its m-tile (S = Q K^T), or with kSmallM its S^T
  // columns, query rows 2t and 2t + 1; each row's visible range clamped to the CTA's keys. Padding rows see none.
  int row_lo[2], row_hi[2];
  const int Hq = a.num_qo_heads;
  auto q_word_of = [&](int r) -> std::int64_t {  // offset of row r's q in 32-bit words, -1 for padding rows
    if (!active || r >= rows_valid) return -1;
    const int R = row0 + r;
    return (static_cast<std::int64_t>(ri.q_begin + R / G) * Hq + kvh * G + R % G) * (D / 2);
  };
#pragma unroll
  for (int x = 0; x < 2; ++x) {
    const int r = kSmallM ? 2 * t + x : mt * 16 + g + 8 * x;
    row_lo[x] = 0;
    row_hi[x] = 0;
    if (active && r < rows_valid) {
      int lo, hi;
      visible_keys(a, ri, (row0 + r) / G, lo, hi);
      row_lo[x] = max(lo, kbeg);
      row_hi[x] = min(hi, kend);
    }
  }
  // The q rows this thread loads: g and g + 8 as the A operand, or with kSmallM row g as the B operand of S^T.
  const std::int64_t q_word[2] = {q_word_of(kSmallM ? g : mt * 16 + g), kSmallM ? -1 : q_word_of(mt * 16 + g + 8)};

  // Q as A fragments, kept in registers for the whole key loop. fp8: k 2t, 2t+1 are columns 4t, 4t+1 (word
  // 2t) and k 2t+8, 2t+9 are 4t+2, 4t+3 (word 2t + 1), the permutation of the K fragments.
  // kSmallM: Q^T's B fragments of row g, {k 2t, 2t + 1; k 2t + 8, 2t + 9} per k-step (half the registers).
  constexpr int kQRegs = kSmallM ? 2 : 4;
  std::uint32_t qf[kKSteps][kQRegs];
  {
    const auto* q32 = static_cast<const std::uint32_t*>(a.q);
    const int w_lo = kFp8 ? 2 * t : t, w_hi = kFp8 ? 2 * t + 1 : 4 + t;
#pragma unroll
    for (int s = 0; s < kKSteps; ++s) {
      if constexpr (kSmallM) {
        qf[s][0] = q_word[0] >= 0 ? q32[q_word[0] + 8 * s + w_lo] : 0u;
        qf[s][1] = q_word[0] >= 0 ? q32[q_word[0] + 8 * s + w_hi] : 0u;
      } else {
        qf[s][0] = q_word[0] >= 0 ? q32[q_word[0] + 8 * s + w_lo] : 0u;
        qf[s][1] = q_word[1] >= 0 ? q32[q_word[1] + 8 * s + w_lo] : 0u;
        qf[s][2] = q_word[0] >= 0 ? q32[q_word[0] + 8 * s + w_hi] : 0u;
        qf[s][3] = q_word[1] >= 0 ? q32[q_word[1] + 8 * s + w_hi] : 0u;
      }
    }
  }

  // ---- K/V loader: thread copies piece ld_piece of rows ld_row0 + i * kRowStep --------------------------
  const int ld_piece = threadIdx.x % kLdPieces;
  const int ld_row0 = threadIdx.x / kLdPieces;
  const std::int64_t slot_stride = static_cast<std::int64_t>(a.num_kv_heads) * D;  // elements per slot
  const std::int64_t head_off_bytes = static_cast<std::int64_t>(kvh) * D * kElem + ld_piece * 16;
  const auto* kg = static_cast<const unsigned char*>(a.k);
  const auto* vg = static_cast<const unsigned char*>(a.v);
  // Page / token indices travel like K and V: tile j's 64 indices (one per key row: the page id, or the token's
  // slot) are copied into ring slot j % kStages together with K/V tile j - (kStages - 1), so they have landed
  // kStages - 1 tiles before the K/V copies that need them. Loading them one iteration ahead into registers
  // instead left each tile waiting for a DRAM round trip.
  const bool by_block = a.addressing == static_cast<int>(KvAddressing::block_table);
  const bool by_token = a.addressing == static_cast<int>(KvAddressing::token_indices);
  const std::int32_t* index_row =
      by_block ? a.page_table + static_cast<std::int64_t>(req) * a.page_table_stride
               : (by_token ? a.kv_indices + ri.kv_base : nullptr);
  auto* ring = reinterpret_cast<std::int32_t*>(smem + kStages * 2 * kStageBytes);  // [kStages][kTileKeys]
  const std::uint32_t ring_base = smem_base + kStages * 2 * kStageBytes;
  // Where the index of key row r of tile j is read from (the row clamped to the last key: always valid).
  auto index_src = [&](int tile, int r) {
    const int m = min(kbeg + tile * kTileKeys + r, kend - 1);
    const int e = !by_block ? m : (a.page_shift >= 0 ? m >> a.page_shift : m / a.page_size);
    return index_row + e;
  };
  auto copy_indices = [&](int tile) {  // asynchronous, joins the current commit group
    if (index_row != nullptr && tile < num_tiles && threadIdx.x < kTileKeys)
      cp_async4(ring_base + ((tile % kStages) * kTileKeys + threadIdx.x) * 4, index_src(tile, threadIdx.x));
  };

  // Byte address of key m's piece = base + slot * (bytes of one slot) + this thread's head and piece offset, with
  // slot the page index from the ring times page_size plus m's place in its page (block table), the token's slot
  // from the ring (token indices) or the row itself (ragged). One multiply-add per copy, in the copy's asm; the
  // K and V bases already hold the head / piece offset.
  const std::int32_t row_bytes_all = static_cast<std::int32_t>(slot_stride * kElem);  // one slot: Hkv * D elements
  const char* const k_at = reinterpret_cast<const char*>(kg) + head_off_bytes;
  const char* const v_at = reinterpret_cast<const char*>(vg) + head_off_bytes;
  // slot = (index << shift) | (m & mask): shift and mask 0 for token indices (the index is the slot), the page
  // size's for a block table whose page size is a power of two; page_mod: any other page size.
  const bool by_ring = index_row != nullptr;
  const bool page_mod = by_block && a.page_shift < 0;
  const int page_size = a.page_size;
  const int shift = by_block && !page_mod ? a.page_shift : 0;
  const int mask = by_block && !page_mod ? page_size - 1 : 0;
  auto issue = [&](int tile) {
    const std::uint32_t sk = smem_base + (tile % kStages) * 2 * kStageBytes;
    const std::uint32_t sv = sk + kStageBytes;
    const std::int32_t* ring_tile = ring + (tile % kStages) * kTileKeys;
    const int m0 = kbeg + tile * kTileKeys;
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      const int row = ld_row0 + i * kRowStep;
      const int m = m0 + row;
      const bool ok = m < kend;
      std::int32_t slot;
      if (by_ring) {
        const std::int32_t index = ring_tile[row];
        slot = page_mod ? index * page_size + m % page_size : (index << shift) | (m & mask);
      } else {
        slot = ri.kv_base + min(m, kend - 1);
      }
      const std::uint32_t off = row * kLdRowBytes + swz<kLdPieces>(ld_piece, row) * 16;  // swizzled for ldmatrix
      cp_async16_indexed(sk + off, k_at, slot, row_bytes_all, ok);
      cp_async16_indexed(sv + off, v_at, slot, row_bytes_all, ok);
    }
  };

  float m_run[2] = {-INFINITY, -INFINITY};  // running max, log2 units
  float l_run[2] = {0.0f, 0.0f};            // running sum (this thread's columns; quad-reduced at the end)
  constexpr int kAccTiles = kSmallM ? D / 16 : kNTiles;  // kSmallM: m16 tiles of head_dim columns
  float acc[kAccTiles][4];
#pragma unroll
  for (int n = 0; n < kAccTiles; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;

  const float score_scale = a.sm_scale;
  const float cap = a.soft_cap;

  // Prologue: the indices of tiles 0 .. kStages-2 synchronously, then their K/V (and the indices kStages - 1
  // tiles further) asynchronously. The barriers keep a ring slot's readers ahead of its next writer.
  if (index_row != nullptr && threadIdx.x < kTileKeys) {
    for (int s = 0; s < kStages - 1 && s < num_tiles; ++s) ring[s * kTileKeys + threadIdx.x] = *index_src(s, threadIdx.x);
  }
  __syncthreads();
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < num_tiles) issue(s);
    copy_indices(s + kStages - 1);
    cp_async_commit();
    __syncthreads();
  }
  // q of a bf16 model over an fp8 pool, to fp16 (the MMAs' type) only now: converted where it was loaded, each
  // CTA waited for its q loads before it read its page indices and issued its first K/V copies (SASS: the
  // conversions sat between them), three DRAM round trips in a row at every CTA start.
  if constexpr (kBf16 && !kMmaBf16) {
#pragma unroll
    for (int s = 0; s < kKSteps; ++s)
#pragma unroll
      for (int i = 0; i < kQRegs; ++i) qf[s][i] = bf16x2_to_f16x2(qf[s][i]);
  }

  for (int tile = 0; tile < num_tiles; ++tile) {
    cp_async_wait<kStages - 2>();  // this thread's copies of `tile` (and of the indices of tile + kStages - 1)
    __syncthreads();               // everyone's have landed; and everyone is done computing tile - 1
    {
      const int nxt = tile + kStages - 1;  // refills the stage of tile - 1
      if (nxt < num_tiles) issue(nxt);
      copy_indices(nxt + kStages - 1);  // into the ring slot that issue(nxt - 1) read last iteration
      cp_async_commit();
    }

    if (active) {
      const int k0 = kbeg + tile * kTileKeys;
      const std::uint32_t sk = smem_base + (tile % kStages) * 2 * kStageBytes;
      const std::uint32_t sv = sk + kStageBytes;
      const bool need_mask = k0 < mask_lo || k0 + kTileKeys > mask_hi;
      for (int sb = ks; sb < kTileKeys / 16; sb += ks_count) {
        const int kb = k0 + sb * 16;
        if (kb >= kend) break;
        if constexpr (kSmallM) {
          // S^T = K Q^T for 16 keys: the keys are the MMA's M rows (K's ldmatrix fragments are its A operand, no
          // padding), the query rows its 8 N columns (q row g is this thread's B fragment). Thread (g, t) holds
          // st[0..3] = (key g, row 2t), (key g, row 2t + 1), (key g + 8, row 2t), (key g + 8, row 2t + 1).
          // Matrix mi of an x4: keys (mi & 1) * 8 .. +7, piece 2c + (mi >> 1).
          float st[4] = {0.f, 0.f, 0.f, 0.f};
          float st2[4] = {0.f, 0.f, 0.f, 0.f};  // odd k-steps: two independent MMA chains
          const int mi = lane / 8;
          const int row = sb * 16 + (mi & 1) * 8 + (lane % 8);
          const std::uint32_t row_addr = sk + row * kLdRowBytes;
          if constexpr (kFp8 != 0) {
            // b[0] / b[1]: keys 0-7 / 8-15 of piece 2c (k-step 2c), b[2] / b[3] of piece 2c + 1. A register's low
            // half (head_dim columns 4t, 4t + 1) is k 2t, 2t + 1, its high half k 2t + 8, 2t + 9 (q permuted alike).
#pragma unroll
            for (int c = 0; c < kKSteps / 2; ++c) {
              std::uint32_t b[4];
              ldmatrix_x4(b, row_addr + swz<kLdPieces>(2 * c + (mi >> 1), row) * 16);
              const std::uint32_t a0[4] = {fp8_k_lo<kFp8>(b[0]), fp8_k_lo<kFp8>(b[1]), fp8_k_hi<kFp8>(b[0]),
                                           fp8_k_hi<kFp8>(b[1])};
              const std::uint32_t a1[4] = {fp8_k_lo<kFp8>(b[2]), fp8_k_lo<kFp8>(b[3]), fp8_k_hi<kFp8>(b[2]),
                                           fp8_k_hi<kFp8>(b[3])};
              mma16816<kMmaBf16>(st, a0, qf[2 * c][0], qf[2 * c][1]);
              mma16816<kMmaBf16>(st2, a1, qf[2 * c + 1][0], qf[2 * c + 1][1]);
            }
          } else {
#pragma unroll
            for (int c = 0; c < kKSteps; ++c) {
              std::uint32_t a0[4];
              ldmatrix_x4(a0, row_addr + swz<kLdPieces>(2 * c + (mi >> 1), row) * 16);
              mma16816<kMmaBf16>((c & 1) ? st2 : st, a0, qf[c][0], qf[c][1]);
            }
          }
          // Scale, soft cap, mask; base-2 logits. Element e: key g + 8 (e >> 1), query row 2t + (e & 1).
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            float x = (st[e] + st2[e]) * score_scale;
            if (cap > 0.0f) x = cap * tanhf(x / cap);
            x *= kLog2e;
            if (need_mask) {
              const int key = kb + g + 8 * (e >> 1);
              if (key < row_lo[e & 1] || key >= row_hi[e & 1]) x = -INFINITY;
            }
            st[e] = x;
          }
          // Each row's max over the 16 keys: this thread's two, then the 8 lanes of the same t.
          float mx[2] = {fmaxf(st[0], st[2]), fmaxf(st[1], st[3])};
#pragma unroll
          for (int x = 0; x < 2; ++x) {
            mx[x] = fmaxf(mx[x], __shfl_xor_sync(0xffffffffu, mx[x], 4));
            mx[x] = fmaxf(mx[x], __shfl_xor_sync(0xffffffffu, mx[x], 8));
            mx[x] = fmaxf(mx[x], __shfl_xor_sync(0xffffffffu, mx[x], 16));
          }
          float base[2], rescale[2];
#pragma unroll
          for (int x = 0; x < 2; ++x) {
            const float m_new = fmaxf(m_run[x], mx[x]);
            base[x] = m_new == -INFINITY ? 0.0f : m_new;  // a row with nothing visible yet stays at p = 0
            rescale[x] = exp2f(m_run[x] - base[x]);
            m_run[x] = m_new;
          }
#pragma unroll
          for (int e = 0; e < 4; ++e) st[e] = exp2f(st[e] - base[e & 1]);
          // This thread's share of the row sums (its keys g, g + 8; the lanes of one t are added at the end).
          l_run[0] = l_run[0] * rescale[0] + (st[0] + st[2]);
          l_run[1] = l_run[1] * rescale[1] + (st[1] + st[3]);
          // The O^T accumulators' columns are query rows 2t, 2t + 1: this thread's own rows, no shuffle. Once the
          // running max has settled it rarely moves: the multiplies by exactly 1 are skipped (bit-identical).
          if (rescale[0] != 1.0f || rescale[1] != 1.0f) {
#pragma unroll
            for (int n = 0; n < kAccTiles; ++n) {
              acc[n][0] *= rescale[0];
              acc[n][1] *= rescale[1];
              acc[n][2] *= rescale[0];
              acc[n][3] *= rescale[1];
            }
          }
          // P^T's B fragment (k = keys 2t, 2t + 1 | 2t + 8, 2t + 9 of query row g): S^T's C layout packed as two
          // 8 x 8 b16 matrices (keys 0-7 | 8-15 by query rows), each transposed in registers by movmatrix.
          const std::uint32_t pb0 = movmatrix_trans(pack2<kMmaBf16>(st[0], st[1]));
          const std::uint32_t pb1 = movmatrix_trans(pack2<kMmaBf16>(st[2], st[3]));
          const std::uint32_t rv_addr = sv + row * kLdRowBytes;
          if constexpr (kFp8 != 0) {
            // b[0] / b[1]: keys 0-7 / 8-15 of piece 2c, b[2] / b[3] of piece 2c + 1; acc[p]: columns 16p + 2g
            // (rows g of the m16 tile) and 16p + 2g + 1 (rows g + 8).
#pragma unroll
            for (int c = 0; c < D / 32; ++c) {
              std::uint32_t b[4];
              ldmatrix_x4_trans(b, rv_addr + swz<kLdPieces>(2 * c + (mi >> 1), row) * 16);
              const std::uint32_t a0[4] = {fp8_v_even<kFp8>(b[0]), fp8_v_odd<kFp8>(b[0]),
                                           fp8_v_even<kFp8>(b[1]), fp8_v_odd<kFp8>(b[1])};
              const std::uint32_t a1[4] = {fp8_v_even<kFp8>(b[2]), fp8_v_odd<kFp8>(b[2]),
                                           fp8_v_even<kFp8>(b[3]), fp8_v_odd<kFp8>(b[3])};
              mma16816<kMmaBf16>(acc[2 * c], a0, pb0, pb1);
              mma16816<kMmaBf16>(acc[2 * c + 1], a1, pb0, pb1);
            }
          } else {
            // Matrix mi: keys (mi >> 1) * 8 .. +7, columns 16j + (mi & 1) * 8 .. +7: the A fragment of V^T.
            const int vrow = sb * 16 + (mi >> 1) * 8 + (lane % 8);
            const std::uint32_t vrow_addr = sv + vrow * kLdRowBytes;
#pragma unroll
            for (int j = 0; j < D / 16; ++j) {
              std::uint32_t av[4];
              ldmatrix_x4_trans(av, vrow_addr + swz<kLdPieces>(2 * j + (mi & 1), vrow) * 16);
              mma16816<kMmaBf16>(acc[j], av, pb0, pb1);
            }
          }
        } else {
          // S = Q K^T for 16 keys: two n8 tiles.
          float s[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
          float s2[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};  // odd k-steps (kTwoAcc)
          if constexpr (kFp8 != 0) {
            // Matrix mi of the x4: keys (mi & 1) * 8 .. +7 of the block, piece 2c + (mi >> 1): b[0] / b[1] are keys
            // 0-7 / 8-15 at k-step 2c, b[2] / b[3] the same at 2c + 1.
            const int mi = lane / 8;
            const int row = sb * 16 + (mi & 1) * 8 + (lane % 8);
            const std::uint32_t row_addr = sk + row * kLdRowBytes;
#pragma unroll
            for (int c = 0; c < kKSteps / 2; ++c) {
              std::uint32_t b[4];
              ldmatrix_x4(b, row_addr + swz<kLdPieces>(2 * c + (mi >> 1), row) * 16);
              mma16816<kMmaBf16>(s[0], qf[2 * c], fp8_k_lo<kFp8>(b[0]), fp8_k_hi<kFp8>(b[0]));
              mma16816<kMmaBf16>(s[1], qf[2 * c], fp8_k_lo<kFp8>(b[1]), fp8_k_hi<kFp8>(b[1]));
              mma16816<kMmaBf16>(s2[0], qf[2 * c + 1], fp8_k_lo<kFp8>(b[2]), fp8_k_hi<kFp8>(b[2]));
              mma16816<kMmaBf16>(s2[1], qf[2 * c + 1], fp8_k_lo<kFp8>(b[3]), fp8_k_hi<kFp8>(b[3]));
            }
          } else {
            const int mi = lane / 8;
            const int row = sb * 16 + (mi / 2) * 8 + (lane % 8);
            const std::uint32_t row_addr = sk + row * kLdRowBytes;
#pragma unroll
            for (int st = 0; st < kKSteps; ++st) {
              const int piece = 2 * st + (mi % 2);
              std::uint32_t b[4];
              ldmatrix_x4(b, row_addr + ((piece ^ (row & 7)) * 16));
              if (kTwoAcc && (st & 1)) {
                mma16816<kMmaBf16>(s2[0], qf[st], b[0], b[1]);
                mma16816<kMmaBf16>(s2[1], qf[st], b[2], b[3]);
              } else {
                mma16816<kMmaBf16>(s[0], qf[st], b[0], b[1]);
                mma16816<kMmaBf16>(s[1], qf[st], b[2], b[3]);
              }
            }
          }
          if constexpr (kTwoAcc) {
#pragma unroll
            for (int n = 0; n < 2; ++n)
#pragma unroll
              for (int e = 0; e < 4; ++e) s[n][e] += s2[n][e];
          }
          // Scale, soft cap, mask; base-2 logits.
#pragma unroll
          for (int n = 0; n < 2; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              float x = s[n][e] * score_scale;
              if (cap > 0.0f) x = cap * tanhf(x / cap);
              x *= kLog2e;
              if (need_mask) {
                const int key = kb + n * 8 + 2 * t + (e & 1);
                const int rs = e >> 1;
                if (key < row_lo[rs] || key >= row_hi[rs]) x = -INFINITY;
              }
              s[n][e] = x;
            }
          }
          float mx[2] = {fmaxf(fmaxf(s[0][0], s[0][1]), fmaxf(s[1][0], s[1][1])),
                         fmaxf(fmaxf(s[0][2], s[0][3]), fmaxf(s[1][2], s[1][3]))};
#pragma unroll
          for (int x = 0; x < 2; ++x) {
            mx[x] = fmaxf(mx[x], __shfl_xor_sync(0xffffffffu, mx[x], 1));
            mx[x] = fmaxf(mx[x], __shfl_xor_sync(0xffffffffu, mx[x], 2));
          }
          float base[2], rescale[2] = {1.0f, 1.0f}, rsum[2] = {0.0f, 0.0f};
#pragma unroll
          for (int x = 0; x < 2; ++x) {
            const float m_new = fmaxf(m_run[x], mx[x]);
            base[x] = m_new == -INFINITY ? 0.0f : m_new;  // a row with nothing visible yet stays at p = 0
            rescale[x] = exp2f(m_run[x] - base[x]);
            m_run[x] = m_new;
          }
#pragma unroll
          for (int n = 0; n < 2; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              s[n][e] = exp2f(s[n][e] - base[e >> 1]);
              rsum[e >> 1] += s[n][e];
            }
          }
          l_run[0] = l_run[0] * rescale[0] + rsum[0];
          l_run[1] = l_run[1] * rescale[1] + rsum[1];
          // Once the running max has settled it rarely moves: skip the D / 2 multiplies by exactly 1 (the result
          // is bit-identical; a warp runs them when any of its threads needs them).
          if (rescale[0] != 1.0f || rescale[1] != 1.0f) {
#pragma unroll
            for (int n = 0; n < kNTiles; ++n) {
              acc[n][0] *= rescale[0];
              acc[n][1] *= rescale[0];
              acc[n][2] *= rescale[1];
              acc[n][3] *= rescale[1];
            }
          }
          // P as the A fragment of m16n8k16 (keys are k): the C layout of the two S tiles, repacked.
          const std::uint32_t pa[4] = {pack2<kMmaBf16>(s[0][0], s[0][1]), pack2<kMmaBf16>(s[0][2], s[0][3]),
                                       pack2<kMmaBf16>(s[1][0], s[1][1]), pack2<kMmaBf16>(s[1][2], s[1][3])};
          if constexpr (kFp8 != 0) {
            // Matrix mi: keys (mi & 1) * 8 .. +7, piece 2c + (mi >> 1). Piece p's even columns 16p + 2g go to
            // n-tile acc[2p], its odd columns 16p + 2g + 1 to acc[2p + 1].
            const int mi = lane / 8;
            const int row = sb * 16 + (mi & 1) * 8 + (lane % 8);
            const std::uint32_t row_addr = sv + row * kLdRowBytes;
#pragma unroll
            for (int c = 0; c < D / 32; ++c) {
              std::uint32_t b[4];
              ldmatrix_x4_trans(b, row_addr + swz<kLdPieces>(2 * c + (mi >> 1), row) * 16);
              mma16816<kMmaBf16>(acc[4 * c], pa, fp8_v_even<kFp8>(b[0]), fp8_v_even<kFp8>(b[1]));
              mma16816<kMmaBf16>(acc[4 * c + 1], pa, fp8_v_odd<kFp8>(b[0]), fp8_v_odd<kFp8>(b[1]));
              mma16816<kMmaBf16>(acc[4 * c + 2], pa, fp8_v_even<kFp8>(b[2]), fp8_v_even<kFp8>(b[3]));
              mma16816<kMmaBf16>(acc[4 * c + 3], pa, fp8_v_odd<kFp8>(b[2]), fp8_v_odd<kFp8>(b[3]));
            }
          } else {
            const int mi = lane / 8;
            const int row = sb * 16 + (mi % 2) * 8 + (lane % 8);
            const std::uint32_t row_addr = sv + row * kLdRowBytes;
#pragma unroll
            for (int dt = 0; dt < D / 16; ++dt) {
              const int piece = 2 * dt + mi / 2;
              std::uint32_t b[4];
              ldmatrix_x4_trans(b, row_addr + ((piece ^ (row & 7)) * 16));
              mma16816<kMmaBf16>(acc[2 * dt], pa, b[0], b[1]);
              mma16816<kMmaBf16>(acc[2 * dt + 1], pa, b[2], b[3]);
            }
          }
        }
      }
    }
  }
  cp_async_wait<0>();
  __syncthreads();

  // ---- merge the warps' states through shared memory, then store ----------------------------------------
#pragma unroll
  for (int x = 0; x < 2; ++x) {  // a row's sum over the lanes holding its keys: one quad, or with kSmallM one t
    if constexpr (kSmallM) {
      l_run[x] += __shfl_xor_sync(0xffffffffu, l_run[x], 4);
      l_run[x] += __shfl_xor_sync(0xffffffffu, l_run[x], 8);
      l_run[x] += __shfl_xor_sync(0xffffffffu, l_run[x], 16);
    } else {
      l_run[x] += __shfl_xor_sync(0xffffffffu, l_run[x], 1);
      l_run[x] += __shfl_xor_sync(0xffffffffu, l_run[x], 2);
    }
  }
  auto* so = reinterpret_cast<float*>(smem);          // [kWarps][16][kOStride]
  float* sm = so + kWarps * 16 * kOStride;            // [kWarps][16]
  float* sl = sm + kWarps * 16;                       // [kWarps][16]
  if (active) {
    float* ow = so + warp * 16 * kOStride;
    if constexpr (kSmallM) {  // acc[n]: (column row g | g + 8 of tile n) x (query rows 2t, 2t + 1)
      float* o0 = ow + (2 * t) * kOStride;
      float* o1 = o0 + kOStride;
#pragma unroll
      for (int n = 0; n < kAccTiles; ++n) {
        const int c_lo = kFp8 ? 16 * n + 2 * g : 16 * n + g;
        const int c_hi = kFp8 ? 16 * n + 2 * g + 1 : 16 * n + 8 + g;
        o0[c_lo] = acc[n][0];
        o1[c_lo] = acc[n][1];
        o0[c_hi] = acc[n][2];
        o1[c_hi] = acc[n][3];
      }
    } else if constexpr (kFp8 != 0) {  // acc[2p] holds columns 16p + 4t, 16p + 4t + 2; acc[2p + 1] the odd ones between
#pragma unroll
      for (int p = 0; p < kNTiles / 2; ++p) {
        const float* e = acc[2 * p];
        const float* o = acc[2 * p + 1];
        *reinterpret_cast<float4*>(ow + g * kOStride + 16 * p + 4 * t) = make_float4(e[0], o[0], e[1], o[1]);
        *reinterpret_cast<float4*>(ow + (g + 8) * kOStride + 16 * p + 4 * t) = make_float4(e[2], o[2], e[3], o[3]);
      }
    } else {
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
        *reinterpret_cast<float2*>(ow + g * kOStride + n * 8 + 2 * t) = make_float2(acc[n][0], acc[n][1]);
        *reinterpret_cast<float2*>(ow + (g + 8) * kOStride + n * 8 + 2 * t) = make_float2(acc[n][2], acc[n][3]);
      }
    }
    const int r0 = kSmallM ? 2 * t : g, r1 = kSmallM ? 2 * t + 1 : g + 8;  // this thread's two rows
    if (kSmallM ? g == 0 : t == 0) {
      sm[warp * 16 + r0] = m_run[0];
      sm[warp * 16 + r1] = m_run[1];
      sl[warp * 16 + r0] = l_run[0];
      sl[warp * 16 + r1] = l_run[1];
    }
  }
  __syncthreads();

  for (int item = threadIdx.x; item < rows_valid * kPiecesPerRow; item += kThreads) {
    const int r = item / kPiecesPerRow, piece = item % kPiecesPerRow;
    const int mtr = r / 16, rr = r % 16;
    float M = -INFINITY;
    for (int w = 0; w < ks_count; ++w) M = fmaxf(M, sm[(mtr * ks_count + w) * 16 + rr]);
    const float mb = M == -INFINITY ? 0.0f : M;
    float L = 0.0f;
    float o[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    for (int w = 0; w < ks_count; ++w) {
      const int ww = mtr * ks_count + w;
      const float f = exp2f(sm[ww * 16 + rr] - mb);
      L += sl[ww * 16 + rr] * f;
      const float* src = so + (ww * 16 + rr) * kOStride + piece * 8;
      const float4 u0 = *reinterpret_cast<const float4*>(src);
      const float4 u1 = *reinterpret_cast<const float4*>(src + 4);
      o[0] += f * u0.x;
      o[1] += f * u0.y;
      o[2] += f * u0.z;
      o[3] += f * u0.w;
      o[4] += f * u1.x;
      o[5] += f * u1.y;
      o[6] += f * u1.z;
      o[7] += f * u1.w;
    }
    const int R = row0 + r, j = R / G, h = R % G;
    const int head = kvh * G + h;
    const std::int64_t qrow = ri.q_begin + j;
    if (!a.split) {
      if (a.sinks) {  // the sink joins the denominator only
        const float sk = a.sinks[head] * kLog2e;
        const float m2 = fmaxf(M, sk);
        const float f = exp2f(M - m2);  // M = -inf: 0
        L = L * f + exp2f(sk - m2);
#pragma unroll
        for (int i = 0; i < 8; ++i) o[i] *= f;
        M = m2;
      }
      const float inv = L > 0.0f ? a.out_scale / L : 0.0f;  // out_scale: v_scale with fp8 KV, else 1
      uint4 packed;
      packed.x = pack2<kBf16>(o[0] * inv, o[1] * inv);
      packed.y = pack2<kBf16>(o[2] * inv, o[3] * inv);
      packed.z = pack2<kBf16>(o[4] * inv, o[5] * inv);
      packed.w = pack2<kBf16>(o[6] * inv, o[7] * inv);
      auto* out = static_cast<std::uint16_t*>(a.o) + (qrow * Hq + head) * D + piece * 8;
      *reinterpret_cast<uint4*>(out) = packed;
      if (piece == 0 && a.lse) a.lse[qrow * Hq + head] = L > 0.0f ? M * kLn2 + logf(L) : -INFINITY;
    } else {
      const float inv = L > 0.0f ? a.out_scale / L : 0.0f;  // the merge is linear in the partials
      const std::int64_t slot = (qrow * a.num_chunks + chunk) * Hq + head;
      float* dst = a.part_o + slot * D + piece * 8;
      *reinterpret_cast<float4*>(dst) = make_float4(o[0] * inv, o[1] * inv, o[2] * inv, o[3] * inv);
      *reinterpret_cast<float4*>(dst + 4) = make_float4(o[4] * inv, o[5] * inv, o[6] * inv, o[7] * inv);
      if (piece == 0) a.part_lse[slot] = L > 0.0f ? M * kLn2 + logf(L) : -INFINITY;
    }
  }
  if (a.split && a.semaphores != nullptr) {
    merge_in_kernel<kBf16, D, kThreads>(a, req, kvh, rg, ri, row0, rows_valid);
    return;
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // This CTA's outputs are written (with a split, its partial states; without one no dependent follows and the
  // trigger does nothing): the merge kernel, launched as a programmatic dependent (launch_merge), may start its
  // launch; its griddepcontrol.wait still waits for this grid's completion and memory flush before it reads them.
  // FlashInfer's split-KV kernels trigger at the same point, after their output writes (0.7.2
  // include/flashinfer/attention/prefill.cuh L3422 / L4350, decode.cuh likewise).
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Merge of the split-KV partial states. `W` warps share one (query row, head): each takes a contiguous range
// of its chunks, skips the chunks without a visible key (lse = -inf: their partial o is never read), keeps 8
// loads in flight, and the W partial sums are added in warp order through shared memory. W depends only on
// the chunk count, which depends only on the batch shape, so a graph replay equals the eager launch bit for
// bit. With one (request, KV head) unit TRTLLM's multi-CTA bound gives 2 x SMs = 264 chunks: one warp walking
// them serially cost ~20 µs per layer (Llama-3.1-70B at TP8, b = 1; results/h200/peers). The sink joins the
// denominator here.
inline constexpr int kMergeWarpsPerBlock = 8;

__host__ __device__ constexpr int merge_warps_per_item(int num_chunks) {
  return num_chunks >= 128 ? 8 : num_chunks >= 64 ? 4 : num_chunks >= 32 ? 2 : 1;
}

template <bool kBf16>
__global__ void __launch_bounds__(kMergeWarpsPerBlock * 32) decode_merge_kernel(const DecodeArgs a, int head_dim) {
  __shared__ float4 partial[kMergeWarpsPerBlock][32];
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // Launched as a programmatic dependent of the decode kernel (launch_merge): wait for that grid's completion
  // and memory flush before the first read of its partial states (a no-op after a plain launch).
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  const int Hq = a.num_qo_heads;
  const int C = a.num_chunks;
  const int W = merge_warps_per_item(C);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int w = warp % W;  // this warp's share of the item's chunks
  const std::int64_t n = static_cast<std::int64_t>(a.total_q) * Hq;
  const std::int64_t rh = static_cast<std::int64_t>(blockIdx.x) * (kMergeWarpsPerBlock / W) + warp / W;
  const bool active = rh < n;  // no early return: every warp reaches the barriers below
  const std::int64_t qrow = active ? rh / Hq : 0;
  const int head = active ? static_cast<int>(rh % Hq) : 0;
  const float* lse = a.part_lse + qrow * C * Hq + head;  // chunk c at lse[c * Hq]
  float M = -INFINITY;
  if (active)
    for (int c = lane; c < C; c += 32) M = fmaxf(M, lse[static_cast<std::int64_t>(c) * Hq]);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) M = fmaxf(M, __shfl_xor_sync(0xffffffffu, M, o));
  const float sink = active && a.sinks ? a.sinks[head] : -INFINITY;
  M = fmaxf(M, sink);
  auto* out = static_cast<std::uint16_t*>(a.o) + rh * head_dim;
  const bool empty = M == -INFINITY;  // nothing visible, no sink
  if (active && empty && w == 0) {
    for (int d = lane; d < head_dim; d += 32) out[d] = 0;
    if (lane == 0 && a.lse) a.lse[rh] = -INFINITY;
  }
  float L = 0.0f;
  if (active && !empty)
    for (int c = lane; c < C; c += 32) {
      const float l = lse[static_cast<std::int64_t>(c) * Hq];
      if (l != -INFINITY) L += expf(l - M);
    }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) L += __shfl_xor_sync(0xffffffffu, L, o);
  if (a.sinks) L += expf(sink - M);
  const float inv = 1.0f / L;
  const bool work = active && !empty;
  const int c_beg = static_cast<int>(static_cast<std::int64_t>(C) * w / W);
  const int c_end = static_cast<int>(static_cast<std::int64_t>(C) * (w + 1) / W);
  const std::int64_t step = static_cast<std::int64_t>(Hq) * head_dim;
  for (int d_base = 0; d_base < head_dim; d_base += 128) {  // every lane takes part in the shuffles
    const bool d_ok = d_base + lane * 4 < head_dim;
    const int d0 = d_ok ? d_base + lane * 4 : 0;
    float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int c0 = c_beg; work && c0 < c_end; c0 += 32) {
      const int c_lane = c0 + lane;
      const float l_lane = c_lane < c_end ? lse[static_cast<std::int64_t>(c_lane) * Hq] : -INFINITY;
      const float w_lane = l_lane == -INFINITY ? 0.0f : expf(l_lane - M);
      unsigned live = __ballot_sync(0xffffffffu, l_lane != -INFINITY);  // warp-uniform
      const float* src = a.part_o + ((qrow * C + c0) * Hq + head) * head_dim + d0;
      while (live) {  // up to 8 live chunks at a time, in chunk order, their loads in flight together
        int idx[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          idx[j] = live ? __ffs(live) - 1 : -1;
          live &= live ? live - 1 : 0u;
        }
        float wt[8];
        float4 u[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          wt[j] = __shfl_sync(0xffffffffu, w_lane, idx[j] & 31);
          u[j] = idx[j] >= 0 ? *reinterpret_cast<const float4*>(src + idx[j] * step) : make_float4(0.f, 0.f, 0.f, 0.f);
        }
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          if (idx[j] < 0) continue;
          s.x += wt[j] * u[j].x;
          s.y += wt[j] * u[j].y;
          s.z += wt[j] * u[j].z;
          s.w += wt[j] * u[j].w;
        }
      }
    }
    if (W > 1) {
      partial[warp][lane] = s;
      __syncthreads();
      if (w == 0) {
        for (int k = 1; k < W; ++k) {
          const float4 t = partial[warp + k][lane];
          s.x += t.x;
          s.y += t.y;
          s.z += t.z;
          s.w += t.w;
        }
      }
      __syncthreads();  // `partial` is reused by the next pass
    }
    if (work && w == 0 && d_ok) {
      uint2 packed;
      packed.x = pack2<kBf16>(s.x * inv, s.y * inv);
      packed.y = pack2<kBf16>(s.z * inv, s.w * inv);
      *reinterpret_cast<uint2*>(out + d0) = packed;
    }
  }
  if (work && w == 0 && lane == 0 && a.lse) a.lse[rh] = M + logf(L);
}

// ---- generic path ------------------------------------------------------------------------------------

constexpr int kGenericPerLane = kGenericMaxHeadDim / 32;

// One warp per (request, query row, query head); lanes over head_dim; online softmax key by key (natural
// exp, as the CPU twin). Any dtype, any head_dim <= 512, any alignment; ignores the split-KV fields.
__global__ void decode_generic_kernel(const DecodeArgs a, DType dtype, int head_dim) {
  const int Hq = a.num_qo_heads;
  const std::int64_t gw = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int head = static_cast<int>(gw % Hq);
  const std::int64_t rest = gw / Hq;
  const int j = static_cast<int>(rest % a.max_q_len);
  const std::int64_t req64 = rest / a.max_q_len;
  if (req64 >= a.batch_size) return;
  const int req = static_cast<int>(req64);
  const cuda_detail::RequestView ri = cuda_detail::request_view(a, req);
  if (j >= ri.q_len) return;
  const int kvh = head / a.group;
  const std::int64_t qrow = ri.q_begin + j;
  float qv[kGenericPerLane], acc[kGenericPerLane];
#pragma unroll
  for (int i = 0; i < kGenericPerLane; ++i) {
    const int d = lane + 32 * i;
    qv[i] = d < head_dim ? cuda_detail::load_elem(a.q, (qrow * Hq + head) * head_dim + d, a.q_t) : 0.0f;
    acc[i] = 0.0f;
  }
  int lo, hi;
  visible_keys(a, ri, j, lo, hi);
  float m = -INFINITY, l = 0.0f;
  const std::int64_t slot_stride = static_cast<std::int64_t>(a.num_kv_heads) * head_dim;
  for (int key = lo; key < hi; ++key) {
    const std::int64_t base = kv_slot(a, req, ri.kv_base, key) * slot_stride + static_cast<std::int64_t>(kvh) * head_dim;
    float dot = 0.0f;
#pragma unroll
    for (int i = 0; i < kGenericPerLane; ++i) {
      const int d = lane + 32 * i;
      if (d < head_dim) dot += qv[i] * cuda_detail::load_elem(a.k, base + d, a.kv_t);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, o);
    float x = dot * a.sm_scale;
    if (a.soft_cap > 0.0f) x = a.soft_cap * tanhf(x / a.soft_cap);
    const float m_new = fmaxf(m, x);
    const float f = expf(m - m_new);  // m = -inf: 0
    const float p = expf(x - m_new);
    l = l * f + p;
#pragma unroll
    for (int i = 0; i < kGenericPerLane; ++i) {
      const int d = lane + 32 * i;
      if (d < head_dim) acc[i] = acc[i] * f + p * cuda_detail::load_elem(a.v, base + d, a.kv_t);
    }
    m = m_new;
  }
  if (a.sinks) {
    const float sk = a.sinks[head];
    const float m_new = fmaxf(m, sk);
    const float f = expf(m - m_new);
#pragma unroll
    for (int i = 0; i < kGenericPerLane; ++i) acc[i] *= f;
    l = l * f + expf(sk - m_new);
    m = m_new;
  }
  const float inv = l > 0.0f ? a.out_scale / l : 0.0f;
#pragma unroll
  for (int i = 0; i < kGenericPerLane; ++i) {
    const int d = lane + 32 * i;
    if (d < head_dim) store_from_float(a.o, (qrow * Hq + head) * head_dim + d, dtype, acc[i] * inv);
  }
  if (lane == 0 && a.lse) a.lse[qrow * Hq + head] = l > 0.0f ? m + logf(l) : -INFINITY;
}

// ---- host side ---------------------------------------------------------------------------------------

bool aligned(const void* p, std::uintptr_t n) { return (reinterpret_cast<std::uintptr_t>(p) % n) == 0; }

template <bool kBf16, int D, int kStages, int kMinBlocks, int kFp8, bool kSmallM, int kW = kWarps>
void launch_mma(const DecodeArgs& a, unsigned grid, cudaStream_t stream) {
  // At least the final combine's [kW][16][D + 4] floats and the warps' m and l.
  constexpr int smem = std::max(smem_bytes<D, kStages, kFp8, kW>(), kW * 16 * (D + 4) * 4 + 2 * kW * 16 * 4);
  static std::once_flag attr_once;
  std::call_once(attr_once, [] {
    ATTNBENCH_CUDA_CHECK(cudaFuncSetAttribute(decode_mma_kernel<kBf16, D, kStages, kMinBlocks, kFp8, kSmallM, kW>,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  });
  decode_mma_kernel<kBf16, D, kStages, kMinBlocks, kFp8, kSmallM, kW><<<grid, 32 * kW, smem, stream>>>(a);
  ATTNBENCH_CUDA_CHECK_LAUNCH();
}

// ATTNBENCH_DECODE_WARPS=1, 2, 4 or 8 forces the CTA shape where it is compiled (the GPU tests run each); unset or
// anything else: the grid rule of small_m_warps.
int forced_decode_warps() {
  const char* e = std::getenv("ATTNBENCH_DECODE_WARPS");
  if (e == nullptr) return 0;
  const std::string v(e);
  for (int w : {1, 2, 4, 8})
    if (v == std::to_string(w)) return w;
  return 0;
}

// The current device's facts (cuda_detail::current_device_facts: asked once per device); no device answering is
// a DeviceError, as the driver query it replaces was.
const cuda_detail::DeviceFacts& device_facts() {
  const cuda_detail::DeviceFacts* f = cuda_detail::current_device_facts();
  if (f == nullptr)
    throw DeviceError("attention_decode: the current CUDA device did not answer its attribute queries", false);
  return *f;
}
int sm_count() { return device_facts().sms; }

// ATTNBENCH_DECODE_STAGES (launch_small_m; an A/B knob): 3, the kSmallM kernels' pipeline depths before 2026-12-07
// everywhere; 2, two stages in every kSmallM kernel that has a two-stage instance; else (0) the rules.
int forced_small_m_stages() {
  const char* e = std::getenv("ATTNBENCH_DECODE_STAGES");
  if (e == nullptr) return 0;
  const std::string v(e);
  return v == "3" ? 3 : v == "2" ? 2 : 0;
}

// FlashInfer 0.7.2 launches its kernels with programmatic dependent launch where the device supports it
// (`enable_pdl=None` -> `device_support_pdl`: compute capability >= 9, flashinfer/utils.py L868-872), its split-KV
// merge among them (VariableLengthMergeStates, include/flashinfer/attention/cascade.cuh L695-740: the
// cudaLaunchAttributeProgrammaticStreamSerialization attribute, griddepcontrol.wait first in the kernel). The
// flashinfer backend's merge is launched so (the decode kernel triggers after its partial-state writes), which
// lets the merge's launch overlap the decode grid's tail. ATTNBENCH_DECODE_PDL=0 launches it plainly (an A/B knob).
bool merge_pdl() {
  const char* e = std::getenv("ATTNBENCH_DECODE_PDL");
  if (e != nullptr && std::string(e) == "0") return false;
  return device_facts().major >= 9;
}

std::int64_t grid_ctas(const DecodeArgs& a) {
  return static_cast<std::int64_t>(a.batch_size) * a.num_kv_heads * a.row_groups * a.num_chunks;
}

// f.template operator()<kW>() for the compiled kSmallM instance of `warps` warps (the 4-warp kernel for any other
// count). run_mma launches through it and attention_decode_pipeline_stages asks through it, so
// the query names the instance the launch takes.
template <int D, int kFp8, class F>
decltype(auto) by_small_m_warps(int warps, F&& f) {
  if constexpr (has_single_ctas<D>())
    if (warps == 1) return f.template operator()<1>();
  if constexpr (has_wide_ctas<D, kFp8>())
    if (warps == 8) return f.template operator()<8>();
  if (warps == 2) return f.template operator()<2>();
  return f.template operator()<4>();
}

// Whether the kSmallM kernel of head_dim D is compiled with CTAs of `warps` warps: by_small_m_warps takes that
// instance, not the 4-warp fallback (one list of the compiled shapes).
struct InstanceWarps {  // (a named functor: a captureless template lambda draws nvcc's warning 445)
  template <int kW>
  int operator()() const { return kW; }
};
template <int D, int kFp8>
bool small_m_compiled(int warps) {
  return by_small_m_warps<D, kFp8>(warps, InstanceWarps{}) == warps;
}

// Warps per CTA of the kSmallM kernel for a grid of `grid` CTAs (`chunks` of them per request and KV head), with
// `slots` 4-warp CTAs resident at once (SMs x kBlocks): a rule on the grid and the device only, so a graph replay
// takes the kernel its capture took. 8 (wide, fp8 at head_dim <= 128) where the grid fills at most half of the
// slots: the same CTAs, twice the warps. Where a request has at most kNarrowMaxChunks chunks: 1 (single, head_dim
// 128) where the 4-warp grid takes three or four waves (has_single_ctas's comment), else 2 (narrow, head_dim 128
// and 256) where it takes an even number of waves (has_narrow_ctas's). Else 4.
// ATTNBENCH_DECODE_WARPS forces a compiled shape (small_m_compiled).
template <int D, int kFp8>
int small_m_warps(std::int64_t grid, int chunks) {
  constexpr int kBlocks = default_min_blocks<D, kFp8, true>();
  const int forced = forced_decode_warps();
  if (forced != 0 && small_m_compiled<D, kFp8>(forced)) return forced;
  const std::int64_t slots = static_cast<std::int64_t>(sm_count()) * kBlocks;
  if (has_wide_ctas<D, kFp8>() && grid * 2 <= slots) return 8;
  const std::int64_t waves = (grid + slots - 1) / slots;
  if (chunks <= kNarrowMaxChunks) {
    if (has_single_ctas<D>() && (waves == 3 || waves == 4)) return 1;
    if (has_narrow_ctas<D>() && waves >= 2 && waves % 2 == 0) return 2;
  }
  return 4;
}

// The merge kernel over the split-KV partials of a decode launch, as a programmatic dependent of it where
// merge_pdl() says so (the decode CTAs trigger after their partial-state writes; the merge waits first).
template <bool kBf16>
void launch_merge(const DecodeArgs& a, int head_dim, cudaStream_t stream) {
  const std::int64_t rows = static_cast<std::int64_t>(a.total_q) * a.num_qo_heads;
  const int items_per_block = kMergeWarpsPerBlock / merge_warps_per_item(a.num_chunks);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>((rows + items_per_block - 1) / items_per_block));
  cfg.blockDim = dim3(kMergeWarpsPerBlock * 32);
  cfg.stream = stream;
  cudaLaunchAttribute pdl = {};
  if (merge_pdl()) {
    pdl.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    pdl.val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = &pdl;
    cfg.numAttrs = 1;
  }
  ATTNBENCH_CUDA_CHECK(cudaLaunchKernelEx(&cfg, decode_merge_kernel<kBf16>, a, head_dim));
}

// Whether the 4-warp kSmallM kernel at head_dim 64 takes two stages for a grid of `grid` CTAs (a rule on the grid
// and the device only, so a graph replay takes the kernel its capture took; has_two_stage_small_m's comment).
template <int kFp8>
bool two_stages_at_64(std::int64_t grid) {
  const double per_sm = static_cast<double>(grid) / sm_count();
  if constexpr (kFp8 != 0) return per_sm >= kTwoStage64MinFp8;
  return per_sm > kTwoStage64Min16 && per_sm <= kTwoStage64Max16;
}

// The pipeline depth of a kSmallM CTA of kW warps before 2026-12-07: three, four for the 4-warp kernel at head_dim 64.
template <int D, int kFp8, int kW>
constexpr int old_small_m_depth() { return kW == 4 ? default_stages<D, kFp8, true>() : 3; }

// The pipeline depth of the kSmallM kernel of kW warps for a grid of `grid` CTAs: two where two_small_m_stages says
// so or, at head_dim 64, two_stages_at_64; else old_small_m_depth. ATTNBENCH_DECODE_STAGES (forced_small_m_stages)
// forces the old depth (3) or two stages (2) wherever a two-stage instance is compiled.
template <int D, int kFp8, int kW>
int small_m_stages(std::int64_t grid) {
  constexpr int kOld = old_small_m_depth<D, kFp8, kW>();
  if constexpr (!has_two_stage_small_m<D, kW>() || kOld == 2) {
    return kOld;
  } else {
    const int forced = forced_small_m_stages();
    if (forced != 0) return forced == 2 ? 2 : kOld;
    return two_small_m_stages<D, kW>() || two_stages_at_64<kFp8>(grid) ? 2 : kOld;
  }
}

// The kSmallM kernel of kW warps at the depth small_m_stages gives.
template <bool kBf16, int D, int kMinBlocks, int kFp8, int kW>
void launch_small_m(const DecodeArgs& a, unsigned grid, cudaStream_t stream) {
  if constexpr (has_two_stage_small_m<D, kW>()) {
    if (small_m_stages<D, kFp8, kW>(grid) == 2)
      return launch_mma<kBf16, D, 2, kMinBlocks, kFp8, true, kW>(a, grid, stream);
  }
  launch_mma<kBf16, D, old_small_m_depth<D, kFp8, kW>(), kMinBlocks, kFp8, true, kW>(a, grid, stream);
}

template <bool kBf16, int D, int kFp8 = 0>
void run_mma(const DecodeArgs& a, cudaStream_t stream) {  // (a from launch_args)
  const std::int64_t grid = grid_ctas(a);
  if (grid > 0x7fffffff) throw Unsupported("attention_decode: grid of " + std::to_string(grid) + " CTAs is too large");
  const unsigned g = static_cast<unsigned>(grid);
  if (a.group * a.max_q_len <= 8) {  // one m-tile of at most 8 rows: the transposed PV (kSmallM)
    // Resident CTAs an SM scale with the warps: 4x the 4-warp kernel's for one warp, half for eight.
    constexpr int kBlocks = default_min_blocks<D, kFp8, true>();
    by_small_m_warps<D, kFp8>(small_m_warps<D, kFp8>(grid_ctas(a), a.num_chunks), [&]<int kW>() {
      launch_small_m<kBf16, D, kBlocks * 4 / kW, kFp8, kW>(a, g, stream);
    });
  } else
    launch_mma<kBf16, D, default_stages<D, kFp8>(), default_min_blocks<D, kFp8>(), kFp8, false>(a, g, stream);
  if (a.split && a.semaphores == nullptr) launch_merge<kBf16>(a, D, stream);
}

// (model dtype, fp8 kind) -> the compiled kernel of head_dim D.
template <int D>
void run_mma_fp8(const DecodeArgs& a, bool bf, int fp8, cudaStream_t stream) {
  switch (fp8) {
    case 1:
      return bf ? run_mma<true, D, 1>(a, stream) : run_mma<false, D, 1>(a, stream);
    case 2:
      return bf ? run_mma<true, D, 2>(a, stream) : run_mma<false, D, 2>(a, stream);
    default:
      return bf ? run_mma<true, D, 0>(a, stream) : run_mma<false, D, 0>(a, stream);
  }
}

void run_generic(const DecodeArgs& a, DType dtype, int head_dim, cudaStream_t stream) {
  const std::int64_t warps = static_cast<std::int64_t>(a.batch_size) * a.max_q_len * a.num_qo_heads;
  const int warps_per_block = 4;
  const std::int64_t blocks = (warps + warps_per_block - 1) / warps_per_block;
  if (blocks > 0x7fffffff) throw Unsupported("attention_decode: too many rows for the generic kernel");
  decode_generic_kernel<<<static_cast<unsigned>(blocks), warps_per_block * 32, 0, stream>>>(a, dtype, head_dim);
  ATTNBENCH_CUDA_CHECK_LAUNCH();
}

void check_params(const AttentionParams& p) {
  auto bad = [](const std::string& what) { throw InputError("attention_decode: " + what); };
  if (p.batch_size < 0) bad("negative batch_size");
  if (p.num_kv_heads <= 0 || p.num_qo_heads <= 0 || p.num_qo_heads % p.num_kv_heads != 0)
    bad("num_qo_heads (" + std::to_string(p.num_qo_heads) + ") must be a positive multiple of num_kv_heads (" +
        std::to_string(p.num_kv_heads) + ")");
  if (p.head_dim <= 0) bad("head_dim must be positive");
  if (!p.q || !p.o || !p.k || !p.v) bad("q, o, k and v must be set");
  switch (p.addressing) {
    case KvAddressing::block_table:
      if (!p.kv_lens || !p.page_table) bad("block_table addressing needs kv_lens and page_table");
      if (p.page_size <= 0 || p.page_table_stride <= 0) bad("block_table addressing needs page_size and page_table_stride > 0");
      break;
    case KvAddressing::token_indices:
      if (!p.kv_indptr || !p.kv_indices) bad("token_indices addressing needs kv_indptr and kv_indices");
      break;
    case KvAddressing::ragged:
      if (!p.kv_indptr) bad("ragged addressing needs kv_indptr");
      break;
  }
  if (p.qo_indptr ? p.max_q_len <= 0 : p.q_len_per_req <= 0)
    bad(p.qo_indptr ? "max_q_len must be positive with qo_indptr" : "q_len_per_req must be positive");
}

}  // namespace decode_detail

namespace decode_detail {

DecodeArgs make_args(const AttentionParams& p) {
  DecodeArgs a{};
  cuda_detail::set_attention_args(a, p);
  a.batch_size = p.batch_size;
  a.total_q = p.total_q;
  a.max_q_len = p.qo_indptr ? p.max_q_len : p.q_len_per_req;
  a.row_groups = (a.group * a.max_q_len + kRowsPerCta - 1) / kRowsPerCta;
  a.split = p.max_num_chunks > 1 && (p.kv_chunk_size != 0 || p.kv_chunk_size_ptr != nullptr);
  a.num_chunks = a.split ? p.max_num_chunks : 1;
  a.kv_chunk_size = p.kv_chunk_size;
  a.kv_chunk_size_ptr = p.kv_chunk_size_ptr;
  return a;
}

// The kernels' kFp8 of p's pool: 1 e4m3, 2 e5m2, 0 a 16-bit pool.
int fp8_kind(const AttentionParams& p) {
  const DType kvt = kv_load_dtype(p);
  return kvt == DType::fp8_e4m3 ? 1 : (kvt == DType::fp8_e5m2 ? 2 : 0);
}

// The merge in the kernel where the caller gives semaphores enough for every (request, KV head, row group) and
// the chunks are few (one CTA merges them); else the merge kernel.
bool merges_in_kernel(const DecodeArgs& a, const AttentionParams& p) {
  const std::int64_t groups = static_cast<std::int64_t>(a.batch_size) * a.num_kv_heads * a.row_groups;
  return a.split && p.merge_semaphores != nullptr && groups <= p.merge_semaphore_count &&
         a.num_chunks <= kMaxInKernelMergeChunks;
}

// Whether p takes the tensor-core kernels (run_mma): a bf16 / fp16 model with its own dtype's or an fp8 pool (q in
// the model dtype, as XQA takes it), head_dim 64, 128 or 256, aligned pointers. Else the generic path, which
// converts on load through cuda_fp8.h (an fp8 q: trtllm_mha outside XQA).
bool takes_mma(const AttentionParams& p) {
  const DType kvt = kv_load_dtype(p);
  const bool fast_dtype = (p.dtype == DType::bf16 || p.dtype == DType::fp16) &&
                          (kvt == p.dtype || fp8_kind(p) != 0) && q_load_dtype(p) == p.dtype;
  const bool fast_shape = p.head_dim == 64 || p.head_dim == 128 || p.head_dim == 256;
  const bool fast_align = aligned(p.k, 16) && aligned(p.v, 16) && aligned(p.o, 16) && aligned(p.q, 4);
  return fast_dtype && fast_shape && fast_align;
}

// The host rules' one (head_dim, pool) dispatch: f.template operator()<D, kFp8>() with kFp8 1 for an fp8 pool (the
// rules read only kFp8 != 0), 0 for a 16-bit one; `fallback` at a head_dim with no tensor-core kernel.
template <class R, class F>
R by_head_dim(const AttentionParams& p, R fallback, F&& f) {
  const bool fp8 = fp8_kind(p) != 0;
  switch (p.head_dim) {
    case 64:
      return fp8 ? f.template operator()<64, 1>() : f.template operator()<64, 0>();
    case 128:
      return fp8 ? f.template operator()<128, 1>() : f.template operator()<128, 0>();
    case 256:
      return fp8 ? f.template operator()<256, 1>() : f.template operator()<256, 0>();
    default:
      return fallback;
  }
}

// The DecodeArgs a tensor-core launch of p passes, all but the workspace pointers: the merge's semaphores where it
// merges in the kernel. The launch and the host queries below share it, so a query answers what the launch does.
DecodeArgs launch_args(const AttentionParams& p) {
  DecodeArgs a = make_args(p);
  if (merges_in_kernel(a, p)) a.semaphores = p.merge_semaphores;
  return a;
}

}  // namespace decode_detail

bool attention_decode_merges_in_kernel(const AttentionParams& p) {
  return decode_detail::merges_in_kernel(decode_detail::make_args(p), p);
}

int attention_decode_cta_warps(const AttentionParams& p) {
  using namespace decode_detail;
  const DecodeArgs a = launch_args(p);
  if (a.group * a.max_q_len > 8) return kWarps;
  return by_head_dim(p, kWarps, [&]<int D, int kFp8>() { return small_m_warps<D, kFp8>(grid_ctas(a), a.num_chunks); });
}

int attention_decode_pipeline_stages(const AttentionParams& p) {
  using namespace decode_detail;
  if (!takes_mma(p)) return 0;
  const DecodeArgs a = launch_args(p);
  return by_head_dim(p, 0, [&]<int D, int kFp8>() {
    if (a.group * a.max_q_len > 8) return default_stages<D, kFp8>();
    const std::int64_t grid = grid_ctas(a);
    return by_small_m_warps<D, kFp8>(small_m_warps<D, kFp8>(grid, a.num_chunks),
                                     [&]<int kW>() { return small_m_stages<D, kFp8, kW>(grid); });
  });
}

void launch_attention_decode_generic(const AttentionParams& p, void* stream) {
  using namespace decode_detail;
  check_params(p);
  if (p.batch_size == 0 || p.total_q == 0) return;
  if (p.head_dim > kGenericMaxHeadDim)
    throw Unsupported("attention_decode (generic): head_dim " + std::to_string(p.head_dim) + " > " +
                      std::to_string(kGenericMaxHeadDim));
  DecodeArgs a = make_args(p);
  a.split = false;
  a.num_chunks = 1;
  run_generic(a, p.dtype, p.head_dim, static_cast<cudaStream_t>(stream));
}

void launch_attention_decode(const AttentionParams& p, void* stream) {
  using namespace decode_detail;
  check_params(p);
  if (p.batch_size == 0 || p.total_q == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  DecodeArgs a = launch_args(p);

  // The one place where runtime (dtype, head_dim) becomes a compiled kernel (takes_mma says which path).
  if (takes_mma(p)) {
    if (a.split) {
      const std::int64_t need = split_kv_workspace_bytes(p.total_q, p.max_num_chunks, p.num_qo_heads, p.head_dim);
      if (p.workspace == nullptr || p.workspace_bytes < need || !aligned(p.workspace, 16))
        throw InputError("attention_decode: split-KV over " + std::to_string(p.max_num_chunks) + " chunks needs " +
                         std::to_string(need) + " B of 16-byte-aligned workspace, got " +
                         std::to_string(p.workspace_bytes) + " B");
      a.part_o = static_cast<float*>(p.workspace);
      a.part_lse = a.part_o + static_cast<std::int64_t>(p.total_q) * p.max_num_chunks * p.num_qo_heads * p.head_dim;
    }
    const int fp8 = fp8_kind(p);
    const bool bf = p.dtype == DType::bf16;
    switch (p.head_dim) {
      case 64:
        return run_mma_fp8<64>(a, bf, fp8, s);
      case 128:
        return run_mma_fp8<128>(a, bf, fp8, s);
      case 256:
        return run_mma_fp8<256>(a, bf, fp8, s);
      default:
        break;
    }
  }
  if (p.head_dim <= kGenericMaxHeadDim) {
    a.split = false;
    a.num_chunks = 1;
    a.semaphores = nullptr;
    return run_generic(a, p.dtype, p.head_dim, s);
  }
  throw Unsupported("attention_decode: no kernel for dtype " + std::string(dtype_name(p.dtype)) + " with head_dim " +
                    std::to_string(p.head_dim) +
                    " (tensor-core path: bf16/fp16 with head_dim 64, 128 or 256; generic path: head_dim <= " +
                    std::to_string(kGenericMaxHeadDim) + ")");
}

}  // namespace attnbench
