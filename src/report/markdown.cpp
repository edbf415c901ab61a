#include "report/markdown.hpp"

#include <algorithm>
#include <filesystem>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "core/case_id.hpp"
#include "core/errors.hpp"
#include "core/files.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "report/peers.hpp"
#include "report/run_summary.hpp"
#include "report/sglang_peers.hpp"
#include "report/table.hpp"
#include "report/text.hpp"

namespace attnbench {

namespace {

using text::fmt;
using text::with_commas;
using text::md;

std::string bytes_cell(const std::optional<std::int64_t>& v) { return v ? format_bytes(*v) : "-"; }

int dtype_bytes(const std::string& dtype) {
  if (dtype == "bf16" || dtype == "fp16") return 2;
  if (dtype == "fp32") return 4;
  if (dtype == "fp8" || dtype == "fp8_e4m3" || dtype == "fp8_e5m2") return 1;
  return 0;
}

bool ok(const ResultRow* r) { return r && r->status == RowStatus::ok; }

// The rows of one (case, timing), by backend, in the order the file first names them.
struct CaseTiming {
  std::string case_id, timing, mode, model;
  std::map<std::string, const ResultRow*> by_backend;
  const ResultRow* get(const std::string& b) const {
    const auto it = by_backend.find(b);
    return it == by_backend.end() ? nullptr : it->second;
  }
};

struct Index {
  std::vector<std::string> backends, models;
  std::vector<CaseTiming> groups;
};

Index index_rows(const std::vector<ResultRow>& rows) {
  Index ix;
  std::map<std::pair<std::string, std::string>, std::size_t> where;
  for (const ResultRow& r : rows) {
    if (std::find(ix.backends.begin(), ix.backends.end(), r.backend) == ix.backends.end())
      ix.backends.push_back(r.backend);
    if (std::find(ix.models.begin(), ix.models.end(), r.model) == ix.models.end())
      ix.models.push_back(r.model);
    const auto key = std::make_pair(r.case_id, r.timing);
    auto it = where.find(key);
    if (it == where.end()) {
      it = where.emplace(key, ix.groups.size()).first;
      ix.groups.push_back({r.case_id, r.timing, r.mode, r.model, {}});
    }
    ix.groups[it->second].by_backend.emplace(r.backend, &r);
  }
  return ix;
}

bool has_backend(const Index& ix, const std::string& b) {
  return std::find(ix.backends.begin(), ix.backends.end(), b) != ix.backends.end();
}

// ---- ratios -----------------------------------------------------------------------------------------------

std::optional<LatencyRatio> ratio(const ResultRow* a, const ResultRow* b) {
  if (!a || !b) return std::nullopt;
  return latency_ratio(*a, *b);
}

// "1.000 (0.985-1.017)": the ratio and its band, both rounded the same way (so the printed ratio lies in the
// printed band too).
std::string ratio_cell(const std::optional<LatencyRatio>& r) {
  if (!r) return "-";
  std::string s = fmt("%.3f", r->ratio);
  if (r->has_band) s += " (" + fmt("%.3f", r->lo) + "-" + fmt("%.3f", r->hi) + ")";
  return s;
}

// "median 1.000, range 0.985-1.028 over 94 (case, timing) pairs", or empty when no pair has both rows.
std::string ratio_summary(const Index& ix, const std::string& a, const std::string& b) {
  std::vector<double> v;
  for (const CaseTiming& g : ix.groups)
    if (const auto r = ratio(g.get(a), g.get(b))) v.push_back(r->ratio);
  if (v.empty()) return "";
  const Summary r = summarize(v);
  return "median " + fmt("%.3f", r.median) + ", range " + fmt("%.3f", r.min) + "-" + fmt("%.3f", r.max) +
         " over " + std::to_string(v.size()) + " (case, timing) pairs";
}

// ---- memory
// -------------------------------------------------------------------------------------------------

struct MemoryLine {
  std::string model, backend;
  std::optional<std::int64_t> ctor_device, ctor_driver, ctor_pinned, graph_device, graph_pinned,
      capture_device, capture_pinned;
};

struct Saving {
  std::int64_t device = 0, pinned = 0;
  std::int64_t kv_bytes_per_token = 0;
  std::string
      basis;  // how kv_bytes_per_token was obtained, e.g. "2 x 8 KV heads x 128 head_dim x 2 B x 6 layers"
  std::string depth;  // whose layers count, e.g. "the full model: 32 layers"
  std::string model, source;
};

// "**X device (N B) + Y pinned host memory per instance** = T KV-cache tokens of MODEL at B B per token", and
// with `with_depth` " (the full model: 32 layers)".
std::string saving_text(const Saving& s, bool with_depth = false) {
  std::string t = "**" + format_bytes(s.device) + " device (" + with_commas(s.device) + " B) + " +
                  format_bytes(s.pinned) + " pinned host memory per instance**";
  if (s.kv_bytes_per_token > 0) {
    t += " = " + with_commas(s.device / s.kv_bytes_per_token) + " KV-cache tokens of " + s.model + " at " +
         with_commas(s.kv_bytes_per_token) + " B per token";
    if (with_depth && !s.depth.empty()) t += " (" + s.depth + ")";
  }
  return t;
}

// The memory table; the rows carry no graph-state pinned column, the memory report does.
table::Table memory_table(bool graph_pinned) {
  table::Table t;
  for (const char* name : {"model", "backend", "construct", "construct (driver)", "construct pinned", "graph state"})
    t.columns.push_back({name});
  if (graph_pinned) t.columns.push_back({"graph state pinned"});
  t.columns.push_back({"capture"});
  t.columns.push_back({"capture pinned"});
  return t;
}

void add_memory_line(table::Table& t, const MemoryLine& m, bool graph_pinned) {
  using table::str;
  std::vector<table::Cell> cells = {str(m.model), str(m.backend), str(bytes_cell(m.ctor_device)),
                                    str(bytes_cell(m.ctor_driver)), str(bytes_cell(m.ctor_pinned)),
                                    str(bytes_cell(m.graph_device))};
  if (graph_pinned) cells.push_back(str(bytes_cell(m.graph_pinned)));
  cells.push_back(str(bytes_cell(m.capture_device)));
  cells.push_back(str(bytes_cell(m.capture_pinned)));
  t.add(std::move(cells));
}

// Memory from the `attnbench memory` evidence. Returns the saving of the change when both backends are there.
std::optional<Saving> write_memory_from_report(std::ostream& os, const MemoryReport& r,
                                               const BackendChange& change) {
  std::string ctx;
  for (const auto& [k, v] : r.context) ctx += (ctx.empty() ? "" : "; ") + k + " " + v;
  os << "From `attnbench memory` (ledger: requested bytes; driver: drop in free device memory)"
     << (ctx.empty() ? "" : ": " + md(ctx)) << ".\n\n";
  table::Table t = memory_table(true);
  for (const BackendMemory& b : r.backends) {
    if (!b.error.empty()) {
      std::vector<table::Cell> cells(t.columns.size());
      cells[0] = table::str(r.model);
      cells[1] = table::str(b.backend);
      cells[2] = table::str("failed: " + b.error);
      t.add(std::move(cells));
      continue;
    }
    MemoryLine m{r.model, b.backend, {}, {}, {}, {}, {}, {}, {}};
    if (const MemoryPhase* p = b.phase("construct")) {
      m.ctor_device = p->device_bytes;
      m.ctor_driver = p->driver_delta_bytes;
      m.ctor_pinned = p->pinned_bytes;
    }
    if (const MemoryPhase* p = b.phase("graph_state")) {
      m.graph_device = p->device_bytes;
      m.graph_pinned = p->pinned_bytes;
    }
    if (const MemoryPhase* p = b.phase("capture")) {
      m.capture_device = p->device_bytes;
      m.capture_pinned = p->pinned_bytes;
    }
    add_memory_line(t, m, true);
  }
  table::print_markdown(os, t);
  const auto s = memory_saving(r, change);
  if (!s) return std::nullopt;
  Saving out;
  out.device = s->device_bytes;
  out.pinned = s->pinned_bytes;
  out.kv_bytes_per_token = r.kv_bytes_per_token;
  out.basis = "the model's full KV cache, 2 x layers x KV heads x head_dim x dtype bytes";
  out.depth = "the full model, as `attnbench memory` counts it";
  out.model = r.model;
  out.source = "`attnbench memory`";
  return out;
}

// Memory from the rows: per model, one row per backend from the first case every backend ran.
std::vector<Saving> write_memory_from_rows(std::ostream& os, const Index& ix, const BackendChange& change,
                                          const std::map<std::string, int>& model_layers) {
  std::vector<Saving> savings;
  bool run_depth = false;  // some saving counted the run's layers (the model's depth unknown)
  std::vector<std::pair<std::string, std::string>> sources;  // model -> case used
  std::vector<MemoryLine> lines;
  for (const std::string& model : ix.models) {
    // Prefer a (case, graph) group where every backend of this model ran ok: it carries all three phases.
    std::set<std::string> model_backends;
    for (const CaseTiming& g : ix.groups)
      if (g.model == model)
        for (const auto& [b, r] : g.by_backend) model_backends.insert(b);
    const CaseTiming* pick = nullptr;
    for (const bool want_graph : {true, false}) {
      for (const CaseTiming& g : ix.groups) {
        if (g.model != model || (want_graph && g.timing != "graph")) continue;
        const bool all = std::all_of(model_backends.begin(), model_backends.end(), [&](const std::string& b) {
          return ok(g.get(b)) && g.get(b)->ctor_device_bytes;
        });
        if (all) {
          pick = &g;
          break;
        }
      }
      if (pick) break;
    }
    if (!pick) continue;
    sources.emplace_back(model, pick->case_id + "` (" + pick->timing + ")");
    for (const std::string& b : ix.backends) {
      const ResultRow* r = pick->get(b);
      if (!ok(r)) continue;
      lines.push_back({model, b, r->ctor_device_bytes, r->ctor_driver_delta_bytes, r->ctor_pinned_bytes,
                       r->graph_state_device_bytes, std::nullopt, r->capture_device_bytes,
                       r->capture_pinned_bytes});
    }
    const ResultRow* legacy = pick->get(change.baseline);
    const ResultRow* lean = pick->get(change.candidate);
    if (ok(legacy) && ok(lean)) {
      Saving s;
      const auto diff = [&](std::optional<std::int64_t> ResultRow::*m, std::int64_t& into) {
        if (legacy->*m && lean->*m) into += *(legacy->*m) - *(lean->*m);
      };
      diff(&ResultRow::ctor_device_bytes, s.device);
      diff(&ResultRow::graph_state_device_bytes, s.device);
      diff(&ResultRow::capture_device_bytes, s.device);
      diff(&ResultRow::ctor_pinned_bytes, s.pinned);
      diff(&ResultRow::capture_pinned_bytes, s.pinned);
      // The KV cache's element size: an fp8 cache (--kv-cache-dtype, named in the case id) holds 1 byte.
      const std::optional<CaseIdParts> id = parse_case_id(lean->case_id);
      const std::string kv_cache = id ? id->kv_cache_dtype : "";
      const bool fp8_cache = kv_cache.rfind("fp8_", 0) == 0;
      const int db = fp8_cache ? 1 : dtype_bytes(lean->dtype);
      const std::string cache_dtype = fp8_cache ? kv_cache : lean->dtype;
      // SGLang's KV cache holds every layer of the model: count the full depth when it is known.
      const auto full = model_layers.find(model);
      const bool known = full != model_layers.end() && full->second > 0;
      const int layers = known ? full->second : lean->layers;
      s.kv_bytes_per_token = 2LL * lean->num_kv_heads * lean->head_dim * db * layers;
      s.basis = "2 x " + std::to_string(lean->num_kv_heads) + " KV heads x " +
                std::to_string(lean->head_dim) + " head_dim x " + std::to_string(db) + " B (" + cache_dtype +
                ") x " + std::to_string(layers) + " layers";
      if (known) {
        s.depth = "the full model: " + std::to_string(layers) + " layers" +
                  (layers != lean->layers ? "; this run stepped " + std::to_string(lean->layers) : "");
      } else {
        s.depth = "the " + std::to_string(lean->layers) + " layers this run stepped; the model's depth is unknown";
        run_depth = true;
      }
      s.model = model;
      s.source = "the rows of `" + pick->case_id + "`";
      savings.push_back(s);
    }
  }
  os << "From the rows' memory columns (ledger, requested bytes; driver = drop in free device memory), one "
        "case per "
        "model: ";
  for (std::size_t i = 0; i < sources.size(); ++i)
    os << (i ? ", " : "") << md(sources[i].first) << ": `" << md(sources[i].second);
  os << (sources.empty() ? "no case with memory columns" : "") << ".\n\n";
  if (!lines.empty()) {
    table::Table t = memory_table(false);
    for (const MemoryLine& m : lines) add_memory_line(t, m, false);
    table::print_markdown(os, t);
  }
  if (run_depth)
    os << "\nKV bytes per token come from the rows: the rows' `layers` are the layers this run stepped, not "
          "necessarily the model's full depth (the full depth gives proportionally fewer tokens; `attnbench "
          "memory` "
          "uses it).\n";
  else if (!savings.empty())
    os << "\nKV bytes per token are the full model's (every layer holds K and V in SGLang's KV cache), whatever "
          "number of layers the run stepped.\n";
  return savings;
}

// ---- correctness ------------------------------------------------------------------------------------------

struct Correctness {
  std::map<std::string, int> status;
  int ref_checked = 0, ref_pass = 0;
  std::optional<double> max_abs;
  std::string max_abs_at;
  int lean_rows = 0, lean_identical = 0;  // ok rows of the change's candidate with an ok baseline row / bit-identical
  int graph_rows = 0, replay_identical = 0, replay_padded = 0, replay_differs = 0;
  std::vector<const ResultRow*> failed, ref_failed, skipped;
};

Correctness tally(const std::vector<ResultRow>& rows, const BackendChange& change) {
  Correctness c;
  for (const ResultRow& r : rows) {
    ++c.status[row_status_name(r.status)];
    if (r.status == RowStatus::failed || r.status == RowStatus::oom) c.failed.push_back(&r);
    if (r.status == RowStatus::skipped) c.skipped.push_back(&r);
    if (r.ref_pass) {
      ++c.ref_checked;
      if (*r.ref_pass) {
        ++c.ref_pass;
      } else {
        c.ref_failed.push_back(&r);
      }
    }
    if (r.ref_max_abs_err && (!c.max_abs || *r.ref_max_abs_err > *c.max_abs)) {
      c.max_abs = r.ref_max_abs_err;
      c.max_abs_at = r.case_id + " " + r.backend + " " + r.timing;
    }
    if (r.timing == "graph" && r.status != RowStatus::skipped) {
      ++c.graph_rows;
      if (r.note.find("replay bit-identical to eager") != std::string::npos) ++c.replay_identical;
      if (r.note.find("replay vs eager max abs") != std::string::npos) ++c.replay_padded;
      if (r.note.find("graph replay output differs") != std::string::npos) ++c.replay_differs;
    }
  }
  const BitIdentity same = bit_identity(rows, change);
  c.lean_rows = same.compared;
  c.lean_identical = same.compared - static_cast<int>(same.breaks.size());
  return c;
}

std::string row_ref(const ResultRow& r) { return "`" + md(r.case_id) + "` " + r.backend + " " + r.timing; }

// Every unordered pair of backends: rows bit-identical / rows where both ran ok.
void write_bitwise_pairs(std::ostream& os, const Index& ix) {
  for (std::size_t i = 0; i < ix.backends.size(); ++i)
    for (std::size_t k = i + 1; k < ix.backends.size(); ++k) {
      const std::string& a = ix.backends[i];
      const std::string& b = ix.backends[k];
      int both = 0, same = 0;
      for (const CaseTiming& g : ix.groups) {
        if (!ok(g.get(a)) || !ok(g.get(b))) continue;
        ++both;
        if (bitwise_equal_names(g.get(a)->bitwise_equal_to).count(b) ||
            bitwise_equal_names(g.get(b)->bitwise_equal_to).count(a))
          ++same;
      }
      if (both > 0) os << "  - " << a << " = " << b << ": " << same << " of " << both << "\n";
    }
}

void write_row_list(std::ostream& os, const std::vector<const ResultRow*>& rows, std::size_t limit) {
  for (std::size_t i = 0; i < rows.size() && i < limit; ++i) {
    std::string note = rows[i]->note;
    if (note.size() > 140) note = note.substr(0, 137) + "...";
    os << "  - " << row_ref(*rows[i]) << (note.empty() ? "" : ": " + md(note)) << "\n";
  }
  if (rows.size() > limit) os << "  - ... and " << rows.size() - limit << " more\n";
}

// ---- environment ------------------------------------------------------------------------------------------

std::optional<std::string> env_get(const Environment& env, const std::string& key) {
  for (const auto& [k, v] : env)
    if (k == key && !v.empty()) return v;
  return std::nullopt;
}

std::string env_line(const Environment& env) {
  std::string s;
  const auto add = [&](const std::string& text) { s += (s.empty() ? "" : ", ") + text; };
  if (auto v = env_get(env, "gpu_name")) add(*v);
  if (auto v = env_get(env, "sm_count")) add(*v + " SMs");
  if (auto v = env_get(env, "driver_version")) add("driver " + *v);
  if (auto v = env_get(env, "runtime_version")) add("CUDA runtime " + *v);
  if (auto v = env_get(env, "sm_clock_measured_mhz")) add("SM clock " + *v + " MHz measured");
  if (auto v = env_get(env, "read_bandwidth_bytes_per_s"))
    add("read bandwidth " + fmt("%.0f", std::atof(v->c_str()) / 1e9) + " GB/s");
  if (auto v = env_get(env, "copy_bandwidth_bytes_per_s"))
    add("copy bandwidth " + fmt("%.0f", std::atof(v->c_str()) / 1e9) + " GB/s");
  if (auto v = env_get(env, "cpu")) add(*v);
  if (auto v = env_get(env, "attnbench_version")) add("attnbench " + *v);
  if (auto v = env_get(env, "git_commit")) add("commit " + *v);
  return s;
}

// "**GPU:** NVIDIA H200 (132 SMs, driver 13.0)" from the environment, else from the rows' devices.
std::string device_headline(const ResultSet& set) {
  if (auto g = env_get(set.environment, "gpu_name")) {
    std::string extra;
    if (auto v = env_get(set.environment, "sm_count")) extra += *v + " SMs";
    if (auto v = env_get(set.environment, "driver_version")) extra += (extra.empty() ? "" : ", ") + ("driver " + *v);
    return "**GPU:** " + md(*g) + (extra.empty() ? "" : " (" + md(extra) + ")");
  }
  // No environment (a CSV): the rows' devices; any that is not the CPU device ("cpu (N threads)") is a GPU.
  std::set<std::string> gpus, cpus;
  for (const ResultRow& r : set.rows) (r.device.rfind("cpu", 0) == 0 ? cpus : gpus).insert(r.device);
  const auto join = [](const std::set<std::string>& v) {
    std::string d;
    for (const std::string& x : v) d += (d.empty() ? "" : ", ") + x;
    return d;
  };
  if (!gpus.empty()) return "**GPU:** " + md(join(gpus)) + " (from the rows; no environment recorded)";
  return "**GPU:** none (device: " + md(cpus.empty() ? std::string("not recorded") : join(cpus)) + ")";
}

// The SGLang release whose profile the rows model: the JSON environment's `sglang_version`.
std::string sglang_headline(const ResultSet& set) {
  if (auto v = env_get(set.environment, "sglang_version")) return "**SGLang:** " + md(*v);
  return "**SGLang:** version not recorded (these results name no SGLang profile)";
}

}  // namespace

std::optional<LatencyRatio> latency_ratio(const ResultRow& a, const ResultRow& b) {
  if (a.status != RowStatus::ok || b.status != RowStatus::ok || !a.step_median_us || !b.step_median_us || *a.step_median_us <= 0 ||
      *b.step_median_us <= 0)
    return std::nullopt;
  LatencyRatio r;
  r.ratio = *a.step_median_us / *b.step_median_us;
  constexpr std::size_t kMinSamples = 5;
  const auto finite_positive = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x) && x > 0; });
  };
  if (a.samples_us.size() >= kMinSamples && b.samples_us.size() >= kMinSamples && finite_positive(a.samples_us) &&
      finite_positive(b.samples_us)) {
    // Percentile bootstrap of the ratio of medians (core/stats.hpp): seeded, the same band on every standard
    // library, and its cost bounded whatever the number of samples (at most kMaxBootstrapDraws per side).
    const BootstrapBand band = bootstrap_median_ratio(a.samples_us, b.samples_us);
    r.lo = std::min(band.lo, r.ratio);
    r.hi = std::max(band.hi, r.ratio);
    r.has_band = true;
    r.bootstrap = true;
    return r;
  }
  if (a.step_p10_us && a.step_p90_us && b.step_p10_us && b.step_p90_us && *b.step_p10_us > 0 && *b.step_p90_us > 0) {
    r.lo = std::min(*a.step_p10_us / *b.step_p90_us, r.ratio);  // min/max: guards rows whose p10 > median (bad data)
    r.hi = std::max(*a.step_p90_us / *b.step_p10_us, r.ratio);
    r.has_band = true;
  }
  return r;
}

void write_markdown_report(std::ostream& os, const ResultSet& all, const MemoryReport* memory,
                           const std::string& command, const BackendCatalog& catalog,
                           const std::vector<ResultSet>& peers, const MarkdownExtras& extras) {
  const std::string& kLean = catalog.change.candidate;
  const std::string& kLegacy = catalog.change.baseline;
  // Library rows (a merged file) are not attnbench's backends: every section but "Model vs library" leaves them
  // out, so that counts, ratios and bit-identity stay about the model.
  auto [model_rows, library_rows] = split_library_rows(all.rows);
  ResultSet results;
  results.rows = std::move(model_rows);
  results.environment = all.environment;
  results.command = all.command;
  const Index ix = index_rows(results.rows);
  const Correctness c = tally(results.rows, catalog.change);

  // Sections are built first so that the headline can quote them.
  std::ostringstream mem;
  std::vector<Saving> savings;
  if (memory) {
    if (auto s = write_memory_from_report(mem, *memory, catalog.change)) savings.push_back(*s);
  } else {
    savings = write_memory_from_rows(mem, ix, catalog.change, extras.model_layers);
  }

  os << "## attnbench: " << kLegacy << " -> " << kLean << "\n\n";
  // Where it ran and which SGLang it models, then the headline: what a reviewer needs in four lines.
  os << device_headline(results) << "; " << sglang_headline(results) << "\n\n";
  if (!savings.empty())
    os << "- **Memory:** " << kLegacy << " - " << kLean << " saves " << saving_text(savings.front(), true)
       << "; from " << savings.front().source << ".\n";
  if (c.lean_rows > 0)
    os << "- **Behaviour:** " << kLean << " output bit-identical to " << kLegacy << " in **"
       << c.lean_identical << " of " << c.lean_rows << "** (case, timing) pairs.\n";
  os << "- **Correctness:** " << results.rows.size() << " rows";
  for (const auto& [status, n] : c.status) os << ", " << n << " " << status;
  os << "; reference check " << c.ref_pass << " of " << c.ref_checked << " pass";
  if (c.max_abs) os << " (max abs error " << fmt("%.3g", *c.max_abs) << ")";
  os << ".\n";
  if (const std::string s = ratio_summary(ix, kLean, kLegacy); !s.empty())
    os << "- **Latency** (step time, lower is better) " << kLean << " / " << kLegacy << ": " << s
       << " (below 1: " << kLean << " is faster).\n";

  // (a) memory
  os << "\n### Memory per backend\n\n" << mem.str();
  if (!savings.empty()) os << "\nSaving of the change (" << kLegacy << " - " << kLean << "):\n\n";
  for (const Saving& s : savings)
    os << "- " << md(s.model) << ": " << saving_text(s) << (s.basis.empty() ? "" : " (" + s.basis + ")")
       << ".\n";

  // (b) latency: the change's candidate against its baseline, then against every other backend of the rows.
  std::vector<std::string> versus;
  if (has_backend(ix, kLean)) {
    if (has_backend(ix, kLegacy)) versus.push_back(kLegacy);
    for (const std::string& b : ix.backends)
      if (b != kLean && b != kLegacy) versus.push_back(b);
  }
  bool any_bootstrap = false, any_range = false;
  for (const CaseTiming& g : ix.groups)
    for (const std::string& b : versus)
      if (const auto r = ratio(g.get(kLean), g.get(b)); r && r->has_band) (r->bootstrap ? any_bootstrap : any_range) = true;
  os << "\n### Latency\n\nStep = `init_forward_metadata` + `forward_*` over every layer; µs, median "
        "(p10-p90), lower is better. Ratios: median / median, below 1 when " << kLean << " is faster; in brackets "
        "its noise band, which always holds the ratio";
  if (any_bootstrap)
    os << (any_range ? "; with raw samples (JSON)" : "") << ": the 5th-95th percentiles of the ratio of medians over "
       << "1000 bootstrap resamples of both rows' samples";
  if (any_range)
    os << (any_bootstrap ? "; from p10 / p90 (CSV rows, or under 5 samples)" : " (from p10 / p90: CSV rows, or under 5 samples)")
       << ": p10 / p90 - p90 / p10, a fast step of one over a slow step of the other (wider than the median's "
          "uncertainty)";
  os << ".\n";
  for (const std::string& b : versus)
    os << (b == kLegacy ? "\n- " : "- ") << kLean << " / " << b << ": " << ratio_summary(ix, kLean, b) << "\n";
  os << "\n<details><summary>Per case (" << ix.groups.size() << " case x timing rows)</summary>\n\n";
  table::Table lt;
  lt.columns = {{"case"}, {"timing"}};
  for (const std::string& b : ix.backends) lt.columns.push_back({b + " µs"});
  for (const std::string& b : versus) lt.columns.push_back({kLean + " / " + b});
  lt.columns.push_back({"TB/s (of copy) or TFLOP/s"});
  for (const CaseTiming& g : ix.groups) {
    std::vector<table::Cell> cells = {table::str("`" + g.case_id + "`"), table::str(g.timing)};
    for (const std::string& b : ix.backends) {
      const ResultRow* r = g.get(b);
      std::string cell;
      if (!r) {
        cell = "-";
      } else if (!ok(r) || !r->step_median_us) {
        cell = row_status_name(r->status);
      } else {
        cell = fmt("%.1f", *r->step_median_us);
        if (r->step_p10_us && r->step_p90_us)
          cell += " (" + fmt("%.1f", *r->step_p10_us) + "-" + fmt("%.1f", *r->step_p90_us) + ")";
      }
      cells.push_back(table::str(cell));
    }
    for (const std::string& b : versus) cells.push_back(table::str(ratio_cell(ratio(g.get(kLean), g.get(b)))));
    // Throughput of the candidate (else the first backend that ran): TFLOP/s for extend, TB/s of KV otherwise.
    const ResultRow* t = ok(g.get(kLean)) ? g.get(kLean) : nullptr;
    for (const std::string& b : ix.backends)
      if (!t && ok(g.get(b))) t = g.get(b);
    std::string tp = "-";
    if (t && g.mode == "extend" && t->tflops) {
      tp = fmt("%.0f", *t->tflops) + " TFLOP/s";
    } else if (t && t->tb_per_s) {
      tp = fmt("%.2f", *t->tb_per_s) + " TB/s" +
           (t->bw_fraction ? " (" + fmt("%.2f", *t->bw_fraction) + ")" : "");
    }
    if (t && t->backend != kLean && tp != "-") tp += " " + t->backend;
    cells.push_back(table::str(tp));
    lt.add(std::move(cells));
  }
  table::print_markdown(os, lt);
  os << "\n</details>\n";
  if (!extras.figures.empty()) {
    os << "\n### Figures\n\n";
    for (const std::string& f : extras.figures) {
      std::string name = f.substr(f.find_last_of('/') == std::string::npos ? 0 : f.find_last_of('/') + 1);
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".png") == 0) name.resize(name.size() - 4);
      // <...>: a path with blanks or parentheses stays one link target.
      os << "![" << md(name) << "](" << (f.find_first_of(" ()") == std::string::npos ? f : "<" + f + ">") << ")\n";
    }
  } else {
    os << "\nFigures: `python3 scripts/plot.py RESULTS.csv --out plots` draws, per model and mode, the ratios "
       << kLean << " / " << kLegacy << " and " << kLean << " / flashinfer with their noise bands "
          "(`ratio_<model>.png`); `attnbench report RESULTS --plots plots` links them here.\n";
  }

  // (c) correctness
  os << "\n### Correctness\n\n- Rows: " << results.rows.size();
  for (const auto& [status, n] : c.status) os << ", " << n << " " << status;
  os << ".\n- Reference (float64, per-dtype tolerance): " << c.ref_pass << " of " << c.ref_checked
     << " checked rows pass";
  if (c.max_abs) os << "; max abs error " << fmt("%.3g", *c.max_abs) << " (" << md(c.max_abs_at) << ")";
  os << ".\n";
  if (!c.ref_failed.empty()) {
    os << "- Reference failures:\n";
    write_row_list(os, c.ref_failed, 10);
  }
  os << "- Bit-identical outputs (every layer), rows where both backends ran:\n";
  write_bitwise_pairs(os, ix);
  if (c.graph_rows > 0)
    os << "- CUDA-graph replay vs eager output: " << c.replay_identical << " of " << c.graph_rows
       << " graph rows bit-identical"
       << (c.replay_padded ? ", " + std::to_string(c.replay_padded) + " padded (within tolerance)" : "")
       << ", " << c.replay_differs << " differ.\n";
  if (!c.failed.empty()) {
    os << "- Failed / oom rows:\n";
    write_row_list(os, c.failed, 10);
  }
  if (!c.skipped.empty()) {
    os << "- Skipped rows:\n";
    write_row_list(os, c.skipped, 10);
  }

  // (d) environment
  os << "\n### Environment\n\n";
  if (results.environment.empty()) {
    std::set<std::string> devices;
    for (const ResultRow& r : results.rows) devices.insert(r.device);
    std::string d;
    for (const std::string& x : devices) d += (d.empty() ? "" : ", ") + x;
    os << "Not recorded (a results CSV carries no environment; give the JSON report). Devices in the rows: "
       << md(d) << ".\n";
  } else {
    os << md(env_line(results.environment)) << ".\n\n<details><summary>All environment keys</summary>\n\n";
    table::Table t;
    t.columns = {{"key"}, {"value"}};
    for (const auto& [k, v] : results.environment) t.add({table::str(k), table::str(v)});
    table::print_markdown(os, t);
    os << "\n</details>\n";
  }

  // (e) the command
  const std::string& cmd = command.empty() ? results.command : command;
  os << "\n### Reproduce\n\n";
  if (cmd.empty()) {
    os << "Command not recorded; every row's `repro` column regenerates that row.\n";
  } else {
    os << "```sh\n" << cmd << "\n```\n";
  }

  // (f) the real libraries, when their rows are given
  const bool merged = !library_rows.empty();
  for (const ResultSet& p : peers) library_rows.insert(library_rows.end(), p.rows.begin(), p.rows.end());
  if (library_rows.empty()) return;
  // SGLang's own classes (*_sglang rows): their own section
  std::vector<Environment> sglang_envs;
  for (const ResultSet& p : peers)
    if (std::any_of(p.rows.begin(), p.rows.end(), [](const ResultRow& r) { return is_sglang_backend(r.backend); }))
      sglang_envs.push_back(p.environment);
  const SglangComparison sc = compare_sglang(results.rows, library_rows, catalog, sglang_envs);
  if (std::none_of(library_rows.begin(), library_rows.end(),
                   [](const ResultRow& r) { return is_library_backend(r.backend); })) {
    os << "\n";
    write_sglang_markdown(os, sc);
    return;
  }
  PeerComparison pc = compare_peers(results.rows, library_rows, catalog);
  // A merged file's environment is the library's only when the library script wrote it (its version keys).
  const bool library_env = std::any_of(catalog.library_versions.begin(), catalog.library_versions.end(),
                                       [&](const auto& kv) { return env_get(all.environment, kv.first).has_value(); });
  if (merged && library_env) pc.library_environments.push_back(all.environment);
  for (const ResultSet& p : peers) {
    if (!p.environment.empty()) pc.library_environments.push_back(p.environment);
    for (const std::string& w : check_peer_environments(all, p, true, "attnbench", "the library"))
      pc.warnings.push_back(w);
  }
  os << "\n";
  write_peer_markdown(os, pc);
  if (!sc.memory.empty()) {
    os << "\n";
    write_sglang_markdown(os, sc);
  }
}

MemoryReport load_memory_report_json(const std::string& path, const BackendCatalog& catalog) {
  using json = nlohmann::ordered_json;
  // A regular file within the size limit, no NUL byte, nesting bounded: all checked before parsing.
  const std::string text = read_input_file(path, "memory report", kMaxMemoryReportBytes);
  check_json_nesting(text, kMaxJsonNesting, "memory report " + printable(path));
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError("memory report " + printable(path) + ": not valid JSON (byte " + std::to_string(e.byte) + ")");
  } catch (const json::exception& e) {  // e.g. a number beyond double range
    throw InputError("memory report " + printable(path) + ": not valid JSON (" + json_error_text(e) + ")");
  }
  const auto bad = [&path](const std::string& what) {
    return InputError("memory report " + printable(path) + ": " + what);
  };
  if (const auto k = first_duplicate_json_key(text))
    throw bad("key \"" + printable(*k) + "\" given twice in one object (which one is meant?)");
  if (!j.is_object() || !j.contains("schema") || j["schema"] != "attnbench.memory")
    throw bad("not an attnbench memory report (schema \"attnbench.memory\")");
  if (!j.contains("schema_version") || j["schema_version"] != 1)
    throw bad("schema_version " + (j.contains("schema_version") ? j["schema_version"].dump() : "missing") +
              ", this attnbench reads 1");
  // Typed access with the JSON path in the error.
  const auto get_int = [&](const json& o, const char* key, const std::string& where) -> std::int64_t {
    if (!o.contains(key) || !o[key].is_number_integer())
      throw bad((where.empty() ? "" : where + ".") + key + " is not an integer");
    // An unsigned value beyond 2^63-1 would wrap negative in get<std::int64_t>.
    if (o[key].is_number_unsigned() &&
        o[key].get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      throw bad((where.empty() ? "" : where + ".") + key + " " + o[key].dump() +
                " is beyond 9223372036854775807");
    return o[key].get<std::int64_t>();
  };
  const auto get_str = [&](const json& o, const char* key, const std::string& where) -> std::string {
    if (!o.contains(key) || !o[key].is_string())
      throw bad((where.empty() ? "" : where + ".") + key + " is not text");
    return o[key].get<std::string>();
  };
  MemoryReport r;
  if (j.contains("context")) {
    if (!j["context"].is_object()) throw bad("context is not an object");
    for (const auto& [k, v] : j["context"].items())
      r.context.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
  }
  // A byte count as attnbench writes it: >= 0 (every figure of the ledger is what a phase allocated and kept:
  // construct, graph state and capture only allocate) and at most kMaxMemoryBytes. The bound is 2^50 B (1 PiB,
  // hundreds of times any GPU's memory): sums of a handful of such figures (three phases of two backends, the
  // saving) stay far inside int64 (2^63), where 2^62 per phase overflowed the saving ("saves -4294967296.51
  // GiB", signed-overflow UB). driver_delta_bytes may be negative (a difference of two driver readings: free
  // memory can rise while a phase runs, as the results' ctor_driver_delta_bytes), within the same bound.
  constexpr std::int64_t kMaxMemoryBytes = std::int64_t{1} << 50;
  const auto get_bytes = [&](const json& o, const char* key, const std::string& where, bool may_be_negative = false) {
    const std::int64_t v = get_int(o, key, where);
    const std::string name = (where.empty() ? "" : where + ".") + key + " " + std::to_string(v);
    if (v < 0 && !may_be_negative) throw bad(name + " is negative (a byte count is >= 0)");
    if (v > kMaxMemoryBytes || v < -kMaxMemoryBytes)
      throw bad(name + " is beyond " + (v < 0 ? "-" : "") + "2^50 (1 PiB, the bound on one memory figure)");
    return v;
  };
  r.kv_bytes_per_token = get_bytes(j, "kv_bytes_per_token", "");
  // attnbench writes the model's KV bytes per token (2 x layers x KV heads x head_dim x dtype bytes), never 0:
  // the saving is divided by it.
  if (r.kv_bytes_per_token == 0) throw bad("kv_bytes_per_token 0 is not > 0");
  if (j.contains("model") && j["model"].is_string()) {
    r.model = j["model"].get<std::string>();
  } else {
    for (const auto& [k, v] : r.context)
      if (k == "model") r.model = v.substr(0, v.find(" ("));
  }
  if (j.contains("sglang_version")) {
    r.sglang_version = get_str(j, "sglang_version", "");
  } else {  // reports written before the field: the context's display text, "0.5.23 (FlashInfer 0.7.2)"
    for (const auto& [k, v] : r.context)
      if (k == "sglang") r.sglang_version = v.substr(0, v.find(' '));
  }
  // What the writer puts in a tag: the ledger's kinds (device/ledger.hpp); its phases are kMemoryPhases.
  static const std::string kKinds[] = {"device", "pinned", "host"};
  // f(element, its JSON path) for each element of `array` (at path `where`); each must be an object.
  const auto each_object = [&](const json& array, const std::string& where, const auto& f) {
    for (std::size_t i = 0; i < array.size(); ++i) {
      const std::string w = where + "[" + std::to_string(i) + "]";
      if (!array[i].is_object()) throw bad(w + " is not an object");
      f(array[i], w);
    }
  };
  if (!j.contains("backends") || !j["backends"].is_array()) throw bad("no \"backends\" array");
  // A backend twice, or a phase twice in one backend: which one does the saving or the table take?
  std::map<std::string, std::string> backend_at;  // backend -> its JSON path
  each_object(j["backends"], "backends", [&](const json& jb, const std::string& wb) {
    BackendMemory b;
    b.backend = get_str(jb, "backend", wb);
    // A backend attnbench does not have: its figures would print as evidence of a class nothing here models.
    if (!catalog.find(b.backend)) {
      std::vector<std::string> known;
      for (const CatalogBackend& k : catalog.backends) known.push_back(k.name);
      throw bad(wb + ".backend '" + printable(b.backend) + "' is not an attnbench backend (" +
                text::one_of(known) + ")");
    }
    if (const auto [it, fresh] = backend_at.emplace(b.backend, wb); !fresh)
      throw bad(wb + ".backend '" + printable(b.backend) + "' again (first at " + it->second + ")");
    std::map<std::string, std::string> phase_at;
    b.models = jb.contains("models") ? get_str(jb, "models", wb) : "";
    b.error = jb.contains("error") ? get_str(jb, "error", wb) : "";
    if (!jb.contains("phases") || !jb["phases"].is_array()) throw bad(wb + ".phases is not an array");
    each_object(jb["phases"], wb + ".phases", [&](const json& jp, const std::string& wp) {
      MemoryPhase p;
      p.phase = get_str(jp, "phase", wp);
      if (const auto [it, fresh] = phase_at.emplace(p.phase, wp); !fresh)
        throw bad(wp + ".phase '" + printable(p.phase) + "' again (first at " + it->second + ")");
      p.device_bytes = get_bytes(jp, "device_bytes", wp);
      p.pinned_bytes = get_bytes(jp, "pinned_bytes", wp);
      p.host_bytes = jp.contains("host_bytes") ? get_bytes(jp, "host_bytes", wp) : 0;
      if (jp.contains("driver_delta_bytes") && !jp["driver_delta_bytes"].is_null())
        p.driver_delta_bytes = get_bytes(jp, "driver_delta_bytes", wp, /*may_be_negative=*/true);
      if (jp.contains("tags")) {
        if (!jp["tags"].is_array()) throw bad(wp + ".tags is not an array");
        each_object(jp["tags"], wp + ".tags", [&](const json& jt, const std::string& wt) {
          MemoryTag tag;
          tag.tag = get_str(jt, "tag", wt);
          tag.kind = get_str(jt, "kind", wt);
          if (std::find(std::begin(kKinds), std::end(kKinds), tag.kind) == std::end(kKinds))
            throw bad(wt + ".kind '" + printable(tag.kind) + "' is not device, pinned or host");
          tag.bytes = get_bytes(jt, "bytes", wt);
          if (jt.contains("shared")) {
            if (!jt["shared"].is_boolean()) throw bad(wt + ".shared is not true / false");
            tag.shared = jt["shared"].get<bool>();
          }
          const std::int64_t count = jt.contains("count") ? get_int(jt, "count", wt) : 0;
          if (count < std::numeric_limits<int>::min() || count > std::numeric_limits<int>::max())
            throw bad(wt + ".count " + std::to_string(count) + " is beyond int range");
          if (count < 0) throw bad(wt + ".count " + std::to_string(count) + " is negative (allocations)");
          tag.count = static_cast<int>(count);
          p.tags.push_back(std::move(tag));
        });
      }
      // Only the phases attnbench measures (runner/phases.hpp); checked after the phase's fields, so that a
      // malformed field is named first.
      if (std::find(std::begin(kMemoryPhases), std::end(kMemoryPhases), p.phase) == std::end(kMemoryPhases))
        throw bad(wp + ".phase '" + printable(p.phase) + "' is not one attnbench writes (construct, graph_state, capture)");
      // The tags break a phase's bytes down: each kind's tags add up to at most the phase's bytes of that kind.
      // The writer lists every (tag, kind) group the phase changed, so its sums are equal (Ledger::diff and
      // Ledger::diff_totals count the same records); a shorter list (a report abridged by hand, as the tests'
      // own) still describes the phase, tags beyond its total do not. host_bytes is checked where it is given.
      // Sums saturate just above the bound: a million tags of 2^50 B cannot overflow.
      if (jp.contains("tags")) {
        std::int64_t sum[3] = {0, 0, 0};
        for (const MemoryTag& t : p.tags) {
          const auto k = static_cast<std::size_t>(std::find(std::begin(kKinds), std::end(kKinds), t.kind) - std::begin(kKinds));
          sum[k] = std::min(sum[k] + t.bytes, kMaxMemoryBytes + 1);
        }
        const std::pair<const char*, std::int64_t> totals[3] = {
            {"device_bytes", p.device_bytes}, {"pinned_bytes", p.pinned_bytes}, {"host_bytes", p.host_bytes}};
        for (std::size_t k = 0; k < 3; ++k) {
          if (k == 2 && !jp.contains("host_bytes")) continue;
          if (sum[k] > totals[k].second)
            throw bad(wp + ".tags of kind " + kKinds[k] + " add up to " +
                      (sum[k] > kMaxMemoryBytes ? "over 2^50" : std::to_string(sum[k])) + " B, more than " +
                      totals[k].first + " " + std::to_string(totals[k].second));
        }
      }
      b.phases.push_back(std::move(p));
    });
    r.backends.push_back(std::move(b));
  });
  return r;
}

std::vector<std::string> figure_links(const std::string& dir, const std::string& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError("--plots: '" + dir + "' is not a directory");
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".png" && e.is_regular_file(ec)) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  const fs::path base = out.empty() || out == "-" ? fs::current_path(ec) : fs::absolute(out, ec).parent_path();
  for (std::string& f : files) {
    const fs::path rel = fs::absolute(f, ec).lexically_relative(base);
    if (!rel.empty()) f = rel.generic_string();
  }
  return files;
}

}  // namespace attnbench
