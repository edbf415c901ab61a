#include "report/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <variant>

#include "core/errors.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "report/text.hpp"

namespace attnbench {

std::string sample_key(const ResultRow& row) { return row.case_id + "|" + row.backend + "|" + row.timing; }

// ---- loading --------------------------------------------------------------------------------------------

namespace {

using text::fmt;

using json = nlohmann::ordered_json;  // keeps the environment in file order

// A JSON value as the typed cell of a column of kind `kind` (results_csv's one column table decides the
// kinds); what the value should have been when it does not fit. Reports written before the typed writer
// stored empty text as null and ref_pass as 1 / 0: both are still read.
std::variant<ResultCell, std::string> json_cell(const json& v, CellKind kind) {
  switch (kind) {
    case CellKind::text:
      if (v.is_null()) return ResultCell{};
      if (v.is_string()) return ResultCell{v.get<std::string>()};
      return std::string("text or null");
    case CellKind::integer:
    case CellKind::unsigned_integer:
      if (v.is_number_integer() && (kind == CellKind::integer || v.get<std::int64_t>() >= 0))
        return ResultCell{v.get<std::int64_t>()};
      return std::string(kind == CellKind::integer ? "an integer in int range" : "a non-negative integer");
    case CellKind::real_or_empty:
      if (v.is_null()) return ResultCell{};
      if (v.is_number()) return ResultCell{v.get<double>()};
      return std::string("a number or null");
    case CellKind::integer_or_empty:
      if (v.is_null()) return ResultCell{};
      if (v.is_number_integer()) return ResultCell{v.get<std::int64_t>()};
      return std::string("an integer or null");
    case CellKind::bool_or_empty:
      if (v.is_null()) return ResultCell{};
      if (v.is_boolean()) return ResultCell{v.get<bool>()};
      if (v.is_number_integer() && (v.get<std::int64_t>() == 0 || v.get<std::int64_t>() == 1))
        return ResultCell{v.get<std::int64_t>() == 1};
      return std::string("true, false, 1, 0 or null");
  }
  return std::string("a known column kind");
}

std::string version_error(const std::string& path, const std::string& version) {
  return "results " + path + ": schema_version " + version + ", this attnbench reads " +
         std::to_string(kResultsSchemaVersion);
}

ResultSet load_json(const std::string& path, const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError("results " + path + ": not valid JSON (byte " + std::to_string(e.byte) +
                     (e.byte >= text.size() ? ": the file ends early, truncated?" : "") + ")");
  }
  if (!j.is_object())
    throw InputError("results " + path + ": not an attnbench results report (not a JSON object)");
  if (j.contains("schema") && j["schema"] != "attnbench.results")
    throw InputError("results " + path + ": schema " + j["schema"].dump() +
                     ", expected \"attnbench.results\"");
  if (j.contains("schema_version") && j["schema_version"] != kResultsSchemaVersion)
    throw InputError(version_error(path, j["schema_version"].dump()));
  if (!j.contains("rows") || !j["rows"].is_array())
    throw InputError("results " + path + ": no \"rows\" array");

  ResultSet set;
  if (j.contains("environment")) {
    if (!j["environment"].is_object())
      throw InputError("results " + path + ": \"environment\" is not an object");
    for (const auto& [k, v] : j["environment"].items())
      set.environment.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
  }
  if (j.contains("command") && j["command"].is_string()) set.command = j["command"].get<std::string>();

  std::size_t index = 0;
  for (const json& o : j["rows"]) {
    const std::string where = "results " + path + ": row " + std::to_string(index++);
    if (!o.is_object()) throw InputError(where + ": not an object");
    ResultRow row;
    // The version first: a row of another version may hold anything in its other columns.
    const auto& names = results_csv_columns();
    const auto& kinds = results_column_kinds();
    for (std::size_t c = 0; c < names.size(); ++c) {
      if (!o.contains(names[c])) throw InputError(where + ": missing column '" + names[c] + "'");
      const auto cell = json_cell(o[names[c]], kinds[c]);
      if (std::holds_alternative<std::string>(cell) || !set_result_cell(row, c, std::get<ResultCell>(cell)))
        throw InputError(where + ": " + names[c] + " " + o[names[c]].dump() + " is not " +
                         (std::holds_alternative<std::string>(cell) ? std::get<std::string>(cell) : "in range"));
      if (c == 0 && row.schema_version != kResultsSchemaVersion)
        throw InputError(version_error(path, std::to_string(row.schema_version)));
    }
    if (o.contains("samples_us") && !o["samples_us"].is_null()) {
      const json& s = o["samples_us"];
      if (!s.is_array()) throw InputError(where + ": samples_us is not an array");
      row.samples_us.reserve(s.size());
      for (const json& x : s) {
        if (!x.is_number()) throw InputError(where + ": samples_us holds " + x.dump() + ", not a number");
        row.samples_us.push_back(x.get<double>());
      }
      if (!row.samples_us.empty()) set.samples[sample_key(row)] = row.samples_us;
    }
    if (o.contains("ledger") && !o["ledger"].is_null()) {
      const json& l = o["ledger"];
      if (!l.is_array()) throw InputError(where + ": ledger is not an array");
      for (const json& g : l) {
        const bool well_formed =
            g.is_object() && g.contains("phase") && g["phase"].is_string() && g.contains("tag") &&
            g["tag"].is_string() && g.contains("kind") && g["kind"].is_string() && g.contains("bytes") &&
            g["bytes"].is_number_integer() && (!g.contains("shared") || g["shared"].is_boolean()) &&
            (!g.contains("count") || g["count"].is_number_integer());
        if (!well_formed)
          throw InputError(where + ": ledger entry " + g.dump() +
                           " is not {phase, tag, kind: text, bytes: integer, shared: bool, count: integer}");
        ResultRow::LedgerGroup lg;
        lg.phase = g["phase"].get<std::string>();
        lg.tag = g["tag"].get<std::string>();
        lg.kind = g["kind"].get<std::string>();
        lg.bytes = g["bytes"].get<std::int64_t>();
        lg.shared = g.value("shared", false);
        lg.count = g.value("count", 0);
        row.ledger.push_back(std::move(lg));
      }
    }
    set.rows.push_back(std::move(row));
  }
  return set;
}

// Throws InputError `prefix: two rows for KEY` when `rows` holds a pairing key twice.
void check_unique_keys(const std::vector<ResultRow>& rows, const std::string& prefix) {
  std::set<std::string> seen;
  for (const ResultRow& r : rows)
    if (!seen.insert(sample_key(r)).second) throw InputError(prefix + ": two rows for " + sample_key(r));
}

}  // namespace

ResultSet load_result_set(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError("results " + path + ": is a directory");
  const std::string ext = std::filesystem::path(path).extension().string();
  ResultSet set;
  if (ext == ".csv") {
    set.rows = read_results_csv(path);
  } else {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InputError("results " + path + ": cannot read");
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string text = ss.str();
    const auto first = text.find_first_not_of(" \t\r\n");
    if (ext == ".json" || (first != std::string::npos && text[first] == '{')) {
      set = load_json(path, text);
    } else {
      set.rows = read_results_csv(path);
    }
  }
  check_unique_keys(set.rows, "results " + path);
  return set;
}

// ---- statistics -----------------------------------------------------------------------------------------

MannWhitney mann_whitney_u(std::span<const double> a, std::span<const double> b) {
  if (a.empty() || b.empty()) throw std::invalid_argument("mann_whitney_u: a sample set is empty");
  struct Obs {
    double v;
    bool from_a;
  };
  std::vector<Obs> all;
  all.reserve(a.size() + b.size());
  for (const double x : a) all.push_back({x, true});
  for (const double x : b) all.push_back({x, false});
  for (const Obs& o : all)
    if (!std::isfinite(o.v)) throw std::invalid_argument("mann_whitney_u: a sample is not a finite number");
  std::sort(all.begin(), all.end(), [](const Obs& x, const Obs& y) { return x.v < y.v; });

  // Mid-ranks (1-based), and the tie term sum(t^3 - t) over groups of equal values.
  const double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size()), n = n1 + n2;
  double rank_sum_a = 0, tie_term = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t k = i;
    while (k < all.size() && all[k].v == all[i].v) ++k;
    const double t = static_cast<double>(k - i);
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(k)) / 2.0;
    for (std::size_t m = i; m < k; ++m)
      if (all[m].from_a) rank_sum_a += mid_rank;
    tie_term += t * t * t - t;
    i = k;
  }
  MannWhitney r;
  r.u = rank_sum_a - n1 * (n1 + 1) / 2.0;
  const double mu = n1 * n2 / 2.0;
  const double var = n1 * n2 / 12.0 * ((n + 1) - (n > 1 ? tie_term / (n * (n - 1)) : 0.0));
  if (var <= 0) return r;  // every value ties: no evidence of a difference (z = 0, p = 1)
  const double d = r.u - mu;
  const double corrected = std::max(0.0, std::abs(d) - 0.5);  // continuity correction towards the mean
  r.z = std::copysign(corrected / std::sqrt(var), d);
  r.p_value = std::min(1.0, std::erfc(std::abs(r.z) / std::sqrt(2.0)));
  return r;
}

// ---- comparing ------------------------------------------------------------------------------------------

const std::vector<std::string>& compared_memory_columns() {
  static const std::vector<std::string> cols = {"ctor_device_bytes",        "ctor_pinned_bytes",
                                                "graph_state_device_bytes", "capture_device_bytes",
                                                "capture_pinned_bytes",     "step_peak_device_bytes"};
  return cols;
}

namespace {

std::optional<std::int64_t> memory_column(const ResultRow& r, const std::string& column) {
  if (column == "ctor_device_bytes") return r.ctor_device_bytes;
  if (column == "ctor_pinned_bytes") return r.ctor_pinned_bytes;
  if (column == "graph_state_device_bytes") return r.graph_state_device_bytes;
  if (column == "capture_device_bytes") return r.capture_device_bytes;
  if (column == "capture_pinned_bytes") return r.capture_pinned_bytes;
  if (column == "step_peak_device_bytes") return r.step_peak_device_bytes;
  throw std::logic_error("memory_column: unknown column " + column);
}

std::string pct(double frac) { return fmt("%+.1f%%", frac * 100.0); }

std::optional<std::string> env_value(const Environment& env, const std::string& key) {
  for (const auto& [k, v] : env)
    if (k == key && !v.empty()) return v;
  return std::nullopt;
}

// The GPU a set ran on: env gpu_name, else the rows' device column when every row names the same one.
std::optional<std::string> gpu_of(const ResultSet& s) {
  if (auto g = env_value(s.environment, "gpu_name")) return g;
  std::set<std::string> devices;
  for (const ResultRow& r : s.rows)
    if (!r.device.empty()) devices.insert(r.device);
  if (devices.size() == 1) return *devices.begin();
  return std::nullopt;
}

void check_schema_versions(const ResultSet& base, const ResultSet& now) {
  const auto versions = [](const ResultSet& s, const char* side) {
    std::set<int> v;
    for (const ResultRow& r : s.rows) v.insert(r.schema_version);
    if (v.size() > 1)
      throw InputError(std::string("compare: ") + side + " mixes schema versions " +
                       std::to_string(*v.begin()) + " and " + std::to_string(*v.rbegin()));
    return v;
  };
  const std::set<int> a = versions(base, "BASE"), b = versions(now, "NEW");
  if (!a.empty() && !b.empty() && *a.begin() != *b.begin())
    throw InputError("compare: BASE has schema_version " + std::to_string(*a.begin()) + ", NEW has " +
                     std::to_string(*b.begin()) +
                     "; results of different schema versions cannot be compared");
}

// Throws unless allowed; returns the accepted differences as warnings.
std::vector<std::string> check_environments(const ResultSet& base, const ResultSet& now, bool allow) {
  std::vector<std::string> diffs;
  const auto ga = gpu_of(base), gb = gpu_of(now);
  if (ga && gb && *ga != *gb) diffs.push_back("BASE ran on " + *ga + ", NEW on " + *gb);
  const auto da = env_value(base.environment, "driver_version"),
             db = env_value(now.environment, "driver_version");
  if (da && db && *da != *db) diffs.push_back("BASE ran on driver " + *da + ", NEW on driver " + *db);
  if (!diffs.empty() && !allow) {
    std::string msg = "compare: ";
    for (std::size_t i = 0; i < diffs.size(); ++i) msg += (i ? "; " : "") + diffs[i];
    throw InputError(msg + "; --allow-env-mismatch to compare anyway");
  }
  return diffs;
}

// The latency verdict of one pair (fills medians, change, verdict, method, p_value).
void judge_latency(PairResult& p, const ResultRow& a, const ResultRow& b, const std::vector<double>* sa,
                   const std::vector<double>* sb, const CompareOptions& opt) {
  if (a.status == "skipped" || b.status == "skipped") {
    p.verdict = "skipped";
    return;
  }
  p.verdict = "n/a";
  if (a.status != "ok" || b.status != "ok") return;

  std::optional<MannWhitney> mw;
  if (sa && sb && !sa->empty() && !sb->empty()) {
    p.base_median_us = summarize(*sa).median;
    p.new_median_us = summarize(*sb).median;
    mw = mann_whitney_u(*sb, *sa);
  } else {
    p.base_median_us = a.step_median_us;
    p.new_median_us = b.step_median_us;
  }
  if (!p.base_median_us || !p.new_median_us || *p.base_median_us <= 0) return;
  const double change = (*p.new_median_us - *p.base_median_us) / *p.base_median_us;
  p.change = change;
  const bool big = std::abs(change) >= opt.min_effect;
  const char* direction = change > 0 ? "slower" : "faster";

  if (mw) {
    p.method = "mann-whitney";
    p.p_value = mw->p_value;
    const bool significant = mw->p_value < opt.alpha;
    p.verdict = !big ? "same" : significant ? direction : "ambiguous";
    return;
  }
  p.method = "p10-p90";
  if (a.step_p10_us && a.step_p90_us && b.step_p10_us && b.step_p90_us) {
    const bool disjoint = *b.step_p10_us > *a.step_p90_us || *a.step_p10_us > *b.step_p90_us;
    p.verdict = !big ? "same" : disjoint ? direction : "ambiguous";
  } else {
    p.verdict = big ? "ambiguous" : "same";  // no ranges: a large change cannot be told from noise
  }
}

PairResult compare_pair(const ResultRow& a, const ResultRow& b, const ResultSet& base, const ResultSet& now,
                        const CompareOptions& opt) {
  PairResult p;
  p.case_id = a.case_id;
  p.backend = a.backend;
  p.timing = a.timing;
  p.base_status = a.status;
  p.new_status = b.status;
  const std::string key = sample_key(a);
  // Raw samples: the set's map first (what the caller supplied), else the row's own samples_us.
  const auto find = [&key](const SampleMap& m, const ResultRow& r) -> const std::vector<double>* {
    const auto it = m.find(key);
    if (it != m.end()) return &it->second;
    return r.samples_us.empty() ? nullptr : &r.samples_us;
  };
  judge_latency(p, a, b, find(base.samples, a), find(now.samples, b), opt);
  if (p.verdict == "slower" && p.change && *p.change > opt.max_slowdown)
    p.failures.push_back(
        key + ": " + pct(*p.change) + " slower (" +
        (p.p_value ? "Mann-Whitney p = " + fmt("%.2g", *p.p_value) : std::string("p10-p90 disjoint")) +
        "), beyond the allowed " + fmt("%.1f%%", opt.max_slowdown * 100));

  for (const std::string& col : compared_memory_columns()) {
    const auto ma = memory_column(a, col), mb = memory_column(b, col);
    if (!ma || !mb) continue;
    MemoryDelta d{col, *ma, *mb};
    if (d.delta() > opt.max_memory_growth)
      p.failures.push_back(key + ": " + col + " grew by " + std::to_string(d.delta()) + " B (" +
                           format_bytes(d.delta()) + "; " + std::to_string(*ma) + " -> " +
                           std::to_string(*mb) + ", allowed " + std::to_string(opt.max_memory_growth) +
                           " B)");
    p.memory.push_back(d);
  }

  if (a.status != b.status) {
    p.correctness.push_back("status " + a.status + " -> " + b.status);
    if (a.status == "ok" && (b.status == "failed" || b.status == "oom"))
      p.failures.push_back(key + ": status ok -> " + b.status + (b.note.empty() ? "" : " (" + b.note + ")"));
  }
  if (a.ref_pass != b.ref_pass) {
    const auto s = [](const std::optional<bool>& v) {
      return v ? std::string(*v ? "1" : "0") : std::string("empty");
    };
    p.correctness.push_back("ref_pass " + s(a.ref_pass) + " -> " + s(b.ref_pass));
    if (a.ref_pass == true && b.ref_pass == false)
      p.failures.push_back(key + ": ref_pass 1 -> 0 (max abs error " +
                           (b.ref_max_abs_err ? fmt("%.3g", *b.ref_max_abs_err) : std::string("?")) + ")");
  }
  const std::set<std::string> ea = bitwise_equal_names(a.bitwise_equal_to), eb = bitwise_equal_names(b.bitwise_equal_to);
  for (const std::string& name : ea)
    if (!eb.count(name)) p.correctness.push_back("bitwise_equal_to lost " + name);
  for (const std::string& name : eb)
    if (!ea.count(name)) p.correctness.push_back("bitwise_equal_to gained " + name);
  return p;
}

}  // namespace

CompareResult compare_results(const ResultSet& base, const ResultSet& now, const CompareOptions& opt) {
  check_schema_versions(base, now);
  check_unique_keys(base.rows, "compare: BASE");
  check_unique_keys(now.rows, "compare: NEW");
  CompareResult r;
  r.options = opt;
  for (const std::string& d : check_environments(base, now, opt.allow_env_mismatch))
    r.warnings.push_back(d + " (compared anyway: --allow-env-mismatch)");

  std::map<std::string, const ResultRow*> by_key;
  for (const ResultRow& row : now.rows) by_key[sample_key(row)] = &row;
  std::set<std::string> base_keys;
  for (const ResultRow& a : base.rows) {
    const std::string key = sample_key(a);
    base_keys.insert(key);
    const auto it = by_key.find(key);
    if (it == by_key.end()) {
      r.missing_in_new.push_back(key);
      r.failures.push_back(key + ": in BASE, missing in NEW");
      continue;
    }
    r.pairs.push_back(compare_pair(a, *it->second, base, now, opt));
    for (const std::string& f : r.pairs.back().failures) r.failures.push_back(f);
  }
  for (const ResultRow& b : now.rows)
    if (!base_keys.count(sample_key(b))) r.only_in_new.push_back(sample_key(b));
  r.failed = !r.failures.empty();
  return r;
}

// ---- writers --------------------------------------------------------------------------------------------

namespace {

struct Counts {
  std::map<std::string, int> verdicts;
  int memory_growth = 0, correctness_regressions = 0, correctness_changes = 0;
};

Counts count(const CompareResult& r) {
  Counts c;
  for (const PairResult& p : r.pairs) {
    ++c.verdicts[p.verdict];
    if (std::any_of(p.memory.begin(), p.memory.end(),
                    [&](const MemoryDelta& d) { return d.delta() > r.options.max_memory_growth; }))
      ++c.memory_growth;
    if (!p.correctness.empty()) ++c.correctness_changes;
    if (std::any_of(p.failures.begin(), p.failures.end(), [](const std::string& f) {
          return f.find("status ok ->") != std::string::npos ||
                 f.find("ref_pass 1 -> 0") != std::string::npos;
        }))
      ++c.correctness_regressions;
  }
  return c;
}

std::string summary_line(const CompareResult& r) {
  const Counts c = count(r);
  std::string s = std::string("compare: ") + (r.failed ? "FAIL" : "PASS") + ": " +
                  std::to_string(r.pairs.size()) + " pairs: ";
  const char* order[] = {"faster", "slower", "same", "ambiguous", "skipped", "n/a"};
  for (std::size_t i = 0; i < std::size(order); ++i) {
    const auto it = c.verdicts.find(order[i]);
    s += (i ? ", " : "") + std::to_string(it == c.verdicts.end() ? 0 : it->second) + " " + order[i];
  }
  s += "; " + std::to_string(c.memory_growth) + " with memory growth, " +
       std::to_string(c.correctness_regressions) + " correctness regressions, " +
       std::to_string(r.missing_in_new.size()) + " missing in NEW, " + std::to_string(r.only_in_new.size()) +
       " only in NEW";
  s += " (gate: slower by > " + fmt("%.1f%%", r.options.max_slowdown * 100) + " at alpha " +
       fmt("%g", r.options.alpha) + ", min effect " + fmt("%.1f%%", r.options.min_effect * 100) +
       ", memory growth > " + std::to_string(r.options.max_memory_growth) + " B)";
  return s;
}

std::string memory_summary(const PairResult& p) {
  if (p.memory.empty()) return "-";
  std::string s;
  for (const MemoryDelta& d : p.memory) {
    if (d.delta() == 0) continue;
    std::string col = d.column.substr(0, d.column.size() - std::string("_bytes").size());
    s += (s.empty() ? "" : ", ") + col + " " + (d.delta() > 0 ? "+" : "") + format_bytes(d.delta());
  }
  return s.empty() ? "=" : s;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

std::string pad(const std::string& s, std::size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}
std::string lpad(const std::string& s, std::size_t w) {
  return s.size() >= w ? s : std::string(w - s.size(), ' ') + s;
}

std::string opt_us(const std::optional<double>& v) { return v ? fmt("%.1f", *v) : "-"; }

std::string csv_number(const std::optional<double>& v) {
  if (!v) return "";
  std::ostringstream os;
  os << std::setprecision(17) << *v;
  return os.str();
}

std::string md_cell(std::string s) {
  std::string out;
  for (const char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

// A pair worth a line in the Markdown: anything but "same latency, same memory, same correctness".
bool notable(const PairResult& p) {
  return p.verdict != "same" || !p.failures.empty() || !p.correctness.empty() ||
         std::any_of(p.memory.begin(), p.memory.end(), [](const MemoryDelta& d) { return d.delta() != 0; });
}

}  // namespace

void write_compare_table(std::ostream& os, const CompareResult& r) {
  std::size_t wc = 7, wb = 7;
  for (const PairResult& p : r.pairs) {
    wc = std::max(wc, p.case_id.size());
    wb = std::max(wb, p.backend.size());
  }
  os << pad("case_id", wc + 2) << pad("backend", wb + 2) << pad("timing", 8) << lpad("base us", 11)
     << lpad("new us", 11) << lpad("change", 9) << "  " << pad("verdict", 10) << lpad("p", 8) << "  "
     << pad("gate", 6) << "memory (new - base), correctness\n";
  for (const PairResult& p : r.pairs) {
    std::string tail = memory_summary(p);
    if (!p.correctness.empty()) tail += "; " + join(p.correctness, "; ");
    os << pad(p.case_id, wc + 2) << pad(p.backend, wb + 2) << pad(p.timing, 8)
       << lpad(opt_us(p.base_median_us), 11) << lpad(opt_us(p.new_median_us), 11)
       << lpad(p.change ? pct(*p.change) : "-", 9) << "  " << pad(p.verdict, 10)
       << lpad(p.p_value ? fmt("%.2g", *p.p_value) : "-", 8) << "  "
       << pad(p.failures.empty() ? "ok" : "FAIL", 6) << tail << "\n";
  }
  if (!r.missing_in_new.empty()) {
    os << "\nmissing in NEW (" << r.missing_in_new.size() << "):\n";
    for (const auto& k : r.missing_in_new) os << "  " << k << "\n";
  }
  if (!r.only_in_new.empty()) {
    os << "\nonly in NEW (" << r.only_in_new.size() << ", not compared):\n";
    for (const auto& k : r.only_in_new) os << "  " << k << "\n";
  }
  if (!r.warnings.empty()) {
    os << "\nwarnings:\n";
    for (const auto& w : r.warnings) os << "  " << w << "\n";
  }
  if (!r.failures.empty()) {
    os << "\nfailures (" << r.failures.size() << "):\n";
    for (const auto& f : r.failures) os << "  " << f << "\n";
  }
  os << "\n" << summary_line(r) << "\n";
}

void write_compare_markdown(std::ostream& os, const CompareResult& r) {
  os << "### attnbench compare: " << (r.failed ? "**FAIL**" : "PASS") << "\n\n" << summary_line(r) << "\n";
  if (!r.failures.empty()) {
    os << "\nFailures:\n\n";
    for (const auto& f : r.failures) os << "- `" << f << "`\n";
  }
  for (const auto& w : r.warnings) os << "\n> " << w << "\n";
  std::vector<const PairResult*> shown;
  for (const PairResult& p : r.pairs)
    if (notable(p)) shown.push_back(&p);
  if (shown.empty()) {
    os << "\nEvery pair: same latency (within noise and " << fmt("%.1f%%", r.options.min_effect * 100)
       << "), same memory, same correctness.\n";
  } else {
    os << "\n"
       << shown.size() << " of " << r.pairs.size()
       << " pairs differ (the rest: same latency, memory and correctness):\n\n"
       << "| case | backend | timing | base µs | new µs | change | verdict | p | memory (new - base) | "
          "correctness | "
          "gate |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const PairResult* p : shown)
      os << "| `" << md_cell(p->case_id) << "` | " << p->backend << " | " << p->timing << " | "
         << opt_us(p->base_median_us) << " | " << opt_us(p->new_median_us) << " | "
         << (p->change ? pct(*p->change) : "-") << " | " << p->verdict << " | "
         << (p->p_value ? fmt("%.2g", *p->p_value) : "-") << " | " << md_cell(memory_summary(*p)) << " | "
         << md_cell(p->correctness.empty() ? "-" : join(p->correctness, "; ")) << " | "
         << (p->failures.empty() ? "ok" : "**FAIL**") << " |\n";
  }
  if (!r.missing_in_new.empty()) {
    os << "\nMissing in NEW:\n\n";
    for (const auto& k : r.missing_in_new) os << "- `" << k << "`\n";
  }
  if (!r.only_in_new.empty()) {
    os << "\nOnly in NEW (not compared):\n\n";
    for (const auto& k : r.only_in_new) os << "- `" << k << "`\n";
  }
}

void write_compare_csv(std::ostream& os, const CompareResult& r) {
  os << "case_id,backend,timing,base_status,new_status,base_median_us,new_median_us,change_pct,verdict,"
        "method,p_value";
  for (const std::string& c : compared_memory_columns()) os << ',' << c << "_delta";
  os << ",correctness,gate,failures\n";
  for (const PairResult& p : r.pairs) {
    os << csv_field(p.case_id) << ',' << csv_field(p.backend) << ',' << csv_field(p.timing) << ','
       << csv_field(p.base_status) << ',' << csv_field(p.new_status) << ',' << csv_number(p.base_median_us)
       << ',' << csv_number(p.new_median_us) << ','
       << csv_number(p.change ? std::optional<double>(*p.change * 100) : std::nullopt) << ',' << p.verdict
       << ',' << p.method << ',' << csv_number(p.p_value);
    for (const std::string& c : compared_memory_columns()) {
      os << ',';
      for (const MemoryDelta& d : p.memory)
        if (d.column == c) os << d.delta();
    }
    os << ',' << csv_field(join(p.correctness, "; ")) << ',' << (p.failures.empty() ? "pass" : "fail") << ','
       << csv_field(join(p.failures, "; ")) << '\n';
  }
  const std::string empties(compared_memory_columns().size(), ',');
  const auto key_cells = [](const std::string& key) {
    // key = case_id|backend|timing; case ids never hold '|', so the last two separators split it.
    const auto b = key.rfind('|'), a = key.rfind('|', b - 1);
    return csv_field(key.substr(0, a)) + ',' + csv_field(key.substr(a + 1, b - a - 1)) + ',' +
           csv_field(key.substr(b + 1));
  };
  for (const auto& k : r.missing_in_new)
    os << key_cells(k) << ",,,,,,missing,," << empties << ",,fail,"
       << csv_field(k + ": in BASE, missing in NEW") << '\n';
  for (const auto& k : r.only_in_new) os << key_cells(k) << ",,,,,,new,," << empties << ",,pass,\n";
}

void write_compare_json(std::ostream& os, const CompareResult& r) {
  using oj = nlohmann::ordered_json;
  const auto opt_num = [](const std::optional<double>& v) { return v ? oj(*v) : oj(); };
  oj j;
  j["schema"] = "attnbench.compare";
  j["schema_version"] = 1;
  j["failed"] = r.failed;
  j["options"] = {{"max_slowdown", r.options.max_slowdown},
                  {"max_memory_growth_bytes", r.options.max_memory_growth},
                  {"alpha", r.options.alpha},
                  {"min_effect", r.options.min_effect},
                  {"allow_env_mismatch", r.options.allow_env_mismatch}};
  const Counts c = count(r);
  oj verdicts = oj::object();
  for (const auto& [v, n] : c.verdicts) verdicts[v] = n;
  j["summary"] = {{"pairs", r.pairs.size()},
                  {"verdicts", verdicts},
                  {"memory_growth", c.memory_growth},
                  {"correctness_regressions", c.correctness_regressions},
                  {"missing_in_new", r.missing_in_new.size()},
                  {"only_in_new", r.only_in_new.size()},
                  {"line", summary_line(r)}};
  j["pairs"] = oj::array();
  for (const PairResult& p : r.pairs) {
    oj mem = oj::object();
    for (const MemoryDelta& d : p.memory)
      mem[d.column] = {{"base", d.base}, {"new", d.now}, {"delta", d.delta()}};
    j["pairs"].push_back({{"case_id", p.case_id},
                          {"backend", p.backend},
                          {"timing", p.timing},
                          {"base_status", p.base_status},
                          {"new_status", p.new_status},
                          {"base_median_us", opt_num(p.base_median_us)},
                          {"new_median_us", opt_num(p.new_median_us)},
                          {"change", opt_num(p.change)},
                          {"verdict", p.verdict},
                          {"method", p.method},
                          {"p_value", opt_num(p.p_value)},
                          {"memory", mem},
                          {"correctness", p.correctness},
                          {"failures", p.failures}});
  }
  j["missing_in_new"] = r.missing_in_new;
  j["only_in_new"] = r.only_in_new;
  j["warnings"] = r.warnings;
  j["failures"] = r.failures;
  os << std::setw(2) << j << "\n";
}

}  // namespace attnbench
