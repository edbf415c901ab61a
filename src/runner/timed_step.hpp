// One timed row, eager or graph alike: the step is its metadata part then its forward part, each between
// the device's timer events, after an L2 flush, under the ledger phase "step", sampled by the policy.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "device/device.hpp"
#include "runner/plan.hpp"
#include "runner/sampler.hpp"

namespace attnbench {

struct TimedSteps {
  Samples samples;                  // per step: metadata + forward, µs
  std::vector<double> metadata_us;  // per kept sample (warm-up dropped), in order
  std::vector<double> forward_us;
  std::int64_t peak_device_bytes = 0;  // largest transient device bytes of a step above the level before it
};

// Samples `metadata` + `forward` (eager: init_forward_metadata and every layer's forward; graph:
// init_forward_metadata_out_graph and the replay) under settings.sampling, flushing the L2 before each call
// when settings.flush_l2.
TimedSteps time_steps(Device& device, const RunSettings& settings, const std::function<void()>& metadata,
                      const std::function<void()>& forward);

}  // namespace attnbench
