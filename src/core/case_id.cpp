#include "core/case_id.hpp"

#include <charconv>
#include <type_traits>
#include <vector>

namespace attnbench {

namespace {

// The modes a case id starts with (engine's forward_mode_name; core sits below engine).
constexpr std::string_view kIdModes[] = {"decode", "extend", "verify"};

// `text` as a number of type T: digits only (no sign, no blank), the whole text. A leading zero is read here
// and refused by parse_case_id's rebuild.
template <class T>
bool id_number(std::string_view text, T& out) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::string format_case_id(const CaseIdParts& p) {
  std::string id = p.mode + "/" + p.model;
  if (p.layers) id += "/L=" + std::to_string(*p.layers);
  if (p.tp_size) id += "/tp=" + std::to_string(*p.tp_size);
  const std::string dist =
      p.length_dist.empty() ? "" : "/" + p.length_dist + "[" + std::to_string(p.length_min) + ",L]";
  if (p.trace) {
    id += "/trace=" + *p.trace + "/b=" + std::to_string(p.batch);
  } else if (p.mode == "extend") {
    id += "/b=" + std::to_string(p.batch) + "/prefix=" + std::to_string(p.prefix_len) +
          "/ext=" + std::to_string(p.extend_len) + dist;
  } else {
    id += "/b=" + std::to_string(p.batch) + "/kv=" + std::to_string(p.kv_len) + dist;
    if (p.mode == "verify") id += "/draft=" + std::to_string(p.draft_tokens);
  }
  id += "/p=" + std::to_string(p.page_size) + "/" + p.dtype;
  if (!p.kv_cache_dtype.empty()) id += "/kvcache=" + p.kv_cache_dtype;
  if (p.seed) id += "/seed=" + std::to_string(*p.seed);
  if (p.sinks) id += "/sinks";
  return id;
}

std::optional<CaseIdParts> parse_case_id(std::string_view id) {
  std::vector<std::string_view> seg;
  for (std::size_t start = 0;;) {
    const std::size_t slash = id.find('/', start);
    seg.push_back(id.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (seg.size() < 5) return std::nullopt;  // mode, model, b=, p=, dtype at least
  CaseIdParts p;
  p.mode = seg[0];
  p.model = seg[1];
  bool known_mode = false;
  for (const std::string_view m : kIdModes) known_mode = known_mode || p.mode == m;
  if (!known_mode || p.model.empty()) return std::nullopt;
  std::size_t i = 2;
  // The value of the next segment when it is "KEY=VALUE" (the segment is then taken); nullopt otherwise.
  const auto take = [&](std::string_view key) -> std::optional<std::string_view> {
    if (i >= seg.size() || seg[i].size() < key.size() || seg[i].substr(0, key.size()) != key)
      return std::nullopt;
    return seg[i++].substr(key.size());
  };
  // The next segment "KEY=N" into `out`; false when it is missing or N is no number. An optional segment is
  // taken when present: `required` false lets it be absent.
  const auto take_number = [&](std::string_view key, auto& out, bool required) {
    const std::optional<std::string_view> v = take(key);
    if (!v) return !required;
    using T = std::remove_reference_t<decltype(out)>;
    if constexpr (requires { out.emplace(); }) {
      typename T::value_type n{};
      if (!id_number(*v, n)) return false;
      out = n;
      return true;
    } else {
      return id_number(*v, out);
    }
  };
  if (!take_number("L=", p.layers, false) || !take_number("tp=", p.tp_size, false)) return std::nullopt;
  if (const auto trace = take("trace=")) p.trace = std::string(*trace);
  if (!take_number("b=", p.batch, true)) return std::nullopt;
  if (!p.trace) {
    if (p.mode == "extend") {
      if (!take_number("prefix=", p.prefix_len, true) || !take_number("ext=", p.extend_len, true))
        return std::nullopt;
    } else if (!take_number("kv=", p.kv_len, true)) {
      return std::nullopt;
    }
    // "/DIST[MIN,L]"
    if (i < seg.size() && seg[i].size() > 3 && seg[i].substr(seg[i].size() - 3) == ",L]") {
      const std::string_view d = seg[i++];
      const std::size_t open = d.find('[');
      if (open == std::string_view::npos || open == 0 ||
          !id_number(d.substr(open + 1, d.size() - 3 - open - 1), p.length_min))
        return std::nullopt;
      p.length_dist = d.substr(0, open);
    }
    if (p.mode == "verify" && !take_number("draft=", p.draft_tokens, true)) return std::nullopt;
  }
  if (!take_number("p=", p.page_size, true) || i >= seg.size() || seg[i].empty() ||
      seg[i].find('=') != std::string_view::npos)
    return std::nullopt;
  p.dtype = seg[i++];
  if (const auto kv = take("kvcache=")) {
    if (kv->empty()) return std::nullopt;
    p.kv_cache_dtype = *kv;
  }
  if (!take_number("seed=", p.seed, false)) return std::nullopt;
  if (i < seg.size() && seg[i] == "sinks") {
    p.sinks = true;
    ++i;
  }
  // Every segment read, and written back the same: no other spelling ("b=01", a segment out of order) passes.
  if (i != seg.size() || format_case_id(p) != id) return std::nullopt;
  return p;
}

}  // namespace attnbench
