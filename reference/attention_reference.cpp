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
      ConstMap Q(q.data() + (static_cast<std::ptrdiff_t>(r0) * Hq + h) * D, rows, D, Stride(static_cast<Eigen::Index>(Hq) * D, 1));
      RowMat S = (Q * K.transpose()) * c.sm_scale;  // [rows, kv_len]
      if (c.logits_soft_cap > 0.0) S = (S.array() / c.logits_soft_cap).tanh() * c.logits_soft_cap;
      // Row by row: mask, the row's max, the unnormalised probabilities in place of the logits; then the whole
      // block's P * V as one product (V read once per block, not once per row: a per-row vector product re-read
      // the [kv_len, D] V of the head for every query row, most of the reference's time on long prefixes).
      Eigen::VectorXd denom(rows);
      std::vector<char> empty(static_cast<std::size_t>(rows), 0);
      for (int j = 0; j < rows; ++j) {
        const long qpos = static_cast<long>(c.q_start_pos) + r0 + j;
        for (int m = 0; m < c.kv_len; ++m) {
          const bool visible = (!c.causal || m <= qpos) && (c.window_left < 0 || m >= qpos - c.window_left);
          if (!visible) S(j, m) = neg_inf;
        }
        double mx = c.kv_len > 0 ? S.row(j).maxCoeff() : neg_inf;
        const double sink = c.sinks.empty() ? neg_inf : c.sinks[h];
        mx = std::max(mx, sink);
        if (mx == neg_inf) {  // nothing visible
          empty[static_cast<std::size_t>(j)] = 1;
          S.row(j).setZero();
          denom(j) = 1.0;
          if (!lse.empty()) lse[static_cast<std::size_t>(r0 + j) * Hq + h] = neg_inf;
          continue;
        }
        S.row(j) = (S.row(j).array() - mx).exp().matrix();
        denom(j) = S.row(j).sum() + (sink == neg_inf ? 0.0 : std::exp(sink - mx));
        if (!lse.empty()) lse[static_cast<std::size_t>(r0 + j) * Hq + h] = mx + std::log(denom(j));
      }
      const RowMat O = S * V;  // [rows, D]
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
