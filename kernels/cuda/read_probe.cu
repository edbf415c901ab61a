// The read-only streaming probe behind bw_fraction (CudaDevice::measure_read_bandwidth): every byte of a buffer
// much larger than the L2 read once, nothing written but one word per block, so its rate is the ceiling of a
// KV-cache read (a device-to-device copy mixes reads and writes and runs slower: 4.27-4.30 TB/s counted as reads
// plus writes on the H200, where this kind of loop read 4.62-4.63 TB/s over 4-8 GiB; shared/docs/performance.md).
// Shape: data [bytes] (16-byte aligned, bytes a multiple of 16), out [gridDim.x] 64-bit words.
// Design: grid-stride over 16-byte words, kUnroll independent read-only (ld.global.nc) vector loads in flight
// per thread before any is used; each thread XOR-folds what it read, the block combines its threads' folds and
// thread 0 writes the block's word to out[blockIdx.x] (the loads feed a stored result: the compiler cannot drop
// them). The caller picks the best of several grid sizes and runs.
// Validated by: attnbench_gpu_tests --gtest_filter='CudaDevice.ReadProbe*' (the fold equals the host's fold of
// the same bytes; the rate is positive and finite).
#include <cstdint>

#include "core/errors.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/kernels_cuda.cuh"

namespace attnbench {

namespace {

constexpr int kUnroll = 4;    // 16-byte loads in flight per thread
constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) read_probe_kernel(const uint4* __restrict__ data, std::int64_t words,
                                                              unsigned long long* __restrict__ out) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned long long acc = 0;
  for (; i + (kUnroll - 1) * stride < words; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(data + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      acc ^= (static_cast<unsigned long long>(v[u].x) | (static_cast<unsigned long long>(v[u].y) << 32)) ^
             (static_cast<unsigned long long>(v[u].z) | (static_cast<unsigned long long>(v[u].w) << 32));
  }
  for (; i < words; i += stride) {  // the tail: fewer than kUnroll strides left
    const uint4 v = __ldg(data + i);
    acc ^= (static_cast<unsigned long long>(v.x) | (static_cast<unsigned long long>(v.y) << 32)) ^
           (static_cast<unsigned long long>(v.z) | (static_cast<unsigned long long>(v.w) << 32));
  }
  for (int o = 16; o > 0; o >>= 1) acc ^= __shfl_xor_sync(0xffffffffu, acc, o);
  __shared__ unsigned long long warp_acc[kThreads / 32];
  if ((threadIdx.x & 31) == 0) warp_acc[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long b = 0;
    for (int w = 0; w < kThreads / 32; ++w) b ^= warp_acc[w];
    out[blockIdx.x] = b;
  }
}

}  // namespace

void launch_read_probe(const void* data, std::int64_t bytes, int blocks, void* out, void* stream) {
  if (bytes <= 0 || bytes % 16 != 0 || reinterpret_cast<std::uintptr_t>(data) % 16 != 0)
    throw InputError("read_probe: the buffer must be 16-byte aligned and a positive multiple of 16 bytes (" +
                     std::to_string(bytes) + ")");
  if (blocks <= 0) throw InputError("read_probe: blocks must be > 0 (" + std::to_string(blocks) + ")");
  read_probe_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const uint4*>(data), bytes / 16, static_cast<unsigned long long*>(out));
  ATTNBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace attnbench
