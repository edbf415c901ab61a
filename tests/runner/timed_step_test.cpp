// The timed-step helper behind every eager and graph row: metadata then forward per sample, warm-up parts
// dropped, the transient peak of a step, the L2 flushed when asked.
#include "runner/timed_step.hpp"

#include <gtest/gtest.h>

#include "device/cpu_device.hpp"

namespace attnbench {
namespace {

class CountingDevice : public CpuDevice {
 public:
  int flushes = 0;
  void flush_l2() override { ++flushes; }
};

RunSettings fixed_samples(int warmup, int samples) {
  RunSettings s;
  s.sampling.warmup = warmup;
  s.sampling.min_samples = samples;
  s.sampling.max_samples = samples;
  s.sampling.time_budget_s = 100;
  return s;
}

TEST(TimedStep, MetadataThenForwardPerCallWarmUpPartsDropped) {
  CountingDevice dev;
  std::string order;
  const TimedSteps t = time_steps(dev, fixed_samples(2, 5), [&] { order += "m"; }, [&] { order += "f"; });
  const std::size_t n = t.samples.us.size();
  ASSERT_EQ(n, 5u) << "min_samples = max_samples = 5";
  EXPECT_EQ(order.size(), 2 * (n + 2)) << "every call: metadata then forward";
  for (std::size_t i = 0; i < order.size(); i += 2) EXPECT_EQ(order.substr(i, 2), "mf");
  EXPECT_EQ(t.metadata_us.size(), n) << "warm-up parts are not samples";
  EXPECT_EQ(t.forward_us.size(), n);
  for (std::size_t i = 0; i < n; ++i) EXPECT_DOUBLE_EQ(t.samples.us[i], t.metadata_us[i] + t.forward_us[i]);
  EXPECT_EQ(dev.flushes, static_cast<int>(n + 2)) << "the L2 is flushed before every call";
}

TEST(TimedStep, NoFlushWhenTurnedOffAndTheStepPeakIsTransientBytes) {
  CountingDevice dev;
  RunSettings s = fixed_samples(1, 3);
  s.flush_l2 = false;
  const TimedSteps t = time_steps(
      dev, s,
      [&] {
        Buffer scratch = dev.allocate(1000, MemKind::device, "test.scratch");  // freed at once
        EXPECT_EQ(dev.ledger().phase(), "step");
      },
      [&] {});
  EXPECT_EQ(dev.flushes, 0);
  EXPECT_EQ(t.peak_device_bytes, 1000);
  EXPECT_EQ(dev.ledger().live()[MemKind::device], 0);
}

}  // namespace
}  // namespace attnbench
