// Scalar conversions of the storage dtypes against the compiler's own half type, exhaustively where cheap.
#include "core/dtype.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/errors.hpp"
#include "core/units.hpp"

namespace attnbench {
namespace {

TEST(DType, Fp16ToFloatMatchesFloat16ForEveryBitPattern) {
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    _Float16 ref;
    const std::uint16_t bits = static_cast<std::uint16_t>(h);
    std::memcpy(&ref, &bits, 2);
    const float want = static_cast<float>(ref);
    const float got = fp16_to_float(bits);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << h;
    } else {
      ASSERT_EQ(float_bits(got), float_bits(want)) << "bits " << h;
    }
  }
}

TEST(DType, FloatToFp16RoundsToNearestEvenLikeFloat16) {
  // Every fp16 value, the midpoints between neighbours, and points just off them.
  for (std::uint32_t h = 0; h < 0x7c00; ++h) {
    const float a = fp16_to_float(static_cast<std::uint16_t>(h));
    const float b = fp16_to_float(static_cast<std::uint16_t>(h + 1));
    for (float x : {a, (a + b) / 2, std::nextafter((a + b) / 2, 0.0f), std::nextafter((a + b) / 2, 1e9f)}) {
      for (float s : {x, -x}) {
        const _Float16 ref = static_cast<_Float16>(s);
        std::uint16_t want;
        std::memcpy(&want, &ref, 2);
        ASSERT_EQ(float_to_fp16(s), want) << "x=" << s;
      }
    }
  }
  EXPECT_EQ(float_to_fp16(1e6f), 0x7c00);
  EXPECT_EQ(float_to_fp16(-1e6f), 0xfc00);
  EXPECT_TRUE(std::isnan(fp16_to_float(float_to_fp16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(DType, Bf16RoundTripsAndRoundsToNearestEven) {
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    const float f = bf16_to_float(static_cast<std::uint16_t>(h));
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(bf16_to_float(float_to_bf16(f))));
      continue;
    }
    ASSERT_EQ(float_to_bf16(f), h);
  }
  // 1 + 2^-8 is exactly between 1 and 1 + 2^-7: ties to even (1.0); a hair above rounds up.
  EXPECT_EQ(float_to_bf16(1.0f + 1.0f / 256), float_to_bf16(1.0f));
  EXPECT_EQ(float_to_bf16(std::nextafter(1.0f + 1.0f / 256, 2.0f)), float_to_bf16(1.0f + 1.0f / 128));
}

TEST(DType, LoadStoreThroughEveryDtype) {
  for (DType t : {DType::bf16, DType::fp16, DType::fp32}) {
    unsigned char buf[16] = {};
    store_from_float(buf, 1, t, 0.75f);
    EXPECT_EQ(load_as_float(buf, 1, t), 0.75f) << dtype_name(t);
  }
}

TEST(DType, ParseNamesAndRejectsUnknown) {
  EXPECT_EQ(parse_dtype("bf16"), DType::bf16);
  EXPECT_EQ(parse_dtype("float16"), DType::fp16);
  EXPECT_EQ(parse_dtype("fp32"), DType::fp32);
  try {
    parse_dtype("int8", "--dtype");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--dtype"), std::string::npos);
  }
}

TEST(Units, FormatsBytes) {
  EXPECT_EQ(format_bytes(4), "4 B");
  EXPECT_EQ(format_bytes(16388), "16.00 KiB");
  EXPECT_EQ(format_bytes(974438412), "929.30 MiB");
  EXPECT_EQ(format_bytes(-33554432), "-32.00 MiB");
  EXPECT_EQ(format_bytes(2 * GiB), "2.00 GiB");
  EXPECT_EQ(ceil_div(131072, 64), 2048);
  EXPECT_EQ(round_up(262145, 8), 262152);
}

}  // namespace
}  // namespace attnbench
