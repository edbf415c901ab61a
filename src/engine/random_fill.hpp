// Seeded random fills of caches and queries (never zeros: zeros hide unwritten outputs and wrong indexing).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/dtype.hpp"
#include "device/device.hpp"

namespace attnbench {

// data[0..n) = seeded uniform values in [lo, hi), through the device's kernel table.
void fill_uniform(Device& device, void* data, std::int64_t n, DType dtype, std::uint64_t seed, float lo, float hi);
// Element i of fill_uniform(seed, dtype, lo, hi), recomputed on the host (as stored: rounded to dtype).
// The reference uses this to know the cache contents without reading any device memory.
float seeded_element(std::uint64_t seed, std::int64_t i, DType dtype, float lo, float hi);
// A stream seed for (case seed, tensor name, index): different tensors never share values.
std::uint64_t seed_for(std::uint64_t seed, std::string_view name, std::int64_t index);
// Fills with 0xFF bytes: NaN in bf16, fp16 and fp32, so an element a kernel did not write fails validation.
void poison(Device& device, void* data, std::int64_t bytes);

}  // namespace attnbench
