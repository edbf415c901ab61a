// Checks of an integer as the user typed it (a command-line value, a config entry), made before it is
// converted: CLI11 2.1.2 converts with base 0 ("0100" would be octal 64) and keeps strtoll / strtoull's
// clamped result (99999999999999999999 would silently become 2^64 - 1). Each returns "" when the text is
// fine, else the reason, for the option's error message.
#pragma once

#include <string>
#include <string_view>

namespace attnbench {

// An optional '-', then decimal digits without a leading zero: "'0x10' is not a decimal integer",
// "'0100' has a leading zero (write it in decimal without one)".
std::string decimal_integer_problem(std::string_view text);

// Not negative (an option that is never negative: "-1" would wrap to 2^64 - 1): "'-1' is negative".
std::string negative_integer_problem(std::string_view text);

// A decimal integer (decimal_integer_problem passed) within 64 bits: unsigned up to 2^64 - 1, signed within
// [-2^63, 2^63 - 1]: "'18446744073709551616' is beyond 2^64 - 1 (18446744073709551615)".
std::string integer_range_problem(std::string_view text, bool is_unsigned);

}  // namespace attnbench
