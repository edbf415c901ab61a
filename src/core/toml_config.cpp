#include "core/toml_config.hpp"

// toml++ header-only (Debian's libtomlplusplus-dev also ships a shared library; header-only keeps the binary free
// of it and lets the fuzz build instrument the parser). Exceptions: toml::parse throws toml::parse_error.
//
// toml++ 3.3 states assumptions about its input that malformed TOML can break ("[ =" at the end of a file makes
// parse_key run on '='; config_toml_fuzz finds more): with NDEBUG they become __builtin_assume (undefined
// behaviour), without it assert() aborts. Here every TOML_ASSERT_ASSUME / TOML_ASSERT is a checked condition
// that throws ParserAssumption, which parse() turns into "--config FILE: malformed TOML". toml++ derives
// TOML_ASSERT_ASSUME from TOML_ASSERT only without NDEBUG, so NDEBUG is lifted around the include (this is the
// only file that includes toml++, so no other definition of its inline functions exists).
namespace attnbench::toml_guard {
struct ParserAssumption {};
[[noreturn]] inline void fail() { throw ParserAssumption{}; }
}  // namespace attnbench::toml_guard
#pragma push_macro("NDEBUG")
#undef NDEBUG
#define TOML_ASSERT(expr) ((expr) ? static_cast<void>(0) : ::attnbench::toml_guard::fail())
// TOML_UNREACHABLE and TOML_ASSUME are __builtin_unreachable / __builtin_assume, not guarded by #ifndef: they are
// replaced after toml++'s preprocessor header (include-once) defines them. toml++ 3.3 does reach one:
// is_non_ascii_horizontal_whitespace() runs off its switch for U+00A1..U+0499 ('é' after a value), and it is
// noexcept, so fail() there is std::terminate. toml++ never sees such a code point: read_toml_config moves the
// whole range into the Private Use Area before parsing and back in every string it takes out (shift_out /
// shift_back below), whatever the context (a scan of "outside strings" that differs from toml++'s own reading of
// a malformed line cannot let one through). Any other assumption now ends in fail(), never in undefined
// behaviour.
#include <toml++/impl/preprocessor.h>
#undef TOML_UNREACHABLE
#define TOML_UNREACHABLE ::attnbench::toml_guard::fail()
#undef TOML_ASSUME
#define TOML_ASSUME(...) ((__VA_ARGS__) ? static_cast<void>(0) : ::attnbench::toml_guard::fail())
#include <toml++/toml.h>
#pragma pop_macro("NDEBUG")

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <istream>
#include <map>
#include <set>

#include "core/errors.hpp"
#include "core/files.hpp"

namespace attnbench {

namespace {

// toml++ 3.3's is_non_ascii_horizontal_whitespace() has no answer for U+00A1..U+0499 (see the top of this file).
// shift_out moves each such code point (2-byte UTF-8) by kShift to U+F0A1..U+F499 (3-byte UTF-8, Private Use
// Area, where the function answers "no"); shift_back undoes it in what comes out of the parser. A text that
// already holds a code point of the target range could not be read back unambiguously: shift_out returns the
// line of the first one (0 when there is none) and read_toml_config refuses the file.
constexpr std::uint32_t kShiftFirst = 0xA1, kShiftLast = 0x499, kShift = 0xF000;

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

std::string shift_out(std::string_view in, std::int64_t& reserved_line) {
  reserved_line = 0;
  std::string out;
  out.reserve(in.size() + in.size() / 2);
  std::int64_t line = 1;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const auto b = static_cast<unsigned char>(in[i]);
    if (b == '\n') ++line;
    if ((b & 0xE0) == 0xC0 && i + 1 < in.size() && is_continuation(in[i + 1])) {
      const std::uint32_t cp = ((b & 0x1Fu) << 6) | (static_cast<unsigned char>(in[i + 1]) & 0x3Fu);
      if (cp >= kShiftFirst && cp <= kShiftLast) {
        const std::uint32_t to = cp + kShift;
        out += static_cast<char>(0xE0 | (to >> 12));
        out += static_cast<char>(0x80 | ((to >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (to & 0x3F));
        ++i;
        continue;
      }
    } else if (b == 0xEF && i + 2 < in.size() && is_continuation(in[i + 1]) && is_continuation(in[i + 2])) {
      const std::uint32_t cp = (0xFu << 12) | ((static_cast<unsigned char>(in[i + 1]) & 0x3Fu) << 6) |
                               (static_cast<unsigned char>(in[i + 2]) & 0x3Fu);
      if (cp >= kShiftFirst + kShift && cp <= kShiftLast + kShift && reserved_line == 0) reserved_line = line;
    }
    out += in[i];
  }
  return out;
}

std::string shift_back(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (static_cast<unsigned char>(in[i]) == 0xEF && i + 2 < in.size() && is_continuation(in[i + 1]) &&
        is_continuation(in[i + 2])) {
      const std::uint32_t cp = (0xFu << 12) | ((static_cast<unsigned char>(in[i + 1]) & 0x3Fu) << 6) |
                               (static_cast<unsigned char>(in[i + 2]) & 0x3Fu);
      if (cp >= kShiftFirst + kShift && cp <= kShiftLast + kShift) {
        const std::uint32_t to = cp - kShift;
        out += static_cast<char>(0xC0 | (to >> 6));
        out += static_cast<char>(0x80 | (to & 0x3F));
        i += 2;
        continue;
      }
    }
    out += in[i];
  }
  return out;
}

// A key that can be an option name: letters, digits, '_' and '-', a letter or digit first. Everything CLI11
// names an option by fits; what does not could only be an unknown key, and is refused here so that no hostile
// key (control characters, "++" / "--", CLI11's section markers) travels further.
bool is_option_name(std::string_view key) {
  if (key.empty() || !std::isalnum(static_cast<unsigned char>(key[0]))) return false;
  return std::all_of(key.begin(), key.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; });
}

bool is_bare_key_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

// Line `line` (1-based) of `text`, without its newline.
std::string_view line_of(std::string_view text, std::int64_t line) {
  std::size_t begin = 0;
  for (std::int64_t l = 1; l < line; ++l) {
    const auto nl = text.find('\n', begin);
    if (nl == std::string_view::npos) return {};
    begin = nl + 1;
  }
  const auto end = text.find('\n', begin);
  std::string_view s = text.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

// The key of a "key = value" line, bare or quoted ("" when the line is not one): what a parse error on that
// line is about.
std::string key_of_line(std::string_view line) {
  std::size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos) return "";
  std::string key;
  if (line[i] == '"' || line[i] == '\'') {
    const auto close = line.find(line[i], i + 1);
    if (close == std::string_view::npos) return "";
    key = std::string(line.substr(i + 1, close - i - 1));
    i = close + 1;
  } else {
    const std::size_t start = i;
    while (i < line.size() && is_bare_key_char(line[i])) ++i;
    key = std::string(line.substr(start, i - start));
  }
  i = line.find_first_not_of(" \t", i);
  if (key.empty() || i == std::string_view::npos || line[i] != '=') return "";
  return key;
}

// The table of a "[name]" or "[[name]]" header line ("" when the line is not one).
std::string header_of_line(std::string_view line) {
  const std::size_t b = line.find_first_not_of(" \t");
  if (b == std::string_view::npos || line[b] != '[') return "";
  const std::size_t e = line.find(']', b);
  if (e == std::string_view::npos) return "";
  std::string_view name = line.substr(b + 1, e - b - 1);
  if (!name.empty() && name[0] == '[') name.remove_prefix(1);
  return std::string(name);
}

// Refuses a dotted key of more than kMaxKeyParts parts before toml++ builds one table per part (recursively:
// 300,000 parts overflow the stack). Scans tokens outside comments: bare words and quoted strings (basic,
// literal, multi-line) joined by dots with optional blanks; any such chain longer than the limit is either a
// key nested too deeply or invalid TOML, so refusing it never refuses a valid config attnbench could use.
// Returns the 1-based line of the first such chain, 0 when there is none. `non_ascii_line` receives the line of
// the first byte >= 0x80 outside strings and comments (0 when none): TOML allows none there (bare keys are
// ASCII, whitespace is space and tab), and toml++ 3.3 meets undefined behaviour on some of them.
std::int64_t deep_key_line(std::string_view t, std::int64_t& non_ascii_line) {
  non_ascii_line = 0;
  enum { none, after_token, after_dot } state = none;
  int parts = 0;
  std::int64_t line = 1;
  std::size_t i = t.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;  // a UTF-8 byte order mark (TOML allows one)
  const auto token = [&] {
    parts = state == after_dot ? parts + 1 : 1;
    state = after_token;
    return parts > kMaxKeyParts;
  };
  while (i < t.size()) {
    const char c = t[i];
    if (c == '\n') {
      ++line;
      state = none;
      ++i;
    } else if (c == ' ' || c == '\t') {
      ++i;
    } else if (c == '#') {
      while (i < t.size() && t[i] != '\n') ++i;
      state = none;
    } else if (c == '"' || c == '\'') {
      const std::int64_t start_line = line;
      const bool basic = c == '"';
      const bool multi = t.substr(i, 3) == std::string_view(basic ? "\"\"\"" : "'''");
      i += multi ? 3 : 1;
      for (;;) {
        if (i >= t.size()) break;
        const char d = t[i];
        if (basic && d == '\\') {
          if (i + 1 < t.size() && t[i + 1] == '\n') ++line;
          i += 2;
          continue;
        }
        if (d == '\n') {
          if (!multi) break;  // a single-line string ends (unterminated: toml++ stops there)
          ++line;
        }
        if (d == c && (!multi || t.substr(i, 3) == std::string_view(basic ? "\"\"\"" : "'''"))) {
          i += multi ? 3 : 1;
          if (multi)  // up to two quotes more belong to the string ("""a""""" is a"")
            for (int extra = 0; extra < 2 && i < t.size() && t[i] == c; ++extra) ++i;
          break;
        }
        ++i;
      }
      if (token()) return start_line;
    } else if (is_bare_key_char(c) || c == '+') {
      while (i < t.size() && (is_bare_key_char(t[i]) || t[i] == '+')) ++i;
      if (token()) return line;
    } else if (c == '.') {
      state = state == after_token ? after_dot : none;
      ++i;
    } else {
      if (static_cast<unsigned char>(c) >= 0x80 && non_ascii_line == 0) non_ascii_line = line;
      state = none;
      ++i;
    }
  }
  return 0;
}

// The shortest text that reads back as `v`, always with a '.' or an exponent so that it never passes for an
// integer (1e3 -> "1000.0").
std::string float_text(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // 'n': inf, nan
  return s;
}

std::string describe(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::boolean:
      return std::string("the boolean ") + (n.as_boolean()->get() ? "true" : "false");
    case toml::node_type::integer:
      return "the integer " + std::to_string(n.as_integer()->get());
    case toml::node_type::floating_point:
      return "the float " + float_text(n.as_floating_point()->get());
    case toml::node_type::string:
      return "the string \"" + printable(shift_back(n.as_string()->get()).substr(0, 40)) + "\"";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    default:
      return "a date or time";
  }
}

struct Entry {
  std::int64_t line = 0, column = 0;
  std::string key;
  const toml::node* node = nullptr;
};

// The entries of `t` in the order of the file.
std::vector<Entry> in_file_order(const toml::table& t) {
  std::vector<Entry> v;
  for (auto&& [k, node] : t)
    v.push_back({static_cast<std::int64_t>(k.source().begin.line), static_cast<std::int64_t>(k.source().begin.column),
                 shift_back(k.str()), &node});
  std::stable_sort(v.begin(), v.end(),
                   [](const Entry& a, const Entry& b) { return std::tie(a.line, a.column) < std::tie(b.line, b.column); });
  return v;
}

// Whether `t` or a table in it holds a key with a value (a section header alone is no option).
bool has_any_key(const toml::table& t) {
  for (auto&& [k, node] : t) {
    const toml::table* inner = node.as_table();
    if (!inner || has_any_key(*inner)) return true;
  }
  return false;
}

// A decimal integer in [2^63, 2^64) that toml++ refused ("'N' is not representable in 64 bits"): quoted in the
// text, it reaches CLI11 as its digits (uint64 options read them; others refuse them as before). Returns false
// when the error is another one or the number is 2^64 or beyond.
bool quote_big_integer(std::string& text, const toml::parse_error& e) {
  const std::string_view d = e.description();
  if (d.find("decimal integer") == std::string_view::npos ||
      d.find("' is not representable in 64 bits") == std::string_view::npos)
    return false;
  const auto q1 = d.find('\''), q2 = d.find('\'', q1 + 1);
  if (q1 == std::string_view::npos || q2 == std::string_view::npos) return false;
  const std::string digits(d.substr(q1 + 1, q2 - q1 - 1));
  if (digits.empty() || digits.size() > 20 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return false;
  if (digits.size() == 20 && digits > "18446744073709551615") return false;
  // The token ends just before the error's column (columns count code points).
  const auto line = static_cast<std::int64_t>(e.source().begin.line);
  const auto column = static_cast<std::int64_t>(e.source().begin.column);
  const std::string_view l = line_of(text, line);
  const std::size_t line_start = static_cast<std::size_t>(l.data() - text.data());
  for (std::size_t pos = l.find(digits); pos != std::string_view::npos; pos = l.find(digits, pos + 1)) {
    const std::size_t end = pos + digits.size();
    if (pos > 0 && (is_bare_key_char(l[pos - 1]) || l[pos - 1] == '+' || l[pos - 1] == '.')) continue;
    if (end < l.size() && (is_bare_key_char(l[end]) || l[end] == '.')) continue;
    std::int64_t end_column = 0;  // code points up to and including the token's last digit
    for (std::size_t k = 0; k < end; ++k)
      if ((static_cast<unsigned char>(l[k]) & 0xC0) != 0x80) ++end_column;
    if (end_column + 1 != column) continue;
    text.insert(line_start + end, "\"");
    text.insert(line_start + pos, "\"");
    return true;
  }
  return false;
}

}  // namespace

std::string config_where(const std::string& file, std::int64_t line) {
  return "--config " + printable(file) + (line > 0 ? " line " + std::to_string(line) : "");
}

void check_config_file(const std::string& path) { check_input_file(path, "--config", kMaxConfigBytes); }

std::vector<ConfigEntry> read_toml_config(std::string_view input, const std::string& file, const std::string& subcommand,
                                          const std::vector<std::string>& sections) {
  const auto where = [&file](std::int64_t line) { return config_where(file, line); };
  const auto is_subcommand = [&sections](std::string_view name) {
    return std::find(sections.begin(), sections.end(), name) != sections.end();
  };
  if (static_cast<std::int64_t>(input.size()) > kMaxConfigBytes)
    throw InputError(where(0) + ": larger than " + std::to_string(kMaxConfigBytes) + " bytes");
  if (const auto nul = input.find('\0'); nul != std::string_view::npos)
    throw InputError(where(1 + std::count(input.begin(), input.begin() + static_cast<std::ptrdiff_t>(nul), '\n')) +
                     ": contains a NUL byte");
  std::int64_t non_ascii = 0;
  if (const std::int64_t line = deep_key_line(input, non_ascii))
    throw InputError(where(line) + ": a key of more than " + std::to_string(kMaxKeyParts) +
                     " dotted parts (options are 'name' or 'section.name')");
  if (non_ascii > 0) {
    const std::string_view l = line_of(input, non_ascii);
    throw InputError(where(non_ascii) + ": a non-ASCII character outside a string or comment (in '" +
                     printable(l.substr(0, 80)) + (l.size() > 80 ? "...')" : "')"));
  }

  std::int64_t reserved = 0;
  std::string text = shift_out(input, reserved);
  if (reserved > 0)
    throw InputError(where(reserved) + ": a character in U+F0A1..U+F499 (Private Use Area; reserved by attnbench's " +
                     "TOML reader)");
  toml::table root;
  for (int attempt = 0;; ++attempt) {
    try {
      root = toml::parse(std::string_view(text), std::string_view(file));
      break;
    } catch (const toml_guard::ParserAssumption&) {
      throw InputError(where(0) + ": malformed TOML (rejected by the parser's internal checks)");
    } catch (const toml::parse_error& e) {
      if (attempt < 64 && quote_big_integer(text, e)) continue;
      const auto line = static_cast<std::int64_t>(e.source().begin.line);
      const std::string_view l = line_of(input, line);
      const std::string key = key_of_line(l);
      const std::string shown_line = " (in '" + printable(l.substr(0, 80)) + (l.size() > 80 ? "...'" : "'") + ")";
      const std::string desc = shift_back(e.description());
      if (desc.find("cannot redefine existing ") != std::string::npos) {  // toml++'s own echo of the key is unreliable
        if (!key.empty()) throw InputError(where(line) + ": duplicate key '" + printable(key) + "'" + shown_line);
        const std::string header = header_of_line(l);
        if (!header.empty())
          throw InputError(where(line) + ": duplicate section '[" + printable(header) + "]'" + shown_line);
      }
      std::string_view what = desc;
      if (what.rfind("Error while parsing ", 0) == 0) what.remove_prefix(std::strlen("Error while parsing "));
      throw InputError(where(line) + ": " + (key.empty() ? "" : "--" + printable(key) + ": ") + printable(what) +
                       shown_line);
    }
  }
  if (!has_any_key(root)) throw InputError(where(0) + ": the file is empty (no options)");

  std::vector<ConfigEntry> items;
  // One option's entry, for `section` (from_section: written in it).
  const auto add_option = [&](const Entry& e, const std::string& section, bool from_section) {
    if (!is_option_name(e.key)) throw InputError(where(e.line) + ": unknown key '" + printable(e.key) + "'");
    const toml::node& n = *e.node;
    ConfigEntry item;
    item.section = section;
    item.from_section = from_section;
    item.written = e.key;
    item.name = e.key;  // SGLang's spelling (context_length) names the same option as the CLI's (context-length)
    std::replace(item.name.begin(), item.name.end(), '_', '-');
    item.line = e.line;
    item.kind = describe(n);
    item.boolean = n.is_boolean();
    const auto scalar = [&](const toml::node& v) -> std::string {
      switch (v.type()) {
        case toml::node_type::string:
          return shift_back(v.as_string()->get());
        case toml::node_type::integer:
          if (v.as_integer()->flags() != toml::value_flags::none)
            throw InputError(where(e.line) + ": --" + e.key +
                             ": integers are written in decimal here (not hexadecimal, octal or binary)");
          return std::to_string(v.as_integer()->get());
        case toml::node_type::floating_point:
          return float_text(v.as_floating_point()->get());
        case toml::node_type::boolean:
          return v.as_boolean()->get() ? "true" : "false";
        case toml::node_type::array:
        case toml::node_type::table:
          throw InputError(where(e.line) + ": --" + e.key + ": an array holds plain values, not arrays or tables");
        default:
          throw InputError(where(e.line) + ": --" + e.key + ": dates and times are not option values");
      }
    };
    if (const toml::array* a = n.as_array()) {
      if (a->size() > kMaxArrayValues)
        throw InputError(where(e.line) + ": --" + e.key + ": more than " + std::to_string(kMaxArrayValues) +
                         " values");
      for (const toml::node& v : *a) item.inputs.push_back(scalar(v));
    } else {
      item.inputs.push_back(scalar(n));
    }
    items.push_back(std::move(item));
  };

  const std::vector<Entry> top = in_file_order(root);
  for (const Entry& e : top) {
    if (const toml::table* section = e.node->as_table()) {
      if (!is_subcommand(e.key))
        throw InputError(where(0) + ": unknown section '[" + printable(e.key) +
                         "]' (sections: [run], [validate], [memory])");
      const std::vector<Entry> inner = in_file_order(*section);
      for (const Entry& s : inner) {
        if (s.node->is_table())
          throw InputError(where(s.line) + ": nested table '[" + e.key + "." + printable(s.key) +
                           "]' (a section holds options only)");
        if (const toml::array* a = s.node->as_array(); a && !a->empty() && a->is_array_of_tables())
          throw InputError(where(s.line) + ": array of tables '[[" + e.key + "." + printable(s.key) +
                           "]]' (not supported)");
      }
      if (e.key != subcommand) continue;  // another subcommand's section
      for (const Entry& s : inner) add_option(s, e.key, true);
    } else if (const toml::array* a = e.node->as_array(); a && !a->empty() && a->is_array_of_tables()) {
      throw InputError(where(e.line) + ": array of tables '[[" + printable(e.key) + "]]' (not supported)");
    } else {
      add_option(e, subcommand, false);
    }
  }
  // The top level and the running subcommand's section are one table for duplicates (toml++ checks each), and
  // both spellings of a key (kv_cache_dtype, kv-cache-dtype) are one key.
  std::map<std::string, const ConfigEntry*> seen;
  for (const ConfigEntry& it : items) {
    const auto [at, fresh] = seen.emplace(it.name, &it);
    if (fresh) continue;
    const ConfigEntry& first = *at->second;
    std::string also;
    if (first.written != it.written) also = " (also written as '" + printable(first.written) + "')";
    if (first.from_section != it.from_section) also += " (at the top level and in [" + subcommand + "])";
    throw InputError(where(it.line) + ": duplicate key '" + printable(it.written) + "'" + also);
  }
  return items;
}

std::string config_file_of(const std::vector<std::string>& args) {
  std::string file;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i] == "--config" && i + 1 < args.size())
      file = args[++i];
    else if (args[i].rfind("--config=", 0) == 0)
      file = args[i].substr(std::strlen("--config="));
  }
  return file;
}

}  // namespace attnbench
