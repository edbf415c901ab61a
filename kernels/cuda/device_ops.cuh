// Small device helpers the attention kernels share (kernels/cuda/prefill_attention.cu, the FA2-class kernel,
// kernels/cuda/prefill_hopper.cu and kernels/cuda/decode_attention.cu): a shared-memory address, the 16-byte
// cp.async with zero fill, and the packing of two floats into one register of two 16-bit values. The decode
// kernel adds its own indexed copy and a pack2 keyed on its bool dtype flag on top of these.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace attnbench::cuda_detail {

// The 32-bit shared-state-space address of a generic pointer into shared memory.
__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte global -> shared copy (cp.async.cg, L1 bypassed); !valid writes 16 zero bytes (src is not read).
__device__ __forceinline__ void cp_async_16(std::uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0)
               : "memory");
}

// Two floats -> one 32-bit register of two T (lo in the low half), round to nearest even.
template <typename T>
__device__ __forceinline__ std::uint32_t pack2(float lo, float hi) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&v);
  }
}

}  // namespace attnbench::cuda_detail
