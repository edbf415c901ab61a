#include "runner/timed_step.hpp"

#include <algorithm>

namespace attnbench {

TimedSteps time_steps(Device& device, const RunSettings& settings, const std::function<void()>& metadata,
                      const std::function<void()>& forward) {
  TimedSteps out;
  auto tm = device.make_timer(), tf = device.make_timer();
  Ledger& ledger = device.ledger();
  SteadyClock clock;
  out.samples = sample(
      settings.sampling,
      [&] {
        if (settings.flush_l2) device.flush_l2();
        const std::int64_t before = ledger.live()[MemKind::device];
        ledger.reset_window_peak();
        PhaseScope ps(ledger, "step");
        tm->start();
        metadata();
        tm->stop();
        tf->start();
        forward();
        tf->stop();
        const double a = tm->elapsed_us(), b = tf->elapsed_us();
        out.peak_device_bytes = std::max(out.peak_device_bytes, ledger.window_peak()[MemKind::device] - before);
        out.metadata_us.push_back(a);
        out.forward_us.push_back(b);
        return a + b;
      },
      clock, settings.interrupt);
  // The warm-up calls' parts are not samples.
  const auto drop = static_cast<std::ptrdiff_t>(out.samples.warmup_runs);
  for (std::vector<double>* v : {&out.metadata_us, &out.forward_us})
    v->erase(v->begin(), v->begin() + std::min<std::ptrdiff_t>(drop, static_cast<std::ptrdiff_t>(v->size())));
  return out;
}

}  // namespace attnbench
