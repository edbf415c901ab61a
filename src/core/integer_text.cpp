#include "core/integer_text.hpp"

namespace attnbench {

namespace {

// A decimal integer's digits, without sign and leading zeros, compared with `limit` (digits): whether it is
// greater.
bool digits_beyond(std::string_view digits, std::string_view limit) {
  while (digits.size() > 1 && digits[0] == '0') digits.remove_prefix(1);
  return digits.size() != limit.size() ? digits.size() > limit.size() : digits > limit;
}

}  // namespace

std::string decimal_integer_problem(std::string_view text) {
  const std::string s(text);
  std::size_t i = (!s.empty() && s[0] == '-') ? 1 : 0;
  if (i == s.size()) return "'" + s + "' is not a decimal integer";
  for (std::size_t k = i; k < s.size(); ++k)
    if (s[k] < '0' || s[k] > '9') return "'" + s + "' is not a decimal integer";
  if (s.size() - i > 1 && s[i] == '0') return "'" + s + "' has a leading zero (write it in decimal without one)";
  return {};
}

std::string negative_integer_problem(std::string_view text) {
  if (!text.empty() && text[0] == '-') return "'" + std::string(text) + "' is negative";
  return {};
}

std::string integer_range_problem(std::string_view text, bool is_unsigned) {
  const std::string s(text);
  const bool negative = !s.empty() && s[0] == '-';
  const std::string_view digits = std::string_view(s).substr(negative ? 1 : 0);
  if (is_unsigned && digits_beyond(digits, "18446744073709551615"))
    return "'" + s + "' is beyond 2^64 - 1 (18446744073709551615)";
  if (!is_unsigned && !negative && digits_beyond(digits, "9223372036854775807"))
    return "'" + s + "' is beyond 2^63 - 1 (9223372036854775807)";
  if (!is_unsigned && negative && digits_beyond(digits, "9223372036854775808")) return "'" + s + "' is below -2^63";
  return {};
}

}  // namespace attnbench
