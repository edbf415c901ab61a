// One eager step of a registered backend on a fresh CPU device, every layer's output kept: what the tests of the
// once-per-backend decisions (the logit cap, the layer windows) compare bit for bit.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "device/cpu_device.hpp"
#include "runner/phases.hpp"
#include "runner/workload.hpp"

namespace attnbench::test {

struct StepOutputs {
  bool supported = false;  // the backend's supports() for the case's mode (eager)
  bool applies_logit_cap = true;
  LayerWindows layer_windows = LayerWindows::all;  // AttentionBackend::layer_windows for the case's mode
  std::vector<unsigned char> bytes;  // every layer's output, in layer order
};

// `edit` changes each layer before it runs (e.g. its logit_cap); nothing when empty.
inline StepOutputs run_step(const Case& c, const std::string& backend, const std::function<void(Layer&)>& edit = {}) {
  CpuDevice dev;
  Workload wl(dev, c);
  ConstructedBackend built = construct_backend(dev, wl.model_runner(), find_backend(backend));
  AttentionBackend& b = *built.backend;
  StepOutputs out;
  out.supported = b.supports(c.step_kind(false)).ok;
  if (!out.supported) return out;
  out.applies_logit_cap = b.applies_logit_cap();
  out.layer_windows = b.layer_windows(c.mode);
  const ForwardBatch& fb = wl.forward_batch();
  b.init_forward_metadata(fb);
  std::vector<unsigned char> host(static_cast<std::size_t>(wl.output_bytes()));
  for (Layer layer : wl.layers()) {
    if (edit) edit(layer);
    wl.poison_output();
    b.forward(wl.io(), layer, fb);
    dev.copy(host.data(), wl.output().data(), wl.output_bytes());
    dev.synchronize();
    out.bytes.insert(out.bytes.end(), host.begin(), host.end());
  }
  return out;
}

}  // namespace attnbench::test
