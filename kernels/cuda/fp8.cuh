// fp8 KV-cache loads and stores on the GPU through cuda_fp8.h (__nv_fp8_e4m3 / __nv_fp8_e5m2). Their
// conversions are exact on load (every fp8 value is a float) and round to nearest even, saturating to the
// largest finite value (__NV_SATFINITE), on store: the same results as the host conversions in core/dtype.hpp,
// which the pool fill uses so that the host can recompute it (tests/gpu/fp8_kernels_test.cpp compares the two).
#pragma once

#include <cuda_fp8.h>

#include <cstdint>

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
