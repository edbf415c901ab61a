// runner/validation.cpp: the per-layer reference over sampled rows (regrouped by request and query head) against
// the same reference over every row, and the output hash behind bitwise_equal_to.
#include "runner/validation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "runner/plan.hpp"

namespace attnbench {
namespace {

Case extend_case(const std::string& model, int batch, int prefix, int extend) {
  RunPlan p;
  p.models = {model};
  p.modes = {"extend"};
  p.batches = {batch};
  p.prefix_lens = {prefix};
  p.extend_lens = {extend};
  p.page_sizes = {16};
  return expand_cases(p).at(0);
}

double full_flops(const Case& c) {
  double f = 0;
  for (int i = 0; i < c.batch; ++i)
    f += 4.0 * c.new_lens[i] * (c.prefix_lens[i] + c.new_lens[i]) * c.model.num_qo_heads() * c.model.head_dim;
  return f;
}

// Sampled rows (the first 16 and last 48 of each request, then every k-th request) carry the values the full
// reference gives those rows: the head / tail ranges, their output offsets and the GQA head mapping agree.
TEST(ReferenceLayer, SampledRowsEqualTheFullReferenceRows) {
  for (const std::string model : {"tiny", "tiny-swa"}) {
    const Case c = extend_case(model, 5, 37, 100);
    const HostBatch h = plan_host_batch(c);
    const int Hq = c.model.num_qo_heads(), D = c.model.head_dim;
    for (int layer : validated_layers(c.model.num_layers)) {
      const ReferenceLayer full = reference_layer(c, h, layer, 1e30);
      ASSERT_FALSE(full.sampled);
      ASSERT_EQ(full.rows.size(), static_cast<std::size_t>(c.q_tokens()));
      for (std::size_t r = 0; r < full.rows.size(); ++r) ASSERT_EQ(full.rows[r], static_cast<int>(r));
      // Just below the full work: head and tail rows of every request; far below: every k-th request too.
      for (const double budget : {full_flops(c) * 0.99, full_flops(c) * 0.3}) {
        const ReferenceLayer s = reference_layer(c, h, layer, budget);
        ASSERT_TRUE(s.sampled) << budget;
        EXPECT_EQ(s.rows.size(), static_cast<std::size_t>(s.requests_checked) * 64) << budget;
        if (budget < full_flops(c) * 0.5) {
          EXPECT_LT(s.requests_checked, c.batch);
        }
        ASSERT_EQ(s.o.size(), s.rows.size() * Hq * D);
        for (std::size_t r = 0; r < s.rows.size(); ++r)
          for (int e = 0; e < Hq * D; ++e)
            ASSERT_NEAR(s.o[r * Hq * D + e], full.o[static_cast<std::size_t>(s.rows[r]) * Hq * D + e], 1e-13)
                << model << " layer " << layer << " row " << s.rows[r] << " element " << e;
      }
    }
  }
}

// The reference takes the model's scale (Gemma-3-27B: 168**-0.5) and, when the backend applies one, its logit cap
// (Gemma-2): with the other scale, or without the cap, it differs beyond the bf16 tolerance, so a backend that
// used head_dim**-0.5 or dropped FlashInfer's cap would fail validation.
TEST(ReferenceLayer, TakesTheModelsScaleAndTheBackendsLogitCap) {
  const Tolerance tol = tolerance_for(DType::bf16);
  const auto max_diff = [](const ReferenceLayer& a, const ReferenceLayer& b) {
    EXPECT_EQ(a.rows, b.rows);
    double m = 0;
    for (std::size_t i = 0; i < a.o.size(); ++i) m = std::max(m, std::abs(a.o[i] - b.o[i]));
    return m;
  };
  Case g3 = extend_case(ATTNBENCH_SOURCE_DIR "/tests/data/gemma-3-27b.json", 2, 30, 9);
  ASSERT_EQ(g3.model.sm_scale(), static_cast<float>(1.0 / std::sqrt(168.0)));
  const HostBatch h3 = plan_host_batch(g3);
  const ReferenceLayer scaled = reference_layer(g3, h3, 0, 1e30);
  Case g3_head_dim = g3;
  g3_head_dim.model.query_pre_attn_scalar = 0.0;  // 128**-0.5
  EXPECT_GT(max_diff(scaled, reference_layer(g3_head_dim, h3, 0, 1e30)), 2 * tol.atol);
  // Without a cap in the model, the backend's choice changes nothing.
  EXPECT_EQ(max_diff(scaled, reference_layer(g3, h3, 0, 1e30, {}, false)), 0.0);

  Case g2 = extend_case(ATTNBENCH_SOURCE_DIR "/tests/data/gemma-2-9b.json", 2, 30, 9);
  ASSERT_EQ(g2.model.attn_logit_cap, 50.0f);
  g2.model.attn_logit_cap = 1.0f;  // a cap that bites on the seeded data (50 moves outputs by < the tolerance)
  const HostBatch h2 = plan_host_batch(g2);
  const ReferenceLayer capped = reference_layer(g2, h2, 1, 1e30, {}, true);
  const ReferenceLayer uncapped = reference_layer(g2, h2, 1, 1e30, {}, false);
  EXPECT_GT(max_diff(capped, uncapped), 2 * tol.atol);
  Case g2_none = g2;
  g2_none.model.attn_logit_cap = 0.0f;
  EXPECT_EQ(max_diff(uncapped, reference_layer(g2_none, h2, 1, 1e30)), 0.0) << "no cap asked = no cap in the model";
}

TEST(HashBytes, EqualBytesHashEqualAndAnyChangedByteChangesTheHash) {
  std::vector<unsigned char> a(1000 + 7);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
  const std::uint64_t h = hash_bytes(a.data(), a.size());
  EXPECT_EQ(hash_bytes(a.data(), a.size()), h);
  // Every position: the 32-byte lanes, the last full block and the byte-wise tail.
  for (std::size_t i = 0; i < a.size(); ++i)
    for (unsigned char bit : {1, 128}) {
      std::vector<unsigned char> b = a;
      b[i] ^= bit;
      ASSERT_NE(hash_bytes(b.data(), b.size()), h) << "byte " << i << " bit " << int(bit);
    }
  EXPECT_NE(hash_bytes(a.data(), a.size() - 1), h);
  // Chained over layers: the seed carries the earlier layers, and the order matters.
  const std::uint64_t ab = hash_bytes(a.data() + 500, 507, hash_bytes(a.data(), 500));
  const std::uint64_t ba = hash_bytes(a.data(), 500, hash_bytes(a.data() + 500, 507));
  EXPECT_NE(ab, ba);
  EXPECT_NE(hash_bytes(a.data(), 64, 1), hash_bytes(a.data(), 64, 2));
}

}  // namespace
}  // namespace attnbench
