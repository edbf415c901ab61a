// attention_decode on CUDA (kernels/cuda/decode_attention.cu) against its CPU twin (attention_decode_cpu) on
// seeded random inputs: both KV addressings (token indices = FlashInfer page 1, block table = TRTLLM pages
// 16/32/64/128) and ragged, GQA 1/4/8, head_dim 64/128/256, bf16/fp16 (tensor-core path) and fp32 / odd
// head dims (generic path), ragged lengths with 1 and page boundaries, windows, sinks, soft cap, explicit
// positions, q_len_per_req 1/3/4/8/16 and qo_indptr, split-KV (fixed, even, through kv_chunk_size_ptr, none),
// big cases, and CUDA-graph replay == eager bit for bit. Outputs (and the split scratch) are poisoned with
// 0xFF bytes (NaN) first. Tolerance vs the CPU twin: max abs error 2e-2 (bf16), 5e-3 (fp16), 1e-4 (fp32).
// Run: ctest -L gpu -R DecodeAttention. Timing table (not a test of speed):
//   attnbench_gpu_tests --gtest_also_run_disabled_tests --gtest_filter='DecodeAttentionBench.*'
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "core/units.hpp"
#include "device/device.hpp"
#include "device/device_factory.hpp"
#include "kernels/cpu/kernels_cpu.hpp"
#include "kernels/cuda/kernels_cuda.cuh"
#include "kernels/kernel_table.hpp"

namespace attnbench {
namespace {

#define ATTNBENCH_REQUIRE_GPU() \
  if (!gpu_availability().usable) GTEST_SKIP() << gpu_availability().detail

enum class Split { none, fixed, even, via_ptr };

struct Spec {
  DType dtype = DType::bf16;
  int hq = 8, hkv = 2, dim = 128;
  KvAddressing addressing = KvAddressing::block_table;
  int page_size = 16;
  std::vector<int> kv_lens{1, 15, 16, 17, 64, 65, 300, 1000};
  int q_len = 1;            // q_len_per_req (when q_lens is empty)
  std::vector<int> q_lens;  // non-empty: qo_indptr
  bool causal = true;
  int window_left = -1;
  bool sinks = false;
  float soft_cap = 0.0f;
  float scale_mult = 8.0f;  // sm_scale = scale_mult / sqrt(dim): peaky enough that outputs are O(0.1..1)
  bool positions = false;   // explicit q_start_pos / kv_start_pos
  Split split = Split::none;
  int chunk = 0;       // fixed / via_ptr chunk size
  int max_chunks = 1;  // split launch bound
  std::uint64_t seed = 1;
  int semaphores = -1;  // >= 0 with a split: that many zeroed merge semaphores (the in-kernel merge, XQA-style)
  DType kv_fp8 = DType::bf16;  // fp8_e4m3 / fp8_e5m2: the pool (token / block addressing) in fp8 with the scales
  float k_scale = 1.0f, v_scale = 1.0f;

  std::string name() const {
    static const char* addr[] = {"ragged", "token", "block"};
    static const char* sp[] = {"none", "fixed", "even", "ptr"};
    std::string s = std::string(dtype_name(dtype)) + (is_fp8(kv_fp8) ? "+" + std::string(dtype_name(kv_fp8)) : "") + " hq=" + std::to_string(hq) + " hkv=" + std::to_string(hkv) +
                    " D=" + std::to_string(dim) + " " + addr[static_cast<int>(addressing)];
    if (addressing == KvAddressing::block_table) s += " p=" + std::to_string(page_size);
    s += " bs=" + std::to_string(kv_lens.size());
    s += q_lens.empty() ? " q=" + std::to_string(q_len) : " qo_indptr";
    if (!causal) s += " noncausal";
    if (window_left >= 0) s += " win=" + std::to_string(window_left);
    if (sinks) s += " sinks";
    if (soft_cap > 0) s += " cap=" + std::to_string(static_cast<int>(soft_cap));
    if (positions) s += " pos";
    if (split != Split::none)
      s += std::string(" split=") + sp[static_cast<int>(split)] + "/" + std::to_string(chunk) + "x" +
           std::to_string(max_chunks);
    if (semaphores >= 0) s += " sem=" + std::to_string(semaphores);
    return s;
  }
};

// Host inputs of one case and the CPU twin's outputs.
struct HostCase {
  Spec s;
  int bs = 0, total_q = 0, max_q_len = 0, max_kv_len = 0;
  std::int64_t num_rows = 0;  // rows of the k / v tensors
  std::vector<std::uint8_t> q, k, v;
  std::vector<std::int32_t> qo_indptr, kv_indptr, kv_indices, kv_lens, page_table, q_start, kv_start;
  int page_table_stride = 0;
  std::vector<float> sinks;
  std::vector<std::uint8_t> o;  // CPU twin output
  std::vector<float> lse;

  AttentionParams params() {
    AttentionParams p;
    p.q = q.data();
    p.o = o.data();
    p.lse = lse.data();
    p.qo_indptr = qo_indptr.empty() ? nullptr : qo_indptr.data();
    p.q_len_per_req = s.q_len;
    p.addressing = s.addressing;
    p.k = k.data();
    p.v = v.data();
    p.kv_indptr = kv_indptr.empty() ? nullptr : kv_indptr.data();
    p.kv_indices = kv_indices.empty() ? nullptr : kv_indices.data();
    p.kv_lens = kv_lens.data();
    p.page_table = page_table.empty() ? nullptr : page_table.data();
    p.page_table_stride = page_table_stride;
    p.page_size = s.addressing == KvAddressing::block_table ? s.page_size : 1;
    p.q_start_pos = q_start.empty() ? nullptr : q_start.data();
    p.kv_start_pos = kv_start.empty() ? nullptr : kv_start.data();
    p.batch_size = bs;
    p.total_q = total_q;
    p.max_q_len = max_q_len;
    p.max_kv_len = max_kv_len;
    p.num_qo_heads = s.hq;
    p.num_kv_heads = s.hkv;
    p.head_dim = s.dim;
    p.dtype = s.dtype;
    p.kv_fp8 = s.kv_fp8;
    p.k_scale = s.k_scale;
    p.v_scale = s.v_scale;
    p.causal = s.causal;
    p.window_left = s.window_left;
    p.sm_scale = s.scale_mult / std::sqrt(static_cast<float>(s.dim));
    p.logits_soft_cap = s.soft_cap;
    p.sinks = sinks.empty() ? nullptr : sinks.data();
    return p;
  }
};

std::vector<std::uint8_t> random_values(DType dt, std::int64_t n, std::uint64_t seed) {
  std::vector<std::uint8_t> v(static_cast<std::size_t>(n * dtype_size(dt)));
  FillParams fp;
  fp.data = v.data();
  fp.n = n;
  fp.dtype = dt;
  fp.seed = seed;
  fill_uniform_cpu(fp);
  return v;
}

HostCase make_case(const Spec& s) {
  HostCase h;
  h.s = s;
  h.bs = static_cast<int>(s.kv_lens.size());
  std::mt19937_64 rng(s.seed * 7919 + 13);
  h.kv_lens.assign(s.kv_lens.begin(), s.kv_lens.end());
  h.max_kv_len = *std::max_element(s.kv_lens.begin(), s.kv_lens.end());
  if (!s.q_lens.empty()) {
    h.qo_indptr.assign(1, 0);
    for (int ql : s.q_lens) h.qo_indptr.push_back(h.qo_indptr.back() + ql);
    h.total_q = h.qo_indptr.back();
    h.max_q_len = *std::max_element(s.q_lens.begin(), s.q_lens.end());
  } else {
    h.total_q = h.bs * s.q_len;
    h.max_q_len = s.q_len;
  }
  std::int64_t total_kv = 0;
  for (int l : s.kv_lens) total_kv += l;
  switch (s.addressing) {
    case KvAddressing::block_table: {
      const int ps = s.page_size;
      int pages = 3;  // spare pages nobody owns
      for (int l : s.kv_lens) pages += (l + ps - 1) / ps;
      std::vector<std::int32_t> perm(static_cast<std::size_t>(pages));
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      h.page_table_stride = (h.max_kv_len + ps - 1) / ps + 2;
      h.page_table.assign(static_cast<std::size_t>(h.bs) * h.page_table_stride, 0);
      int next = 0;
      for (int i = 0; i < h.bs; ++i)
        for (int p = 0; p < (s.kv_lens[i] + ps - 1) / ps; ++p) h.page_table[i * h.page_table_stride + p] = perm[next++];
      h.num_rows = static_cast<std::int64_t>(pages) * ps;
      break;
    }
    case KvAddressing::token_indices: {
      h.num_rows = total_kv + 37;
      std::vector<std::int32_t> perm(static_cast<std::size_t>(h.num_rows));
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      h.kv_indptr.assign(1, 0);
      for (int l : s.kv_lens) h.kv_indptr.push_back(h.kv_indptr.back() + l);
      h.kv_indices.assign(perm.begin(), perm.begin() + total_kv);
      break;
    }
    case KvAddressing::ragged: {
      h.num_rows = std::max<std::int64_t>(total_kv, 1);
      h.kv_indptr.assign(1, 0);
      for (int l : s.kv_lens) h.kv_indptr.push_back(h.kv_indptr.back() + l);
      break;
    }
  }
  if (s.positions) {
    // Keys start at position 10; queries end 3 positions before the last key (the last 3 keys are in the
    // causal future of every query).
    for (int i = 0; i < h.bs; ++i) {
      const int ql = s.q_lens.empty() ? s.q_len : s.q_lens[i];
      h.kv_start.push_back(10);
      h.q_start.push_back(10 + s.kv_lens[i] - ql - 3);
    }
  }
  if (s.sinks) {
    std::uniform_real_distribution<float> u(-1.0f, 3.0f);
    for (int i = 0; i < s.hq; ++i) h.sinks.push_back(u(rng));
  }
  h.q = random_values(s.dtype, static_cast<std::int64_t>(h.total_q) * s.hq * s.dim, s.seed * 3 + 1);
  const DType kvt = is_fp8(s.kv_fp8) && s.addressing != KvAddressing::ragged ? s.kv_fp8 : s.dtype;
  h.k = random_values(kvt, h.num_rows * s.hkv * s.dim, s.seed * 3 + 2);
  h.v = random_values(kvt, h.num_rows * s.hkv * s.dim, s.seed * 3 + 3);
  h.o.assign(static_cast<std::size_t>(h.total_q) * s.hq * s.dim * dtype_size(s.dtype), 0xFF);
  h.lse.assign(static_cast<std::size_t>(h.total_q) * s.hq, NAN);
  attention_decode_cpu(h.params());
  return h;
}

template <class T>
Buffer upload(Device& dev, const std::vector<T>& host, const char* tag) {
  if (host.empty()) return Buffer();
  Buffer b = dev.allocate(static_cast<std::int64_t>(host.size() * sizeof(T)), MemKind::device, tag);
  dev.copy(b.data(), host.data(), static_cast<std::int64_t>(host.size() * sizeof(T)));
  return b;
}

// The case's inputs on the device, and the params that point at them.
struct DeviceCase {
  Buffer q, k, v, o, lse, qo_indptr, kv_indptr, kv_indices, kv_lens, page_table, q_start, kv_start, sinks, workspace,
      chunk_ptr, semaphores;
  AttentionParams p;
};

DeviceCase to_device(Device& dev, HostCase& h) {
  DeviceCase d;
  d.q = upload(dev, h.q, "test.q");
  d.k = upload(dev, h.k, "test.k");
  d.v = upload(dev, h.v, "test.v");
  d.o = dev.allocate(static_cast<std::int64_t>(h.o.size()), MemKind::device, "test.o");
  d.lse = dev.allocate(static_cast<std::int64_t>(h.lse.size() * 4), MemKind::device, "test.lse");
  d.qo_indptr = upload(dev, h.qo_indptr, "test.qo_indptr");
  d.kv_indptr = upload(dev, h.kv_indptr, "test.kv_indptr");
  d.kv_indices = upload(dev, h.kv_indices, "test.kv_indices");
  d.kv_lens = upload(dev, h.kv_lens, "test.kv_lens");
  d.page_table = upload(dev, h.page_table, "test.page_table");
  d.q_start = upload(dev, h.q_start, "test.q_start");
  d.kv_start = upload(dev, h.kv_start, "test.kv_start");
  d.sinks = upload(dev, h.sinks, "test.sinks");
  AttentionParams p = h.params();
  p.q = d.q.data();
  p.o = d.o.data();
  p.lse = d.lse.as<float>();
  p.qo_indptr = d.qo_indptr.as<std::int32_t>();
  p.k = d.k.data();
  p.v = d.v.data();
  p.kv_indptr = d.kv_indptr.as<std::int32_t>();
  p.kv_indices = d.kv_indices.as<std::int32_t>();
  p.kv_lens = d.kv_lens.as<std::int32_t>();
  p.page_table = d.page_table.as<std::int32_t>();
  p.q_start_pos = d.q_start.as<std::int32_t>();
  p.kv_start_pos = d.kv_start.as<std::int32_t>();
  p.sinks = d.sinks.as<float>();
  const Spec& s = h.s;
  if (s.split != Split::none) {
    p.max_num_chunks = s.max_chunks;
    p.kv_chunk_size = s.split == Split::even ? kSplitKvEven : s.chunk;
    if (s.split == Split::via_ptr) {
      d.chunk_ptr = upload(dev, std::vector<std::int32_t>{s.chunk}, "test.kv_chunk_size");
      p.kv_chunk_size = 12345;  // must be ignored: the pointer wins
      p.kv_chunk_size_ptr = d.chunk_ptr.as<std::int32_t>();
    }
    p.workspace_bytes = split_kv_workspace_bytes(h.total_q, s.max_chunks, s.hq, s.dim);
    d.workspace = dev.allocate(std::max<std::int64_t>(p.workspace_bytes, 16), MemKind::device, "test.workspace");
    p.workspace = d.workspace.data();
    if (s.semaphores >= 0) {
      d.semaphores = dev.allocate(4LL * std::max(1, s.semaphores), MemKind::device, "test.semaphores");
      dev.memset(d.semaphores.data(), 0, d.semaphores.bytes());
      p.merge_semaphores = d.semaphores.as<std::int32_t>();
      p.merge_semaphore_count = s.semaphores;
    }
  }
  d.p = p;
  return d;
}

struct Errors {
  double max_abs = 0.0, rel_l2 = 0.0, lse_max_abs = 0.0, ref_max = 0.0;
};

// Poisons o / lse / scratch, runs the GPU op, compares with the CPU twin's outputs in h.
Errors run_and_compare(Device& dev, HostCase& h, DeviceCase& d) {
  dev.memset(d.o.data(), 0xFF, d.o.bytes());
  dev.memset(d.lse.data(), 0xFF, d.lse.bytes());
  if (d.workspace.allocated()) dev.memset(d.workspace.data(), 0xFF, d.workspace.bytes());
  dev.kernels().attention_decode(d.p, dev.stream());
  std::vector<std::uint8_t> o(h.o.size());
  std::vector<float> lse(h.lse.size());
  dev.copy(o.data(), d.o.data(), static_cast<std::int64_t>(o.size()));
  dev.copy(lse.data(), d.lse.data(), static_cast<std::int64_t>(lse.size() * 4));
  dev.synchronize();
  Errors e;
  double num = 0.0, den = 0.0;
  const std::int64_t n = static_cast<std::int64_t>(h.o.size()) / dtype_size(h.s.dtype);
  for (std::int64_t i = 0; i < n; ++i) {
    const double g = load_as_float(o.data(), i, h.s.dtype), w = load_as_float(h.o.data(), i, h.s.dtype);
    const double diff = std::isnan(g) || std::isnan(w) ? INFINITY : std::fabs(g - w);
    e.max_abs = std::max(e.max_abs, diff);
    e.ref_max = std::max(e.ref_max, std::fabs(w));
    num += diff * diff;
    den += w * w;
  }
  e.rel_l2 = den > 0 ? std::sqrt(num / den) : (num > 0 ? INFINITY : 0.0);
  for (std::size_t i = 0; i < lse.size(); ++i) {
    const double g = lse[i], w = h.lse[i];
    double diff;
    if (std::isinf(w) && w < 0)
      diff = (std::isinf(g) && g < 0) ? 0.0 : INFINITY;
    else
      diff = std::isnan(g) ? INFINITY : std::fabs(g - w) / std::max(1.0, std::fabs(w));
    e.lse_max_abs = std::max(e.lse_max_abs, diff);
  }
  return e;
}

double tolerance(DType dt) { return dt == DType::bf16 ? 2e-2 : (dt == DType::fp16 ? 5e-3 : 1e-4); }

void check_case(Device& dev, const Spec& s) {
  SCOPED_TRACE(s.name());
  HostCase h = make_case(s);
  DeviceCase d = to_device(dev, h);
  const Errors e = run_and_compare(dev, h, d);
  std::printf("[ decode ] %-78s max_abs %.2e rel_l2 %.2e lse %.1e (|ref| <= %.2f)\n", s.name().c_str(), e.max_abs,
              e.rel_l2, e.lse_max_abs, e.ref_max);
  EXPECT_LE(e.max_abs, tolerance(s.dtype));
  EXPECT_LE(e.rel_l2, tolerance(s.dtype) / 2);
  EXPECT_LE(e.lse_max_abs, 1e-3);
}

// ---- correctness ---------------------------------------------------------------------------------------

// fp8 KV pool (--kv-cache-dtype): the tensor-core kernel's fp8 variants (16-byte fp8 copies, conversion in
// registers) against the CPU twin, with SGLang-style per-tensor scales, both addressings, every head dim, GQA,
// windows, sinks, q_len_per_req 4, split-KV; the same tolerance as the 16-bit pool (the twin reads the same
// stored values; the conversion is exact).
// Sets an environment variable for a scope, restoring what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {  // value nullptr: unset for the scope
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The cases both CTA-shape tests run from one base spec, each against the CPU twin with the next seed: the base;
// 32 / 8 heads at q_len_per_req `gqa_q_len` with a 100-key window and sinks; three requests of 4000, 1 and 2500
// keys split evenly into at most 8 chunks (through the merge kernel). Returns the last spec.
Spec check_shape_cases(Device& dev, Spec s, int gqa_q_len, std::uint64_t& seed) {
  s.seed = ++seed;
  check_case(dev, s);
  s.hq = 32;
  s.hkv = 8;
  s.q_len = gqa_q_len;
  s.window_left = 100;
  s.sinks = true;
  s.seed = ++seed;
  check_case(dev, s);
  s.q_len = 1;
  s.window_left = -1;
  s.sinks = false;
  s.kv_lens = {4000, 1, 2500};
  s.split = Split::even;
  s.max_chunks = 8;
  s.seed = ++seed;
  check_case(dev, s);
  return s;
}

// Every case on the four CTA shapes of the fp8 kernels (ATTNBENCH_DECODE_WARPS: 1 warp and 16-key tiles at head_dim
// 128, 2 and 32, 4 and 64, or 8 and 128 at head_dim <= 128; a shape not compiled for a head_dim falls back to the
// rule, which would pick the wide CTAs for every small case here), each with the default pipeline depths and with
// ATTNBENCH_DECODE_STAGES=3 (the depths before 2026-12-07; two_small_m_stages).
TEST(DecodeAttention, Fp8KvAgainstCpuTwin) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  std::uint64_t seed = 900;
  for (const char* warps : {"1", "2", "4", "8"})
  for (const char* old_stages : {static_cast<const char*>(nullptr), "3", "2"})
  for (DType kv : {DType::fp8_e4m3, DType::fp8_e5m2})
    for (DType dt : {DType::bf16, DType::fp16})
      for (int dim : {64, 128, 256})
        for (KvAddressing addr : {KvAddressing::token_indices, KvAddressing::block_table}) {
          ScopedEnv shape("ATTNBENCH_DECODE_WARPS", warps);
          ScopedEnv stages("ATTNBENCH_DECODE_STAGES", old_stages);
          Spec s;
          s.dtype = dt;
          s.kv_fp8 = kv;
          s.k_scale = 0.75f;
          s.v_scale = 1.25f;
          s.dim = dim;
          s.addressing = addr;
          s.page_size = 64;
          check_shape_cases(*dev, s, 4, seed);
        }
}

// The CTA shapes of the 16-bit kSmallM kernels (ATTNBENCH_DECODE_WARPS: 1 warp over 16-key tiles at head_dim 128,
// four times the CTAs per SM, 2 over 32-key tiles, twice the CTAs, or 4 over 64; the grid rule takes 1 and 2 only for
// grids of more than one wave, which no small case here is):
// every head dim, both addressings, GQA with a window and sinks at q_len_per_req 2, an even split through the merge
// kernel and through the in-kernel merge (semaphores), each against the CPU twin; with the default pipeline depths
// and with ATTNBENCH_DECODE_STAGES=3 (two_small_m_stages).
TEST(DecodeAttention, CtaShapesAgainstCpuTwin) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  std::uint64_t seed = 2100;
  for (const char* warps : {"1", "2", "4"})
  for (const char* old_stages : {static_cast<const char*>(nullptr), "3", "2"})
    for (DType dt : {DType::bf16, DType::fp16})
      for (int dim : {64, 128, 256})
        for (KvAddressing addr : {KvAddressing::token_indices, KvAddressing::block_table}) {
          ScopedEnv shape("ATTNBENCH_DECODE_WARPS", warps);
          ScopedEnv stages("ATTNBENCH_DECODE_STAGES", old_stages);
          Spec s;
          s.dtype = dt;
          s.dim = dim;
          s.addressing = addr;
          Spec split = check_shape_cases(*dev, s, 2, seed);
          split.max_chunks = 4;
          split.semaphores = 3 * 8;  // one per (request, KV head): the merge in the kernel
          split.seed = ++seed;
          check_case(*dev, split);
        }
}

// The CTA-shape rule of the kSmallM kernels (attention_decode_cta_warps, what launch_attention_decode runs), on
// grids sized in waves of the device's 4-warp CTA slots (SMs x the kernels' CTAs per SM, decode_attention.cu
// default_min_blocks: 16-bit KV 2 at head_dim 64 / 128 and 1 at 256, fp8 3 / 4 / 2): 8 warps for an fp8 grid filling at
// most half the slots (head_dim <= 128); where a request has at most 2 KV chunks, 1 at head_dim 128 where the 4-warp
// grid takes three or four waves, else 2 at head_dim 128 and 256 where it takes an even number; else 4; more than 8
// rows per (request, KV head) is not kSmallM (4); ATTNBENCH_DECODE_WARPS overrides.
// The parameters of a decode grid of `ctas` CTAs for the host-side rule queries: requests of 1 KV head (group 4),
// `chunks` CTAs each (an even split, TRTLLM's multi-CTA plan).
AttentionParams grid_params(std::int64_t ctas, int dim, int q_len, DType kv, int chunks = 1) {
  AttentionParams p;
  p.batch_size = static_cast<int>(ctas / chunks);
  p.max_num_chunks = chunks;
  p.kv_chunk_size = chunks > 1 ? kSplitKvEven : 0;
  p.total_q = p.batch_size * q_len;
  p.q_len_per_req = q_len;
  p.num_qo_heads = 4;
  p.num_kv_heads = 1;
  p.head_dim = dim;
  p.dtype = DType::bf16;
  p.addressing = KvAddressing::block_table;
  p.kv_fp8 = kv;
  return p;
}

TEST(DecodeAttention, CtaShapeRule) {
  ATTNBENCH_REQUIRE_GPU();
  const int sms = make_device(DeviceChoice::cuda)->sm_count();
  const auto& params = grid_params;
  for (DType kv : {DType::bf16, DType::fp8_e4m3}) {
    const bool fp8 = is_fp8(kv);
    for (int dim : {64, 128, 256}) {
      SCOPED_TRACE(std::string(dtype_name(kv)) + " D=" + std::to_string(dim));
      const int per_sm = fp8 ? (dim == 256 ? 2 : (dim == 128 ? 4 : 3)) : (dim == 256 ? 1 : 2);
      const std::int64_t slots = static_cast<std::int64_t>(sms) * per_sm;
      const int narrow = dim == 64 ? 4 : 2;  // narrow CTAs where measured (head_dim 128, 256)
      // Three or four 4-warp waves: single-warp CTAs at head_dim 128; else four (even) waves are narrow, three are 4.
      const int three_waves = dim == 128 ? 1 : 4;
      const int four_waves = dim == 128 ? 1 : narrow;
      const bool wide = fp8 && dim <= 128;
      auto warps = [&](std::int64_t ctas, int q_len = 1, int chunks = 1) {
        return attention_decode_cta_warps(params(ctas, dim, q_len, kv, chunks));
      };
      EXPECT_EQ(warps(1), wide ? 8 : 4) << "one CTA";
      EXPECT_EQ(warps(slots / 2), wide ? 8 : 4) << "half the slots";
      EXPECT_EQ(warps(slots), 4) << "one full wave";
      EXPECT_EQ(warps(slots + 1), narrow) << "two waves";
      EXPECT_EQ(warps(2 * slots), narrow) << "two full waves";
      EXPECT_EQ(warps(2 * slots + 1), three_waves) << "three waves";
      EXPECT_EQ(warps(3 * slots), three_waves) << "three full waves";
      EXPECT_EQ(warps(4 * slots - 1), four_waves) << "four waves";
      EXPECT_EQ(warps(4 * slots), four_waves) << "four full waves";
      EXPECT_EQ(warps(4 * slots + 1), 4) << "five waves";
      EXPECT_EQ(warps(6 * slots), narrow) << "six waves";
      EXPECT_EQ(warps(4 * slots, 4), 4) << "16 rows per CTA: not kSmallM";
      EXPECT_EQ(warps(2 * slots, 1, 2), narrow) << "two waves of 2 chunks a request";
      EXPECT_EQ(warps(4 * slots, 1, 2), four_waves) << "four waves of 2 chunks a request";
      EXPECT_EQ(warps(33 * (2 * slots / 33), 1, 33), 4) << "two waves of 33 chunks a request";
      EXPECT_EQ(warps(33 * (4 * slots / 33), 1, 33), 4) << "four waves of 33 chunks a request";
      {
        ScopedEnv forced("ATTNBENCH_DECODE_WARPS", "4");
        EXPECT_EQ(warps(2 * slots), 4) << "forced 4";
        EXPECT_EQ(warps(1), 4) << "forced 4";
      }
      {
        ScopedEnv forced("ATTNBENCH_DECODE_WARPS", "2");
        EXPECT_EQ(warps(1), 2) << "forced 2";
      }
      {
        ScopedEnv forced("ATTNBENCH_DECODE_WARPS", "1");
        EXPECT_EQ(warps(1), dim == 128 ? 1 : (wide ? 8 : 4)) << "forced 1 where compiled, else the rule";
      }
      {
        ScopedEnv forced("ATTNBENCH_DECODE_WARPS", "8");
        EXPECT_EQ(warps(2 * slots), wide ? 8 : narrow) << "forced 8 where compiled, else the rule";
      }
    }
  }
}

// The pipeline depth rule (attention_decode_pipeline_stages, what launch_attention_decode runs; decode_attention.cu
// small_m_stages): the kSmallM kernels take two stages at head_dim 128 in every CTA shape and in the wide fp8 CTAs;
// at head_dim 64 the 4-warp kernel takes two where the grid gives the SMs at least 2.5 CTAs each (16-bit KV: more
// than 2 and at most 10), else four; head_dim 256, the narrow CTAs at 64 and the 16-row kernel keep their depth.
// ATTNBENCH_DECODE_STAGES forces 3 (the old depths) or 2 (where a two-stage instance is compiled).
TEST(DecodeAttention, PipelineStagesRule) {
  ATTNBENCH_REQUIRE_GPU();
  const std::int64_t sms = make_device(DeviceChoice::cuda)->sm_count();
  for (DType kv : {DType::bf16, DType::fp8_e4m3}) {
    const bool fp8 = is_fp8(kv);
    SCOPED_TRACE(dtype_name(kv));
    auto stages = [&](std::int64_t ctas, int dim, int q_len = 1) {
      return attention_decode_pipeline_stages(grid_params(ctas, dim, q_len, kv));
    };
    // head_dim 128: two stages in every shape the grid rule picks (wide / 4-warp / narrow / single)
    for (std::int64_t ctas : {std::int64_t{1}, sms, 3 * sms, 5 * sms, 9 * sms, 17 * sms})
      EXPECT_EQ(stages(ctas, 128), 2) << "head_dim 128, " << ctas << " CTAs";
    // head_dim 64, the 4-warp kernel (fp8 grids of at most 1.5 CTAs an SM run the wide CTAs: two stages): fp8 two
    // from 2.5 CTAs an SM, 16-bit KV above 2 and up to 10
    const std::int64_t at_2_5 = (5 * sms + 1) / 2;  // the fewest CTAs giving 2.5 an SM
    EXPECT_EQ(stages(1, 64), fp8 ? 2 : 4) << "one CTA";
    EXPECT_EQ(stages(2 * sms, 64), 4) << "2 CTAs an SM";
    EXPECT_EQ(stages(2 * sms + 1, 64), fp8 ? 4 : 2) << "just over 2 CTAs an SM";
    EXPECT_EQ(stages(at_2_5 - 1, 64), fp8 ? 4 : 2) << "just under 2.5 CTAs an SM";
    EXPECT_EQ(stages(at_2_5, 64), 2) << "2.5 CTAs an SM";
    EXPECT_EQ(stages(4 * sms, 64), 2) << "4 CTAs an SM";
    EXPECT_EQ(stages(10 * sms, 64), 2) << "10 CTAs an SM";
    EXPECT_EQ(stages(10 * sms + 1, 64), fp8 ? 2 : 4) << "over 10 CTAs an SM";
    EXPECT_EQ(stages(16 * sms, 64), fp8 ? 2 : 4) << "16 CTAs an SM";
    // head_dim 256 and the 16-row (q_len 4 x group 4) kernel: their depths (decode_attention.cu default_stages)
    for (std::int64_t ctas : {std::int64_t{1}, 4 * sms, 16 * sms}) {
      EXPECT_EQ(stages(ctas, 256), 3) << "head_dim 256, " << ctas << " CTAs";
      EXPECT_EQ(stages(ctas, 64, 4), 4) << "16 rows, head_dim 64";
      EXPECT_EQ(stages(ctas, 128, 4), fp8 ? 4 : 3) << "16 rows, head_dim 128";
    }
    {
      ScopedEnv old("ATTNBENCH_DECODE_STAGES", "3");
      EXPECT_EQ(stages(4 * sms, 128), 3) << "forced old depth, head_dim 128";
      EXPECT_EQ(stages(4 * sms, 64), 4) << "forced old depth, head_dim 64";
      EXPECT_EQ(stages(1, 128), 3) << "forced old depth, one CTA";
    }
    {
      ScopedEnv two("ATTNBENCH_DECODE_STAGES", "2");
      EXPECT_EQ(stages(sms, 64), 2) << "forced two stages, head_dim 64";
      EXPECT_EQ(stages(16 * sms, 64), 2) << "forced two stages, head_dim 64";
      EXPECT_EQ(stages(4 * sms, 256), 3) << "forced two stages: none compiled at head_dim 256";
      ScopedEnv narrow("ATTNBENCH_DECODE_WARPS", "2");
      EXPECT_EQ(stages(4 * sms, 64), 3) << "forced two stages: none compiled for the narrow CTAs at head_dim 64";
      EXPECT_EQ(stages(4 * sms, 128), 2) << "forced two stages, narrow CTAs at head_dim 128";
    }
  }
}

// Every stored fp8 code through the fragment dequantization (byte permute, shift, mask, power-of-two multiply:
// decode_attention.cu fp8x2_to_16bit) against the CPU twin's conversion (core/dtype.hpp). Two pools per
// format: every finite code (NaN / Inf codes, which the saturating stores never write, left out) in a seeded
// order, with scales that keep the outputs O(1); and only the subnormal codes and zeros, scaled up, so that a
// flushed or misplaced subnormal moves rel_l2 far past its bound (uniform [-1, 1] fills hold few of them, and
// their absolute weight sits below the max_abs tolerance).
TEST(DecodeAttention, Fp8KvEveryCodeAgainstCpuTwin) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  std::uint64_t seed = 1700;
  for (DType kv : {DType::fp8_e4m3, DType::fp8_e5m2})
    for (bool subnormal_only : {false, true}) {
      std::vector<std::uint8_t> codes;
      for (int c = 0; c < 256; ++c) {
        const int mag = c & 0x7f;
        const bool finite = kv == DType::fp8_e4m3 ? mag != 0x7f : mag < 0x7c;
        const bool subnormal = kv == DType::fp8_e4m3 ? mag < 0x08 : mag < 0x04;  // exponent field 0 (and zeros)
        if (finite && (!subnormal_only || subnormal)) codes.push_back(static_cast<std::uint8_t>(c));
      }
      ASSERT_EQ(codes.size(), subnormal_only ? (kv == DType::fp8_e4m3 ? 16u : 8u) : (kv == DType::fp8_e4m3 ? 254u : 248u));
      for (DType dt : {DType::bf16, DType::fp16})
        for (int dim : {64, 128, 256}) {
          Spec s;
          s.dtype = dt;
          s.kv_fp8 = kv;
          s.dim = dim;
          s.hq = 8;
          s.hkv = 2;
          s.kv_lens = {1, 17, 300, 1000};
          s.scale_mult = 1.0f;
          // largest finite: e4m3 448, e5m2 57344; largest subnormal: e4m3 0.875 * 2^-6, e5m2 0.75 * 2^-14
          if (subnormal_only) {
            s.k_scale = kv == DType::fp8_e4m3 ? 64.0f : 16384.0f;
            s.v_scale = kv == DType::fp8_e4m3 ? 64.0f : 16384.0f;
          } else {
            s.k_scale = kv == DType::fp8_e4m3 ? 1.0f / 256 : 1.0f / 32768;
            s.v_scale = kv == DType::fp8_e4m3 ? 1.0f / 512 : 1.0f / 65536;
          }
          s.seed = ++seed;
          SCOPED_TRACE(s.name() + (subnormal_only ? " subnormal codes" : " every finite code"));
          HostCase h = make_case(s);
          std::mt19937_64 rng(s.seed);
          for (auto* pool : {&h.k, &h.v})
            for (auto& b : *pool) b = codes[rng() % codes.size()];
          attention_decode_cpu(h.params());  // the twin again, on the new pool
          DeviceCase d = to_device(*dev, h);
          const Errors e = run_and_compare(*dev, h, d);
          std::printf("[ decode ] %-78s max_abs %.2e rel_l2 %.2e lse %.1e (|ref| <= %.2f)%s\n", s.name().c_str(),
                      e.max_abs, e.rel_l2, e.lse_max_abs, e.ref_max, subnormal_only ? " subnormal codes" : "");
          EXPECT_GT(e.ref_max, 0.05);  // the outputs are not vanishing: rel_l2 below means something
          EXPECT_LE(e.max_abs, tolerance(s.dtype));
          EXPECT_LE(e.rel_l2, tolerance(s.dtype) / 2);
          EXPECT_LE(e.lse_max_abs, 1e-3);
        }
    }
}

// A wrong v_scale on the GPU side must be caught by the comparison (the test above is not vacuous).
TEST(DecodeAttention, Fp8WrongScaleIsCaught) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  Spec s;
  s.kv_fp8 = DType::fp8_e4m3;
  s.v_scale = 1.25f;
  HostCase h = make_case(s);
  DeviceCase d = to_device(*dev, h);
  d.p.v_scale = 1.0f;
  const Errors e = run_and_compare(*dev, h, d);
  EXPECT_GT(e.max_abs, tolerance(s.dtype));
}

TEST(DecodeAttention, SweepDtypeHeadDimGroupAddressing) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  std::uint64_t seed = 100;
  for (DType dt : {DType::bf16, DType::fp16})
    for (int dim : {64, 128, 256})
      for (int group : {1, 4, 8})
        for (KvAddressing addr : {KvAddressing::token_indices, KvAddressing::block_table}) {
          Spec s;
          s.dtype = dt;
          s.dim = dim;
          s.hkv = 2;
          s.hq = 2 * group;
          s.addressing = addr;
          s.seed = ++seed;
          check_case(*dev, s);
        }
}

TEST(DecodeAttention, PageSizesAndRagged) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  for (int ps : {32, 64, 128}) {
    Spec s;
    s.hq = 32;
    s.hkv = 8;
    s.page_size = ps;
    s.kv_lens = {1, ps - 1, ps, ps + 1, 3 * ps, 5 * ps + 7, 2000};
    s.seed = 200 + ps;
    check_case(*dev, s);
  }
  Spec r;
  r.addressing = KvAddressing::ragged;
  r.seed = 299;
  check_case(*dev, r);
}

TEST(DecodeAttention, WindowsSinksSoftCapPositionsAndQueryRows) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  std::uint64_t seed = 300;
  for (DType dt : {DType::bf16, DType::fp16}) {
    for (int q_len : {1, 4}) {
      for (int window : {-1, 0, 7, 100}) {
        Spec s;
        s.dtype = dt;
        s.hq = 16;
        s.hkv = 4;
        s.q_len = q_len;
        s.window_left = window;
        s.sinks = window != 0;
        s.seed = ++seed;
        check_case(*dev, s);
      }
    }
    Spec cap;
    cap.dtype = dt;
    cap.soft_cap = 30.0f;
    cap.scale_mult = 40.0f;  // logits beyond the cap
    cap.q_len = 4;
    cap.seed = ++seed;
    check_case(*dev, cap);
    Spec pos;
    pos.dtype = dt;
    pos.positions = true;
    pos.q_len = 4;
    pos.window_left = 20;
    pos.kv_lens = {4, 5, 16, 40, 300};
    pos.addressing = KvAddressing::token_indices;
    pos.seed = ++seed;
    check_case(*dev, pos);
  }
  // More M rows: group 8 x q 3 = 24 (2 m-tiles), 8 x 8 = 64 (4 m-tiles), 8 x 16 = 128 (2 row groups),
  // 4 x 4 non-causal.
  struct Rows {
    int hq, hkv, q_len;
    bool causal;
  };
  for (const Rows& r : {Rows{16, 2, 3, true}, Rows{16, 2, 8, true}, Rows{16, 2, 16, true}, Rows{8, 2, 4, false}}) {
    Spec s;
    s.hq = r.hq;
    s.hkv = r.hkv;
    s.q_len = r.q_len;
    s.causal = r.causal;
    s.sinks = true;
    s.kv_lens = {16, 17, 200, 1000};
    s.seed = ++seed;
    check_case(*dev, s);
  }
}

TEST(DecodeAttention, QoIndptr) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  Spec s;
  s.hq = 32;
  s.hkv = 8;
  s.q_lens = {1, 4, 0, 3, 2};
  s.kv_lens = {5, 64, 70, 300, 1001};
  s.seed = 400;
  check_case(*dev, s);
  s.addressing = KvAddressing::token_indices;
  s.split = Split::fixed;
  s.chunk = 128;
  s.max_chunks = 8;
  s.seed = 401;
  check_case(*dev, s);
}

TEST(DecodeAttention, SplitKv) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  std::uint64_t seed = 500;
  for (KvAddressing addr : {KvAddressing::token_indices, KvAddressing::block_table}) {
    for (DType dt : {DType::bf16, DType::fp16}) {
      Spec fixed;
      fixed.dtype = dt;
      fixed.addressing = addr;
      fixed.kv_lens = {1, 255, 256, 257, 1000, 3000};
      fixed.split = Split::fixed;
      fixed.chunk = 256;
      fixed.max_chunks = 12;
      fixed.seed = ++seed;
      check_case(*dev, fixed);

      Spec even = fixed;
      even.split = Split::even;
      even.max_chunks = 8;
      even.kv_lens = {1, 100, 2000, 5000};
      even.sinks = true;
      even.seed = ++seed;
      check_case(*dev, even);

      Spec ptr = fixed;
      ptr.split = Split::via_ptr;
      ptr.chunk = 300;
      ptr.seed = ++seed;
      check_case(*dev, ptr);
      ptr.chunk = 0;  // the plan chose no split
      ptr.seed = ++seed;
      check_case(*dev, ptr);
      ptr.chunk = 64;  // more chunks than the launch bound: the last one takes the rest
      ptr.max_chunks = 4;
      ptr.seed = ++seed;
      check_case(*dev, ptr);
    }
  }
  // Split together with windows, sinks, 4 query rows and explicit positions.
  Spec s;
  s.q_len = 4;
  s.window_left = 300;
  s.sinks = true;
  s.positions = true;
  s.kv_lens = {8, 700, 3000};
  s.split = Split::even;
  s.max_chunks = 6;
  s.seed = 599;
  check_case(*dev, s);
  // Many chunks, most of them empty for the short rows: one KV head at B = 1 gets TRTLLM's multi-CTA bound of
  // 2 x SMs chunks, merged by several warps per (row, head) (2, 4 and 8 warps for 40, 64 and 264 chunks).
  for (int chunks : {40, 64, 264}) {
    Spec m;
    m.hq = 8;
    m.hkv = 1;
    m.kv_lens = {1025, 1, 16385};
    m.split = Split::even;
    m.max_chunks = chunks;
    m.sinks = chunks == 64;
    m.seed = 590 + chunks;
    check_case(*dev, m);
  }
}

// Merge semaphores a split case needs: one per (request, KV head, 64-row group).
int merge_groups(const Spec& s) {
  const int max_q = s.q_lens.empty() ? s.q_len : *std::max_element(s.q_lens.begin(), s.q_lens.end());
  const int row_groups = (s.hq / s.hkv * max_q + 63) / 64;
  return static_cast<int>(s.kv_lens.size()) * s.hkv * row_groups;
}

// Two launches of d against the CPU twin (the second on the semaphores the first left), each within tolerance.
void expect_two_launches_match(Device& dev, HostCase& h, DeviceCase& d) {
  for (int launch = 0; launch < 2; ++launch) {
    const Errors e = run_and_compare(dev, h, d);
    std::printf("[ decode ] %-84s launch %d max_abs %.2e rel_l2 %.2e lse %.1e\n", h.s.name().c_str(), launch,
                e.max_abs, e.rel_l2, e.lse_max_abs);
    EXPECT_LE(e.max_abs, tolerance(h.s.dtype)) << "launch " << launch;
    EXPECT_LE(e.rel_l2, tolerance(h.s.dtype) / 2) << "launch " << launch;
    EXPECT_LE(e.lse_max_abs, 1e-3) << "launch " << launch;
  }
}

void expect_semaphores_zero(Device& dev, DeviceCase& d) {
  std::vector<std::int32_t> sem(static_cast<std::size_t>(d.semaphores.bytes() / 4), -1);
  dev.copy(sem.data(), d.semaphores.data(), d.semaphores.bytes());
  dev.synchronize();
  EXPECT_EQ(std::count(sem.begin(), sem.end(), 0), static_cast<std::ptrdiff_t>(sem.size()))
      << "the semaphores are not back at zero";
}

// TRTLLM's multi-CTA merge inside the decode kernel (merge_semaphores, as the trtllm_mha backend passes XQA's
// semaphores; at most 4 chunks): split cases like SplitKv's against the CPU twin, each launched twice on the same semaphores (the
// second launch needs the first to have left them at zero), the semaphores zero afterwards; and the fallbacks to the
// merge kernel (one semaphore short of a group each, more chunks than one CTA merges) still correct.
TEST(DecodeAttention, SplitKvMergedInKernel) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  auto groups = merge_groups;
  auto check_twice = [&](Spec s, bool in_kernel) {
    SCOPED_TRACE(s.name());
    HostCase h = make_case(s);
    DeviceCase d = to_device(*dev, h);
    EXPECT_EQ(attention_decode_merges_in_kernel(d.p), in_kernel) << "not the merge path this case is for";
    expect_two_launches_match(*dev, h, d);
    expect_semaphores_zero(*dev, d);
  };
  std::uint64_t seed = 1500;
  for (KvAddressing addr : {KvAddressing::token_indices, KvAddressing::block_table})
    for (DType dt : {DType::bf16, DType::fp16}) {
      Spec even;
      even.dtype = dt;
      even.addressing = addr;
      even.hq = 32;
      even.hkv = 8;
      even.split = Split::even;
      even.max_chunks = 2;  // TRTLLM's plan at b=16 x 8 KV heads on 132 SMs
      even.kv_lens = {1, 100, 2000, 5000, 16385};
      even.sinks = true;
      even.seed = ++seed;
      even.semaphores = groups(even);
      check_twice(even, true);
      Spec fixed = even;
      fixed.split = Split::fixed;
      fixed.chunk = 768;
      fixed.max_chunks = 4;  // the last chunk takes the rest of 3000 keys
      fixed.sinks = false;
      fixed.kv_lens = {1, 255, 256, 257, 1000, 3000};
      fixed.seed = ++seed;
      fixed.semaphores = groups(fixed);
      check_twice(fixed, true);
      Spec fp8 = even;
      fp8.kv_fp8 = DType::fp8_e4m3;
      fp8.k_scale = 0.75f;
      fp8.v_scale = 1.25f;
      fp8.page_size = 64;
      fp8.max_chunks = 4;
      fp8.seed = ++seed;
      check_twice(fp8, true);
    }
  // Windows, sinks, 4 query rows, explicit positions; query rows per request through qo_indptr (some with none).
  Spec w;
  w.q_len = 4;
  w.window_left = 300;
  w.sinks = true;
  w.positions = true;
  w.kv_lens = {8, 700, 3000};
  w.split = Split::even;
  w.max_chunks = 3;
  w.seed = 1599;
  w.semaphores = groups(w);
  check_twice(w, true);
  Spec q;
  q.hq = 32;
  q.hkv = 8;
  q.q_lens = {1, 2, 0, 1};
  q.kv_lens = {5, 64, 70, 3001};
  q.split = Split::via_ptr;
  q.chunk = 128;
  q.max_chunks = 4;
  q.seed = 1598;
  q.semaphores = groups(q);
  check_twice(q, true);
  // Fallbacks to the merge kernel: one semaphore short, and more chunks (5, 64) than the kernel merges itself.
  Spec short_sem = w;
  short_sem.seed = 1597;
  short_sem.semaphores = groups(w) - 1;
  check_twice(short_sem, false);
  Spec five = w;
  five.max_chunks = 5;
  five.seed = 1595;
  check_twice(five, false);
  Spec many;
  many.hq = 8;
  many.hkv = 1;
  many.kv_lens = {1025, 1, 16385};
  many.split = Split::even;
  many.max_chunks = 64;
  many.seed = 1596;
  many.semaphores = groups(many);
  check_twice(many, false);
}

// trtllm_mha's plan where a few (request, KV head) units fill one wave (Llama-3.1-8B b=16: 2 chunks a unit, the even
// split, merged in the kernel through its semaphores): with an fp8 pool the 8-warp CTAs, with a 16-bit pool the
// 4-warp ones; windows, verify rows, both addressings. Each case against the CPU twin, launched twice
// (bit-identical, the semaphores back at zero).
TEST(DecodeAttention, TwoChunkOneWaveGridAgainstCpuTwin) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  auto groups = merge_groups;
  auto output_of = [&](DeviceCase& d) {
    dev->memset(d.o.data(), 0xFF, d.o.bytes());
    if (d.workspace.allocated()) dev->memset(d.workspace.data(), 0xFF, d.workspace.bytes());
    dev->kernels().attention_decode(d.p, dev->stream());
    std::vector<std::uint8_t> o(static_cast<std::size_t>(d.o.bytes()));
    dev->copy(o.data(), d.o.data(), d.o.bytes());
    dev->synchronize();
    return o;
  };
  auto check = [&](Spec s, int warps) {
    SCOPED_TRACE(s.name());
    HostCase h = make_case(s);
    DeviceCase d = to_device(*dev, h);
    EXPECT_EQ(attention_decode_cta_warps(d.p), warps) << "not the CTA shape this case is for";
    EXPECT_TRUE(attention_decode_merges_in_kernel(d.p));
    expect_two_launches_match(*dev, h, d);
    EXPECT_TRUE(output_of(d) == output_of(d)) << "two launches differ";
    if (d.semaphores.allocated()) expect_semaphores_zero(*dev, d);
  };
  std::uint64_t seed = 1700;
  Spec base;  // Llama-3.1-8B's heads: the one-wave fp8 grid of a few requests
  base.hq = 32;
  base.hkv = 8;
  base.page_size = 64;
  base.kv_fp8 = DType::fp8_e4m3;
  base.k_scale = 0.75f;
  base.v_scale = 1.25f;
  base.split = Split::even;
  base.max_chunks = 2;
  base.kv_lens = {1, 100, 2000, 8191, 8192, 16385, 20000};
  base.sinks = true;
  for (KvAddressing addr : {KvAddressing::block_table, KvAddressing::token_indices})
    for (DType dt : {DType::bf16, DType::fp16}) {
      Spec s = base;
      s.addressing = addr;
      s.dtype = dt;
      s.seed = ++seed;
      s.semaphores = groups(s);
      check(s, 8);
    }
  Spec win = base;  // a window over long and short sequences
  win.window_left = 9000;
  win.kv_lens = {20000, 9500, 300};
  win.seed = ++seed;
  win.semaphores = groups(win);
  check(win, 8);
  Spec verify = base;  // 4 query rows of 2 heads (8 rows: the same kernel), explicit positions
  verify.hq = 16;
  verify.q_len = 4;
  verify.positions = true;
  verify.kv_lens = {16385, 3000, 12000};
  verify.seed = ++seed;
  verify.semaphores = groups(verify);
  check(verify, 8);
  Spec bf = base;  // a 16-bit pool: 4-warp CTAs over the same split
  bf.kv_fp8 = DType::bf16;
  bf.seed = ++seed;
  bf.semaphores = groups(bf);
  check(bf, 4);
}

TEST(DecodeAttention, GenericPath) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  std::uint64_t seed = 600;
  for (KvAddressing addr : {KvAddressing::token_indices, KvAddressing::block_table}) {
    Spec s;
    s.dtype = DType::fp32;
    s.addressing = addr;
    s.q_len = 2;
    s.sinks = true;
    s.window_left = 50;
    s.split = Split::fixed;  // the generic path ignores the split fields (as the CPU does)
    s.chunk = 64;
    s.max_chunks = 16;
    s.seed = ++seed;
    check_case(*dev, s);
  }
  Spec odd;  // a head_dim without a tensor-core kernel
  odd.dim = 80;
  odd.seed = ++seed;
  check_case(*dev, odd);
}

TEST(DecodeAttention, BigCases) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  Spec s;
  s.hq = 32;
  s.hkv = 8;
  s.kv_lens.assign(64, 4096);
  s.kv_lens[5] = 4095;
  s.kv_lens[6] = 1;
  s.seed = 700;
  check_case(*dev, s);
  Spec t = s;
  t.addressing = KvAddressing::token_indices;
  t.seed = 701;
  check_case(*dev, t);
  Spec sp;
  sp.dtype = DType::fp16;
  sp.hq = 32;
  sp.hkv = 8;
  sp.kv_lens = {8192, 8000, 6000, 32768};
  sp.split = Split::even;
  sp.max_chunks = 16;
  sp.seed = 702;
  check_case(*dev, sp);
}

// The output and lse of the last launch (synchronises the stream).
std::pair<std::vector<std::uint8_t>, std::vector<float>> read_outputs(Device& dev, const HostCase& h, DeviceCase& d) {
  std::vector<std::uint8_t> o(h.o.size());
  std::vector<float> lse(h.lse.size());
  dev.copy(o.data(), d.o.data(), static_cast<std::int64_t>(o.size()));
  dev.copy(lse.data(), d.lse.data(), static_cast<std::int64_t>(lse.size() * 4));
  dev.synchronize();
  return {std::move(o), std::move(lse)};
}

// A captured decode replays bit-identical to an eager launch, and a new plan written to *kv_chunk_size_ptr
// between replays is picked up.
TEST(DecodeAttention, GraphReplayEqualsEager) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  for (Split split : {Split::even, Split::via_ptr, Split::none}) {
    Spec s;
    s.hq = 32;
    s.hkv = 8;
    s.kv_lens = {17, 1000, 4000, 2500};
    s.addressing = split == Split::via_ptr ? KvAddressing::token_indices : KvAddressing::block_table;
    s.split = split;
    s.chunk = 512;
    s.max_chunks = split == Split::even ? 264 : 10;  // even: the merge's multi-warp path as well
    s.sinks = true;
    s.seed = 800 + static_cast<int>(split);
    SCOPED_TRACE(s.name());
    HostCase h = make_case(s);
    DeviceCase d = to_device(*dev, h);
    auto read_o = [&] { return read_outputs(*dev, h, d); };
    auto poison = [&] {
      dev->memset(d.o.data(), 0xFF, d.o.bytes());
      dev->memset(d.lse.data(), 0xFF, d.lse.bytes());
    };
    poison();
    dev->kernels().attention_decode(d.p, dev->stream());
    const auto eager = read_o();
    poison();
    auto graph = dev->capture([&] { dev->kernels().attention_decode(d.p, dev->stream()); });
    for (int i = 0; i < 2; ++i) {
      poison();
      graph->replay();
      const auto replay = read_o();
      EXPECT_EQ(0, std::memcmp(replay.first.data(), eager.first.data(), eager.first.size())) << "replay " << i;
      EXPECT_EQ(0, std::memcmp(replay.second.data(), eager.second.data(), eager.second.size() * 4));
    }
    if (split == Split::via_ptr) {
      for (int chunk : {256, 0, 2000}) {
        const std::int32_t c = chunk;
        dev->copy(d.chunk_ptr.data(), &c, 4);
        poison();
        dev->kernels().attention_decode(d.p, dev->stream());
        const auto eager2 = read_o();
        poison();
        graph->replay();
        const auto replay2 = read_o();
        EXPECT_EQ(0, std::memcmp(replay2.first.data(), eager2.first.data(), eager2.first.size())) << "chunk " << chunk;
        // and the new plan still computes the same attention
        double max_abs = 0.0;
        for (std::size_t i = 0; i < h.o.size() / 2; ++i)
          max_abs = std::max<double>(max_abs, std::fabs(load_as_float(replay2.first.data(), i, s.dtype) -
                                                        load_as_float(h.o.data(), i, s.dtype)));
        EXPECT_LE(max_abs, tolerance(s.dtype)) << "chunk " << chunk;
      }
    }
  }
}

// The merge kernel as a programmatic dependent of the decode kernel (FlashInfer's launch on SM90;
// ATTNBENCH_DECODE_PDL=0 the plain launch): the same bytes as the plain launch, eager and replayed from a graph,
// on split cases whose merge reads partials written at the very end of the decode CTAs (a merge that started
// reading before the decode grid had flushed would read the 0xFF poison of the scratch: NaN). Each launch is
// repeated, the scratch re-poisoned each time; fp8 and 16-bit pools, one, a few and 264 chunks (multi-warp merge).
TEST(DecodeAttention, MergeAsDependentLaunchEqualsPlain) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  std::vector<Spec> specs(4);
  specs[0].hq = 32;
  specs[0].hkv = 8;
  specs[0].kv_lens = {17, 1000, 4000, 2500, 1, 16385};
  specs[0].split = Split::even;
  specs[0].max_chunks = 2;
  specs[1] = specs[0];
  specs[1].kv_fp8 = DType::fp8_e4m3;
  specs[1].k_scale = 0.5f;
  specs[1].v_scale = 2.0f;
  specs[2] = specs[0];
  specs[2].addressing = KvAddressing::token_indices;
  specs[2].split = Split::via_ptr;
  specs[2].chunk = 700;
  specs[2].max_chunks = 24;
  specs[2].sinks = true;
  specs[3].hq = 8;
  specs[3].hkv = 1;
  specs[3].kv_lens = {1025, 16385};
  specs[3].split = Split::even;
  specs[3].max_chunks = 264;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    Spec& s = specs[i];
    s.seed = 950 + i;
    SCOPED_TRACE(s.name());
    HostCase h = make_case(s);
    DeviceCase d = to_device(*dev, h);
    ASSERT_FALSE(attention_decode_merges_in_kernel(d.p)) << "not a merge-kernel case";
    auto launch_and_read = [&](const std::function<void()>& launch) {
      dev->memset(d.o.data(), 0xFF, d.o.bytes());
      dev->memset(d.lse.data(), 0xFF, d.lse.bytes());
      dev->memset(d.workspace.data(), 0xFF, d.workspace.bytes());
      launch();
      return read_outputs(*dev, h, d);
    };
    auto eager = [&] { dev->kernels().attention_decode(d.p, dev->stream()); };
    std::pair<std::vector<std::uint8_t>, std::vector<float>> plain;
    {
      ScopedEnv off("ATTNBENCH_DECODE_PDL", "0");
      plain = launch_and_read(eager);
    }
    const Errors e = run_and_compare(*dev, h, d);  // the dependent launch against the CPU twin
    EXPECT_LE(e.max_abs, tolerance(s.dtype));
    EXPECT_LE(e.lse_max_abs, 1e-3);
    for (int rep = 0; rep < 8; ++rep) {
      const auto dep = launch_and_read(eager);
      EXPECT_EQ(0, std::memcmp(dep.first.data(), plain.first.data(), plain.first.size())) << "eager " << rep;
      EXPECT_EQ(0, std::memcmp(dep.second.data(), plain.second.data(), plain.second.size() * 4)) << "eager " << rep;
    }
    auto graph = dev->capture(eager);
    for (int rep = 0; rep < 4; ++rep) {
      const auto dep = launch_and_read([&] { graph->replay(); });
      EXPECT_EQ(0, std::memcmp(dep.first.data(), plain.first.data(), plain.first.size())) << "replay " << rep;
      EXPECT_EQ(0, std::memcmp(dep.second.data(), plain.second.data(), plain.second.size() * 4)) << "replay " << rep;
    }
  }
}

TEST(DecodeAttention, RejectsWhatItCannotRun) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  Spec s;
  s.kv_lens = {10, 20};
  HostCase h = make_case(s);
  DeviceCase d = to_device(*dev, h);
  AttentionParams p = d.p;
  p.num_qo_heads = 7;  // not a multiple of num_kv_heads
  EXPECT_THROW(dev->kernels().attention_decode(p, dev->stream()), InputError);
  p = d.p;
  p.head_dim = 1024;
  EXPECT_THROW(dev->kernels().attention_decode(p, dev->stream()), Unsupported);
  p = d.p;
  p.max_num_chunks = 4;
  p.kv_chunk_size = 8;  // a split without scratch
  EXPECT_THROW(dev->kernels().attention_decode(p, dev->stream()), InputError);
  dev->synchronize();
}

// ---- timing table (never asserts speed) -------------------------------------------------------------------

struct BenchShape {
  const char* label;
  KvAddressing addr;
  int page;  // page of the physical layout; block_table uses it as its page size
  int bs, len, q_len;
  bool split;  // as the modelled backend would (below), else never
};

TEST(DecodeAttentionBench, DISABLED_Table) {
  ATTNBENCH_REQUIRE_GPU();
  auto dev = make_device(DeviceChoice::cuda);
  const int hq = 32, hkv = 8, dim = 128;
  const int sms = dev->sm_count();
  const double copy_bw = dev->measure_copy_bandwidth();
  // Split rules of the backends (src/backends): block table = TRTLLM multi-CTA: max(1, 2*SMs / (bs*Hkv))
  // even chunks; token indices = FlashInfer's plan: the same bound, chunk = the smallest >= 256 that fits it.
  const BenchShape shapes[] = {
      {"token (p16 layout)", KvAddressing::token_indices, 16, 64, 4096, 1, true},
      {"block p16", KvAddressing::block_table, 16, 64, 4096, 1, true},
      {"block p32", KvAddressing::block_table, 32, 64, 4096, 1, true},
      {"block p64", KvAddressing::block_table, 64, 64, 4096, 1, true},
      {"block p128", KvAddressing::block_table, 128, 64, 4096, 1, true},
      {"token (p16 layout)", KvAddressing::token_indices, 16, 64, 4096, 1, true},
      {"block p16", KvAddressing::block_table, 16, 16, 16384, 1, true},
      {"token (p16 layout)", KvAddressing::token_indices, 16, 16, 16384, 1, true},
      {"block p16", KvAddressing::block_table, 16, 64, 32768, 1, true},
      {"token (p16 layout)", KvAddressing::token_indices, 16, 64, 32768, 1, true},
      {"block p16", KvAddressing::block_table, 16, 256, 16384, 1, true},
      {"block p16 (split even)", KvAddressing::block_table, 16, 1, 32768, 1, true},
      {"token (split ptr)", KvAddressing::token_indices, 16, 1, 32768, 1, true},
      {"block p16 no split", KvAddressing::block_table, 16, 1, 32768, 1, false},
      {"block p16 (split even)", KvAddressing::block_table, 16, 4, 8192, 1, true},
      {"block p16 verify q=4", KvAddressing::block_table, 16, 64, 4096, 4, true},
      {"token verify q=4", KvAddressing::token_indices, 16, 64, 4096, 4, true},
  };
  std::printf("\n[ decode bench ] bf16, %d q / %d kv heads, head_dim %d; copy bandwidth %.3f TB/s; L2 flushed\n", hq,
              hkv, dim, copy_bw / 1e12);
  std::printf("| %-22s | %4s | %6s | %3s | %6s | %9s | %7s | %9s | %11s |\n", "kernel", "B", "L", "q", "chunks",
              "time_us", "TB/s", "frac_copy", "max_abs_err");
  std::printf("|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", "------------------------", "------", "--------", "-----", "--------",
              "-----------", "---------", "-----------", "-------------");
  std::mt19937_64 rng(1);
  for (const BenchShape& b : shapes) {
    const int ps = b.page;
    const std::int64_t pages_per_req = (b.len + ps - 1) / ps;
    const std::int64_t pages = pages_per_req * b.bs;
    const std::int64_t slots = pages * ps;
    const std::int64_t kv_elems = slots * hkv * dim;
    Buffer k = dev->allocate(kv_elems * 2, MemKind::device, "bench.k");
    Buffer v = dev->allocate(kv_elems * 2, MemKind::device, "bench.v");
    const int total_q = b.bs * b.q_len;
    Buffer q = dev->allocate(static_cast<std::int64_t>(total_q) * hq * dim * 2, MemKind::device, "bench.q");
    Buffer o = dev->allocate(q.bytes(), MemKind::device, "bench.o");
    Buffer o_ref = dev->allocate(q.bytes(), MemKind::device, "bench.o_ref");
    for (auto [buf, seed] : {std::pair<Buffer*, int>{&k, 1}, {&v, 2}, {&q, 3}}) {
      FillParams fp;
      fp.data = buf->data();
      fp.n = buf->bytes() / 2;
      fp.dtype = DType::bf16;
      fp.seed = static_cast<std::uint64_t>(seed);
      dev->kernels().fill_uniform(fp, dev->stream());
    }
    std::vector<std::int32_t> perm(static_cast<std::size_t>(pages));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<std::int32_t> lens(b.bs, b.len), indptr(b.bs + 1);
    for (int i = 0; i <= b.bs; ++i) indptr[i] = i * b.len;
    Buffer dlens = upload(*dev, lens, "bench.kv_lens"), dindptr = upload(*dev, indptr, "bench.kv_indptr");
    Buffer table, indices;
    AttentionParams p;
    p.q = q.data();
    p.o = o.data();
    p.q_len_per_req = b.q_len;
    p.addressing = b.addr;
    p.k = k.data();
    p.v = v.data();
    p.batch_size = b.bs;
    p.total_q = total_q;
    p.max_q_len = b.q_len;
    p.max_kv_len = b.len;
    p.num_qo_heads = hq;
    p.num_kv_heads = hkv;
    p.head_dim = dim;
    p.dtype = DType::bf16;
    p.causal = true;
    p.sm_scale = 1.0f / std::sqrt(static_cast<float>(dim));
    if (b.addr == KvAddressing::block_table) {
      table = upload(*dev, perm, "bench.page_table");  // request i owns pages [i * ppr, (i+1) * ppr) of perm
      p.kv_lens = dlens.as<std::int32_t>();
      p.page_table = table.as<std::int32_t>();
      p.page_table_stride = static_cast<int>(pages_per_req);
      p.page_size = ps;
    } else {
      std::vector<std::int32_t> idx(static_cast<std::size_t>(b.bs) * b.len);
      for (int i = 0; i < b.bs; ++i)
        for (int m = 0; m < b.len; ++m)
          idx[static_cast<std::size_t>(i) * b.len + m] = perm[i * pages_per_req + m / ps] * ps + m % ps;
      indices = upload(*dev, idx, "bench.kv_indices");
      p.kv_indptr = dindptr.as<std::int32_t>();
      p.kv_indices = indices.as<std::int32_t>();
    }
    Buffer ws, cptr;
    const int max_chunks = std::max(1, 2 * sms / (b.bs * hkv));
    int chunks_used = 1;
    if (b.split && max_chunks > 1) {
      p.max_num_chunks = max_chunks;
      if (b.addr == KvAddressing::block_table) {
        p.kv_chunk_size = kSplitKvEven;
        const int even = std::max(kMinEvenKvChunk, ((b.len + max_chunks - 1) / max_chunks + 63) / 64 * 64);
        chunks_used = (b.len + even - 1) / even;
      } else {
        const int chunk = std::max(256, (b.len + max_chunks - 1) / max_chunks);
        cptr = upload(*dev, std::vector<std::int32_t>{chunk}, "bench.chunk");
        p.kv_chunk_size_ptr = cptr.as<std::int32_t>();
        chunks_used = (b.len + chunk - 1) / chunk;
      }
      p.workspace_bytes = split_kv_workspace_bytes(total_q, max_chunks, hq, dim);
      ws = dev->allocate(p.workspace_bytes, MemKind::device, "bench.workspace");
      p.workspace = ws.data();
    }
    // Error of the timed output against the generic kernel (itself checked against the CPU twin above).
    AttentionParams pr = p;
    pr.o = o_ref.data();
    launch_attention_decode_generic(pr, dev->stream());
    dev->memset(o.data(), 0xFF, o.bytes());
    dev->kernels().attention_decode(p, dev->stream());
    std::vector<std::uint16_t> h_o(static_cast<std::size_t>(o.bytes() / 2)), h_r(h_o.size());
    dev->copy(h_o.data(), o.data(), o.bytes());
    dev->copy(h_r.data(), o_ref.data(), o.bytes());
    dev->synchronize();
    double max_abs = 0.0;
    for (std::size_t i = 0; i < h_o.size(); ++i) {
      const double g = bf16_to_float(h_o[i]), r = bf16_to_float(h_r[i]);
      max_abs = std::max(max_abs, std::isnan(g) ? INFINITY : std::fabs(g - r));
    }
    auto timer = dev->make_timer();
    std::vector<double> us;
    for (int it = 0; it < 23; ++it) {
      dev->flush_l2();
      timer->start();
      dev->kernels().attention_decode(p, dev->stream());
      timer->stop();
      const double t = timer->elapsed_us();
      if (it >= 3) us.push_back(t);
    }
    std::sort(us.begin(), us.end());
    const double med = us[us.size() / 2];
    const double kv_bytes = 2.0 * b.bs * hkv * static_cast<double>(b.len) * dim * 2;
    const double tbs = kv_bytes / (med * 1e-6) / 1e12;
    std::printf("| %-22s | %4d | %6d | %3d | %6d | %9.1f | %7.3f | %9.3f | %11.2e |\n", b.label, b.bs, b.len, b.q_len,
                chunks_used, med, tbs, tbs * 1e12 / copy_bw, max_abs);
    EXPECT_LE(max_abs, 2e-2) << b.label;
  }
}

}  // namespace
}  // namespace attnbench
