// set_kv_buffer on the CPU: scatter the new tokens' K and V rows into the layer's pool by out_cache_loc.
// Checked by tests/kernels/write_kv_cpu_test.cpp.
#include <cstring>

#include "kernels/cpu/kernels_cpu.hpp"

namespace attnbench {

void write_kv_cpu(const KvWriteParams& p, void*) {
  if (is_fp8(p.cache_fp8)) {  // quantize: stored = fp8(x / scale)
    const std::int64_t row_elems = static_cast<std::int64_t>(p.num_kv_heads) * p.head_dim;
#pragma omp parallel for schedule(static) if (p.num_tokens > 256)
    for (int t = 0; t < p.num_tokens; ++t) {
      const std::int64_t slot = p.out_cache_loc ? p.out_cache_loc[t] : t;
      for (std::int64_t e = 0; e < row_elems; ++e) {
        store_from_float(p.k_cache, slot * row_elems + e, p.cache_fp8,
                         load_as_float(p.k_new, t * row_elems + e, p.dtype) / p.k_scale);
        if (p.v_new)
          store_from_float(p.v_cache, slot * row_elems + e, p.cache_fp8,
                           load_as_float(p.v_new, t * row_elems + e, p.dtype) / p.v_scale);
      }
    }
    return;
  }
  const std::size_t row = static_cast<std::size_t>(p.num_kv_heads) * p.head_dim * dtype_size(p.dtype);
  auto* kc = static_cast<char*>(p.k_cache);
  auto* vc = static_cast<char*>(p.v_cache);
  const auto* kn = static_cast<const char*>(p.k_new);
  const auto* vn = static_cast<const char*>(p.v_new);
#pragma omp parallel for schedule(static) if (p.num_tokens > 256)
  for (int t = 0; t < p.num_tokens; ++t) {
    const std::int64_t slot = p.out_cache_loc ? p.out_cache_loc[t] : t;
    std::memcpy(kc + slot * row, kn + t * row, row);
    if (vn) std::memcpy(vc + slot * row, vn + t * row, row);
  }
}

}  // namespace attnbench
