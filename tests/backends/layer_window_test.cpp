// The layers' sliding windows are applied or not once per backend (AttentionBackend::applies_layer_windows): on a
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
#include "runner/phases.hpp"
#include "runner/plan.hpp"
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
      if (w.applies_layer_windows) {
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
  // The same model with a runner window (Gemma-3's rule) has every backend apply the windows.
  CpuDevice dev;
  Case gemma = test::tiny_case("decode", "tiny-swa");
  Workload wl(dev, gemma);
  for (const std::string& backend : backend_names()) {
    ConstructedBackend built = construct_backend(dev, wl.model_runner(), find_backend(backend));
    EXPECT_TRUE(built.backend->applies_layer_windows()) << backend;
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

}  // namespace
}  // namespace attnbench
