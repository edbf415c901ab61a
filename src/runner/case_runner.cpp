#include "runner/case_runner.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <sstream>

#include "backends/registry.hpp"
#include "core/errors.hpp"
#include "core/units.hpp"
#include "engine/random_fill.hpp"
#include "runner/validation.hpp"
#include "runner/workload.hpp"

namespace attnbench {

namespace {

std::string format_double(double v) {
  std::ostringstream os;
  os.precision(3);
  os << v;
  return os.str();
}

void append_note(std::string& note, const std::string& more) {
  if (more.empty()) return;
  note += (note.empty() ? "" : "; ") + more;
}

std::string repro_command(const Case& c, const std::string& backend, const RunSettings& s) {
  std::string cmd = s.repro_prefix;
  if (!s.repro_options.empty()) cmd += " " + s.repro_options;
  return cmd + " --backend " + backend + " --case-id '" + c.id + "'";
}

ResultRow base_row(const Case& c, const std::string& backend, const std::string& device, const std::string& timing,
                   const RunSettings& s) {
  ResultRow r;
  r.case_id = c.id;
  r.backend = backend;
  r.device = device;
  r.mode = std::string(forward_mode_name(c.mode));
  r.timing = timing;
  r.status = "ok";
  r.model = c.model.name;
  r.layers = c.model.num_layers;
  r.batch = c.batch;
  r.q_tokens = c.q_tokens();
  r.kv_len_mean = c.kv_len_mean();
  r.kv_len_max = c.kv_len_max();
  r.prefix_len_mean = c.prefix_len_mean();
  r.num_qo_heads = c.model.num_qo_heads();
  r.num_kv_heads = c.model.num_kv_heads();
  r.head_dim = c.model.head_dim;
  r.page_size = c.server.page_size;
  r.dtype = std::string(dtype_name(c.model.dtype));
  r.sliding_window = c.model.has_sliding_window() ? c.model.sliding_window : -1;
  r.seed = c.seed;
  r.repro = repro_command(c, backend, s);
  return r;
}

void add_ledger(ResultRow& r, const std::string& phase, const MemoryMark& a, const MemoryMark& b) {
  for (const TagBytes& g : Ledger::diff(a.ledger, b.ledger))
    r.ledger.push_back({phase, g.tag, mem_kind_name(g.kind), g.bytes, g.shared, g.count});
}

void fill_timing(ResultRow& r, const Samples& smp, const std::vector<double>& meta, const std::vector<double>& fwd,
                 const Case& c, const RunSettings& s) {
  r.samples_us = smp.us;
  r.step_median_us = smp.summary.median;
  r.step_p10_us = smp.summary.p10;
  r.step_p90_us = smp.summary.p90;
  r.step_min_us = smp.summary.min;
  r.step_max_us = smp.summary.max;
  r.step_spread_pct = smp.summary.spread_pct;
  r.samples = smp.summary.n;
  const Summary ms = summarize(meta), fs = summarize(fwd);
  r.metadata_median_us = ms.median;
  r.forward_median_us = fs.median / c.model.num_layers;
  // Throughput over the forward part (the kernels of every layer), the metadata excluded.
  const StepWork w = step_work(c);
  if (fs.median > 0) {
    r.tflops = w.flops / (fs.median * 1e-6) / 1e12;
    r.tb_per_s = w.bytes / (fs.median * 1e-6) / 1e12;
    if (s.copy_bandwidth > 0) r.bw_fraction = w.bytes / (fs.median * 1e-6) / s.copy_bandwidth;
  }
  append_note(r.note, "stop: " + smp.stop_reason);
  if (smp.first_sample_outlier) append_note(r.note, "first run was an outlier (cold start)");
}

// Runs `once` under the sampling policy; `meta` / `fwd` collect the per-phase times of the kept samples.
template <class F>
Samples timed(const RunSettings& s, F&& once, std::vector<double>& meta, std::vector<double>& fwd) {
  SteadyClock clock;
  Samples smp = sample(s.sampling, [&] { return once(); }, clock);
  const auto drop = static_cast<std::ptrdiff_t>(smp.warmup_runs);
  meta.erase(meta.begin(), meta.begin() + std::min<std::ptrdiff_t>(drop, static_cast<std::ptrdiff_t>(meta.size())));
  fwd.erase(fwd.begin(), fwd.begin() + std::min<std::ptrdiff_t>(drop, static_cast<std::ptrdiff_t>(fwd.size())));
  return smp;
}

struct BackendResult {
  std::vector<ResultRow> rows;
  bool validated = false;
  std::uint64_t output_hash = 0;            // every layer's output, eager
  std::vector<unsigned char> first_layer;   // host copy of layer 0's output (peer comparison)
  bool sticky = false;
};

void run_graph(const Case& c, AttentionBackend& backend, Device& dev, Workload& wl, const std::vector<unsigned char>& eager_last,
               const RunSettings& s, ResultRow& row) {
  const Support sup = backend.supports(c.mode, true, c.sinks);
  if (!sup.ok) {
    row.status = "skipped";
    row.note = sup.reason;
    return;
  }
  const std::vector<int> caps = c.server.capture_batch_sizes();
  auto it = std::find_if(caps.begin(), caps.end(), [&](int b) { return b >= c.batch; });
  if (it == caps.end()) {
    row.status = "skipped";
    row.note = "batch " + std::to_string(c.batch) + " exceeds the largest captured batch (--cuda-graph-max-bs)";
    return;
  }
  const int bs_graph = *it;
  const int width = c.mode == ForwardMode::target_verify ? c.draft_tokens : 1;
  const int max_bs = s.capture_all ? caps.back() : bs_graph;
  const ModelConfig& m = c.model;
  const std::int64_t q_row = static_cast<std::int64_t>(m.num_qo_heads()) * m.head_dim * dtype_size(m.dtype);
  const std::int64_t kv_row = static_cast<std::int64_t>(m.num_kv_heads()) * m.head_dim * dtype_size(m.dtype);
  const std::int64_t max_tokens = static_cast<std::int64_t>(max_bs) * width;

  // Static graph inputs (SGLang's graph runner owns them): real rows copied from the eager inputs.
  std::unique_ptr<BatchInputs> gin;
  Buffer qg, kg, vg, og;
  {
    PhaseScope ps(dev.ledger(), "engine");
    gin = std::make_unique<BatchInputs>(dev, max_bs, static_cast<int>(max_tokens));
    qg = dev.allocate(max_tokens * q_row, MemKind::device, "engine.graph_inputs.q");
    kg = dev.allocate(max_tokens * kv_row, MemKind::device, "engine.graph_inputs.k");
    vg = dev.allocate(max_tokens * kv_row, MemKind::device, "engine.graph_inputs.v");
    og = dev.allocate(max_tokens * q_row, MemKind::device, "engine.graph_outputs.o");
    const WorkloadSeeds seeds = workload_seeds(c.seed ^ 0x5bd1e995u);
    fill_uniform(dev, qg.data(), max_tokens * q_row / dtype_size(m.dtype), m.dtype, seeds.q, -kQueryRange, kQueryRange);
    fill_uniform(dev, kg.data(), max_tokens * kv_row / dtype_size(m.dtype), m.dtype, seeds.k_new, -kKvRange, kKvRange);
    fill_uniform(dev, vg.data(), max_tokens * kv_row / dtype_size(m.dtype), m.dtype, seeds.v_new, -kKvRange, kKvRange);
    const AttentionIO e = wl.io();
    const int t = c.q_tokens();
    dev.copy(qg.data(), e.q, t * q_row);
    dev.copy(kg.data(), e.k, t * kv_row);
    dev.copy(vg.data(), e.v, t * kv_row);
  }
  const AttentionIO io{qg.data(), kg.data(), vg.data(), og.data()};
  const int fill = backend.get_cuda_graph_seq_len_fill_value();

  const MemoryMark m0 = mark_memory(dev);
  {
    PhaseScope ps(dev.ledger(), "graph_state");
    backend.init_cuda_graph_state(max_bs, static_cast<int>(max_tokens));
  }
  const MemoryMark m1 = mark_memory(dev);
  std::map<int, std::unique_ptr<Graph>> graphs;
  {
    PhaseScope ps(dev.ledger(), "capture");
    for (int bs : caps) {
      if (bs > max_bs || (!s.capture_all && bs != bs_graph)) continue;
      const ForwardBatch fb = gin->load(pad_batch(BatchSpec{c.mode, c.draft_tokens, {}, {}, {}, {}, {}}, bs, fill, width));
      backend.init_forward_metadata_out_graph(fb, /*in_capture=*/true);
      graphs[bs] = dev.capture([&] {
        backend.init_forward_metadata_in_graph(fb);
        for (const Layer& layer : wl.layers()) backend.forward(io, layer, fb);
      });
    }
  }
  const MemoryMark m2 = mark_memory(dev);
  row.graph_state_device_bytes = Ledger::diff_totals(m0.ledger, m1.ledger)[MemKind::device];
  row.capture_device_bytes = Ledger::diff_totals(m1.ledger, m2.ledger)[MemKind::device];
  row.capture_pinned_bytes = Ledger::diff_totals(m1.ledger, m2.ledger)[MemKind::pinned];
  add_ledger(row, "graph_state", m0, m1);
  add_ledger(row, "capture", m1, m2);
  append_note(row.note, std::to_string(graphs.size()) + " graphs captured, replayed at bs " + std::to_string(bs_graph));

  const ForwardBatch fb = gin->load(pad_batch(wl.host().spec, bs_graph, fill, width));
  Graph& graph = *graphs.at(bs_graph);
  // Check: the replay's last-layer output equals the eager one (bit for bit when no padding changed the plan).
  poison(dev, og.data(), og.bytes());
  backend.init_forward_metadata_out_graph(fb, false);
  graph.replay();
  dev.synchronize();
  std::vector<unsigned char> got(eager_last.size());
  dev.copy(got.data(), og.data(), static_cast<std::int64_t>(got.size()));
  dev.synchronize();
  if (bs_graph == c.batch) {
    if (std::memcmp(got.data(), eager_last.data(), got.size()) != 0) {
      row.status = "failed";
      append_note(row.note, "graph replay output differs from the eager output");
    } else {
      append_note(row.note, "replay bit-identical to eager");
    }
  } else {
    const Tolerance tol = tolerance_for(m.dtype);
    ErrorStats es;
    for (std::size_t i = 0; i < got.size() / dtype_size(m.dtype); ++i)
      es.add(load_as_float(got.data(), static_cast<std::int64_t>(i), m.dtype),
             load_as_float(eager_last.data(), static_cast<std::int64_t>(i), m.dtype), tol);
    if (!es.pass()) row.status = "failed";
    append_note(row.note, "padded to bs " + std::to_string(bs_graph) + ": replay vs eager max abs " + format_double(es.max_abs));
  }
  if (!s.timing) return;
  auto tm = dev.make_timer(), tf = dev.make_timer();
  std::vector<double> meta, fwd;
  std::int64_t peak = 0;
  const Samples smp = timed(
      s,
      [&] {
        if (s.flush_l2) dev.flush_l2();
        const std::int64_t before = dev.ledger().live()[MemKind::device];
        dev.ledger().reset_window_peak();
        PhaseScope ps(dev.ledger(), "step");
        tm->start();
        backend.init_forward_metadata_out_graph(fb, false);
        tm->stop();
        tf->start();
        graph.replay();
        tf->stop();
        const double a = tm->elapsed_us(), b = tf->elapsed_us();
        peak = std::max(peak, dev.ledger().window_peak()[MemKind::device] - before);
        meta.push_back(a);
        fwd.push_back(b);
        return a + b;
      },
      meta, fwd);
  fill_timing(row, smp, meta, fwd, c, s);
  row.step_peak_device_bytes = peak;
}

BackendResult run_backend(const Case& c, const BackendInfo& info, const DeviceMaker& make_device,
                          const std::vector<ReferenceLayer>& refs, const RunSettings& s) {
  BackendResult out;
  std::unique_ptr<Device> dev = make_device();
  const bool want_graph = s.graph && dev->supports_graphs() && c.mode != ForwardMode::extend;
  ResultRow eager = base_row(c, info.name, dev->name(), "eager", s);
  ResultRow graph_row = base_row(c, info.name, dev->name(), "graph", s);
  auto fail_all = [&](const std::string& status, const std::string& why) {
    for (ResultRow* r : {&eager, &graph_row}) {
      if (r->status == "ok") {
        r->status = status;
        r->note = why;
      }
    }
  };
  try {
    const CaseMemory need = estimate_case_memory(c);
    if (const auto avail = dev->available_bytes(); avail && need.total_bytes > *avail * 95 / 100)
      throw Unsupported("capped by memory: the case needs about " + format_bytes(need.total_bytes) + " (KV cache " +
                        format_bytes(need.kv_pool_bytes) + "), the device has " + format_bytes(*avail) + " free");
    Workload wl(*dev, c);
    const MemoryMark m0 = mark_memory(*dev);
    std::unique_ptr<AttentionBackend> backend;
    {
      PhaseScope ps(dev->ledger(), "construct");
      backend = info.create(wl.model_runner());
    }
    const MemoryMark m1 = mark_memory(*dev);
    const Ledger::Totals ctor = Ledger::diff_totals(m0.ledger, m1.ledger);
    for (ResultRow* r : {&eager, &graph_row}) {
      r->ctor_device_bytes = ctor[MemKind::device];
      r->ctor_pinned_bytes = ctor[MemKind::pinned];
      if (m0.driver && m1.driver) r->ctor_driver_delta_bytes = m0.driver->free_bytes - m1.driver->free_bytes;
      add_ledger(*r, "construct", m0, m1);
    }
    const Support sup = backend->supports(c.mode, false, c.sinks);
    if (!sup.ok) throw Unsupported(sup.reason);
    append_note(eager.note, sup.reason);

    // Validation step: every layer's output is hashed; the validated layers go to the reference.
    const ForwardBatch& fb = wl.forward_batch();
    const std::vector<int> vlayers = validated_layers(c.model.num_layers);
    std::vector<unsigned char> host(static_cast<std::size_t>(wl.output_bytes()));
    ErrorStats err;
    bool sampled = false;
    int requests_checked = c.batch;
    {
      PhaseScope ps(dev->ledger(), "step");
      backend->init_forward_metadata(fb);
      std::uint64_t h = 1469598103934665603ull;
      for (const Layer& layer : wl.layers()) {
        wl.poison_output();
        backend->forward(wl.io(), layer, fb);
        dev->copy(host.data(), wl.output().data(), wl.output_bytes());
        dev->synchronize();
        h = hash_bytes(host.data(), host.size(), h);
        if (layer.layer_id == 0) out.first_layer = host;
        for (std::size_t v = 0; v < vlayers.size(); ++v)
          if (vlayers[v] == layer.layer_id) {
            err.merge(compare_with_reference(c, refs[v], host.data()));
            sampled = sampled || refs[v].sampled;
            requests_checked = std::min(requests_checked, refs[v].requests_checked);
          }
      }
      out.output_hash = h;
      out.validated = true;
    }
    for (ResultRow* r : {&eager, &graph_row}) {
      r->ref_max_abs_err = err.max_abs;
      r->ref_rel_l2_err = err.rel_l2();
      r->ref_mismatch_frac = err.mismatch_frac();
      r->ref_pass = err.pass();
    }
    std::string vnote = "ref: layers";
    for (int l : vlayers) vnote += " " + std::to_string(l);
    if (sampled) vnote += ", first/last rows of each request";
    if (requests_checked < c.batch) vnote += ", " + std::to_string(requests_checked) + "/" + std::to_string(c.batch) + " requests";
    if (err.nans > 0) vnote += ", " + std::to_string(err.nans) + " NaN/unwritten elements";
    append_note(eager.note, vnote);
    append_note(graph_row.note, vnote);
    const std::vector<unsigned char> eager_last = host;  // the last layer's output

    if (s.timing) {
      auto tm = dev->make_timer(), tf = dev->make_timer();
      std::vector<double> meta, fwd;
      std::int64_t peak = 0;
      const Samples smp = timed(
          s,
          [&] {
            if (s.flush_l2) dev->flush_l2();
            const std::int64_t before = dev->ledger().live()[MemKind::device];
            dev->ledger().reset_window_peak();
            PhaseScope ps(dev->ledger(), "step");
            tm->start();
            backend->init_forward_metadata(fb);
            tm->stop();
            tf->start();
            for (const Layer& layer : wl.layers()) backend->forward(wl.io(), layer, fb);
            tf->stop();
            const double a = tm->elapsed_us(), b = tf->elapsed_us();
            peak = std::max(peak, dev->ledger().window_peak()[MemKind::device] - before);
            meta.push_back(a);
            fwd.push_back(b);
            return a + b;
          },
          meta, fwd);
      fill_timing(eager, smp, meta, fwd, c, s);
      eager.step_peak_device_bytes = peak;
      if (dev->l2_bytes() > 0)
        append_note(eager.note, "KV per layer / L2 = " + format_double(step_work(c).kv_bytes_layer / dev->l2_bytes()));
    }
    if (want_graph) run_graph(c, *backend, *dev, wl, eager_last, s, graph_row);
  } catch (const OutOfMemoryError& e) {
    fail_all("oom", e.what());
  } catch (const Unsupported& e) {
    fail_all("skipped", e.what());
  } catch (const DeviceError& e) {
    out.sticky = e.sticky();
    fail_all("failed", e.what());
  } catch (const std::exception& e) {
    fail_all("failed", e.what());
  }
  if (eager.status != "ok" && eager.status != "skipped") out.validated = false;
  if (eager.ref_pass && !*eager.ref_pass && eager.status == "ok") append_note(eager.note, "reference check FAILED");
  out.rows.push_back(std::move(eager));
  if (want_graph) out.rows.push_back(std::move(graph_row));
  return out;
}

}  // namespace

StepWork step_work(const Case& c) {
  const ModelConfig& m = c.model;
  const double es = dtype_size(m.dtype);
  StepWork w;
  for (int l = 0; l < m.num_layers; ++l) {
    const int window = m.layer_sliding_window_size(l);
    double kv_layer = 0;
    for (int i = 0; i < c.batch; ++i) {
      const std::int64_t pre = c.prefix_lens[i], n = c.new_lens[i];
      double pairs = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        const std::int64_t visible = pre + j + 1;
        pairs += static_cast<double>(window >= 0 ? std::min<std::int64_t>(visible, window + 1) : visible);
      }
      w.flops += 4.0 * pairs * m.num_qo_heads() * m.head_dim;
      const std::int64_t keys = window >= 0 ? std::min<std::int64_t>(pre + n, window + n) : pre + n;
      kv_layer += 2.0 * keys * m.num_kv_heads() * m.head_dim * es;
    }
    w.bytes += kv_layer;
    if (l == 0) w.kv_bytes_layer = kv_layer;
  }
  const double t = c.q_tokens();
  w.bytes += m.num_layers * t * (2.0 * m.num_qo_heads() + 2.0 * m.num_kv_heads()) * m.head_dim * es;  // q, o, new k, v
  return w;
}

CaseMemory estimate_case_memory(const Case& c) {
  const ModelConfig& m = c.model;
  const std::int64_t es = dtype_size(m.dtype), P = c.server.page_size;
  std::int64_t pages = 0, tokens = 0;
  for (int i = 0; i < c.batch; ++i) {
    pages += ceil_div(c.prefix_lens[i] + c.new_lens[i], P);
    tokens += c.prefix_lens[i] + c.new_lens[i];
  }
  const std::int64_t slots = (pages + pages / 4 + 5) * P;
  CaseMemory cm;
  cm.kv_pool_bytes = 2LL * m.num_layers * slots * m.num_kv_heads() * m.head_dim * es;
  const std::int64_t t = c.q_tokens();
  cm.total_bytes = cm.kv_pool_bytes + 4LL * (c.batch + 1) * c.kv_len_max()           // req_to_token
                   + 4 * t * (m.num_qo_heads() + m.num_kv_heads()) * m.head_dim * es  // q, k, v, o (and graph copies)
                   + 8LL * tokens                                                     // kv_indices / page tables
                   + 2 * GiB;  // workspaces, graph state and capture of the largest backend (legacy: ~1.3 GiB)
  return cm;
}

ResultRow skipped_row(const Case& c, const std::string& backend, const std::string& device, const std::string& timing,
                      const std::string& reason, const RunSettings& settings) {
  ResultRow r = base_row(c, backend, device, timing, settings);
  r.status = "skipped";
  r.note = reason;
  return r;
}

CaseOutcome run_case(const Case& c, const std::vector<std::string>& backends, const DeviceMaker& make_device,
                     const RunSettings& s) {
  CaseOutcome out;
  {  // A case that cannot fit is reported before any reference work or allocation.
    std::unique_ptr<Device> probe = make_device();
    const CaseMemory need = estimate_case_memory(c);
    if (const auto avail = probe->available_bytes(); avail && need.total_bytes > *avail * 95 / 100) {
      const std::string why = "capped by memory: the case needs about " + format_bytes(need.total_bytes) + " (KV cache " +
                              format_bytes(need.kv_pool_bytes) + "), the device has " + format_bytes(*avail) + " free";
      for (const auto& b : backends) out.rows.push_back(skipped_row(c, b, probe->name(), "eager", why, s));
      return out;
    }
  }
  std::vector<ReferenceLayer> refs;
  const HostBatch host = plan_host_batch(c);
  for (int l : validated_layers(c.model.num_layers)) refs.push_back(reference_layer(c, host, l, s.reference_flop_budget));

  std::vector<BackendResult> results;
  for (const auto& name : backends) {
    results.push_back(run_backend(c, find_backend(name), make_device, refs, s));
    if (results.back().sticky) {
      out.sticky_device_error = true;
      break;
    }
  }
  // Cross-backend checks: bit-identical outputs (every layer), and the first layer within tolerance otherwise.
  const Tolerance tol = tolerance_for(c.model.dtype);
  for (std::size_t a = 0; a < results.size(); ++a) {
    std::string equal, peers;
    for (std::size_t b = 0; b < results.size(); ++b) {
      if (a == b || !results[a].validated || !results[b].validated) continue;
      if (results[a].output_hash == results[b].output_hash) {
        equal += (equal.empty() ? "" : ";") + backends[b];
        continue;
      }
      ErrorStats es;
      const auto& x = results[a].first_layer;
      const auto& y = results[b].first_layer;
      for (std::size_t i = 0; i < x.size() / dtype_size(c.model.dtype); ++i)
        es.add(load_as_float(x.data(), static_cast<std::int64_t>(i), c.model.dtype),
               load_as_float(y.data(), static_cast<std::int64_t>(i), c.model.dtype), tol);
      peers += std::string(peers.empty() ? "" : ", ") + "vs " + backends[b] + " max abs " + format_double(es.max_abs) +
               (es.pass() ? "" : " (OUT OF TOLERANCE)");
    }
    for (ResultRow& r : results[a].rows) {
      if (r.status != "ok") continue;
      r.bitwise_equal_to = equal;
      append_note(r.note, peers);
    }
  }
  for (auto& r : results)
    for (auto& row : r.rows) out.rows.push_back(std::move(row));
  return out;
}

}  // namespace attnbench
