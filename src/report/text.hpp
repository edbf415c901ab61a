// Text helpers shared by the report writers (tables, Markdown).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace attnbench::text {

// One double through a printf format, e.g. fmt("%.3f", x).
inline std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// 1234567 -> "1,234,567" (and -1234 -> "-1,234").
inline std::string with_commas(std::int64_t v) {
  std::string s = std::to_string(v < 0 ? -v : v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return (v < 0 ? "-" : "") + s;
}

// {"a", "b", "c"} -> "a, b or c" (the accepted values in an error).
inline std::string one_of(const std::vector<std::string>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : i + 1 == v.size() ? " or " : ", ") + v[i];
  return s;
}

// A Markdown table cell: '|' escaped, line breaks as spaces.
inline std::string md(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '|') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

}  // namespace attnbench::text
