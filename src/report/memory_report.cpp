#include "report/memory_report.hpp"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>

#include "core/units.hpp"
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

namespace {

using text::with_commas;

std::string pad(const std::string& s, std::size_t w) { return s.size() >= w ? s : s + std::string(w - s.size(), ' '); }
std::string lpad(const std::string& s, std::size_t w) { return s.size() >= w ? s : std::string(w - s.size(), ' ') + s; }

}  // namespace

void write_memory_table(std::ostream& os, const MemoryReport& r) {
  os << "attnbench memory\n";
  for (const auto& [k, v] : r.context) os << "  " << pad(k, 30) << v << "\n";
  os << "\n";
  os << pad("backend", 20) << pad("phase", 13) << lpad("device", 14) << lpad("pinned", 14) << lpad("driver delta", 16)
     << "\n";
  for (const auto& b : r.backends) {
    if (!b.error.empty()) {
      os << pad(b.backend, 20) << "failed: " << b.error << "\n";
      continue;
    }
    std::int64_t td = 0, tp = 0;
    for (const auto& p : b.phases) {
      os << pad(b.backend, 20) << pad(p.phase, 13) << lpad(format_bytes(p.device_bytes), 14)
         << lpad(format_bytes(p.pinned_bytes), 14)
         << lpad(p.driver_delta_bytes ? format_bytes(*p.driver_delta_bytes) : "-", 16) << "\n";
      td += p.device_bytes;
      tp += p.pinned_bytes;
    }
    os << pad(b.backend, 20) << pad("total", 13) << lpad(format_bytes(td), 14) << lpad(format_bytes(tp), 14) << "\n";
  }
  for (const auto& b : r.backends) {
    if (!b.error.empty()) continue;
    os << "\n" << b.backend << " (" << b.models << "), by tag:\n";
    for (const auto& p : b.phases) {
      for (const auto& t : p.tags) {
        if (t.bytes == 0 && t.count == 0) continue;
        os << "  " << pad(p.phase, 12) << pad(t.tag, 66) << pad(t.kind, 7) << lpad(format_bytes(t.bytes), 12)
           << lpad(with_commas(t.bytes) + " B", 18) << (t.count > 1 ? "  x" + std::to_string(t.count) : "")
           << (t.shared ? "  shared" : "") << "\n";
      }
    }
  }
  if (auto s = memory_saving(r, "trtllm_mha_legacy", "trtllm_mha")) {
    os << "\nWhat the change saves (trtllm_mha_legacy - trtllm_mha):\n";
    for (const auto& [phase, dp] : s->per_phase)
      os << "  " << pad(phase, 12) << lpad(format_bytes(dp.first), 12) << " device (" << with_commas(dp.first)
         << " B), " << format_bytes(dp.second) << " pinned\n";
    os << "  " << pad("total", 12) << lpad(format_bytes(s->device_bytes), 12) << " device (" << with_commas(s->device_bytes)
       << " B), " << format_bytes(s->pinned_bytes) << " pinned";
    if (r.kv_bytes_per_token > 0)
      os << " = " << with_commas(s->kv_tokens) << " KV-cache tokens of " << r.model << " (" << with_commas(r.kv_bytes_per_token)
         << " B per token)";
    os << "\n";
  }
}

void write_memory_csv(std::ostream& os, const MemoryReport& r) {
  os << "backend,phase,tag,kind,bytes,shared,count\n";
  for (const auto& b : r.backends)
    for (const auto& p : b.phases)
      for (const auto& t : p.tags)
        os << b.backend << ',' << p.phase << ',' << t.tag << ',' << t.kind << ',' << t.bytes << ',' << (t.shared ? 1 : 0)
           << ',' << t.count << '\n';
}

void write_memory_json(std::ostream& os, const MemoryReport& r) {
  nlohmann::ordered_json j;
  j["schema"] = "attnbench.memory";
  j["schema_version"] = 1;
  j["model"] = r.model;
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
      jp["tags"] = nlohmann::ordered_json::array();
      for (const auto& t : p.tags)
        jp["tags"].push_back({{"tag", t.tag}, {"kind", t.kind}, {"bytes", t.bytes}, {"shared", t.shared}, {"count", t.count}});
      jb["phases"].push_back(jp);
    }
    j["backends"].push_back(jb);
  }
  if (auto s = memory_saving(r, "trtllm_mha_legacy", "trtllm_mha"))
    j["saving"] = {{"from", s->from}, {"to", s->to}, {"device_bytes", s->device_bytes}, {"pinned_bytes", s->pinned_bytes},
                   {"kv_tokens", s->kv_tokens}};
  os << std::setw(2) << j << "\n";
}

}  // namespace attnbench
