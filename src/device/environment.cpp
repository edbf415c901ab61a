#include "device/environment.hpp"

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
