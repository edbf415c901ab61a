#include "report/backend_catalog.hpp"

namespace attnbench {

const CatalogBackend* BackendCatalog::find(const std::string& name) const {
  for (const CatalogBackend& b : backends)
    if (b.name == name) return &b;
  return nullptr;
}

std::optional<std::string> BackendCatalog::model_twin_of(const std::string& lib) const {
  if (lib.empty()) return std::nullopt;
  for (const CatalogBackend& b : backends)
    if (b.library_twin == lib) return b.name;
  return std::nullopt;
}

std::optional<std::string> BackendCatalog::model_twin_of_sglang(const std::string& peer) const {
  if (peer.empty()) return std::nullopt;
  for (const CatalogBackend& b : backends)
    if (b.sglang_twin == peer) return b.name;
  return std::nullopt;
}

std::vector<std::string> BackendCatalog::library_backends() const {
  std::vector<std::string> out;
  for (const CatalogBackend& b : backends)
    if (!b.library_twin.empty()) out.push_back(b.library_twin);
  return out;
}

}  // namespace attnbench
