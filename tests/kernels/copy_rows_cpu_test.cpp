// copy_rows_cpu (index_select / index_copy_ of whole rows) against element loops written here.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "core/errors.hpp"
#include "kernels/cpu/kernels_cpu.hpp"

namespace attnbench {
namespace {

TEST(CopyRowsCpu, GatherScatterAndStrides) {
  // src: 6 rows of 3 int32; gather rows {4, 0, 5} into a dst of stride 5 ints (rows interleaved with gaps).
  std::vector<std::int32_t> src(18);
  std::iota(src.begin(), src.end(), 100);
  std::vector<std::int32_t> dst(15, -1);
  const std::vector<std::int32_t> idx = {4, 0, 5};
  CopyRowsParams p;
  p.dst = dst.data();
  p.src = src.data();
  p.src_index = idx.data();
  p.rows = 3;
  p.row_bytes = 12;
  p.dst_row_stride = 20;
  copy_rows_cpu(p);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) EXPECT_EQ(dst[r * 5 + c], src[idx[r] * 3 + c]) << r << "," << c;
    EXPECT_EQ(dst[r * 5 + 3], -1);  // the gap is untouched
    EXPECT_EQ(dst[r * 5 + 4], -1);
  }
  // Scatter back (index_copy_): out[idx[r]] = dst row r.
  std::vector<std::int32_t> out(18, 0);
  CopyRowsParams q;
  q.dst = out.data();
  q.src = dst.data();
  q.dst_index = idx.data();
  q.rows = 3;
  q.row_bytes = 12;
  q.src_row_stride = 20;
  copy_rows_cpu(q);
  for (int r : idx)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(out[r * 3 + c], src[r * 3 + c]);
  EXPECT_EQ(out[1 * 3], 0);  // rows not in idx stay
}

TEST(CopyRowsCpu, RejectsRowsThatAreNotWholeWords) {
  CopyRowsParams p;
  p.rows = 1;
  p.row_bytes = 6;
  EXPECT_THROW(copy_rows_cpu(p), InputError);
  p.row_bytes = 4;
  p.rows = -1;
  EXPECT_THROW(copy_rows_cpu(p), InputError);
}

}  // namespace
}  // namespace attnbench
