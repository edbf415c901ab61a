#include "app/backend_catalog.hpp"

#include "backends/registry.hpp"

namespace attnbench {

namespace {

// TEMPORARY, until BackendInfo carries them (fields library_twin and change_baseline in
// src/backends/registry.hpp): the library script's backend that runs the real thing each backend models
// (scripts/peer_flashinfer.py), and what it runs. trtllm_mha_legacy runs trtllm_mha's kernels, so it has no
// twin of its own.
struct Twin {
  const char* backend;
  const char* library_twin;
  const char* library_what;
};
constexpr Twin kTwins[] = {
    {"flashinfer", "flashinfer_lib", "FlashInfer's wrappers"},
    {"trtllm_mha", "trtllm_lib", "FlashInfer's `trtllm_batch_decode_with_kv_cache`"},
};
// TEMPORARY, until BackendInfo says it (change_baseline): the change under test, baseline -> candidate
// (TRTLLMHAAttnBackend inheriting FlashInferAttnBackend -> inheriting AttentionBackend).
constexpr const char* kChangeBaseline = "trtllm_mha_legacy";
constexpr const char* kChangeCandidate = "trtllm_mha";

}  // namespace

BackendCatalog backend_catalog() {
  BackendCatalog c;
  for (const BackendInfo& info : backend_registry()) {
    CatalogBackend b{info.name, info.models, "", ""};
    for (const Twin& t : kTwins)
      if (info.name == t.backend) {
        b.library_twin = t.library_twin;
        b.library_what = t.library_what;
      }
    c.backends.push_back(std::move(b));
  }
  c.change = {kChangeBaseline, kChangeCandidate};
  // What scripts/peer_flashinfer.py records in its environment.
  c.library_versions = {{"flashinfer_version", "FlashInfer"}, {"torch_version", "torch"}};
  return c;
}

}  // namespace attnbench
