// The ledger: every allocation attnbench makes, by tag, kind and phase, with live and peak bytes.
//
// It counts *requested* bytes exactly (the driver view rounds to 2 MiB and is reported beside it).
// Tags are hierarchical, dot-separated, named after the modelled attribute, e.g.
//   "flashinfer.decode_wrappers[0].int_workspace". The phase ("engine", "construct", "graph_state",
//   "capture", "step") is whatever was current when the allocation was made.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace attnbench {

enum class MemKind : std::uint8_t { device = 0, pinned = 1, host = 2 };
inline constexpr int kNumMemKinds = 3;
const char* mem_kind_name(MemKind k);

// Live bytes of one (tag, kind), with the phase it was allocated in and whether it is a shared named buffer.
struct TagBytes {
  std::string tag;
  MemKind kind;
  std::string phase;
  bool shared;
  std::int64_t bytes;
  int count;  // live allocations in this group
};

class Ledger {
 public:
  using Id = std::int64_t;

  struct Totals {
    std::int64_t bytes[kNumMemKinds] = {0, 0, 0};
    std::int64_t operator[](MemKind k) const { return bytes[static_cast<int>(k)]; }
  };

  // A frozen view of the live allocations; diff two to see what a region allocated and kept.
  struct Snapshot {
    Totals live;
    std::map<std::tuple<std::string, MemKind, std::string, bool>, std::pair<std::int64_t, int>> groups;
  };

  Id on_alloc(std::string tag, MemKind kind, std::int64_t bytes, bool shared);
  void on_free(Id id);

  void set_phase(std::string phase) { phase_ = std::move(phase); }
  const std::string& phase() const { return phase_; }

  Totals live() const { return live_; }
  Totals peak() const { return peak_; }  // high-water mark since construction
  std::int64_t allocations() const { return static_cast<std::int64_t>(records_.size()); }

  // Peak window: the high-water mark of live bytes since the last reset_window_peak().
  void reset_window_peak() { window_peak_ = live_; }
  Totals window_peak() const { return window_peak_; }

  Snapshot snapshot() const;
  // Per group, live bytes in `after` minus live bytes in `before` (groups that did not change are left out):
  // what a region allocated and kept (positive) or released (negative).
  static std::vector<TagBytes> diff(const Snapshot& before, const Snapshot& after);
  static Totals diff_totals(const Snapshot& before, const Snapshot& after);
  // All live groups now.
  std::vector<TagBytes> live_groups() const;

 private:
  struct Record {
    std::string tag;
    MemKind kind;
    std::string phase;
    bool shared;
    std::int64_t bytes;
    bool live;
  };
  std::vector<Record> records_;
  std::string phase_ = "none";
  Totals live_, peak_, window_peak_;
};

// Sets the ledger's phase for a scope and restores the previous one.
class PhaseScope {
 public:
  PhaseScope(Ledger& ledger, std::string phase) : ledger_(ledger), previous_(ledger.phase()) {
    ledger_.set_phase(std::move(phase));
  }
  ~PhaseScope() { ledger_.set_phase(previous_); }
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  Ledger& ledger_;
  std::string previous_;
};

}  // namespace attnbench
