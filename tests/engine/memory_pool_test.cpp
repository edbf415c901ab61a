// ReqToTokenPool and TokenToKVPool: padding row and page, page-aligned slots, shuffling, random fill.
#include "engine/memory_pool.hpp"

#include <gtest/gtest.h>

#include <set>

#include "device/cpu_device.hpp"

namespace attnbench {
namespace {

TEST(ReqToTokenPool, RowZeroIsPaddingAndRowsAreHandedOutFromOne) {
  CpuDevice d;
  ReqToTokenPool pool(d, 3, 8);
  EXPECT_EQ(d.ledger().live()[MemKind::device], 4 * 8 * 4);
  EXPECT_EQ(pool.alloc(2), (std::vector<int>{1, 2}));
  EXPECT_EQ(pool.alloc(1), (std::vector<int>{3}));
  EXPECT_THROW(pool.alloc(1), std::runtime_error);
  const std::vector<std::int32_t> slots = {7, 8, 9};
  pool.set_row(2, slots);
  EXPECT_EQ(pool.host_row(2)[1], 8);
  EXPECT_EQ(pool.device_data()[2 * 8 + 2], 9);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(pool.device_data()[i], 0);
}

TEST(TokenToKVPool, SequencesGetPageAlignedSlotsAndThePaddingPageIsNeverUsed) {
  CpuDevice d;
  TokenToKVPool pool(d, 64, 16, 2, 2, 64, DType::bf16, false, 1);
  EXPECT_EQ(pool.num_slots(), 80);
  const auto s = pool.alloc_sequence(20);
  ASSERT_EQ(s.size(), 20u);
  EXPECT_EQ(s[0] % 16, 0);
  for (int t = 1; t < 16; ++t) EXPECT_EQ(s[t], s[0] + t);
  EXPECT_EQ(s[16] % 16, 0);
  for (auto slot : s) EXPECT_GE(slot, 16);
  EXPECT_EQ(pool.free_pages(), 2);
  EXPECT_THROW(pool.alloc_sequence(33), std::runtime_error);
}

TEST(TokenToKVPool, ShuffledPagesAreNotContiguous) {
  CpuDevice d;
  TokenToKVPool pool(d, 1024, 16, 1, 1, 64, DType::bf16, true, 42);
  const auto s = pool.alloc_sequence(16 * 16);
  int jumps = 0;
  for (int pg = 1; pg < 16; ++pg) jumps += s[pg * 16] != s[pg * 16 - 1] + 1;
  EXPECT_GE(jumps, 10);
  std::set<int> pages;
  for (int pg = 0; pg < 16; ++pg) pages.insert(s[pg * 16] / 16);
  EXPECT_EQ(pages.size(), 16u);
}

TEST(TokenToKVPool, RandomFillIsSeededAndNeverZero) {
  CpuDevice d;
  TokenToKVPool a(d, 64, 16, 2, 2, 64, DType::bf16, false, 1);
  TokenToKVPool b(d, 64, 16, 2, 2, 64, DType::bf16, false, 1);
  a.fill_random(7);
  b.fill_random(7);
  const std::int64_t n = a.layer_bytes() / 2;
  const auto* ka = static_cast<const std::uint16_t*>(a.k_buffer(1));
  const auto* kb = static_cast<const std::uint16_t*>(b.k_buffer(1));
  const auto* va = static_cast<const std::uint16_t*>(a.v_buffer(1));
  int zeros = 0, same_kv = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(ka[i], kb[i]);
    zeros += (ka[i] & 0x7fff) == 0;
    same_kv += ka[i] == va[i];
  }
  EXPECT_LT(zeros, n / 1000 + 2);
  EXPECT_LT(same_kv, n / 50) << "K and V must come from different streams";
  b.fill_random(8);
  EXPECT_NE(std::memcmp(a.k_buffer(0), b.k_buffer(0), 256), 0);
}

}  // namespace
}  // namespace attnbench
