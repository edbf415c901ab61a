// write_kv (SGLang's set_kv_buffer) on the GPU: k_cache[out_cache_loc[t]] = k_new[t], v_cache[...] = v_new[t]
// for every new token t (KvWriteParams in kernels/params.hpp; CPU twin kernels/cpu/write_kv_cpu.cpp).
// Shapes: k_new / v_new [num_tokens, num_kv_heads, head_dim]; k_cache / v_cache [num_slots, num_kv_heads,
// head_dim] (one layer, NHD); out_cache_loc int64 [num_tokens]. A pure byte copy: the output is identical,
// byte for byte, to the CPU twin's.
// Design: one thread per 16-byte piece of a row (uint4) when rows and pointers allow it, else per 2-byte
// word; grid-stride over (token, piece), so consecutive threads write consecutive bytes of a row.
// Validated by: .carry/attnbench_gpu_tests --gtest_filter='SmallKernels.WriteKv*' (ctest -L gpu -R WriteKv).
#include <algorithm>
#include <cstdint>

#include "core/errors.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/fp8.cuh"
#include "kernels/cuda/kernels_cuda.cuh"

namespace attnbench {

namespace {

template <typename Word>
__global__ void write_kv_kernel(const Word* __restrict__ k_new, const Word* __restrict__ v_new,
                                const std::int64_t* __restrict__ out_cache_loc, Word* __restrict__ k_cache,
                                Word* __restrict__ v_cache, std::int64_t num_tokens, std::int64_t row_words) {
  const std::int64_t total = num_tokens * row_words;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += stride) {
    const std::int64_t t = idx / row_words;
    const std::int64_t w = idx - t * row_words;
    const std::int64_t dst = out_cache_loc[t] * row_words + w;
    k_cache[dst] = k_new[idx];
    v_cache[dst] = v_new[idx];
  }
}

// fp8 cache: stored = fp8(x / scale), one element per thread (cuda_fp8.h conversion, as the CPU twin rounds).
// out_cache_loc == nullptr: row t; v_new == nullptr: K only (the q cast).
__global__ void write_kv_fp8_kernel(const KvWriteParams p, std::int64_t row_elems) {
  const std::int64_t total = static_cast<std::int64_t>(p.num_tokens) * row_elems;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += stride) {
    const std::int64_t t = idx / row_elems;
    const std::int64_t e = idx - t * row_elems;
    const std::int64_t dst = (p.out_cache_loc ? p.out_cache_loc[t] : t) * row_elems + e;
    // Both loads before either store: the pointers may alias as far as the compiler knows, so a v load after the
    // k store would wait for it, a second round trip in a kernel that sits between every layer's decode launches.
    const float k = load_as_float(p.k_new, idx, p.dtype);
    const float v = p.v_new ? load_as_float(p.v_new, idx, p.dtype) : 0.0f;
    cuda_detail::store_elem(p.k_cache, dst, p.cache_fp8, __fdiv_rn(k, p.k_scale));
    if (p.v_new) cuda_detail::store_elem(p.v_cache, dst, p.cache_fp8, __fdiv_rn(v, p.v_scale));
  }
}

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

}  // namespace

void launch_write_kv(const KvWriteParams& p, void* stream) {
  if (p.num_tokens < 0 || p.num_kv_heads <= 0 || p.head_dim <= 0)
    throw InputError("write_kv: bad shape (num_tokens " + std::to_string(p.num_tokens) + ", num_kv_heads " +
                     std::to_string(p.num_kv_heads) + ", head_dim " + std::to_string(p.head_dim) + ")");
  if (p.num_tokens == 0) return;
  if (is_fp8(p.cache_fp8)) {
    const std::int64_t row_elems = static_cast<std::int64_t>(p.num_kv_heads) * p.head_dim;
    const std::int64_t total = p.num_tokens * row_elems;
    write_kv_fp8_kernel<<<static_cast<unsigned>(std::min<std::int64_t>((total + 255) / 256, 65536)), 256, 0,
                          static_cast<cudaStream_t>(stream)>>>(p, row_elems);
    ATTNBENCH_CUDA_CHECK_LAUNCH();
    return;
  }
  if (!p.out_cache_loc || !p.v_new) throw InputError("write_kv: the byte-copy path needs out_cache_loc and v_new");
  const std::int64_t row_bytes = static_cast<std::int64_t>(p.num_kv_heads) * p.head_dim * dtype_size(p.dtype);
  auto s = static_cast<cudaStream_t>(stream);
  const int threads = 256;
  auto blocks_for = [&](std::int64_t total) {
    return static_cast<unsigned>(std::min<std::int64_t>((total + threads - 1) / threads, 65536));
  };
  if (row_bytes % 16 == 0 && aligned16(p.k_new) && aligned16(p.v_new) && aligned16(p.k_cache) &&
      aligned16(p.v_cache)) {
    const std::int64_t words = row_bytes / 16;
    write_kv_kernel<uint4><<<blocks_for(p.num_tokens * words), threads, 0, s>>>(
        static_cast<const uint4*>(p.k_new), static_cast<const uint4*>(p.v_new), p.out_cache_loc,
        static_cast<uint4*>(p.k_cache), static_cast<uint4*>(p.v_cache), p.num_tokens, words);
  } else {
    const std::int64_t words = row_bytes / 2;  // every dtype is a whole number of 16-bit words
    write_kv_kernel<std::uint16_t><<<blocks_for(p.num_tokens * words), threads, 0, s>>>(
        static_cast<const std::uint16_t*>(p.k_new), static_cast<const std::uint16_t*>(p.v_new), p.out_cache_loc,
        static_cast<std::uint16_t*>(p.k_cache), static_cast<std::uint16_t*>(p.v_cache), p.num_tokens, words);
  }
  ATTNBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace attnbench
