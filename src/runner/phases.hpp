// The measurement protocol behind every memory figure of `memory` and `run`: each phase of a backend's life
// runs under a ledger phase of its name, between two memory marks (the ledger, and on a GPU the driver):
//   construct    the backend's constructor                                   (construct_backend)
//   graph_state  init_cuda_graph_state(max_bs, max_tokens)                   (init_graph_state)
//   capture      per batch size of the capture list, SGLang's capture-time   (capture_graphs)
//                metadata pass, and in `run` the recorded graph of one step
// `memory` runs the three back to back (measure_phases); `run` constructs, runs the eager validation step and
// its timing, then captures (so eager figures are taken before any graph state exists, as in SGLang).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "device/device.hpp"
#include "engine/forward_batch.hpp"
#include "engine/model_runner.hpp"

namespace attnbench {

// What one phase allocated and kept.
struct PhaseDelta {
  std::string phase;  // construct | graph_state | capture
  MemoryMark before, after;

  Ledger::Totals totals() const { return Ledger::diff_totals(before.ledger, after.ledger); }  // by kind
  std::vector<TagBytes> by_tag() const { return Ledger::diff(before.ledger, after.ledger); }
  // Drop in driver free memory (GPU only; it moves in 2 MiB steps).
  std::optional<std::int64_t> driver_delta_bytes() const;
};

struct ConstructedBackend {
  std::unique_ptr<AttentionBackend> backend;
  PhaseDelta construct;
};
// Phase "construct": info.create(runner) between two marks of `device`.
ConstructedBackend construct_backend(Device& device, ModelRunner& runner, const BackendInfo& info);

// What capture_graphs captures: like SGLang's CUDA-graph runner, one graph per batch size, each over padded
// rows of static inputs.
struct CapturePlan {
  std::vector<int> batch_sizes;  // captured, in this order
  int max_bs = 0;                // init_cuda_graph_state's arguments
  int max_tokens = 0;
  ForwardMode mode = ForwardMode::decode;  // decode, or target_verify with draft_tokens per request
  int draft_tokens = 0;
  int width = 1;                 // tokens per request (draft_tokens for verify)
  BatchInputs* inputs = nullptr;  // the static inputs each batch size's padded batch is loaded into
  // Empty: the capture-time metadata only (`memory`, which runs anywhere). Else the step recorded into each
  // graph after init_forward_metadata_in_graph (Device::capture: a GPU).
  std::function<void(const ForwardBatch&)> step;
};

// Phase "graph_state": backend.init_cuda_graph_state(plan.max_bs, plan.max_tokens).
PhaseDelta init_graph_state(Device& device, AttentionBackend& backend, const CapturePlan& plan);

struct CapturedGraphs {
  PhaseDelta capture;
  std::map<int, std::unique_ptr<Graph>> graphs;  // by batch size; empty without CapturePlan::step
};
// Phase "capture" (after init_graph_state): per batch size of the plan, its padded batch loaded into
// plan.inputs, init_forward_metadata_out_graph(in_capture), then init_forward_metadata_in_graph (and the
// step) directly or recorded into a graph.
CapturedGraphs capture_graphs(Device& device, AttentionBackend& backend, const CapturePlan& plan);

// The three phases back to back (`memory`): construct_backend, then init_graph_state and capture_graphs when
// `graphs` is given.
// Each phase is appended to `phases` as soon as it ends, so a failure later (an exception) keeps the phases
// measured before it. Returns the backend.
std::unique_ptr<AttentionBackend> measure_phases(Device& device, ModelRunner& runner, const BackendInfo& info,
                                                 const CapturePlan* graphs, std::vector<PhaseDelta>& phases);

}  // namespace attnbench
