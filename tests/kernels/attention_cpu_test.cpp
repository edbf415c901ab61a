// The CPU attention kernels (decode and prefill entries) and merge_state against the Eigen reference on
// random shapes: every addressing mode, GQA 1/4/8, head_dim 64/128/256, windows, sinks, soft cap, lse,
// ragged lengths including 1 and page-boundary lengths, position offsets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "kernels/cpu/kernels_cpu.hpp"
#include "kernels/random.hpp"
#include "reference/attention_reference.hpp"
#include "runner/validation.hpp"

namespace attnbench {
namespace {

struct Scenario {
  std::string name;
  int hq, hkv, d;
  DType dtype;
  KvAddressing addr;
  int page_size;
  std::vector<int> kv_lens, q_lens;
  bool causal = true;
  int window = -1;
  bool sinks = false;
  float cap = 0.0f;
  bool offsets = false;  // explicit q_start_pos / kv_start_pos
  bool decode_entry = false;
};

std::vector<unsigned char> random_tensor(std::int64_t n, DType t, std::uint64_t seed, float lo, float hi) {
  std::vector<unsigned char> b(static_cast<std::size_t>(n) * dtype_size(t));
  FillParams f;
  f.data = b.data();
  f.n = n;
  f.dtype = t;
  f.seed = seed;
  f.lo = lo;
  f.hi = hi;
  fill_uniform_cpu(f);
  return b;
}

double at(const std::vector<unsigned char>& b, std::int64_t i, DType t) { return load_as_float(b.data(), i, t); }

// Runs the scenario through the CPU kernel and checks every output element (and lse) against the reference.
ErrorStats run_scenario(const Scenario& s, std::uint64_t seed, bool with_lse = true) {
  const int bs = static_cast<int>(s.kv_lens.size());
  const int P = s.addr == KvAddressing::block_table ? s.page_size : 1;
  std::vector<int> qo(bs + 1, 0), kvp(bs + 1, 0);
  for (int i = 0; i < bs; ++i) {
    qo[i + 1] = qo[i] + s.q_lens[i];
    kvp[i + 1] = kvp[i] + s.kv_lens[i];
  }
  const int total_q = qo[bs], total_kv = kvp[bs];
  // Pool with shuffled pages (slot = page * P + offset); page 0 is padding.
  int pages = 1;
  for (int l : s.kv_lens) pages += (l + P - 1) / P;
  std::vector<int> page_ids(pages - 1);
  std::iota(page_ids.begin(), page_ids.end(), 1);
  std::shuffle(page_ids.begin(), page_ids.end(), std::mt19937_64(seed));
  const int max_pages = std::max(1, *std::max_element(s.kv_lens.begin(), s.kv_lens.end()) / P + 1);
  std::vector<std::int32_t> page_table(static_cast<std::size_t>(bs) * max_pages, -1), indices;
  std::vector<std::vector<std::int32_t>> slots(bs);
  int next = 0;
  for (int i = 0; i < bs; ++i)
    for (int m = 0; m < s.kv_lens[i]; ++m) {
      if (m % P == 0) page_table[i * max_pages + m / P] = page_ids[next++];
      slots[i].push_back(page_table[i * max_pages + m / P] * P + m % P);
      indices.push_back(slots[i].back());
    }
  const std::int64_t num_slots = static_cast<std::int64_t>(pages) * P;
  const std::int64_t kv_row = static_cast<std::int64_t>(s.hkv) * s.d, q_row = static_cast<std::int64_t>(s.hq) * s.d;
  const bool ragged = s.addr == KvAddressing::ragged;
  const auto k = random_tensor((ragged ? total_kv : num_slots) * kv_row, s.dtype, seed + 1, -1, 1);
  const auto v = random_tensor((ragged ? total_kv : num_slots) * kv_row, s.dtype, seed + 2, -1, 1);
  const auto q = random_tensor(total_q * q_row, s.dtype, seed + 3, -4, 4);
  std::vector<unsigned char> o(static_cast<std::size_t>(total_q * q_row) * dtype_size(s.dtype), 0xff);  // poisoned
  std::vector<float> lse(static_cast<std::size_t>(total_q) * s.hq, std::nanf(""));
  std::vector<float> sinks;
  if (s.sinks)
    for (int h = 0; h < s.hq; ++h) sinks.push_back(-1.0f + 3.0f * uniform_at(seed + 4, h));
  std::vector<std::int32_t> q_start(bs), kv_start(bs);
  for (int i = 0; i < bs; ++i) {
    kv_start[i] = 7 * i + 3;
    q_start[i] = kv_start[i] + s.kv_lens[i] - s.q_lens[i] - (i % 3);  // some rows see fewer keys
  }

  AttentionParams p;
  p.q = q.data();
  p.o = o.data();
  p.lse = with_lse ? lse.data() : nullptr;
  p.qo_indptr = qo.data();
  p.addressing = s.addr;
  p.k = k.data();
  p.v = v.data();
  p.kv_indptr = kvp.data();
  p.kv_indices = indices.data();
  p.kv_lens = s.kv_lens.data();
  p.page_table = page_table.data();
  p.page_table_stride = max_pages;
  p.page_size = P;
  p.q_start_pos = s.offsets ? q_start.data() : nullptr;
  p.kv_start_pos = s.offsets ? kv_start.data() : nullptr;
  p.batch_size = bs;
  p.total_q = total_q;
  p.num_qo_heads = s.hq;
  p.num_kv_heads = s.hkv;
  p.head_dim = s.d;
  p.dtype = s.dtype;
  p.causal = s.causal;
  p.window_left = s.window;
  p.sm_scale = 1.0f / std::sqrt(static_cast<float>(s.d));
  p.logits_soft_cap = s.cap;
  p.sinks = s.sinks ? sinks.data() : nullptr;
  if (s.decode_entry)
    attention_decode_cpu(p);
  else
    attention_prefill_cpu(p);

  ErrorStats err;
  const Tolerance tol = tolerance_for(s.dtype);
  for (int i = 0; i < bs; ++i) {
    ReferenceCase rc;
    rc.q_len = s.q_lens[i];
    rc.kv_len = s.kv_lens[i];
    rc.num_qo_heads = s.hq;
    rc.num_kv_heads = s.hkv;
    rc.head_dim = s.d;
    rc.q_start_pos = s.offsets ? q_start[i] - kv_start[i] : s.kv_lens[i] - s.q_lens[i];
    rc.causal = s.causal;
    rc.window_left = s.window;
    rc.sm_scale = p.sm_scale;
    rc.logits_soft_cap = s.cap;
    for (float x : sinks) rc.sinks.push_back(x);
    std::vector<double> rq(static_cast<std::size_t>(rc.q_len) * q_row), rk(static_cast<std::size_t>(rc.kv_len) * kv_row), rv(rk.size());
    for (std::int64_t e = 0; e < static_cast<std::int64_t>(rq.size()); ++e) rq[e] = at(q, qo[i] * q_row + e, s.dtype);
    for (int m = 0; m < rc.kv_len; ++m)
      for (std::int64_t e = 0; e < kv_row; ++e) {
        const std::int64_t row = ragged ? kvp[i] + m : slots[i][m];
        rk[m * kv_row + e] = at(k, row * kv_row + e, s.dtype);
        rv[m * kv_row + e] = at(v, row * kv_row + e, s.dtype);
      }
    std::vector<double> ro(rq.size()), rl(static_cast<std::size_t>(rc.q_len) * s.hq);
    reference_attention(rc, rq, rk, rv, ro, rl);
    for (std::size_t e = 0; e < ro.size(); ++e) err.add(at(o, qo[i] * q_row + static_cast<std::int64_t>(e), s.dtype), ro[e], tol);
    if (with_lse)
      for (std::size_t e = 0; e < rl.size(); ++e) {
        const double got = lse[static_cast<std::size_t>(qo[i]) * s.hq + e];
        if (std::isinf(rl[e])) {
          EXPECT_TRUE(std::isinf(got) && got < 0) << s.name;
        } else {
          EXPECT_NEAR(got, rl[e], 1e-4 * std::max(1.0, std::abs(rl[e]))) << s.name;
        }
      }
  }
  return err;
}

std::vector<Scenario> scenarios() {
  using A = KvAddressing;
  std::vector<Scenario> v;
  // Decode: one query per request, page-boundary and length-1 requests.
  for (A a : {A::token_indices, A::block_table})
    for (int g : {1, 4, 8}) v.push_back({"decode g" + std::to_string(g), 8, 8 / g, 128, DType::bf16, a, 16, {1, 15, 16, 17, 64, 300}, {1, 1, 1, 1, 1, 1}, true, -1, false, 0, false, true});
  // Head dims and dtypes.
  for (int d : {64, 128, 256})
    for (DType t : {DType::bf16, DType::fp16, DType::fp32})
      v.push_back({"prefill d" + std::to_string(d), 4, 2, d, t, A::block_table, 32, {33, 5, 64}, {20, 5, 1}});
  // Extend with and without prefix, all modes.
  v.push_back({"ragged causal", 8, 2, 64, DType::bf16, A::ragged, 1, {40, 1, 129}, {40, 1, 129}});
  v.push_back({"paged prefix noncausal", 8, 2, 64, DType::bf16, A::token_indices, 1, {100, 7, 1}, {30, 3, 2}, false});
  v.push_back({"block extend with prefix", 8, 1, 64, DType::bf16, A::block_table, 64, {200, 65, 128}, {72, 1, 64}});
  // Windows (the TRTLLM way: full table, the kernel applies the window), sinks, soft cap, offsets.
  v.push_back({"window", 4, 4, 64, DType::bf16, A::block_table, 16, {90, 33}, {10, 33}, true, 7});
  v.push_back({"window offsets", 4, 2, 64, DType::bf16, A::token_indices, 1, {50, 20}, {12, 20}, false, 9, false, 0, true});
  v.push_back({"sinks + cap", 4, 1, 64, DType::fp16, A::block_table, 16, {45, 2}, {4, 2}, true, -1, true, 30.0f});
  v.push_back({"verify rows", 8, 2, 128, DType::bf16, A::block_table, 32, {36, 100, 4}, {4, 4, 4}, true, -1, false, 0, false, true});
  return v;
}

TEST(AttentionCpu, MatchesTheReferenceOnEveryScenario) {
  std::uint64_t seed = 100;
  for (const Scenario& s : scenarios()) {
    const ErrorStats e = run_scenario(s, seed++);
    EXPECT_TRUE(e.pass()) << s.name << ": max abs " << e.max_abs << ", mismatches " << e.mismatches << "/" << e.elements
                          << ", NaN " << e.nans;
    EXPECT_LT(e.rel_l2(), 5e-3) << s.name;
  }
}

TEST(AttentionCpu, RowsWithNoVisibleKeyAreZeroWithMinusInfiniteLse) {
  // Window 0 and causal with offsets where a row sits before every key.
  Scenario s{"empty rows", 2, 1, 64, DType::fp32, KvAddressing::token_indices, 1, {8}, {3}, true, -1, false, 0, true};
  const ErrorStats e = run_scenario(s, 9);
  EXPECT_TRUE(e.pass()) << e.max_abs;
}

TEST(AttentionCpu, IsDeterministic) {
  Scenario s{"det", 8, 2, 128, DType::bf16, KvAddressing::block_table, 16, {300, 77}, {50, 77}};
  const ErrorStats a = run_scenario(s, 3), b = run_scenario(s, 3);
  EXPECT_EQ(a.max_abs, b.max_abs);
  EXPECT_EQ(a.sum_sq_err, b.sum_sq_err);
}

TEST(MergeStateCpu, MergingTwoKeySetsEqualsAttendingTheUnion) {
  // Attend keys [0, 40) and [40, 100) separately (non-causal, lse), merge, compare with all 100 keys.
  const int hq = 4, hkv = 2, d = 64, rows = 3, n = 100, cut = 40;
  const DType t = DType::fp32;
  const auto k = random_tensor(static_cast<std::int64_t>(n) * hkv * d, t, 1, -1, 1);
  const auto v = random_tensor(static_cast<std::int64_t>(n) * hkv * d, t, 2, -1, 1);
  const auto q = random_tensor(static_cast<std::int64_t>(rows) * hq * d, t, 3, -4, 4);
  auto attend = [&](int lo, int hi, std::vector<unsigned char>& o, std::vector<float>& lse) {
    std::vector<int> qo = {0, rows}, kvp = {0, hi - lo};
    AttentionParams p;
    p.q = q.data();
    p.o = o.data();
    p.lse = lse.data();
    p.qo_indptr = qo.data();
    p.addressing = KvAddressing::ragged;
    p.k = k.data() + static_cast<std::size_t>(lo) * hkv * d * 4;
    p.v = v.data() + static_cast<std::size_t>(lo) * hkv * d * 4;
    p.kv_indptr = kvp.data();
    p.batch_size = 1;
    p.total_q = rows;
    p.num_qo_heads = hq;
    p.num_kv_heads = hkv;
    p.head_dim = d;
    p.dtype = t;
    p.causal = false;
    p.sm_scale = 0.125f;
    attention_prefill_cpu(p);
  };
  std::vector<unsigned char> o1(rows * hq * d * 4), o2(o1.size()), all(o1.size()), merged(o1.size());
  std::vector<float> l1(rows * hq), l2(rows * hq), la(rows * hq);
  attend(0, cut, o1, l1);
  attend(cut, n, o2, l2);
  attend(0, n, all, la);
  MergeStateParams m;
  m.o1 = o1.data();
  m.lse1 = l1.data();
  m.o2 = o2.data();
  m.lse2 = l2.data();
  m.o = merged.data();
  m.rows = rows;
  m.num_heads = hq;
  m.head_dim = d;
  m.dtype = t;
  merge_state_cpu(m);
  for (int i = 0; i < rows * hq * d; ++i) ASSERT_NEAR(at(merged, i, t), at(all, i, t), 1e-5) << i;
  // An empty side (lse = -inf) leaves the other state unchanged.
  std::fill(l2.begin(), l2.end(), -std::numeric_limits<float>::infinity());
  merge_state_cpu(m);
  for (int i = 0; i < rows * hq * d; ++i) ASSERT_EQ(at(merged, i, t), at(o1, i, t));
}

}  // namespace
}  // namespace attnbench
