// fp8 KV-cache loads and stores on the GPU through cuda_fp8.h (__nv_fp8_e4m3 / __nv_fp8_e5m2). Their
// conversions are exact on load (every fp8 value is a float) and round to nearest even, saturating to the
// largest finite value (__NV_SATFINITE), on store: the same results as the host conversions in core/dtype.hpp,
// which the pool fill uses so that the host can recompute it (tests/gpu/fp8_kernels_test.cpp compares the two).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/dtype.hpp"

namespace attnbench::cuda_detail {

// Element i of a buffer of dtype t, as float (fp8 through cuda_fp8.h; other dtypes: core/dtype.hpp).
__device__ __forceinline__ float load_elem(const void* p, std::int64_t i, DType t) {
  if (t == DType::fp8_e4m3) {
    __nv_fp8_e4m3 x;
    x.__x = static_cast<const __nv_fp8_storage_t*>(p)[i];
    return static_cast<float>(x);
  }
  if (t == DType::fp8_e5m2) {
    __nv_fp8_e5m2 x;
    x.__x = static_cast<const __nv_fp8_storage_t*>(p)[i];
    return static_cast<float>(x);
  }
  return load_as_float(p, i, t);
}

// Two fp8 codes (the low byte first) as two 16-bit values of T (__nv_bfloat16 / __half) in one register, the
// first in the low half: the prefill tensor-core kernel's K / V dequantization. fp8 -> fp16 is one cvt of
// cuda_fp8.h (cvt.rn.f16x2.e4m3x2 / .e5m2x2 from sm_89 on) and exact for every code; every value it gives is
// also a bf16 (at most 4 significant bits, exponents 2^-16 .. 2^15), so the fp16 -> fp32 -> bf16 route is exact
// too. Finite codes come out as load_elem gives them; NaN / Inf stay NaN / Inf.
template <typename T, __nv_fp8_interpretation_t kFmt>
__device__ __forceinline__ std::uint32_t fp8x2_to_16bit_pair(std::uint32_t two_codes) {
  const __half2_raw hr = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(two_codes & 0xffffu), kFmt);
  std::uint32_t out;
  if constexpr (std::is_same_v<T, __half>) {
    out = static_cast<std::uint32_t>(hr.x) | (static_cast<std::uint32_t>(hr.y) << 16);
  } else {
    const __nv_bfloat162 b = __float22bfloat162_rn(__half22float2(__half2(hr)));
    memcpy(&out, &b, 4);
  }
  return out;
}

// Stores v (rounded to t) as element i.
__device__ __forceinline__ void store_elem(void* p, std::int64_t i, DType t, float v) {
  if (t == DType::fp8_e4m3) {
    static_cast<__nv_fp8_storage_t*>(p)[i] = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
    return;
  }
  if (t == DType::fp8_e5m2) {
    static_cast<__nv_fp8_storage_t*>(p)[i] = __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E5M2);
    return;
  }
  store_from_float(p, i, t, v);
}

}  // namespace attnbench::cuda_detail
