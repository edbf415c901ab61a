// The layers' sliding windows are applied or not once per backend and mode (AttentionBackend::layer_windows): on a
// model whose class reports no window to SGLang's model runner (Cohere2: models/commandr.py, ModelConfig::
// runner_sliding_window false) the FlashInfer backend plans one wrapper set without a window and must give every
// layer exactly the output of the same model without windows, while trtllm_mha applies each layer's own window
// (config.sliding_window itself there, ModelConfig::sliding_window_offset 0) and must not. Then the whole path
// through `attnbench validate` on a Cohere2 config.json: every row validated against the reference its backend
// computes, the two kinds of backend not compared with each other, the FlashInfer rows saying why.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "device/cpu_device.hpp"
#include "report/results_io.hpp"
#include "runner/phases.hpp"
#include "runner/plan.hpp"
#include "runner/case_work.hpp"
#include "runner/validation.hpp"
#include "runner/workload.hpp"
#include "support/cases.hpp"
#include "support/step_outputs.hpp"
#include "support/test_util.hpp"
#include "support/tiny_configs.hpp"

namespace attnbench {
namespace {

TEST(LayerWindows, WithoutARunnerWindowFlashInferRunsEveryLayerUnwindowedAndTrtllmMhaWindowsThem) {
  int unwindowed = 0, windowed = 0, refused = 0;
  for (const auto& [mode, prefix] : std::vector<std::pair<std::string, int>>{
           {"decode", 37}, {"extend", 0}, {"extend", 37}, {"verify", 37}}) {
    const std::string what = mode + " prefix " + std::to_string(prefix);
    Case cohere = test::tiny_case(mode, "tiny-swa", prefix);  // window 32 on layer 0, 70 cached tokens
    if (mode == "extend" && prefix == 0)
      for (auto& n : cohere.new_lens) n = 48;  // past the window, so that it bites without a prefix too
    cohere.model.architecture = "Cohere2ForCausalLM";
    cohere.model.runner_sliding_window = false;
    cohere.model.sliding_window_offset = 0;
    ASSERT_EQ(cohere.model.layer_sliding_window_size(0), 32);
    Case plain = cohere;
    plain.model = cohere.model.without_windows();
    const HostBatch h = plan_host_batch(cohere);
    ASSERT_NE(reference_layer(cohere, h, 0, 1e30).o, reference_layer(plain, h, 0, 1e30).o)
        << what << ": the window must bite for this test to mean anything";
    for (const std::string& backend : backend_names()) {
      const test::StepOutputs w = test::run_step(cohere, backend);
      // FlashInfer passes the window to a kernel planned without one in an extend with a prefix and in verify
      // (FlashInferBackend::supports): refused there, run everywhere else.
      const bool refused_here = backend == "flashinfer" && (mode == "verify" || (mode == "extend" && prefix > 0));
      EXPECT_EQ(w.supported, !refused_here) << what << " " << backend;
      if (!w.supported) {
        ++refused;
        continue;
      }
      const test::StepOutputs p = test::run_step(plain, backend);
      ASSERT_TRUE(p.supported) << what << " " << backend;
      if (w.layer_windows != LayerWindows::none) {
        EXPECT_NE(w.bytes, p.bytes) << what << " " << backend << " applies the windows: they must bite";
        ++windowed;
      } else {
        EXPECT_EQ(w.bytes, p.bytes) << what << " " << backend << " says it applies no window, yet the output differs";
        ++unwindowed;
      }
    }
  }
  EXPECT_EQ(unwindowed, 2) << "flashinfer must have run decode and the prefix-less extend unwindowed";
  EXPECT_EQ(refused, 2);
  EXPECT_GT(windowed, 0) << "trtllm_mha must have run windowed";
  // The same model with a runner window (Gemma-3's rule) has every backend apply the windows in decode and
  // verify; FlashInfer's ragged extend windows only the cached keys (next test).
  CpuDevice dev;
  Case gemma = test::tiny_case("decode", "tiny-swa");
  Workload wl(dev, gemma);
  for (const std::string& backend : backend_names()) {
    ConstructedBackend built = construct_backend(dev, wl.model_runner(), find_backend(backend));
    EXPECT_EQ(built.backend->layer_windows(ForwardMode::decode), LayerWindows::all) << backend;
    EXPECT_EQ(built.backend->layer_windows(ForwardMode::target_verify), LayerWindows::all) << backend;
    EXPECT_EQ(built.backend->layer_windows(ForwardMode::extend),
              backend == "flashinfer" ? LayerWindows::cached_only : LayerWindows::all)
        << backend;
  }
}

// SGLang's FlashInfer ragged extend on a model whose runner knows the window (Gemma-2 / 3): the ragged wrapper is
// planned without a window, so the new tokens see each other causally, while the paged prefix half keeps the window
// (docs/facts-0.5.23.md section 13). On an extend longer than the window: FlashInfer's output passes the
// cached_only reference and fails the windowed one, without a prefix it is bit for bit the unwindowed model's, and
// trtllm_mha keeps the window on every key.
TEST(LayerWindows, FlashInferRaggedExtendWindowsOnlyTheCachedKeys) {
  for (const int prefix : {0, 37}) {
    Case c = test::tiny_case("extend", "tiny-swa", prefix);  // window 32 on layer 0
    for (auto& n : c.new_lens) n = 48;                        // new tokens further apart than the window
    ASSERT_EQ(c.model.layer_sliding_window_size(0), 31);
    Case plain = c;
    plain.model = c.model.without_windows();
    const HostBatch h = plan_host_batch(c);
    const Case cached_only = case_as_run(c, LayerWindows::cached_only);
    ASSERT_EQ(cached_only.windows, LayerWindows::cached_only);
    const ReferenceLayer windowed_ref = reference_layer(c, h, 0, 1e30);
    const ReferenceLayer cached_ref = reference_layer(cached_only, h, 0, 1e30);
    ASSERT_NE(windowed_ref.o, cached_ref.o) << "prefix " << prefix << ": the window must bite among the new tokens";
    if (prefix == 0)
      EXPECT_EQ(cached_ref.o, reference_layer(plain, h, 0, 1e30).o) << "no cached key: nothing left to window";
    else
      EXPECT_NE(cached_ref.o, reference_layer(plain, h, 0, 1e30).o) << "the cached keys stay windowed";
    const std::size_t layer_bytes = static_cast<std::size_t>(c.q_tokens()) * c.model.num_qo_heads() *
                                    c.model.head_dim * dtype_size(c.model.dtype);
    for (const std::string& backend : {std::string("flashinfer"), std::string("trtllm_mha")}) {
      const std::string what = backend + " prefix " + std::to_string(prefix);
      const test::StepOutputs w = test::run_step(c, backend);
      ASSERT_TRUE(w.supported) << what;
      ASSERT_EQ(w.bytes.size(), layer_bytes * c.model.num_layers) << what;
      const ErrorStats vs_cached = compare_with_reference(c, cached_ref, w.bytes.data());
      const ErrorStats vs_windowed = compare_with_reference(c, windowed_ref, w.bytes.data());
      if (backend == "flashinfer") {
        EXPECT_EQ(w.layer_windows, LayerWindows::cached_only) << what;
        EXPECT_TRUE(vs_cached.pass()) << what << " max_abs " << vs_cached.max_abs;
        EXPECT_FALSE(vs_windowed.pass()) << what;
        if (prefix == 0) {
          EXPECT_EQ(w.bytes, test::run_step(plain, backend).bytes) << what;
        }
      } else {
        EXPECT_EQ(w.layer_windows, LayerWindows::all) << what;
        EXPECT_TRUE(vs_windowed.pass()) << what << " max_abs " << vs_windowed.max_abs;
        EXPECT_FALSE(vs_cached.pass()) << what;
      }
    }
  }
}

TEST(LayerWindows, ACohere2ConfigValidatesOnEveryBackendAndFlashInferSaysWhyItDiffers) {
  test::TempDir d;
  const std::string cfg = test::write_cohere2_tiny(d);
  const test::RunResult r = test::run_attnbench(
      "validate --device cpu --model " + cfg + " --mode decode,extend,verify --batch 2 --kv-len 80 --prefix-len 0,40 " +
          "--extend-len 40 --page-size 16 --out " + d.file("v.csv"),
      d);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const std::string csv = test::read_file(d.file("v.csv"));
  EXPECT_FALSE(test::has(csv, ",failed,")) << csv;
  // skipped: FlashInfer's extend with a prefix and its verify (the window reaches a kernel planned without one)
  auto count = [&csv](const std::string& part) {
    std::size_t n = 0;
    for (std::size_t at = csv.find(part); at != std::string::npos; at = csv.find(part, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(",skipped,"), 2u) << csv;
  EXPECT_EQ(count("to forward() of prefill wrappers planned without one"), 2u) << csv;
  EXPECT_TRUE(test::has(csv, "unwindowed: SGLang's Cohere2ForCausalLM reports no window to the model runner")) << csv;
  EXPECT_TRUE(test::has(csv, "vs trtllm_mha not compared (layer windows differ)")) << csv;
  EXPECT_TRUE(test::has(r.out, "0 reference failures")) << r.out;
  // FlashInfer builds one wrapper set (no runner window), Gemma-3's rule two.
  const test::RunResult mem = test::run_attnbench("memory --device cpu --backend flashinfer --model " + cfg, d);
  ASSERT_EQ(mem.exit_code, 0) << mem.err;
  EXPECT_TRUE(test::has(mem.out, "decode_wrappers[0]")) << mem.out;
  EXPECT_FALSE(test::has(mem.out, "decode_wrappers[1]")) << mem.out;
  const test::RunResult swa = test::run_attnbench("memory --device cpu --backend flashinfer --model tiny-swa", d);
  EXPECT_TRUE(test::has(swa.out, "decode_wrappers[1]")) << swa.out;
}

// The same through `attnbench validate` on Gemma-3's rule (tiny-swa): every extend row validated against the
// reference of its backend; FlashInfer's say why and are compared with trtllm_mha's only where the window cannot
// bite among the new tokens (16 new tokens against a window of 31: compared; 48: not).
TEST(LayerWindows, ValidateRunsFlashInfersRaggedExtendAgainstItsOwnReference) {
  test::TempDir d;
  const test::RunResult r = test::run_attnbench(
      "validate --device cpu --model tiny-swa --mode extend --batch 2 --prefix-len 0,37 --extend-len 16,48 "
      "--page-size 16 --out " + d.file("v.csv"), d);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto rows = read_results_csv(d.file("v.csv"));
  ASSERT_EQ(rows.size(), 4u * backend_names().size());
  int flashinfer_rows = 0;
  for (const ResultRow& row : rows) {
    SCOPED_TRACE(row.case_id + " " + row.backend);
    ASSERT_EQ(row.status, RowStatus::ok) << row.note;
    ASSERT_TRUE(row.ref_pass.has_value() && *row.ref_pass) << row.note;
    const bool long_extend = row.case_id.find("ext=48") != std::string::npos;
    EXPECT_EQ(test::has(row.note, "not compared (layer windows differ)"), long_extend) << row.note;
    if (row.backend == "flashinfer") {
      ++flashinfer_rows;
      EXPECT_TRUE(test::has(row.note, "new tokens unwindowed: SGLang's FlashInfer ragged extend wrapper")) << row.note;
    }
  }
  EXPECT_EQ(flashinfer_rows, 4);
}

}  // namespace
}  // namespace attnbench
