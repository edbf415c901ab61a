#include "device/ledger.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>

#include "core/enum_names.hpp"

namespace attnbench {

namespace {
constexpr EnumName<MemKind> kMemKindNames[] = {
    {MemKind::device, "device"}, {MemKind::pinned, "pinned"}, {MemKind::host, "host"}};
static_assert(std::size(kMemKindNames) == kNumMemKinds);
}  // namespace

const char* mem_kind_name(MemKind k) { return enum_name(kMemKindNames, k); }

Ledger::Id Ledger::on_alloc(std::string tag, MemKind kind, std::int64_t bytes, bool shared) {
  if (bytes < 0) throw std::logic_error("ledger: negative allocation for " + tag);
  records_.push_back(Record{std::move(tag), kind, phase_, shared, bytes, true});
  const int k = static_cast<int>(kind);
  live_.bytes[k] += bytes;
  peak_.bytes[k] = std::max(peak_.bytes[k], live_.bytes[k]);
  window_peak_.bytes[k] = std::max(window_peak_.bytes[k], live_.bytes[k]);
  return static_cast<Id>(records_.size() - 1);
}

void Ledger::on_free(Id id) {
  if (id < 0 || id >= static_cast<Id>(records_.size()) || !records_[id].live)
    throw std::logic_error("ledger: free of an unknown or already freed allocation");
  Record& r = records_[id];
  r.live = false;
  live_.bytes[static_cast<int>(r.kind)] -= r.bytes;
}

Ledger::Snapshot Ledger::snapshot() const {
  Snapshot s;
  s.live = live_;
  for (const Record& r : records_) {
    if (!r.live) continue;
    auto& g = s.groups[{r.tag, r.kind, r.phase, r.shared}];
    g.first += r.bytes;
    g.second += 1;
  }
  return s;
}

std::vector<TagBytes> Ledger::diff(const Snapshot& before, const Snapshot& after) {
  std::vector<TagBytes> out;
  for (const auto& [key, val] : after.groups) {
    auto it = before.groups.find(key);
    const std::int64_t b = it == before.groups.end() ? 0 : it->second.first;
    const int c = it == before.groups.end() ? 0 : it->second.second;
    if (val.first - b != 0 || val.second - c != 0) {
      const auto& [tag, kind, phase, shared] = key;
      out.push_back(TagBytes{tag, kind, phase, shared, val.first - b, val.second - c});
    }
  }
  for (const auto& [key, val] : before.groups) {  // groups freed entirely inside the region
    if (after.groups.count(key)) continue;
    const auto& [tag, kind, phase, shared] = key;
    out.push_back(TagBytes{tag, kind, phase, shared, -val.first, -val.second});
  }
  return out;
}

Ledger::Totals Ledger::diff_totals(const Snapshot& before, const Snapshot& after) {
  Totals t;
  for (int k = 0; k < kNumMemKinds; ++k) t.bytes[k] = after.live.bytes[k] - before.live.bytes[k];
  return t;
}

std::vector<TagBytes> Ledger::live_groups() const { return diff(Snapshot{}, snapshot()); }

}  // namespace attnbench
