// core/integer_text.hpp: the checks behind the CLI's integer validators (tests/app/cli_test.cpp runs them through
// the command line).
#include "core/integer_text.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace attnbench {
namespace {

using Cases = std::vector<std::pair<std::string, std::string>>;  // text, expected problem ("" when fine)

TEST(IntegerText, DecimalOnly) {
  const Cases cases = {{"0", ""}, {"7", ""}, {"-3", ""}, {"18446744073709551615", ""},
                       {"0x10", "'0x10' is not a decimal integer"}, {"-", "'-' is not a decimal integer"},
                       {"", "'' is not a decimal integer"}, {"1e3", "'1e3' is not a decimal integer"},
                       {"0100", "'0100' has a leading zero (write it in decimal without one)"},
                       {"-07", "'-07' has a leading zero (write it in decimal without one)"}};
  for (const auto& [text, problem] : cases) EXPECT_EQ(decimal_integer_problem(text), problem) << text;
  EXPECT_EQ(negative_integer_problem("5"), "");
  EXPECT_EQ(negative_integer_problem("-1"), "'-1' is negative");
}

TEST(IntegerText, SixtyFourBitLimitsExactly) {
  const Cases unsigned_cases = {
      {"18446744073709551615", ""}, {"000018446744073709551615", ""},
      {"18446744073709551616", "'18446744073709551616' is beyond 2^64 - 1 (18446744073709551615)"},
      {"99999999999999999999", "'99999999999999999999' is beyond 2^64 - 1 (18446744073709551615)"}};
  for (const auto& [text, problem] : unsigned_cases) EXPECT_EQ(integer_range_problem(text, true), problem) << text;
  const Cases signed_cases = {
      {"9223372036854775807", ""}, {"-9223372036854775808", ""},
      {"9223372036854775808", "'9223372036854775808' is beyond 2^63 - 1 (9223372036854775807)"},
      {"-9223372036854775809", "'-9223372036854775809' is below -2^63"}};
  for (const auto& [text, problem] : signed_cases) EXPECT_EQ(integer_range_problem(text, false), problem) << text;
}

}  // namespace
}  // namespace attnbench
