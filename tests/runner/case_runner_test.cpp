// One case through every backend on the CPU: rows, validation, bitwise equality of the two TRTLLM
// backends, a deliberately broken kernel caught by the reference check, and the work counting.
#include "runner/case_runner.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "backends/registry.hpp"
#include "device/cpu_device.hpp"
#include "kernels/cpu/kernels_cpu.hpp"
#include "runner/case_work.hpp"
#include "support/cases.hpp"

namespace attnbench {
namespace {

RunSettings fast_settings(bool timing) {
  RunSettings s;
  s.timing = timing;
  s.sampling.warmup = 1;
  s.sampling.min_samples = 3;
  s.sampling.max_samples = 3;
  s.sampling.time_budget_s = 0.05;
  return s;
}

using test::tiny_case;

const DeviceMaker cpu = [] { return std::make_unique<CpuDevice>(); };

TEST(CaseRunner, EveryBackendValidatesAndTheTwoTrtllmBackendsAreBitIdentical) {
  for (const std::string mode : {"decode", "extend", "verify"}) {
    const CaseOutcome out = run_case(tiny_case(mode), backend_names(), cpu, fast_settings(true));
    ASSERT_EQ(out.rows.size(), 3u) << mode << ": one eager row per backend on the CPU (no graphs)";
    for (const ResultRow& r : out.rows) {
      EXPECT_EQ(r.status, RowStatus::ok) << mode << " " << r.backend << ": " << r.note;
      ASSERT_TRUE(r.ref_pass.has_value());
      EXPECT_TRUE(*r.ref_pass) << mode << " " << r.backend << " max abs " << *r.ref_max_abs_err;
      EXPECT_EQ(r.timing, "eager");
      EXPECT_GT(r.samples, 0);
      EXPECT_GT(*r.step_median_us, 0.0);
      EXPECT_EQ(r.case_id, out.rows[0].case_id);
      EXPECT_NE(r.repro.find("--case-id '" + r.case_id + "'"), std::string::npos);
    }
    EXPECT_NE(out.rows[1].bitwise_equal_to.find("trtllm_mha_legacy"), std::string::npos) << mode;
    EXPECT_NE(out.rows[2].bitwise_equal_to.find("trtllm_mha"), std::string::npos) << mode;
    // Construction memory is in every row, and legacy pays FlashInfer's share on top of TRTLLM's.
    EXPECT_EQ(*out.rows[2].ctor_device_bytes, *out.rows[0].ctor_device_bytes + *out.rows[1].ctor_device_bytes);
  }
}

TEST(CaseRunner, SlidingWindowModelTrimsInFlashInferAndWindowsInTrtllmAlike) {
  for (const std::string mode : {"decode", "extend"}) {
    const CaseOutcome out = run_case(tiny_case(mode, "tiny-swa", 50), backend_names(), cpu, fast_settings(false));
    for (const ResultRow& r : out.rows) {
      EXPECT_EQ(r.status, RowStatus::ok) << r.backend << ": " << r.note;
      EXPECT_TRUE(r.ref_pass && *r.ref_pass) << mode << " " << r.backend;
    }
  }
}

TEST(CaseRunner, SinksRunOnTrtllmAndAreSkippedOnFlashInferWithAReason) {
  Case c = tiny_case("decode");
  c.sinks = true;
  const CaseOutcome out = run_case(c, backend_names(), cpu, fast_settings(false));
  EXPECT_EQ(out.rows[0].status, RowStatus::skipped);
  EXPECT_NE(out.rows[0].note.find("sinks"), std::string::npos);
  EXPECT_TRUE(*out.rows[1].ref_pass);
}

// A device whose KV write forgets to write: the new token's K/V never reach the cache.
class ForgetfulDevice : public CpuDevice {
 public:
  const KernelTable& kernels() const override {
    static const KernelTable t = [] {
      KernelTable k = cpu_kernel_table();
      k.write_kv = [](const KvWriteParams&, void*) {};
      return k;
    }();
    return t;
  }
};

TEST(CaseRunner, ABrokenKernelIsCaughtByTheReferenceCheck) {
  const DeviceMaker broken = [] { return std::make_unique<ForgetfulDevice>(); };
  const CaseOutcome out = run_case(tiny_case("decode"), {"trtllm_mha"}, broken, fast_settings(false));
  ASSERT_EQ(out.rows.size(), 1u);
  ASSERT_TRUE(out.rows[0].ref_pass.has_value());
  EXPECT_FALSE(*out.rows[0].ref_pass);
  EXPECT_GT(*out.rows[0].ref_mismatch_frac, 0.1);
}

TEST(CaseRunner, UnwrittenOutputIsNaNAndFails) {
  class Lazy : public CpuDevice {
   public:
    const KernelTable& kernels() const override {
      static const KernelTable t = [] {
        KernelTable k = cpu_kernel_table();
        k.attention_decode = [](const AttentionParams&, void*) {};  // writes nothing
        return k;
      }();
      return t;
    }
  };
  const CaseOutcome out = run_case(tiny_case("decode"), {"flashinfer"}, [] { return std::make_unique<Lazy>(); },
                                   fast_settings(false));
  EXPECT_FALSE(*out.rows[0].ref_pass);
  EXPECT_NE(out.rows[0].note.find("NaN"), std::string::npos);
}

TEST(StepWork, CountsVisiblePairsAndBytesFromLengths) {
  Case c = tiny_case("extend");  // tiny: 2 layers, 4 q / 2 kv heads, head_dim 64, bf16
  c.batch = 1;
  c.prefix_lens = {3};
  c.new_lens = {2};
  const StepWork w = step_work(c);
  // Query rows see 4 and 5 keys: 9 pairs * 4 * 4 heads * 64 * 2 layers.
  EXPECT_DOUBLE_EQ(w.flops, 9.0 * 4 * 4 * 64 * 2);
  // Per layer: 5 keys * 2 (K, V) * 2 heads * 64 * 2 B, plus q, o (4 heads) and new k, v (2 heads) of 2 tokens.
  EXPECT_DOUBLE_EQ(w.kv_bytes_layer, 5.0 * 2 * 2 * 64 * 2);
  EXPECT_DOUBLE_EQ(w.bytes, 2 * (5.0 * 2 * 2 * 64 * 2) + 2 * 2.0 * (2 * 4 + 2 * 2) * 64 * 2);
}

TEST(StepWork, AWindowOverCachedKeysOnlyCountsEveryEarlierNewToken) {
  Case c = tiny_case("extend", "tiny-swa");  // 2 layers, window (sliding_window_size) 31 on layer 0, none on 1
  c.batch = 1;
  c.prefix_lens = {40};
  c.new_lens = {50};
  ASSERT_EQ(c.model.layer_sliding_window_size(0), 31);
  ASSERT_EQ(c.model.layer_sliding_window_size(1), -1);
  const double per_pair = 4.0 * c.model.num_qo_heads() * c.model.head_dim;
  // Layer 1 (no window): row j sees 41 + j keys. Layer 0 windowed: min(41 + j, 32). Layer 0 with the window over
  // cached keys only: max(0, 31 - j) cached keys (row 0 sees 31 of the 40) and the j + 1 new tokens up to itself.
  double full = 0, windowed = 0, cached_only = 0;
  for (int j = 0; j < 50; ++j) {
    full += 41 + j;
    windowed += std::min(41 + j, 32);
    cached_only += std::max(0, 31 - j) + j + 1;
  }
  EXPECT_DOUBLE_EQ(step_work(c).flops, (full + windowed) * per_pair);
  const Case spared = case_as_run(c, LayerWindows::cached_only);
  EXPECT_DOUBLE_EQ(step_work(spared).flops, (full + cached_only) * per_pair);
  // The keys read are the same: the first new token's window reaches back furthest (31 cached + 50 new).
  EXPECT_DOUBLE_EQ(step_work(spared).kv_bytes_layer, step_work(c).kv_bytes_layer);
  EXPECT_DOUBLE_EQ(step_work(c).kv_bytes_layer, (31.0 + 50) * 2 * c.model.num_kv_heads() * c.model.head_dim * 2);
  // Where no two new tokens lie further apart than the window, cached_only computes what the model does.
  Case near = c;
  near.new_lens = {32};  // rows 0 and 31: 31 apart, inside the window
  EXPECT_EQ(effective_layer_windows(near, LayerWindows::cached_only), LayerWindows::all);
  EXPECT_EQ(case_as_run(near, LayerWindows::cached_only).windows, LayerWindows::all);
  near.new_lens = {33};
  EXPECT_EQ(effective_layer_windows(near, LayerWindows::cached_only), LayerWindows::cached_only);
  // Without windows in the model, every choice is the case itself.
  const Case plain = tiny_case("extend");
  EXPECT_EQ(case_as_run(plain, LayerWindows::cached_only).windows, LayerWindows::all);
  EXPECT_EQ(case_as_run(c, LayerWindows::none).model.has_sliding_window(), false);
}

}  // namespace
}  // namespace attnbench
