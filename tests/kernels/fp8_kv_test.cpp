// fp8 KV cache (--kv-cache-dtype fp8_e4m3 / fp8_e5m2): the hand-written conversions, the quantizing KV write,
// the CPU attention kernel reading an fp8 pool with SGLang's per-tensor scales against the float64 reference
// (a wrong scale must fail), and the whole sweep through the binary: every mode and backend validated.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "device/cpu_device.hpp"
#include "engine/memory_pool.hpp"
#include "runner/case.hpp"
#include "runner/case_work.hpp"
#include "runner/plan.hpp"
#include "kernels/cpu/kernels_cpu.hpp"
#include "engine/random_fill.hpp"
#include "kernels/random.hpp"
#include "reference/attention_reference.hpp"
#include "runner/validation.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

float decode8(std::uint8_t b, DType t) { return t == DType::fp8_e4m3 ? fp8_e4m3_to_float(b) : fp8_e5m2_to_float(b); }
std::uint8_t encode8(float f, DType t) { return t == DType::fp8_e4m3 ? float_to_fp8_e4m3(f) : float_to_fp8_e5m2(f); }

TEST(Fp8, KnownValues) {
  EXPECT_EQ(fp8_e4m3_to_float(0x38), 1.0f);        // 0.0111.000: 2^(7-7)
  EXPECT_EQ(fp8_e4m3_to_float(0x7e), 448.0f);      // the largest finite e4m3
  EXPECT_EQ(fp8_e4m3_to_float(0x01), 0.001953125f);  // smallest subnormal 2^-9
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_float(0x7f)));
  EXPECT_EQ(fp8_e5m2_to_float(0x3c), 1.0f);
  EXPECT_EQ(fp8_e5m2_to_float(0x7b), 57344.0f);
  EXPECT_TRUE(std::isinf(fp8_e5m2_to_float(0x7c)));
  EXPECT_EQ(fp8_e5m2_to_float(0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(float_to_fp8_e4m3(1000.0f), 0x7e);  // saturates (CUDA __NV_SATFINITE)
  EXPECT_EQ(float_to_fp8_e4m3(-1000.0f), 0xfe);
  EXPECT_EQ(float_to_fp8_e5m2(1e6f), 0x7b);
  EXPECT_EQ(dtype_size(DType::fp8_e4m3), 1);
  EXPECT_EQ(dtype_size(DType::fp8_e5m2), 1);
}

// Every finite code decodes and encodes back to itself, and every float between two neighbours rounds to the
// nearer one (ties to the even code): checked against a brute-force search over the code table.
TEST(Fp8, RoundTripAndNearestEvenAgainstTheCodeTable) {
  for (DType t : {DType::fp8_e4m3, DType::fp8_e5m2}) {
    std::vector<std::pair<float, std::uint8_t>> finite;
    for (int c = 0; c < 128; ++c) {
      const float v = decode8(static_cast<std::uint8_t>(c), t);
      if (!std::isfinite(v)) continue;
      ASSERT_EQ(encode8(v, t), c) << dtype_name(t) << " code " << c;
      ASSERT_EQ(encode8(-v, t), c == 0 ? 0x80 : (c | 0x80)) << dtype_name(t) << " code " << c;
      finite.push_back({v, static_cast<std::uint8_t>(c)});
    }
    for (std::size_t i = 0; i + 1 < finite.size(); ++i) {
      const float a = finite[i].first, b = finite[i + 1].first;
      const float mid = (a + b) / 2;
      const std::uint8_t even = (finite[i].second & 1) == 0 ? finite[i].second : finite[i + 1].second;
      ASSERT_EQ(encode8(mid, t), even) << dtype_name(t) << " midpoint " << mid;
      ASSERT_EQ(encode8(std::nextafter(mid, 0.0f), t), finite[i].second) << dtype_name(t) << " below " << mid;
      ASSERT_EQ(encode8(std::nextafter(mid, 1e9f), t), finite[i + 1].second) << dtype_name(t) << " above " << mid;
    }
  }
}

TEST(Fp8, ParseKvCacheDtype) {
  EXPECT_EQ(parse_kv_cache_dtype("auto", DType::fp16), DType::fp16);
  EXPECT_EQ(parse_kv_cache_dtype("bf16", DType::bf16), DType::bf16);
  EXPECT_EQ(parse_kv_cache_dtype("fp8_e4m3", DType::bf16), DType::fp8_e4m3);
  EXPECT_EQ(parse_kv_cache_dtype("fp8_e5m2", DType::fp16), DType::fp8_e5m2);
  EXPECT_THROW(parse_kv_cache_dtype("fp16", DType::bf16), InputError);
  EXPECT_THROW(parse_kv_cache_dtype("fp8", DType::bf16), InputError);
  EXPECT_THROW(parse_kv_cache_dtype("", DType::bf16), InputError);
}

TEST(Fp8, KvWriteQuantizesWithTheScale) {
  const int T = 3, H = 2, D = 8, slots = 5;
  std::vector<std::uint16_t> k(T * H * D), v(k.size());
  for (std::size_t i = 0; i < k.size(); ++i) {
    k[i] = float_to_bf16(-1.0f + 0.07f * static_cast<float>(i));
    v[i] = float_to_bf16(0.9f - 0.05f * static_cast<float>(i));
  }
  const std::vector<std::int64_t> loc = {4, 0, 2};
  std::vector<std::uint8_t> kc(slots * H * D, 0xaa), vc(kc.size(), 0xaa);
  KvWriteParams p;
  p.k_new = k.data();
  p.v_new = v.data();
  p.out_cache_loc = loc.data();
  p.k_cache = kc.data();
  p.v_cache = vc.data();
  p.num_tokens = T;
  p.num_kv_heads = H;
  p.head_dim = D;
  p.dtype = DType::bf16;
  p.cache_fp8 = DType::fp8_e4m3;
  p.k_scale = 0.5f;
  p.v_scale = 2.0f;
  write_kv_cpu(p, nullptr);
  for (int t = 0; t < T; ++t)
    for (int e = 0; e < H * D; ++e) {
      const float kx = bf16_to_float(k[t * H * D + e]), vx = bf16_to_float(v[t * H * D + e]);
      ASSERT_EQ(kc[loc[t] * H * D + e], float_to_fp8_e4m3(kx / 0.5f));
      ASSERT_EQ(vc[loc[t] * H * D + e], float_to_fp8_e4m3(vx / 2.0f));
    }
  EXPECT_EQ(kc[1 * H * D], 0xaa);  // an unwritten slot stays
}

// One token_indices / block_table batch through the CPU kernel with an fp8 pool; the reference dequantizes the
// stored bytes with `ref_k_scale` / `ref_v_scale`.
ErrorStats fp8_attention(DType kv, KvAddressing addr, bool prefill, float k_scale, float v_scale, float ref_k_scale,
                         float ref_v_scale) {
  const int Hq = 8, Hkv = 2, D = 64, P = 4;
  const std::vector<int> kv_lens = {37, 5, 64}, q_lens = prefill ? std::vector<int>{9, 5, 16} : std::vector<int>{1, 1, 1};
  const int bs = 3;
  std::vector<std::int32_t> qo(bs + 1, 0), kvp(bs + 1, 0);
  for (int i = 0; i < bs; ++i) {
    qo[i + 1] = qo[i] + q_lens[i];
    kvp[i + 1] = kvp[i] + kv_lens[i];
  }
  const int total_q = qo[bs];
  // pages in reverse order: request i's page p is page (pages - 1 - (first_i + p)), page 0 unused
  std::vector<std::int32_t> first(bs, 0);
  int pages = 1;
  for (int i = 0; i < bs; ++i) {
    first[i] = pages;
    pages += (kv_lens[i] + P - 1) / P;
  }
  const int stride = 16;
  std::vector<std::int32_t> table(bs * stride, 0), indices;
  for (int i = 0; i < bs; ++i) {
    for (int pg = 0; pg < (kv_lens[i] + P - 1) / P; ++pg) table[i * stride + pg] = pages - (first[i] + pg);
    for (int m = 0; m < kv_lens[i]; ++m) indices.push_back(table[i * stride + m / P] * P + m % P);
  }
  const std::int64_t slots = static_cast<std::int64_t>(pages + 1) * P;
  std::vector<std::uint8_t> kc(slots * Hkv * D), vc(kc.size());
  for (std::size_t e = 0; e < kc.size(); ++e) {
    kc[e] = encode8(-1.0f + 2.0f * uniform_at(11, e), kv);
    vc[e] = encode8(-1.0f + 2.0f * uniform_at(12, e), kv);
  }
  std::vector<std::uint16_t> q(static_cast<std::size_t>(total_q) * Hq * D), o(q.size());
  for (std::size_t e = 0; e < q.size(); ++e) q[e] = float_to_bf16(-2.0f + 4.0f * uniform_at(13, e));
  AttentionParams p;
  p.q = q.data();
  p.o = o.data();
  p.qo_indptr = qo.data();
  p.addressing = addr;
  p.k = kc.data();
  p.v = vc.data();
  p.kv_indptr = kvp.data();
  p.kv_indices = indices.data();
  p.kv_lens = kv_lens.data();
  p.page_table = table.data();
  p.page_table_stride = stride;
  p.page_size = P;
  p.batch_size = bs;
  p.total_q = total_q;
  p.max_q_len = prefill ? 16 : 1;
  p.max_kv_len = 64;
  p.num_qo_heads = Hq;
  p.num_kv_heads = Hkv;
  p.head_dim = D;
  p.dtype = DType::bf16;
  p.kv_fp8 = kv;
  p.k_scale = k_scale;
  p.v_scale = v_scale;
  p.causal = true;
  p.sm_scale = 1.0f / std::sqrt(static_cast<float>(D));
  if (prefill)
    attention_prefill_cpu(p, nullptr);
  else
    attention_decode_cpu(p, nullptr);
  ErrorStats s;
  const Tolerance tol = tolerance_for(DType::bf16, kv);
  for (int i = 0; i < bs; ++i) {
    ReferenceCase rc;
    rc.q_len = q_lens[i];
    rc.kv_len = kv_lens[i];
    rc.num_qo_heads = Hq;
    rc.num_kv_heads = Hkv;
    rc.head_dim = D;
    rc.q_start_pos = kv_lens[i] - q_lens[i];
    rc.sm_scale = p.sm_scale;
    std::vector<double> rq(static_cast<std::size_t>(q_lens[i]) * Hq * D), rk(static_cast<std::size_t>(kv_lens[i]) * Hkv * D),
        rv(rk.size()), ro(rq.size());
    for (std::size_t e = 0; e < rq.size(); ++e) rq[e] = bf16_to_float(q[qo[i] * Hq * D + e]);
    for (int m = 0; m < kv_lens[i]; ++m)
      for (int e = 0; e < Hkv * D; ++e) {
        const std::int64_t src = static_cast<std::int64_t>(indices[kvp[i] + m]) * Hkv * D + e;
        rk[m * Hkv * D + e] = decode8(kc[src], kv) * static_cast<double>(ref_k_scale);
        rv[m * Hkv * D + e] = decode8(vc[src], kv) * static_cast<double>(ref_v_scale);
      }
    reference_attention(rc, rq, rk, rv, ro, {});
    for (std::size_t e = 0; e < ro.size(); ++e) s.add(bf16_to_float(o[qo[i] * Hq * D + e]), ro[e], tol);
  }
  return s;
}

TEST(Fp8, CpuKernelsDequantizeWithTheScalesOfEveryAddressing) {
  for (DType kv : {DType::fp8_e4m3, DType::fp8_e5m2})
    for (KvAddressing addr : {KvAddressing::token_indices, KvAddressing::block_table})
      for (bool prefill : {false, true}) {
        const ErrorStats s = fp8_attention(kv, addr, prefill, 0.75f, 1.5f, 0.75f, 1.5f);
        EXPECT_TRUE(s.pass()) << dtype_name(kv) << " addressing " << static_cast<int>(addr) << " prefill " << prefill
                              << ": max abs " << s.max_abs << ", " << s.mismatches << " mismatches";
      }
}

TEST(Fp8, AWrongScaleFailsValidation) {
  for (DType kv : {DType::fp8_e4m3, DType::fp8_e5m2}) {
    // The kernel is told k_scale 1.0 where the stored values mean 0.75: the logits are off by a third.
    const ErrorStats wrong_k = fp8_attention(kv, KvAddressing::block_table, false, 1.0f, 1.5f, 0.75f, 1.5f);
    EXPECT_FALSE(wrong_k.pass()) << dtype_name(kv);
    EXPECT_GT(wrong_k.mismatches, 0);
    // v_scale twice what the stored values mean: the output doubles (|o| is about 0.1 here: the tolerance is
    // 4 bf16 ulp at 1.0 absolute, so a small relative error in small outputs would pass, a doubling does not).
    const ErrorStats wrong_v = fp8_attention(kv, KvAddressing::token_indices, true, 0.75f, 3.0f, 0.75f, 1.5f);
    EXPECT_FALSE(wrong_v.pass()) << dtype_name(kv);
  }
}

// The decode kernel runs its MMAs in fp16 over an fp8 pool, so a bf16 q passes through fp16 there
// (decode_attention.cu, bf16x2_to_f16x2), and the decode twin does the same (attention_cpu.cpp, q_through_fp16).
// q in fp16's subnormal range (|q| < 2^-20: 4 significant bits left) with a logit scale of 2^20 makes that
// rounding visible: the decode twin equals the prefill twin (which keeps bf16 q) run on the fp16-rounded q bit
// for bit, and differs from it on the original q; a 16-bit pool (or an fp16 model) keeps q as it is.
TEST(Fp8, DecodeTwinPassesABf16QThroughFp16) {
  const int Hq = 4, Hkv = 1, D = 64, L = 40;
  std::vector<std::int32_t> qo = {0, 1}, kvp = {0, L}, idx(L);
  for (int m = 0; m < L; ++m) idx[m] = L - 1 - m;
  std::vector<std::uint8_t> k8(L * Hkv * D), v8(k8.size());
  std::vector<std::uint16_t> k16(k8.size()), v16(k8.size());
  for (std::size_t e = 0; e < k8.size(); ++e) {
    k8[e] = float_to_fp8_e4m3(-1.0f + 2.0f * uniform_at(21, e));
    v8[e] = float_to_fp8_e4m3(-1.0f + 2.0f * uniform_at(22, e));
    k16[e] = float_to_bf16(fp8_e4m3_to_float(k8[e]));
    v16[e] = float_to_bf16(fp8_e4m3_to_float(v8[e]));
  }
  std::vector<std::uint16_t> q(Hq * D), q_rounded(q.size());
  int changed = 0;
  for (std::size_t e = 0; e < q.size(); ++e) {
    q[e] = float_to_bf16(std::ldexp(-1.0f + 2.0f * uniform_at(23, e), -20));
    q_rounded[e] = float_to_bf16(fp16_to_float(float_to_fp16(bf16_to_float(q[e]))));
    ASSERT_EQ(bf16_to_float(q_rounded[e]), fp16_to_float(float_to_fp16(bf16_to_float(q[e]))));  // bf16-exact
    changed += q_rounded[e] != q[e];
  }
  ASSERT_GT(changed, static_cast<int>(q.size()) / 2);
  auto run = [&](bool decode, const std::vector<std::uint16_t>& qv, bool fp8_pool, DType dtype) {
    std::vector<std::uint16_t> o(qv.size(), 0xffff);
    AttentionParams p;
    p.q = qv.data();
    p.o = o.data();
    p.qo_indptr = qo.data();
    p.addressing = KvAddressing::token_indices;
    p.k = fp8_pool ? static_cast<const void*>(k8.data()) : k16.data();
    p.v = fp8_pool ? static_cast<const void*>(v8.data()) : v16.data();
    p.kv_indptr = kvp.data();
    p.kv_indices = idx.data();
    p.batch_size = 1;
    p.total_q = 1;
    p.max_q_len = 1;
    p.max_kv_len = L;
    p.num_qo_heads = Hq;
    p.num_kv_heads = Hkv;
    p.head_dim = D;
    p.dtype = dtype;
    p.kv_fp8 = fp8_pool ? DType::fp8_e4m3 : dtype;
    p.causal = true;
    p.sm_scale = std::ldexp(1.0f, 20);
    if (decode)
      attention_decode_cpu(p, nullptr);
    else
      attention_prefill_cpu(p, nullptr);
    return o;
  };
  EXPECT_EQ(run(true, q, true, DType::bf16), run(false, q_rounded, true, DType::bf16));
  EXPECT_NE(run(true, q, true, DType::bf16), run(false, q, true, DType::bf16));
  EXPECT_EQ(run(true, q, false, DType::bf16), run(false, q, false, DType::bf16));  // bf16 pool: q as it is
  EXPECT_EQ(run(true, q, true, DType::fp16), run(false, q, true, DType::fp16));    // fp16 model: q as it is
}

// The whole sweep through the binary on the CPU: every mode and every backend, both fp8 formats, validated
// against the reference; the case ids name the cache dtype.
TEST(Fp8, EveryModeAndBackendValidatesOnTheCpu) {
  test::TempDir d;
  for (const char* kv : {"fp8_e4m3", "fp8_e5m2"}) {
    const std::string out = d.file(std::string("fp8-") + kv + ".csv");
    const auto r = test::run_attnbench(
        std::string("validate --device cpu --model tiny,tiny-swa --mode decode,extend,verify --backend all --batch 3 "
                    "--kv-len 70 --prefix-len 0,40 --extend-len 24 --kv-cache-dtype ") +
            kv + " --quiet --out " + out,
        d);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const std::string csv = test::read_file(out);
    std::istringstream lines(csv);
    std::string line;
    int rows = 0, ok = 0, skipped = 0;
    std::getline(lines, line);  // header
    while (std::getline(lines, line)) {
      ++rows;
      EXPECT_NE(line.find(std::string("/kvcache=") + kv), std::string::npos) << line;
      if (line.find(",ok,") != std::string::npos) ++ok;
      if (line.find(",skipped,") != std::string::npos) {
        ++skipped;
        if (line.find(",flashinfer,") != std::string::npos) {
          // skipped whatever the cache dtype: FlashInfer's windowed verify (not modelled)
          EXPECT_NE(line.find("verify/tiny-swa/"), std::string::npos) << line;
        } else {  // e5m2 on SGLang's TRTLLM paths (SM90, the default arch): XQA / fmha_v2 would misread it
          EXPECT_EQ(std::string(kv), "fp8_e5m2") << line;
          EXPECT_NE(line.find("handles fp8_e4m3 only"), std::string::npos) << line;
        }
      }
    }
    // 2 models x (decode 1 + extend 2 + verify 1 cases) x 3 backends, every ok row validated (exit 0: every
    // reference check passed); e5m2 skips both trtllm backends' 8 rows each.
    EXPECT_EQ(rows, 2 * 4 * 3) << csv;
    EXPECT_EQ(skipped, std::string(kv) == "fp8_e5m2" ? 1 + 2 * 8 : 1) << csv;
    EXPECT_EQ(ok, rows - skipped) << csv;
  }
}

// The TOML config takes SGLang's underscore spelling and the hyphenated one.
TEST(Fp8, TomlKeyInBothSpellings) {
  test::TempDir d;
  for (const char* key : {"kv_cache_dtype", "kv-cache-dtype"}) {
    const std::string cfg = d.file(std::string(key) + ".toml");
    test::write_file(cfg, std::string(key) + " = \"fp8_e5m2\"\nmodel = [\"tiny\"]\nbatch = [1]\nkv-len = [8]\n");
    const auto r = test::run_attnbench("run --config " + cfg + " --list-cases", d);
    ASSERT_EQ(r.exit_code, 0) << key << ": " << r.err;
    EXPECT_EQ(r.out, "decode/tiny/b=1/kv=8/p=64/bf16/kvcache=fp8_e5m2\n") << key;
  }
}

// SGLang 0.5.23 rejects trtllm_mha prefill with fp8_e4m3 on SM120 (fmha_v2 has no e4m3 there): a skipped row
// with SGLang's reason; e4m3 decode runs; e5m2 is skipped in both modes (its TRTLLM paths would misread it).
TEST(Fp8, Sm120E4m3PrefillIsSkippedWithSglangsReason) {
  test::TempDir d;
  for (const char* kv : {"fp8_e4m3", "fp8_e5m2"}) {
    const std::string out = d.file(std::string("sm120-") + kv + ".csv");
    const auto r = test::run_attnbench(std::string("validate --device cpu --arch sm120 --model tiny --mode extend,decode "
                                                   "--backend trtllm_mha --batch 2 --kv-len 40 --extend-len 16 "
                                                   "--kv-cache-dtype ") +
                                           kv + " --quiet --out " + out,
                                       d);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string csv = test::read_file(out);
    std::istringstream lines(csv);
    std::string line;
    std::getline(lines, line);
    while (std::getline(lines, line)) {
      const bool extend = line.find(",extend/tiny/") != std::string::npos;
      if (extend && std::string(kv) == "fp8_e4m3") {
        EXPECT_NE(line.find(",skipped,"), std::string::npos) << line;
        EXPECT_NE(line.find("attention_hook.py L207-221"), std::string::npos) << line;
      } else if (std::string(kv) == "fp8_e5m2") {
        EXPECT_NE(line.find(",skipped,"), std::string::npos) << line;
        EXPECT_NE(line.find("handles fp8_e4m3 only"), std::string::npos) << line;
      } else {
        EXPECT_NE(line.find(",ok,"), std::string::npos) << line;
      }
    }
  }
}

// The KV pool in fp8 is half the bytes: kv_bytes_per_token = 2 * layers * kv_heads * head_dim * 1 (tiny: 2
// layers, 2 KV heads, head_dim 64 -> 512 B; bf16 1024 B).
TEST(Fp8, MemoryReportCountsOneBytePerElement) {
  test::TempDir d;
  for (const auto& [kv, bytes] : {std::pair<std::string, int>{"fp8_e4m3", 2 * 2 * 2 * 64 * 1},
                                  {"fp8_e5m2", 2 * 2 * 2 * 64 * 1},
                                  {"auto", 2 * 2 * 2 * 64 * 2}}) {
    const std::string out = d.file("mem-" + kv + ".json");
    const auto r = test::run_attnbench("memory --device cpu --model tiny --format json --kv-cache-dtype " + kv +
                                           " --out " + out,
                                       d);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string j = test::read_file(out);
    EXPECT_NE(j.find("\"kv_bytes_per_token\": " + std::to_string(bytes)), std::string::npos) << kv << "\n" << j;
  }
}

// The pool's allocations in the ledger, by hand: capacity 100 tokens at page 16 = 7 pages + the padding page =
// 128 slots; per layer K and V of 128 slots x 2 KV heads x 64 x 1 B = 32 KiB; 2 layers = 64 KiB (bf16: 128 KiB).
TEST(Fp8, LedgerCountsThePoolAtOneBytePerElement) {
  for (const auto& [dt, want] : {std::pair<DType, std::int64_t>{DType::fp8_e4m3, 65536}, {DType::fp8_e5m2, 65536},
                                 {DType::bf16, 131072}}) {
    CpuDevice dev;
    const std::int64_t before = dev.ledger().live()[MemKind::device];
    {
      TokenToKVPool pool(dev, 100, 16, 2, 2, 64, dt, /*shuffle=*/true, 5, /*fused_kv=*/true);
      EXPECT_EQ(pool.layer_bytes(), want / 4) << dtype_name(dt);
      EXPECT_EQ(dev.ledger().live()[MemKind::device] - before, want) << dtype_name(dt);
      // The seeded fill is stored in the pool's dtype (never zeros).
      pool.fill_random(5);
      const auto* k = static_cast<const std::uint8_t*>(pool.k_buffer(0));
      int nonzero = 0;
      for (int i = 0; i < 64; ++i) nonzero += k[i] != 0;
      EXPECT_GT(nonzero, 48) << dtype_name(dt);
      EXPECT_EQ(load_as_float(pool.k_buffer(1), 77, dt),
                seeded_element(TokenToKVPool::fill_seed(5, false, 1), 77, dt, -1.0f, 1.0f));
    }
  }
}

// The step traffic reads the cache at 1 byte per element; q, o and the new K / V stay 2 bytes (bf16).
TEST(Fp8, StepWorkCountsTheKvReadInFp8) {
  RunPlan p;
  p.models = {"tiny"};
  p.modes = {"extend"};
  p.batches = {1};
  p.prefix_lens = {3};
  p.extend_lens = {2};
  p.model.kv_cache_dtype = "fp8_e5m2";
  const Case c = expand_cases(p).at(0);
  const StepWork w = step_work(c);
  EXPECT_DOUBLE_EQ(w.kv_bytes_layer, 5.0 * 2 * 2 * 64 * 1);
  EXPECT_DOUBLE_EQ(w.bytes, 2 * (5.0 * 2 * 2 * 64 * 1) + 2 * 2.0 * (2 * 4 + 2 * 2) * 64 * 2);
  EXPECT_EQ(estimate_case_memory(c).kv_pool_bytes % (2LL * 2 * 2 * 64), 0);
  EXPECT_EQ(c.model.kv_bytes_per_token(), 2LL * 2 * 2 * 64 * 1);
}

}  // namespace
}  // namespace attnbench
