#include "backends/registry.hpp"

#include <algorithm>
#include <stdexcept>

#include "backends/flashinfer_backend.hpp"
#include "backends/trtllm_mha_backend.hpp"
#include "backends/trtllm_mha_legacy_backend.hpp"
#include "core/errors.hpp"

namespace attnbench {

namespace {

void no_checks(const ModelConfig&, const ServerArgs&) {}

template <class B>
std::unique_ptr<AttentionBackend> make(ModelRunner& mr) {
  return std::make_unique<B>(mr);
}

// trtllm_mha_legacy runs the FlashInfer constructor, then the TRTLLM one: it derives what both derive.
DerivedFacts legacy_facts(const ModelConfig& m, const ServerArgs& s) {
  DerivedFacts f = FlashInferBackend::derived_facts(m, s);
  for (auto& kv : TrtllmMhaImpl::derived_facts(m, s)) f.push_back(std::move(kv));
  return f;
}

std::vector<BackendInfo>& registry_storage() {
  static std::vector<BackendInfo> registry = {
      {"flashinfer", "FlashInferAttnBackend", no_checks, make<FlashInferBackend>, "flashinfer_lib", "",
       FlashInferBackend::derived_facts, "FlashInfer's wrappers", "flashinfer_sglang"},
      {"trtllm_mha", "TRTLLMHAAttnBackend(AttentionBackend): the proposed change", TrtllmMhaImpl::validate,
       make<TrtllmMhaBackend>, "trtllm_lib", "trtllm_mha_legacy", TrtllmMhaImpl::derived_facts,
       "FlashInfer's `trtllm_batch_decode_with_kv_cache`", "trtllm_mha_lean_sglang"},
      // No library twin: it runs the same TRTLLM kernels as trtllm_mha, whose twin is trtllm_lib.
      {"trtllm_mha_legacy", "TRTLLMHAAttnBackend(FlashInferAttnBackend): SGLang today", TrtllmMhaImpl::validate,
       make<TrtllmMhaLegacyBackend>, "", "", legacy_facts, "", "trtllm_mha_sglang"},
  };
  return registry;
}

void unregister_backend(const std::string& name) {
  auto& reg = registry_storage();
  reg.erase(std::remove_if(reg.begin(), reg.end(), [&](const BackendInfo& b) { return b.name == name; }), reg.end());
}

}  // namespace

const std::vector<BackendInfo>& backend_registry() { return registry_storage(); }

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

BackendRegistration register_backend(BackendInfo info) {
  if (info.name.empty()) throw std::invalid_argument("register_backend: a backend needs a name");
  if (!info.create) throw std::invalid_argument("register_backend: backend '" + info.name + "' has no create");
  for (const auto& b : backend_registry())
    if (b.name == info.name) throw std::invalid_argument("register_backend: backend '" + info.name + "' exists");
  if (!info.validate) info.validate = no_checks;
  std::string name = info.name;
  registry_storage().push_back(std::move(info));
  return BackendRegistration(std::move(name));
}

BackendRegistration& BackendRegistration::operator=(BackendRegistration&& other) noexcept {
  if (this != &other) {
    if (!name_.empty()) unregister_backend(name_);
    name_ = std::move(other.name_);
    other.name_.clear();
  }
  return *this;
}

BackendRegistration::~BackendRegistration() {
  if (!name_.empty()) unregister_backend(name_);
}

std::vector<std::pair<std::string, std::string>> change_pairs() {
  std::vector<std::pair<std::string, std::string>> v;
  for (const auto& b : backend_registry())
    if (!b.change_baseline.empty()) v.emplace_back(b.change_baseline, b.name);
  return v;
}

std::vector<std::pair<std::string, std::string>> library_twins() {
  std::vector<std::pair<std::string, std::string>> v;
  for (const auto& b : backend_registry())
    if (!b.library_twin.empty()) v.emplace_back(b.library_twin, b.name);
  return v;
}

DerivedFacts derived_facts(const ModelConfig& model, const ServerArgs& server) {
  DerivedFacts all;
  std::vector<std::string> from;  // the backend that published all[i]
  for (const auto& b : backend_registry()) {
    if (!b.derived) continue;
    for (auto& [name, value] : b.derived(model, server)) {
      std::size_t i = 0;
      while (i < all.size() && all[i].first != name) ++i;
      if (i == all.size()) {
        all.emplace_back(name, value);
        from.push_back(b.name);
      } else if (all[i].second != value) {
        throw std::logic_error("derived fact '" + name + "': " + from[i] + " says " + all[i].second + ", " + b.name +
                               " says " + value);
      }
    }
  }
  return all;
}

}  // namespace attnbench
