// The memory evidence: what each backend allocated in each phase, by tag, as measured (ledger and driver).
// Plain data, filled by the runner; written here as a table, CSV (one row per allocation group) or JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "report/backend_catalog.hpp"

namespace attnbench {

struct MemoryTag {
  std::string tag;   // "<backend>.decode_wrappers[0].int_workspace"
  std::string kind;  // device | pinned | host
  std::int64_t bytes = 0;
  bool shared = false;  // a process-wide named buffer (SGLang get_buffer)
  int count = 0;        // allocations in the group (e.g. one per captured batch size)
};

struct MemoryPhase {
  std::string phase;  // construct | graph_state | capture
  std::int64_t device_bytes = 0, pinned_bytes = 0, host_bytes = 0;  // ledger, requested bytes
  std::optional<std::int64_t> driver_delta_bytes;                    // drop in driver free memory (CUDA only)
  std::vector<MemoryTag> tags;
};

struct BackendMemory {
  std::string backend;
  std::string models;
  std::vector<MemoryPhase> phases;
  std::string error;  // non-empty: construction failed with this message

  const MemoryPhase* phase(const std::string& name) const;
};

// The phases a memory report holds, in the order attnbench measures them (runner/phases.hpp).
inline constexpr const char* kMemoryPhases[] = {"construct", "graph_state", "capture"};

struct MemoryReport {
  std::vector<std::pair<std::string, std::string>> context;  // model, server args, device ... in print order
  std::string model;
  std::string sglang_version;  // the modelled SGLang release ("0.5.23"), as result rows' sglang_version
  std::int64_t kv_bytes_per_token = 0;  // 2 * layers * kv_heads * head_dim * dtype size
  std::vector<BackendMemory> backends;

  const BackendMemory* backend(const std::string& name) const;
};

// What `to` saves over `from` (from - to), per phase and in total, and in KV-cache tokens.
struct MemorySaving {
  std::string from, to;
  std::vector<std::pair<std::string, std::pair<std::int64_t, std::int64_t>>> per_phase;  // phase -> (device, pinned)
  std::int64_t device_bytes = 0, pinned_bytes = 0;
  std::int64_t kv_tokens = 0;  // device_bytes / kv_bytes_per_token
};
// nullopt when either backend is missing or failed.
std::optional<MemorySaving> memory_saving(const MemoryReport& r, const std::string& from, const std::string& to);
// What the change saves: memory_saving(r, change.baseline, change.candidate).
std::optional<MemorySaving> memory_saving(const MemoryReport& r, const BackendChange& change);

// The context, per backend the bytes of each phase (ledger; driver delta), every tag, and what
// catalog.change saves when both of its backends are in `r`.
void write_memory_table(std::ostream& os, const MemoryReport& r, const BackendCatalog& catalog);
// Header: backend,phase,tag,kind,bytes,shared,count; one row per allocation group.
void write_memory_csv(std::ostream& os, const MemoryReport& r);
// {"schema": "attnbench.memory", "schema_version": 1, "model", "context", "kv_bytes_per_token", "backends",
// "saving" (of catalog.change, when both of its backends are in `r`)}.
void write_memory_json(std::ostream& os, const MemoryReport& r, const BackendCatalog& catalog);

}  // namespace attnbench
