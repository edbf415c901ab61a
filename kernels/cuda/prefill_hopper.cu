// attention_prefill on Hopper (sm_90a): the same op as kernels/cuda/prefill_attention.cu (extend / prefill,
// FlashInfer's verify; semantics in kernels/params.hpp, AttentionParams; CPU twin attention_prefill_cpu), for
// bf16 / fp16 storage with head_dim 64 / 128 / 256 over the three addressing modes. fp32 and fp8 KV stay on
// the FA2-class kernel, which is also the fallback on other GPUs and for shapes this kernel does not take.
// Selected by launch_attention_prefill (ATTNBENCH_PREFILL_KERNEL=fa2|hopper; unset: this kernel on sm_90 wherever
// it takes the call, the FA2-class kernel elsewhere).
// Checked by: ctest -L gpu -R Prefill (tests/gpu/prefill_attention_test.cpp runs every case on both kernels).
//
// Design. One CTA = 3 warpgroups over 128 query rows of one KV head: warpgroup 0 is the producer (setmaxnreg
// down to 40 registers), warpgroups 1 and 2 are consumers (232 registers) owning 64 rows each. GQA packing: the
// rows are (token, query head) pairs of the KV head, token-major, so a CTA covers 128 / group tokens and every
// K/V tile is loaded once for all query heads of the group.
//   - Producer: K and V tiles go into stages (joint K + V ones, or two rings at head_dim 256: see Shape), laid
//     out as wgmma's 128-byte swizzle wants (rows of 64 elements = 128 bytes, 16-byte chunk c of row r stored
//     at chunk c ^ (r % 8), head_dim split into 64-column blocks). Variant 3 loads a tile whose keys all lie below
//     kv_len by TMA (one thread; expect_tx on the stage's `full` mbarrier); otherwise each of the 128 threads
//     resolves the slots (ragged row / token index / page) of the rows it copies and issues 16-byte cp.async
//     copies, keys past the request zero-filled, signalled by cp.async.mbarrier.arrive.noinc (count 128). It
//     waits on a stage's `empty` mbarrier (count 256: every consumer thread) before reusing it: a joint stage or
//     a V stage is released once its P V has completed, a K stage of split rings once its Q K^T has.
//   - Q: each consumer warpgroup's 64 rows land once in its own swizzled tile, by TMA issued right after the
//     barrier set-up, ahead of every K / V load (variant 3, group dividing 64: one box {64 columns, group heads,
//     64 / group tokens} per 64-column block), else by the consumers' 16-byte copies issued before it.
//   - Consumers: per KV tile: S = Q K^T by
//     wgmma m64nBNk16 (A and B from shared memory, both K-major); online softmax in base 2 with a lazy max (O
//     is rescaled only when a row's max grows by more than 2^8), masking only tiles that cross a causal /
//     window / length boundary; P is converted to 16-bit registers and O += P V by the register-A wgmma
//     m64nDk16 with V read MN-major (its [key, d] tile through the descriptor's transposed mode). The next
//     tile's Q K^T is issued before this tile's P V, and its softmax runs while P V is in flight.
//   - Tile skipping: a CTA visits only the KV tiles some row of it can see; a consumer warpgroup whose rows
//     see none of a tile only passes the tile's barriers.
//   - Epilogue: O is normalised (sinks join the denominator), staged through the warpgroup's Q tile and written
//     by TMA stores (variant 3, where all 64 rows are queries of the request: the CTA ends as soon as TMA has
//     read the tile), else with 16-byte stores; lse in natural log.
// Measured (H200, bf16, causal; tests/gpu/prefill_attention_test.cpp's TFLOP/s print, both kernels in one
// process; results/h200/hopper/NOTES.md): variant 0 (the first version) 253-331 TFLOP/s ragged and 202-258 with
// a page-64 block table on the Llama-3.1-8B shape (32 / 8 heads, head_dim 128), about the FA2-class kernel's
// 212-315. Its leads: the producer resolved a paged tile's slots with dependent index loads (4 round trips per
// tile), one tile of lookahead at head_dim 128 (2 stages), no ping-pong between the consumer warpgroups.
// Variant 1 (slots one tile ahead through shared memory, one more stage) reached 312-513, variant 2 (also the
// ping-pong; the default) 328-553; Gemma-3-12B's head_dim 256 322-424 (window 1024: 313-368), head_dim 64
// 220-426. Against cuDNN's 530-607 on the Llama shape: 0.78-0.87 (results/h200/perf/anchors.csv). Variant 3
// (TMA loads, the default; results/h200/hopper/v3-tma/) 541-671 on the Llama shape; with split K / V rings at
// head_dim 256 (results/h200/hopper/split-kv-rings/) Gemma-3-12B 456-720 (window 1024: 437-527). What limits it
// now (ncu, Llama b=4 x 4096): each CTA's prologue (Q load, barrier set-up) and epilogue (O through shared
// memory) with no overlap with a neighbour's main loop, ~9 % of the samples. Two persistent grids that overlap
// them (results/h200/hopper/persistent/) measured no faster. Per-CTA clock64 stamps (results/h200/hopper/trace/)
// then showed where a CTA's ~4 us (head_dim 128) to ~9 us (256, window) beyond its tiles went: Q landed 2.1-3.9
// us after the CTA started (128 threads' 16-byte copies behind the producer's first stages), the first Q K^T
// 3.2-6.1 us in, and the epilogue's 16-byte stores took 1.0-1.8 us while the next CTA could not start (one CTA
// per SM). Q and O by TMA: +2-4 % on the Llama shape, Gemma-3 +1-4 % (window 1024: +5-9 %).
// Paired CTAs (kPair, the default at head_dim 64 / 128 with Q by TMA and an even number of KV heads;
// ATTNBENCH_HOPPER_PAIR): one CTA runs the same q tile for two KV heads in a row, the second head's first Q K^T
// beside the first's last P V, the first head's output stored from registers, so the prologue and epilogue above are
// paid once per two items. H100 (results/h100/hopper-pairs-2026-12-06/, the twentieth session; no H200 came), Llama
// shape ragged / page 64: b=4 x 4096 +4.8-5.1 %, b=16 x 1024 +14 %, b=1 +1-4 % (one noisy shape 0.96-0.99), head_dim
// 64 +2-13 %. The first version, one loop with the hand-over inside it, was 1-2 % slower at head_dim 128 and 4-12 %
// at 256 (the loop's code grew around the hand-over); peeled into three loops it is the kernel above. At head_dim 256
// the peeled carry spilled 248 bytes (the second head's scores beside the first's whole output), and pairs without
// the carry (the first head's last P V alone, then the second's first Q K^T) measured 0.88-0.99 of one head per CTA
// (windowed layers 0.88-0.93): head_dim 256 stays unpaired.
// The descriptor fields (start >> 4 in bits 0-13, leading byte offset >> 4 in 16-29, stride byte offset >> 4
// in 32-45, layout 1 = 128-byte swizzle in 62-63) and the canonical layouts (K-major: 8-row groups SBO = 1024
// bytes apart, a k16 step = +32 bytes within the 128-byte row; MN-major: LBO = the distance between 64-element
// blocks along N, SBO = between 8-row groups along K) are the PTX ISA's (matrix descriptor format, sm_90).
#include <cuda.h>  // CUtensorMap and its enums only: the encoder is reached through cudaGetDriverEntryPointByVersion
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/device_facts.cuh"
#include "kernels/cuda/device_ops.cuh"
#include "kernels/cuda/kernel_args.cuh"
#include "kernels/cuda/kernels_cuda.cuh"
#include "kernels/cuda/wgmma_ops.cuh"
#include "kernels/params.hpp"

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define ATTNBENCH_HOPPER_DEVICE 1
#endif

namespace attnbench {
namespace hopper_detail {

struct HopperArgs : cuda_detail::AttentionArgs {
  float exp_scale;  // softcap ? 1 : sm_scale * log2(e)   (as prefill_attention.cu)
  float cap_in;     // sm_scale / softcap
  float cap_out;    // softcap * log2(e)
  // TMA (variant 3): K / V as 3-D tensors {head_dim, num_kv_heads, slots} with boxes {64, 1, tma_box_rows} in the
  // 128-byte swizzle, the stage layout below. tma_box_rows = 0: every tile goes through cp.async.
  int tma_box_rows;
  // Q and O by TMA (variant 3, group dividing 64): [total_q, num_qo_heads, head_dim] as 3-D tensors
  // {head_dim, num_qo_heads, total_q} with boxes {64, group, 64 / group}: one consumer warpgroup's 64 rows of one
  // 64-column block, in the same 128-byte swizzle. q_tma = 0: Q by 16-byte copies, O by 16-byte stores.
  int q_tma;
  CUtensorMap tmap_q;
  CUtensorMap tmap_o;
  CUtensorMap tmap_k;  // (64-byte aligned by its type)
  CUtensorMap tmap_v;
};

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
constexpr float kLazyRescale = 8.0f;
constexpr int kThreads = 384;  // producer warpgroup + 2 consumer warpgroups
constexpr int kRowsPerWg = 64;
constexpr int kRows = 2 * kRowsPerWg;

template <int D>
struct Shape;
// Stages. Joint (head_dim 64 / 128, and variant 0): stage s holds K and V of one tile under one pair of barriers,
// freed once the tile's P V has completed; kStages in variant 0, kStagesDeepK in the `deep` variants (1-3,
// ATTNBENCH_HOPPER_VARIANT below). kSplitRings (head_dim 256, deep variants): K and V travel in two rings with
// their own barriers (FA3's layout), a K stage free again once the Q K^T that read it has completed, a V stage
// once its P V has, so the producer refills K half a tile earlier. Head_dim 256 (64-key tiles, 64 KiB of Q) had
// two joint stages, which gave the producer no lookahead (ncu: 19 % of the consumers' samples waiting for data);
// three K and two V stages fit beside Q in 224 KiB: +21-45 % (results/h200/hopper/split-kv-rings/). At head_dim 128
// the split rings (3 + 3 stages, the same memory) measured 2-3 % slower than joint ones, so it keeps them.
template <>
struct Shape<64> {
  static constexpr int BN = 128, kStages = 3, kStagesDeepK = 4, kStagesDeepV = 4;
  static constexpr bool kSplitRings = false;
};
template <>
struct Shape<128> {
  static constexpr int BN = 128, kStages = 2, kStagesDeepK = 3, kStagesDeepV = 3;
  static constexpr bool kSplitRings = false;
};
template <>
struct Shape<256> {
  static constexpr int BN = 64, kStages = 2, kStagesDeepK = 3, kStagesDeepV = 2;
  static constexpr bool kSplitRings = true;
};

template <int D, bool kDeep>
struct Layout {
  static constexpr int BN = Shape<D>::BN;
  static constexpr bool kSplit = kDeep && Shape<D>::kSplitRings;
  static constexpr int kStagesK = kDeep ? Shape<D>::kStagesDeepK : Shape<D>::kStages;
  static constexpr int kStagesV = kSplit ? Shape<D>::kStagesDeepV : kStagesK;
  static constexpr int kQBytes = kRowsPerWg * D * 2;  // one consumer warpgroup's Q tile
  static constexpr int kTileBytes = BN * D * 2;       // one K (or V) stage
  static constexpr int kSlotOffset = 2 * kQBytes + (kStagesK + kStagesV) * kTileBytes;  // deep: int [2][BN]
  static constexpr int kBarOffset = kSlotOffset + (kDeep ? 2 * BN * 4 : 0);
  static constexpr int kQBarOffset = kBarOffset + 16 * (kStagesK + kStagesV);  // Q landed, per consumer warpgroup
  static constexpr int kSmemBytes = kQBarOffset + 16 + 1024;                     // + alignment slack
  static_assert(D % 64 == 0 && BN % 16 == 0);
  static_assert(kSmemBytes <= 227 * 1024);
};

// Byte offset of 16-byte chunk c of row `row` in a [rows, D] tile stored as D / 64 blocks of [rows, 64] with the
// 128-byte swizzle (the tile base is 1024-byte aligned, so bits 7-9 of the offset are row % 8).
__device__ __forceinline__ std::uint32_t swz(int row, int c, int rows) {
  return static_cast<std::uint32_t>((c >> 3) * rows * 128 + row * 128 + (((c & 7) ^ (row & 7)) << 4));
}

using cuda_detail::cp_async_16;  // kernels/cuda/device_ops.cuh
using cuda_detail::pack2;
using cuda_detail::smem_addr;

#ifdef ATTNBENCH_HOPPER_DEVICE
__device__ __forceinline__ void cp_async_commit_wait_all() {
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
}
__device__ __forceinline__ void cp_async_mbar_arrive_noinc(std::uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_init(std::uint32_t bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, int parity) {
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// One box of a 3-D tensor map (coordinates innermost first) into shared memory; completes `bytes` on `bar`.
__device__ __forceinline__ void tma_load_3d(std::uint32_t dst, const CUtensorMap* map, int c0, int c1, int c2,
                                            std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}
// One box of a 3-D tensor into the L2 only (no shared memory, no barrier).
__device__ __forceinline__ void tma_prefetch_3d(const CUtensorMap* map, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.tile [%0, {%1, %2, %3}];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}
// One box of shared memory into a 3-D tensor (coordinates innermost first); bulk-group completion.
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, std::uint32_t src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void named_bar_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_bar_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving register reads / writes across a wgmma issue or wait.
template <int N>
__device__ __forceinline__ void fence_regs(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N>
__device__ __forceinline__ void fence_regs(std::uint32_t (&r)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(r[i][e])::"memory");
}

// Shared-memory matrix descriptor, 128-byte swizzle.
__device__ __forceinline__ std::uint64_t make_desc(std::uint32_t saddr, std::uint32_t lbo, std::uint32_t sbo) {
  return static_cast<std::uint64_t>((saddr & 0x3FFFF) >> 4) | (static_cast<std::uint64_t>((lbo >> 4) & 0x3FFF) << 16) |
         (static_cast<std::uint64_t>((sbo >> 4) & 0x3FFF) << 32) | (std::uint64_t{1} << 62);
}

template <typename T, int N>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], std::uint64_t da, std::uint64_t db, int scale_d) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    if constexpr (N == 64) wgmma_ss_m64n64k16_bf16(d, da, db, scale_d);
    else wgmma_ss_m64n128k16_bf16(d, da, db, scale_d);
  } else {
    if constexpr (N == 64) wgmma_ss_m64n64k16_f16(d, da, db, scale_d);
    else wgmma_ss_m64n128k16_f16(d, da, db, scale_d);
  }
}
template <typename T, int N>
__device__ __forceinline__ void wgmma_rs(float (&d)[N / 2], const std::uint32_t (&a)[4], std::uint64_t db) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    if constexpr (N == 64) wgmma_rs_m64n64k16_bf16(d, a, db);
    else if constexpr (N == 128) wgmma_rs_m64n128k16_bf16(d, a, db);
    else wgmma_rs_m64n256k16_bf16(d, a, db);
  } else {
    if constexpr (N == 64) wgmma_rs_m64n64k16_f16(d, a, db);
    else if constexpr (N == 128) wgmma_rs_m64n128k16_f16(d, a, db);
    else wgmma_rs_m64n256k16_f16(d, a, db);
  }
}

__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// Row of key m (0 <= m < kv_len) of request i in k / v, in units of [num_kv_heads, head_dim] rows (block_table:
// the page size is 1 << page_shift; the launcher checks it).
__device__ __forceinline__ int kv_slot(const HopperArgs& a, int i, int kv_base, int m) {
  switch (a.addressing) {
    case static_cast<int>(KvAddressing::ragged):
      return kv_base + m;
    case static_cast<int>(KvAddressing::token_indices):
      return a.kv_indices[kv_base + m];
    default: {
      const int page_idx = m >> a.page_shift;
      const int in_page = m - (page_idx << a.page_shift);
      return (a.page_table[static_cast<std::int64_t>(i) * a.page_table_stride + page_idx] << a.page_shift) + in_page;
    }
  }
}
#endif  // ATTNBENCH_HOPPER_DEVICE

// Variants (ATTNBENCH_HOPPER_VARIANT; the default is 3: both of these and TMA loads):
//   kDeep: the producer resolves a tile's slots one tile ahead (thread t < BN loads row t's index while the
//     producer waits for a free stage) and passes them through shared memory, instead of each copying thread
//     resolving its rows' slots with dependent loads; one more stage at head_dim 64 / 128.
//   kPingPong: the two consumer warpgroups take turns issuing their wgmma batches (named barriers 4 and 5), so
//     that one's softmax runs while the other's matrix products do; both then visit every tile of the CTA.
//   kPair (with both, and Q by TMA): one CTA runs the same q tile of two KV heads (2 * blockIdx.x and the next)
//     one after the other, as one sequence of tiles: the second head's first Q K^T is issued beside the first
//     head's last P V, and the first head's output leaves from registers while the second's tiles run, so a
//     CTA's prologue (Q and first tiles landing) and epilogue (O through shared memory) are paid once per two
//     items of work. Both heads see the same keys of the same request, so the tile list, the masks and the
//     pages are the same; only the head offsets differ.
template <typename T, int D, bool kDeep, bool kPingPong, bool kPair = false>
__global__ void __launch_bounds__(kThreads, 1) prefill_hopper_kernel(const __grid_constant__ HopperArgs a) {
#ifdef ATTNBENCH_HOPPER_DEVICE
  using L = Layout<D, kDeep>;
  static_assert(!kPair || (kDeep && kPingPong), "kPair runs on variant 3's schedule (and needs Q by TMA)");
  static_assert(!kPair || D <= 128, "head_dim 256 is not paired: the hand-over's registers do not fit");
  constexpr int BN = L::BN, KS = L::kStagesK, VS = L::kStagesV;
  constexpr int kCpr = D / 8;  // 16-byte chunks per row

  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const std::uint32_t raw = smem_addr(smem_raw);
  const std::uint32_t base = (raw + 1023u) & ~1023u;
  unsigned char* const smem = smem_raw + (base - raw);
  const std::uint32_t sQ = base;  // consumer warpgroup w: sQ + w * kQBytes
  const std::uint32_t sK = sQ + 2 * L::kQBytes;
  const std::uint32_t sV = sK + KS * L::kTileBytes;
  int* const slot_buf = reinterpret_cast<int*>(smem + L::kSlotOffset);  // [2][BN] (kDeep)
  // mbarriers, 8 bytes each: full / empty of K stage s, then (split rings) of V stage s; joint stages use the K
  // ones for both.
  constexpr bool kSplit = L::kSplit;
  const std::uint32_t bar_full_k = base + L::kBarOffset, bar_empty_k = bar_full_k + 8 * KS;
  const std::uint32_t bar_full_v = kSplit ? bar_empty_k + 8 * KS : bar_full_k;
  const std::uint32_t bar_empty_v = kSplit ? bar_full_v + 8 * VS : bar_empty_k;
  const std::uint32_t bar_q = base + L::kQBarOffset;  // q_tma: warpgroup w's Q tile has landed (bar_q + 8 * w)

  // kPair: items (KV heads) kvh and kvh + 1, in that order; else the one item kvh. kvh_last: the item whose output
  // leaves through the staged epilogue below (the first item's, paired, is stored straight from registers).
  constexpr int kItems = kPair ? 2 : 1;
  const int kvh = kItems * static_cast<int>(blockIdx.x), b = blockIdx.z;
  const int kvh_last = kvh + kItems - 1;
  const cuda_detail::RequestView r = cuda_detail::request_view(a, b);
  const int group = a.group;
  const int tpt = kRows / group;  // tokens per CTA; rows [tpt * group, 128) are idle
  // The order of a request's q tiles over blockIdx.y (the hardware starts CTAs about in that order, KV head
  // fastest). No window: the heaviest (causal) tiles first, so that the light ones fill the grid's tail. A
  // window: first the tiles whose window is whole (equal work), ascending, so that a CTA's first K / V tile (its
  // window's start) is one its predecessors have just read, in the L2, and the tile nobody has read yet (the
  // diagonal) is its last, fetched stages ahead; descending, each CTA began with a tile nobody had read (windowed
  // Gemma-3 shapes +1.4-4.1 %, results/h200/hopper/window-order/). Then the tiles whose window the sequence's
  // start cuts (fewer tiles), descending, to fill the tail as before.
  int q_tile = gridDim.y - 1 - blockIdx.y;
  if (a.window_left >= 0) {
    // Tiles t < cut have j0 = t * tpt with q_pos0 + j0 - window_left < kv_pos0: their window starts at key 0.
    const long long short_keys = static_cast<long long>(a.window_left) + r.kv_pos0 - r.q_pos0;
    const long long cut_tiles = short_keys <= 0 ? 0 : (short_keys + tpt - 1) / tpt;
    const int cut = cut_tiles < gridDim.y ? static_cast<int>(cut_tiles) : static_cast<int>(gridDim.y);
    const int whole = static_cast<int>(gridDim.y) - cut;
    q_tile = static_cast<int>(blockIdx.y) < whole ? cut + static_cast<int>(blockIdx.y) : q_tile;
  }
  const int rows_used = tpt * group;
  const int j0 = q_tile * tpt;
  if (j0 >= r.q_len) return;
  const int jlast = min(j0 + tpt, r.q_len) - 1;

  // Keys any row of this CTA can see: [lo, hi); tiles [t_begin, t_end).
  int hi = r.kv_len;
  if (a.causal) hi = min(hi, r.q_pos0 + jlast - r.kv_pos0 + 1);
  int lo = 0;
  if (a.window_left >= 0) lo = max(0, r.q_pos0 + j0 - a.window_left - r.kv_pos0);
  const int t_begin = hi > lo ? lo / BN : 0;
  const int t_end = hi > lo ? (hi + BN - 1) / BN : 0;
  const int n_tiles = t_end - t_begin;

  const int tid = threadIdx.x;
  const int wg = tid >> 7;
  const int tokens_per_wg = kRowsPerWg / group;  // q_tma: group divides 64
  if (wg > 0 && !a.q_tma) {
    // Q rows of consumer warpgroup wg - 1 -> its shared tile (idle rows and rows past the request: zeros), issued
    // first thing: Q is on every CTA's critical path (waited for after the barrier set-up, in the consumers).
    const int w = wg - 1, ctid = tid - 128 * wg;
    const std::uint32_t sQw = sQ + w * L::kQBytes;
    const T* const qg = static_cast<const T*>(a.q);
    for (int idx = ctid; idx < kRowsPerWg * kCpr; idx += 128) {
      const int rr = idx / kCpr, c = idx % kCpr;
      const int lr = w * kRowsPerWg + rr;
      const int tok = lr / group;
      const int j = j0 + tok;
      const bool valid = lr < rows_used && j < r.q_len;
      const T* src =
          valid ? qg + (static_cast<std::int64_t>(r.q_begin + j) * a.num_qo_heads + kvh * group + (lr - tok * group)) * D +
                      c * 8
                : qg;
      cp_async_16(sQw + swz(rr, c, kRowsPerWg), src, valid);
    }
  }
  if (tid == 0) {
    for (int s = 0; s < KS; ++s) {
      mbar_init(bar_full_k + 8 * s, 128);
      mbar_init(bar_empty_k + 8 * s, 2 * 128);
    }
    for (int s = 0; s < (kSplit ? VS : 0); ++s) {
      mbar_init(bar_full_v + 8 * s, 128);
      mbar_init(bar_empty_v + 8 * s, 2 * 128);
    }
    if (a.q_tma) {
      mbar_init(bar_q, 1);
      mbar_init(bar_q + 8, 1);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (a.q_tma && tid == 0) {
    // Both consumer warpgroups' Q tiles by TMA, before any K / V load is issued: rows past total_q read as zeros;
    // rows of tokens past this request (another request's queries) are computed on and never stored.
#pragma unroll
    for (int w = 0; w < 2; ++w) {
      mbar_arrive_expect_tx(bar_q + 8 * w, L::kQBytes);
#pragma unroll
      for (int cb = 0; cb < D / 64; ++cb)
        tma_load_3d(sQ + w * L::kQBytes + cb * kRowsPerWg * 128, &a.tmap_q, cb * 64, kvh * group,
                    r.q_begin + j0 + w * tokens_per_wg, bar_q + 8 * w);
    }
    if constexpr (kPair) {
      // The second item's Q into the L2 now; each consumer warpgroup loads it into its tile once its last Q K^T
      // of the first item has completed.
#pragma unroll
      for (int w = 0; w < 2; ++w)
#pragma unroll
        for (int cb = 0; cb < D / 64; ++cb)
          tma_prefetch_3d(&a.tmap_q, cb * 64, kvh_last * group, r.q_begin + j0 + w * tokens_per_wg);
    }
  }

  if (wg == 0) {
    // ---------------------------------------------------------------- producer
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
    constexpr int kRpp = 128 / kCpr;  // rows per pass
    constexpr int kPasses = BN / kRpp;
    static_assert(BN % kRpp == 0);
    const int prow = tid / kCpr, pc = tid % kCpr;
    const T* const kg = static_cast<const T*>(a.k) + kvh * D + pc * 8;
    const T* const vg = static_cast<const T*>(a.v) + kvh * D + pc * 8;
    const std::int64_t stride = static_cast<std::int64_t>(a.num_kv_heads) * D;
    if constexpr (kDeep) {
      // Double-buffered slots: the barrier of tile i + 1 orders every read of buffer i & 1 (tile i) before the
      // writes of tile i + 2.
      auto slot_of = [&](int i) {
        const int m = (t_begin + i) * BN + tid;
        return tid < BN && m < r.kv_len ? kv_slot(a, b, r.kv_base, m) : -1;
      };
      // kPair: the tiles of item 0, then the same tiles (the same keys and slots) of item 1: flattened tile i is
      // tile i % n_tiles of item i / n_tiles, in the rings' order.
      const int n_total = kItems * n_tiles;
      int next_slot = n_tiles > 0 ? slot_of(0) : -1;
      const int box_rows = a.tma_box_rows;
      if (box_rows > 0 && tid == 0) {
        asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(&a.tmap_k)) : "memory");
        asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(&a.tmap_v)) : "memory");
      }
      for (int i = 0; i < n_total; ++i) {
        const int item = kPair && i >= n_tiles ? 1 : 0;
        const int li = i - item * n_tiles;  // the tile within the item
        int* const sb = slot_buf + (i & 1) * BN;
        if (tid < BN) sb[tid] = next_slot;
        named_bar_sync(3, 128);
        if (i + 1 < n_total) next_slot = slot_of(li + 1 < n_tiles ? li + 1 : 0);
        // A tile of keys all below kv_len goes by TMA: one thread issues a box per (run of box_rows contiguous
        // slots, 64-column block), every box row a valid key (so no bounds are needed beyond the request's); the
        // others arrive. A tile that crosses kv_len takes the 16-byte copies, which zero-fill the keys past the
        // request (V rows of garbage would turn P = 0 into NaN in P V). K first, then V (split rings: each into
        // its own ring, each signalled; joint: one signal for both, before the boxes or after the copies).
        const bool tma = box_rows > 0 && (t_begin + li + 1) * BN <= r.kv_len;
        auto load = [&](std::uint32_t dst, const CUtensorMap* map, const T* src, std::uint32_t full, bool is_v) {
          if (tma) {
            const bool signal = kSplit || !is_v;
            if (tid == 0) {
              if (signal) mbar_arrive_expect_tx(full, (kSplit ? 1 : 2) * L::kTileBytes);
              for (int r0 = 0; r0 < BN; r0 += box_rows) {
                const int slot = sb[r0];
#pragma unroll
                for (int cb = 0; cb < D / 64; ++cb)  // 1024-byte aligned boxes: box_rows % 8 == 0
                  tma_load_3d(dst + cb * BN * 128 + r0 * 128, map, cb * 64, kvh + item, slot, full);
              }
            } else if (signal) {
              mbar_arrive(full);
            }
            return;
          }
#pragma unroll
          for (int p = 0; p < kPasses; ++p) {
            const int row = prow + p * kRpp;
            const int slot = sb[row];
            const bool valid = slot >= 0;
            cp_async_16(dst + swz(row, pc, BN), src + item * D + (valid ? static_cast<std::int64_t>(slot) * stride : 0),
                        valid);
          }
          if (kSplit || is_v) cp_async_mbar_arrive_noinc(full);  // fires once this thread's copies so far have landed
        };
        const int sk = i % KS, sv = i % VS;
        if (i >= KS) mbar_wait(bar_empty_k + 8 * sk, ((i / KS) - 1) & 1);
        load(sK + sk * L::kTileBytes, &a.tmap_k, kg, bar_full_k + 8 * sk, false);
        if (kSplit && i >= VS) mbar_wait(bar_empty_v + 8 * sv, ((i / VS) - 1) & 1);
        load(sV + sv * L::kTileBytes, &a.tmap_v, vg, bar_full_v + 8 * sv, true);
      }
    } else
    for (int i = 0; i < n_tiles; ++i) {
      const int n0 = (t_begin + i) * BN;
      auto load = [&](std::uint32_t dst, const T* src) {
#pragma unroll 4
        for (int p = 0; p < kPasses; ++p) {
          const int row = prow + p * kRpp;
          const int m = n0 + row;
          const bool valid = m < r.kv_len;
          const std::int64_t off = valid ? static_cast<std::int64_t>(kv_slot(a, b, r.kv_base, m)) * stride : 0;
          cp_async_16(dst + swz(row, pc, BN), src + off, valid);
        }
      };
      static_assert(!kSplit);  // variant 0: joint stages
      const int st = i % KS;
      if (i >= KS) mbar_wait(bar_empty_k + 8 * st, ((i / KS) - 1) & 1);
      load(sK + st * L::kTileBytes, kg);
      load(sV + st * L::kTileBytes, vg);
      cp_async_mbar_arrive_noinc(bar_full_k + 8 * st);
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
  } else {
    // ---------------------------------------------------------------- consumers
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    const int w = wg - 1;
    const int ctid = tid - 128 * wg;
    const int warp = ctid >> 5, lane = ctid & 31;
    const int g = lane >> 2, tq = lane & 3;
    const std::uint32_t sQw = sQ + w * L::kQBytes;

    // Q was issued above: by TMA right after the barrier set-up (the async proxy, which wgmma reads through), or
    // by 16-byte copies before it.
    if (a.q_tma) {
      mbar_wait(bar_q + 8 * w, 0);
    } else {
      cp_async_commit_wait_all();
      fence_proxy_async();
      named_bar_sync(1 + w, 128);
    }

    // This thread's two rows (g and g + 8 of its warp's 16).
    int qpos[2], head[2], jrow[2];
    bool rvalid[2];
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      const int lr = w * kRowsPerWg + warp * 16 + g + hr * 8;
      const int tok = lr / group;
      jrow[hr] = j0 + tok;
      rvalid[hr] = lr < rows_used && jrow[hr] < r.q_len;
      qpos[hr] = r.q_pos0 + jrow[hr];
      head[hr] = kvh * group + (lr - tok * group);
    }
    // This warpgroup's tokens [tok_first, tok_last] and the tiles its rows can see.
    const int tok_first = (w * kRowsPerWg) / group;
    const int tok_last = min(min((w * kRowsPerWg + kRowsPerWg - 1) / group, tpt - 1), r.q_len - 1 - j0);
    int i_lo = 0, i_hi = 0;
    if (kPingPong) {
      i_hi = kItems * n_tiles;  // equal turn counts in both warpgroups; the mask covers what this warpgroup cannot see
    } else if (w * kRowsPerWg < rows_used && tok_first <= tok_last) {
      int whi = r.kv_len;
      if (a.causal) whi = min(whi, r.q_pos0 + j0 + tok_last - r.kv_pos0 + 1);
      int wlo = 0;
      if (a.window_left >= 0) wlo = max(0, r.q_pos0 + j0 + tok_first - a.window_left - r.kv_pos0);
      if (whi > wlo) {
        i_lo = max(wlo / BN, t_begin) - t_begin;
        i_hi = min((whi + BN - 1) / BN, t_end) - t_begin;
        if (i_hi < i_lo) i_hi = i_lo;
      }
    }
    const int qpos_first = r.q_pos0 + j0 + tok_first, qpos_last = r.q_pos0 + j0 + tok_last;

    const std::uint64_t q_desc = make_desc(sQw, 16, 1024);
    const std::uint64_t k_desc = make_desc(sK, 16, 1024);
    const std::uint64_t v_desc = make_desc(sV, BN * 128, 1024);

    float o[D / 2];
    float s[BN / 2];
    std::uint32_t pa[BN / 16][4];
#pragma unroll
    for (int e = 0; e < D / 2; ++e) o[e] = 0.0f;
    float row_m[2] = {-INFINITY, -INFINITY}, row_l[2] = {0.0f, 0.0f};

    auto issue_qk = [&](int i) {
      const int st = i % KS;
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        const std::uint32_t qoff = (kk >> 2) * kRowsPerWg * 128 + (kk & 3) * 32;
        const std::uint32_t koff = st * L::kTileBytes + (kk >> 2) * BN * 128 + (kk & 3) * 32;
        wgmma_ss<T, BN>(s, q_desc + (qoff >> 4), k_desc + (koff >> 4), kk > 0 ? 1 : 0);
      }
    };
    auto issue_pv = [&](int i) {
      const int st = i % VS;
#pragma unroll
      for (int kk = 0; kk < BN / 16; ++kk) {
        const std::uint32_t voff = st * L::kTileBytes + kk * 16 * 128;
        wgmma_rs<T, D>(o, pa[kk], v_desc + (voff >> 4));
      }
    };
    // Soft cap, mask, online softmax of tile i held in s (exponentials written back into s); returns the
    // factors O must be scaled by, and whether any row of the warp needs it.
    float alpha[2];
    // Flattened tile i (kPair: item i / n_tiles) -> its tile within the item.
    auto local = [&](int i) { return kPair && i >= n_tiles ? i - n_tiles : i; };
    auto softmax = [&](int i) -> bool {
      const int n0 = (t_begin + local(i)) * BN;
      if (a.soft_cap > 0.0f) {
#pragma unroll
        for (int e = 0; e < BN / 2; ++e) s[e] = tanhf(s[e] * a.cap_in) * a.cap_out;
      }
      const bool need_mask = n0 + BN > r.kv_len || (a.causal && r.kv_pos0 + n0 + BN - 1 > qpos_first) ||
                             (a.window_left >= 0 && r.kv_pos0 + n0 < qpos_last - a.window_left);
      if (need_mask) {
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          int khi = r.kv_len;
          if (a.causal) khi = min(khi, qpos[hr] - r.kv_pos0 + 1);
          const int klo = a.window_left >= 0 ? qpos[hr] - a.window_left - r.kv_pos0 : INT_MIN;
#pragma unroll
          for (int nt = 0; nt < BN / 8; ++nt)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int m = n0 + nt * 8 + tq * 2 + e;
              if (m < klo || m >= khi) s[nt * 4 + hr * 2 + e] = -INFINITY;
            }
        }
      }
      bool rescale = false;
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        float mx = -INFINITY;
#pragma unroll
        for (int nt = 0; nt < BN / 8; ++nt) mx = fmaxf(mx, fmaxf(s[nt * 4 + hr * 2], s[nt * 4 + hr * 2 + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float cand = mx * a.exp_scale;
        alpha[hr] = 1.0f;
        if (cand > row_m[hr] + kLazyRescale) {  // also: the row's first visible key (max was -inf)
          alpha[hr] = fast_exp2(row_m[hr] - cand);
          row_m[hr] = cand;
          rescale = true;
        }
        const float m_use = row_m[hr] == -INFINITY ? 0.0f : row_m[hr];
        float sum = 0.0f;
#pragma unroll
        for (int nt = 0; nt < BN / 8; ++nt)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const float pv = fast_exp2(fmaf(s[nt * 4 + hr * 2 + e], a.exp_scale, -m_use));
            s[nt * 4 + hr * 2 + e] = pv;
            sum += pv;
          }
        row_l[hr] = row_l[hr] * alpha[hr] + sum;
      }
      return __any_sync(0xffffffffu, rescale);
    };
    auto to_p = [&]() {
#pragma unroll
      for (int kk = 0; kk < BN / 16; ++kk) {
        pa[kk][0] = pack2<T>(s[(2 * kk) * 4 + 0], s[(2 * kk) * 4 + 1]);
        pa[kk][1] = pack2<T>(s[(2 * kk) * 4 + 2], s[(2 * kk) * 4 + 3]);
        pa[kk][2] = pack2<T>(s[(2 * kk + 1) * 4 + 0], s[(2 * kk + 1) * 4 + 1]);
        pa[kk][3] = pack2<T>(s[(2 * kk + 1) * 4 + 2], s[(2 * kk + 1) * 4 + 3]);
      }
    };
    // The rings' barriers: wait until tile i's K (V) has landed; release its stage once the wgmma that read it has
    // completed (every consumer thread arrives).
    // A tile the producer copied with cp.async (generic proxy) needs a proxy fence before wgmma (async proxy)
    // reads it; a TMA tile (async proxy already) does not: the same test as the producer's.
    auto by_tma = [&](int i) { return kDeep && a.tma_box_rows > 0 && (t_begin + local(i) + 1) * BN <= r.kv_len; };
    auto wait_k = [&](int i) {
      mbar_wait(bar_full_k + 8 * (i % KS), (i / KS) & 1);
      if (!by_tma(i)) fence_proxy_async();
    };
    // Joint stages: tile i's V arrived with its K (every wait_v(i) follows this thread's wait_k(i)), and the stage
    // is released once, after P V.
    auto wait_v = [&](int i) {
      if (!kSplit) return;
      mbar_wait(bar_full_v + 8 * (i % VS), (i / VS) & 1);
      if (!by_tma(i)) fence_proxy_async();
    };
    auto release_k = [&](int i) {
      if (kSplit) mbar_arrive(bar_empty_k + 8 * (i % KS));
    };
    auto release_v = [&](int i) { mbar_arrive(bar_empty_v + 8 * (i % VS)); };
    auto pass_tile = [&](int i) {  // a tile this warpgroup's rows cannot see: only its barriers
      wait_k(i);
      release_k(i);
      wait_v(i);
      release_v(i);
    };

    // Turns (kPingPong): warpgroup w issues after bar.sync(4 + w) and then lets the other one go; warpgroup 1
    // lets warpgroup 0 start and skips its last hand-over, so every barrier phase completes (n_tiles + 1 turns
    // each). Without kPingPong these are no-ops.
    const bool pp = kPingPong && n_tiles > 0;
    auto turn_wait = [&] {
      if (pp) named_bar_sync(4 + w, 256);
    };
    auto turn_pass = [&] {
      if (pp) named_bar_arrive(4 + (1 - w), 256);
    };
    if (pp && w == 1) named_bar_arrive(4, 256);

    // Normalise o by the row state (mm, ll): the sinks of heads head[hr] + head_off join the denominator only; rows
    // with no visible key give 0 and lse = -inf. Writes lse.
    auto finalise = [&](const float (&mm)[2], const float (&ll)[2], int head_off) {
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        float l = ll[hr];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        float m = mm[hr];
        float scale = 1.0f;
        if (a.sinks) {
          const float sink2 = a.sinks[head[hr] + head_off] * kLog2e;
          const float m_new = fmaxf(m, sink2);
          scale = fast_exp2(m - m_new);
          l = l * scale + fast_exp2(sink2 - m_new);
          m = m_new;
        }
        const float inv = l > 0.0f ? scale / l : 0.0f;
#pragma unroll
        for (int dt = 0; dt < D / 8; ++dt) {
          o[dt * 4 + hr * 2] *= inv;
          o[dt * 4 + hr * 2 + 1] *= inv;
        }
        if (a.lse && tq == 0 && rvalid[hr])
          a.lse[static_cast<std::int64_t>(r.q_begin + jrow[hr]) * a.num_qo_heads + head[hr] + head_off] =
              l > 0.0f ? (m + log2f(l)) * kLn2 : -INFINITY;
      }
    };
    // kPair: the first item's output straight from registers (its Q tile, the staging area, holds the second
    // item's Q by then). Lanes tq and tq ^ 1 swap one word so that each holds 4 consecutive values of its row:
    // 8-byte stores, lanes 0-3 covering one 32-byte sector of a row per pair of 8-column blocks.
    auto store_direct = [&](int head_off) {
      T* const og = static_cast<T*>(a.o);
      const bool odd = (tq & 1) != 0;
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        T* const orow =
            og + (static_cast<std::int64_t>(r.q_begin + jrow[hr]) * a.num_qo_heads + head[hr] + head_off) * D;
#pragma unroll
        for (int k = 0; k < D / 16; ++k) {
          const std::uint32_t wa = pack2<T>(o[(2 * k) * 4 + hr * 2], o[(2 * k) * 4 + hr * 2 + 1]);
          const std::uint32_t wb = pack2<T>(o[(2 * k + 1) * 4 + hr * 2], o[(2 * k + 1) * 4 + hr * 2 + 1]);
          const std::uint32_t got = __shfl_xor_sync(0xffffffffu, odd ? wa : wb, 1);
          const uint2 v = odd ? make_uint2(got, wb) : make_uint2(wa, got);
          const int col = odd ? (2 * k + 1) * 8 + (tq - 1) * 2 : (2 * k) * 8 + tq * 2;
          if (rvalid[hr]) *reinterpret_cast<uint2*>(orow + col) = v;
        }
      }
    };
    // kPair: the second item's Q into this warpgroup's tile, once every Q K^T of the first item has completed
    // (the barrier: in all four warps); it was prefetched into the L2 at the start.
    auto load_second_q = [&]() {
      named_bar_sync(1 + w, 128);
      if (ctid == 0) {
        mbar_arrive_expect_tx(bar_q + 8 * w, L::kQBytes);
#pragma unroll
        for (int cb = 0; cb < D / 64; ++cb)
          tma_load_3d(sQw + cb * kRowsPerWg * 128, &a.tmap_q, cb * 64, kvh_last * group,
                      r.q_begin + j0 + w * tokens_per_wg, bar_q + 8 * w);
      }
    };
    float m_first[2], l_first[2];  // kPair: the first item's row state

    for (int i = 0; i < i_lo; ++i) pass_tile(i);
    if (i_lo < i_hi) {
      wait_k(i_lo);
      fence_regs(s);
      turn_wait();
      wgmma_fence();
      issue_qk(i_lo);
      wgmma_commit();
      turn_pass();
      wgmma_wait<0>();
      fence_regs(s);
      release_k(i_lo);
      if (kPair && i_lo == n_tiles - 1) load_second_q();
      softmax(i_lo);  // O is zero: no rescale
      to_p();
      // Steady state (the last tile is peeled off, so that every wgmma group here is issued unconditionally):
      // Q K^T of tile i + 1 and P V of tile i in flight together, then tile i + 1's softmax while P V runs. The
      // K stage of tile i + 1 is released as soon as its Q K^T has completed, the V stage of tile i after P V.
      // kPair: at i + 1 == n_tiles the first item's last P V runs beside the second item's first Q K^T (on the
      // second Q, waited for before the turn); the first item's row state is put aside before the second's first
      // softmax, and its output, complete once P V has, is normalised and stored before O restarts from zero.
      // One step of the steady state; kStart (kPair only): the step whose Q K^T is the second item's first.
      auto step = [&](int i, auto start_tag) {
        constexpr bool kStart = decltype(start_tag)::value;
        wait_k(i + 1);
        wait_v(i);
        if constexpr (kStart) mbar_wait(bar_q + 8 * w, 1);
        fence_regs(s);
        turn_wait();
        wgmma_fence();
        issue_qk(i + 1);
        wgmma_commit();
        fence_regs(o);
        fence_regs(pa);
        wgmma_fence();
        issue_pv(i);
        wgmma_commit();
        turn_pass();
        wgmma_wait<1>();  // the older group, Q K^T of tile i + 1, has completed
        fence_regs(s);
        release_k(i + 1);
        if (kPair && i + 1 == n_tiles - 1) load_second_q();
        if constexpr (kStart) {
#pragma unroll
          for (int hr = 0; hr < 2; ++hr) {
            m_first[hr] = row_m[hr];
            l_first[hr] = row_l[hr];
            row_m[hr] = -INFINITY;
            row_l[hr] = 0.0f;
          }
        }
        const bool rescale = softmax(i + 1);
        wgmma_wait<0>();
        fence_regs(o);
        fence_regs(pa);
        release_v(i);
        if constexpr (kStart) {
          finalise(m_first, l_first, 0);
          store_direct(0);
#pragma unroll
          for (int e = 0; e < D / 2; ++e) o[e] = 0.0f;
        } else if (rescale) {
#pragma unroll
          for (int dt = 0; dt < D / 8; ++dt) {
            o[dt * 4 + 0] *= alpha[0];
            o[dt * 4 + 1] *= alpha[0];
            o[dt * 4 + 2] *= alpha[1];
            o[dt * 4 + 3] *= alpha[1];
          }
        }
        to_p();
      };
      using Plain = std::integral_constant<bool, false>;
      if constexpr (kPair) {
        // i_lo = 0 and i_hi = 2 * n_tiles (ping-pong), n_tiles >= 1: the first item's steps, the hand-over, the
        // second item's steps, each loop the unpaired kernel's.
        for (int i = 0; i + 1 < n_tiles; ++i) step(i, Plain{});
        step(n_tiles - 1, std::integral_constant<bool, true>{});
        for (int i = n_tiles; i + 1 < i_hi; ++i) step(i, Plain{});
      } else {
        for (int i = i_lo; i + 1 < i_hi; ++i) step(i, Plain{});
      }
      wait_v(i_hi - 1);
      fence_regs(o);
      fence_regs(pa);
      turn_wait();
      wgmma_fence();
      issue_pv(i_hi - 1);
      wgmma_commit();
      if (w == 0) turn_pass();
      wgmma_wait<0>();
      fence_regs(o);
      fence_regs(pa);
      release_v(i_hi - 1);
    }
    for (int i = i_hi; i < kItems * n_tiles; ++i) pass_tile(i);
    if (kPair && n_tiles == 0) {  // no key visible: the first item's output is zeros (lse -inf) too
      finalise(row_m, row_l, 0);
      store_direct(0);
    }
    finalise(row_m, row_l, (kItems - 1) * group);  // the last item's

    // O -> this warpgroup's Q tile (every wgmma that read it has completed) -> global: by TMA where every row is a
    // query of this request, else 16 bytes per store.
    named_bar_sync(1 + w, 128);
    unsigned char* const sQg = smem + w * L::kQBytes;
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      const int rr = warp * 16 + g + hr * 8;
#pragma unroll
      for (int dt = 0; dt < D / 8; ++dt)
        *reinterpret_cast<std::uint32_t*>(sQg + swz(rr, dt, kRowsPerWg) + tq * 4) =
            pack2<T>(o[dt * 4 + hr * 2], o[dt * 4 + hr * 2 + 1]);
    }
    if (a.q_tma && j0 + (w + 1) * tokens_per_wg <= r.q_len) {
      // Every row of this warpgroup is a query of this request: one TMA store per 64-column block, issued once the
      // whole tile is staged (generic-proxy writes fenced for the async proxy); the CTA ends once TMA has read it.
      fence_proxy_async();
      named_bar_sync(1 + w, 128);
      if (ctid == 0) {
#pragma unroll
        for (int cb = 0; cb < D / 64; ++cb)
          tma_store_3d(&a.tmap_o, sQw + cb * kRowsPerWg * 128, cb * 64, kvh_last * group,
                       r.q_begin + j0 + w * tokens_per_wg);
        asm volatile("cp.async.bulk.commit_group;\ncp.async.bulk.wait_group.read 0;\n" ::: "memory");
      }
    } else {
      // Rows past the request or idle: each warp stores its own 16 rows, 16 bytes per store.
      __syncwarp();
      T* const og = static_cast<T*>(a.o);
#pragma unroll 4
      for (int idx = lane; idx < 16 * kCpr; idx += 32) {
        const int rr = warp * 16 + idx / kCpr, c = idx % kCpr;
        const int lr = w * kRowsPerWg + rr;
        const int tok = lr / group;
        const int j = j0 + tok;
        if (lr < rows_used && j < r.q_len)
          *reinterpret_cast<uint4*>(
              og + (static_cast<std::int64_t>(r.q_begin + j) * a.num_qo_heads + kvh_last * group +
                    (lr - tok * group)) * D +
              c * 8) = *reinterpret_cast<const uint4*>(sQg + swz(rr, c, kRowsPerWg));
      }
    }
  }
#else
  (void)a;
  __trap();  // launched only where the sm_90a code exists (see prefill_hopper_usable)
#endif
}

template <typename T, int D, bool kDeep, bool kPingPong, bool kPair>
bool launch(const HopperArgs& a, int max_q_len, int batch_size, cudaStream_t stream) {
  using L = Layout<D, kDeep>;
  auto* kernel = prefill_hopper_kernel<T, D, kDeep, kPingPong, kPair>;
  static const bool smem_set = [kernel] {
    ATTNBENCH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::kSmemBytes));
    return true;
  }();
  (void)smem_set;
  const int tpt = kRows / a.group;
  const int q_tiles = (max_q_len + tpt - 1) / tpt;
  if (q_tiles > 65535) return false;
  const dim3 grid(kPair ? a.num_kv_heads / 2 : a.num_kv_heads, q_tiles, batch_size);
  kernel<<<grid, kThreads, L::kSmemBytes, stream>>>(a);
  ATTNBENCH_CUDA_CHECK_LAUNCH();
  return true;
}

template <typename T, bool kDeep, bool kPingPong, bool kPair = false>
bool dispatch(const HopperArgs& a, int head_dim, int max_q_len, int batch_size, cudaStream_t stream) {
  switch (head_dim) {
    case 64:
      return launch<T, 64, kDeep, kPingPong, kPair>(a, max_q_len, batch_size, stream);
    case 128:
      return launch<T, 128, kDeep, kPingPong, kPair>(a, max_q_len, batch_size, stream);
    case 256:  // never paired (use_pairs)
      return launch<T, 256, kDeep, kPingPong, false>(a, max_q_len, batch_size, stream);
    default:
      return false;
  }
}

// ATTNBENCH_HOPPER_PAIR: 1 (unset) = two KV heads per CTA (kPair) where the launch can take it (head_dim 64 / 128,
// Q by TMA, an even number of KV heads), 0 = one per CTA. Head_dim 256 is never paired: measured slower on an H100
// both with the carry (the first version) and without it (results/h100/hopper-pairs-2026-12-06/).
bool hopper_pairs_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("ATTNBENCH_HOPPER_PAIR");
    const std::string s = e ? e : "";
    if (s.empty() || s == "1") return true;
    if (s == "0") return false;
    throw InputError("ATTNBENCH_HOPPER_PAIR: expected 0 or 1, got '" + s + "'");
  }();
  return on;
}
bool use_pairs(const HopperArgs& a, int head_dim) {
  return head_dim <= 128 && a.q_tma == 1 && a.num_kv_heads % 2 == 0 && hopper_pairs_enabled();
}

template <typename T>
bool dispatch_variant(int variant, const HopperArgs& a, int head_dim, int max_q_len, int batch_size,
                      cudaStream_t stream) {
  switch (variant) {
    case 1:
      return dispatch<T, true, false>(a, head_dim, max_q_len, batch_size, stream);
    case 2:
    case 3:  // variant 2's schedule; the TMA is in the args (tma_box_rows, q_tma)
      if (use_pairs(a, head_dim)) return dispatch<T, true, true, true>(a, head_dim, max_q_len, batch_size, stream);
      return dispatch<T, true, true>(a, head_dim, max_q_len, batch_size, stream);
    default:
      return dispatch<T, false, false>(a, head_dim, max_q_len, batch_size, stream);
  }
}

// ATTNBENCH_HOPPER_VARIANT: 3 (unset: deep + ping-pong + TMA), 2 = deep + ping-pong (16-byte cp.async for every
// tile), 1 = deep, 0 = neither (the first version). Measured 2026-12-01 (results/h200/hopper/NOTES.md),
// Llama-3.1-8B shape, B=4 S=4k causal: ragged 0: 314, 1: 457, 2: 492 TFLOP/s; block table page 64: 249, 451, 477.
int hopper_variant() {
  static const int v = [] {
    const char* e = std::getenv("ATTNBENCH_HOPPER_VARIANT");
    const std::string s = e ? e : "";
    if (s.empty()) return 3;
    if (s.size() == 1 && s[0] >= '0' && s[0] <= '3') return s[0] - '0';
    throw InputError("ATTNBENCH_HOPPER_VARIANT: expected 0, 1, 2 or 3, got '" + s + "'");
  }();
  return v;
}

// cuTensorMapEncodeTiled from the driver (the runtime links statically; the driver is there wherever a GPU is),
// or nullptr where it cannot be had: then every tile takes the 16-byte copies.
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

// [rows, heads, head_dim] (16-bit) as a 3-D tensor {head_dim, heads, rows} with boxes {64, box_heads, box_rows} in
// the 128-byte swizzle (the tile layout: swz above); coordinates past `rows` read as zeros and are not written.
bool encode_map(CUtensorMap* map, const void* base, DType dtype, int head_dim, int heads, std::int64_t rows,
                int box_heads, int box_rows) {
  const auto encode = tensor_map_encoder();
  if (encode == nullptr) return false;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(head_dim), static_cast<cuuint64_t>(heads),
                              static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(head_dim) * 2,
                                 static_cast<cuuint64_t>(head_dim) * 2 * static_cast<cuuint64_t>(heads)};
  const cuuint32_t box[3] = {64, static_cast<cuuint32_t>(box_heads), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  const CUtensorMapDataType t =
      dtype == DType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  return encode(map, t, 3, const_cast<void*>(base), dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// K or V ([slots, num_kv_heads, head_dim], 16-bit) as a TMA tensor map whose box is 64 columns of one KV head
// over box_rows slots, written in the 128-byte swizzle (the stage layout: swz above). The slot extent is not
// known here (a pool's size is not in AttentionParams): it is set to 2^31 - 1, which is safe because the kernel
// asks TMA only for boxes of keys below a request's kv_len, rows that exist.
bool encode_kv_map(CUtensorMap* map, const void* base, DType dtype, int head_dim, int num_kv_heads, int box_rows) {
  return encode_map(map, base, dtype, head_dim, num_kv_heads, INT_MAX, 1, box_rows);
}

// Variant 3's Q / O plan: 1 with both tensor maps encoded (a consumer warpgroup's 64 rows are 64 / group whole
// tokens of the KV head's query heads, so group must divide 64), else 0.
int plan_q_tma(const AttentionParams& p, CUtensorMap* q_map, CUtensorMap* o_map) {
  if (hopper_variant() != 3 || p.num_kv_heads <= 0) return 0;
  const int group = p.num_qo_heads / p.num_kv_heads;
  if (group < 1 || kRowsPerWg % group != 0 || p.total_q <= 0) return 0;
  return encode_map(q_map, p.q, p.dtype, p.head_dim, p.num_qo_heads, p.total_q, group, kRowsPerWg / group) &&
                 encode_map(o_map, p.o, p.dtype, p.head_dim, p.num_qo_heads, p.total_q, group, kRowsPerWg / group)
             ? 1
             : 0;
}

// Variant 3's TMA plan for p: the rows per box, with the K and V tensor maps encoded, or 0 (every tile by
// cp.async). Ragged rows are contiguous (a box is a whole tile per column block); a block table's page of >= 16
// slots is (a box per page, at most a tile); token indices scatter every row.
int plan_tma(const AttentionParams& p, CUtensorMap* k_map, CUtensorMap* v_map) {
  if (hopper_variant() != 3) return 0;
  int tile_keys = 0;
  switch (p.head_dim) {
    case 64: tile_keys = Shape<64>::BN; break;
    case 128: tile_keys = Shape<128>::BN; break;
    case 256: tile_keys = Shape<256>::BN; break;
    default: return 0;
  }
  int box = 0;
  if (p.addressing == KvAddressing::ragged) box = tile_keys;
  if (p.addressing == KvAddressing::block_table && p.page_size >= 16) box = p.page_size < tile_keys ? p.page_size : tile_keys;
  if (box == 0 || (p.dtype != DType::bf16 && p.dtype != DType::fp16)) return 0;
  return encode_kv_map(k_map, p.k, p.dtype, p.head_dim, p.num_kv_heads, box) &&
                 encode_kv_map(v_map, p.v, p.dtype, p.head_dim, p.num_kv_heads, box)
             ? box
             : 0;
}

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

}  // namespace hopper_detail

bool prefill_hopper_usable() {
#if defined(ATTNBENCH_CUDA_SM90A)
  const cuda_detail::DeviceFacts* f = cuda_detail::current_device_facts();
  return f != nullptr && f->major == 9 && f->minor == 0;
#else
  return false;  // the build has no sm_90a code (CMAKE_CUDA_ARCHITECTURES without 90a)
#endif
}

int prefill_hopper_tma_box_rows(const AttentionParams& p) {
  CUtensorMap k_map, v_map;
  return hopper_detail::plan_tma(p, &k_map, &v_map);
}

bool prefill_hopper_q_by_tma(const AttentionParams& p) {
  CUtensorMap q_map, o_map;
  return hopper_detail::plan_q_tma(p, &q_map, &o_map) == 1;
}

bool launch_attention_prefill_hopper(const AttentionParams& p, void* stream) {
  using namespace hopper_detail;
  if (!prefill_hopper_usable()) return false;
  if (p.dtype != DType::bf16 && p.dtype != DType::fp16) return false;
  if (is_fp8(kv_load_dtype(p)) || is_fp8(q_load_dtype(p))) return false;
  if (p.head_dim != 64 && p.head_dim != 128 && p.head_dim != 256) return false;
  if (p.num_kv_heads <= 0 || p.num_qo_heads % p.num_kv_heads != 0) return false;
  const int group = p.num_qo_heads / p.num_kv_heads;
  if (group < 1 || group > kRows) return false;
  if (!aligned16(p.q) || !aligned16(p.k) || !aligned16(p.v) || !aligned16(p.o)) return false;
  if (p.addressing == KvAddressing::block_table && cuda_detail::page_shift_of(p.page_size) < 0) return false;
  if (p.batch_size > 65535) return false;
  if (p.batch_size <= 0 || p.total_q <= 0 || p.max_q_len <= 0) return true;  // nothing to do
  HopperArgs a{};
  cuda_detail::set_attention_args(a, p);
  const bool cap = p.logits_soft_cap > 0.0f;
  a.exp_scale = cap ? 1.0f : p.sm_scale * kLog2e;
  a.cap_in = cap ? p.sm_scale / p.logits_soft_cap : 0.0f;
  a.cap_out = cap ? p.logits_soft_cap * kLog2e : 0.0f;
  const auto s = static_cast<cudaStream_t>(stream);
  const int variant = hopper_variant();
  a.tma_box_rows = plan_tma(p, &a.tmap_k, &a.tmap_v);
  a.q_tma = plan_q_tma(p, &a.tmap_q, &a.tmap_o);
  if (p.dtype == DType::bf16) return dispatch_variant<__nv_bfloat16>(variant, a, p.head_dim, p.max_q_len, p.batch_size, s);
  return dispatch_variant<__half>(variant, a, p.head_dim, p.max_q_len, p.batch_size, s);
}

}  // namespace attnbench
