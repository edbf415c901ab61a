// GPU tests of launch_attention_prefill (kernels/cuda/prefill_attention.cu: the FA2-class kernel, and on an
// sm_90 GPU the Hopper kernel of kernels/cuda/prefill_hopper.cu; every case runs on each kernel the GPU has)
// against its CPU twin attention_prefill_cpu, on seeded random inputs (q in [-4, 4), k / v in [-1, 1); never zeros), with the
// outputs poisoned (0xFF bytes: NaN) before each launch so that an unwritten element fails.
// Also: CUDA-graph replay equals the eager launch bitwise, and a timing print (TFLOP/s, never asserted).
//   ctest -L gpu -R Prefill          or   attnbench_gpu_tests --gtest_filter='Prefill*'
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "device/device_factory.hpp"
#include "kernels/cpu/kernels_cpu.hpp"
#include "kernels/cuda/kernels_cuda.cuh"
#include "kernels/params.hpp"
#include "kernels/random.hpp"

namespace attnbench {
// The slow one-warp-per-row kernel of kernels/cuda/prefill_attention.cu (cross-check of the timed shapes).
void launch_attention_prefill_generic(const AttentionParams& p, void* stream);
// The tensor-core kernel's fp8 -> bf16 / fp16 conversion on n codes (prefill_attention.cu's test hook).
void launch_fp8_dequant_probe(const void* in, void* out, int n, DType kv, DType model, void* stream);
}  // namespace attnbench

namespace attnbench {
namespace {

#define SKIP_WITHOUT_GPU()                                                            \
  do {                                                                                \
    if (!attnbench::gpu_availability().usable) GTEST_SKIP() << attnbench::gpu_availability().detail; \
  } while (0)

void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// Device memory owned by the test (plain cudaMalloc).
class DevBuf {
 public:
  DevBuf() = default;
  explicit DevBuf(std::size_t bytes) : bytes_(bytes) {
    if (bytes > 0) cuda_ok(cudaMalloc(&p_, bytes), "cudaMalloc");
  }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  DevBuf(DevBuf&& o) noexcept : p_(o.p_), bytes_(o.bytes_) { o.p_ = nullptr; }
  DevBuf& operator=(DevBuf&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~DevBuf() {
    if (p_) cudaFree(p_);
  }
  template <class T = void>
  T* get() const {
    return static_cast<T*>(p_);
  }
  template <class V>
  static DevBuf from(const std::vector<V>& h) {
    DevBuf b(h.size() * sizeof(V));
    if (!h.empty()) cuda_ok(cudaMemcpy(b.p_, h.data(), h.size() * sizeof(V), cudaMemcpyHostToDevice), "upload");
    return b;
  }
  template <class V>
  std::vector<V> download() const {
    std::vector<V> h(bytes_ / sizeof(V));
    if (!h.empty()) cuda_ok(cudaMemcpy(h.data(), p_, bytes_, cudaMemcpyDeviceToHost), "download");
    return h;
  }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// Seeded uniform values in [lo, hi), rounded to dtype, as raw bytes.
std::vector<unsigned char> random_tensor(std::int64_t n, DType t, std::uint64_t seed, float lo, float hi) {
  std::vector<unsigned char> bytes(static_cast<std::size_t>(n) * dtype_size(t));
  for (std::int64_t i = 0; i < n; ++i) store_from_float(bytes.data(), i, t, lo + (hi - lo) * uniform_at(seed, i));
  return bytes;
}

struct Case {
  std::string name;
  DType dtype = DType::bf16;
  int head_dim = 128;
  int hq = 8;
  int hkv = 2;
  KvAddressing addressing = KvAddressing::ragged;
  int page_size = 16;
  std::vector<int> q_lens;
  std::vector<int> kv_lens;         // per request (>= q_len under the default positions)
  std::vector<int> q_start_pos;     // empty: default (kv_len - q_len)
  std::vector<int> kv_start_pos;    // empty: default (0)
  bool causal = true;
  int window_left = -1;
  float softcap = 0.0f;
  bool sinks = false;
  bool lse = true;
  bool use_qo_indptr = true;  // false: q_len_per_req = q_lens[0] (all equal)
  std::uint64_t seed = 1;
  DType kv_fp8 = DType::bf16;  // fp8_e4m3 / fp8_e5m2: the pool in fp8 (--kv-cache-dtype), with the scales below
  float k_scale = 1.0f, v_scale = 1.0f;
  bool q_fp8 = false;  // q stored in kv_fp8 too (trtllm_mha's fmha_v2 extend)
};

// Host-side inputs of one case, laid out as the addressing mode wants.
struct Inputs {
  int batch = 0, total_q = 0, max_q = 0, max_kv = 0;
  std::vector<std::int32_t> qo_indptr, kv_indptr, kv_indices, kv_lens, page_table, q_start, kv_start;
  int page_table_stride = 0;
  std::int64_t kv_rows = 0;  // rows of k / v (ragged: total_kv; else pool slots)
  std::vector<unsigned char> q, k, v;
  std::vector<float> sinks;
};

Inputs make_inputs(const Case& c) {
  Inputs in;
  in.batch = static_cast<int>(c.q_lens.size());
  std::mt19937 rng(static_cast<std::uint32_t>(c.seed * 7919 + 13));
  in.qo_indptr.assign(1, 0);
  in.kv_indptr.assign(1, 0);
  for (int i = 0; i < in.batch; ++i) {
    in.qo_indptr.push_back(in.qo_indptr.back() + c.q_lens[i]);
    in.kv_indptr.push_back(in.kv_indptr.back() + c.kv_lens[i]);
    in.max_q = std::max(in.max_q, c.q_lens[i]);
    in.max_kv = std::max(in.max_kv, c.kv_lens[i]);
  }
  in.total_q = in.qo_indptr.back();
  const int total_kv = in.kv_indptr.back();
  in.kv_lens.assign(c.kv_lens.begin(), c.kv_lens.end());
  switch (c.addressing) {
    case KvAddressing::ragged:
      in.kv_rows = total_kv;
      break;
    case KvAddressing::token_indices: {
      in.kv_rows = total_kv + 37;  // spare slots nobody uses
      std::vector<std::int32_t> perm(static_cast<std::size_t>(in.kv_rows));
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      in.kv_indices.assign(perm.begin(), perm.begin() + total_kv);
      break;
    }
    case KvAddressing::block_table: {
      const int ps = c.page_size;
      int max_pages = 0, total_pages = 0;
      for (int len : c.kv_lens) {
        max_pages = std::max(max_pages, (len + ps - 1) / ps);
        total_pages += (len + ps - 1) / ps;
      }
      const int num_pages = total_pages + 3;
      in.kv_rows = static_cast<std::int64_t>(num_pages) * ps;
      std::vector<std::int32_t> perm(static_cast<std::size_t>(num_pages));
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      in.page_table_stride = max_pages + 2;
      // Entries past a request's pages point far outside the pool: reading one would fault.
      in.page_table.assign(static_cast<std::size_t>(in.batch) * in.page_table_stride, 1 << 24);
      int next = 0;
      for (int i = 0; i < in.batch; ++i)
        for (int pg = 0; pg < (c.kv_lens[i] + ps - 1) / ps; ++pg)
          in.page_table[static_cast<std::size_t>(i) * in.page_table_stride + pg] = perm[next++];
      break;
    }
  }
  in.q_start.assign(c.q_start_pos.begin(), c.q_start_pos.end());
  in.kv_start.assign(c.kv_start_pos.begin(), c.kv_start_pos.end());
  const std::int64_t qn = static_cast<std::int64_t>(in.total_q) * c.hq * c.head_dim;
  const std::int64_t kvn = in.kv_rows * c.hkv * c.head_dim;
  const bool fp8_pool = is_fp8(c.kv_fp8) && c.addressing != KvAddressing::ragged;
  in.q = random_tensor(qn, c.q_fp8 && is_fp8(c.kv_fp8) ? c.kv_fp8 : c.dtype, c.seed * 3 + 0, -4.0f, 4.0f);
  in.k = random_tensor(kvn, fp8_pool ? c.kv_fp8 : c.dtype, c.seed * 3 + 1, -1.0f, 1.0f);
  in.v = random_tensor(kvn, fp8_pool ? c.kv_fp8 : c.dtype, c.seed * 3 + 2, -1.0f, 1.0f);
  if (c.sinks)
    for (int h = 0; h < c.hq; ++h) in.sinks.push_back(-2.0f + 4.0f * uniform_at(c.seed * 3 + 5, h));
  return in;
}

// AttentionParams over `in` with the given base pointers (host for the CPU twin, device for the GPU).
struct Ptrs {
  const void *q = nullptr, *k = nullptr, *v = nullptr;
  void* o = nullptr;
  float* lse = nullptr;
  const std::int32_t *qo_indptr = nullptr, *kv_indptr = nullptr, *kv_indices = nullptr, *kv_lens = nullptr,
                     *page_table = nullptr, *q_start = nullptr, *kv_start = nullptr;
  const float* sinks = nullptr;
};

AttentionParams make_params(const Case& c, const Inputs& in, const Ptrs& p) {
  AttentionParams a;
  a.q = p.q;
  a.o = p.o;
  a.lse = c.lse ? p.lse : nullptr;
  a.qo_indptr = c.use_qo_indptr ? p.qo_indptr : nullptr;
  a.q_len_per_req = c.use_qo_indptr ? 1 : c.q_lens[0];
  a.addressing = c.addressing;
  a.k = p.k;
  a.v = p.v;
  a.kv_indptr = p.kv_indptr;
  a.kv_indices = c.addressing == KvAddressing::token_indices ? p.kv_indices : nullptr;
  a.kv_lens = c.addressing == KvAddressing::block_table ? p.kv_lens : nullptr;
  a.page_table = c.addressing == KvAddressing::block_table ? p.page_table : nullptr;
  a.page_table_stride = in.page_table_stride;
  a.page_size = c.addressing == KvAddressing::block_table ? c.page_size : 1;
  a.q_start_pos = in.q_start.empty() ? nullptr : p.q_start;
  a.kv_start_pos = in.kv_start.empty() ? nullptr : p.kv_start;
  a.batch_size = in.batch;
  a.total_q = in.total_q;
  a.max_q_len = in.max_q;
  a.max_kv_len = in.max_kv;
  a.num_qo_heads = c.hq;
  a.num_kv_heads = c.hkv;
  a.head_dim = c.head_dim;
  a.dtype = c.dtype;
  a.kv_fp8 = c.kv_fp8;
  a.k_scale = c.k_scale;
  a.v_scale = c.v_scale;
  a.q_fp8 = c.q_fp8;
  a.causal = c.causal;
  a.window_left = c.window_left;
  a.sm_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  a.logits_soft_cap = c.softcap;
  a.sinks = c.sinks ? p.sinks : nullptr;
  return a;
}

// Device copies of an Inputs.
struct DeviceInputs {
  DevBuf q, k, v, o, lse, qo_indptr, kv_indptr, kv_indices, kv_lens, page_table, q_start, kv_start, sinks;
  Ptrs ptrs() const {
    Ptrs p;
    p.q = q.get();
    p.k = k.get();
    p.v = v.get();
    p.o = o.get();
    p.lse = lse.get<float>();
    p.qo_indptr = qo_indptr.get<std::int32_t>();
    p.kv_indptr = kv_indptr.get<std::int32_t>();
    p.kv_indices = kv_indices.get<std::int32_t>();
    p.kv_lens = kv_lens.get<std::int32_t>();
    p.page_table = page_table.get<std::int32_t>();
    p.q_start = q_start.get<std::int32_t>();
    p.kv_start = kv_start.get<std::int32_t>();
    p.sinks = sinks.get<float>();
    return p;
  }
};

DeviceInputs upload(const Case& c, const Inputs& in) {
  DeviceInputs d;
  d.q = DevBuf::from(in.q);
  d.k = DevBuf::from(in.k);
  d.v = DevBuf::from(in.v);
  d.o = DevBuf(static_cast<std::size_t>(in.total_q) * c.hq * c.head_dim * dtype_size(c.dtype));
  d.lse = DevBuf(static_cast<std::size_t>(in.total_q) * c.hq * sizeof(float));
  d.qo_indptr = DevBuf::from(in.qo_indptr);
  d.kv_indptr = DevBuf::from(in.kv_indptr);
  d.kv_indices = DevBuf::from(in.kv_indices);
  d.kv_lens = DevBuf::from(in.kv_lens);
  d.page_table = DevBuf::from(in.page_table);
  d.q_start = DevBuf::from(in.q_start);
  d.kv_start = DevBuf::from(in.kv_start);
  d.sinks = DevBuf::from(in.sinks);
  return d;
}

void poison(const DeviceInputs& d, const Case& c, const Inputs& in) {
  cuda_ok(cudaMemset(d.o.get(), 0xFF, static_cast<std::size_t>(in.total_q) * c.hq * c.head_dim * dtype_size(c.dtype)),
          "poison o");
  cuda_ok(cudaMemset(d.lse.get(), 0xFF, static_cast<std::size_t>(in.total_q) * c.hq * sizeof(float)), "poison lse");
}

float tolerance(DType t) { return t == DType::bf16 ? 2e-2f : (t == DType::fp16 ? 5e-3f : 1e-4f); }

struct Errors {
  double max_abs = 0.0;
  std::int64_t bad = 0;  // elements over tolerance (NaN included)
  double lse_max_rel = 0.0;
  std::int64_t lse_bad = 0;
};

Errors compare(const Case& c, const Inputs& in, const std::vector<unsigned char>& o, const std::vector<float>& lse,
               const std::vector<unsigned char>& o_ref, const std::vector<float>& lse_ref) {
  Errors e;
  const float tol = tolerance(c.dtype);
  const std::int64_t n = static_cast<std::int64_t>(in.total_q) * c.hq * c.head_dim;
  for (std::int64_t i = 0; i < n; ++i) {
    const float a = load_as_float(o.data(), i, c.dtype), b = load_as_float(o_ref.data(), i, c.dtype);
    const double d = std::fabs(static_cast<double>(a) - b);
    if (!(d <= tol)) ++e.bad;
    if (std::isnan(d)) e.max_abs = std::numeric_limits<double>::infinity();
    else e.max_abs = std::max(e.max_abs, d);
  }
  if (c.lse) {
    for (std::size_t i = 0; i < lse_ref.size(); ++i) {
      const float a = lse[i], b = lse_ref[i];
      if (std::isinf(b) && b < 0) {
        if (!(std::isinf(a) && a < 0)) ++e.lse_bad;
        continue;
      }
      const double rel = std::fabs(static_cast<double>(a) - b) / std::max(1.0, std::fabs(static_cast<double>(b)));
      if (!(rel <= 1e-3)) ++e.lse_bad;
      e.lse_max_rel = std::isnan(rel) ? std::numeric_limits<double>::infinity() : std::max(e.lse_max_rel, rel);
    }
  }
  return e;
}

// The prefill kernels this GPU runs: the FA2-class kernel always, the Hopper kernel on sm_90.
std::vector<PrefillKernel> kernels_under_test() {
  std::vector<PrefillKernel> k = {PrefillKernel::fa2};
  if (prefill_hopper_usable()) k.push_back(PrefillKernel::hopper);
  return k;
}

const char* kernel_name(PrefillKernel k) {
  switch (k) {
    case PrefillKernel::fa2:
      return "fa2";
    case PrefillKernel::hopper:
      return "hopper";
    case PrefillKernel::automatic:
      return "auto";
  }
  return "?";
}

// Runs the CPU twin and the GPU kernels on one case and checks every output element of each.
// expect_tensor_cores: also checks which kernel the FA2-class launch picks (prefill_fa2_uses_tensor_cores).
void run_case(const Case& c, std::optional<bool> expect_tensor_cores = std::nullopt) {
  SCOPED_TRACE(c.name);
  const Inputs in = make_inputs(c);
  // CPU twin on host copies.
  std::vector<unsigned char> o_ref(static_cast<std::size_t>(in.total_q) * c.hq * c.head_dim * dtype_size(c.dtype));
  std::vector<float> lse_ref(static_cast<std::size_t>(in.total_q) * c.hq);
  Ptrs hp;
  hp.q = in.q.data();
  hp.k = in.k.data();
  hp.v = in.v.data();
  hp.o = o_ref.data();
  hp.lse = lse_ref.data();
  hp.qo_indptr = in.qo_indptr.data();
  hp.kv_indptr = in.kv_indptr.data();
  hp.kv_indices = in.kv_indices.data();
  hp.kv_lens = in.kv_lens.data();
  hp.page_table = in.page_table.data();
  hp.q_start = in.q_start.data();
  hp.kv_start = in.kv_start.data();
  hp.sinks = in.sinks.data();
  attention_prefill_cpu(make_params(c, in, hp));

  const DeviceInputs d = upload(c, in);
  if (expect_tensor_cores)
    EXPECT_EQ(prefill_fa2_uses_tensor_cores(make_params(c, in, d.ptrs())), *expect_tensor_cores)
        << "FA2-class launch: expected the " << (*expect_tensor_cores ? "tensor-core" : "generic") << " kernel";
  for (PrefillKernel k : kernels_under_test()) {
    SCOPED_TRACE(kernel_name(k));
    poison(d, c, in);
    cudaStream_t stream;
    cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
    launch_attention_prefill_with(make_params(c, in, d.ptrs()), stream, k);
    cuda_ok(cudaStreamSynchronize(stream), "prefill kernel");
    cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
    const Errors e = compare(c, in, d.o.download<unsigned char>(), d.lse.download<float>(), o_ref, lse_ref);
    std::printf("  %-6s %-48s max_abs %.3g  lse_max_rel %.3g\n", kernel_name(k), c.name.c_str(), e.max_abs,
                e.lse_max_rel);
    EXPECT_EQ(e.bad, 0) << "output elements over tolerance " << tolerance(c.dtype) << ", max abs " << e.max_abs;
    EXPECT_EQ(e.lse_bad, 0) << "lse entries off by more than 1e-3 relative, max " << e.lse_max_rel;
  }
}

const char* addressing_name(KvAddressing a) {
  switch (a) {
    case KvAddressing::ragged:
      return "ragged";
    case KvAddressing::token_indices:
      return "tokens";
    case KvAddressing::block_table:
      return "pages";
  }
  return "?";
}

Case base_case(const std::string& name, KvAddressing addr, std::vector<int> q_lens, std::vector<int> prefix) {
  Case c;
  c.name = name;
  c.addressing = addr;
  c.q_lens = std::move(q_lens);
  for (std::size_t i = 0; i < c.q_lens.size(); ++i) c.kv_lens.push_back(c.q_lens[i] + prefix[i]);
  return c;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  const std::vector<int> ql = {1, 17, 64, 130, 300, 2};
  const std::vector<int> no_prefix(ql.size(), 0);
  const std::vector<int> prefix = {0, 5, 128, 200, 1, 333};
  std::uint64_t seed = 100;
  for (KvAddressing addr : {KvAddressing::ragged, KvAddressing::token_indices, KvAddressing::block_table}) {
    const std::string an = addressing_name(addr);
    Case c = base_case(an + "_causal_prefix0", addr, ql, no_prefix);
    c.seed = seed++;
    cases.push_back(c);
    c = base_case(an + "_causal_prefix", addr, ql, prefix);
    c.seed = seed++;
    cases.push_back(c);
    c = base_case(an + "_noncausal_prefix", addr, ql, prefix);
    c.causal = false;
    c.seed = seed++;
    cases.push_back(c);
    c = base_case(an + "_window_sinks_softcap", addr, ql, prefix);
    c.window_left = 37;
    c.sinks = true;
    c.softcap = 30.0f;
    c.seed = seed++;
    cases.push_back(c);
  }
  // Page sizes with lengths at and around page boundaries.
  for (int ps : {16, 32, 64, 128}) {
    Case c = base_case("pages" + std::to_string(ps) + "_boundaries", KvAddressing::block_table,
                       {1, ps, ps + 1, 2 * ps - 1, 1, 3}, {ps - 1, 0, ps - 1, 1, 2 * ps, 3 * ps - 3});
    c.page_size = ps;
    c.seed = seed++;
    cases.push_back(c);
  }
  // Explicit positions: kv_start_pos > 0 (a window-trimmed cache) and q_start_pos; one request whose queries
  // precede every key (rows with no visible key: o = 0, lse = -inf), one with a window cutting the middle.
  for (KvAddressing addr : {KvAddressing::ragged, KvAddressing::token_indices, KvAddressing::block_table}) {
    Case c = base_case(std::string(addressing_name(addr)) + "_positions_window", addr, {40, 100, 7, 200},
                       {60, 0, 300, 150});
    c.kv_start_pos = {10, 500, 0, 3};
    c.q_start_pos = {10 + 60, 400, 280, 3 + 150};
    c.window_left = 50;
    c.seed = seed++;
    cases.push_back(c);
    c.name = std::string(addressing_name(addr)) + "_positions_nowindow_sinks";
    c.window_left = -1;
    c.sinks = true;
    c.seed = seed++;
    cases.push_back(c);
  }
  // Empty requests (q_len 0; kv_len 0 under explicit positions), window 0, a non-causal window.
  for (KvAddressing addr : {KvAddressing::ragged, KvAddressing::token_indices, KvAddressing::block_table}) {
    Case c;
    c.name = std::string(addressing_name(addr)) + "_empty_requests_window0";
    c.addressing = addr;
    c.q_lens = {5, 0, 9, 130};
    c.kv_lens = {0, 4, 20, 140};
    c.q_start_pos = {0, 4, 11, 10};
    c.kv_start_pos = {0, 0, 0, 0};
    c.window_left = 0;
    c.seed = seed++;
    cases.push_back(c);
    c.name = std::string(addressing_name(addr)) + "_noncausal_window";
    c.causal = false;
    c.window_left = 20;
    c.seed = seed++;
    cases.push_back(c);
  }
  // GQA 1 / 3 / 4 / 8 / 16 x head_dim 64 / 128 / 256 x bf16 / fp16 (the Hopper kernel packs 128 / group tokens
  // x group heads per CTA: 3 leaves 2 idle rows, 16 gives 8 tokens).
  for (DType t : {DType::bf16, DType::fp16})
    for (int d : {64, 128, 256})
      for (int g : {1, 3, 4, 8, 16}) {
        Case c = base_case(std::string(dtype_name(t)) + "_d" + std::to_string(d) + "_g" + std::to_string(g),
                           g == 4 ? KvAddressing::block_table : KvAddressing::token_indices, {129, 1, 64, 250},
                           {0, 70, 3, 190});
        c.dtype = t;
        c.head_dim = d;
        c.hkv = 2;
        c.hq = 2 * g;
        c.page_size = 32;
        c.seed = seed++;
        cases.push_back(c);
      }
  // q_len_per_req (no qo_indptr), without lse.
  {
    Case c = base_case("q_len_per_req_nolse", KvAddressing::block_table, {7, 7, 7}, {0, 100, 33});
    c.use_qo_indptr = false;
    c.lse = false;
    c.page_size = 64;
    c.seed = seed++;
    cases.push_back(c);
  }
  // fp32 storage (the generic kernel).
  {
    Case c = base_case("fp32_generic", KvAddressing::token_indices, {33, 1, 90}, {5, 40, 0});
    c.dtype = DType::fp32;
    c.sinks = true;
    c.seed = seed++;
    cases.push_back(c);
  }
  return cases;
}

// gtest prints a parameter when it lists a test (e.g. skipped without a GPU): print its name, not its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class PrefillAttentionCases : public ::testing::TestWithParam<Case> {};

TEST_P(PrefillAttentionCases, MatchesCpuTwin) {
  SKIP_WITHOUT_GPU();
  run_case(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Prefill, PrefillAttentionCases, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// fp8 KV pool (and fp8 q, as trtllm_mha's fmha_v2 extend takes it) against the CPU twin, with per-tensor scales.
// The FA2-class launch runs its tensor-core kernel on all of them (the stored bytes dequantized in shared
// memory): every addressing mode (ragged k / v stay in the model dtype and ignore the scales), head_dim 64 / 128
// / 256, bf16 / fp16, GQA 1 / 4 / 8, causal / window / sinks / softcap / non-causal, e4m3 and e5m2, q in the
// model dtype or in fp8. Only an fp8 q over ragged (16-bit) k / v takes the generic kernel.
TEST(PrefillAttention, Fp8KvAgainstCpuTwin) {
  SKIP_WITHOUT_GPU();
  std::uint64_t seed = 300;
  for (DType kv : {DType::fp8_e4m3, DType::fp8_e5m2})
    for (KvAddressing addr : {KvAddressing::token_indices, KvAddressing::block_table})
      for (bool q8 : {false, true}) {
        Case c = base_case(std::string("fp8_") + std::string(dtype_name(kv)) + "_" + addressing_name(addr) +
                               (q8 ? "_q8" : ""),
                           addr, {300, 1, 129}, {0, 700, 64});
        c.kv_fp8 = kv;
        c.k_scale = 0.75f;
        c.v_scale = 1.25f;
        c.q_fp8 = q8;
        c.page_size = 64;
        c.window_left = q8 ? 200 : -1;
        c.seed = ++seed;
        run_case(c, true);
      }
  {
    Case c = base_case("fp8_q8_ragged_generic", KvAddressing::ragged, {300, 1, 129}, {0, 700, 64});
    c.kv_fp8 = DType::fp8_e4m3;
    c.q_fp8 = true;
    c.k_scale = 0.75f;  // not applied: ragged k / v are not the pool
    c.seed = ++seed;
    run_case(c, false);
  }
  int variant = 0;
  for (DType kv : {DType::fp8_e4m3, DType::fp8_e5m2})
    for (DType t : {DType::bf16, DType::fp16})
      for (KvAddressing addr : {KvAddressing::ragged, KvAddressing::token_indices, KvAddressing::block_table})
        for (int d : {64, 128, 256}) {
          // Four mask / GQA variants, rotated so that each (addressing, head_dim) meets all four.
          const int v = variant++ % 4;
          const int g = v == 0 ? 1 : (v == 2 ? 8 : 4);
          // fp8 q (over the pool) for e4m3 with fp16 and e5m2 with bf16
          const bool q8 = addr != KvAddressing::ragged && (kv == DType::fp8_e4m3) == (t == DType::fp16);
          Case c = base_case(std::string("fp8_") + std::string(dtype_name(kv)) + "_" + std::string(dtype_name(t)) +
                                 (q8 ? "_q8" : "") + "_" + addressing_name(addr) + "_d" + std::to_string(d) + "_g" +
                                 std::to_string(g) +
                                 (v == 1 ? "_window_sinks" : v == 2 ? "_softcap_sinks" : v == 3 ? "_noncausal_window" : ""),
                             addr, {300, 1, 129}, {0, 700, 64});
          c.dtype = t;
          c.head_dim = d;
          c.hkv = 2;
          c.hq = 2 * g;
          c.kv_fp8 = kv;
          c.q_fp8 = q8;
          c.k_scale = 0.75f;
          c.v_scale = 1.25f;
          c.page_size = d == 64 ? 16 : 64;
          if (v == 1) {
            c.window_left = 100;
            c.sinks = true;
          } else if (v == 2) {
            c.softcap = 30.0f;
            c.sinks = true;
          } else if (v == 3) {
            c.causal = false;
            c.window_left = 37;
          }
          c.seed = ++seed;
          run_case(c, true);
        }
}

// A long fp8 extend on the tensor-core kernel: many KV tiles through the ring (both stages reused many times),
// a prefix that is not a multiple of the tile, and q tiles of 128 rows against a causal diagonal.
TEST(PrefillAttention, Fp8LongExtendTensorCores) {
  SKIP_WITHOUT_GPU();
  std::uint64_t seed = 400;
  for (KvAddressing addr : {KvAddressing::token_indices, KvAddressing::block_table})
    for (DType kv : {DType::fp8_e4m3, DType::fp8_e5m2}) {
      Case c = base_case(std::string("fp8_long_") + std::string(dtype_name(kv)) + "_" + addressing_name(addr), addr,
                         {512, 77}, {1900, 3000});
      c.hq = 4;
      c.hkv = 1;
      c.kv_fp8 = kv;
      c.k_scale = 1.5f;
      c.v_scale = 0.5f;
      c.q_fp8 = addr == KvAddressing::block_table;  // as trtllm_mha's extend
      c.page_size = 64;
      c.seed = ++seed;
      run_case(c, true);
    }
}

// The tensor-core kernel's fp8 -> 16-bit conversion is exact: all 256 codes of e4m3 and e5m2, to bf16 and fp16,
// against the host's conversion (core/dtype.hpp, which the CPU twin reads fp8 with). NaN codes stay NaN.
TEST(PrefillAttention, Fp8DequantExact) {
  SKIP_WITHOUT_GPU();
  std::vector<std::uint8_t> codes(256);
  std::iota(codes.begin(), codes.end(), 0);
  const DevBuf in = DevBuf::from(codes);
  const DevBuf out(256 * sizeof(std::uint16_t));
  for (DType kv : {DType::fp8_e4m3, DType::fp8_e5m2})
    for (DType t : {DType::bf16, DType::fp16}) {
      SCOPED_TRACE(std::string(dtype_name(kv)) + " -> " + std::string(dtype_name(t)));
      cuda_ok(cudaMemset(out.get(), 0xA5, 256 * sizeof(std::uint16_t)), "poison");
      launch_fp8_dequant_probe(in.get(), out.get(), 256, kv, t, nullptr);
      cuda_ok(cudaDeviceSynchronize(), "fp8 dequant probe");
      const std::vector<std::uint16_t> got = out.download<std::uint16_t>();
      int nan_codes = 0;
      for (int c = 0; c < 256; ++c) {
        const float ref = load_as_float(codes.data(), c, kv);
        const float g = load_as_float(got.data(), c, t);
        if (std::isnan(ref)) {
          ++nan_codes;
          EXPECT_TRUE(std::isnan(g)) << "code " << c;
          continue;
        }
        std::uint16_t want = 0;
        store_from_float(&want, 0, t, ref);
        EXPECT_EQ(got[static_cast<std::size_t>(c)], want) << "code " << c << " (" << ref << ")";
        EXPECT_EQ(g, ref) << "code " << c;  // exact, not just equal after rounding
      }
      EXPECT_EQ(nan_codes, kv == DType::fp8_e4m3 ? 2 : 6);
    }
}

TEST(PrefillAttention, LargeCausalFourRequests) {
  SKIP_WITHOUT_GPU();
  for (KvAddressing addr : {KvAddressing::ragged, KvAddressing::block_table}) {
    Case c = base_case(std::string("large_4x4096_") + addressing_name(addr), addr, {4096, 4096, 4096, 4096},
                       {0, 0, 0, 0});
    c.hq = 8;
    c.hkv = 2;
    c.page_size = 64;
    c.seed = 7;
    run_case(c);
  }
}

TEST(PrefillAttention, LargeWithPrefix) {
  SKIP_WITHOUT_GPU();
  Case c = base_case("large_prefix_tokens", KvAddressing::token_indices, {2048, 1000}, {3000, 1});
  c.hq = 4;
  c.hkv = 1;
  c.seed = 8;
  run_case(c);
}

// Many more work items than SMs (several waves of CTAs): requests of unequal lengths (the short ones' late
// q_tiles are empty items the kernel must skip), prefixes, GQA 4 (32 tokens per item); by block table (TMA tiles,
// page 64) and by token indices with a window and sinks (16-byte copies). Written for the persistent grids that
// walked several items per CTA (results/h200/hopper/persistent/), kept for the mixed lengths.
TEST(PrefillAttention, ManyItemsMixedRequests) {
  SKIP_WITHOUT_GPU();
  for (KvAddressing addr : {KvAddressing::block_table, KvAddressing::token_indices}) {
    Case c = base_case(std::string("many_items_") + addressing_name(addr), addr, {2500, 17, 1200, 2300},
                       {0, 400, 1000, 5});
    c.hq = 8;
    c.hkv = 2;
    c.page_size = 64;
    if (addr == KvAddressing::token_indices) {
      c.window_left = 300;
      c.sinks = true;
    }
    c.seed = 9;
    run_case(c);
  }
}

TEST(PrefillAttention, GraphReplayEqualsEager) {
  SKIP_WITHOUT_GPU();
  Case c = base_case("graph", KvAddressing::block_table, {300, 129, 1}, {64, 0, 500});
  c.page_size = 64;
  const Inputs in = make_inputs(c);
  const DeviceInputs d = upload(c, in);
  const AttentionParams p = make_params(c, in, d.ptrs());
  cudaStream_t stream;
  cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
  for (PrefillKernel k : kernels_under_test()) {
    SCOPED_TRACE(kernel_name(k));
    poison(d, c, in);
    launch_attention_prefill_with(p, stream, k);
    cuda_ok(cudaStreamSynchronize(stream), "eager");
    const auto o_eager = d.o.download<unsigned char>();
    const auto lse_eager = d.lse.download<float>();
    poison(d, c, in);
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cuda_ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "begin capture");
    launch_attention_prefill_with(p, stream, k);
    cuda_ok(cudaStreamEndCapture(stream, &graph), "end capture");
    cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
    cuda_ok(cudaGraphLaunch(exec, stream), "replay");
    cuda_ok(cudaStreamSynchronize(stream), "replay sync");
    EXPECT_EQ(d.o.download<unsigned char>(), o_eager);
    const auto lse_graph = d.lse.download<float>();
    EXPECT_EQ(0, std::memcmp(lse_graph.data(), lse_eager.data(), lse_eager.size() * sizeof(float)));
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  cudaStreamDestroy(stream);
}

// On an sm_90 GPU the Hopper kernel takes every bf16 / fp16 shape with head_dim 64 / 128 / 256 (so the cases
// above really ran it), and leaves fp32 and fp8 KV to the FA2-class kernel.
TEST(PrefillAttention, HopperKernelTakesItsShapes) {
  SKIP_WITHOUT_GPU();
  if (!prefill_hopper_usable()) GTEST_SKIP() << "no sm_90 GPU (or no sm_90a code in this build)";
  for (DType t : {DType::bf16, DType::fp16})
    for (int d : {64, 128, 256}) {
      Case c = base_case("hopper_takes", KvAddressing::block_table, {300, 5}, {10, 70});
      c.dtype = t;
      c.head_dim = d;
      c.page_size = 32;
      const Inputs in = make_inputs(c);
      const DeviceInputs dev = upload(c, in);
      EXPECT_TRUE(launch_attention_prefill_hopper(make_params(c, in, dev.ptrs()), nullptr))
          << dtype_name(t) << " head_dim " << d;
      cuda_ok(cudaDeviceSynchronize(), "hopper kernel");
    }
  Case c = base_case("hopper_declines_fp32", KvAddressing::token_indices, {33}, {5});
  c.dtype = DType::fp32;
  Inputs in = make_inputs(c);
  DeviceInputs dev = upload(c, in);
  EXPECT_FALSE(launch_attention_prefill_hopper(make_params(c, in, dev.ptrs()), nullptr));
  c = base_case("hopper_declines_fp8", KvAddressing::token_indices, {33}, {5});
  c.kv_fp8 = DType::fp8_e4m3;
  in = make_inputs(c);
  dev = upload(c, in);
  EXPECT_FALSE(launch_attention_prefill_hopper(make_params(c, in, dev.ptrs()), nullptr));
}

// Variant 3 (the default) loads full K / V tiles by TMA where the slots of a box are contiguous: a ragged tile
// whole, a block table's page of >= 16 slots; token indices and smaller pages keep the 16-byte copies. The
// MatchesCpuTwin cases then cover both paths (tiles below kv_len by TMA, the tile crossing it by cp.async).
TEST(PrefillAttention, HopperTmaBoxesFollowTheAddressing) {
  SKIP_WITHOUT_GPU();
  if (!prefill_hopper_usable()) GTEST_SKIP() << "no sm_90 GPU (or no sm_90a code in this build)";
  const char* v = std::getenv("ATTNBENCH_HOPPER_VARIANT");
  const bool tma = v == nullptr || std::string(v).empty() || std::string(v) == "3";
  struct Want {
    KvAddressing addr;
    int page_size, head_dim, rows;
  };
  for (const Want& w : {Want{KvAddressing::ragged, 1, 128, 128}, Want{KvAddressing::ragged, 1, 256, 64},
                        Want{KvAddressing::ragged, 1, 64, 128}, Want{KvAddressing::block_table, 64, 128, 64},
                        Want{KvAddressing::block_table, 16, 128, 16}, Want{KvAddressing::block_table, 128, 256, 64},
                        Want{KvAddressing::block_table, 256, 128, 128}, Want{KvAddressing::block_table, 8, 128, 0},
                        Want{KvAddressing::token_indices, 1, 128, 0}}) {
    Case c = base_case("tma_rows", w.addr, {40}, {30});
    c.head_dim = w.head_dim;
    c.page_size = w.page_size;
    const Inputs in = make_inputs(c);
    const DeviceInputs dev = upload(c, in);
    EXPECT_EQ(prefill_hopper_tma_box_rows(make_params(c, in, dev.ptrs())), tma ? w.rows : 0)
        << addressing_name(w.addr) << " page " << w.page_size << " head_dim " << w.head_dim;
  }
}

// Variant 3 also loads Q and stores O by TMA where a consumer warpgroup's 64 rows are whole tokens (the query heads
// per KV head divide 64), for every addressing mode; GQA 3 / 5 / 6 / 12 keep the 16-byte copies. The GQA cases of
// MatchesCpuTwin (1 / 3 / 4 / 8 / 16, requests of 1-250 tokens side by side) then cover both paths, and the TMA
// store's rule that a warpgroup with a row past its request stores by 16-byte copies (else it would write another
// request's rows).
TEST(PrefillAttention, HopperQAndOByTmaWhereGroupDividesTheRows) {
  SKIP_WITHOUT_GPU();
  if (!prefill_hopper_usable()) GTEST_SKIP() << "no sm_90 GPU (or no sm_90a code in this build)";
  const char* v = std::getenv("ATTNBENCH_HOPPER_VARIANT");
  const bool tma = v == nullptr || std::string(v).empty() || std::string(v) == "3";
  for (KvAddressing addr : {KvAddressing::ragged, KvAddressing::block_table, KvAddressing::token_indices})
    for (int g : {1, 2, 3, 4, 5, 6, 8, 12, 16, 32, 64}) {
      Case c = base_case("q_tma", addr, {40, 7}, {30, 0});
      c.hkv = 2;
      c.hq = 2 * g;
      c.page_size = 16;
      const Inputs in = make_inputs(c);
      const DeviceInputs dev = upload(c, in);
      EXPECT_EQ(prefill_hopper_q_by_tma(make_params(c, in, dev.ptrs())), tma && 64 % g == 0)
          << addressing_name(addr) << " group " << g;
    }
}

TEST(PrefillAttention, UnsupportedHeadDimThrows) {
  SKIP_WITHOUT_GPU();
  AttentionParams p;
  p.batch_size = 1;
  p.total_q = 1;
  p.max_q_len = 1;
  p.num_qo_heads = 8;
  p.num_kv_heads = 2;
  p.head_dim = 512;
  EXPECT_ANY_THROW(launch_attention_prefill(p, nullptr));
}

// Timing print (never asserted): causal prefill, bf16 (and a bf16 model over an fp8 pool), by default
// Llama-3.1-8B's attention (32 query / 8 KV heads, head_dim 128), B=1 S=4k/8k/16k, B=16 S=1k and B=4 S=4k, each
// without a prefix and with a cached prefix of S tokens (kv_len = 2S). PerfHeads names other shapes: Gemma-3-12B
// (16 / 8 heads, head_dim 256; its local layers' window 1024) and a head_dim 64 model (32 / 8).
// FLOPs = 4 * Hq * D * (visible q-k pairs). Each row up to 4k tokens also gives the max abs difference from
// the slow generic (one-warp-per-row) kernel on the same inputs. kv_fp8: the pool in that fp8 format (the
// FA2-class kernel only; the Hopper kernel does not take it).
struct PerfHeads {
  const char* label = "";
  int hq = 32, hkv = 8, head_dim = 128, window_left = -1;
};

void print_tflops(KvAddressing addr, int page_size, DType kv_fp8 = DType::bf16, PerfHeads heads = {}) {
  struct Shape {
    int batch, seq;
  };
  const Shape shapes[] = {{1, 4096}, {1, 8192}, {1, 16384}, {16, 1024}, {4, 4096}};
  cudaStream_t stream;
  cuda_ok(cudaStreamCreate(&stream), "cudaStreamCreate");
  cudaEvent_t e0, e1;
  cuda_ok(cudaEventCreate(&e0), "event");
  cuda_ok(cudaEventCreate(&e1), "event");
  std::printf("%-6s %-13s %-4s %-6s %-7s %9s %9s %18s\n", "kernel", "addressing", "B", "S", "prefix", "ms",
              "TFLOP/s", "max_abs_vs_generic");
  std::vector<PrefillKernel> kernels =
      is_fp8(kv_fp8) ? std::vector<PrefillKernel>{PrefillKernel::fa2} : kernels_under_test();
  // ATTNBENCH_PERF_KERNEL=fa2|hopper: only that kernel's rows (an A/B of one kernel takes half the time).
  if (const char* only = std::getenv("ATTNBENCH_PERF_KERNEL"); only && *only)
    std::erase_if(kernels, [only](PrefillKernel k) { return std::string(kernel_name(k)) != only; });
  for (PrefillKernel kern : kernels)
  for (const Shape& s : shapes)
    for (int with_prefix = 0; with_prefix < 2; ++with_prefix) {
      const int prefix = with_prefix ? s.seq : 0;
      Case c = base_case("perf", addr, std::vector<int>(s.batch, s.seq), std::vector<int>(s.batch, prefix));
      c.hq = heads.hq;
      c.hkv = heads.hkv;
      c.head_dim = heads.head_dim;
      c.window_left = heads.window_left;
      c.page_size = page_size;
      c.lse = false;
      c.kv_fp8 = kv_fp8;
      c.seed = 11;
      const Inputs in = make_inputs(c);
      DeviceInputs d = upload(c, in);
      const AttentionParams p = make_params(c, in, d.ptrs());
      double pairs = 0;
      for (int i = 0; i < s.batch; ++i)
        for (int t = 0; t < s.seq; ++t) {  // query t sees keys 0 .. prefix + t, the last window_left + 1 of them
          const double seen = prefix + t + 1.0;
          pairs += heads.window_left >= 0 ? std::min(seen, heads.window_left + 1.0) : seen;
        }
      const double flops = 4.0 * c.hq * c.head_dim * pairs;
      for (int w = 0; w < 2; ++w) launch_attention_prefill_with(p, stream, kern);
      std::vector<float> ms;
      for (int r = 0; r < 10; ++r) {
        cuda_ok(cudaEventRecord(e0, stream), "record");
        launch_attention_prefill_with(p, stream, kern);
        cuda_ok(cudaEventRecord(e1, stream), "record");
        cuda_ok(cudaEventSynchronize(e1), "prefill kernel");
        float t = 0;
        cuda_ok(cudaEventElapsedTime(&t, e0, e1), "elapsed");
        ms.push_back(t);
      }
      std::sort(ms.begin(), ms.end());
      const double med = ms[ms.size() / 2];
      double max_abs = std::numeric_limits<double>::quiet_NaN();
      if (s.seq <= 4096) {
        const auto o_fast = d.o.download<unsigned char>();
        poison(d, c, in);
        launch_attention_prefill_generic(p, stream);
        cuda_ok(cudaStreamSynchronize(stream), "generic kernel");
        const auto o_generic = d.o.download<unsigned char>();
        max_abs = 0;
        for (std::size_t i = 0; i < o_fast.size() / 2; ++i) {
          const double diff = std::fabs(static_cast<double>(load_as_float(o_fast.data(), i, c.dtype)) -
                                        load_as_float(o_generic.data(), i, c.dtype));
          max_abs = std::isnan(diff) ? std::numeric_limits<double>::infinity() : std::max(max_abs, diff);
        }
      }
      const std::string an = std::string(addressing_name(addr)) +
                             (addr == KvAddressing::block_table ? std::to_string(page_size) : "") +
                             (is_fp8(kv_fp8) ? (kv_fp8 == DType::fp8_e4m3 ? "/e4m3" : "/e5m2") : "") +
                             heads.label;
      std::printf("%-6s %-13s %-4d %-6d %-7d %9.3f %9.1f %18.3g\n", kernel_name(kern), an.c_str(), s.batch, s.seq,
                  prefix, med, flops / (med * 1e-3) / 1e12, max_abs);
    }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaStreamDestroy(stream);
}

TEST(PrefillAttentionPerf, Ragged) {
  SKIP_WITHOUT_GPU();
  print_tflops(KvAddressing::ragged, 1);
}

TEST(PrefillAttentionPerf, TokenIndices) {
  SKIP_WITHOUT_GPU();
  print_tflops(KvAddressing::token_indices, 1);
}

TEST(PrefillAttentionPerf, BlockTablePage16) {
  SKIP_WITHOUT_GPU();
  print_tflops(KvAddressing::block_table, 16);
}

TEST(PrefillAttentionPerf, BlockTablePage64) {
  SKIP_WITHOUT_GPU();
  print_tflops(KvAddressing::block_table, 64);
}

TEST(PrefillAttentionPerf, BlockTablePage64Fp8E4m3) {
  SKIP_WITHOUT_GPU();
  print_tflops(KvAddressing::block_table, 64, DType::fp8_e4m3);
}

TEST(PrefillAttentionPerf, BlockTablePage64Gemma3) {
  SKIP_WITHOUT_GPU();
  print_tflops(KvAddressing::block_table, 64, DType::bf16, {"/g3", 16, 8, 256, -1});
  print_tflops(KvAddressing::block_table, 64, DType::bf16, {"/g3w", 16, 8, 256, 1023});
}

TEST(PrefillAttentionPerf, BlockTablePage64HeadDim64) {
  SKIP_WITHOUT_GPU();
  print_tflops(KvAddressing::block_table, 64, DType::bf16, {"/d64", 32, 8, 64, -1});
}

}  // namespace
}  // namespace attnbench
