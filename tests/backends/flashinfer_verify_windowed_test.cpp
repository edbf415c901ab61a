// FlashInfer's verify on a sliding-window model is not modelled (supports() refuses it: the row is skipped), but
// driving it anyway must stay memory-safe: the eager plan used to allocate the shared qo_indptr once per wrapper
// set, freeing the buffer the first set had planned with (a read after free with two sets; the ASan build of the
// CPU suite catches it). Runs the refused path on the CPU and checks that it completes with finite outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "core/dtype.hpp"
#include "device/cpu_device.hpp"
#include "runner/phases.hpp"
#include "runner/plan.hpp"
#include "runner/workload.hpp"
#include "support/cases.hpp"

namespace attnbench {
namespace {

TEST(FlashInferVerify, WindowedModelStaysMemorySafeWhereItIsNotModelled) {
  const Case c = test::tiny_case("verify", "tiny-swa");
  CpuDevice dev;
  Workload wl(dev, c);
  ConstructedBackend built = construct_backend(dev, wl.model_runner(), find_backend("flashinfer"));
  AttentionBackend& b = *built.backend;
  ASSERT_FALSE(b.supports(c.step_kind(false)).ok) << "the case must be the refused one";
  const ForwardBatch& fb = wl.forward_batch();
  std::vector<unsigned char> host(static_cast<std::size_t>(wl.output_bytes()));
  for (int step = 0; step < 2; ++step) {  // a second plan reallocates what the first one planned with
    b.init_forward_metadata(fb);
    for (const Layer& layer : wl.layers()) {
      wl.poison_output();
      b.forward(wl.io(), layer, fb);
      dev.copy(host.data(), wl.output().data(), wl.output_bytes());
      dev.synchronize();
      ASSERT_EQ(c.model.dtype, DType::bf16);
      for (std::size_t i = 0; i + 1 < host.size(); i += 2) {
        std::uint16_t bits;
        std::memcpy(&bits, &host[i], 2);
        const std::uint32_t f = static_cast<std::uint32_t>(bits) << 16;
        float x;
        std::memcpy(&x, &f, 4);
        ASSERT_TRUE(std::isfinite(x)) << "layer " << layer.layer_id << " step " << step << " element " << i / 2;
      }
    }
  }
}

}  // namespace
}  // namespace attnbench
