// Attention on the CPU: one generic paged/ragged flash-attention over AttentionParams, used for both the
// decode entry (few query rows per request) and the prefill entry (many). fp32 accumulation with an
// online softmax over key chunks; OpenMP over (request, kv head, query block); deterministic (the order
// of every reduction is fixed), so the same inputs give bit-identical outputs.
// Semantics (positions, causal, window, sinks, lse): kernels/params.hpp.
// Checked against the Eigen reference by tests/kernels/attention_cpu_test.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/kernels_cpu.hpp"

namespace attnbench {

namespace {

constexpr int kKeyChunk = 128;   // keys converted to fp32 at a time
constexpr int kQueryBlock = 32;  // query rows per task

struct RequestView {
  int q_begin, q_len, kv_len, q_pos0, kv_pos0;
};

RequestView request_view(const AttentionParams& p, int i) {
  RequestView r{};
  if (p.qo_indptr) {
    r.q_begin = p.qo_indptr[i];
    r.q_len = p.qo_indptr[i + 1] - p.qo_indptr[i];
  } else {
    r.q_begin = i * p.q_len_per_req;
    r.q_len = p.q_len_per_req;
  }
  r.kv_len = p.addressing == KvAddressing::block_table ? p.kv_lens[i] : p.kv_indptr[i + 1] - p.kv_indptr[i];
  r.q_pos0 = p.q_start_pos ? p.q_start_pos[i] : r.kv_len - r.q_len;
  r.kv_pos0 = p.kv_start_pos ? p.kv_start_pos[i] : 0;
  return r;
}

// Row index (in units of [num_kv_heads, head_dim] rows) of key m of request i in p.k / p.v.
inline std::int64_t kv_row(const AttentionParams& p, int i, int m) {
  switch (p.addressing) {
    case KvAddressing::ragged:
      return p.kv_indptr[i] + m;
    case KvAddressing::token_indices:
      return p.kv_indices[p.kv_indptr[i] + m];
    case KvAddressing::block_table: {
      const std::int64_t page = p.page_table[static_cast<std::int64_t>(i) * p.page_table_stride + m / p.page_size];
      return page * p.page_size + m % p.page_size;
    }
  }
  return 0;
}

// q . k with eight partial sums in a fixed order: vectorisable without reassociation, so deterministic.
inline float dot(const float* __restrict a, const float* __restrict b, int n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int d = 0;
  for (; d + 8 <= n; d += 8)
    for (int l = 0; l < 8; ++l) acc[l] += a[d + l] * b[d + l];
  for (; d < n; ++d) acc[0] += a[d] * b[d];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// Converts n elements of dtype t starting at element `base` to float (one switch per row, not per element).
inline void load_row(const void* src, std::int64_t base, DType t, int n, float* dst) {
  switch (t) {
    case DType::bf16: {
      const auto* s = static_cast<const std::uint16_t*>(src) + base;
      for (int i = 0; i < n; ++i) dst[i] = bf16_to_float(s[i]);
      break;
    }
    case DType::fp16: {
      const auto* s = static_cast<const std::uint16_t*>(src) + base;
      for (int i = 0; i < n; ++i) dst[i] = fp16_to_float(s[i]);
      break;
    }
    case DType::fp8_e4m3: {
      const auto* s = static_cast<const std::uint8_t*>(src) + base;
      for (int i = 0; i < n; ++i) dst[i] = fp8_e4m3_to_float(s[i]);
      break;
    }
    case DType::fp8_e5m2: {
      const auto* s = static_cast<const std::uint8_t*>(src) + base;
      for (int i = 0; i < n; ++i) dst[i] = fp8_e5m2_to_float(s[i]);
      break;
    }
    default: {
      const auto* s = static_cast<const float*>(src) + base;
      for (int i = 0; i < n; ++i) dst[i] = s[i];
    }
  }
}

// Visible key range [lo, hi) of a query at absolute position qpos.
inline void visible(const AttentionParams& p, const RequestView& r, int qpos, int& lo, int& hi) {
  lo = 0;
  hi = r.kv_len;
  if (p.causal) hi = std::min(hi, qpos - r.kv_pos0 + 1);
  if (p.window_left >= 0) lo = std::max(lo, qpos - p.window_left - r.kv_pos0);
  hi = std::max(hi, lo);
}

// The decode kernel runs its MMAs in fp16 over an fp8 pool (kernels/cuda/decode_attention.cu, kMmaBf16), so a
// bf16 q passes through fp16 there: exact in [2^-14, 65504], rounded to nearest below (fp16 subnormals), inf
// from 65520 up. The twin does the same where AttentionParams::q_through_fp16 says so (the decode entry sets it);
// the prefill kernels keep bf16 q.
inline void q_through_fp16(float* q, int n) {
  for (int i = 0; i < n; ++i) q[i] = fp16_to_float(float_to_fp16(q[i]));
}

void attend(const AttentionParams& p) {
  const int D = p.head_dim;
  const int group = p.num_qo_heads / p.num_kv_heads;
  const std::int64_t kv_row_elems = static_cast<std::int64_t>(p.num_kv_heads) * D;
  const std::int64_t q_row_elems = static_cast<std::int64_t>(p.num_qo_heads) * D;
  const DType kv_t = kv_load_dtype(p), q_t = q_load_dtype(p);
  // fp8 pool: stored values are loaded as is; k_scale joins the logit scale and v_scale the output (as
  // FlashInfer's k_scale / v_scale and TRTLLM's bmm1 / bmm2 scales do).
  const float logit_scale = p.sm_scale * kv_k_scale(p);
  const bool q_fp16 = p.q_through_fp16 && q_t == DType::bf16;
  const float out_scale = kv_v_scale(p);

  // Tasks: (request, kv head, query block).
  struct Task {
    int req, kv_head, q0, q1;
  };
  std::vector<Task> tasks;
  std::vector<RequestView> views(static_cast<std::size_t>(p.batch_size));
  for (int i = 0; i < p.batch_size; ++i) {
    views[i] = request_view(p, i);
    for (int h = 0; h < p.num_kv_heads; ++h)
      for (int q0 = 0; q0 < views[i].q_len; q0 += kQueryBlock)
        tasks.push_back(Task{i, h, q0, std::min(views[i].q_len, q0 + kQueryBlock)});
  }

#pragma omp parallel
  {
    std::vector<float> kbuf(static_cast<std::size_t>(kKeyChunk) * D), vbuf(kbuf.size());
    std::vector<float> qf, acc, mrow, lrow, s(kKeyChunk);
#pragma omp for schedule(dynamic, 1)
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      const Task& task = tasks[t];
      const RequestView& r = views[task.req];
      const int nq = (task.q1 - task.q0) * group;  // (row, head-in-group) pairs
      qf.assign(static_cast<std::size_t>(nq) * D, 0.0f);
      acc.assign(static_cast<std::size_t>(nq) * D, 0.0f);
      mrow.assign(nq, -std::numeric_limits<float>::infinity());
      lrow.assign(nq, 0.0f);
      int block_lo = r.kv_len, block_hi = 0;
      for (int j = task.q0; j < task.q1; ++j) {
        int lo, hi;
        visible(p, r, r.q_pos0 + j, lo, hi);
        if (hi > lo) {
          block_lo = std::min(block_lo, lo);
          block_hi = std::max(block_hi, hi);
        }
        for (int g = 0; g < group; ++g) {
          const int qh = task.kv_head * group + g;
          const std::int64_t base = (r.q_begin + j) * q_row_elems + static_cast<std::int64_t>(qh) * D;
          float* qrow = &qf[static_cast<std::size_t>((j - task.q0) * group + g) * D];
          load_row(p.q, base, q_t, D, qrow);
          if (q_fp16) q_through_fp16(qrow, D);
        }
      }
      for (int c0 = block_lo; c0 < block_hi; c0 += kKeyChunk) {
        const int c1 = std::min(block_hi, c0 + kKeyChunk);
        for (int m = c0; m < c1; ++m) {
          const std::int64_t base = kv_row(p, task.req, m) * kv_row_elems + static_cast<std::int64_t>(task.kv_head) * D;
          load_row(p.k, base, kv_t, D, &kbuf[static_cast<std::size_t>(m - c0) * D]);
          load_row(p.v, base, kv_t, D, &vbuf[static_cast<std::size_t>(m - c0) * D]);
        }
        for (int j = task.q0; j < task.q1; ++j) {
          int lo, hi;
          visible(p, r, r.q_pos0 + j, lo, hi);
          lo = std::max(lo, c0);
          hi = std::min(hi, c1);
          if (hi <= lo) continue;
          for (int g = 0; g < group; ++g) {
            const int qi = (j - task.q0) * group + g;
            const float* qv = &qf[static_cast<std::size_t>(qi) * D];
            float cmax = -std::numeric_limits<float>::infinity();
            for (int m = lo; m < hi; ++m) {
              const float x0 = dot(qv, &kbuf[static_cast<std::size_t>(m - c0) * D], D);
              float x = x0 * logit_scale;
              if (p.logits_soft_cap > 0.0f) x = p.logits_soft_cap * std::tanh(x / p.logits_soft_cap);
              s[m - c0] = x;
              cmax = std::max(cmax, x);
            }
            const float mnew = std::max(mrow[qi], cmax);
            const float rescale = std::exp(mrow[qi] - mnew);  // exp(-inf) = 0 on the first chunk
            float* a = &acc[static_cast<std::size_t>(qi) * D];
            for (int d = 0; d < D; ++d) a[d] *= rescale;
            float lsum = lrow[qi] * rescale;
            for (int m = lo; m < hi; ++m) {
              const float w = std::exp(s[m - c0] - mnew);
              lsum += w;
              const float* vd = &vbuf[static_cast<std::size_t>(m - c0) * D];
              for (int d = 0; d < D; ++d) a[d] += w * vd[d];
            }
            mrow[qi] = mnew;
            lrow[qi] = lsum;
          }
        }
      }
      // Finalise: sinks join the denominator only; rows with no visible key give 0 and lse = -inf.
      for (int j = task.q0; j < task.q1; ++j) {
        for (int g = 0; g < group; ++g) {
          const int qi = (j - task.q0) * group + g;
          const int qh = task.kv_head * group + g;
          float m = mrow[qi], l = lrow[qi];
          float* a = &acc[static_cast<std::size_t>(qi) * D];
          if (p.sinks) {
            const float sink = p.sinks[qh];
            const float mnew = std::max(m, sink);
            const float rescale = std::exp(m - mnew);
            for (int d = 0; d < D; ++d) a[d] *= rescale;
            l = l * rescale + std::exp(sink - mnew);
            m = mnew;
          }
          const float inv = l > 0.0f ? out_scale / l : 0.0f;
          const std::int64_t row = static_cast<std::int64_t>(r.q_begin + j);
          const std::int64_t base = row * q_row_elems + static_cast<std::int64_t>(qh) * D;
          for (int d = 0; d < D; ++d) store_from_float(p.o, base + d, p.dtype, a[d] * inv);
          if (p.lse)
            p.lse[row * p.num_qo_heads + qh] = l > 0.0f ? m + std::log(l) : -std::numeric_limits<float>::infinity();
        }
      }
    }
  }
}

}  // namespace

// The decode entry rounds q where the CUDA decode kernel's fp16 MMAs do: a bf16 q over an fp8 pool.
void attention_decode_cpu(const AttentionParams& p, void*) {
  AttentionParams d = p;
  d.q_through_fp16 = is_fp8(kv_load_dtype(p)) && q_load_dtype(p) == DType::bf16;
  attend(d);
}
void attention_prefill_cpu(const AttentionParams& p, void*) { attend(p); }

void merge_state_cpu(const MergeStateParams& p, void*) {
  const std::int64_t n = static_cast<std::int64_t>(p.rows) * p.num_heads;
#pragma omp parallel for schedule(static) if (n > 1024)
  for (std::int64_t rh = 0; rh < n; ++rh) {
    const float l1 = p.lse1[rh], l2 = p.lse2[rh];
    const float m = std::max(l1, l2);
    float w1 = 0.0f, w2 = 0.0f;
    if (m != -std::numeric_limits<float>::infinity()) {
      w1 = std::exp(l1 - m);
      w2 = std::exp(l2 - m);
      const float inv = 1.0f / (w1 + w2);
      w1 *= inv;
      w2 *= inv;
    }
    const std::int64_t base = rh * p.head_dim;
    for (int d = 0; d < p.head_dim; ++d) {
      const float v = w1 * load_as_float(p.o1, base + d, p.dtype) + w2 * load_as_float(p.o2, base + d, p.dtype);
      store_from_float(p.o, base + d, p.dtype, v);
    }
  }
}

}  // namespace attnbench
