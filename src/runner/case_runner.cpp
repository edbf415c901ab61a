#include "runner/case_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <functional>
#include <map>
#include <tuple>
#include <utility>

#include "backends/registry.hpp"
#include "core/errors.hpp"
#include "device/environment.hpp"
#include "runner/case_rows.hpp"
#include "runner/graph_run.hpp"
#include "runner/phases.hpp"
#include "runner/timed_step.hpp"
#include "runner/validation_step.hpp"
#include "runner/workload.hpp"

namespace attnbench {

namespace {

// ATTNBENCH_PHASE_TIMES=1: where a case's wall time goes (reference, then per backend: set-up, validation step,
// eager timing, graph row), one line per case on stderr. A diagnostic: figures and rows do not change.
class PhaseTimes {
 public:
  PhaseTimes() : on_(std::getenv("ATTNBENCH_PHASE_TIMES") != nullptr), last_(Clock::now()) {}
  bool on() const { return on_; }
  // Charges the time since the previous mark to `what`.
  void mark(const std::string& what) {
    if (!on_) return;
    const auto now = Clock::now();
    char buf[32];
    std::snprintf(buf, sizeof buf, " %.2f s", std::chrono::duration<double>(now - last_).count());
    text_ += (text_.empty() || text_.back() == ':' ? " " : ", ") + what + buf;
    last_ = now;
  }
  void section(const std::string& name) {
    if (on_) text_ += (text_.empty() ? "" : ";") + std::string(" ") + name + ":";
  }
  void print(const std::string& case_id) const {
    if (on_) std::fprintf(stderr, "attnbench: phases of %s:%s\n", case_id.c_str(), text_.c_str());
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool on_;
  Clock::time_point last_;
  std::string text_;
};

// The references of a case's validated layers for one fp8 read view, logit-cap and layer-window choice, computed on
// first use.
using ReferenceProvider =
    std::function<const std::vector<ReferenceLayer>&(const Fp8ReadView&, bool logit_cap, LayerWindows windows)>;


struct BackendResult {
  std::vector<ResultRow> rows;
  bool validated = false;
  std::uint64_t output_hash = 0;            // every layer's output, eager
  std::vector<unsigned char> first_layer;   // host copy of layer 0's output (peer comparison)
  float logit_cap = 0.0f;                   // the cap the backend applied (trtllm_mha: none, as SGLang's)
  LayerWindows layer_windows = LayerWindows::all;  // which keys the layers' windows hid (AttentionBackend::layer_windows)
  bool sticky = false;
};

// One backend on a fresh device: construction, the validation step, eager timing and (CUDA) the graph row.
BackendResult run_backend(const Case& c, const BackendInfo& info, const DeviceMaker& make_device, const CaseMemory& need,
                          const ReferenceProvider& refs_for, const RunSettings& s, PhaseTimes& phases) {
  BackendResult out;
  phases.section(info.name);
  std::unique_ptr<Device> dev = make_device();
  const bool want_graph = s.graph && dev->supports_graphs() && c.mode != ForwardMode::extend;
  ResultRow eager = base_row(c, info.name, dev->name(), "eager", s);
  ResultRow graph_row = base_row(c, info.name, dev->name(), "graph", s);
  eager.arch = graph_row.arch = arch_name(c.server.arch > 0 ? c.server.arch : dev->sm_version());
  auto fail_all = [&](RowStatus status, const std::string& why) {
    for (ResultRow* r : {&eager, &graph_row}) {
      if (r->status == RowStatus::ok) {
        r->status = status;
        r->note = why;
      }
    }
  };
  try {
    if (const auto why = memory_cap_reason(need, dev->available_bytes())) throw Unsupported(*why);
    Workload wl(*dev, c);
    ConstructedBackend built = construct_backend(*dev, wl.model_runner(), info);
    AttentionBackend& backend = *built.backend;
    const Ledger::Totals ctor = built.construct.totals();
    for (ResultRow* r : {&eager, &graph_row}) {
      r->ctor_device_bytes = ctor[MemKind::device];
      r->ctor_pinned_bytes = ctor[MemKind::pinned];
      r->ctor_driver_delta_bytes = built.construct.driver_delta_bytes();
      add_ledger(*r, built.construct);
    }
    const Support sup = backend.supports(c.step_kind(false));
    if (!sup.ok) throw Unsupported(sup.reason);
    append_note(eager.note, sup.reason);

    phases.mark("set-up");
    const LayerWindows windows = effective_layer_windows(c, backend.layer_windows(c.mode));
    const std::vector<ReferenceLayer>& refs =
        refs_for(backend.fp8_read_view(c.mode), backend.applies_logit_cap(), windows);
    out.logit_cap = backend.applies_logit_cap() ? c.model.attn_logit_cap : 0.0f;
    out.layer_windows = windows;
    // The case as this backend computes it: its work figures (TFLOP/s, TB/s) count the keys it reads.
    const Case as_run = case_as_run(c, windows);
    phases.mark("reference");
    const ValidationStep v = run_validation_step(c, backend, *dev, wl, refs);
    phases.mark("validation");
    out.output_hash = v.output_hash;
    out.first_layer = v.first_layer;
    out.validated = true;
    const std::string vnote = validation_note(c, v);
    for (ResultRow* r : {&eager, &graph_row}) {
      fill_validation(*r, v);
      append_note(r->note, vnote);
    }

    if (s.timing) {
      const ForwardBatch& fb = wl.forward_batch();
      const TimedSteps t = time_steps(
          *dev, s, [&] { backend.init_forward_metadata(fb); },
          [&] {
            for (const Layer& layer : wl.layers()) backend.forward(wl.io(), layer, fb);
          });
      fill_timing(eager, t, as_run, s);
      phases.mark("timing");
      if (dev->l2_bytes() > 0)
        append_note(eager.note, "KV per layer / L2 = " + format_double(step_work(as_run).kv_bytes_layer / dev->l2_bytes()));
    }
    if (want_graph) {
      run_graph(c, backend, *dev, wl, v.last_layer, s, graph_row);
      phases.mark("graph");
    }
  } catch (const OutOfMemoryError& e) {
    fail_all(RowStatus::oom, e.what());
  } catch (const Unsupported& e) {
    fail_all(RowStatus::skipped, e.what());
  } catch (const DeviceError& e) {
    out.sticky = e.sticky();
    fail_all(RowStatus::failed, e.what());
  } catch (const std::exception& e) {
    fail_all(RowStatus::failed, e.what());
  }
  if (eager.status != RowStatus::ok && eager.status != RowStatus::skipped) out.validated = false;
  if (eager.ref_pass && !*eager.ref_pass && eager.status == RowStatus::ok) append_note(eager.note, "reference check FAILED");
  out.rows.push_back(std::move(eager));
  if (want_graph) out.rows.push_back(std::move(graph_row));
  return out;
}

// Cross-backend checks: bit-identical outputs (every layer), and the first layer within tolerance otherwise.
void compare_backends(const Case& c, const std::vector<std::string>& backends, std::vector<BackendResult>& results) {
  const Tolerance tol = tolerance_for(c.model.dtype);
  for (std::size_t a = 0; a < results.size(); ++a) {
    std::string equal, peers;
    for (std::size_t b = 0; b < results.size(); ++b) {
      if (a == b || !results[a].validated || !results[b].validated) continue;
      if (results[a].logit_cap != results[b].logit_cap) {  // different attention (SGLang's trtllm_mha: no cap)
        peers += std::string(peers.empty() ? "" : ", ") + "vs " + backends[b] + " not compared (logit cap differs)";
        continue;
      }
      if (results[a].layer_windows != results[b].layer_windows) {  // FlashInfer's ragged extend, Cohere2
        peers += std::string(peers.empty() ? "" : ", ") + "vs " + backends[b] + " not compared (layer windows differ)";
        continue;
      }
      if (results[a].output_hash == results[b].output_hash) {
        equal += (equal.empty() ? "" : ";") + backends[b];
        continue;
      }
      ErrorStats es;
      const auto& x = results[a].first_layer;
      const auto& y = results[b].first_layer;
      const auto n = static_cast<std::int64_t>(x.size() / dtype_size(c.model.dtype));
#pragma omp parallel
      {  // threads' partial statistics, merged (the sums in another order: max abs and counts are exact)
        ErrorStats part;
#pragma omp for schedule(static) nowait
        for (std::int64_t i = 0; i < n; ++i)
          part.add(load_as_float(x.data(), i, c.model.dtype), load_as_float(y.data(), i, c.model.dtype), tol);
#pragma omp critical
        es.merge(part);
      }
      peers += std::string(peers.empty() ? "" : ", ") + "vs " + backends[b] + " max abs " + format_double(es.max_abs) +
               (es.pass() ? "" : " (OUT OF TOLERANCE)");
    }
    for (ResultRow& r : results[a].rows) {
      if (r.status != RowStatus::ok) continue;
      r.bitwise_equal_to = equal;
      append_note(r.note, peers);
    }
  }
}

}  // namespace

ResultRow skipped_row(const Case& c, const std::string& backend, const std::string& device, const std::string& timing,
                      const std::string& reason, const RunSettings& settings) {
  ResultRow r = base_row(c, backend, device, timing, settings);
  r.status = RowStatus::skipped;
  r.note = reason;
  return r;
}

CaseOutcome run_case(const Case& c, const std::vector<std::string>& backends, const DeviceMaker& make_device,
                     const RunSettings& s) {
  CaseOutcome out;
  const CaseMemory need = estimate_case_memory(c);
  std::optional<std::string> load_note;  // timed CPU rows: the cores are shared (device/environment.hpp)
  {  // A case that cannot fit is reported before any reference work or allocation.
    std::unique_ptr<Device> probe = make_device();
    if (s.timing) load_note = cpu_load_note(*probe);
    if (const auto why = memory_cap_reason(need, probe->available_bytes())) {
      for (const auto& b : backends) out.rows.push_back(skipped_row(c, b, probe->name(), "eager", *why, s));
      return out;
    }
  }
  // One reference per fp8 read view (without an fp8 cache every view reads the same values: one reference).
  const HostBatch host = plan_host_batch(c);
  // Likewise one per logit-cap choice where the model has a cap (AttentionBackend::applies_logit_cap), and one per
  // layer-window choice where it has windows (AttentionBackend::layer_windows).
  std::map<std::tuple<Fp8ReadView, bool, LayerWindows>, std::vector<ReferenceLayer>> refs_by_view;
  const ReferenceProvider refs_for = [&](const Fp8ReadView& asked, bool cap,
                                         LayerWindows windows) -> const std::vector<ReferenceLayer>& {
    const Fp8ReadView view = is_fp8(c.model.kv_dtype()) ? asked : Fp8ReadView{};
    const auto key = std::make_tuple(view, cap && c.model.attn_logit_cap > 0.0f, effective_layer_windows(c, windows));
    auto it = refs_by_view.find(key);
    if (it != refs_by_view.end()) return it->second;
    std::vector<ReferenceLayer> refs;
    const Case as_run = case_as_run(c, std::get<2>(key));
    for (int l : validated_layers(c.model.num_layers))
      refs.push_back(reference_layer(as_run, host, l, s.reference_flop_budget, view, std::get<1>(key)));
    return refs_by_view.emplace(key, std::move(refs)).first->second;
  };

  PhaseTimes phases;
  std::vector<BackendResult> results;
  for (const auto& name : backends) {
    results.push_back(run_backend(c, find_backend(name), make_device, need, refs_for, s, phases));
    phases.mark("teardown");
    if (results.back().sticky) {
      out.sticky_device_error = true;
      break;
    }
  }
  compare_backends(c, backends, results);
  phases.section("compare");
  phases.mark("outputs");
  phases.print(c.id);
  for (auto& r : results)
    for (auto& row : r.rows) {
      if (load_note && row.status == RowStatus::ok && row.step_median_us) append_note(row.note, *load_note);
      out.rows.push_back(std::move(row));
    }
  return out;
}

}  // namespace attnbench
