// Metadata kernels on the GPU (semantics in kernels/params.hpp; CPU twins in kernels/cpu/metadata_cpu.cpp):
//   lengths           LengthsParams: len_i = min(seq_lens[i] - sub[i] + add, clamp_max), lens_out, the prefix
//                     sum indptr_out [batch_size + 1] and start_out (what a window trimmed away).
//   build_kv_indices  KvIndicesParams (SGLang's create_flashinfer_kv_indices_triton):
//                     kv_indices[kv_indptr[i] + j] = req_to_token[req_pool_indices[i], kv_start[i] + j].
//   build_page_table  PageTableParams (SGLang's build_trtllm_mha_page_table):
//                     page_table[i, p] = req_to_token[req_pool_indices[i], p * page_size] / page_size.
// All integer work: outputs are identical, element for element, to the CPU twins' (int32 sums wrap the same).
// Design: lengths is one 1024-thread block (a block-wide scan with a running carry, so any batch size works);
// the two index builders use a block row per request and a grid-stride over its entries (the lengths live on
// the device, so the grid cannot depend on them: graph-capturable).
// Validated by: .carry/attnbench_gpu_tests --gtest_filter='SmallKernels.Lengths*:SmallKernels.Build*'
#include <cstdint>

#include "core/errors.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/kernels_cuda.cuh"

namespace attnbench {

namespace {

constexpr int kScanThreads = 1024;

__global__ void __launch_bounds__(kScanThreads) lengths_kernel(const LengthsParams p) {
  __shared__ std::uint32_t warp_sums[kScanThreads / 32];
  __shared__ std::uint32_t carry;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  if (tid == 0) {
    carry = 0;
    if (p.indptr_out) p.indptr_out[0] = 0;
  }
  __syncthreads();
  for (int base = 0; base < p.batch_size; base += kScanThreads) {
    const int i = base + tid;
    std::uint32_t len = 0;
    if (i < p.batch_size) {
      const std::int32_t full = (p.seq_lens ? p.seq_lens[i] : 0) - (p.sub ? p.sub[i] : 0) + p.add;
      const std::int32_t l = p.clamp_max > 0 ? min(full, p.clamp_max) : full;
      if (p.lens_out) p.lens_out[i] = l;
      if (p.start_out) p.start_out[i] = full - l;
      len = static_cast<std::uint32_t>(l);
    }
    // Inclusive scan: within the warp, then over warp totals.
    std::uint32_t x = len;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const std::uint32_t y = __shfl_up_sync(0xffffffffu, x, o);
      if (lane >= o) x += y;
    }
    if (lane == 31) warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
      std::uint32_t w = warp_sums[lane];
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const std::uint32_t y = __shfl_up_sync(0xffffffffu, w, o);
        if (lane >= o) w += y;
      }
      warp_sums[lane] = w;
    }
    __syncthreads();
    const std::uint32_t inclusive = carry + x + (warp > 0 ? warp_sums[warp - 1] : 0u);
    if (i < p.batch_size && p.indptr_out) p.indptr_out[i + 1] = static_cast<std::int32_t>(inclusive);
    __syncthreads();
    if (tid == kScanThreads - 1) carry = inclusive;  // the last thread's inclusive sum is the block's total
    __syncthreads();
  }
}

__global__ void build_kv_indices_kernel(const KvIndicesParams p) {
  const int i = blockIdx.x;
  const std::int32_t* row = p.req_to_token + p.req_pool_indices[i] * p.req_to_token_stride;
  const std::int32_t start = p.kv_start ? p.kv_start[i] : 0;
  const std::int32_t begin = p.kv_indptr[i];
  const std::int32_t n = p.kv_indptr[i + 1] - begin;
  for (std::int32_t j = blockIdx.y * blockDim.x + threadIdx.x; j < n; j += gridDim.y * blockDim.x)
    p.kv_indices[begin + j] = row[start + j];
}

__global__ void build_page_table_kernel(const PageTableParams p) {
  const int i = blockIdx.x;
  const std::int32_t* row = p.req_to_token + p.req_pool_indices[i] * p.req_to_token_stride;
  std::int32_t* out = p.page_table + static_cast<std::int64_t>(i) * (p.row_stride > 0 ? p.row_stride : p.max_num_pages);
  const int pages = min((p.seq_lens[i] + p.page_size - 1) / p.page_size, p.max_num_pages);
  for (int pg = blockIdx.y * blockDim.x + threadIdx.x; pg < pages; pg += gridDim.y * blockDim.x)
    out[pg] = row[static_cast<std::int64_t>(pg) * p.page_size] / p.page_size + p.add;
}

}  // namespace

void launch_lengths(const LengthsParams& p, void* stream) {
  if (p.batch_size < 0) throw InputError("lengths: negative batch_size " + std::to_string(p.batch_size));
  if (p.batch_size == 0 && p.indptr_out == nullptr) return;
  lengths_kernel<<<1, kScanThreads, 0, static_cast<cudaStream_t>(stream)>>>(p);
  ATTNBENCH_CUDA_CHECK_LAUNCH();
}

void launch_build_kv_indices(const KvIndicesParams& p, void* stream) {
  if (p.batch_size < 0) throw InputError("build_kv_indices: negative batch_size " + std::to_string(p.batch_size));
  if (p.batch_size == 0) return;
  // 8 blocks of 256 per request: 2048 entries per pass; longer requests loop.
  build_kv_indices_kernel<<<dim3(p.batch_size, 8), 256, 0, static_cast<cudaStream_t>(stream)>>>(p);
  ATTNBENCH_CUDA_CHECK_LAUNCH();
}

void launch_build_page_table(const PageTableParams& p, void* stream) {
  if (p.batch_size < 0) throw InputError("build_page_table: negative batch_size " + std::to_string(p.batch_size));
  if (p.page_size <= 0) throw InputError("build_page_table: page_size must be positive, got " + std::to_string(p.page_size));
  if (p.batch_size == 0 || p.max_num_pages <= 0) return;
  build_page_table_kernel<<<dim3(p.batch_size, 2), 128, 0, static_cast<cudaStream_t>(stream)>>>(p);
  ATTNBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace attnbench
