#include "device/environment.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "core/version.hpp"

namespace attnbench {

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      auto pos = line.find(':');
      return pos == std::string::npos ? line : line.substr(pos + 2);
    }
  return "unknown";
}

unsigned hardware_threads() { return std::thread::hardware_concurrency(); }

std::optional<double> load_average_1m() {
  double load[1] = {0};
  if (::getloadavg(load, 1) != 1) return std::nullopt;
  return load[0];
}

std::optional<std::string> cpu_load_note(double load, unsigned cores) {
  if (cores == 0 || !(load > static_cast<double>(cores))) return std::nullopt;
  char b[160];
  std::snprintf(b, sizeof b,
                "load average %.2f > %u hardware threads at the start of the case: other work shares the CPU, "
                "timings are noisy",
                load, cores);
  return std::string(b);
}

std::optional<std::string> cpu_load_note(const Device& device) {
  if (device.type() != DeviceType::cpu) return std::nullopt;
  const std::optional<double> load = load_average_1m();
  if (!load) return std::nullopt;
  return cpu_load_note(*load, hardware_threads());
}

EnvironmentPairs host_environment() {
  return {{"attnbench_version", version()}, {"git_commit", git_commit()}, {"compiler", compiler()},
          {"cpu", cpu_model()}, {"hardware_threads", std::to_string(hardware_threads())}};
}

EnvironmentPairs environment_fingerprint(const Device& device) {
  EnvironmentPairs env = host_environment();
  for (auto& kv : device.environment()) env.push_back(std::move(kv));
  return env;
}

}  // namespace attnbench
