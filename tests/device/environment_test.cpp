// The environment fingerprint of reports: the host's keys, in order, then the device's.
#include "device/environment.hpp"

#include <gtest/gtest.h>

#include "core/version.hpp"
#include "device/cpu_device.hpp"

namespace attnbench {
namespace {

TEST(Environment, HostKeysInOrderWithTheBuildIdentity) {
  const EnvironmentPairs env = host_environment();
  ASSERT_EQ(env.size(), 5u);
  const std::vector<std::string> keys = {"attnbench_version", "git_commit", "compiler", "cpu", "hardware_threads"};
  for (std::size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(env[i].first, keys[i]);
  EXPECT_EQ(env[0].second, version());
  EXPECT_EQ(env[1].second, git_commit());
  EXPECT_EQ(env[2].second, compiler());
  EXPECT_EQ(env[3].second, cpu_model());
  EXPECT_FALSE(cpu_model().empty());
  EXPECT_EQ(env[4].second, std::to_string(hardware_threads()));
}

TEST(Environment, FingerprintIsTheHostThenTheDevice) {
  CpuDevice dev;
  const EnvironmentPairs env = environment_fingerprint(dev);
  const EnvironmentPairs host = host_environment(), device = dev.environment();
  ASSERT_EQ(env.size(), host.size() + device.size());
  for (std::size_t i = 0; i < host.size(); ++i) EXPECT_EQ(env[i], host[i]);
  for (std::size_t i = 0; i < device.size(); ++i) EXPECT_EQ(env[host.size() + i], device[i]);
}

}  // namespace
}  // namespace attnbench
