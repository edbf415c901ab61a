#include "report/peers.hpp"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/errors.hpp"
#include "core/files.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "report/table.hpp"
#include "report/text.hpp"

namespace attnbench {

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

bool is_library_backend(const std::string& backend) { return ends_with(backend, "_lib"); }

bool is_sglang_backend(const std::string& backend) { return ends_with(backend, "_sglang"); }

bool is_peer_backend(const std::string& backend) { return is_library_backend(backend) || is_sglang_backend(backend); }

// ---- pairing --------------------------------------------------------------------------------------------

namespace {

using text::fmt;
using text::with_commas;
using text::md;

// a / b when both are there and b is positive: a missing or zero library figure gives no ratio, never inf.
std::optional<double> ratio_of(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a || !b || *b <= 0 || *a < 0) return std::nullopt;
  return *a / *b;
}

PeerPair make_pair(const ResultRow& m, const ResultRow& l) {
  PeerPair p;
  p.case_id = l.case_id;
  p.timing = l.timing;
  p.model_backend = m.backend;
  p.lib_backend = l.backend;
  p.model_status = m.status;
  p.lib_status = l.status;
  p.model_step_median_us = m.step_median_us;
  p.lib_step_median_us = l.step_median_us;
  p.model_step_p10_us = m.step_p10_us;
  p.model_step_p90_us = m.step_p90_us;
  p.lib_step_p10_us = l.step_p10_us;
  p.lib_step_p90_us = l.step_p90_us;
  p.model_forward_median_us = m.forward_median_us;
  p.lib_forward_median_us = l.forward_median_us;
  p.model_metadata_median_us = m.metadata_median_us;
  p.lib_metadata_median_us = l.metadata_median_us;
  p.model_ref_pass = m.ref_pass;
  p.lib_ref_pass = l.ref_pass;
  // The figures of a row that did not run ok time something else (or nothing): no ratio.
  if (m.status == RowStatus::ok && l.status == RowStatus::ok) {
    p.ratio_forward = ratio_of(m.forward_median_us, l.forward_median_us);
    p.ratio_step = ratio_of(m.step_median_us, l.step_median_us);
  }
  return p;
}

bool has_construct(const ResultRow& r) {
  return std::any_of(r.ledger.begin(), r.ledger.end(),
                     [](const ResultRow::LedgerGroup& g) { return g.phase == "construct"; });
}

int kind_order(const std::string& kind) {
  if (kind == "device") return 0;
  if (kind == "pinned") return 1;
  if (kind == "host") return 2;
  return 3;
}

PeerMemory memory_of(const ResultRow& m, const ResultRow& l) {
  PeerMemory pm;
  pm.model_backend = m.backend;
  pm.lib_backend = l.backend;
  pm.case_id = l.case_id;
  pm.timing = l.timing;
  struct Side {
    std::optional<std::int64_t> bytes;
    std::string kind;
  };
  std::map<std::string, std::pair<Side, Side>> by_tag;  // sorted by tag
  std::map<std::string, PeerKindTotal> totals;
  const auto add = [&](const ResultRow& r, bool model) {
    for (const ResultRow::LedgerGroup& g : r.ledger) {
      if (g.phase != "construct") continue;
      Side& s = model ? by_tag[g.tag].first : by_tag[g.tag].second;
      s.bytes = s.bytes.value_or(0) + g.bytes;
      s.kind = g.kind;
      PeerKindTotal& t = totals[g.kind];
      t.kind = g.kind;
      (model ? t.model_bytes : t.lib_bytes) += g.bytes;
    }
  };
  add(m, true);
  add(l, false);
  for (const auto& [tag, sides] : by_tag) {
    const auto& [ms, ls] = sides;
    PeerTagLine line{tag, "", ms.bytes, ls.bytes};
    if (ms.bytes && ls.bytes && ms.kind != ls.kind) {
      line.kind = ms.kind + " / " + ls.kind;
    } else {
      line.kind = ms.bytes ? ms.kind : ls.kind;
    }
    pm.lines.push_back(std::move(line));
  }
  for (const auto& [kind, t] : totals) pm.totals.push_back(t);
  std::stable_sort(pm.totals.begin(), pm.totals.end(), [](const PeerKindTotal& a, const PeerKindTotal& b) {
    return kind_order(a.kind) < kind_order(b.kind);
  });
  return pm;
}

}  // namespace

PeerComparison compare_peers(const std::vector<ResultRow>& model_rows,
                             const std::vector<ResultRow>& library_rows, const BackendCatalog& catalog,
                             double slow_ratio) {
  PeerComparison c;
  c.catalog = catalog;
  c.slow_ratio = slow_ratio;
  std::map<std::string, const ResultRow*> models;
  for (const ResultRow& r : model_rows)
    if (!is_peer_backend(r.backend)) models.emplace(sample_key(r), &r);

  std::set<std::string> seen, paired, twins;
  std::vector<std::pair<const ResultRow*, const ResultRow*>> rows;  // (model, library) of each pair
  for (const ResultRow& l : library_rows) {
    if (!is_library_backend(l.backend)) continue;
    const std::string key = sample_key(l);
    if (!seen.insert(key).second) {
      c.warnings.push_back("two library rows for " + key + ": the first is used");
      continue;
    }
    const auto twin = catalog.model_twin_of(l.backend);
    if (!twin) {
      c.library_without_model.push_back(key + " (attnbench models no twin of " + l.backend + ")");
      continue;
    }
    twins.insert(*twin);
    const auto it = models.find(l.case_id + "|" + *twin + "|" + l.timing);
    if (it == models.end()) {
      c.library_without_model.push_back(key);
      continue;
    }
    paired.insert(it->first);
    rows.emplace_back(it->second, &l);
    c.pairs.push_back(make_pair(*it->second, l));
  }
  for (const ResultRow& r : model_rows)
    if (twins.count(r.backend) && !paired.count(sample_key(r)))
      c.model_without_library.push_back(sample_key(r));

  // Summary per (model, library, timing), in order of first appearance.
  std::vector<std::vector<double>> forward, step;
  for (const PeerPair& p : c.pairs) {
    auto it = std::find_if(c.summary.begin(), c.summary.end(), [&](const PeerSummary& s) {
      return s.model_backend == p.model_backend && s.lib_backend == p.lib_backend && s.timing == p.timing;
    });
    if (it == c.summary.end()) {
      c.summary.push_back({p.model_backend, p.lib_backend, p.timing, 0, 0, 0, 0, std::nullopt, 0, {}});
      forward.emplace_back();
      step.emplace_back();
      it = std::prev(c.summary.end());
    }
    const auto i = static_cast<std::size_t>(it - c.summary.begin());
    if (p.ratio_step) step[i].push_back(*p.ratio_step);
    if (!p.ratio_forward) {
      ++it->not_compared;
      continue;
    }
    forward[i].push_back(*p.ratio_forward);
    if (*p.ratio_forward > slow_ratio) it->slow.emplace_back(p.case_id, *p.ratio_forward);
  }
  for (std::size_t i = 0; i < c.summary.size(); ++i) {
    PeerSummary& s = c.summary[i];
    s.count = static_cast<int>(forward[i].size());
    if (!forward[i].empty()) {
      const Summary f = summarize(forward[i]);
      s.median = f.median;
      s.min = f.min;
      s.max = f.max;
    }
    if (!step[i].empty()) s.step_median = summarize(step[i]).median;
    std::stable_sort(s.slow.begin(), s.slow.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
  }

  // Construction memory per (model, library): the first paired case where both rows carry a ledger.
  for (const auto& pair : rows) {
    // Not a structured binding: clang before 16 cannot capture one in the lambda below.
    const auto& m = pair.first;
    const auto& l = pair.second;
    auto it = std::find_if(c.memory.begin(), c.memory.end(), [&](const PeerMemory& pm) {
      return pm.model_backend == m->backend && pm.lib_backend == l->backend;
    });
    if (it == c.memory.end()) {
      c.memory.push_back({m->backend, l->backend, "", "", {}, {}});
      it = std::prev(c.memory.end());
    }
    if (it->case_id.empty() && has_construct(*m) && has_construct(*l)) *it = memory_of(*m, *l);
  }
  return c;
}

std::pair<std::vector<ResultRow>, std::vector<ResultRow>> split_library_rows(
    const std::vector<ResultRow>& rows) {
  std::pair<std::vector<ResultRow>, std::vector<ResultRow>> out;
  for (const ResultRow& r : rows) (is_peer_backend(r.backend) ? out.second : out.first).push_back(r);
  return out;
}

ResultSet load_peer_set(const std::string& path, const BackendCatalog& catalog) {
  ResultSet set;
  try {
    set = load_result_set(path);
  } catch (const InputError& e) {
    throw InputError(std::string("--peers: ") + e.what());
  }
  if (set.rows.empty()) throw InputError("--peers " + path + ": no rows");
  std::string names;
  for (const std::string& lib : catalog.library_backends()) names += (names.empty() ? "" : ", ") + lib;
  for (std::size_t i = 0; i < set.rows.size(); ++i) {
    const ResultRow& r = set.rows[i];
    if (!is_peer_backend(r.backend))
      throw InputError("--peers " + path + ": row " + std::to_string(i) + " (" + r.case_id +
                       ") has backend '" + r.backend + "', not a library backend (a name ending in _lib" +
                       (names.empty() ? "" : ": " + names) +
                       ") or an SGLang one (_sglang); --peers takes the peer scripts' results");
  }
  return set;
}

void check_peer_rows_unique(const std::vector<std::pair<std::string, const ResultSet*>>& files) {
  std::map<std::string, std::size_t> first;  // sample_key -> index in `files`
  for (std::size_t f = 0; f < files.size(); ++f) {
    for (const ResultRow& r : files[f].second->rows) {
      if (!is_peer_backend(r.backend)) continue;
      const auto [it, fresh] = first.emplace(sample_key(r), f);
      if (!fresh && it->second != f)
        throw InputError("--peers: the row " + printable(it->first) + " is in both '" +
                         printable(files[it->second].first) + "' and '" + printable(files[f].first) +
                         "': give each peer row once (the report would keep the first and drop the other)");
    }
  }
}

namespace {

bool any_library(const ResultSet& s) {
  return std::any_of(s.rows.begin(), s.rows.end(), [](const ResultRow& r) { return is_peer_backend(r.backend); });
}

}  // namespace

void check_compare_sides(const ResultSet& base, const ResultSet& now, const std::string& base_path,
                         const std::string& new_path) {
  const bool lb = any_library(base), ln = any_library(now);
  if (lb == ln) return;
  const std::string side = lb ? "BASE " + base_path : "NEW " + new_path;
  throw InputError("compare: " + side + " holds library rows (backends *_lib) and " + (lb ? "NEW" : "BASE") +
                   " does not; to compare the model with the library, pass --peers (BASE = model rows, NEW = "
                   "library rows)");
}

void check_peer_sides(const ResultSet& base, const ResultSet& now, const std::string& base_path,
                      const std::string& new_path) {
  const bool base_model = std::any_of(base.rows.begin(), base.rows.end(),
                                      [](const ResultRow& r) { return !is_peer_backend(r.backend); });
  if (!base_model)
    throw InputError("compare --peers: BASE " + base_path +
                     (base.rows.empty() ? " holds no rows" : " holds only library rows (backends *_lib)") +
                     "; --peers takes the model rows as BASE and the library rows as NEW");
  if (!any_library(now))
    throw InputError("compare --peers: NEW " + new_path +
                     " holds no library row (backends *_lib); --peers takes the model rows as BASE and the "
                     "library rows as NEW");
}

namespace {

std::optional<std::string> env_value(const Environment& env, const std::string& key) {
  for (const auto& [k, v] : env)
    if (k == key && !v.empty()) return v;
  return std::nullopt;
}

// The one GPU that the model rows (peers = false) or the peer rows of `s` name in their device column; nothing
// when they name none, several, a CPU ("cpu (N threads)") or only the torch device type ("cuda", "fake").
std::optional<std::string> rows_gpu(const ResultSet& s, bool peers) {
  std::optional<std::string> gpu;
  for (const ResultRow& r : s.rows) {
    if (is_peer_backend(r.backend) != peers) continue;
    const std::string& d = r.device;
    if (d.empty() || d.rfind("cpu", 0) == 0 || d == "cuda" || d == "fake" || (gpu && *gpu != d)) return std::nullopt;
    gpu = d;
  }
  return gpu;
}

}  // namespace

std::vector<std::string> check_peer_environments(const ResultSet& model, const ResultSet& library, bool allow,
                                                 const std::string& model_side,
                                                 const std::string& library_side) {
  // The environments' gpu_name; a side without one (a results CSV carries no environment) falls back on the
  // one GPU its rows name in their device column, so a library CSV from another GPU is not compared silently.
  std::optional<std::string> gm = env_value(model.environment, "gpu_name");
  std::optional<std::string> gl = env_value(library.environment, "gpu_name");
  if (!gm) gm = rows_gpu(model, false);
  if (!gl) gl = rows_gpu(library, true);
  if (!gm || !gl || *gm == *gl) return {};
  const std::string diff = model_side + " ran on " + *gm + ", " + library_side + " on " + *gl;
  if (!allow) throw InputError("compare: " + diff + "; --allow-env-mismatch to compare anyway");
  return {diff};
}

// ---- writers --------------------------------------------------------------------------------------------

namespace {

using table::Align;
using table::str;

// A latency cell: the figure when the row ran ok, else its status ("skipped", "failed", ...).
std::string us_cell(const std::optional<double>& v, RowStatus status, const char* f) {
  if (status != RowStatus::ok) return row_status_name(status);
  return v ? fmt(f, *v) : "-";
}

std::string ratio_cell(const std::optional<double>& r) { return r ? fmt("%.3f", *r) : "-"; }

std::string ref_cell(const std::optional<bool>& v) { return v ? (*v ? "pass" : "FAIL") : "-"; }

std::string bytes_cell(const std::optional<std::int64_t>& v) {
  return v ? with_commas(*v) + " (" + format_bytes(*v) + ")" : "-";
}

std::string diff_cell(const std::optional<std::int64_t>& d) {
  if (!d) return "-";
  if (*d == 0) return "0";
  return (*d > 0 ? "+" : "") + with_commas(*d) + " (" + (*d > 0 ? "+" : "") + format_bytes(*d) + ")";
}

std::string commas_or_dash(const std::optional<std::int64_t>& v) { return v ? with_commas(*v) : "-"; }

// "<Library> 0.2.5, torch 2.6.0, NVIDIA H200, driver 570.86": the version keys of the catalog, then the GPU.
std::string library_env_line(const Environment& env, const BackendCatalog& catalog) {
  std::string s;
  const auto add = [&](const std::string& text) { s += (s.empty() ? "" : ", ") + text; };
  for (const auto& [key, label] : catalog.library_versions)
    if (auto v = env_value(env, key)) add(label + " " + *v);
  if (auto v = env_value(env, "gpu_name")) {
    add(*v);
  } else if (auto g = env_value(env, "gpu")) {
    add(*g);
  }
  if (auto v = env_value(env, "driver_version")) add("driver " + *v);
  if (auto v = env_value(env, "cuda_version")) add("CUDA " + *v);
  return s;
}

std::vector<std::string> library_env_lines(const PeerComparison& c) {
  std::vector<std::string> lines;
  for (const Environment& e : c.library_environments) {
    const std::string l = library_env_line(e, c.catalog);
    if (!l.empty() && std::find(lines.begin(), lines.end(), l) == lines.end()) lines.push_back(l);
  }
  return lines;
}

// The (model, library) backend pairs in order of first appearance.
std::vector<std::pair<std::string, std::string>> backend_pairs(const PeerComparison& c) {
  std::vector<std::pair<std::string, std::string>> v;
  for (const PeerPair& p : c.pairs)
    if (std::find(v.begin(), v.end(), std::make_pair(p.model_backend, p.lib_backend)) == v.end())
      v.emplace_back(p.model_backend, p.lib_backend);
  return v;
}

// "`<twin>`: <what it runs>, modelled by `<backend>`; ...": the catalog's library twins.
std::string library_twins_text(const BackendCatalog& catalog) {
  std::string s;
  for (const CatalogBackend& b : catalog.backends) {
    if (b.library_twin.empty()) continue;
    s += (s.empty() ? "" : "; ") + std::string("`") + b.library_twin + "`: " +
         (b.library_what.empty() ? "" : b.library_what + ", ") + "modelled by `" + b.name + "`";
  }
  return s;
}

// The pairs for programs (CSV, JSON): every figure, typed; an empty cell = not available.
table::Table pairs_table(const PeerComparison& c) {
  table::Table t;
  for (const char* name :
       {"case_id", "timing", "model_backend", "library_backend", "model_status", "library_status",
        "model_forward_median_us", "library_forward_median_us", "ratio_forward", "model_step_median_us",
        "library_step_median_us", "ratio_step", "model_metadata_median_us", "library_metadata_median_us",
        "model_step_p10_us", "model_step_p90_us", "library_step_p10_us", "library_step_p90_us",
        "model_ref_pass", "library_ref_pass"})
    t.columns.push_back({name});
  const auto num = [](const std::optional<double>& v) { return table::cell(v ? table::Value(*v) : table::Value(), ""); };
  const auto boolean = [](const std::optional<bool>& v) {
    return table::cell(v ? table::Value(*v) : table::Value(), "");
  };
  for (const PeerPair& p : c.pairs)
    t.add({str(p.case_id), str(p.timing), str(p.model_backend), str(p.lib_backend), str(row_status_name(p.model_status)),
           str(row_status_name(p.lib_status)), num(p.model_forward_median_us), num(p.lib_forward_median_us),
           num(p.ratio_forward), num(p.model_step_median_us), num(p.lib_step_median_us), num(p.ratio_step),
           num(p.model_metadata_median_us), num(p.lib_metadata_median_us), num(p.model_step_p10_us),
           num(p.model_step_p90_us), num(p.lib_step_p10_us), num(p.lib_step_p90_us), boolean(p.model_ref_pass),
           boolean(p.lib_ref_pass)});
  return t;
}

}  // namespace

std::vector<std::string> peer_summary_lines(const PeerComparison& c) {
  std::vector<std::string> lines;
  for (const PeerSummary& s : c.summary) {
    std::string l = s.model_backend + " / " + s.lib_backend + " " + s.timing + ": ";
    if (s.count == 0) {
      l += "no case with a per-layer ratio";
    } else {
      l += std::to_string(s.count) + (s.count == 1 ? " case" : " cases") + ", per-layer ratio median " +
           fmt("%.3f", s.median) + " (min " + fmt("%.3f", s.min) + ", max " + fmt("%.3f", s.max) + ")";
      if (s.step_median) l += ", step ratio median " + fmt("%.3f", *s.step_median);
      l += "; " + std::to_string(s.slow.size()) + " above " + fmt("%g", c.slow_ratio) + "x";
      for (std::size_t i = 0; i < s.slow.size(); ++i)
        l += (i ? ", " : ": ") + s.slow[i].first + " (" + fmt("%.3f", s.slow[i].second) + ")";
    }
    if (s.not_compared > 0)
      l += "; " + std::to_string(s.not_compared) + " not compared (a side not ok or a figure missing)";
    lines.push_back(l);
  }
  return lines;
}

void write_peer_markdown(std::ostream& os, const PeerComparison& c) {
  os << "## Model vs library\n\n"
     << "attnbench's kernels against the real libraries on the same cases (" << library_twins_text(c.catalog)
     << "). Latency is attnbench's as a ratio of the library's (model µs / library µs, per layer = "
        "`forward_median_us`, step = `init_forward_metadata` + every layer): **a ratio > 1 means attnbench "
        "is slower**.\n\n";
  const std::vector<std::string> envs = library_env_lines(c);
  if (envs.empty()) {
    os << "Library environment: not recorded (give the library script's JSON report).\n";
  } else {
    os << (envs.size() == 1 ? "Library environment: " : "Library environments: ");
    for (std::size_t i = 0; i < envs.size(); ++i) os << (i ? "; " : "") << md(envs[i]);
    os << ".\n";
  }
  os << "\n";
  for (const std::string& w : c.warnings) os << "> " << md(w) << "\n\n";
  for (const std::string& l : peer_summary_lines(c)) os << "- " << md(l) << "\n";
  if (c.pairs.empty()) os << "- No library row has a model row of the same case and timing.\n";
  if (!c.library_without_model.empty()) {
    os << "- Library rows without a model row (" << c.library_without_model.size() << "):";
    for (std::size_t i = 0; i < c.library_without_model.size() && i < 10; ++i)
      os << (i ? ", " : " ") << "`" << md(c.library_without_model[i]) << "`";
    if (c.library_without_model.size() > 10)
      os << ", ... and " << c.library_without_model.size() - 10 << " more";
    os << ".\n";
  }
  if (!c.model_without_library.empty())
    os << "- Model rows of the paired backends without a library row: " << c.model_without_library.size()
       << ".\n";

  for (const auto& [mb, lb] : backend_pairs(c)) {
    os << "\n### " << mb << " vs " << lb << "\n\n";
    table::Table t;
    for (const char* name : {"case", "timing", "model µs/layer", "library µs/layer", "ratio", "model step µs",
                             "library step µs", "step ratio", "library reference check"})
      t.columns.push_back({name});
    for (const PeerPair& p : c.pairs) {
      if (p.model_backend != mb || p.lib_backend != lb) continue;
      t.add({str("`" + p.case_id + "`"), str(p.timing), str(us_cell(p.model_forward_median_us, p.model_status, "%.2f")),
             str(us_cell(p.lib_forward_median_us, p.lib_status, "%.2f")), str(ratio_cell(p.ratio_forward)),
             str(us_cell(p.model_step_median_us, p.model_status, "%.1f")),
             str(us_cell(p.lib_step_median_us, p.lib_status, "%.1f")), str(ratio_cell(p.ratio_step)),
             str(ref_cell(p.lib_ref_pass))});
    }
    table::print_markdown(os, t);
  }

  os << "\n### Wrapper memory, modelled vs measured\n";
  if (c.memory.empty()) os << "\nNo paired case.\n";
  for (const PeerMemory& m : c.memory) {
    os << "\n**" << m.model_backend << " vs " << m.lib_backend << "**: ";
    if (m.case_id.empty()) {
      os << "needs the JSON reports (no paired case where both rows carry a ledger; a results CSV has "
            "none).\n";
      continue;
    }
    os << "construct phase of `" << md(m.case_id) << "` (" << m.timing
       << "): attnbench's ledger (modelled) vs what the library allocated (measured); difference = library - "
          "modelled, \"-\" = no such tag on that side.\n\n";
    table::Table t;
    for (const char* name : {"tag", "kind", "modelled bytes", "library bytes", "difference"})
      t.columns.push_back({name});
    for (const PeerTagLine& l : m.lines)
      t.add({str("`" + l.tag + "`"), str(l.kind), str(bytes_cell(l.model_bytes)), str(bytes_cell(l.lib_bytes)),
             str(diff_cell(l.difference()))});
    for (const PeerKindTotal& t2 : m.totals)
      t.add({str("**total " + t2.kind + "**"), str(t2.kind), str(bytes_cell(t2.model_bytes)),
             str(bytes_cell(t2.lib_bytes)), str(diff_cell(t2.lib_bytes - t2.model_bytes))});
    table::print_markdown(os, t);
  }
}

void write_peer_table(std::ostream& os, const PeerComparison& c) {
  table::Table t;
  t.columns = {{"case_id", Align::left, 7, true},
               {"timing", Align::left, 8},
               {"model", Align::left, 5, true},
               {"library", Align::left, 7, true},
               {"model us/layer", Align::right, 15},
               {"lib us/layer", Align::right, 13},
               {"ratio", Align::right, 8},
               {"model step us", Align::right, 15},
               {"lib step us", Align::right, 13},
               {"step ratio", Align::right, 11},
               {"lib ref", Align::left, 0, false, 2}};
  for (const PeerPair& p : c.pairs)
    t.add({str(p.case_id), str(p.timing), str(p.model_backend), str(p.lib_backend),
           str(us_cell(p.model_forward_median_us, p.model_status, "%.2f")),
           str(us_cell(p.lib_forward_median_us, p.lib_status, "%.2f")), str(ratio_cell(p.ratio_forward)),
           str(us_cell(p.model_step_median_us, p.model_status, "%.1f")),
           str(us_cell(p.lib_step_median_us, p.lib_status, "%.1f")), str(ratio_cell(p.ratio_step)),
           str(ref_cell(p.lib_ref_pass))});
  table::print_text(os, t);
  if (!c.library_without_model.empty()) {
    os << "\nlibrary rows without a model row (" << c.library_without_model.size() << "):\n";
    for (const auto& k : c.library_without_model) os << "  " << k << "\n";
  }
  if (!c.model_without_library.empty())
    os << "\nmodel rows without a library row: " << c.model_without_library.size() << "\n";
  for (const PeerMemory& m : c.memory) {
    os << "\nconstruct memory, " << m.model_backend << " (modelled) vs " << m.lib_backend << " (measured)";
    if (m.case_id.empty()) {
      os << ": needs the JSON reports (no paired case where both rows carry a ledger)\n";
      continue;
    }
    os << ", " << m.case_id << " " << m.timing << "; difference = library - modelled:\n";
    table::Table tags;
    tags.header = false;
    tags.columns = {{"tag", Align::left, 5, true, 2},
                    {"kind", Align::left, 8},
                    {"modelled bytes", Align::right, 16},
                    {"library bytes", Align::right, 16},
                    {"difference", Align::right, 16}};
    for (const PeerTagLine& l : m.lines)
      tags.add({str(l.tag), str(l.kind), str(commas_or_dash(l.model_bytes)), str(commas_or_dash(l.lib_bytes)),
                str(commas_or_dash(l.difference()))});
    for (const PeerKindTotal& k : m.totals)  // the totals do not widen the tag column
      tags.add({str("total " + k.kind), str(k.kind), str(with_commas(k.model_bytes)), str(with_commas(k.lib_bytes)),
                str(with_commas(k.lib_bytes - k.model_bytes))},
               false);
    table::print_text(os, tags);
  }
  for (const std::string& e : library_env_lines(c)) os << "\nlibrary environment: " << e << "\n";
  if (!c.warnings.empty()) {
    os << "\nwarnings:\n";
    for (const auto& w : c.warnings) os << "  " << w << "\n";
  }
  os << "\nsummary (ratio = model / library; > 1 = attnbench slower):\n";
  for (const std::string& l : peer_summary_lines(c)) os << "  " << l << "\n";
  if (c.summary.empty()) os << "  no library row has a model row of the same case and timing\n";
}

void write_peer_csv(std::ostream& os, const PeerComparison& c) { table::print_csv(os, pairs_table(c)); }

void write_peer_json(std::ostream& os, const PeerComparison& c, const std::string& line) {
  using oj = nlohmann::ordered_json;
  const auto num = [](const std::optional<double>& v) { return v ? oj(*v) : oj(); };
  const auto bytes = [](const std::optional<std::int64_t>& v) { return v ? oj(*v) : oj(); };
  oj j;
  j["schema"] = "attnbench.peers";
  j["schema_version"] = 1;
  j["comparison"] = line;
  j["slow_ratio"] = c.slow_ratio;
  j["summary"] = oj::array();
  for (const PeerSummary& s : c.summary) {
    oj slow = oj::array();
    for (const auto& [id, r] : s.slow) slow.push_back({{"case_id", id}, {"ratio_forward", r}});
    j["summary"].push_back({{"model_backend", s.model_backend},
                            {"library_backend", s.lib_backend},
                            {"timing", s.timing},
                            {"count", s.count},
                            {"ratio_forward_median", s.count ? oj(s.median) : oj()},
                            {"ratio_forward_min", s.count ? oj(s.min) : oj()},
                            {"ratio_forward_max", s.count ? oj(s.max) : oj()},
                            {"ratio_step_median", num(s.step_median)},
                            {"not_compared", s.not_compared},
                            {"slow", slow}});
  }
  j["summary_lines"] = peer_summary_lines(c);
  j["pairs"] = table::to_json(pairs_table(c));
  j["memory"] = oj::array();
  for (const PeerMemory& m : c.memory) {
    oj tags = oj::array(), totals = oj::array();
    for (const PeerTagLine& l : m.lines)
      tags.push_back({{"tag", l.tag},
                      {"kind", l.kind},
                      {"model_bytes", bytes(l.model_bytes)},
                      {"library_bytes", bytes(l.lib_bytes)},
                      {"difference_bytes", bytes(l.difference())}});
    for (const PeerKindTotal& t : m.totals)
      totals.push_back({{"kind", t.kind},
                        {"model_bytes", t.model_bytes},
                        {"library_bytes", t.lib_bytes},
                        {"difference_bytes", t.lib_bytes - t.model_bytes}});
    j["memory"].push_back({{"model_backend", m.model_backend},
                           {"library_backend", m.lib_backend},
                           {"case_id", m.case_id.empty() ? oj() : oj(m.case_id)},
                           {"timing", m.timing.empty() ? oj() : oj(m.timing)},
                           {"phase", "construct"},
                           {"tags", tags},
                           {"totals", totals}});
  }
  j["library_without_model"] = c.library_without_model;
  j["model_without_library"] = c.model_without_library;
  j["library_environments"] = oj::array();
  for (const Environment& e : c.library_environments) {
    oj o = oj::object();
    for (const auto& [k, v] : e) o[k] = v;
    j["library_environments"].push_back(o);
  }
  j["warnings"] = c.warnings;
  os << std::setw(2) << j << "\n";
}

}  // namespace attnbench
