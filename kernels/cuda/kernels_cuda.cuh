// CUDA kernels: the launch entry of every op (semantics in kernels/params.hpp; CPU twins in kernels/cpu/).
// Each launches on `stream` (a cudaStream_t), never synchronises, never allocates, so every op can be
// captured in a CUDA graph. Errors: InputError / Unsupported for parameters the kernels cannot take,
// DeviceError (ATTNBENCH_CUDA_CHECK) for a failed launch. This header needs no CUDA headers.
#pragma once

#include "kernels/kernel_table.hpp"
#include "kernels/params.hpp"

namespace attnbench {

void launch_write_kv(const KvWriteParams& p, void* stream);             // kernels/cuda/write_kv.cu
void launch_lengths(const LengthsParams& p, void* stream);              // kernels/cuda/metadata.cu
void launch_build_kv_indices(const KvIndicesParams& p, void* stream);   // kernels/cuda/metadata.cu
void launch_build_page_table(const PageTableParams& p, void* stream);   // kernels/cuda/metadata.cu
void launch_attention_decode(const AttentionParams& p, void* stream);   // kernels/cuda/decode_attention.cu
// Whether launch_attention_decode's tensor-core path merges p's split-KV chunks inside the decode kernel
// (merge_semaphores; XQA's multi-block mode) rather than in a merge kernel.
bool attention_decode_merges_in_kernel(const AttentionParams& p);
// Warps per CTA that launch_attention_decode's tensor-core path gives p (1, 2, 4 or 8: the grid rule of
// decode_attention.cu's small_m_warps, or ATTNBENCH_DECODE_WARPS); 4 where the rule does not apply. Needs a device.
int attention_decode_cta_warps(const AttentionParams& p);
// Pipeline stages of the kernel launch_attention_decode's tensor-core path runs for p (decode_attention.cu
// small_m_stages for the kSmallM kernels: the grid rule or ATTNBENCH_DECODE_STAGES; default_stages for the rest);
// 0 where it takes the generic kernel. Needs a device.
int attention_decode_pipeline_stages(const AttentionParams& p);
// The decode op through its slow generic kernel (one warp per row and head, fp32 math, no split-KV), any dtype:
// an independent GPU cross-check for the fast path on shapes too large for the CPU twin.
void launch_attention_decode_generic(const AttentionParams& p, void* stream);
void launch_attention_prefill(const AttentionParams& p, void* stream);  // kernels/cuda/prefill_attention.cu
// Which prefill kernel: `automatic` = the Hopper kernel where it takes the call (sm_90, bf16 / fp16 K / V, head_dim
// 64 / 128 / 256, every addressing mode), else the FA2-class kernel; `fa2` = always the
// FA2-class kernel; `hopper` = the Hopper kernel where it takes the call (fp32 / fp8 / other shapes still go to
// the FA2-class kernel), Unsupported on a GPU without it. launch_attention_prefill uses
// prefill_kernel_from_env(): ATTNBENCH_PREFILL_KERNEL=fa2|hopper (unset or empty: automatic; anything else:
// InputError naming the variable).
enum class PrefillKernel { automatic, fa2, hopper };
PrefillKernel prefill_kernel_from_env();
void launch_attention_prefill_with(const AttentionParams& p, void* stream, PrefillKernel kernel);
// True where the FA2-class kernel's launch runs its tensor-core kernel on p (bf16 / fp16 q and o, head_dim 64 /
// 128 / 256, K / V in the model dtype or an fp8_e4m3 / fp8_e5m2 pool, 16-byte aligned pointers, a power-of-two
// page size), false where it runs the generic one-warp-per-row kernel (or throws Unsupported).
bool prefill_fa2_uses_tensor_cores(const AttentionParams& p);
// kernels/cuda/prefill_hopper.cu: true when this process's current GPU can run the Hopper kernel; the launch
// returns false (nothing launched) where the kernel does not take p.
bool prefill_hopper_usable();
bool launch_attention_prefill_hopper(const AttentionParams& p, void* stream);
// The keys per TMA box the Hopper kernel's launch would load p's full K / V tiles with (ragged: a whole tile; a
// block table with pages of >= 16 slots: a page, at most a tile), 0 where every tile takes 16-byte cp.async copies
// (token indices, smaller pages, ATTNBENCH_HOPPER_VARIANT other than 3, no tensor-map encoder in the driver).
int prefill_hopper_tma_box_rows(const AttentionParams& p);
// Whether that launch would load Q and store O by TMA (variant 3, the query heads per KV head dividing 64: a consumer
// warpgroup's 64 rows are then whole tokens), else 16-byte copies and stores.
bool prefill_hopper_q_by_tma(const AttentionParams& p);
void launch_merge_state(const MergeStateParams& p, void* stream);       // kernels/cuda/merge_state.cu
void launch_fill_uniform(const FillParams& p, void* stream);            // kernels/cuda/fill.cu
void launch_copy_rows(const CopyRowsParams& p, void* stream);           // kernels/cuda/copy_rows.cu
// Not an op: the read-only bandwidth probe (kernels/cuda/read_probe.cu). Reads `bytes` (16-byte aligned, a
// multiple of 16) at `data` with `blocks` blocks; out[b] (64-bit) gets block b's XOR fold of what it read.
void launch_read_probe(const void* data, std::int64_t bytes, int blocks, void* out, void* stream);

// The table the CUDA device hands to backends.
const KernelTable& cuda_kernel_table();

}  // namespace attnbench
