// Metadata kernels against hand-computed tables: lengths / indptr / window heads, FlashInfer kv_indices,
// TRTLLM page tables over shuffled pages (the tail of a row left untouched); KV write; seeded fill.
#include <gtest/gtest.h>

#include "engine/random_fill.hpp"
#include "kernels/cpu/kernels_cpu.hpp"

namespace attnbench {
namespace {

TEST(LengthsCpu, IndptrLengthsAndWindowHeads) {
  const std::vector<std::int32_t> seq = {5, 1, 12, 8}, prefix = {2, 0, 10, 8};
  std::vector<std::int32_t> lens(4), indptr(5, -1), start(4);
  LengthsParams p;
  p.seq_lens = seq.data();
  p.lens_out = lens.data();
  p.indptr_out = indptr.data();
  p.batch_size = 4;
  lengths_cpu(p);
  EXPECT_EQ(indptr, (std::vector<std::int32_t>{0, 5, 6, 18, 26}));
  p.sub = prefix.data();  // qo_indptr = cumsum(seq - prefix)
  lengths_cpu(p);
  EXPECT_EQ(indptr, (std::vector<std::int32_t>{0, 3, 4, 6, 6}));
  p.sub = nullptr;
  p.clamp_max = 4;  // sliding window: len = min(seq, window + 1), start = seq - len
  p.start_out = start.data();
  lengths_cpu(p);
  EXPECT_EQ(lens, (std::vector<std::int32_t>{4, 1, 4, 4}));
  EXPECT_EQ(start, (std::vector<std::int32_t>{1, 0, 8, 4}));
  EXPECT_EQ(indptr, (std::vector<std::int32_t>{0, 4, 5, 9, 13}));
  LengthsParams a;  // no seq_lens + add: arange(0, 3 * 4 + 1, 4), TRTLLM verify's cu_seqlens_q
  a.add = 4;
  a.indptr_out = indptr.data();
  a.batch_size = 3;
  lengths_cpu(a);
  EXPECT_EQ(std::vector<std::int32_t>(indptr.begin(), indptr.begin() + 4), (std::vector<std::int32_t>{0, 4, 8, 12}));
}

// req_to_token for two requests over shuffled pages of 4 tokens: request 1 on pages 7, 2, 9; request 2 on page 5.
std::vector<std::int32_t> req_to_token_table(int width) {
  std::vector<std::int32_t> t(3 * width, 0);
  const int pages1[] = {7, 2, 9};
  for (int m = 0; m < 10; ++m) t[1 * width + m] = pages1[m / 4] * 4 + m % 4;
  for (int m = 0; m < 3; ++m) t[2 * width + m] = 5 * 4 + m;
  return t;
}

TEST(KvIndicesCpu, CopiesReqToTokenRowsWithTrimmedHeads) {
  const int width = 12;
  const auto r2t = req_to_token_table(width);
  const std::vector<std::int32_t> rows = {2, 1}, indptr = {0, 3, 9}, start = {0, 4};
  std::vector<std::int32_t> out(9, -1);
  KvIndicesParams p;
  p.req_to_token = r2t.data();
  p.req_to_token_stride = width;
  p.req_pool_indices = rows.data();
  p.kv_indptr = indptr.data();
  p.kv_start = start.data();
  p.kv_indices = out.data();
  p.batch_size = 2;
  build_kv_indices_cpu(p);
  // Request row 2: slots 20, 21, 22. Request row 1 from position 4: pages 2 (8..11) then 9 (36, 37).
  EXPECT_EQ(out, (std::vector<std::int32_t>{20, 21, 22, 8, 9, 10, 11, 36, 37}));
}

TEST(PageTableCpu, PageIdsFromTheFirstTokenOfEachPageAndAnUntouchedTail) {
  const int width = 12;
  const auto r2t = req_to_token_table(width);
  const std::vector<std::int32_t> rows = {1, 2}, seq = {10, 3};
  std::vector<std::int32_t> table(2 * 5, -7);
  PageTableParams p;
  p.req_to_token = r2t.data();
  p.req_to_token_stride = width;
  p.req_pool_indices = rows.data();
  p.seq_lens = seq.data();
  p.page_table = table.data();
  p.max_num_pages = 5;
  p.page_size = 4;
  p.batch_size = 2;
  build_page_table_cpu(p);
  EXPECT_EQ(table, (std::vector<std::int32_t>{7, 2, 9, -7, -7, 5, -7, -7, -7, -7}));
}

TEST(WriteKvCpu, ScattersRowsToTheirSlots) {
  const int heads = 2, d = 4, tokens = 3;
  std::vector<std::uint16_t> kn(tokens * heads * d), vn(kn.size()), kc(10 * heads * d, 0), vc(kc.size(), 0);
  for (std::size_t i = 0; i < kn.size(); ++i) {
    kn[i] = static_cast<std::uint16_t>(100 + i);
    vn[i] = static_cast<std::uint16_t>(500 + i);
  }
  const std::vector<std::int64_t> loc = {7, 2, 9};
  KvWriteParams p;
  p.k_new = kn.data();
  p.v_new = vn.data();
  p.out_cache_loc = loc.data();
  p.k_cache = kc.data();
  p.v_cache = vc.data();
  p.num_tokens = tokens;
  p.num_kv_heads = heads;
  p.head_dim = d;
  p.dtype = DType::bf16;
  write_kv_cpu(p);
  for (int t = 0; t < tokens; ++t)
    for (int e = 0; e < heads * d; ++e) {
      EXPECT_EQ(kc[loc[t] * heads * d + e], kn[t * heads * d + e]);
      EXPECT_EQ(vc[loc[t] * heads * d + e], vn[t * heads * d + e]);
    }
  EXPECT_EQ(kc[0], 0);
  EXPECT_EQ(kc[3 * heads * d], 0);
}

TEST(FillCpu, SeededUniformMatchesTheHostRegenerationAndNeverZero) {
  std::vector<std::uint16_t> a(4096), b(4096);
  FillParams p;
  p.data = a.data();
  p.n = 4096;
  p.dtype = DType::bf16;
  p.seed = 77;
  p.lo = -1;
  p.hi = 1;
  fill_uniform_cpu(p);
  int zeros = 0;
  for (int i = 0; i < 4096; ++i) {
    ASSERT_EQ(bf16_to_float(a[i]), seeded_element(77, i, DType::bf16, -1, 1));
    ASSERT_GE(bf16_to_float(a[i]), -1.0f);
    ASSERT_LE(bf16_to_float(a[i]), 1.0f);
    zeros += a[i] == 0;
  }
  EXPECT_LE(zeros, 2);
  p.data = b.data();
  p.seed = 78;
  fill_uniform_cpu(p);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace attnbench
