// Storage dtypes of the KV cache, queries and outputs, and their scalar conversions.
// bf16 and fp16 are stored as raw 16-bit words; kernels accumulate in fp32. The conversions below are
// usable from host and CUDA code (ATTNBENCH_HD) and round to nearest even, as the hardware does.
// fp8_e4m3 (OCP E4M3FN: bias 7, no infinity, max 448) and fp8_e5m2 (bias 15, IEEE-like, max 57344) exist only
// as KV-cache dtypes (--kv-cache-dtype); they are stored as raw bytes.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "core/host_device.hpp"

namespace attnbench {

enum class DType : std::uint8_t { bf16, fp16, fp32, fp8_e4m3, fp8_e5m2 };

constexpr bool is_fp8(DType t) { return t == DType::fp8_e4m3 || t == DType::fp8_e5m2; }
constexpr int dtype_size(DType t) { return t == DType::fp32 ? 4 : is_fp8(t) ? 1 : 2; }
std::string_view dtype_name(DType t);
// Parses "bf16" | "fp16" | "fp32" (the model dtypes); throws InputError naming `what` otherwise.
DType parse_dtype(std::string_view s, std::string_view what = "--dtype");
// SGLang's --kv-cache-dtype: "auto" (= model_dtype), "bf16", "fp16" (each must equal the model dtype:
// attnbench models a KV cache in the model dtype or in fp8), "fp8_e4m3", "fp8_e5m2". InputError naming
// --kv-cache-dtype otherwise.
DType parse_kv_cache_dtype(std::string_view s, DType model_dtype);
// True when s is one of --kv-cache-dtype's spellings (checked before the model dtype is known).
bool is_kv_cache_dtype_name(std::string_view s);

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

// fp8 conversions. Hand-written: no Debian-packaged library provides an fp8 <-> float conversion for host
// code (CUDA kernels use cuda_fp8.h's __nv_fp8 types in their fast paths; these must agree with them, which
// tests/gpu check). Encoding rounds to nearest even and saturates to the largest finite value (CUDA's
// __NV_SATFINITE); NaN stays NaN. kMan = mantissa bits, kBias = exponent bias, kMaxCode = the largest finite
// magnitude's code (e4m3: 0x7e = 448, e5m2: 0x7b = 57344).
template <int kMan, int kBias, unsigned kMaxCode>
ATTNBENCH_HD std::uint8_t float_to_fp8_impl(float f) {
  const std::uint32_t u = float_bits(f);
  const std::uint8_t sign = static_cast<std::uint8_t>((u >> 24) & 0x80u);
  const std::uint32_t absu = u & 0x7fffffffu;
  if (absu > 0x7f800000u) return sign | 0x7fu;  // NaN (e4m3 and e5m2 both read 0x7f as NaN)
  const std::uint32_t exp32 = absu >> 23;
  const int e = static_cast<int>(exp32) - 127 + kBias;  // the fp8 biased exponent, before rounding
  if (e >= 1) {
    if (e > 40) return sign | static_cast<std::uint8_t>(kMaxCode);  // far out of range (and inf): saturate
    constexpr int shift = 23 - kMan;
    std::uint32_t v = absu - (static_cast<std::uint32_t>(127 - kBias) << 23);
    v += (1u << (shift - 1)) - 1u + ((v >> shift) & 1u);  // round to nearest even; a carry bumps the exponent
    const std::uint32_t code = v >> shift;
    return sign | static_cast<std::uint8_t>(code > kMaxCode ? kMaxCode : code);
  }
  // fp8 subnormal (unit 2^(1 - kBias - kMan)): below half a unit rounds to zero.
  if (static_cast<int>(exp32) < 127 - kBias - kMan) return sign;
  const std::uint32_t man = (absu & 0x7fffffu) | 0x800000u;
  const int shift = 150 + 1 - kBias - kMan - static_cast<int>(exp32);  // 1 .. 24
  const std::uint32_t q = man >> shift;
  const std::uint32_t rem = man & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1);
  const std::uint32_t r = q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);  // 2^kMan: smallest normal
  return sign | static_cast<std::uint8_t>(r);
}

template <int kMan, int kBias, bool kHasInf>
ATTNBENCH_HD float fp8_to_float_impl(std::uint8_t b) {
  const std::uint32_t sign = static_cast<std::uint32_t>(b & 0x80u) << 24;
  const std::uint32_t exp = (b & 0x7fu) >> kMan;
  const std::uint32_t man = b & ((1u << kMan) - 1u);
  constexpr std::uint32_t kExpMax = (1u << (7 - kMan)) - 1u;
  if (exp == kExpMax) {
    if (kHasInf) return bits_float(sign | 0x7f800000u | (man << (23 - kMan)));  // inf / NaN
    if (man == (1u << kMan) - 1u) return bits_float(sign | 0x7fc00000u);     // E4M3FN: only S.1111.111 is NaN
  }
  if (exp == 0) {  // subnormal: man * 2^(1 - kBias - kMan), exact in float
    const float unit = bits_float(static_cast<std::uint32_t>(127 + 1 - kBias - kMan) << 23);
    const float v = static_cast<float>(man) * unit;
    return sign ? -v : v;
  }
  return bits_float(sign | ((exp + 127u - kBias) << 23) | (man << (23 - kMan)));
}

ATTNBENCH_HD std::uint8_t float_to_fp8_e4m3(float f) { return float_to_fp8_impl<3, 7, 0x7eu>(f); }
ATTNBENCH_HD std::uint8_t float_to_fp8_e5m2(float f) { return float_to_fp8_impl<2, 15, 0x7bu>(f); }
ATTNBENCH_HD float fp8_e4m3_to_float(std::uint8_t b) { return fp8_to_float_impl<3, 7, false>(b); }
ATTNBENCH_HD float fp8_e5m2_to_float(std::uint8_t b) { return fp8_to_float_impl<2, 15, true>(b); }

// Element i of a buffer of dtype t, as float.
ATTNBENCH_HD float load_as_float(const void* p, std::int64_t i, DType t) {
  switch (t) {
    case DType::bf16:
      return bf16_to_float(static_cast<const std::uint16_t*>(p)[i]);
    case DType::fp16:
      return fp16_to_float(static_cast<const std::uint16_t*>(p)[i]);
    case DType::fp8_e4m3:
      return fp8_e4m3_to_float(static_cast<const std::uint8_t*>(p)[i]);
    case DType::fp8_e5m2:
      return fp8_e5m2_to_float(static_cast<const std::uint8_t*>(p)[i]);
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
    case DType::fp8_e4m3:
      static_cast<std::uint8_t*>(p)[i] = float_to_fp8_e4m3(v);
      break;
    case DType::fp8_e5m2:
      static_cast<std::uint8_t*>(p)[i] = float_to_fp8_e5m2(v);
      break;
    default:
      static_cast<float*>(p)[i] = v;
  }
}

// Rounds v to dtype t and back (what storing then loading gives).
ATTNBENCH_HD float round_to_dtype(float v, DType t) {
  switch (t) {
    case DType::bf16:
      return bf16_to_float(float_to_bf16(v));
    case DType::fp16:
      return fp16_to_float(float_to_fp16(v));
    case DType::fp8_e4m3:
      return fp8_e4m3_to_float(float_to_fp8_e4m3(v));
    case DType::fp8_e5m2:
      return fp8_e5m2_to_float(float_to_fp8_e5m2(v));
    default:
      return v;
  }
}

}  // namespace attnbench
