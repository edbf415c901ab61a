#include "report/compare.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "core/errors.hpp"
#include "core/files.hpp"
#include "core/rank_test.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "report/table.hpp"
#include "report/text.hpp"

namespace attnbench {

// The SGLang releases a set's rows model (version 1 rows: 30cb848d4).
std::set<std::string> sglang_versions_of(const ResultSet& s) {
  std::set<std::string> v;
  for (const ResultRow& r : s.rows)
    if (!r.sglang_version.empty()) v.insert(r.sglang_version);
  return v;
}

// ---- comparing ------------------------------------------------------------------------------------------

const std::vector<std::string>& compared_memory_columns() {
  static const std::vector<std::string> cols = {"ctor_device_bytes",        "ctor_pinned_bytes",
                                                "graph_state_device_bytes", "capture_device_bytes",
                                                "capture_pinned_bytes",     "step_peak_device_bytes"};
  return cols;
}

namespace {

using text::fmt;

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

// The GPU a set ran on: env gpu_name, else the rows' device column: the one every row names, or the ones they
// name ("A + B"; rows of several devices did not run on BASE's one, and were let through before).
std::optional<std::string> gpu_of(const ResultSet& s) {
  if (auto g = env_value(s.environment, "gpu_name")) return g;
  std::set<std::string> devices;
  for (const ResultRow& r : s.rows)
    if (!r.device.empty()) devices.insert(r.device);
  if (devices.empty()) return std::nullopt;
  std::string joined;
  for (const std::string& d : devices) joined += (joined.empty() ? "" : " + ") + printable(d);
  return joined;
}

void check_schema_versions(const ResultSet& base, const ResultSet& now) {
  const auto versions = [](const ResultSet& s, const char* side) {
    std::set<int> v;
    // Version 1 rows are read as version 2 rows of SGLang 30cb848d4 (results_io.hpp): the two compare.
    for (const ResultRow& r : s.rows) v.insert(r.schema_version == 1 ? 2 : r.schema_version);
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

// Rows of different SGLang releases describe different code: refused unless allowed; returns the accepted
// difference as a warning.
std::vector<std::string> check_sglang_versions(const ResultSet& base, const ResultSet& now, bool allow) {
  const auto a = sglang_versions_of(base), b = sglang_versions_of(now);
  if (a.empty() || b.empty() || a == b) return {};
  const auto join = [](const std::set<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  const std::string diff = "BASE models SGLang " + join(a) + ", NEW models SGLang " + join(b);
  if (!allow) throw InputError("compare: " + diff + "; --allow-version-mismatch to compare anyway");
  return {diff};
}

// "too few samples (N vs M; at least K per side needed at alpha A)"
// With ties (min_p: the best p the normal approximation can give for these values), when samples of these sizes
// without ties could reach alpha: "too few samples (N vs M, with tied values: the best p ... )".
std::string too_few_text(std::size_t na, std::size_t nb, double alpha, std::optional<double> tied_min_p = {}) {
  const std::string sizes = "too few samples (" + std::to_string(na) + " vs " + std::to_string(nb);
  if (tied_min_p)
    return sizes + ", with tied values: the best p they could give is " + fmt("%.2g", *tied_min_p) +
           ", not below alpha " + fmt("%g", alpha) + ")";
  const std::size_t k = min_samples_per_side(alpha);
  return sizes + "; " +
         (k > 0 ? "at least " + std::to_string(k) + " per side needed" : std::string("no sample size reaches it")) +
         " at alpha " + fmt("%g", alpha) + ")";
}

// The latency verdict of one pair (fills medians, change, verdict, method, p_value).
void judge_latency(PairResult& p, const ResultRow& a, const ResultRow& b, const std::vector<double>* sa,
                   const std::vector<double>* sb, const CompareOptions& opt) {
  if (a.status == RowStatus::skipped || b.status == RowStatus::skipped) {
    p.verdict = "skipped";
    return;
  }
  p.verdict = "n/a";
  if (a.status != RowStatus::ok || b.status != RowStatus::ok) return;

  std::optional<RankTest> mw;
  const bool samples = sa && sb && !sa->empty() && !sb->empty();
  if (samples) {
    p.base_median_us = summarize(*sa).median;
    p.new_median_us = summarize(*sb).median;
    mw = mann_whitney_test(*sb, *sa);
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
    if (big && !significant && mw->min_p >= opt.alpha) {
      // No data of these sizes (and, with ties, of these tied values) could confirm the change: say so instead of
      // "ambiguous", which passes the gate (1 NEW sample 3x slower beside 200 tied BASE samples: p 0.086 at best).
      const bool ties_alone = mw->method != RankMethod::exact && min_reachable_p(sa->size(), sb->size()) < opt.alpha;
      p.verdict = too_few_text(sa->size(), sb->size(), opt.alpha, ties_alone ? std::optional(mw->min_p) : std::nullopt);
      p.too_few_samples = true;
      return;
    }
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

// Refuses rows and raw samples outside their columns' domains (the readers refuse them in files; this covers
// sets built in memory).
void check_domains(const ResultSet& s, const char* side) {
  const auto bad = [side](std::size_t i, const ResultRow& r, const std::string& what) {
    return InputError(std::string("compare: ") + side + " row " + std::to_string(i) + " (" +
                      printable(sample_key(r)) + "): " + what);
  };
  for (std::size_t i = 0; i < s.rows.size(); ++i) {
    const ResultRow& r = s.rows[i];
    if (std::string e = result_row_domain_error(r); !e.empty()) throw bad(i, r, e);
    if (std::string e = samples_domain_error(r.samples_us); !e.empty()) throw bad(i, r, e);
  }
  for (const auto& [key, v] : s.samples)
    if (std::string e = samples_domain_error(v); !e.empty())
      throw InputError(std::string("compare: ") + side + " samples of " + printable(key) + ": " + e);
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

  // Evidence BASE had and NEW lost fails the gate: without it the checks below would skip the pair (n/a, no
  // memory delta, no reference verdict) and pass it. A row that is no longer ok fails on its status already.
  const bool both_ok = a.status == RowStatus::ok && b.status == RowStatus::ok;
  if (both_ok && a.samples > 0 && a.step_median_us && (b.samples == 0 || !b.step_median_us))
    p.failures.push_back(key + ": latency measured in BASE (" + std::to_string(a.samples) +
                         " samples), none in NEW (" + std::to_string(b.samples) + " samples, step_median_us " +
                         (b.step_median_us ? fmt("%g", *b.step_median_us) : std::string("empty")) + ")");
  else if (both_ok && a.step_p10_us && a.step_p90_us && !(b.step_p10_us && b.step_p90_us) &&
           p.method == "p10-p90")
    p.failures.push_back(key + ": step_p10_us / step_p90_us in BASE, missing in NEW: no noise band to judge " +
                         "the latency by");
  for (const std::string& col : compared_memory_columns()) {
    const auto ma = memory_column(a, col), mb = memory_column(b, col);
    if (ma && !mb && b.status == RowStatus::ok)
      p.failures.push_back(key + ": " + col + " recorded in BASE (" + std::to_string(*ma) +
                           " B), missing in NEW: memory growth cannot be ruled out");
    if (!ma || !mb) continue;
    MemoryDelta d{col, *ma, *mb};
    if (d.delta() > opt.max_memory_growth)
      p.failures.push_back(key + ": " + col + " grew by " + std::to_string(d.delta()) + " B (" +
                           format_bytes(d.delta()) + "; " + std::to_string(*ma) + " -> " +
                           std::to_string(*mb) + ", allowed " + std::to_string(opt.max_memory_growth) +
                           " B)");
    p.memory.push_back(d);
  }

  // Correctness failures (status, reference check, bit-identity) are counted apart in the summary.
  const auto fail_correctness = [&p](const std::string& why) {
    p.failures.push_back(why);
    p.correctness_regression = true;
  };
  if (a.status != b.status) {
    p.correctness.push_back(std::string("status ") + row_status_name(a.status) + " -> " + row_status_name(b.status));
    // ok -> anything else: NEW lost the evidence BASE had (a skipped row measures nothing).
    if (a.status == RowStatus::ok)
      fail_correctness(key + ": status ok -> " + row_status_name(b.status) + (b.note.empty() ? "" : " (" + printable(b.note) + ")"));
  }
  if (a.ref_pass != b.ref_pass) {
    const auto s = [](const std::optional<bool>& v) {
      return v ? std::string(*v ? "1" : "0") : std::string("empty");
    };
    p.correctness.push_back("ref_pass " + s(a.ref_pass) + " -> " + s(b.ref_pass));
  }
  // A failed reference check fails the gate on whichever side it is: a row that failed it is no evidence.
  const auto err = [](const ResultRow& r) {
    return r.ref_max_abs_err ? fmt("%.3g", *r.ref_max_abs_err) : std::string("?");
  };
  const bool base_failed = a.ref_pass == false, new_failed = b.ref_pass == false;
  if (new_failed && a.ref_pass == true)
    fail_correctness(key + ": ref_pass 1 -> 0 (max abs error " + err(b) + ")");
  else if (base_failed && new_failed)
    fail_correctness(key + ": ref_pass 0 in BASE and NEW: both failed the reference check (max abs error " +
                     err(a) + " and " + err(b) + ")");
  else if (base_failed)
    fail_correctness(key + ": ref_pass 0 in BASE: the baseline failed the reference check (max abs error " +
                     err(a) + "), so it is no evidence");
  else if (new_failed)
    fail_correctness(key + ": ref_pass 0 in NEW (max abs error " + err(b) + ")");
  else if (a.ref_pass == true && !b.ref_pass && b.status == RowStatus::ok)
    fail_correctness(key + ": ref_pass 1 -> empty: NEW ran no reference check where BASE passed one");
  const std::set<std::string> ea = bitwise_equal_names(a.bitwise_equal_to), eb = bitwise_equal_names(b.bitwise_equal_to);
  for (const std::string& name : ea) {
    if (eb.count(name)) continue;
    p.correctness.push_back("bitwise_equal_to lost " + name);
    // Only where NEW's row is ok: a row that became failed / skipped already fails above.
    if (opt.must_stay_identical.is_pair(a.backend, name) && b.status == RowStatus::ok)
      fail_correctness(key + ": no longer bit-identical to " + name + " (it was in BASE): " + a.backend + " and " +
                       name + " must give the same output");
  }
  for (const std::string& name : eb)
    if (!ea.count(name)) p.correctness.push_back("bitwise_equal_to gained " + name);
  return p;
}

}  // namespace

CompareResult compare_results(const ResultSet& base, const ResultSet& now, const CompareOptions& opt) {
  check_domains(base, "BASE");
  check_domains(now, "NEW");
  check_schema_versions(base, now);
  check_unique_keys(base.rows, "compare: BASE");
  check_unique_keys(now.rows, "compare: NEW");
  CompareResult r;
  r.options = opt;
  for (const std::string& d : check_environments(base, now, opt.allow_env_mismatch))
    r.warnings.push_back(d + " (compared anyway: --allow-env-mismatch)");
  for (const std::string& d : check_sglang_versions(base, now, opt.allow_version_mismatch))
    r.warnings.push_back(d + " (compared anyway: --allow-version-mismatch)");

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
    PairResult& p = r.pairs.back();
    if (p.too_few_samples) {
      const std::string line = key + ": " + p.verdict + ": a " + pct(*p.change) + " change can be neither confirmed nor ruled out";
      if (opt.strict) {
        p.failures.push_back(line + " (--strict)");
      } else {
        r.warnings.push_back(line + " (a failure with --strict)");
      }
    }
    for (const std::string& f : p.failures) r.failures.push_back(f);
  }
  for (const ResultRow& b : now.rows)
    if (!base_keys.count(sample_key(b))) r.only_in_new.push_back(sample_key(b));
  // Comparing nothing is not a pass.
  const auto both_ok = std::count_if(r.pairs.begin(), r.pairs.end(), [](const PairResult& p) {
    return p.base_status == RowStatus::ok && p.new_status == RowStatus::ok;
  });
  if (both_ok == 0) {
    const std::string nb = std::to_string(base.rows.size()), nn = std::to_string(now.rows.size());
    std::string why;
    if (base.rows.empty() && now.rows.empty())
      why = "neither BASE nor NEW has a row";
    else if (base.rows.empty())
      why = "BASE has no row (NEW has " + nn + ")";
    else if (now.rows.empty())
      why = "NEW has no row (BASE has " + nb + ")";
    else if (r.pairs.empty())
      why = "BASE (" + nb + " rows) and NEW (" + nn + " rows) have no case_id|backend|timing in common";
    else
      why = "none of the " + std::to_string(r.pairs.size()) + " pairs is ok on both sides";
    r.failures.push_back("nothing compared: " + why);
  }
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
    ++c.verdicts[p.too_few_samples ? std::string("too few samples") : p.verdict];
    if (std::any_of(p.memory.begin(), p.memory.end(),
                    [&](const MemoryDelta& d) { return d.delta() > r.options.max_memory_growth; }))
      ++c.memory_growth;
    if (!p.correctness.empty()) ++c.correctness_changes;
    if (p.correctness_regression) ++c.correctness_regressions;
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
  if (const auto it = c.verdicts.find("too few samples"); it != c.verdicts.end())
    s += ", " + std::to_string(it->second) + " too few samples";
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

// A median in µs for people: one decimal, "-" when missing.
table::Cell us_cell(const std::optional<double>& v) { return table::number(v, "%.1f"); }

table::Cell change_cell(const PairResult& p) {
  return table::cell(p.change ? table::Value(*p.change) : table::Value(), p.change ? pct(*p.change) : "-");
}

table::Cell p_cell(const PairResult& p) { return table::number(p.p_value, "%.2g"); }

// A pair worth a line in the Markdown: anything but "same latency, same memory, same correctness".
bool notable(const PairResult& p) {
  return p.verdict != "same" || !p.failures.empty() || !p.correctness.empty() ||
         std::any_of(p.memory.begin(), p.memory.end(), [](const MemoryDelta& d) { return d.delta() != 0; });
}

// key = case_id|backend|timing; case ids never hold '|', so the last two separators split it.
std::vector<table::Cell> key_cells(const std::string& key) {
  const auto b = key.rfind('|'), a = key.rfind('|', b - 1);
  return {table::str(key.substr(0, a)), table::str(key.substr(a + 1, b - a - 1)),
          table::str(key.substr(b + 1))};
}

// One row per pair, the columns of write_compare_csv; the JSON pairs use the first 11.
table::Table pairs_table(const CompareResult& r, bool for_json) {
  using table::str;
  table::Table t;
  for (const char* name : {"case_id", "backend", "timing", "base_status", "new_status", "base_median_us",
                           "new_median_us", for_json ? "change" : "change_pct", "verdict", "method", "p_value"})
    t.columns.push_back({name});
  if (!for_json) {
    for (const std::string& c : compared_memory_columns()) t.columns.push_back({c + "_delta"});
    for (const char* name : {"correctness", "gate", "failures"}) t.columns.push_back({name});
  }
  const auto opt = [](const std::optional<double>& v) { return v ? table::Value(*v) : table::Value(); };
  for (const PairResult& p : r.pairs) {
    const std::optional<double> change =
        p.change ? std::optional<double>(for_json ? *p.change : *p.change * 100) : std::nullopt;
    std::vector<table::Cell> cells = {
        str(p.case_id), str(p.backend), str(p.timing), str(row_status_name(p.base_status)), str(row_status_name(p.new_status)),
        table::cell(opt(p.base_median_us), ""), table::cell(opt(p.new_median_us), ""),
        table::cell(opt(change), ""), str(p.verdict), str(p.method), table::cell(opt(p.p_value), "")};
    if (!for_json) {
      for (const std::string& c : compared_memory_columns()) {
        table::Value delta;
        for (const MemoryDelta& d : p.memory)
          if (d.column == c) delta = d.delta();
        cells.push_back(table::cell(delta, ""));
      }
      cells.push_back(str(join(p.correctness, "; ")));
      cells.push_back(str(p.failures.empty() ? "pass" : "fail"));
      cells.push_back(str(join(p.failures, "; ")));
    }
    t.add(std::move(cells));
  }
  if (for_json) return t;
  // Rows missing in NEW (verdict "missing", gate fail) and only in NEW (verdict "new", gate pass).
  const auto key_row = [&t](const std::string& key, const std::string& verdict, const std::string& gate,
                            const std::string& failure) {
    std::vector<table::Cell> cells = key_cells(key);
    cells.resize(t.columns.size());
    cells[8] = str(verdict);
    cells[t.columns.size() - 2] = str(gate);
    cells[t.columns.size() - 1] = str(failure);
    t.add(std::move(cells));
  };
  for (const auto& k : r.missing_in_new) key_row(k, "missing", "fail", k + ": in BASE, missing in NEW");
  for (const auto& k : r.only_in_new) key_row(k, "new", "pass", "");
  return t;
}

void write_key_list(std::ostream& os, const std::vector<std::string>& keys, const std::string& title) {
  if (keys.empty()) return;
  os << "\n" << title << "\n";
  for (const auto& k : keys) os << "  " << k << "\n";
}

}  // namespace

void write_compare_table(std::ostream& os, const CompareResult& r) {
  using table::Align;
  using table::str;
  table::Table t;
  t.columns = {{"case_id", Align::left, 7, true},
               {"backend", Align::left, 7, true},
               {"timing", Align::left, 8},
               {"base us", Align::right, 11},
               {"new us", Align::right, 11},
               {"change", Align::right, 9},
               {"verdict", Align::left, 10, false, 2},
               {"p", Align::right, 8},
               {"gate", Align::left, 6, false, 2},
               {"memory (new - base), correctness"}};
  for (const PairResult& p : r.pairs) {
    std::string tail = memory_summary(p);
    if (!p.correctness.empty()) tail += "; " + join(p.correctness, "; ");
    t.add({str(p.case_id), str(p.backend), str(p.timing), us_cell(p.base_median_us), us_cell(p.new_median_us),
           change_cell(p), str(p.verdict), p_cell(p), str(p.failures.empty() ? "ok" : "FAIL"), str(tail)});
  }
  table::print_text(os, t);
  write_key_list(os, r.missing_in_new, "missing in NEW (" + std::to_string(r.missing_in_new.size()) + "):");
  write_key_list(os, r.only_in_new, "only in NEW (" + std::to_string(r.only_in_new.size()) + ", not compared):");
  write_key_list(os, r.warnings, "warnings:");
  write_key_list(os, r.failures, "failures (" + std::to_string(r.failures.size()) + "):");
  os << "\n" << summary_line(r) << "\n";
}

void write_compare_markdown(std::ostream& os, const CompareResult& r) {
  using table::str;
  os << "### attnbench compare: " << (r.failed ? "**FAIL**" : "PASS") << "\n\n" << summary_line(r) << "\n";
  if (!r.failures.empty()) {
    os << "\nFailures:\n\n";
    for (const auto& f : r.failures) os << "- `" << f << "`\n";
  }
  for (const auto& w : r.warnings) os << "\n> " << w << "\n";
  table::Table t;
  for (const char* name : {"case", "backend", "timing", "base µs", "new µs", "change", "verdict", "p",
                           "memory (new - base)", "correctness", "gate"})
    t.columns.push_back({name});
  for (const PairResult& p : r.pairs)
    if (notable(p))
      t.add({str("`" + p.case_id + "`"), str(p.backend), str(p.timing), us_cell(p.base_median_us),
             us_cell(p.new_median_us), change_cell(p), str(p.verdict), p_cell(p), str(memory_summary(p)),
             str(p.correctness.empty() ? "-" : join(p.correctness, "; ")),
             str(p.failures.empty() ? "ok" : "**FAIL**")});
  if (t.rows.empty()) {
    os << "\nEvery pair: same latency (within noise and " << fmt("%.1f%%", r.options.min_effect * 100)
       << "), same memory, same correctness.\n";
  } else {
    os << "\n"
       << t.rows.size() << " of " << r.pairs.size()
       << " pairs differ (the rest: same latency, memory and correctness):\n\n";
    table::print_markdown(os, t);
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

void write_compare_csv(std::ostream& os, const CompareResult& r) { table::print_csv(os, pairs_table(r, false)); }

void write_compare_json(std::ostream& os, const CompareResult& r) {
  using oj = nlohmann::ordered_json;
  oj j;
  j["schema"] = "attnbench.compare";
  j["schema_version"] = 1;
  j["failed"] = r.failed;
  j["options"] = {{"max_slowdown", r.options.max_slowdown},
                  {"max_memory_growth_bytes", r.options.max_memory_growth},
                  {"alpha", r.options.alpha},
                  {"min_effect", r.options.min_effect},
                  {"allow_env_mismatch", r.options.allow_env_mismatch},
                  {"strict", r.options.strict}};
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
  // The pair columns from the table, then what does not fit a cell: memory, correctness, failures.
  j["pairs"] = table::to_json(pairs_table(r, true));
  for (std::size_t i = 0; i < r.pairs.size(); ++i) {
    const PairResult& p = r.pairs[i];
    oj mem = oj::object();
    for (const MemoryDelta& d : p.memory)
      mem[d.column] = {{"base", d.base}, {"new", d.now}, {"delta", d.delta()}};
    j["pairs"][i]["memory"] = mem;
    j["pairs"][i]["correctness"] = p.correctness;
    j["pairs"][i]["failures"] = p.failures;
  }
  j["missing_in_new"] = r.missing_in_new;
  j["only_in_new"] = r.only_in_new;
  j["warnings"] = r.warnings;
  j["failures"] = r.failures;
  os << std::setw(2) << j << "\n";
}

}  // namespace attnbench
