// fill_uniform on the GPU: data[i] = lo + (hi - lo) * u(seed, i), rounded to dtype (FillParams in
// kernels/params.hpp; u = uniform_at from kernels/random.hpp; CPU twin kernels/cpu/fill_cpu.cpp).
// Shape: data [n] of dtype. The bytes are identical to the CPU twin's: the same counter-based hash, the same
// fp32 operations in the same order with round-to-nearest and no fused multiply-add (__fmul_rn / __fadd_rn;
// the CPU build does not contract either), the same float -> bf16 / fp16 rounding code (core/dtype.hpp).
// Design: grid-stride, one element per thread per step (the hash, two 64-bit mixes, dominates).
// Validated by: .carry/attnbench_gpu_tests --gtest_filter='SmallKernels.Fill*'
#include <algorithm>
#include <cstdint>

#include "core/errors.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/kernels_cuda.cuh"
#include "kernels/random.hpp"

namespace attnbench {

namespace {

template <DType DT>
__global__ void fill_uniform_kernel(void* __restrict__ data, std::int64_t n, std::uint64_t seed, float lo,
                                    float span) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float v = __fadd_rn(lo, __fmul_rn(span, uniform_at(seed, static_cast<std::uint64_t>(i))));
    store_from_float(data, i, DT, v);
  }
}

}  // namespace

void launch_fill_uniform(const FillParams& p, void* stream) {
  if (p.n < 0) throw InputError("fill_uniform: negative element count " + std::to_string(p.n));
  if (p.n == 0) return;
  const float span = p.hi - p.lo;  // computed on the host, as the CPU twin does
  const int threads = 256;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((p.n + threads - 1) / threads, 132 * 32));
  auto s = static_cast<cudaStream_t>(stream);
  switch (p.dtype) {
    case DType::bf16:
      fill_uniform_kernel<DType::bf16><<<blocks, threads, 0, s>>>(p.data, p.n, p.seed, p.lo, span);
      break;
    case DType::fp16:
      fill_uniform_kernel<DType::fp16><<<blocks, threads, 0, s>>>(p.data, p.n, p.seed, p.lo, span);
      break;
    case DType::fp32:
      fill_uniform_kernel<DType::fp32><<<blocks, threads, 0, s>>>(p.data, p.n, p.seed, p.lo, span);
      break;
    case DType::fp8_e4m3:  // the shared host/device rounding (core/dtype.hpp): the host recomputes these bits
      fill_uniform_kernel<DType::fp8_e4m3><<<blocks, threads, 0, s>>>(p.data, p.n, p.seed, p.lo, span);
      break;
    case DType::fp8_e5m2:
      fill_uniform_kernel<DType::fp8_e5m2><<<blocks, threads, 0, s>>>(p.data, p.n, p.seed, p.lo, span);
      break;
  }
  ATTNBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace attnbench
