// The backend registry: the one place that knows every backend by name, and what the rest of attnbench may
// know about each (the SGLang class it models, its library twin in the peer script, which pair of backends is
// "the change", sizes derived from the model as its constructor derives them). The built-in backends are
// listed in registry.cpp; a variant is added with register_backend from anywhere in src/backends/ (or a
// test), so that app/, runner/ and report/ see it without being edited.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/attention_backend.hpp"

namespace attnbench {

struct BackendInfo {
  std::string name;    // as the CLI spells it
  std::string models;  // the SGLang class it models
  // Throws InputError naming the option at fault when this backend cannot be built for the configuration.
  // nullptr at registration: no checks.
  void (*validate)(const ModelConfig&, const ServerArgs&) = nullptr;
  std::unique_ptr<AttentionBackend> (*create)(ModelRunner&) = nullptr;
  // The peer script's backend (scripts/peer_flashinfer.py) that runs the real library this backend models,
  // e.g. "flashinfer_lib"; empty when there is none to pair with.
  std::string library_twin;
  // Set on the candidate of "the change" (SGLang #28808): the backend it replaces, e.g. trtllm_mha has
  // change_baseline "trtllm_mha_legacy". Reports show baseline -> candidate savings and bitwise identity.
  std::string change_baseline;
  // The sizes and flags the constructor derives (FlashInfer's float workspace, ...); nullptr: none.
  DerivedFacts (*derived)(const ModelConfig&, const ServerArgs&) = nullptr;
  // What library_twin runs, for the reports (Markdown); empty without a twin.
  std::string library_what;
  // The SGLang peer script's backend (scripts/peer_sglang.py) that runs SGLang's own class this backend models,
  // e.g. "flashinfer_sglang"; empty when there is none.
  std::string sglang_twin;
};

// Every backend: the built-ins in their fixed order, then registered variants in registration order.
// References stay valid until that backend is unregistered.
const std::vector<BackendInfo>& backend_registry();
// Throws InputError naming `option` and listing the backends when `name` is unknown.
const BackendInfo& find_backend(const std::string& name, const std::string& option = "--attention-backend (--backend)");
std::vector<std::string> backend_names();

// Keeps a registered backend in the registry while it lives; unregisters it when destroyed (a test's variant
// disappears with the test). Movable, not copyable. A variant meant to stay for the whole process is kept in a
// static BackendRegistration.
class BackendRegistration {
 public:
  BackendRegistration() = default;
  explicit BackendRegistration(std::string name) : name_(std::move(name)) {}
  BackendRegistration(BackendRegistration&& other) noexcept : name_(std::move(other.name_)) { other.name_.clear(); }
  BackendRegistration& operator=(BackendRegistration&& other) noexcept;
  BackendRegistration(const BackendRegistration&) = delete;
  BackendRegistration& operator=(const BackendRegistration&) = delete;
  ~BackendRegistration();
  const std::string& name() const { return name_; }

 private:
  std::string name_;  // empty: holds nothing
};

// Adds `info` after the backends already registered. Throws std::invalid_argument when the name is empty or
// taken, or when `create` is missing; a missing `validate` becomes "no checks".
[[nodiscard]] BackendRegistration register_backend(BackendInfo info);

// "The change" as data: (baseline, candidate) for every backend with a change_baseline, in registry order.
std::vector<std::pair<std::string, std::string>> change_pairs();
// (library backend, model backend) for every backend with a library_twin, in registry order, e.g.
// ("flashinfer_lib", "flashinfer").
std::vector<std::pair<std::string, std::string>> library_twins();
// Every backend's derived facts for one configuration, merged by name in registry order. Two backends that
// publish the same name must agree (std::logic_error naming both otherwise).
DerivedFacts derived_facts(const ModelConfig& model, const ServerArgs& server);

}  // namespace attnbench
