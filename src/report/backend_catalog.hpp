// What the report writers need to know about the backends, as data: the runner fills it from the backend
// registry (src/runner/backend_catalog.hpp) and hands it in, so that no backend name is spelled in report/ and
// a new backend variant is added in src/backends/ alone.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnbench {

// One attnbench backend.
struct CatalogBackend {
  std::string name;          // as the CLI spells it
  std::string models;        // the SGLang class it models
  std::string library_twin;  // the library script's backend running the real thing it models ("" none)
  std::string library_what;  // what that library backend runs, for the Markdown ("" none)
  std::string sglang_twin;   // the SGLang peer script's backend running SGLang's own class it models ("" none)
};

// The change under test: `baseline` is today's backend, `candidate` the changed one. The report's headline,
// its saving and its bit-identity count are about this pair.
struct BackendChange {
  std::string baseline;
  std::string candidate;
  // Whether backends x and y are this change's two, in either order (never when the change names none).
  bool is_pair(const std::string& x, const std::string& y) const {
    return !baseline.empty() && ((x == baseline && y == candidate) || (x == candidate && y == baseline));
  }
};

struct BackendCatalog {
  std::vector<CatalogBackend> backends;  // in registry order
  BackendChange change;
  // Environment keys the library script records with the versions it ran, and how to name them
  // (key, label), in print order.
  std::vector<std::pair<std::string, std::string>> library_versions;

  // The backend called `name`, or nullptr.
  const CatalogBackend* find(const std::string& name) const;
  // The attnbench backend whose library_twin is `lib`; nullopt for any other name.
  std::optional<std::string> model_twin_of(const std::string& lib) const;
  // The library twins of the backends that have one, in registry order.
  std::vector<std::string> library_backends() const;
  // The attnbench backend whose sglang_twin is `peer`; nullopt for any other name.
  std::optional<std::string> model_twin_of_sglang(const std::string& peer) const;
};

}  // namespace attnbench
