#include "runner/backend_catalog.hpp"

#include "backends/registry.hpp"
#include "engine/model_config.hpp"

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

MarkdownExtras markdown_extras(const std::vector<std::string>& figures) {
  MarkdownExtras x;
  for (const auto& m : model_presets()) x.model_layers[m.name] = m.num_layers;
  x.figures = figures;
  return x;
}

}  // namespace attnbench
