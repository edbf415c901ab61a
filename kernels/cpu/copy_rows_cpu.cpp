// copy_rows on the CPU (CopyRowsParams in kernels/params.hpp; CUDA twin kernels/cuda/copy_rows.cu): a byte copy
// of gathered / scattered rows. Checked by tests/kernels/copy_rows_cpu_test.cpp.
#include <cstring>
#include <string>

#include "core/errors.hpp"
#include "kernels/cpu/kernels_cpu.hpp"

namespace attnbench {

void copy_rows_cpu(const CopyRowsParams& p, void*) {
  if (p.rows < 0 || p.row_bytes < 0 || p.row_bytes % 4 != 0)
    throw InputError("copy_rows: bad shape (rows " + std::to_string(p.rows) + ", row_bytes " + std::to_string(p.row_bytes) + ")");
  const std::int64_t ds = p.dst_row_stride > 0 ? p.dst_row_stride : p.row_bytes;
  const std::int64_t ss = p.src_row_stride > 0 ? p.src_row_stride : p.row_bytes;
  auto* dst = static_cast<unsigned char*>(p.dst);
  const auto* src = static_cast<const unsigned char*>(p.src);
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const std::int64_t d = p.dst_index ? p.dst_index[r] : r;
    const std::int64_t s = p.src_index ? p.src_index[r] : r;
    std::memcpy(dst + d * ds, src + s * ss, static_cast<std::size_t>(p.row_bytes));
  }
}

}  // namespace attnbench
