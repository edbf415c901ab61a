#include "backends/registry.hpp"

#include "backends/flashinfer_backend.hpp"
#include "backends/trtllm_mha_backend.hpp"
#include "backends/trtllm_mha_legacy_backend.hpp"
#include "core/errors.hpp"

namespace attnbench {

namespace {
void no_checks(const ModelConfig&, const ServerArgs&) {}
}  // namespace

const std::vector<BackendInfo>& backend_registry() {
  static const std::vector<BackendInfo> registry = {
      {"flashinfer", "FlashInferAttnBackend", no_checks,
       [](ModelRunner& mr) -> std::unique_ptr<AttentionBackend> { return std::make_unique<FlashInferBackend>(mr); }},
      {"trtllm_mha", "TRTLLMHAAttnBackend(AttentionBackend): the proposed change", TrtllmMhaImpl::validate,
       [](ModelRunner& mr) -> std::unique_ptr<AttentionBackend> { return std::make_unique<TrtllmMhaBackend>(mr); }},
      {"trtllm_mha_legacy", "TRTLLMHAAttnBackend(FlashInferAttnBackend): SGLang today", TrtllmMhaImpl::validate,
       [](ModelRunner& mr) -> std::unique_ptr<AttentionBackend> { return std::make_unique<TrtllmMhaLegacyBackend>(mr); }},
  };
  return registry;
}

const BackendInfo& find_backend(const std::string& name, const std::string& option) {
  for (const auto& b : backend_registry())
    if (b.name == name) return b;
  std::string names;
  for (const auto& b : backend_registry()) names += (names.empty() ? "" : ", ") + b.name;
  throw InputError(option + ": unknown backend '" + name + "' (known: " + names + ")");
}

std::vector<std::string> backend_names() {
  std::vector<std::string> v;
  for (const auto& b : backend_registry()) v.push_back(b.name);
  return v;
}

}  // namespace attnbench
