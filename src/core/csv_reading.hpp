// What attnbench's CSV readers share: fast-cpp-csv-parser (Debian libfccp-dev, header-only) included once
// with its GCC warning silenced, whole-cell number parsing, and its errors as short phrases.
#pragma once

// fccp copies file names with strncpy; GCC's -Wstringop-truncation flags that header code wherever it is
// inlined. The truncation is intended (fccp keeps 255 characters), so it is silenced here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#endif
#include <libfccp/csv.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <charconv>
#include <string>
#include <string_view>

namespace attnbench::csv {

// `s` without leading / trailing blanks and tabs.
inline std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The whole of `cell` (blanks around it allowed) as a T, locale-free and exact (fccp's own number parsing
// loses precision); false when it is not one (empty, fraction for an integer, trailing junk, overflow).
template <class T>
bool parse_number(std::string_view cell, T& out) {
  cell = trim_blanks(cell);
  if (cell.empty()) return false;
  const char* end = cell.data() + cell.size();
  const auto [ptr, ec] = std::from_chars(cell.data(), end, out);
  return ec == std::errc() && ptr == end;
}

// fccp's errors as short phrases (its own messages repeat the truncated file name). `header_hint` is appended
// to column errors, e.g. " (header must be request_id,prefix_len,extend_len)".
inline std::string describe_error(const io::error::base& e, const std::string& header_hint = "") {
  if (const auto* c = dynamic_cast<const io::error::missing_column_in_header*>(&e))
    return std::string("missing column '") + c->column_name + "'" + header_hint;
  if (const auto* c = dynamic_cast<const io::error::extra_column_in_header*>(&e))
    return std::string("unexpected column '") + c->column_name + "'" + header_hint;
  if (const auto* c = dynamic_cast<const io::error::duplicated_column_in_header*>(&e))
    return std::string("duplicate column '") + c->column_name + "'";
  if (dynamic_cast<const io::error::header_missing*>(&e)) return "empty file, no header";
  if (dynamic_cast<const io::error::too_few_columns*>(&e)) return "too few columns";
  if (dynamic_cast<const io::error::too_many_columns*>(&e)) return "too many columns";
  if (dynamic_cast<const io::error::escaped_string_not_closed*>(&e)) return "unterminated quoted field";
  if (dynamic_cast<const io::error::line_length_limit_exceeded*>(&e)) return "line longer than 2^24 - 1 bytes";
  return e.what();
}

}  // namespace attnbench::csv
