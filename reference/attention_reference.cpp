#include "reference/attention_reference.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnbench {

namespace {
using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Stride = Eigen::Stride<Eigen::Dynamic, 1>;
using ConstMap = Eigen::Map<const RowMat, 0, Stride>;
constexpr int kRowBlock = 256;  // query rows per dense block (bounds the logits matrix)
}  // namespace

void reference_attention(const ReferenceCase& c, std::span<const double> q, std::span<const double> k,
                         std::span<const double> v, std::span<double> o, std::span<double> lse) {
  const int D = c.head_dim, Hq = c.num_qo_heads, Hkv = c.num_kv_heads;
  if (Hq <= 0 || Hkv <= 0 || D <= 0 || Hq % Hkv != 0) throw std::invalid_argument("reference: bad head counts");
  const std::size_t nq = static_cast<std::size_t>(c.q_len) * Hq * D;
  const std::size_t nk = static_cast<std::size_t>(c.kv_len) * Hkv * D;
  if (q.size() != nq || o.size() != nq || k.size() != nk || v.size() != nk ||
      (!lse.empty() && lse.size() != static_cast<std::size_t>(c.q_len) * Hq) ||
      (!c.sinks.empty() && c.sinks.size() != static_cast<std::size_t>(Hq)))
    throw std::invalid_argument("reference: tensor sizes do not match the case");
  const int group = Hq / Hkv;
  const double neg_inf = -std::numeric_limits<double>::infinity();
  for (int h = 0; h < Hq; ++h) {
    const int kh = h / group;
    // Strided views of one head: rows are tokens, the stride skips the other heads.
    ConstMap K(k.data() + static_cast<std::ptrdiff_t>(kh) * D, c.kv_len, D, Stride(static_cast<Eigen::Index>(Hkv) * D, 1));
    ConstMap V(v.data() + static_cast<std::ptrdiff_t>(kh) * D, c.kv_len, D, Stride(static_cast<Eigen::Index>(Hkv) * D, 1));
    for (int r0 = 0; r0 < c.q_len; r0 += kRowBlock) {
      const int rows = std::min(kRowBlock, c.q_len - r0);
      // Key m is visible to query row j iff lo(j) <= m < hi(j) (one interval per row: causal and window limits).
      // The block's products cover only the keys some row of it sees, [k_lo, k_lo + span): a sliding window or
      // a causal row block near the start of a long cache skips most of K and V.
      std::vector<long> lo(static_cast<std::size_t>(rows)), hi(static_cast<std::size_t>(rows));
      long k_lo = c.kv_len, k_hi = 0;
      for (int j = 0; j < rows; ++j) {
        const long qpos = static_cast<long>(c.q_start_pos) + r0 + j;
        lo[j] = c.window_left >= 0 ? std::max(0L, qpos - c.window_left) : 0L;
        if (c.window_spares_from >= 0) lo[j] = std::min<long>(lo[j], c.window_spares_from);
        hi[j] = c.causal ? std::min<long>(c.kv_len, qpos + 1) : c.kv_len;
        if (lo[j] < hi[j]) {
          k_lo = std::min(k_lo, lo[j]);
          k_hi = std::max(k_hi, hi[j]);
        }
      }
      const long span = std::max(0L, k_hi - k_lo);
      ConstMap Q(q.data() + (static_cast<std::ptrdiff_t>(r0) * Hq + h) * D, rows, D, Stride(static_cast<Eigen::Index>(Hq) * D, 1));
      // Logits of the block's keys [k_lo, k_hi), in this thread's scratch: allocated once per thread, not per head
      // and block (megabytes each: a fresh allocation per block cost page faults and unmaps on every call).
      // Aligned as Eigen aligns its own matrices: where a row's vectorised exp and sum start splitting into packets
      // depends on the address, and a base aligned differently from thread to thread changed the last bits.
      thread_local std::vector<double, Eigen::aligned_allocator<double>> s_scratch, o_scratch;
      if (s_scratch.size() < static_cast<std::size_t>(rows) * span) s_scratch.resize(static_cast<std::size_t>(rows) * span);
      if (o_scratch.size() < static_cast<std::size_t>(rows) * D) o_scratch.resize(static_cast<std::size_t>(rows) * D);
      Eigen::Map<RowMat> S(s_scratch.data(), rows, span);
      if (span > 0) S.noalias() = (Q * K.middleRows(k_lo, span).transpose()) * c.sm_scale;
      if (c.logits_soft_cap > 0.0) S = (S.array() / c.logits_soft_cap).tanh() * c.logits_soft_cap;
      // Row by row: the row's max over its visible keys, the unnormalised probabilities in place of the logits
      // (0 outside the row's keys); then the whole block's P * V as one product (V read once per block, not once
      // per row: a per-row vector product re-read the head's V for every query row).
      Eigen::VectorXd denom(rows);
      std::vector<char> empty(static_cast<std::size_t>(rows), 0);
      for (int j = 0; j < rows; ++j) {
        const long a = std::clamp(lo[j] - k_lo, 0L, span), b = std::clamp(hi[j] - k_lo, a, span);  // visible: [a, b)
        double mx = b > a ? S.row(j).segment(a, b - a).maxCoeff() : neg_inf;
        const double sink = c.sinks.empty() ? neg_inf : c.sinks[h];
        mx = std::max(mx, sink);
        S.row(j).head(a).setZero();
        S.row(j).tail(span - b).setZero();
        if (mx == neg_inf) {  // nothing visible
          empty[static_cast<std::size_t>(j)] = 1;
          S.row(j).setZero();
          denom(j) = 1.0;
          if (!lse.empty()) lse[static_cast<std::size_t>(r0 + j) * Hq + h] = neg_inf;
          continue;
        }
        S.row(j).segment(a, b - a) = (S.row(j).segment(a, b - a).array() - mx).exp().matrix();
        denom(j) = S.row(j).segment(a, b - a).sum() + (sink == neg_inf ? 0.0 : std::exp(sink - mx));
        if (!lse.empty()) lse[static_cast<std::size_t>(r0 + j) * Hq + h] = mx + std::log(denom(j));
      }
      Eigen::Map<RowMat> O(o_scratch.data(), rows, D);  // [rows, D]
      if (span > 0)
        O.noalias() = S * V.middleRows(k_lo, span);
      else
        O.setZero();
      for (int j = 0; j < rows; ++j) {
        double* orow = o.data() + (static_cast<std::ptrdiff_t>(r0 + j) * Hq + h) * D;
        if (empty[static_cast<std::size_t>(j)]) {
          std::fill(orow, orow + D, 0.0);
          continue;
        }
        Eigen::Map<Eigen::RowVectorXd>(orow, D) = O.row(j) / denom(j);
      }
    }
  }
}

}  // namespace attnbench
