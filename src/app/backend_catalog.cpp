#include "app/backend_catalog.hpp"

#include "backends/registry.hpp"

namespace attnbench {

BackendCatalog backend_catalog() {
  BackendCatalog c;
  for (const BackendInfo& info : backend_registry())
    c.backends.push_back(CatalogBackend{info.name, info.models, info.library_twin, info.library_what, info.sglang_twin});
  // The change under test (baseline -> candidate): the registry's first candidate, if any.
  if (const auto pairs = change_pairs(); !pairs.empty()) c.change = {pairs.front().first, pairs.front().second};
  // What scripts/peer_flashinfer.py records in its environment.
  c.library_versions = {{"flashinfer_version", "FlashInfer"}, {"torch_version", "torch"}};
  return c;
}

}  // namespace attnbench
