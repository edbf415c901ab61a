// The environment fingerprint of every report: what built attnbench and the host it runs on. The device's
// own part (GPU name, driver, clocks, ...) is Device::environment(); environment_fingerprint() joins both.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "device/device.hpp"

namespace attnbench {

using EnvironmentPairs = std::vector<std::pair<std::string, std::string>>;

// The CPU's model name from /proc/cpuinfo ("unknown" where it cannot be read).
std::string cpu_model();
// std::thread::hardware_concurrency() (0 when unknown).
unsigned hardware_threads();

// The 1-minute load average (getloadavg: runnable + uninterruptible tasks, smoothed); nullopt where unknown.
std::optional<double> load_average_1m();

// The row note of a timed CPU case when other work competes for the cores: `load` (the 1-minute load average)
// above `cores` (hardware threads) gives "load average 5.43 > 2 hardware threads at the start of the case:
// other work shares the CPU, timings are noisy"; nullopt otherwise (also when cores is 0: unknown).
std::optional<std::string> cpu_load_note(double load, unsigned cores);
// The same for `device` now: nullopt unless it is the CPU device and the load average exceeds
// hardware_threads().
std::optional<std::string> cpu_load_note(const Device& device);

// attnbench_version, git_commit, compiler, cpu, hardware_threads: in this order, the keys of reports.
EnvironmentPairs host_environment();
// host_environment() followed by device.environment().
EnvironmentPairs environment_fingerprint(const Device& device);

}  // namespace attnbench
