// The backend registry: the one place that knows every backend by name.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/attention_backend.hpp"

namespace attnbench {

struct BackendInfo {
  std::string name;    // as the CLI spells it
  std::string models;  // the SGLang class it models
  // Throws InputError naming the option at fault when this backend cannot be built for the configuration.
  void (*validate)(const ModelConfig&, const ServerArgs&);
  std::unique_ptr<AttentionBackend> (*create)(ModelRunner&);
};

const std::vector<BackendInfo>& backend_registry();
// Throws InputError naming `option` and listing the backends when `name` is unknown.
const BackendInfo& find_backend(const std::string& name, const std::string& option = "--backend");
std::vector<std::string> backend_names();

}  // namespace attnbench
