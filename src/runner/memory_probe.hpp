// `attnbench memory`: constructs each backend in a fresh device context and measures what it allocates at
// construction, for CUDA-graph state and at capture (one capture-time metadata pass per batch size in
// SGLang's capture list), from the ledger and, on a GPU, from the driver.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device/device.hpp"
#include "engine/model_config.hpp"
#include "engine/server_args.hpp"
#include "report/memory_report.hpp"
#include "runner/plan.hpp"

namespace attnbench {

struct MemoryRequest {
  ModelConfig model;
  ServerArgs server;
  std::vector<std::string> backends;       // in report order
  std::optional<std::string> prefill_backend;  // built first in the same process (shares named buffers)
};

using DeviceMaker = std::function<std::unique_ptr<Device>()>;

// Throws InputError naming the option at fault (server arguments, backends, page sizes).
void validate_memory_request(const MemoryRequest& req);
// The request of `attnbench memory`: the preset m.model with m's overrides, the backends ("all" expands)
// and the optional prefill backend (empty: none), resolved and validated (InputError naming the option).
MemoryRequest make_memory_request(const ModelOptions& m, const std::vector<std::string>& backends,
                                  const std::string& prefill_backend);
// Validates the request and measures every backend.
MemoryReport measure_memory(const MemoryRequest& req, const DeviceMaker& make_device);

}  // namespace attnbench
