// The Eigen reference against a naive loop on tiny shapes and against hand-computed cases.
#include "reference/attention_reference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace attnbench {
namespace {

// The definition, written as plainly as possible.
void naive(const ReferenceCase& c, const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
           std::vector<double>& o, std::vector<double>& lse) {
  const int Hq = c.num_qo_heads, Hkv = c.num_kv_heads, D = c.head_dim, g = Hq / Hkv;
  o.assign(static_cast<std::size_t>(c.q_len) * Hq * D, 0.0);
  lse.assign(static_cast<std::size_t>(c.q_len) * Hq, 0.0);
  for (int j = 0; j < c.q_len; ++j)
    for (int h = 0; h < Hq; ++h) {
      std::vector<double> logits;
      std::vector<int> keys;
      for (int m = 0; m < c.kv_len; ++m) {
        const int qpos = c.q_start_pos + j;
        if (c.causal && m > qpos) continue;
        const bool spared = c.window_spares_from >= 0 && m >= c.window_spares_from;
        if (c.window_left >= 0 && m < qpos - c.window_left && !spared) continue;
        double s = 0;
        for (int d = 0; d < D; ++d) s += q[(j * Hq + h) * D + d] * k[(m * Hkv + h / g) * D + d];
        s *= c.sm_scale;
        if (c.logits_soft_cap > 0) s = c.logits_soft_cap * std::tanh(s / c.logits_soft_cap);
        logits.push_back(s);
        keys.push_back(m);
      }
      double denom = c.sinks.empty() ? 0.0 : std::exp(c.sinks[h]);
      for (double s : logits) denom += std::exp(s);
      for (std::size_t i = 0; i < keys.size(); ++i)
        for (int d = 0; d < D; ++d) o[(j * Hq + h) * D + d] += std::exp(logits[i]) / denom * v[(keys[i] * Hkv + h / g) * D + d];
      lse[j * Hq + h] = denom > 0 ? std::log(denom) : -std::numeric_limits<double>::infinity();
    }
}

std::vector<double> random_vec(std::size_t n, std::mt19937_64& rng, double scale) {
  std::uniform_real_distribution<double> u(-scale, scale);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

struct Shape {
  int q_len, kv_len, hq, hkv, d, q_start;
  bool causal;
  int window;
  double cap;
  bool sinks;
  int spares_from = -1;
};

TEST(Reference, MatchesTheNaiveDefinitionOnTinyShapes) {
  std::mt19937_64 rng(5);
  const std::vector<Shape> shapes = {
      {1, 1, 1, 1, 4, 0, true, -1, 0, false},   {3, 7, 4, 2, 8, 4, true, -1, 0, false},
      {5, 5, 4, 1, 8, 0, true, 2, 0, false},    {4, 9, 2, 2, 16, 5, false, -1, 0, false},
      {6, 6, 8, 2, 8, 0, true, -1, 30.0, true}, {300, 310, 2, 1, 4, 10, true, 50, 0, false},
      // The key span of a row block: rows that see nothing beside rows that do (sinks), a short window far into
      // a long cache, a window past the end of the keys, and a window across two row blocks.
      {4, 10, 2, 1, 4, -2, true, -1, 0, true},  {20, 600, 2, 2, 8, 580, true, 3, 0, false},
      {8, 12, 2, 1, 4, 20, false, 5, 10.0, true}, {270, 1000, 2, 1, 4, 700, true, 100, 0, true},
      // A window over cached keys only (new tokens from position 600 on): new tokens far beyond the window of
      // each other, a window that reaches before the prefix, and one across row blocks.
      {300, 900, 2, 1, 4, 600, true, 50, 0, false, 600}, {6, 9, 2, 2, 8, 3, true, 1, 0, true, 3},
      {140, 200, 4, 2, 8, 60, true, 100, 0, false, 60},
  };
  for (const Shape& s : shapes) {
    ReferenceCase c;
    c.q_len = s.q_len;
    c.kv_len = s.kv_len;
    c.num_qo_heads = s.hq;
    c.num_kv_heads = s.hkv;
    c.head_dim = s.d;
    c.q_start_pos = s.q_start;
    c.causal = s.causal;
    c.window_left = s.window;
    c.window_spares_from = s.spares_from;
    c.sm_scale = 0.3;
    c.logits_soft_cap = s.cap;
    if (s.sinks) c.sinks = random_vec(s.hq, rng, 2.0);
    const auto q = random_vec(static_cast<std::size_t>(s.q_len) * s.hq * s.d, rng, 3.0);
    const auto k = random_vec(static_cast<std::size_t>(s.kv_len) * s.hkv * s.d, rng, 1.0);
    const auto v = random_vec(k.size(), rng, 1.0);
    std::vector<double> o(q.size()), lse(static_cast<std::size_t>(s.q_len) * s.hq), no, nl;
    reference_attention(c, q, k, v, o, lse);
    naive(c, q, k, v, no, nl);
    for (std::size_t i = 0; i < o.size(); ++i) ASSERT_NEAR(o[i], no[i], 1e-12) << "shape q_len " << s.q_len << " i " << i;
    for (std::size_t i = 0; i < lse.size(); ++i) ASSERT_NEAR(lse[i], nl[i], 1e-12);
  }
}

TEST(Reference, EqualLogitsGiveTheMeanOfTheValues) {
  ReferenceCase c;
  c.q_len = 1;
  c.kv_len = 4;
  c.num_qo_heads = c.num_kv_heads = 1;
  c.head_dim = 2;
  c.q_start_pos = 3;
  const std::vector<double> q = {0, 0}, k = {1, 2, 3, 4, 5, 6, 7, 8}, v = {1, 10, 2, 20, 3, 30, 6, 60};
  std::vector<double> o(2), lse(1);
  reference_attention(c, q, k, v, o, lse);
  EXPECT_DOUBLE_EQ(o[0], 3.0);
  EXPECT_DOUBLE_EQ(o[1], 30.0);
  EXPECT_DOUBLE_EQ(lse[0], std::log(4.0));
}

TEST(Reference, OneKeyGivesItsValueAndSinksScaleItDown) {
  ReferenceCase c;
  c.q_len = 1;
  c.kv_len = 1;
  c.num_qo_heads = c.num_kv_heads = 1;
  c.head_dim = 3;
  c.q_start_pos = 0;
  const std::vector<double> q = {1, -2, 0.5}, k = {0.3, 0.1, -1}, v = {7, -8, 9};
  std::vector<double> o(3), lse(1);
  reference_attention(c, q, k, v, o, lse);
  EXPECT_DOUBLE_EQ(o[0], 7);
  EXPECT_DOUBLE_EQ(o[2], 9);
  // A sink with the same logit as the key halves the output.
  const double logit = (0.3 - 0.2 - 0.5) * c.sm_scale;
  c.sinks = {logit};
  reference_attention(c, q, k, v, o, lse);
  EXPECT_NEAR(o[1], -4.0, 1e-12);
}

TEST(Reference, NoVisibleKeyGivesZerosAndMinusInfinity) {
  ReferenceCase c;
  c.q_len = 1;
  c.kv_len = 2;
  c.num_qo_heads = c.num_kv_heads = 1;
  c.head_dim = 2;
  c.q_start_pos = -1;  // every key is in the future
  std::vector<double> o(2, 5.0), lse(1);
  reference_attention(c, std::vector<double>{1, 1}, std::vector<double>{1, 1, 1, 1}, std::vector<double>{1, 1, 1, 1}, o, lse);
  EXPECT_EQ(o[0], 0.0);
  EXPECT_TRUE(std::isinf(lse[0]) && lse[0] < 0);
}

TEST(Reference, RejectsInconsistentSizes) {
  ReferenceCase c;
  c.q_len = 2;
  c.kv_len = 2;
  c.num_qo_heads = 3;
  c.num_kv_heads = 2;
  c.head_dim = 2;
  std::vector<double> q(12), k(8), v(8), o(12);
  EXPECT_THROW(reference_attention(c, q, k, v, o, {}), std::invalid_argument);
}

}  // namespace
}  // namespace attnbench
