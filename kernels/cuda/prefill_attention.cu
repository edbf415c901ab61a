// attention_prefill on CUDA: many query rows per request (extend / prefill, FlashInfer's verify).
//
// Computes, per request i, query row j and query head h (semantics: kernels/params.hpp, AttentionParams):
//   o[q_begin + j, h, :] = softmax_m(sm_scale * q . k_m (soft-capped)) . v_m over the visible keys m
// with the position convention of params.hpp (causal, window_left, sinks, lse in natural log; a row with no
// visible key gives o = 0 and lse = -inf).
//   q, o  [total_q, num_qo_heads, head_dim]          rows grouped per request by qo_indptr
//   k, v  ragged: [total_kv, num_kv_heads, head_dim] row kv_indptr[i] + m
//         token_indices / block_table: the pool [num_slots, num_kv_heads, head_dim], slot per KvAddressing
//   lse   [total_q, num_qo_heads] float, optional
//
// CPU twin: attention_prefill_cpu (kernels/cpu/attention_cpu.cpp).
// Checked by: ctest -L gpu -R Prefill   (tests/gpu/prefill_attention_test.cpp: every addressing mode, masks,
//             GQA, head dims, dtypes, lse, a large case against the CPU twin; a TFLOP/s print).
//
// Design (bf16 / fp16, head_dim 64 / 128 / 256): FlashAttention-2 structure on mma.sync.m16n8k16 (fp32
// accumulation). One CTA = BM = 128 query rows of one (request, query head); each warp owns 16 * kMT rows
// (head_dim 64 / 128: 4 warps x 32 rows, 2 CTAs per SM; 256: 8 warps x 16 rows, 1 CTA per SM). The Q tile
// stays in shared memory (ldmatrix per KV tile); K and V tiles of BN = 64 keys stream through a two-stage
// cp.async ring (16-byte copies, rows XOR-swizzled so ldmatrix is conflict-free; K and V are separate commit
// groups, so Q K^T starts before V has landed). Paged modes gather each tile's rows by slot: every thread
// resolves the slots of the rows it copies one tile ahead (those index loads are in flight while the current
// tile computes). Only KV tiles holding a visible key are visited; the per-element mask runs only on tiles
// that cross a boundary (causal diagonal, window edge, end of the keys). Online softmax in base 2 (ex2.approx)
// with a lazy max: O is rescaled only when a row's max grows by more than 2^8. P goes to the PV product from
// registers. O is staged through the warp's own Q rows in shared memory and written with 16-byte stores.
// CTAs are launched heaviest causal tile first, the query heads of a KV group side by side (K/V reuse in L2).
// An fp8_e4m3 / fp8_e5m2 KV pool (bf16 / fp16 q and o) takes the same kernel: the ring holds the stored bytes
// and each thread dequantizes the bytes it copied into one 16-bit K and V tile (prefill_tc_kernel, kFp8; same
// shared memory as the 16-bit path); an fp8 q (trtllm_mha's extend) is dequantized into the Q tile the same
// way. Not yet run on a GPU (2026-12-01): results/h200/prefill-fp8/README.md.
// fp32 storage (and fp8 with another head_dim / unaligned pointers) use the generic kernel
// (one warp per (query row, head)); launch_attention_prefill_generic exposes it for any dtype as a GPU
// cross-check.
// On an sm_90 GPU launch_attention_prefill may hand bf16 / fp16 calls to the Hopper kernel instead
// (kernels/cuda/prefill_hopper.cu; ATTNBENCH_PREFILL_KERNEL, kernels_cuda.cuh); this kernel is the fallback.
// Measured (H200, bf16, 32 / 8 heads, head_dim 128, causal; see the test's TFLOP/s print): ragged 289-319
// TFLOP/s for B=1 S=4k..16k, token_indices / block_table 7-12% below; PyTorch FA2 259-344 in the same job.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <climits>
#include <cstdlib>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/dtype.hpp"
#include "kernels/cuda/fp8.cuh"
#include "core/errors.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/device_ops.cuh"
#include "kernels/cuda/kernel_args.cuh"
#include "kernels/cuda/kernels_cuda.cuh"
#include "kernels/params.hpp"

namespace attnbench {

// The prefill op through its slow generic kernel (one warp per row and head, fp32 math), any dtype and
// head_dim <= 256: an independent GPU cross-check for the fast path on shapes too large for the CPU twin.
void launch_attention_prefill_generic(const AttentionParams& p, void* stream);

namespace prefill_detail {

// What the kernels read: the shared part (kernels/cuda/kernel_args.cuh: AttentionParams reduced to
// device-friendly values, addressing as an int, the page size's shift precomputed), then what only the
// prefill kernels read.
struct PrefillArgs : cuda_detail::AttentionArgs {
  int head_dim;
  DType dtype;
  // Tensor-core kernel: scores go to base-2 units as s * exp_scale, after the soft cap (when on) has
  // replaced s by tanh(s * cap_in) * cap_out.
  // (sm_scale here is AttentionArgs::sm_scale: times k_scale for an fp8 pool.)
  float exp_scale;  // softcap ? 1 : sm_scale * log2(e)
  float cap_in;     // sm_scale / softcap
  float cap_out;    // softcap * log2(e)
};

constexpr float kLog2e = 1.4426950408889634f;
// A row's reference max is moved only when a tile's max exceeds it by more than this (base-2 units), so
// probabilities stay <= 2^8 before normalisation (fine for fp32 sums and bf16 / fp16 P).
constexpr float kLazyRescale = 8.0f;
constexpr float kLn2 = 0.6931471805599453f;

// Row of key m (0 <= m < kv_len) of request i in k / v, in units of [num_kv_heads, head_dim] rows.
// kPow2Pages: the page size is 1 << page_shift (the tensor-core path requires it).
template <bool kPow2Pages = false>
__device__ __forceinline__ int kv_slot(const PrefillArgs& a, int i, int kv_base, int m) {
  switch (a.addressing) {
    case static_cast<int>(KvAddressing::ragged):
      return kv_base + m;
    case static_cast<int>(KvAddressing::token_indices):
      return a.kv_indices[kv_base + m];
    default: {
      const int page_idx = kPow2Pages ? (m >> a.page_shift) : m / a.page_size;
      const int in_page = m - page_idx * a.page_size;
      return a.page_table[static_cast<std::int64_t>(i) * a.page_table_stride + page_idx] * a.page_size + in_page;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Simple kernel: one warp per (query row j, head h, request b); lane = key within a chunk of 32 for the dot
// products, lane = head-dim slice for the accumulation. Any dtype, head_dim <= 256.
constexpr int kGenericWarps = 4;

__global__ void __launch_bounds__(kGenericWarps * 32) prefill_generic_kernel(const PrefillArgs a) {
  __shared__ float sq[kGenericWarps][256];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int j = blockIdx.x * kGenericWarps + warp;
  const int h = blockIdx.y, b = blockIdx.z;
  const cuda_detail::RequestView r = cuda_detail::request_view(a, b);
  if (j >= r.q_len) return;
  const int D = a.head_dim;
  const int kvh = h / a.group;
  const std::int64_t qrow = static_cast<std::int64_t>(r.q_begin + j) * a.num_qo_heads + h;
  for (int d = lane; d < D; d += 32) sq[warp][d] = cuda_detail::load_elem(a.q, qrow * D + d, a.q_t);
  __syncwarp();

  const int qpos = r.q_pos0 + j;
  int hi = r.kv_len, lo = 0;
  if (a.causal) hi = min(hi, qpos - r.kv_pos0 + 1);
  if (a.window_left >= 0) lo = max(lo, qpos - a.window_left - r.kv_pos0);

  const std::int64_t kv_stride = static_cast<std::int64_t>(a.num_kv_heads) * D;
  float acc[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) acc[i] = 0.0f;
  float m = -INFINITY, l = 0.0f;
  for (int c0 = lo; c0 < hi; c0 += 32) {
    const int mk = c0 + lane;
    const bool valid = mk < hi;
    const int slot = valid ? kv_slot(a, b, r.kv_base, mk) : 0;
    float s = -INFINITY;
    if (valid) {
      const std::int64_t base = slot * kv_stride + static_cast<std::int64_t>(kvh) * D;
      float dot = 0.0f;
      for (int d = 0; d < D; ++d) dot += sq[warp][d] * cuda_detail::load_elem(a.k, base + d, a.kv_t);
      s = dot * a.sm_scale;
      if (a.soft_cap > 0.0f) s = a.soft_cap * tanhf(s / a.soft_cap);
    }
    float cmax = s;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) cmax = fmaxf(cmax, __shfl_xor_sync(0xffffffffu, cmax, off));
    const float mnew = fmaxf(m, cmax);  // finite: lane 0 is valid
    const float alpha = expf(m - mnew);
    const float pk = valid ? expf(s - mnew) : 0.0f;
    float psum = pk;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) psum += __shfl_xor_sync(0xffffffffu, psum, off);
    l = l * alpha + psum;
#pragma unroll
    for (int i = 0; i < 8; ++i) acc[i] *= alpha;
    const int n = min(32, hi - c0);
    for (int kk = 0; kk < n; ++kk) {
      const float pkk = __shfl_sync(0xffffffffu, pk, kk);
      const int skk = __shfl_sync(0xffffffffu, slot, kk);
      const std::int64_t base = skk * kv_stride + static_cast<std::int64_t>(kvh) * D;
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int d = lane + 32 * i;
        if (d < D) acc[i] += pkk * cuda_detail::load_elem(a.v, base + d, a.kv_t);
      }
    }
    m = mnew;
  }
  if (a.sinks) {
    const float sink = a.sinks[h];
    const float mnew = fmaxf(m, sink);
    const float alpha = expf(m - mnew);
#pragma unroll
    for (int i = 0; i < 8; ++i) acc[i] *= alpha;
    l = l * alpha + expf(sink - mnew);
    m = mnew;
  }
  const float inv = l > 0.0f ? a.out_scale / l : 0.0f;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int d = lane + 32 * i;
    if (d < D) store_from_float(a.o, qrow * D + d, a.dtype, acc[i] * inv);
  }
  if (a.lse && lane == 0) a.lse[qrow] = l > 0.0f ? m + logf(l) : -INFINITY;
}

void launch_generic(const PrefillArgs& a, int max_q_len, int batch_size, cudaStream_t stream) {
  const dim3 grid((max_q_len + kGenericWarps - 1) / kGenericWarps, a.num_qo_heads, batch_size);
  prefill_generic_kernel<<<grid, kGenericWarps * 32, 0, stream>>>(a);
  ATTNBENCH_CUDA_CHECK_LAUNCH();
}


// ---------------------------------------------------------------------------------------------------------
// Tensor-core kernel.

using cuda_detail::cp_async_16;  // kernels/cuda/device_ops.cuh
using cuda_detail::pack2;
using cuda_detail::smem_addr;
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldsm_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldsm_x4_trans(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// c += a (16x16, row) * b (16x8, col), fp32 accumulation.
template <typename T>
__device__ __forceinline__ void mma16816(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                         std::uint32_t b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}


__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// Element offset of 16-byte chunk `chunk` of row `row` in a [rows, D] tile: chunks XOR-swizzled by row % 8,
// so that the 8 rows one ldmatrix phase reads (same logical chunk) fall in 8 different bank groups.
template <int D>
__device__ __forceinline__ int swz(int row, int chunk) {
  return row * D + ((chunk ^ (row & 7)) << 3);
}

// 16 fp8 codes (w[0] holds codes 0-3, code 0 in its low byte) -> two 16-byte chunks of T in shared memory:
// codes 0-7 at `lo`, 8-15 at `hi`. odd_first: store the `hi` chunk first (the callers pick the order so that
// the 8 threads of a quarter warp hit 8 different bank groups).
template <typename T, __nv_fp8_interpretation_t kFmt>
__device__ __forceinline__ void store_dequant16(std::uint32_t lo, std::uint32_t hi, bool odd_first,
                                                const std::uint32_t (&w)[4]) {
  const std::uint32_t f0 = odd_first ? w[2] : w[0], f1 = odd_first ? w[3] : w[1];
  const std::uint32_t s0 = odd_first ? w[0] : w[2], s1 = odd_first ? w[1] : w[3];
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(odd_first ? hi : lo),
               "r"(cuda_detail::fp8x2_to_16bit_pair<T, kFmt>(f0)), "r"(cuda_detail::fp8x2_to_16bit_pair<T, kFmt>(f0 >> 16)),
               "r"(cuda_detail::fp8x2_to_16bit_pair<T, kFmt>(f1)), "r"(cuda_detail::fp8x2_to_16bit_pair<T, kFmt>(f1 >> 16))
               : "memory");
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(odd_first ? lo : hi),
               "r"(cuda_detail::fp8x2_to_16bit_pair<T, kFmt>(s0)), "r"(cuda_detail::fp8x2_to_16bit_pair<T, kFmt>(s0 >> 16)),
               "r"(cuda_detail::fp8x2_to_16bit_pair<T, kFmt>(s1)), "r"(cuda_detail::fp8x2_to_16bit_pair<T, kFmt>(s1 >> 16))
               : "memory");
}

// kFp8 = 0: K / V in T. kFp8 = 1 / 2: an e4m3 / e5m2 pool, read as stored bytes (16-byte copies of 16 codes:
// D / 16 per row) into a ring of kStages fp8 stages, and dequantized into one 16-bit K tile and one V tile.
template <int D, int kWarps, int kMT, int BN, int kStages, int kFp8 = 0>
struct TcShape {
  static constexpr int kThreads = kWarps * 32;
  static constexpr int BM = kWarps * kMT * 16;      // query rows per CTA
  static constexpr int kChunks = D / 8;             // 16-byte chunks per 16-bit row
  static constexpr int kLdChunks = kFp8 ? D / 16 : D / 8;  // 16-byte copies per stored K (or V) row
  static constexpr int kRowsPerPass = kThreads / kLdChunks;
  static constexpr int kPasses = BN / kRowsPerPass;  // K (or V) rows each thread copies per tile
  // 16-bit: Q + kStages x (K, V). fp8: Q + one 16-bit K and V tile + kStages x (K, V) of stored bytes
  // (head_dim 128: 96 KiB either way, two CTAs per SM; 256: 192 KiB either way, of sm_90's 227 KiB per block).
  static constexpr int kSmemBytes =
      kFp8 ? (BM * D + 2 * BN * D) * 2 + 2 * kStages * BN * D : (BM * D + 2 * kStages * BN * D) * 2;
  static_assert(D % 16 == 0 && BN % 16 == 0 && kThreads % kLdChunks == 0 && BN % kRowsPerPass == 0);
  static_assert(kRowsPerPass % 8 == 0);  // every row a thread copies has the same swizzle
  static_assert(kStages >= 2);
  static_assert(kSmemBytes <= 227 * 1024);  // sm_90's opt-in maximum per block
};

// kFp8 (TcShape): 0 = K / V in T; 1 / 2 = an fp8_e4m3 / fp8_e5m2 pool (q and o stay T). An fp8 tile goes
// global -> shared as stored bytes through the same cp.async ring (half the bytes), and each thread then
// dequantizes exactly the bytes it copied (its own cp.async.wait_group makes them visible to it, no barrier)
// into one 16-bit K (or V) tile in the swizzled layout the ldmatrix code reads; everything after that is the
// 16-bit code. Tile t's K is dequantized just before the loop's first barrier (every thread is past Q K^T of
// t - 1: the barrier before P V of t - 1 says so), its V just after it (every thread is past P V of t - 1),
// and the barrier before P V publishes V; no barrier is added. k_scale is folded into the logit scale and
// v_scale into the output (PrefillArgs, as decode_attention.cu and the generic kernel do); the conversion
// itself is exact (cuda_detail::fp8x2_to_16bit_pair).
// kQ8 (with kFp8 != 0 only): q is stored in the pool's fp8 format too (trtllm_mha's cast for the SM90
// fmha_v2 extend, q_scale 1): each thread reads 16 codes at a time from global memory and dequantizes them
// into sQ, after the first K / V copies have been issued; the loop's first barrier publishes sQ.
template <typename T, int D, int kWarps, int kMT, int BN, int kStages, int kMinBlocks, int kFp8 = 0,
          bool kQ8 = false>
__global__ void __launch_bounds__(kWarps * 32, kMinBlocks) prefill_tc_kernel(const PrefillArgs a) {
  static_assert(!kQ8 || kFp8 != 0);
  constexpr __nv_fp8_interpretation_t kFmt = kFp8 == 2 ? __NV_E5M2 : __NV_E4M3;
  using S = TcShape<D, kWarps, kMT, BN, kStages, kFp8>;
  constexpr int BM = S::BM, kChunks = S::kChunks;
  constexpr int kNT = BN / 8;   // n8 tiles of a score row block
  constexpr int kDT = D / 8;    // n8 tiles of an output row block
  constexpr int kKT = D / 16;   // k16 steps of Q K^T
  constexpr int kRowBytes = D * 2;
  constexpr int kStageBytes = BN * D * 2;
  // What the cp.async ring holds: K / V rows as stored (T, or fp8 codes).
  using KvT = std::conditional_t<kFp8 != 0, std::uint8_t, T>;
  constexpr int kLdElems = 16 / static_cast<int>(sizeof(KvT));  // elements per 16-byte copy
  constexpr int kLdRowBytes = D * static_cast<int>(sizeof(KvT));
  constexpr int kLdStageBytes = BN * kLdRowBytes;

  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* const sQ = reinterpret_cast<T*>(smem_raw);  // [BM, D] swizzled; O staging at the end
  const std::uint32_t sQa = smem_addr(sQ);
  // 16-bit: [kStages, BN, D] swizzled each. fp8: [BN, D] swizzled each (the dequantized current tile), then
  // the ring of stored bytes sK8a / sV8a, [kStages, BN, D] each, row-major (only the copying thread reads them).
  const std::uint32_t sKa = sQa + BM * kRowBytes;
  const std::uint32_t sVa = sKa + (kFp8 ? 1 : kStages) * kStageBytes;
  const std::uint32_t sK8a = sVa + (kFp8 ? 1 : kStages) * kStageBytes;
  const std::uint32_t sV8a = sK8a + kStages * kLdStageBytes;
  const std::uint32_t ring_k = kFp8 ? sK8a : sKa, ring_v = kFp8 ? sV8a : sVa;

  const int h = blockIdx.x, b = blockIdx.z;
  const int q_tile = gridDim.y - 1 - blockIdx.y;  // heaviest (causal) tiles first
  const cuda_detail::RequestView r = cuda_detail::request_view(a, b);
  const int j0 = q_tile * BM;
  if (j0 >= r.q_len) return;
  const int jlast = min(j0 + BM, r.q_len) - 1;
  const int kvh = h / a.group;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int g = lane >> 2, tq = lane & 3;
  const int wrow = warp * kMT * 16;  // this warp's first row in the tile

  // Keys any row of this tile can see: [lo, hi).
  int hi = r.kv_len;
  if (a.causal) hi = min(hi, r.q_pos0 + jlast - r.kv_pos0 + 1);
  int lo = 0;
  if (a.window_left >= 0) lo = max(0, r.q_pos0 + j0 - a.window_left - r.kv_pos0);
  const int t_begin = lo / BN;
  const int t_end = hi > lo ? (hi + BN - 1) / BN : t_begin;

  // Q tile -> shared memory; rows past the request are zeros. (kQ8: below, after the first K / V copies.)
  if constexpr (!kQ8) {
    const T* qg = static_cast<const T*>(a.q);
    for (int idx = tid; idx < BM * kChunks; idx += S::kThreads) {
      const int row = idx / kChunks, c = idx % kChunks;
      const int j = j0 + row;
      const bool valid = j < r.q_len;
      const T* src = valid ? qg + (static_cast<std::int64_t>(r.q_begin + j) * a.num_qo_heads + h) * D + c * 8 : qg;
      cp_async_16(sQa + swz<D>(row, c) * 2, src, valid);
    }
  }

  // K / V tiles: thread copies chunk ld_c of rows ld_row + p * kRowsPerPass. slots[] holds the rows' slots of
  // the next tile to issue (-1: past the keys, copied as zeros). kRowsPerPass % 8 == 0, so every row a thread
  // copies has the same swizzle: one shared-memory offset plus p * kRowsPerPass rows.
  const KvT* const kg = static_cast<const KvT*>(a.k) + kvh * D;
  const KvT* const vg = static_cast<const KvT*>(a.v) + kvh * D;
  const std::int64_t kv_stride = static_cast<std::int64_t>(a.num_kv_heads) * D;
  const int ld_row = tid / S::kLdChunks, ld_c = tid % S::kLdChunks;
  // fp8: the ring is row-major (only the copying thread reads its bytes back).
  const std::uint32_t ld_off = kFp8 ? static_cast<std::uint32_t>(ld_row * kLdRowBytes + ld_c * 16)
                                    : static_cast<std::uint32_t>(swz<D>(ld_row, ld_c)) * 2;
  int slots[S::kPasses];
  auto fetch_slots = [&](int t) {
#pragma unroll
    for (int p = 0; p < S::kPasses; ++p) {
      const int m = t * BN + ld_row + p * S::kRowsPerPass;
      slots[p] = m < r.kv_len ? kv_slot<true>(a, b, r.kv_base, m) : -1;
    }
  };
  // Two cp.async groups (K, then V) for tile t into stage st; empty groups past the last tile.
  auto issue = [&](int t, int st) {
    if (t < t_end) {
      const std::uint32_t dk = ring_k + st * kLdStageBytes + ld_off, dv = ring_v + st * kLdStageBytes + ld_off;
#pragma unroll
      for (int p = 0; p < S::kPasses; ++p) {
        const bool valid = slots[p] >= 0;
        cp_async_16(dk + p * S::kRowsPerPass * kLdRowBytes, valid ? kg + slots[p] * kv_stride + ld_c * kLdElems : kg,
                    valid);
      }
      cp_async_commit();
#pragma unroll
      for (int p = 0; p < S::kPasses; ++p) {
        const bool valid = slots[p] >= 0;
        cp_async_16(dv + p * S::kRowsPerPass * kLdRowBytes, valid ? vg + slots[p] * kv_stride + ld_c * kLdElems : vg,
                    valid);
      }
      cp_async_commit();
      if (t + 1 < t_end) fetch_slots(t + 1);
    } else {
      cp_async_commit();
      cp_async_commit();
    }
  };

  // fp8: this thread's 16 stored codes of each of its rows in ring stage `ring` (row-major) -> 16-bit
  // chunks 2 ld_c and 2 ld_c + 1 of that row in the swizzled tile at `tile`. The two 16-byte stores go in the
  // order (2 ld_c + (ld_c / 4) % 2) first, so that the 8 threads of a quarter warp hit 8 different bank groups.
  auto dequant = [&](std::uint32_t ring, std::uint32_t tile) {
    if constexpr (kFp8 != 0) {
      const bool odd_first = (ld_c >> 2) & 1;
      const std::uint32_t lo = static_cast<std::uint32_t>(swz<D>(ld_row, 2 * ld_c)) * 2;
      const std::uint32_t hi = static_cast<std::uint32_t>(swz<D>(ld_row, 2 * ld_c + 1)) * 2;
#pragma unroll
      for (int p = 0; p < S::kPasses; ++p) {
        std::uint32_t w[4];
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
                     : "r"(ring + ld_off + p * S::kRowsPerPass * kLdRowBytes)
                     : "memory");
        const std::uint32_t row_off = tile + p * S::kRowsPerPass * kRowBytes;
        store_dequant16<T, kFmt>(row_off + lo, row_off + hi, odd_first, w);
      }
    } else {
      (void)ring;
      (void)tile;
    }
  };

  if (t_begin < t_end) fetch_slots(t_begin);
#pragma unroll
  for (int st = 0; st < kStages - 1; ++st) issue(t_begin + st, st);

  if constexpr (kQ8) {
    constexpr int kQChunks = D / 16;  // 16 codes per read
    const std::uint8_t* const qg = static_cast<const std::uint8_t*>(a.q);
    for (int idx = tid; idx < BM * kQChunks; idx += S::kThreads) {
      const int row = idx / kQChunks, c = idx % kQChunks;
      const int j = j0 + row;
      std::uint32_t w[4] = {0u, 0u, 0u, 0u};
      if (j < r.q_len) {
        const uint4 v = __ldg(reinterpret_cast<const uint4*>(
            qg + (static_cast<std::int64_t>(r.q_begin + j) * a.num_qo_heads + h) * D + c * 16));
        w[0] = v.x;
        w[1] = v.y;
        w[2] = v.z;
        w[3] = v.w;
      }
      store_dequant16<T, kFmt>(sQa + swz<D>(row, 2 * c) * 2, sQa + swz<D>(row, 2 * c + 1) * 2, (c >> 2) & 1, w);
    }
  }

  // ldmatrix addresses, per lane, as byte offsets from a tile's base. The swizzle is an XOR of the chunk index
  // with row % 8, and every row a lane addresses has the same row % 8 (= lane % 8), so the offset for k-step
  // (or d-pair) kk is lane_off ^ (kk * 32): the XOR touches only the chunk bits.
  //   Q (A operand, rows wrow + lane % 16, chunk 2 kk + lane / 16), + mt * 16 rows
  //   K (B operand, rows lane % 8 + 8 (lane / 16), chunk 2 kk + (lane / 8) % 2), + np * 16 rows
  //   V (B operand, transposed: rows lane % 8 + 8 ((lane / 8) % 2), chunk 2 dp + lane / 16), + kk * 16 rows
  const std::uint32_t q_off = (wrow + (lane & 15)) * kRowBytes + (((lane >> 4) ^ (lane & 7)) << 4);
  const std::uint32_t k_off = ((lane & 7) + ((lane >> 4) << 3)) * kRowBytes + ((((lane >> 3) & 1) ^ (lane & 7)) << 4);
  const std::uint32_t v_off = ((lane & 7) + (((lane >> 3) & 1) << 3)) * kRowBytes + (((lane >> 4) ^ (lane & 7)) << 4);

  float o[kMT][kDT][4];
  // Running max (base-2 units; may lag the true max by up to kLazyRescale) and this thread's partial row sum.
  float row_m[kMT][2], row_l[kMT][2];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
    for (int dt = 0; dt < kDT; ++dt) o[mt][dt][0] = o[mt][dt][1] = o[mt][dt][2] = o[mt][dt][3] = 0.0f;
    row_m[mt][0] = row_m[mt][1] = -INFINITY;
    row_l[mt][0] = row_l[mt][1] = 0.0f;
  }

  for (int t = t_begin; t < t_end; ++t) {
    const int st = (t - t_begin) % kStages;
    cp_async_wait<2 * kStages - 3>();  // K(t) has landed (V(t) and later tiles may be in flight)
    if constexpr (kFp8 != 0) dequant(sK8a + st * kLdStageBytes, sKa);  // everyone is past Q K^T of t - 1
    __syncthreads();                   // ... for every thread; and everyone is done with tile t - 1
    issue(t + kStages - 1, (t - t_begin + kStages - 1) % kStages);
    if constexpr (kFp8 != 0) {
      // V(t) too, here rather than before P V: fewer registers are live (no scores, no P), and V(t) was issued
      // together with K(t). Everyone is past P V of t - 1 (the barrier above); the barrier before P V
      // publishes the tile.
      cp_async_wait<2 * kStages - 2>();
      dequant(sV8a + st * kLdStageBytes, sVa);
    }

    // S = Q K^T
    float s[kMT][kNT][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) s[mt][nt][0] = s[mt][nt][1] = s[mt][nt][2] = s[mt][nt][3] = 0.0f;
    const std::uint32_t sKst = kFp8 ? sKa : sKa + st * kStageBytes;
#pragma unroll
    for (int kk = 0; kk < kKT; ++kk) {
      std::uint32_t qa[kMT][4];
      const std::uint32_t qaddr = sQa + (q_off ^ (kk * 32));
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) ldsm_x4(qa[mt], qaddr + mt * 16 * kRowBytes);
      const std::uint32_t kaddr = sKst + (k_off ^ (kk * 32));
#pragma unroll
      for (int np = 0; np < kNT / 2; ++np) {
        std::uint32_t kb[4];
        ldsm_x4(kb, kaddr + np * 16 * kRowBytes);
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          mma16816<T>(s[mt][2 * np], qa[mt], kb[0], kb[1]);
          mma16816<T>(s[mt][2 * np + 1], qa[mt], kb[2], kb[3]);
        }
      }
    }

    if (a.soft_cap > 0.0f) {
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) s[mt][nt][e] = tanhf(s[mt][nt][e] * a.cap_in) * a.cap_out;
    }

    // Mask only tiles that cross a boundary for some row of this CTA.
    const int n0 = t * BN;
    const bool need_mask = n0 + BN > r.kv_len || (a.causal && r.kv_pos0 + n0 + BN - 1 > r.q_pos0 + j0) ||
                           (a.window_left >= 0 && r.kv_pos0 + n0 < r.q_pos0 + jlast - a.window_left);
    if (need_mask) {
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const int qpos = r.q_pos0 + j0 + wrow + mt * 16 + g + hr * 8;
          int khi = r.kv_len;
          if (a.causal) khi = min(khi, qpos - r.kv_pos0 + 1);
          const int klo = a.window_left >= 0 ? qpos - a.window_left - r.kv_pos0 : INT_MIN;
#pragma unroll
          for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int m = n0 + nt * 8 + tq * 2 + e;
              if (m < klo || m >= khi) s[mt][nt][hr * 2 + e] = -INFINITY;
            }
        }
    }

    // Online softmax in base 2 with a lazy max: a row's reference max moves only when the tile's max exceeds
    // it by more than kLazyRescale (then O and l are rescaled), so p <= 2^kLazyRescale and most tiles skip the
    // O rescale. A row with nothing visible so far keeps -inf and exponentiates against 0.
    bool rescale = false;
    float alpha[kMT][2];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        float mx = -INFINITY;
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt) mx = fmaxf(mx, fmaxf(s[mt][nt][hr * 2], s[mt][nt][hr * 2 + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float cand = mx * a.exp_scale;
        alpha[mt][hr] = 1.0f;
        if (cand > row_m[mt][hr] + kLazyRescale) {  // also: the first visible key of the row (max was -inf)
          alpha[mt][hr] = fast_exp2(row_m[mt][hr] - cand);
          row_m[mt][hr] = cand;
          rescale = true;
        }
        const float m_use = row_m[mt][hr] == -INFINITY ? 0.0f : row_m[mt][hr];
        float sum = 0.0f;
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const float pv = fast_exp2(fmaf(s[mt][nt][hr * 2 + e], a.exp_scale, -m_use));
            s[mt][nt][hr * 2 + e] = pv;
            sum += pv;
          }
        row_l[mt][hr] = row_l[mt][hr] * alpha[mt][hr] + sum;
      }
    if (__any_sync(0xffffffffu, rescale)) {
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int dt = 0; dt < kDT; ++dt) {
          o[mt][dt][0] *= alpha[mt][0];
          o[mt][dt][1] *= alpha[mt][0];
          o[mt][dt][2] *= alpha[mt][1];
          o[mt][dt][3] *= alpha[mt][1];
        }
    }

    // P (A operand, from the score registers: n8 tiles 2 kk and 2 kk + 1 make k-step kk)
    std::uint32_t pa[kMT][BN / 16][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int kk = 0; kk < BN / 16; ++kk) {
        pa[mt][kk][0] = pack2<T>(s[mt][2 * kk][0], s[mt][2 * kk][1]);
        pa[mt][kk][1] = pack2<T>(s[mt][2 * kk][2], s[mt][2 * kk][3]);
        pa[mt][kk][2] = pack2<T>(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
        pa[mt][kk][3] = pack2<T>(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
      }

    // O += P V
    cp_async_wait<2 * kStages - 2>();  // V(t) has landed
    __syncthreads();
    const std::uint32_t sVst = kFp8 ? sVa : sVa + st * kStageBytes;
#pragma unroll
    for (int dp = 0; dp < kDT / 2; ++dp) {
      const std::uint32_t vaddr = sVst + (v_off ^ (dp * 32));
#pragma unroll
      for (int kk = 0; kk < BN / 16; ++kk) {
        std::uint32_t vb[4];
        ldsm_x4_trans(vb, vaddr + kk * 16 * kRowBytes);
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          mma16816<T>(o[mt][2 * dp], pa[mt][kk], vb[0], vb[1]);
          mma16816<T>(o[mt][2 * dp + 1], pa[mt][kk], vb[2], vb[3]);
        }
      }
    }
  }

  cp_async_wait<0>();
  __syncthreads();  // every copy into sQ has landed (also when no tile was visited)

  // Finalise: sinks join the denominator only; rows with no visible key give 0 and lse = -inf.
  const float sink2 = a.sinks ? a.sinks[h] * kLog2e : 0.0f;
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      float l = row_l[mt][hr];
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
      float m = row_m[mt][hr];
      float scale = 1.0f;
      if (a.sinks) {
        const float m_new = fmaxf(m, sink2);
        scale = fast_exp2(m - m_new);
        l = l * scale + fast_exp2(sink2 - m_new);
        m = m_new;
      }
      float inv = l > 0.0f ? scale / l : 0.0f;
      if constexpr (kFp8 != 0) inv *= a.out_scale;  // v_scale
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt) {
        o[mt][dt][hr * 2] *= inv;
        o[mt][dt][hr * 2 + 1] *= inv;
      }
      const int row = wrow + mt * 16 + g + hr * 8;
      if (a.lse && tq == 0 && j0 + row < r.q_len)
        a.lse[static_cast<std::int64_t>(r.q_begin + j0 + row) * a.num_qo_heads + h] =
            l > 0.0f ? (m + log2f(l)) * kLn2 : -INFINITY;
    }

  // O -> this warp's own rows of sQ (only this warp ever read them) -> global, 16 bytes per store.
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      const int row = wrow + mt * 16 + g + hr * 8;
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt)
        *reinterpret_cast<std::uint32_t*>(sQ + swz<D>(row, dt) + tq * 2) =
            pack2<T>(o[mt][dt][hr * 2], o[mt][dt][hr * 2 + 1]);
    }
  __syncwarp();
  T* const og = static_cast<T*>(a.o);
#pragma unroll
  for (int idx = lane; idx < kMT * 16 * kChunks; idx += 32) {
    const int row = wrow + idx / kChunks, c = idx % kChunks;
    const int j = j0 + row;
    if (j < r.q_len)
      *reinterpret_cast<uint4*>(og + (static_cast<std::int64_t>(r.q_begin + j) * a.num_qo_heads + h) * D + c * 8) =
          *reinterpret_cast<const uint4*>(sQ + swz<D>(row, c));
  }
}

template <typename T, int D, int kWarps, int kMT, int BN, int kStages, int kMinBlocks, int kFp8, bool kQ8>
void launch_tc(const PrefillArgs& a, int max_q_len, int batch_size, cudaStream_t stream) {
  using S = TcShape<D, kWarps, kMT, BN, kStages, kFp8>;
  auto* kernel = prefill_tc_kernel<T, D, kWarps, kMT, BN, kStages, kMinBlocks, kFp8, kQ8>;
  static const bool smem_set = [kernel] {
    ATTNBENCH_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, S::kSmemBytes));
    return true;
  }();
  (void)smem_set;
  const int q_tiles = (max_q_len + S::BM - 1) / S::BM;
  if (q_tiles > 65535)
    throw Unsupported("attention_prefill: max_q_len " + std::to_string(max_q_len) + " exceeds the launch limit");
  const dim3 grid(a.num_qo_heads, q_tiles, batch_size);
  kernel<<<grid, S::kThreads, S::kSmemBytes, stream>>>(a);
  ATTNBENCH_CUDA_CHECK_LAUNCH();
}

// (dtype, KV format, head_dim) -> tile configuration. Returns false where no tensor-core kernel exists.
// The fp8 pool (kFp8 1 / 2) takes the same tiles: its shared memory equals the 16-bit one (TcShape).
template <typename T, int kFp8 = 0, bool kQ8 = false>
bool dispatch_tc(const PrefillArgs& a, int max_q_len, int batch_size, cudaStream_t stream) {
  switch (a.head_dim) {
    case 64:
      launch_tc<T, 64, 4, 2, 64, 2, 2, kFp8, kQ8>(a, max_q_len, batch_size, stream);
      return true;
    case 128:
      launch_tc<T, 128, 4, 2, 64, 2, 2, kFp8, kQ8>(a, max_q_len, batch_size, stream);
      return true;
    case 256:
      launch_tc<T, 256, 8, 1, 64, 2, 1, kFp8, kQ8>(a, max_q_len, batch_size, stream);
      return true;
    default:
      return false;
  }
}

// An fp8 pool (kFmt 1 = e4m3, 2 = e5m2): the model dtype (bf16 / fp16) and an fp8 q (q8) pick the instance.
template <int kFmt>
bool dispatch_fp8(const PrefillArgs& a, bool bf16, bool q8, int max_q_len, int batch_size, cudaStream_t stream) {
  if (q8)
    return bf16 ? dispatch_tc<__nv_bfloat16, kFmt, true>(a, max_q_len, batch_size, stream)
                : dispatch_tc<__half, kFmt, true>(a, max_q_len, batch_size, stream);
  return bf16 ? dispatch_tc<__nv_bfloat16, kFmt>(a, max_q_len, batch_size, stream)
              : dispatch_tc<__half, kFmt>(a, max_q_len, batch_size, stream);
}

PrefillArgs make_args(const AttentionParams& p) {
  PrefillArgs a{};
  cuda_detail::set_attention_args(a, p);
  a.head_dim = p.head_dim;
  a.dtype = p.dtype;
  const bool cap = p.logits_soft_cap > 0.0f;
  // a.sm_scale = sm_scale * k_scale (an fp8 pool's; exactly sm_scale otherwise, kv_k_scale = 1).
  a.exp_scale = cap ? 1.0f : a.sm_scale * kLog2e;
  a.cap_in = cap ? a.sm_scale / p.logits_soft_cap : 0.0f;
  a.cap_out = cap ? p.logits_soft_cap * kLog2e : 0.0f;
  return a;
}

}  // namespace prefill_detail

namespace {

void check_params(const AttentionParams& p) {
  if (p.num_qo_heads <= 0 || p.num_kv_heads <= 0 || p.num_qo_heads % p.num_kv_heads != 0)
    throw Unsupported("attention_prefill: num_qo_heads (" + std::to_string(p.num_qo_heads) +
                      ") must be a positive multiple of num_kv_heads (" + std::to_string(p.num_kv_heads) + ")");
  if (p.addressing == KvAddressing::block_table && p.page_size <= 0)
    throw Unsupported("attention_prefill: block_table addressing needs page_size > 0");
  if (p.batch_size > 65535)
    throw Unsupported("attention_prefill: batch_size " + std::to_string(p.batch_size) + " exceeds 65535");
}

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

}  // namespace

void launch_attention_prefill_generic(const AttentionParams& p, void* stream) {
  using namespace prefill_detail;
  check_params(p);
  if (p.batch_size <= 0 || p.total_q <= 0 || p.max_q_len <= 0) return;
  if (p.head_dim <= 0 || p.head_dim > 256)
    throw Unsupported("attention_prefill: unsupported head_dim " + std::to_string(p.head_dim));
  launch_generic(make_args(p), p.max_q_len, p.batch_size, static_cast<cudaStream_t>(stream));
}

PrefillKernel prefill_kernel_from_env() {
  static const PrefillKernel choice = [] {
    const char* v = std::getenv("ATTNBENCH_PREFILL_KERNEL");
    const std::string s = v ? v : "";
    if (s.empty()) return PrefillKernel::automatic;
    if (s == "fa2") return PrefillKernel::fa2;
    if (s == "hopper") return PrefillKernel::hopper;
    throw InputError("ATTNBENCH_PREFILL_KERNEL: expected fa2 or hopper, got '" + s + "'");
  }();
  return choice;
}

void launch_attention_prefill(const AttentionParams& p, void* stream) {
  launch_attention_prefill_with(p, stream, prefill_kernel_from_env());
}

bool prefill_fa2_uses_tensor_cores(const AttentionParams& p) {
  if (p.dtype != DType::bf16 && p.dtype != DType::fp16) return false;
  if (p.head_dim != 64 && p.head_dim != 128 && p.head_dim != 256) return false;
  const DType kv = kv_load_dtype(p);
  if (kv != p.dtype && !is_fp8(kv)) return false;
  if (is_fp8(q_load_dtype(p)) && q_load_dtype(p) != kv) return false;  // fp8 q over ragged 16-bit k / v: generic
  // 16-byte vector copies; pages found by shift.
  return aligned16(p.q) && aligned16(p.k) && aligned16(p.v) && aligned16(p.o) &&
         (p.addressing != KvAddressing::block_table || cuda_detail::page_shift_of(p.page_size) >= 0);
}

void launch_attention_prefill_with(const AttentionParams& p, void* stream, PrefillKernel kernel) {
  using namespace prefill_detail;
  check_params(p);
  if (kernel == PrefillKernel::hopper && !prefill_hopper_usable())
    throw Unsupported("attention_prefill: the Hopper kernel needs an sm_90 GPU and a build with sm_90a code");
  // automatic: the Hopper kernel wherever it takes the call (sm_90, bf16 / fp16 with K / V in that dtype,
  // head_dim 64 / 128 / 256, every addressing mode), this kernel elsewhere. The Hopper kernel's variant 2
  // (deep + ping-pong) measured 1.6-1.9x this kernel on the H200 (2026-12-01, Llama-3.1-8B shape: ragged
  // 475-553 against 288-315 TFLOP/s, block table page 64 464-541 against 256-281): README, "Prefill kernels".
  // ATTNBENCH_PREFILL_KERNEL=fa2 keeps this kernel for every call.
  const bool hopper_first = kernel == PrefillKernel::hopper || kernel == PrefillKernel::automatic;
  if (hopper_first && launch_attention_prefill_hopper(p, stream)) return;
  if (p.batch_size <= 0 || p.total_q <= 0 || p.max_q_len <= 0) return;
  const PrefillArgs a = make_args(p);
  const auto s = static_cast<cudaStream_t>(stream);
  // The one place where (dtype, KV format, head_dim) picks a kernel: the tensor-core kernel where
  // prefill_fa2_uses_tensor_cores says so (bf16 / fp16 q and o; K / V in that dtype or an fp8 pool), else the
  // generic one (fp32; fp8 with other head dims or unaligned pointers; an fp8 q over ragged 16-bit k / v).
  if (prefill_fa2_uses_tensor_cores(p)) {
    const bool bf16 = p.dtype == DType::bf16, q8 = is_fp8(q_load_dtype(p));
    const int n = p.max_q_len, bs = p.batch_size;
    bool done = false;
    switch (kv_load_dtype(p)) {
      case DType::fp8_e4m3: done = dispatch_fp8<1>(a, bf16, q8, n, bs, s); break;
      case DType::fp8_e5m2: done = dispatch_fp8<2>(a, bf16, q8, n, bs, s); break;
      default:
        done = bf16 ? dispatch_tc<__nv_bfloat16>(a, p.max_q_len, p.batch_size, s)
                    : dispatch_tc<__half>(a, p.max_q_len, p.batch_size, s);
        break;
    }
    if (done) return;
  }
  if (is_fp8(kv_load_dtype(p)) || is_fp8(q_load_dtype(p))) {  // fp8 the tensor-core kernel does not take
    if (p.head_dim > 0 && p.head_dim <= 256) {
      launch_generic(a, p.max_q_len, p.batch_size, s);
      return;
    }
    throw Unsupported("attention_prefill: fp8 KV takes head_dim <= 256, got " + std::to_string(p.head_dim));
  }
  if (p.dtype == DType::fp32 && p.head_dim > 0 && p.head_dim <= 256) {
    launch_generic(a, p.max_q_len, p.batch_size, s);
    return;
  }
  throw Unsupported("attention_prefill: unsupported (dtype, head_dim) = (" + std::string(dtype_name(p.dtype)) +
                    ", " + std::to_string(p.head_dim) +
                    "): bf16 / fp16 take head_dim 64, 128 or 256 (16-byte aligned q, k, v, o; a power-of-two page "
                    "size); fp32 takes head_dim <= 256");
}

// Test hook (tests/gpu/prefill_attention_test.cpp): the tensor-core kernel's fp8 -> 16-bit conversion on n
// codes (n even), out[i] = the `model` (bf16 / fp16) bits of code in[i] read as `kv` (fp8_e4m3 / fp8_e5m2).
namespace prefill_detail {
template <typename T, __nv_fp8_interpretation_t kFmt>
__global__ void fp8_dequant_probe_kernel(const std::uint16_t* in, std::uint32_t* out, int pairs) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < pairs) out[i] = cuda_detail::fp8x2_to_16bit_pair<T, kFmt>(in[i]);
}
}  // namespace prefill_detail

void launch_fp8_dequant_probe(const void* in, void* out, int n, DType kv, DType model, void* stream) {
  using namespace prefill_detail;
  if (n <= 0 || n % 2 != 0 || !is_fp8(kv) || (model != DType::bf16 && model != DType::fp16))
    throw Unsupported("fp8_dequant_probe: needs an even n > 0, an fp8 kv and a bf16 / fp16 model dtype");
  const int pairs = n / 2;
  const auto s = static_cast<cudaStream_t>(stream);
  const auto* i16 = static_cast<const std::uint16_t*>(in);
  auto* o32 = static_cast<std::uint32_t*>(out);
  const int blocks = (pairs + 127) / 128;
  const bool e4m3 = kv == DType::fp8_e4m3;
  if (model == DType::bf16) {
    if (e4m3) fp8_dequant_probe_kernel<__nv_bfloat16, __NV_E4M3><<<blocks, 128, 0, s>>>(i16, o32, pairs);
    else fp8_dequant_probe_kernel<__nv_bfloat16, __NV_E5M2><<<blocks, 128, 0, s>>>(i16, o32, pairs);
  } else {
    if (e4m3) fp8_dequant_probe_kernel<__half, __NV_E4M3><<<blocks, 128, 0, s>>>(i16, o32, pairs);
    else fp8_dequant_probe_kernel<__half, __NV_E5M2><<<blocks, 128, 0, s>>>(i16, o32, pairs);
  }
  ATTNBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace attnbench
