#include "runner/phases.hpp"

namespace attnbench {

std::optional<std::int64_t> PhaseDelta::driver_delta_bytes() const {
  if (!before.driver || !after.driver) return std::nullopt;
  return before.driver->free_bytes - after.driver->free_bytes;
}

namespace {

// `body` under ledger phase `name`, between two marks.
template <class F>
PhaseDelta measure_phase(Device& device, const std::string& name, F&& body) {
  PhaseDelta d;
  d.phase = name;
  d.before = mark_memory(device);
  {
    PhaseScope ps(device.ledger(), name);
    body();
  }
  d.after = mark_memory(device);
  return d;
}

}  // namespace

ConstructedBackend construct_backend(Device& device, ModelRunner& runner, const BackendInfo& info) {
  ConstructedBackend out;
  out.construct = measure_phase(device, "construct", [&] { out.backend = info.create(runner); });
  return out;
}

PhaseDelta init_graph_state(Device& device, AttentionBackend& backend, const CapturePlan& plan) {
  return measure_phase(device, "graph_state", [&] { backend.init_cuda_graph_state(plan.max_bs, plan.max_tokens); });
}

CapturedGraphs capture_graphs(Device& device, AttentionBackend& backend, const CapturePlan& plan) {
  CapturedGraphs out;
  out.capture = measure_phase(device, "capture", [&] {
    const int fill = backend.get_cuda_graph_seq_len_fill_value();
    for (int bs : plan.batch_sizes) {
      const ForwardBatch fb =
          plan.inputs->load(pad_batch(BatchSpec{plan.mode, plan.draft_tokens, {}, {}, {}, {}, {}}, bs, fill, plan.width));
      backend.init_forward_metadata_out_graph(fb, /*in_capture=*/true);
      if (!plan.step) {
        backend.init_forward_metadata_in_graph(fb);
        continue;
      }
      out.graphs[bs] = device.capture([&] {
        backend.init_forward_metadata_in_graph(fb);
        plan.step(fb);
      });
    }
  });
  return out;
}

std::unique_ptr<AttentionBackend> measure_phases(Device& device, ModelRunner& runner, const BackendInfo& info,
                                                 const CapturePlan* graphs, std::vector<PhaseDelta>& phases) {
  ConstructedBackend built = construct_backend(device, runner, info);
  phases.push_back(std::move(built.construct));
  if (graphs) {
    phases.push_back(init_graph_state(device, *built.backend, *graphs));
    phases.push_back(capture_graphs(device, *built.backend, *graphs).capture);
  }
  return std::move(built.backend);
}

}  // namespace attnbench
