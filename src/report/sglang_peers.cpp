#include "report/sglang_peers.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/units.hpp"
#include "report/memory_report.hpp"
#include "report/peers.hpp"
#include "report/table.hpp"
#include "report/text.hpp"

namespace attnbench {

namespace {

using text::fmt;
using text::md;
using text::with_commas;

struct PhaseTag {
  std::int64_t bytes = 0;
  int count = 0;
  std::string kind;
};
using PhaseLedger = std::map<std::string, std::map<std::string, PhaseTag>>;  // phase -> tag -> bytes

// Per phase, the ledger of the first row (in order) that carries that phase.
PhaseLedger ledger_by_phase(const std::vector<const ResultRow*>& rows) {
  PhaseLedger out;
  for (const char* phase : kMemoryPhases) {
    for (const ResultRow* r : rows) {
      bool any = false;
      for (const ResultRow::LedgerGroup& g : r->ledger) {
        if (g.phase != phase) continue;
        PhaseTag& t = out[phase][g.tag];
        t.bytes += g.bytes;
        t.count += g.count;
        t.kind = g.kind;
        any = true;
      }
      if (any) break;
    }
  }
  return out;
}

std::string why(const SglangTagLine& l) {
  if (!l.sglang_bytes) return "SGLang's object holds no such tensor after this phase";
  if (!l.model_bytes) return "not in attnbench's ledger (not modelled)";
  std::string s;
  if (*l.sglang_bytes == *l.model_bytes) s = "equal";
  else s = "SGLang " + std::string(*l.sglang_bytes > *l.model_bytes ? "+" : "-") +
           with_commas(std::llabs(*l.sglang_bytes - *l.model_bytes)) + " B";
  if (l.model_count != l.sglang_count)
    s += "; " + std::to_string(l.sglang_count) + " allocation(s) in SGLang, " + std::to_string(l.model_count) +
         " modelled";
  return s;
}

std::optional<std::int64_t> construct_total(const PhaseLedger& p, const std::string& kind) {
  const auto it = p.find("construct");
  if (it == p.end()) return std::nullopt;
  std::int64_t s = 0;
  for (const auto& [tag, t] : it->second)
    if (t.kind == kind) s += t.bytes;
  return s;
}

std::string bytes_text(const std::optional<std::int64_t>& v) {
  return v ? with_commas(*v) + " (" + format_bytes(*v) + ")" : "-";
}

std::string signed_text(const std::optional<std::int64_t>& d) {
  if (!d) return "-";
  if (*d == 0) return "0";
  return (*d > 0 ? "+" : "-") + with_commas(std::llabs(*d));
}

}  // namespace

SglangComparison compare_sglang(const std::vector<ResultRow>& model_rows, const std::vector<ResultRow>& peer_rows,
                                const BackendCatalog& catalog, const std::vector<Environment>& sglang_envs) {
  SglangComparison c;
  std::map<std::string, const ResultRow*> models;
  for (const ResultRow& r : model_rows)
    if (!is_peer_backend(r.backend)) models.emplace(sample_key(r), &r);
  // (model backend, sglang backend, model preset, page) -> rows of each side, in order
  using Key = std::tuple<std::string, std::string, std::string, int>;
  std::map<Key, std::pair<std::vector<const ResultRow*>, std::vector<const ResultRow*>>> groups;
  std::vector<Key> order;
  std::set<std::string> seen;
  for (const ResultRow& s : peer_rows) {
    if (!is_sglang_backend(s.backend) || !seen.insert(sample_key(s)).second) continue;
    const auto twin = catalog.model_twin_of_sglang(s.backend);
    if (!twin) {
      c.sglang_without_model.push_back(sample_key(s) + " (attnbench models no twin of " + s.backend + ")");
      continue;
    }
    const Key key{*twin, s.backend, s.model, s.page_size};
    if (!groups.count(key)) order.push_back(key);
    groups[key].second.push_back(&s);
    const auto it = models.find(s.case_id + "|" + *twin + "|" + s.timing);
    if (it == models.end()) {
      c.sglang_without_model.push_back(sample_key(s));
      continue;
    }
    const ResultRow& m = *it->second;
    SglangCaseLine l{s.case_id, s.timing, m.backend, s.backend, m.status, s.status, m.step_median_us,
                     s.step_median_us, std::nullopt, s.ref_pass, s.bitwise_equal_to};
    if (m.status == RowStatus::ok && s.status == RowStatus::ok && m.step_median_us && s.step_median_us && *s.step_median_us > 0)
      l.ratio_step = *m.step_median_us / *s.step_median_us;
    c.cases.push_back(std::move(l));
  }
  // the model side of each group: every model row of the twin on the same preset and page size
  for (const ResultRow& r : model_rows)
    for (auto& [key, sides] : groups)
      if (r.backend == std::get<0>(key) && r.model == std::get<2>(key) && r.page_size == std::get<3>(key))
        sides.first.push_back(&r);

  std::map<std::tuple<std::string, int, std::string>, std::pair<PhaseLedger, PhaseLedger>> by_model_backend;
  for (const Key& key : order) {
    const auto& [mrows, srows] = groups[key];
    const PhaseLedger ml = ledger_by_phase(mrows), sl = ledger_by_phase(srows);
    by_model_backend[{std::get<2>(key), std::get<3>(key), std::get<0>(key)}] = {ml, sl};
    SglangMemory mem{std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key), {}, {}, {}, {}, 0, 0};
    for (const ResultRow* s : srows)
      if (s->ctor_device_bytes) {
        mem.sglang_ctor_device_bytes = s->ctor_device_bytes;
        mem.sglang_ctor_pinned_bytes = s->ctor_pinned_bytes;
        mem.sglang_ctor_driver_bytes = s->ctor_driver_delta_bytes;
        break;
      }
    for (const char* phase : kMemoryPhases) {
      std::set<std::string> tags;
      const auto mp = ml.find(phase), sp = sl.find(phase);
      if (mp != ml.end())
        for (const auto& [t, v] : mp->second) tags.insert(t);
      if (sp != sl.end())
        for (const auto& [t, v] : sp->second) tags.insert(t);
      for (const std::string& t : tags) {
        SglangTagLine l;
        l.phase = phase;
        l.tag = t;
        if (mp != ml.end() && mp->second.count(t)) {
          const PhaseTag& v = mp->second.at(t);
          l.model_bytes = v.bytes;
          l.model_count = v.count;
          l.kind = v.kind;
        }
        if (sp != sl.end() && sp->second.count(t)) {
          const PhaseTag& v = sp->second.at(t);
          l.sglang_bytes = v.bytes;
          l.sglang_count = v.count;
          if (l.kind.empty()) l.kind = v.kind;
          else if (l.kind != v.kind) l.kind += " / " + v.kind;
        }
        l.why = why(l);
        (l.why == "equal" ? mem.equal : mem.differing)++;
        mem.lines.push_back(std::move(l));
      }
    }
    c.memory.push_back(std::move(mem));
  }

  // the change's saving per (model preset, page size), where both twins have SGLang rows
  const BackendChange& ch = catalog.change;
  const CatalogBackend* base = catalog.find(ch.baseline);
  const CatalogBackend* cand = catalog.find(ch.candidate);
  if (base && cand && !base->sglang_twin.empty() && !cand->sglang_twin.empty()) {
    std::set<std::pair<std::string, int>> presets;
    for (const Key& key : order) presets.insert({std::get<2>(key), std::get<3>(key)});
    for (const auto& [model, page] : presets) {
      const auto b = by_model_backend.find({model, page, ch.baseline});
      const auto a = by_model_backend.find({model, page, ch.candidate});
      if (b == by_model_backend.end() || a == by_model_backend.end()) continue;
      SglangSaving s{model, page, ch.baseline, ch.candidate, base->sglang_twin, cand->sglang_twin,
                     {}, {}, {}, {}, {}};
      const auto diff = [](const std::optional<std::int64_t>& x, const std::optional<std::int64_t>& y) {
        return x && y ? std::optional<std::int64_t>(*x - *y) : std::nullopt;
      };
      s.model_device = diff(construct_total(b->second.first, "device"), construct_total(a->second.first, "device"));
      s.model_pinned = diff(construct_total(b->second.first, "pinned"), construct_total(a->second.first, "pinned"));
      s.sglang_device = diff(construct_total(b->second.second, "device"), construct_total(a->second.second, "device"));
      s.sglang_pinned = diff(construct_total(b->second.second, "pinned"), construct_total(a->second.second, "pinned"));
      std::optional<std::int64_t> alloc_b, alloc_a;
      for (const SglangMemory& m : c.memory) {
        if (m.model != model || m.page_size != page) continue;
        if (m.sglang_backend == base->sglang_twin) alloc_b = m.sglang_ctor_device_bytes;
        if (m.sglang_backend == cand->sglang_twin) alloc_a = m.sglang_ctor_device_bytes;
      }
      s.sglang_allocated_device = diff(alloc_b, alloc_a);
      c.savings.push_back(s);
    }
  }
  for (const Environment& e : sglang_envs)
    for (const auto& [k, v] : e)
      if (k == "stubs" && std::find(c.stubs.begin(), c.stubs.end(), v) == c.stubs.end()) c.stubs.push_back(v);
  return c;
}

void write_sglang_markdown(std::ostream& os, const SglangComparison& c) {
  os << "## Model vs SGLang\n\n"
        "attnbench's backends beside SGLang's own classes, constructed and driven by SGLang's code "
        "(`scripts/peer_sglang.py`). Memory is per phase and per tag: attnbench's ledger (modelled) beside the "
        "tensors SGLang's object holds after that phase (requested bytes, each storage once); difference = "
        "SGLang - model.\n\n";
  if (!c.stubs.empty()) {
    // Each run's `stubs` is "module (imported by importer); ..." or "none": shown by top-level package, the
    // full lines (with their importers) are in the run's stubs.txt.
    std::vector<std::string> packages, modules;
    for (const std::string& run : c.stubs) {
      for (std::size_t at = 0; at < run.size();) {
        std::size_t end = run.find("; ", at);
        if (end == std::string::npos) end = run.size();
        const std::string line = run.substr(at, end - at);
        at = end + 2;
        const std::string module = line.substr(0, line.find(' '));
        if (module.empty() || module == "none" ||
            std::find(modules.begin(), modules.end(), module) != modules.end())
          continue;
        modules.push_back(module);
        const std::string package = module.substr(0, module.find('.'));
        if (std::find(packages.begin(), packages.end(), package) == packages.end()) packages.push_back(package);
      }
    }
    os << "Stand-in modules in the SGLang run: ";
    if (packages.empty()) {
      os << "none.\n\n";
    } else {
      os << modules.size() << " modules of " << packages.size()
         << " packages that only SGLang's import side touches (each with its importer in the run's stubs.txt): ";
      for (std::size_t i = 0; i < packages.size(); ++i) os << (i ? ", " : "") << md(packages[i]);
      os << ".\n\n";
    }
  }
  for (const SglangSaving& s : c.savings) {
    os << "**The change on " << md(s.model) << " (page " << s.page_size << ")**: " << s.baseline << " - "
       << s.candidate << " saves " << bytes_text(s.model_device) << " device and " << bytes_text(s.model_pinned)
       << " pinned in attnbench's model; SGLang's " << s.sglang_baseline << " - " << s.sglang_candidate
       << " saves " << bytes_text(s.sglang_device) << " device and " << bytes_text(s.sglang_pinned)
       << " pinned (tensors held)";
    if (s.sglang_allocated_device)
      os << ", " << bytes_text(s.sglang_allocated_device) << " by torch.cuda.memory_allocated";
    if (s.model_device && s.sglang_device && s.model_pinned && s.sglang_pinned) {
      const bool same = *s.model_device == *s.sglang_device && *s.model_pinned == *s.sglang_pinned;
      os << (same ? ": **equal to the byte**" : ": differs by " + signed_text(*s.sglang_device - *s.model_device) +
                                                    " B device, " + signed_text(*s.sglang_pinned - *s.model_pinned) +
                                                    " B pinned (the tag lines below say where)");
    }
    os << ".\n\n";
  }
  if (c.memory.empty()) os << "No SGLang row.\n";
  for (const SglangMemory& m : c.memory) {
    os << "### " << m.model_backend << " vs " << m.sglang_backend << ", " << md(m.model) << ", page " << m.page_size
       << "\n\n" << m.equal << " tag line(s) equal, " << m.differing << " differing";
    if (m.sglang_ctor_device_bytes)
      os << "; SGLang's constructor: " << bytes_text(m.sglang_ctor_device_bytes) << " by torch.cuda.memory_allocated "
         << "(the caching allocator's 512-byte blocks), " << bytes_text(m.sglang_ctor_pinned_bytes) << " pinned, "
         << bytes_text(m.sglang_ctor_driver_bytes) << " by the driver";
    os << ".\n\n";
    table::Table t;
    for (const char* name : {"phase", "tag", "kind", "model bytes", "SGLang bytes", "difference", "why"})
      t.columns.push_back({name});
    for (const SglangTagLine& l : m.lines)
      t.add({table::str(l.phase), table::str("`" + l.tag + "`"), table::str(l.kind), table::str(bytes_text(l.model_bytes)),
             table::str(bytes_text(l.sglang_bytes)), table::str(signed_text(l.difference())), table::str(l.why)});
    table::print_markdown(os, t);
    os << "\n";
  }
  if (!c.cases.empty()) {
    os << "### Steps\n\n";
    table::Table t;
    for (const char* name : {"case", "timing", "model", "SGLang", "model step µs", "SGLang step µs", "ratio",
                             "SGLang reference check", "SGLang bit-identical to"})
      t.columns.push_back({name});
    for (const SglangCaseLine& l : c.cases)
      t.add({table::str("`" + l.case_id + "`"), table::str(l.timing), table::str(l.model_backend),
             table::str(l.sglang_backend),
             table::str(l.model_status != RowStatus::ok ? row_status_name(l.model_status)
                                               : (l.model_step_median_us ? fmt("%.1f", *l.model_step_median_us) : "-")),
             table::str(l.sglang_status != RowStatus::ok ? row_status_name(l.sglang_status)
                                                : (l.sglang_step_median_us ? fmt("%.1f", *l.sglang_step_median_us) : "-")),
             table::str(l.ratio_step ? fmt("%.3f", *l.ratio_step) : "-"),
             table::str(l.sglang_ref_pass ? (*l.sglang_ref_pass ? "pass" : "FAIL") : "-"),
             table::str(l.sglang_bitwise_equal_to.empty() ? "-" : l.sglang_bitwise_equal_to)});
    table::print_markdown(os, t);
  }
  if (!c.sglang_without_model.empty()) {
    os << "\nSGLang rows without a model row (" << c.sglang_without_model.size() << "):";
    for (std::size_t i = 0; i < c.sglang_without_model.size() && i < 10; ++i)
      os << (i ? ", " : " ") << "`" << md(c.sglang_without_model[i]) << "`";
    if (c.sglang_without_model.size() > 10) os << ", ... and " << c.sglang_without_model.size() - 10 << " more";
    os << ".\n";
  }
}

}  // namespace attnbench
