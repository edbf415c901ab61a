#include "runner/memory_probe.hpp"

#include <algorithm>

#include "backends/registry.hpp"
#include "core/errors.hpp"
#include "engine/forward_batch.hpp"
#include "engine/memory_pool.hpp"
#include "engine/model_runner.hpp"
#include "runner/phases.hpp"
#include "runner/plan.hpp"

namespace attnbench {

namespace {

MemoryPhase memory_phase(const PhaseDelta& d) {
  MemoryPhase p;
  p.phase = d.phase;
  const Ledger::Totals t = d.totals();
  p.device_bytes = t[MemKind::device];
  p.pinned_bytes = t[MemKind::pinned];
  p.host_bytes = t[MemKind::host];
  p.driver_delta_bytes = d.driver_delta_bytes();
  for (const TagBytes& g : d.by_tag()) {
    // Groups are keyed by (tag, kind, phase, shared); fold the phase away, it is this phase.
    auto it = std::find_if(p.tags.begin(), p.tags.end(), [&](const MemoryTag& m) {
      return m.tag == g.tag && m.kind == mem_kind_name(g.kind) && m.shared == g.shared;
    });
    if (it == p.tags.end())
      p.tags.push_back(MemoryTag{g.tag, mem_kind_name(g.kind), g.bytes, g.shared, g.count});
    else {
      it->bytes += g.bytes;
      it->count += g.count;
    }
  }
  return p;
}

}  // namespace

void validate_memory_request(const MemoryRequest& req) {
  validate_server_args(req.server, req.model);
  if (req.backends.empty()) throw InputError("--attention-backend (--backend): no backend selected");
  for (const auto& name : req.backends) find_backend(name).validate(req.model, req.server);
  if (req.prefill_backend)
    find_backend(*req.prefill_backend, "--prefill-attention-backend (--prefill-backend)").validate(req.model, req.server);
  note_unapplied_window(req.model);  // once it is valid: an error stays the one line on stderr
}

MemoryRequest make_memory_request(const ModelOptions& m, const std::vector<std::string>& backends,
                                  const std::string& prefill_backend) {
  MemoryRequest req;
  req.model = resolve_model(m.model, m);
  req.server = resolve_server_args(m);
  reject_repeated(backends, "--attention-backend (--backend)");
  req.backends = resolve_backends(backends);
  if (!prefill_backend.empty()) req.prefill_backend = prefill_backend;
  validate_memory_request(req);
  return req;
}

MemoryReport measure_memory(const MemoryRequest& req, const DeviceMaker& make_device) {
  validate_memory_request(req);

  const std::vector<int> capture_bs = req.server.capture_batch_sizes();
  const bool graphs = !req.server.disable_cuda_graph && !capture_bs.empty();
  const int graph_max_bs = capture_bs.empty() ? 0 : *std::max_element(capture_bs.begin(), capture_bs.end());
  const int n_draft = req.server.speculative_num_draft_tokens;
  // decode_cuda_graph_runner.py L322-324: the target runner captures TARGET_VERIFY with N tokens per request.
  const ForwardMode capture_mode = n_draft > 0 ? ForwardMode::target_verify : ForwardMode::decode;
  const int width = n_draft > 0 ? n_draft : 1;
  CapturePlan capture;  // SGLang's whole capture list, metadata only
  capture.batch_sizes = capture_bs;
  capture.max_bs = graph_max_bs;
  capture.max_tokens = graph_max_bs * width;
  capture.mode = capture_mode;
  capture.draft_tokens = n_draft > 0 ? n_draft : 0;
  capture.width = width;

  MemoryReport report;
  report.model = req.model.name;
  report.sglang_version = req.server.profile().version;
  report.kv_bytes_per_token = req.model.kv_bytes_per_token();

  std::string device_name;
  int device_arch = 90;
  for (const auto& name : req.backends) {
    const BackendInfo& info = find_backend(name);
    BackendMemory bm;
    bm.backend = name;
    bm.models = info.models;
    std::unique_ptr<Device> dev = make_device();
    device_name = dev->name();
    device_arch = dev->sm_version();
    std::vector<PhaseDelta> phases;  // those measured, also when a later one fails
    try {
      ModelRunner mr(*dev, req.model, req.server);
      std::unique_ptr<ReqToTokenPool> pool;
      std::unique_ptr<BatchInputs> inputs;
      {
        PhaseScope ps(dev->ledger(), "engine");
        pool = std::make_unique<ReqToTokenPool>(*dev, 1, 16);  // row 0 (padding) is all capture reads
        if (graphs) inputs = std::make_unique<BatchInputs>(*dev, graph_max_bs, graph_max_bs * width);
      }
      mr.req_to_token_pool = pool.get();
      std::unique_ptr<AttentionBackend> prefill;
      if (req.prefill_backend) {
        PhaseScope ps(dev->ledger(), "prefill_backend");
        prefill = find_backend(*req.prefill_backend).create(mr);
      }
      capture.inputs = inputs.get();
      measure_phases(*dev, mr, info, graphs ? &capture : nullptr, phases);
    } catch (const InputError&) {
      throw;
    } catch (const std::exception& e) {
      bm.error = e.what();
    }
    for (const PhaseDelta& d : phases) bm.phases.push_back(memory_phase(d));
    report.backends.push_back(std::move(bm));
  }

  auto& c = report.context;
  const ModelConfig& m = req.model;
  c.push_back({"model", m.name + " (" + std::to_string(m.num_qo_heads()) + " q / " + std::to_string(m.num_kv_heads()) +
                            " kv heads per rank, head_dim " + std::to_string(m.head_dim) + ", " +
                            std::to_string(m.num_layers) + " layers, " + std::string(dtype_name(m.dtype)) +
                            (m.kv_dtype() != m.dtype ? ", KV cache " + std::string(dtype_name(m.kv_dtype())) : "") +
                            (m.has_sliding_window() ? ", window " + std::to_string(m.sliding_window) : "") + ")"});
  c.push_back({"context_len", std::to_string(req.server.effective_context_len(m))});
  c.push_back({"max_running_requests", std::to_string(req.server.max_running_requests)});
  c.push_back({"page_size", std::to_string(req.server.page_size)});
  c.push_back({"cuda_graph",
               graphs ? "max bs " + std::to_string(graph_max_bs) + ", " + std::to_string(capture_bs.size()) +
                            " batch sizes, " + std::string(forward_mode_name(capture_mode))
                      : std::string("disabled")});
  if (n_draft > 0) c.push_back({"speculative_num_draft_tokens", std::to_string(n_draft)});
  if (req.prefill_backend) c.push_back({"prefill_backend", *req.prefill_backend + " (built first, shares named buffers)"});
  const SglangProfile& profile = req.server.profile();
  c.push_back({"sglang", profile.version + " (FlashInfer " + profile.flashinfer_version + ")"});
  c.push_back({"arch", arch_name(req.server.arch > 0 ? req.server.arch : device_arch) +
                           (req.server.arch > 0 ? " (--arch)" : " (the device's)")});
  c.push_back({"device", device_name});
  return report;
}

}  // namespace attnbench
