// What one case costs, from its lengths alone: the work of a step (FLOPs and bytes, for throughput) and the
// device memory it needs at most (a case that cannot fit becomes a skipped row before anything is allocated).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "runner/case.hpp"

namespace attnbench {

// FLOPs and bytes of one step of the case (all layers), counted from the actual lengths; causal and
// windowed pairs counted as computed only where visible.
struct StepWork {
  double flops = 0;
  double bytes = 0;          // K/V read once per request and layer (KV-cache dtype: fp8 = 1 B) + q read + o written + new K/V written
  double kv_bytes_layer = 0;  // K/V bytes one layer reads (the working set the L2 sees)
};
StepWork step_work(const Case& c);
// The case as a backend computes it (AttentionBackend::layer_windows): `c` itself, its model without windows
// (`none`: FlashInfer on Cohere2) or with the windows over cached keys only (`cached_only`: FlashInfer's ragged
// extend), so that the work figures and the reference count the keys that backend reads.
Case case_as_run(const Case& c, LayerWindows windows);
// `windows` where it changes what the case computes, else `all`: a model without windows, and cached_only where no
// request's new tokens lie further apart than the smallest layer window (no key the window hides is a new token).
LayerWindows effective_layer_windows(const Case& c, LayerWindows windows);

// Device bytes a case needs at most (KV pool, inputs, per-step metadata, plus an allowance for the backends'
// workspaces and graph buffers); a case beyond what the device has free becomes a skipped row that says so.
struct CaseMemory {
  std::int64_t kv_pool_bytes = 0;
  std::int64_t total_bytes = 0;
};
CaseMemory estimate_case_memory(const Case& c);

// The skip reason ("capped by memory: ...") when `need` exceeds 95% of `available` device bytes; nullopt when
// it fits or `available` is unknown.
std::optional<std::string> memory_cap_reason(const CaseMemory& need, std::optional<std::int64_t> available);

}  // namespace attnbench
