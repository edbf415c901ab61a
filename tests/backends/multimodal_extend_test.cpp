// A multimodal model (SGLang's model_config.is_multimodal: a multimodal class such as Qwen2.5-VL or Mistral-3, or a
// config with a text_config, unless the class has multimodal off by default like Gemma3ForConditionalGeneration)
// makes SGLang's FlashInfer backend run every extend on its paged path (flashinfer_backend.py L1048-1056): the new
// tokens' K / V are written first and read back from the pool, so with an fp8 cache they are read quantized, as on
// the paged path of SGLANG_FLASHINFER_USE_PAGED. Checked here through what the backend reports (its fp8 read view)
// and end to end through `attnbench validate` on such a config.
#include <gtest/gtest.h>

#include <string>

#include "backends/registry.hpp"
#include "device/cpu_device.hpp"
#include "runner/phases.hpp"
#include "runner/workload.hpp"
#include "support/cases.hpp"
#include "support/test_util.hpp"
#include "support/tiny_configs.hpp"

namespace attnbench {
namespace {

bool reads_new_kv_from_the_pool(bool multimodal) {
  Case c = test::tiny_case("extend", "tiny", 37);
  c.model.is_multimodal = multimodal;
  CpuDevice dev;
  Workload wl(dev, c);
  ConstructedBackend built = construct_backend(dev, wl.model_runner(), find_backend("flashinfer"));
  return built.backend->fp8_read_view(ForwardMode::extend).new_kv;
}

TEST(MultimodalExtend, FlashInferTakesThePagedPathForAMultimodalModel) {
  EXPECT_FALSE(reads_new_kv_from_the_pool(false)) << "ragged: new K / V straight from k / v";
  EXPECT_TRUE(reads_new_kv_from_the_pool(true)) << "paged: new K / V written first, read from the pool";
}

TEST(MultimodalExtend, AQwen25VlConfigValidatesWithAnFp8CacheOnEveryBackend) {
  test::TempDir d;
  const std::string cfg = test::write_qwen25_vl_tiny(d);
  const test::RunResult r = test::run_attnbench(
      "validate --device cpu --model " + cfg + " --mode extend --batch 2 --prefix-len 0,40 --extend-len 24 " +
          "--page-size 16 --kv-cache-dtype fp8_e4m3 --out " + d.file("v.csv"),
      d);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const std::string csv = test::read_file(d.file("v.csv"));
  EXPECT_FALSE(test::has(csv, ",failed,")) << csv;
  EXPECT_TRUE(test::has(r.out, "0 reference failures")) << r.out;
}

}  // namespace
}  // namespace attnbench
