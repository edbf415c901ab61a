// Storage dtypes of the KV cache, queries and outputs, and their scalar conversions.
// bf16 and fp16 are stored as raw 16-bit words; kernels accumulate in fp32. The conversions below are
// usable from host and CUDA code (ATTNBENCH_HD) and round to nearest even, as the hardware does.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "core/host_device.hpp"

namespace attnbench {

enum class DType : std::uint8_t { bf16, fp16, fp32 };

constexpr int dtype_size(DType t) { return t == DType::fp32 ? 4 : 2; }
std::string_view dtype_name(DType t);
// Parses "bf16" | "fp16" | "fp32"; throws InputError naming `what` otherwise.
DType parse_dtype(std::string_view s, std::string_view what = "--dtype");

ATTNBENCH_HD std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
ATTNBENCH_HD float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

ATTNBENCH_HD float bf16_to_float(std::uint16_t h) { return bits_float(static_cast<std::uint32_t>(h) << 16); }

ATTNBENCH_HD std::uint16_t float_to_bf16(float f) {
  std::uint32_t u = float_bits(f);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu) != 0) return 0x7fc0;  // NaN stays NaN
  u += 0x7fffu + ((u >> 16) & 1u);                                                  // round to nearest even
  return static_cast<std::uint16_t>(u >> 16);
}

ATTNBENCH_HD float fp16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (man << 13));  // inf / NaN
  if (exp == 0) {
    if (man == 0) return bits_float(sign);
    // subnormal: normalise
    int e = -1;
    do {
      man <<= 1;
      ++e;
    } while ((man & 0x400u) == 0);
    man &= 0x3ffu;
    return bits_float(sign | static_cast<std::uint32_t>(127 - 15 - e) << 23 | (man << 13));
  }
  return bits_float(sign | ((exp + 112u) << 23) | (man << 13));
}

ATTNBENCH_HD std::uint16_t float_to_fp16(float f) {
  const std::uint32_t u = float_bits(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t absu = u & 0x7fffffffu;
  if (absu >= 0x7f800000u) return sign | (absu > 0x7f800000u ? 0x7e00u : 0x7c00u);  // NaN / inf
  if (absu >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: overflow to inf
  if (absu < 0x38800000u) {                        // below the smallest normal half (2^-14): subnormal
    if (absu < 0x33000000u) return sign;           // < 2^-25 rounds to zero
    const std::uint32_t exp = absu >> 23;
    const std::uint32_t man = (absu & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126u - exp;  // 14 + (127 - exp) - 1 ... value = man * 2^(exp-150)
    // half subnormal unit is 2^-24: result = man * 2^(exp-150) / 2^-24 = man >> (126 - exp)
    const std::uint32_t q = man >> shift;
    const std::uint32_t rem = man & ((1u << shift) - 1u);
    const std::uint32_t half = 1u << (shift - 1u);
    std::uint32_t r = q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);
    return sign | static_cast<std::uint16_t>(r);
  }
  // normal: rebias exponent, round mantissa to 10 bits (carry may bump the exponent correctly)
  std::uint32_t v = absu - (112u << 23);
  v += 0xfffu + ((v >> 13) & 1u);
  return sign | static_cast<std::uint16_t>(v >> 13);
}

// Element i of a buffer of dtype t, as float.
ATTNBENCH_HD float load_as_float(const void* p, std::int64_t i, DType t) {
  switch (t) {
    case DType::bf16:
      return bf16_to_float(static_cast<const std::uint16_t*>(p)[i]);
    case DType::fp16:
      return fp16_to_float(static_cast<const std::uint16_t*>(p)[i]);
    default:
      return static_cast<const float*>(p)[i];
  }
}

// Stores v (rounded to t) as element i.
ATTNBENCH_HD void store_from_float(void* p, std::int64_t i, DType t, float v) {
  switch (t) {
    case DType::bf16:
      static_cast<std::uint16_t*>(p)[i] = float_to_bf16(v);
      break;
    case DType::fp16:
      static_cast<std::uint16_t*>(p)[i] = float_to_fp16(v);
      break;
    default:
      static_cast<float*>(p)[i] = v;
  }
}

}  // namespace attnbench
