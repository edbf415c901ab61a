#include "runner/validation.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <omp.h>

#include "engine/random_fill.hpp"
#include "reference/attention_reference.hpp"

namespace attnbench {

Tolerance tolerance_for(DType t, DType kv) {
  (void)kv;  // fp8 KV: the output dtype's tolerance (validation.hpp says why)
  switch (t) {
    case DType::bf16:
      return {4 * 0.00390625, 4 * 0.00390625};  // 4 ulp of bf16 at 1.0 (2^-8)
    case DType::fp16:
      return {4 * 0.0009765625, 4 * 0.0009765625};  // 4 ulp of fp16 at 1.0 (2^-10)
    case DType::fp32:
      return {1e-4, 1e-4};
    default:  // fp8 is a KV-cache dtype, never an output dtype
      break;
  }
  return {0, 0};
}

void ErrorStats::add(double got, double ref, const Tolerance& tol) {
  ++elements;
  if (std::isnan(got) || std::isinf(got)) {
    ++nans;
    ++mismatches;
    return;
  }
  const double e = std::abs(got - ref);
  max_abs = std::max(max_abs, e);
  sum_sq_err += e * e;
  sum_sq_ref += ref * ref;
  if (e > tol.atol + tol.rtol * std::abs(ref)) ++mismatches;
}

void ErrorStats::merge(const ErrorStats& o) {
  max_abs = std::max(max_abs, o.max_abs);
  sum_sq_err += o.sum_sq_err;
  sum_sq_ref += o.sum_sq_ref;
  elements += o.elements;
  mismatches += o.mismatches;
  nans += o.nans;
}

double ErrorStats::rel_l2() const {
  if (nans > 0) return std::numeric_limits<double>::infinity();
  return sum_sq_ref > 0 ? std::sqrt(sum_sq_err / sum_sq_ref) : std::sqrt(sum_sq_err);
}

double ErrorStats::mismatch_frac() const { return elements > 0 ? static_cast<double>(mismatches) / elements : 0.0; }

std::vector<int> validated_layers(int num_layers) {
  if (num_layers <= 2) {
    std::vector<int> v;
    for (int l = 0; l < num_layers; ++l) v.push_back(l);
    return v;
  }
  return {0, num_layers - 1};
}

ReferenceLayer reference_layer(const Case& c, const HostBatch& h, int layer, double flop_budget,
                               const Fp8ReadView& view, bool logit_cap) {
  const ModelConfig& m = c.model;
  const int Hq = m.num_qo_heads(), Hkv = m.num_kv_heads(), D = m.head_dim, group = Hq / Hkv;
  const int window = m.layer_sliding_window_size(layer);
  const WorkloadSeeds seeds = workload_seeds(c.seed);
  const std::uint64_t kseed = TokenToKVPool::fill_seed(seeds.pool, false, layer);
  const std::uint64_t vseed = TokenToKVPool::fill_seed(seeds.pool, true, layer);
  const DType kv_t = m.kv_dtype();
  const bool fp8 = is_fp8(kv_t);
  const double ks = fp8 ? m.k_scale : 1.0, vs = fp8 ? m.v_scale : 1.0;

  // Work of the full reference: sum over requests of q_len * kv_len * Hq * D * 4.
  double flops = 0;
  for (int i = 0; i < c.batch; ++i) flops += 4.0 * c.new_lens[i] * (c.prefix_lens[i] + c.new_lens[i]) * Hq * D;
  constexpr int kHeadRows = 16, kTailRows = 48;
  ReferenceLayer ref;
  ref.layer = layer;
  ref.sampled = flops > flop_budget;
  struct Range {
    int req, r0, r1;  // request-local rows [r0, r1)
  };
  std::vector<Range> ranges;
  double sampled_flops = 0;
  for (int i = 0; i < c.batch; ++i) {
    const int n = c.new_lens[i];
    const int rows = (!ref.sampled || n <= kHeadRows + kTailRows) ? n : kHeadRows + kTailRows;
    sampled_flops += 4.0 * rows * (c.prefix_lens[i] + n) * Hq * D;
  }
  // Still over budget (large decode batches): every step-th request, the first and the last always.
  const int step = sampled_flops > flop_budget ? static_cast<int>(std::ceil(sampled_flops / flop_budget)) : 1;
  for (int i = 0; i < c.batch; ++i) {
    if (step > 1 && i % step != 0 && i != c.batch - 1) continue;
    const int n = c.new_lens[i];
    if (!ref.sampled || n <= kHeadRows + kTailRows) {
      ranges.push_back({i, 0, n});
    } else {
      ranges.push_back({i, 0, kHeadRows});
      ranges.push_back({i, n - kTailRows, n});
    }
  }
  ref.requests_checked = static_cast<int>(std::count_if(ranges.begin(), ranges.end(), [](const Range& r) { return r.r0 == 0; }));
  std::vector<std::size_t> out_offset(ranges.size());
  std::size_t total_rows = 0;
  for (std::size_t r = 0; r < ranges.size(); ++r) {
    out_offset[r] = total_rows;
    for (int j = ranges[r].r0; j < ranges[r].r1; ++j) ref.rows.push_back(h.q_offset[ranges[r].req] + j);
    total_rows += ranges[r].r1 - ranges[r].r0;
  }
  ref.o.assign(total_rows * Hq * D, 0.0);
  std::vector<double> sinks;
  if (c.sinks)
    for (int hh = 0; hh < Hq; ++hh) sinks.push_back(seeded_element(seeds.sinks, hh, DType::fp32, -1.0f, 3.0f));

  // Grouped by request: the K/V of a request are generated once per layer (not once per row range) into a
  // head-major [Hkv][kv_len][D] float64 buffer shared by every range and query head of the request, then the
  // reference runs per (range, query head) on one head's contiguous K/V (Eigen single-threaded inside each item;
  // an Eigen-parallel product inside small ranges was 2.5x slower). Every value is the one the per-range code
  // generated: the same seeds, indices and conversions, so the reference stays independent of the GPU kernels.
  std::vector<int> reqs;                   // kept requests, in order
  std::vector<std::vector<int>> req_ranges;  // per kept request: indices into `ranges`
  for (std::size_t r = 0; r < ranges.size(); ++r) {
    if (reqs.empty() || reqs.back() != ranges[r].req) {
      reqs.push_back(ranges[r].req);
      req_ranges.emplace_back();
    }
    req_ranges.back().push_back(static_cast<int>(r));
  }
  std::size_t max_kv = 0;
  for (int i : reqs) max_kv = std::max<std::size_t>(max_kv, static_cast<std::size_t>(c.prefix_lens[i]) + c.new_lens[i]);
  const std::size_t head_elems = max_kv * D;  // one head's [kv_len, D] slot in the buffers
  // The calling thread's buffers, kept from call to call (two layers per case, every case of a sweep) and grown
  // when a request needs more: a fresh pair of buffers per call cost page faults on every touch. Uninitialised
  // when grown: the threads that generate the values touch the pages first.
  struct Scratch {
    std::unique_ptr<double[]> k, v;
    std::size_t n = 0;
  };
  thread_local Scratch scratch;
  if (scratch.n < head_elems * Hkv) {
    scratch.k.reset();
    scratch.v.reset();
    scratch.k.reset(new double[head_elems * Hkv]);
    scratch.v.reset(new double[head_elems * Hkv]);
    scratch.n = head_elems * Hkv;
  }
  double* const kbuf = scratch.k.get();
  double* const vbuf = scratch.v.get();
  constexpr int kTokenChunk = 512;  // generation work items: (kv head, token chunk)
  for (std::size_t q_i = 0; q_i < reqs.size(); ++q_i) {
    const int i = reqs[q_i];
    const int pre = c.prefix_lens[i], n = c.new_lens[i], kv_len = pre + n;
    // K/V by logical position: cached tokens from the pool's seeded fill at their slot, this step's tokens
    // from the seeded k/v inputs (what a correct KV write puts there).
    const int chunks = (kv_len + kTokenChunk - 1) / kTokenChunk;
#pragma omp parallel for schedule(dynamic, 1)
    for (int item = 0; item < Hkv * chunks; ++item) {
      const int kh = item / chunks, t0 = (item % chunks) * kTokenChunk, t1 = std::min(kv_len, t0 + kTokenChunk);
      double* kd = kbuf + kh * head_elems;
      double* vd = vbuf + kh * head_elems;
      for (int t = t0; t < t1; ++t) {
        for (int d = 0; d < D; ++d) {
          const int e = kh * D + d;  // element within the token's [Hkv, D] row
          const std::size_t dst = static_cast<std::size_t>(t) * D + d;
          if (t < pre) {
            const std::int64_t src = static_cast<std::int64_t>(h.slots[i][t]) * Hkv * D + e;
            // The pool's fill, in its storage dtype; fp8: stored * scale.
            kd[dst] = static_cast<double>(seeded_element(kseed, src, kv_t, -1.0f, 1.0f)) * ks;
            vd[dst] = static_cast<double>(seeded_element(vseed, src, kv_t, -1.0f, 1.0f)) * vs;
          } else {
            const std::int64_t src = static_cast<std::int64_t>(h.q_offset[i] + t - pre) * Hkv * D + e;
            const float kn = seeded_element(seeds.k_new, src, m.dtype, -kKvRange, kKvRange);
            const float vn = seeded_element(seeds.v_new, src, m.dtype, -kKvRange, kKvRange);
            if (fp8 && view.new_kv) {  // the KV write: stored = fp8(x / scale) (float division, as the kernels)
              kd[dst] = static_cast<double>(round_to_dtype(kn / m.k_scale, kv_t)) * ks;
              vd[dst] = static_cast<double>(round_to_dtype(vn / m.v_scale, kv_t)) * vs;
            } else {
              kd[dst] = kn;
              vd[dst] = vn;
            }
          }
        }
      }
    }
    const std::vector<int>& rr = req_ranges[q_i];
    const int items = static_cast<int>(rr.size()) * Hq;
#pragma omp parallel
    {
      std::vector<double> q, o;  // per thread, reused across items
#pragma omp for schedule(dynamic, 1)
      for (int item = 0; item < items; ++item) {
        // The request's last range first: the tail rows see the most keys (the largest items go out first).
        const std::size_t r = static_cast<std::size_t>(rr[rr.size() - 1 - static_cast<std::size_t>(item / Hq)]);
        const Range& rg = ranges[r];
        const int hq = item % Hq, kh = hq / group;
        const int rows = rg.r1 - rg.r0;
        q.resize(static_cast<std::size_t>(rows) * D);
        o.resize(q.size());
        for (int j = 0; j < rows; ++j)
          for (int d = 0; d < D; ++d) {
            const std::int64_t src = static_cast<std::int64_t>(h.q_offset[i] + rg.r0 + j) * Hq * D + hq * D + d;
            const float qe = seeded_element(seeds.q, src, m.dtype, -kQueryRange, kQueryRange);
            q[static_cast<std::size_t>(j) * D + d] = fp8 && view.q ? round_to_dtype(qe, kv_t) : qe;  // q_scale 1
          }
        ReferenceCase rc;
        rc.q_len = rows;
        rc.kv_len = kv_len;
        rc.num_qo_heads = 1;
        rc.num_kv_heads = 1;
        rc.head_dim = D;
        rc.q_start_pos = pre + rg.r0;
        rc.causal = true;
        rc.window_left = window;
        if (c.windows == LayerWindows::cached_only) rc.window_spares_from = pre;  // the step's new tokens
        // The layer's float scaling (Gemma-2/3: query_pre_attn_scalar**-0.5) and logit cap, as the workload sets
        // them, widened to double: the float32 values the kernels get.
        rc.sm_scale = static_cast<double>(m.sm_scale());
        rc.logits_soft_cap = logit_cap ? static_cast<double>(m.attn_logit_cap) : 0.0;
        if (!sinks.empty()) rc.sinks = {sinks[static_cast<std::size_t>(hq)]};
        const std::size_t kv_elems = static_cast<std::size_t>(kv_len) * D;
        reference_attention(rc, q, {kbuf + kh * head_elems, kv_elems}, {vbuf + kh * head_elems, kv_elems}, o,
                            {});
        for (int j = 0; j < rows; ++j)
          std::copy_n(o.data() + static_cast<std::size_t>(j) * D, D,
                      ref.o.data() + ((out_offset[r] + j) * Hq + hq) * D);
      }
    }
  }
  return ref;
}

ErrorStats compare_with_reference(const Case& c, const ReferenceLayer& ref, const void* output_host) {
  const int Hq = c.model.num_qo_heads(), D = c.model.head_dim;
  const Tolerance tol = tolerance_for(c.model.dtype, c.model.kv_dtype());
  ErrorStats s;
  for (std::size_t r = 0; r < ref.rows.size(); ++r) {
    const std::int64_t row = ref.rows[r];
    for (int e = 0; e < Hq * D; ++e)
      s.add(load_as_float(output_host, row * Hq * D + e, c.model.dtype), ref.o[r * Hq * D + e], tol);
  }
  return s;
}

std::uint64_t hash_bytes(const void* data, std::size_t n, std::uint64_t h) {
  // FNV-1a's prime over 64-bit words in four independent lanes, each step (rotate, xor a word, multiply by an odd
  // prime) a bijection of the lane, so one changed word always changes the hash; then the tail bytes. A byte-wise
  // FNV-1a ran at ~0.6 GB/s: 1.3 s per validation step of an extend case with 4 x 4096 tokens and 6 layers.
  constexpr std::uint64_t kPrime = 1099511628211ull;
  const auto* p = static_cast<const unsigned char*>(data);
  const auto rotl = [](std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); };
  std::uint64_t lane[4] = {h, h ^ 0x9e3779b97f4a7c15ull, h ^ 0xbf58476d1ce4e5b9ull, h ^ 0x94d049bb133111ebull};
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int k = 0; k < 4; ++k) {
      std::uint64_t w;
      std::memcpy(&w, p + i + 8 * k, 8);
      lane[k] = (rotl(lane[k], 31) ^ w) * kPrime;
    }
  if (n >= 32) h = ((((lane[0] * kPrime) ^ lane[1]) * kPrime ^ lane[2]) * kPrime ^ lane[3]) * kPrime;
  for (; i < n; ++i) {
    h ^= p[i];
    h *= kPrime;
  }
  return h;
}

}  // namespace attnbench
