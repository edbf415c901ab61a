// The small CUDA kernels against their CPU twins (kernels/cpu/): fill_uniform, write_kv, lengths,
// build_kv_indices and build_page_table must give IDENTICAL bytes; merge_state agrees within rounding.
// Outputs are poisoned with 0xFF bytes first, so an element the kernel forgot stays NaN / -1 and fails.
// Run: ctest -L gpu -R SmallKernels   (or attnbench_gpu_tests --gtest_filter='SmallKernels.*')
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "device/device.hpp"
#include "device/device_factory.hpp"
#include "kernels/cpu/kernels_cpu.hpp"
#include "kernels/kernel_table.hpp"

namespace attnbench {
namespace {

#define ATTNBENCH_REQUIRE_GPU() \
  if (!gpu_availability().usable) GTEST_SKIP() << gpu_availability().detail

// Device buffer holding a copy of `host`.
template <class T>
Buffer upload(Device& dev, const std::vector<T>& host, const char* tag) {
  Buffer b = dev.allocate(static_cast<std::int64_t>(std::max<std::size_t>(1, host.size()) * sizeof(T)),
                          MemKind::device, tag);
  dev.copy(b.data(), host.data(), static_cast<std::int64_t>(host.size() * sizeof(T)));
  return b;
}

template <class T>
std::vector<T> download(Device& dev, const Buffer& b, std::size_t n) {
  std::vector<T> host(n);
  dev.copy(host.data(), b.data(), static_cast<std::int64_t>(n * sizeof(T)));
  dev.synchronize();
  return host;
}

// A device buffer of `bytes` filled with 0xFF (NaN for every float dtype, -1 for int32).
Buffer poisoned(Device& dev, std::int64_t bytes, const char* tag) {
  Buffer b = dev.allocate(std::max<std::int64_t>(bytes, 1), MemKind::device, tag);
  dev.memset(b.data(), 0xFF, std::max<std::int64_t>(bytes, 1));
  return b;
}

std::vector<std::uint8_t> random_bytes_of(DType dt, std::int64_t n, std::uint64_t seed) {
  std::vector<std::uint8_t> v(static_cast<std::size_t>(n * dtype_size(dt)));
  FillParams fp;
  fp.data = v.data();
  fp.n = n;
  fp.dtype = dt;
  fp.seed = seed;
  fill_uniform_cpu(fp);
  return v;
}

// ---- fill_uniform --------------------------------------------------------------------------------------

TEST(SmallKernels, FillIsBitIdenticalToCpu) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  struct Case {
    DType dt;
    std::int64_t n;
    std::uint64_t seed;
    float lo, hi;
  };
  const Case cases[] = {{DType::bf16, 1, 1, -1.0f, 1.0f},          {DType::bf16, 1'000'003, 42, -1.0f, 1.0f},
                        {DType::fp16, 777'777, 7, -3.5f, 0.25f},    {DType::fp32, 300'001, 9, -1.0f, 1.0f},
                        {DType::fp32, 4097, 0xdeadbeefULL, 2.0f, 5.0f}, {DType::fp16, 65'536, 3, -70000.f, 70000.f}};
  for (const Case& c : cases) {
    const std::int64_t bytes = c.n * dtype_size(c.dt);
    Buffer d = poisoned(*dev, bytes, "test.fill");
    FillParams fp;
    fp.data = d.data();
    fp.n = c.n;
    fp.dtype = c.dt;
    fp.seed = c.seed;
    fp.lo = c.lo;
    fp.hi = c.hi;
    dev->kernels().fill_uniform(fp, dev->stream());
    const auto got = download<std::uint8_t>(*dev, d, static_cast<std::size_t>(bytes));
    std::vector<std::uint8_t> want(static_cast<std::size_t>(bytes));
    fp.data = want.data();
    fill_uniform_cpu(fp);
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.size()))
        << dtype_name(c.dt) << " n=" << c.n << " seed=" << c.seed;
  }
}

// ---- write_kv --------------------------------------------------------------------------------------------

TEST(SmallKernels, WriteKvIsBitIdenticalToCpu) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  struct Case {
    DType dt;
    int tokens, heads, dim, slots;
  };
  // 16-byte rows (vector path) and a 12-byte row (16-bit path); 0 tokens.
  const Case cases[] = {{DType::bf16, 300, 8, 128, 1000}, {DType::fp16, 1, 2, 64, 7},  {DType::fp32, 77, 4, 256, 100},
                        {DType::bf16, 50, 3, 2, 64},       {DType::bf16, 0, 8, 128, 16}};
  std::mt19937_64 rng(5);
  for (const Case& c : cases) {
    const std::int64_t row = static_cast<std::int64_t>(c.heads) * c.dim;
    auto k_new = random_bytes_of(c.dt, c.tokens * row, 11);
    auto v_new = random_bytes_of(c.dt, c.tokens * row, 12);
    auto k_cache = random_bytes_of(c.dt, c.slots * row, 13);
    auto v_cache = random_bytes_of(c.dt, c.slots * row, 14);
    std::vector<std::int64_t> slots(static_cast<std::size_t>(c.slots));
    std::iota(slots.begin(), slots.end(), 0);
    std::shuffle(slots.begin(), slots.end(), rng);
    std::vector<std::int64_t> loc(slots.begin(), slots.begin() + c.tokens);

    Buffer dk = upload(*dev, k_new, "test.k_new"), dv = upload(*dev, v_new, "test.v_new");
    Buffer dkc = upload(*dev, k_cache, "test.k_cache"), dvc = upload(*dev, v_cache, "test.v_cache");
    Buffer dloc = upload(*dev, loc, "test.loc");
    KvWriteParams p;
    p.k_new = dk.data();
    p.v_new = dv.data();
    p.out_cache_loc = dloc.as<std::int64_t>();
    p.k_cache = dkc.data();
    p.v_cache = dvc.data();
    p.num_tokens = c.tokens;
    p.num_kv_heads = c.heads;
    p.head_dim = c.dim;
    p.dtype = c.dt;
    dev->kernels().write_kv(p, dev->stream());
    const auto got_k = download<std::uint8_t>(*dev, dkc, k_cache.size());
    const auto got_v = download<std::uint8_t>(*dev, dvc, v_cache.size());
    p.k_new = k_new.data();
    p.v_new = v_new.data();
    p.out_cache_loc = loc.data();
    p.k_cache = k_cache.data();
    p.v_cache = v_cache.data();
    write_kv_cpu(p);
    EXPECT_EQ(got_k, k_cache) << "tokens=" << c.tokens << " dim=" << c.dim;
    EXPECT_EQ(got_v, v_cache) << "tokens=" << c.tokens << " dim=" << c.dim;
  }
}

// fp8 cache (--kv-cache-dtype): the GPU's quantizing write (cuda_fp8.h, satfinite) equals the hand-written CPU
// twin byte for byte, with scales, for both formats, including values that saturate (|x / scale| > 448 for
// e4m3); and the pool fill's fp8 rounding (shared host/device code) equals the host's.
TEST(SmallKernels, Fp8WriteKvAndFillAreBitIdenticalToCpu) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  std::mt19937_64 rng(6);
  for (DType kv : {DType::fp8_e4m3, DType::fp8_e5m2})
    for (DType dt : {DType::bf16, DType::fp16}) {
      const int tokens = 333, heads = 4, dim = 128, slots = 1000;
      const std::int64_t row = static_cast<std::int64_t>(heads) * dim;
      FillParams fp;
      std::vector<std::uint8_t> k_new(static_cast<std::size_t>(tokens * row * 2)), v_new(k_new.size());
      fp.dtype = dt;
      fp.n = tokens * row;
      fp.lo = -600.0f;  // beyond e4m3's 448 at scale 1: the saturating path
      fp.hi = 600.0f;
      fp.data = k_new.data();
      fp.seed = 21;
      fill_uniform_cpu(fp);
      fp.data = v_new.data();
      fp.seed = 22;
      fill_uniform_cpu(fp);
      auto k_cache = random_bytes_of(kv, slots * row, 23);
      auto v_cache = random_bytes_of(kv, slots * row, 24);
      std::vector<std::int64_t> all(static_cast<std::size_t>(slots));
      std::iota(all.begin(), all.end(), 0);
      std::shuffle(all.begin(), all.end(), rng);
      std::vector<std::int64_t> loc(all.begin(), all.begin() + tokens);
      Buffer dk = upload(*dev, k_new, "test.k_new"), dv = upload(*dev, v_new, "test.v_new");
      Buffer dkc = upload(*dev, k_cache, "test.k_cache"), dvc = upload(*dev, v_cache, "test.v_cache");
      Buffer dloc = upload(*dev, loc, "test.loc");
      KvWriteParams p;
      p.k_new = dk.data();
      p.v_new = dv.data();
      p.out_cache_loc = dloc.as<std::int64_t>();
      p.k_cache = dkc.data();
      p.v_cache = dvc.data();
      p.num_tokens = tokens;
      p.num_kv_heads = heads;
      p.head_dim = dim;
      p.dtype = dt;
      p.cache_fp8 = kv;
      p.k_scale = 1.0f;
      p.v_scale = 0.37f;
      dev->kernels().write_kv(p, dev->stream());
      const auto got_k = download<std::uint8_t>(*dev, dkc, k_cache.size());
      const auto got_v = download<std::uint8_t>(*dev, dvc, v_cache.size());
      p.k_new = k_new.data();
      p.v_new = v_new.data();
      p.out_cache_loc = loc.data();
      p.k_cache = k_cache.data();
      p.v_cache = v_cache.data();
      write_kv_cpu(p);
      EXPECT_EQ(got_k, k_cache) << dtype_name(kv) << " from " << dtype_name(dt);
      EXPECT_EQ(got_v, v_cache) << dtype_name(kv) << " from " << dtype_name(dt);

      Buffer f = poisoned(*dev, 100'003, "test.fill8");
      FillParams ff;
      ff.data = f.data();
      ff.n = 100'003;
      ff.dtype = kv;
      ff.seed = 31;
      dev->kernels().fill_uniform(ff, dev->stream());
      const auto got_f = download<std::uint8_t>(*dev, f, 100'003);
      std::vector<std::uint8_t> want_f(100'003);
      ff.data = want_f.data();
      fill_uniform_cpu(ff);
      EXPECT_EQ(got_f, want_f) << dtype_name(kv);
    }
}

// ---- lengths ---------------------------------------------------------------------------------------------

TEST(SmallKernels, LengthsAreIdenticalToCpu) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  std::mt19937 rng(17);
  struct Case {
    int bs;
    bool seq, sub;
    int add, clamp;
  };
  const Case cases[] = {{0, true, false, 0, 0},   {1, true, false, 0, 0},    {7, true, true, 3, 0},
                        {1500, true, false, 0, 0}, {3000, true, true, 1, 200}, {64, false, false, 1, 0},
                        {2049, true, false, 4, 4096}};
  for (const Case& c : cases) {
    std::vector<std::int32_t> seq(static_cast<std::size_t>(std::max(c.bs, 1))), sub(seq.size());
    for (auto& s : seq) s = 1 + static_cast<std::int32_t>(rng() % 5000);
    for (std::size_t i = 0; i < sub.size(); ++i) sub[i] = static_cast<std::int32_t>(rng() % seq[i]);
    Buffer ds = upload(*dev, seq, "test.seq"), dsub = upload(*dev, sub, "test.sub");
    Buffer lens = poisoned(*dev, 4LL * c.bs, "test.lens"), indptr = poisoned(*dev, 4LL * (c.bs + 1), "test.indptr"),
           start = poisoned(*dev, 4LL * c.bs, "test.start");
    LengthsParams p;
    p.seq_lens = c.seq ? ds.as<std::int32_t>() : nullptr;
    p.sub = c.sub ? dsub.as<std::int32_t>() : nullptr;
    p.add = c.add;
    p.clamp_max = c.clamp;
    p.lens_out = lens.as<std::int32_t>();
    p.indptr_out = indptr.as<std::int32_t>();
    p.start_out = start.as<std::int32_t>();
    p.batch_size = c.bs;
    dev->kernels().lengths(p, dev->stream());
    const auto g_lens = download<std::int32_t>(*dev, lens, c.bs);
    const auto g_indptr = download<std::int32_t>(*dev, indptr, c.bs + 1);
    const auto g_start = download<std::int32_t>(*dev, start, c.bs);
    std::vector<std::int32_t> w_lens(c.bs), w_indptr(c.bs + 1), w_start(c.bs);
    p.seq_lens = c.seq ? seq.data() : nullptr;
    p.sub = c.sub ? sub.data() : nullptr;
    p.lens_out = w_lens.data();
    p.indptr_out = w_indptr.data();
    p.start_out = w_start.data();
    lengths_cpu(p);
    EXPECT_EQ(g_lens, w_lens) << "bs=" << c.bs;
    EXPECT_EQ(g_indptr, w_indptr) << "bs=" << c.bs;
    EXPECT_EQ(g_start, w_start) << "bs=" << c.bs;
  }
}

// ---- build_kv_indices / build_page_table ----------------------------------------------------------------

struct TokenPool {
  int rows = 0, width = 0;
  std::vector<std::int32_t> req_to_token;  // [rows, width] distinct random slots
};

TokenPool make_pool(int rows, int width, std::uint32_t seed) {
  TokenPool t;
  t.rows = rows;
  t.width = width;
  t.req_to_token.resize(static_cast<std::size_t>(rows) * width);
  std::iota(t.req_to_token.begin(), t.req_to_token.end(), 1);
  std::mt19937 rng(seed);
  std::shuffle(t.req_to_token.begin(), t.req_to_token.end(), rng);
  return t;
}

TEST(SmallKernels, BuildKvIndicesIsIdenticalToCpu) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  const TokenPool pool = make_pool(40, 6000, 3);
  Buffer dr2t = upload(*dev, pool.req_to_token, "test.req_to_token");
  std::mt19937 rng(4);
  for (int bs : {1, 5, 33}) {
    for (bool with_start : {false, true}) {
      std::vector<std::int32_t> pool_idx(bs), start(bs), indptr(bs + 1, 0);
      const int lens_fixed[] = {1, 16, 17, 5000, 2048, 2049, 0, 255};
      for (int i = 0; i < bs; ++i) {
        pool_idx[i] = static_cast<std::int32_t>(rng() % pool.rows);
        const int len = i < 8 ? lens_fixed[i] : static_cast<int>(rng() % 3000);
        start[i] = with_start ? static_cast<std::int32_t>(rng() % (pool.width - len + 1)) : 0;
        indptr[i + 1] = indptr[i] + len;
      }
      const int total = indptr[bs];
      Buffer dpi = upload(*dev, pool_idx, "test.pool_idx"), dst = upload(*dev, start, "test.start"),
             dip = upload(*dev, indptr, "test.indptr");
      Buffer out = poisoned(*dev, 4LL * total, "test.kv_indices");
      KvIndicesParams p;
      p.req_to_token = dr2t.as<std::int32_t>();
      p.req_to_token_stride = pool.width;
      p.req_pool_indices = dpi.as<std::int32_t>();
      p.kv_indptr = dip.as<std::int32_t>();
      p.kv_start = with_start ? dst.as<std::int32_t>() : nullptr;
      p.kv_indices = out.as<std::int32_t>();
      p.batch_size = bs;
      dev->kernels().build_kv_indices(p, dev->stream());
      const auto got = download<std::int32_t>(*dev, out, total);
      std::vector<std::int32_t> want(total);
      p.req_to_token = pool.req_to_token.data();
      p.req_pool_indices = pool_idx.data();
      p.kv_indptr = indptr.data();
      p.kv_start = with_start ? start.data() : nullptr;
      p.kv_indices = want.data();
      build_kv_indices_cpu(p);
      EXPECT_EQ(got, want) << "bs=" << bs << " start=" << with_start;
    }
  }
}

TEST(SmallKernels, BuildPageTableIsIdenticalToCpu) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  const TokenPool pool = make_pool(20, 4096, 8);
  Buffer dr2t = upload(*dev, pool.req_to_token, "test.req_to_token");
  std::mt19937 rng(9);
  for (int ps : {16, 32, 64, 128}) {
    const int bs = 12, max_pages = 4096 / ps - 3;  // some requests need more pages than the table holds
    std::vector<std::int32_t> pool_idx(bs), seq(bs);
    const int lens_fixed[] = {1, ps - 1, ps, ps + 1, 2 * ps, 4096, 1000, 4095};
    for (int i = 0; i < bs; ++i) {
      pool_idx[i] = static_cast<std::int32_t>(rng() % pool.rows);
      seq[i] = i < 8 ? lens_fixed[i] : 1 + static_cast<std::int32_t>(rng() % 4096);
    }
    // The untouched tail of each row must stay as it was: start both tables from the same random content.
    std::vector<std::int32_t> table(static_cast<std::size_t>(bs) * max_pages);
    for (auto& x : table) x = static_cast<std::int32_t>(rng());
    Buffer dpi = upload(*dev, pool_idx, "test.pool_idx"), dseq = upload(*dev, seq, "test.seq"),
           dtab = upload(*dev, table, "test.page_table");
    PageTableParams p;
    p.req_to_token = dr2t.as<std::int32_t>();
    p.req_to_token_stride = pool.width;
    p.req_pool_indices = dpi.as<std::int32_t>();
    p.seq_lens = dseq.as<std::int32_t>();
    p.page_table = dtab.as<std::int32_t>();
    p.max_num_pages = max_pages;
    p.page_size = ps;
    p.batch_size = bs;
    dev->kernels().build_page_table(p, dev->stream());
    const auto got = download<std::int32_t>(*dev, dtab, table.size());
    p.req_to_token = pool.req_to_token.data();
    p.req_pool_indices = pool_idx.data();
    p.seq_lens = seq.data();
    p.page_table = table.data();
    build_page_table_cpu(p);
    EXPECT_EQ(got, table) << "page_size=" << ps;
  }
}

// ---- merge_state -----------------------------------------------------------------------------------------

TEST(SmallKernels, MergeStateMatchesCpu) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> u(-8.0f, 8.0f);
  for (DType dt : {DType::bf16, DType::fp16, DType::fp32}) {
    for (bool alias : {false, true}) {
      const int rows = 333, heads = 8, dim = 128;
      const std::int64_t n = static_cast<std::int64_t>(rows) * heads * dim;
      auto o1 = random_bytes_of(dt, n, 31), o2 = random_bytes_of(dt, n, 32);
      std::vector<float> l1(static_cast<std::size_t>(rows) * heads), l2(l1.size());
      for (std::size_t i = 0; i < l1.size(); ++i) {
        l1[i] = u(rng);
        l2[i] = u(rng);
        if (i % 17 == 0) l1[i] = -INFINITY;  // one side empty
        if (i % 23 == 0) l2[i] = -INFINITY;
        if (i % 391 == 0) l1[i] = l2[i] = -INFINITY;  // both empty: o = 0
      }
      Buffer d1 = upload(*dev, o1, "test.o1"), d2 = upload(*dev, o2, "test.o2");
      Buffer dl1 = upload(*dev, l1, "test.l1"), dl2 = upload(*dev, l2, "test.l2");
      Buffer dout = poisoned(*dev, n * dtype_size(dt), "test.o");
      MergeStateParams p;
      p.o1 = d1.data();
      p.lse1 = dl1.as<float>();
      p.o2 = d2.data();
      p.lse2 = dl2.as<float>();
      p.o = alias ? d1.data() : dout.data();
      p.rows = rows;
      p.num_heads = heads;
      p.head_dim = dim;
      p.dtype = dt;
      dev->kernels().merge_state(p, dev->stream());
      const auto got = download<std::uint8_t>(*dev, alias ? d1 : dout, o1.size());
      std::vector<std::uint8_t> want(o1.size());
      p.o1 = o1.data();
      p.o2 = o2.data();
      p.lse1 = l1.data();
      p.lse2 = l2.data();
      p.o = want.data();
      merge_state_cpu(p);
      double max_err = 0.0;
      for (std::int64_t i = 0; i < n; ++i) {
        const double g = load_as_float(got.data(), i, dt), w = load_as_float(want.data(), i, dt);
        const double e = std::isnan(g) ? INFINITY : std::fabs(g - w);
        max_err = std::max(max_err, e);
      }
      const double tol = dt == DType::fp32 ? 1e-5 : (dt == DType::fp16 ? 1e-3 : 8e-3);  // one ulp of O(1)
      EXPECT_LE(max_err, tol) << dtype_name(dt) << " alias=" << alias;
      std::printf("[ merge_state %s alias=%d ] max abs err vs CPU %.3g\n", std::string(dtype_name(dt)).c_str(),
                  alias ? 1 : 0, max_err);
    }
  }
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

// ---- copy_rows (index_select / index_copy_ of whole rows) -----------------------------------------------

TEST(SmallKernels, CopyRowsIsBitIdenticalToCpu) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  std::mt19937 rng(7);
  // (rows, row_bytes, dst stride, src stride, gather, scatter): 16-byte and 4-byte paths, strided halves as
  // fmha_v2's [TP, 2, P, Hkv, D] page copy makes them, 4-byte page ids.
  struct Case {
    std::int64_t rows, row_bytes, dst_stride, src_stride;
    bool gather, scatter;
  };
  for (const Case& c : {Case{37, 4, 0, 0, true, false}, Case{64, 131072, 262144, 0, true, false},
                        Case{9, 4096, 0, 0, false, true}, Case{13, 12, 20, 0, true, false}, Case{300, 48, 0, 64, true, true}}) {
    SCOPED_TRACE(::testing::Message() << c.rows << " rows of " << c.row_bytes << " B");
    const std::int64_t ss = c.src_stride > 0 ? c.src_stride : c.row_bytes;
    const std::int64_t ds = c.dst_stride > 0 ? c.dst_stride : c.row_bytes;
    const std::int64_t src_rows = c.rows + 11;
    std::vector<std::uint8_t> src(static_cast<std::size_t>(src_rows * ss));
    for (auto& b : src) b = static_cast<std::uint8_t>(rng());
    std::vector<std::int32_t> gidx(static_cast<std::size_t>(c.rows)), sidx(static_cast<std::size_t>(c.rows));
    std::vector<std::int32_t> perm(static_cast<std::size_t>(src_rows));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    for (std::int64_t r = 0; r < c.rows; ++r) gidx[r] = perm[r];
    std::shuffle(perm.begin(), perm.end(), rng);
    for (std::int64_t r = 0; r < c.rows; ++r) sidx[r] = perm[r];  // distinct targets
    const std::int64_t dst_bytes = src_rows * ds;
    Buffer dsrc = upload(*dev, src, "test.src");
    Buffer dg = upload(*dev, gidx, "test.gidx");
    Buffer dsi = upload(*dev, sidx, "test.sidx");
    Buffer ddst = poisoned(*dev, dst_bytes, "test.dst");
    std::vector<std::uint8_t> want(static_cast<std::size_t>(dst_bytes), 0xFF);
    CopyRowsParams p;
    p.rows = c.rows;
    p.row_bytes = c.row_bytes;
    p.dst_row_stride = c.dst_stride;
    p.src_row_stride = c.src_stride;
    p.dst = want.data();
    p.src = src.data();
    p.src_index = c.gather ? gidx.data() : nullptr;
    p.dst_index = c.scatter ? sidx.data() : nullptr;
    copy_rows_cpu(p);
    p.dst = ddst.data();
    p.src = dsrc.data();
    p.src_index = c.gather ? dg.as<std::int32_t>() : nullptr;
    p.dst_index = c.scatter ? dsi.as<std::int32_t>() : nullptr;
    dev->kernels().copy_rows(p, dev->stream());
    EXPECT_EQ(download<std::uint8_t>(*dev, ddst, static_cast<std::size_t>(dst_bytes)), want);
  }
}

}  // namespace
}  // namespace attnbench
