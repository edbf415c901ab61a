// The enum <-> name tables (core/enum_names.hpp) and the names each enum prints: what reports, CSV cells and
// error messages carry, so a table edit that renames or drops a value fails here.
#include "core/enum_names.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/dtype.hpp"
#include "device/device_factory.hpp"
#include "device/ledger.hpp"
#include "engine/forward_batch.hpp"
#include "engine/request_lengths.hpp"

namespace attnbench {
namespace {

enum class Color { red, green, blue };
constexpr EnumName<Color> kColors[] = {{Color::red, "red"}, {Color::green, "green"}, {Color::red, "rouge"}};

TEST(EnumNames, FirstEntryNamesAValueAndEveryEntryParses) {
  EXPECT_STREQ(enum_name(kColors, Color::red), "red") << "the first entry, not the later spelling";
  EXPECT_STREQ(enum_name(kColors, Color::green), "green");
  EXPECT_STREQ(enum_name(kColors, Color::blue), "?") << "no entry";
  EXPECT_EQ(enum_from_name(kColors, "red"), Color::red);
  EXPECT_EQ(enum_from_name(kColors, "rouge"), Color::red);
  EXPECT_EQ(enum_from_name(kColors, "green"), Color::green);
  EXPECT_EQ(enum_from_name(kColors, "blue"), std::nullopt);
  EXPECT_EQ(enum_from_name(kColors, "Red"), std::nullopt) << "exact spelling only";
  EXPECT_EQ(enum_from_name(kColors, ""), std::nullopt);
  static_assert(enum_from_name(kColors, "rouge") == Color::red, "usable at compile time");
}

TEST(EnumNames, EachEnumPrintsItsNames) {
  EXPECT_EQ(dtype_name(DType::bf16), "bf16");
  EXPECT_EQ(dtype_name(DType::fp16), "fp16");
  EXPECT_EQ(dtype_name(DType::fp32), "fp32");
  EXPECT_EQ(forward_mode_name(ForwardMode::decode), "decode");
  EXPECT_EQ(forward_mode_name(ForwardMode::extend), "extend");
  EXPECT_EQ(forward_mode_name(ForwardMode::target_verify), "verify");
  EXPECT_EQ(length_dist_name(LengthDist::fixed), "fixed");
  EXPECT_EQ(length_dist_name(LengthDist::uniform), "uniform");
  EXPECT_EQ(length_dist_name(LengthDist::zipf), "zipf");
  EXPECT_STREQ(mem_kind_name(MemKind::device), "device");
  EXPECT_STREQ(mem_kind_name(MemKind::pinned), "pinned");
  EXPECT_STREQ(mem_kind_name(MemKind::host), "host");
  EXPECT_STREQ(device_choice_name(DeviceChoice::automatic), "auto");
  EXPECT_STREQ(device_choice_name(DeviceChoice::cpu), "cpu");
  EXPECT_STREQ(device_choice_name(DeviceChoice::cuda), "cuda");
}

TEST(EnumNames, NamesParseBackToTheirValue) {
  for (const DType t : {DType::bf16, DType::fp16, DType::fp32}) EXPECT_EQ(parse_dtype(dtype_name(t)), t);
  for (const DeviceChoice c : {DeviceChoice::automatic, DeviceChoice::cpu, DeviceChoice::cuda})
    EXPECT_EQ(parse_device_choice(device_choice_name(c)), c);
  for (const LengthDist d : {LengthDist::fixed, LengthDist::uniform, LengthDist::zipf})
    EXPECT_EQ(parse_length_dist(std::string(length_dist_name(d))), d);
}

}  // namespace
}  // namespace attnbench
