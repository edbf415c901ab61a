#include "report/memory_report.hpp"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>

#include "core/units.hpp"
#include "report/table.hpp"
#include "report/text.hpp"

namespace attnbench {

const MemoryPhase* BackendMemory::phase(const std::string& name) const {
  for (const auto& p : phases)
    if (p.phase == name) return &p;
  return nullptr;
}

const BackendMemory* MemoryReport::backend(const std::string& name) const {
  for (const auto& b : backends)
    if (b.backend == name) return &b;
  return nullptr;
}

std::optional<MemorySaving> memory_saving(const MemoryReport& r, const std::string& from, const std::string& to) {
  const BackendMemory* a = r.backend(from);
  const BackendMemory* b = r.backend(to);
  if (!a || !b || !a->error.empty() || !b->error.empty()) return std::nullopt;
  MemorySaving s;
  s.from = from;
  s.to = to;
  for (const auto& pa : a->phases) {
    const MemoryPhase* pb = b->phase(pa.phase);
    const std::int64_t d = pa.device_bytes - (pb ? pb->device_bytes : 0);
    const std::int64_t p = pa.pinned_bytes - (pb ? pb->pinned_bytes : 0);
    s.per_phase.push_back({pa.phase, {d, p}});
    s.device_bytes += d;
    s.pinned_bytes += p;
  }
  s.kv_tokens = r.kv_bytes_per_token > 0 ? s.device_bytes / r.kv_bytes_per_token : 0;
  return s;
}

std::optional<MemorySaving> memory_saving(const MemoryReport& r, const BackendChange& change) {
  return memory_saving(r, change.baseline, change.candidate);
}

namespace {

using table::Align;
using table::str;
using text::with_commas;

}  // namespace

void write_memory_table(std::ostream& os, const MemoryReport& r, const BackendCatalog& catalog) {
  os << "attnbench memory\n";
  table::Table context;
  context.header = false;
  context.columns = {{"key", Align::left, 30, false, 2}, {"value"}};
  for (const auto& [k, v] : r.context) context.add({str(k), str(v)});
  table::print_text(os, context);
  os << "\n";
  table::Table phases;
  phases.columns = {{"backend", Align::left, 20},
                    {"phase", Align::left, 13},
                    {"device", Align::right, 14},
                    {"pinned", Align::right, 14},
                    {"driver delta", Align::right, 16}};
  for (const auto& b : r.backends) {
    if (!b.error.empty()) {
      phases.add({str(b.backend), str("failed: " + b.error)});
      continue;
    }
    std::int64_t td = 0, tp = 0;
    for (const auto& p : b.phases) {
      phases.add({str(b.backend), str(p.phase), str(format_bytes(p.device_bytes)), str(format_bytes(p.pinned_bytes)),
                  str(p.driver_delta_bytes ? format_bytes(*p.driver_delta_bytes) : "-")});
      td += p.device_bytes;
      tp += p.pinned_bytes;
    }
    phases.add({str(b.backend), str("total"), str(format_bytes(td)), str(format_bytes(tp))});
  }
  table::print_text(os, phases);
  for (const auto& b : r.backends) {
    if (!b.error.empty()) continue;
    os << "\n" << b.backend << " (" << b.models << "), by tag:\n";
    table::Table tags;
    tags.header = false;
    tags.columns = {{"phase", Align::left, 12, false, 2},
                    {"tag", Align::left, 66},
                    {"kind", Align::left, 7},
                    {"bytes", Align::right, 12},
                    {"B", Align::right, 18},
                    {"count, shared"}};
    for (const auto& p : b.phases)
      for (const auto& t : p.tags) {
        if (t.bytes == 0 && t.count == 0) continue;
        tags.add({str(p.phase), str(t.tag), str(t.kind), str(format_bytes(t.bytes)), str(with_commas(t.bytes) + " B"),
                  str(std::string(t.count > 1 ? "  x" + std::to_string(t.count) : "") + (t.shared ? "  shared" : ""))});
      }
    table::print_text(os, tags);
  }
  const BackendChange& change = catalog.change;
  if (auto s = memory_saving(r, change)) {
    os << "\nWhat the change saves (" << change.baseline << " - " << change.candidate << "):\n";
    table::Table saving;
    saving.header = false;
    saving.columns = {{"phase", Align::left, 12, false, 2}, {"device", Align::right, 12}, {"rest"}};
    const auto rest = [](std::int64_t device, std::int64_t pinned) {
      return " device (" + with_commas(device) + " B), " + format_bytes(pinned) + " pinned";
    };
    for (const auto& [phase, dp] : s->per_phase)
      saving.add({str(phase), str(format_bytes(dp.first)), str(rest(dp.first, dp.second))});
    std::string total = rest(s->device_bytes, s->pinned_bytes);
    if (r.kv_bytes_per_token > 0)
      total += " = " + with_commas(s->kv_tokens) + " KV-cache tokens of " + r.model + " (" +
               with_commas(r.kv_bytes_per_token) + " B per token)";
    saving.add({str("total"), str(format_bytes(s->device_bytes)), str(total)});
    table::print_text(os, saving);
  }
}

void write_memory_csv(std::ostream& os, const MemoryReport& r) {
  table::Table t;
  for (const char* name : {"backend", "phase", "tag", "kind", "bytes", "shared", "count"}) t.columns.push_back({name});
  for (const auto& b : r.backends)
    for (const auto& p : b.phases)
      for (const auto& tag : p.tags)
        t.add({str(b.backend), str(p.phase), str(tag.tag), str(tag.kind), table::cell(tag.bytes, ""),
               table::cell(tag.shared, ""), table::cell(std::int64_t{tag.count}, "")});
  table::print_csv(os, t);
}

void write_memory_json(std::ostream& os, const MemoryReport& r, const BackendCatalog& catalog) {
  nlohmann::ordered_json j;
  j["schema"] = "attnbench.memory";
  j["schema_version"] = 1;
  j["model"] = r.model;
  j["sglang_version"] = r.sglang_version;
  nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
  for (const auto& [k, v] : r.context) ctx[k] = v;
  j["context"] = ctx;
  j["kv_bytes_per_token"] = r.kv_bytes_per_token;
  j["backends"] = nlohmann::ordered_json::array();
  for (const auto& b : r.backends) {
    nlohmann::ordered_json jb;
    jb["backend"] = b.backend;
    jb["models"] = b.models;
    if (!b.error.empty()) jb["error"] = b.error;
    jb["phases"] = nlohmann::ordered_json::array();
    for (const auto& p : b.phases) {
      nlohmann::ordered_json jp;
      jp["phase"] = p.phase;
      jp["device_bytes"] = p.device_bytes;
      jp["pinned_bytes"] = p.pinned_bytes;
      jp["host_bytes"] = p.host_bytes;
      jp["driver_delta_bytes"] = p.driver_delta_bytes ? nlohmann::ordered_json(*p.driver_delta_bytes) : nlohmann::ordered_json();
      table::Table tags;
      for (const char* name : {"tag", "kind", "bytes", "shared", "count"}) tags.columns.push_back({name});
      for (const auto& t : p.tags)
        tags.add({str(t.tag), str(t.kind), table::cell(t.bytes, ""), table::cell(t.shared, ""),
                  table::cell(std::int64_t{t.count}, "")});
      jp["tags"] = table::to_json(tags);
      jb["phases"].push_back(jp);
    }
    j["backends"].push_back(jb);
  }
  if (auto s = memory_saving(r, catalog.change))
    j["saving"] = {{"from", s->from}, {"to", s->to}, {"device_bytes", s->device_bytes}, {"pinned_bytes", s->pinned_bytes},
                   {"kv_tokens", s->kv_tokens}};
  os << std::setw(2) << j << "\n";
}

}  // namespace attnbench
