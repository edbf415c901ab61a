// Byte units and human formatting. Figures in files are always plain bytes; these are for tables.
#pragma once

#include <cstdint>
#include <string>

namespace attnbench {

inline constexpr std::int64_t KiB = 1024;
inline constexpr std::int64_t MiB = 1024 * KiB;
inline constexpr std::int64_t GiB = 1024 * MiB;

// "929.29 MiB", "16.00 KiB", "4 B"; negative values keep their sign.
std::string format_bytes(std::int64_t bytes);

// Integer ceil(a / b) for positive b.
constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
constexpr std::int64_t round_up(std::int64_t a, std::int64_t b) { return ceil_div(a, b) * b; }

}  // namespace attnbench
