// The environment fingerprint of every report: what built attnbench and the host it runs on. The device's
// own part (GPU name, driver, clocks, ...) is Device::environment(); environment_fingerprint() joins both.
#pragma once

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

// attnbench_version, git_commit, compiler, cpu, hardware_threads: in this order, the keys of reports.
EnvironmentPairs host_environment();
// host_environment() followed by device.environment().
EnvironmentPairs environment_fingerprint(const Device& device);

}  // namespace attnbench
