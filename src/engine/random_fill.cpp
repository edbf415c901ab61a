#include "engine/random_fill.hpp"

#include "kernels/kernel_table.hpp"
#include "kernels/random.hpp"

namespace attnbench {

void fill_uniform(Device& device, void* data, std::int64_t n, DType dtype, std::uint64_t seed, float lo, float hi) {
  FillParams p;
  p.data = data;
  p.n = n;
  p.dtype = dtype;
  p.seed = seed;
  p.lo = lo;
  p.hi = hi;
  device.kernels().fill_uniform(p, device.stream());
}

float seeded_element(std::uint64_t seed, std::int64_t i, DType dtype, float lo, float hi) {
  const float v = lo + (hi - lo) * uniform_at(seed, static_cast<std::uint64_t>(i));
  return round_to_dtype(v, dtype);
}

std::uint64_t seed_for(std::uint64_t seed, std::string_view name, std::int64_t index) {
  std::uint64_t h = splitmix64(seed);
  for (char c : name) h = splitmix64(h ^ static_cast<unsigned char>(c));
  return splitmix64(h ^ static_cast<std::uint64_t>(index));
}

void poison(Device& device, void* data, std::int64_t bytes) { device.memset(data, 0xff, bytes); }

}  // namespace attnbench
