// merge_state on the GPU (FlashInfer's merge_state; MergeStateParams in kernels/params.hpp; CPU twin
// merge_state_cpu in kernels/cpu/attention_cpu.cpp): two attention states over disjoint key sets,
//   o = (o1 * exp(lse1 - m) + o2 * exp(lse2 - m)) / (exp(lse1 - m) + exp(lse2 - m)),  m = max(lse1, lse2);
//   both lse = -inf gives o = 0.
// Shapes: o1, o2, o [rows, num_heads, head_dim] of dtype (o may alias o1); lse1, lse2 float [rows, num_heads].
// Same formula and order of operations as the CPU twin, fp32; equal within a few ulps (expf differs).
// Design: one warp per (row, head); lanes over head_dim (coalesced), each element read and written by one
// thread, so o aliasing o1 is safe.
// Validated by: .carry/attnbench_gpu_tests --gtest_filter='SmallKernels.MergeState*'
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/errors.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/kernels_cuda.cuh"

namespace attnbench {

namespace {

template <DType DT>
__global__ void merge_state_kernel(const MergeStateParams p) {
  const std::int64_t n = static_cast<std::int64_t>(p.rows) * p.num_heads;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  const int lane = threadIdx.x & 31;
  for (std::int64_t rh = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; rh < n;
       rh += warps) {
    const float l1 = p.lse1[rh], l2 = p.lse2[rh];
    const float m = fmaxf(l1, l2);
    float w1 = 0.0f, w2 = 0.0f;
    if (m != -INFINITY) {
      w1 = expf(l1 - m);
      w2 = expf(l2 - m);
      const float inv = 1.0f / (w1 + w2);
      w1 *= inv;
      w2 *= inv;
    }
    const std::int64_t base = rh * p.head_dim;
    for (int d = lane; d < p.head_dim; d += 32) {
      const float v = w1 * load_as_float(p.o1, base + d, DT) + w2 * load_as_float(p.o2, base + d, DT);
      store_from_float(p.o, base + d, DT, v);
    }
  }
}

}  // namespace

void launch_merge_state(const MergeStateParams& p, void* stream) {
  if (p.rows < 0 || p.num_heads < 0 || p.head_dim < 0)
    throw InputError("merge_state: negative shape (rows " + std::to_string(p.rows) + ")");
  const std::int64_t n = static_cast<std::int64_t>(p.rows) * p.num_heads;
  if (n == 0 || p.head_dim == 0) return;
  const int threads = 256;  // 8 warps
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((n + 7) / 8, 132 * 16));
  auto s = static_cast<cudaStream_t>(stream);
  switch (p.dtype) {
    case DType::bf16:
      merge_state_kernel<DType::bf16><<<blocks, threads, 0, s>>>(p);
      break;
    case DType::fp16:
      merge_state_kernel<DType::fp16><<<blocks, threads, 0, s>>>(p);
      break;
    case DType::fp32:
      merge_state_kernel<DType::fp32><<<blocks, threads, 0, s>>>(p);
      break;
    default:
      throw InputError("merge_state: fp8 is a KV-cache dtype, not an output dtype");
  }
  ATTNBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace attnbench
