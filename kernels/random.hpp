// Counter-based uniform random numbers: value i of stream `seed` depends only on (seed, i), so the CPU and
// CUDA fills produce identical data and a fill can be split across threads freely.
#pragma once

#include <cstdint>

#include "core/host_device.hpp"

namespace attnbench {

ATTNBENCH_HD std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) with 24 random bits.
ATTNBENCH_HD float uniform_at(std::uint64_t seed, std::uint64_t i) {
  const std::uint64_t h = splitmix64(seed ^ splitmix64(i));
  return static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
}

}  // namespace attnbench
