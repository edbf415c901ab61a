// copy_rows on the GPU (CopyRowsParams in kernels/params.hpp; CPU twin kernels/cpu/copy_rows_cpu.cpp): torch's
// index_select / index_copy_ of whole rows, as SGLang runs them around TRTLLM's kernels (fmha_v2's page copy
// on the slow path, the decode seq-len splits). A pure byte copy: identical to the CPU twin.
// Design: one block per row (grid-stride over rows), threads over 16-byte words when rows, strides and
// pointers allow it, else 4-byte words.
// Validated by: attnbench_gpu_tests --gtest_filter='SmallKernels.CopyRows*'.
#include <algorithm>
#include <cstdint>

#include "core/errors.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/kernels_cuda.cuh"

namespace attnbench {

namespace {

template <typename Word>
__global__ void copy_rows_kernel(char* __restrict__ dst, const char* __restrict__ src,
                                 const std::int32_t* __restrict__ dst_index, const std::int32_t* __restrict__ src_index,
                                 std::int64_t rows, std::int64_t row_words, std::int64_t dst_stride,
                                 std::int64_t src_stride) {
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const std::int64_t d = dst_index ? dst_index[r] : r;
    const std::int64_t s = src_index ? src_index[r] : r;
    Word* out = reinterpret_cast<Word*>(dst + d * dst_stride);
    const Word* in = reinterpret_cast<const Word*>(src + s * src_stride);
    for (std::int64_t w = threadIdx.x; w < row_words; w += blockDim.x) out[w] = in[w];
  }
}

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

}  // namespace

void launch_copy_rows(const CopyRowsParams& p, void* stream) {
  if (p.rows < 0 || p.row_bytes < 0 || p.row_bytes % 4 != 0)
    throw InputError("copy_rows: bad shape (rows " + std::to_string(p.rows) + ", row_bytes " + std::to_string(p.row_bytes) + ")");
  if (p.rows == 0 || p.row_bytes == 0) return;
  const std::int64_t ds = p.dst_row_stride > 0 ? p.dst_row_stride : p.row_bytes;
  const std::int64_t ss = p.src_row_stride > 0 ? p.src_row_stride : p.row_bytes;
  auto s = static_cast<cudaStream_t>(stream);
  const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>(p.rows, 65535));
  auto* dst = static_cast<char*>(p.dst);
  const auto* src = static_cast<const char*>(p.src);
  if (p.row_bytes % 16 == 0 && ds % 16 == 0 && ss % 16 == 0 && aligned16(dst) && aligned16(src)) {
    const int threads = static_cast<int>(std::min<std::int64_t>(256, std::max<std::int64_t>(32, p.row_bytes / 16)));
    copy_rows_kernel<uint4><<<blocks, threads, 0, s>>>(dst, src, p.dst_index, p.src_index, p.rows, p.row_bytes / 16, ds, ss);
  } else {
    const int threads = static_cast<int>(std::min<std::int64_t>(256, std::max<std::int64_t>(32, p.row_bytes / 4)));
    copy_rows_kernel<std::uint32_t><<<blocks, threads, 0, s>>>(dst, src, p.dst_index, p.src_index, p.rows, p.row_bytes / 4, ds, ss);
  }
  ATTNBENCH_CUDA_CHECK_LAUNCH();
}

}  // namespace attnbench
