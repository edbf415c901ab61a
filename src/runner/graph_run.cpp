#include "runner/graph_run.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>

#include "core/errors.hpp"
#include "runner/case_work.hpp"
#include "engine/random_fill.hpp"
#include "runner/case_rows.hpp"
#include "runner/phases.hpp"
#include "runner/timed_step.hpp"
#include "runner/validation.hpp"

namespace attnbench {

void run_graph(const Case& c, AttentionBackend& backend, Device& dev, Workload& wl, const std::vector<unsigned char>& eager_last,
               const RunSettings& s, ResultRow& row) {
  const Support sup = backend.supports(c.step_kind(true));
  if (!sup.ok) {
    row.status = RowStatus::skipped;
    row.note = sup.reason;
    return;
  }
  const std::vector<int> caps = c.server.capture_batch_sizes();
  auto it = std::find_if(caps.begin(), caps.end(), [&](int b) { return b >= c.batch; });
  if (it == caps.end()) {
    row.status = RowStatus::skipped;
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

  CapturePlan plan;
  for (int bs : caps)
    if (bs <= max_bs && (s.capture_all || bs == bs_graph)) plan.batch_sizes.push_back(bs);
  plan.max_bs = max_bs;
  plan.max_tokens = static_cast<int>(max_tokens);
  plan.mode = c.mode;
  plan.draft_tokens = c.draft_tokens;
  plan.width = width;
  plan.inputs = gin.get();
  plan.step = [&](const ForwardBatch& fb) {
    for (const Layer& layer : wl.layers()) backend.forward(io, layer, fb);
  };
  const PhaseDelta graph_state = init_graph_state(dev, backend, plan);
  const CapturedGraphs captured = capture_graphs(dev, backend, plan);
  const std::map<int, std::unique_ptr<Graph>>& graphs = captured.graphs;
  row.graph_state_device_bytes = graph_state.totals()[MemKind::device];
  row.capture_device_bytes = captured.capture.totals()[MemKind::device];
  row.capture_pinned_bytes = captured.capture.totals()[MemKind::pinned];
  add_ledger(row, graph_state);
  add_ledger(row, captured.capture);
  append_note(row.note, std::to_string(graphs.size()) + " graphs captured, replayed at bs " + std::to_string(bs_graph));

  const int fill = backend.get_cuda_graph_seq_len_fill_value();
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
      row.status = RowStatus::failed;
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
    if (!es.pass()) row.status = RowStatus::failed;
    append_note(row.note, "padded to bs " + std::to_string(bs_graph) + ": replay vs eager max abs " + format_double(es.max_abs));
  }
  if (!s.timing) return;
  // Like for like across backends: SGLang records TRTLLM's metadata kernels (init_forward_metadata_in_graph)
  // into the graph with the layers while FlashInfer plans before the replay, so one timed replay would put
  // TRTLLM's metadata into forward_median_us. The timed step replays the same work as two graphs of this batch
  // size, captured as capture_graphs captures (a padded batch, the capture-time metadata first): the metadata
  // graph under the metadata timer with the host part, the layers' graph alone under the forward timer.
  std::unique_ptr<Graph> metadata_graph, forward_graph;
  try {
    PhaseScope ps(dev.ledger(), "timing_capture");
    const ForwardBatch cap =
        gin->load(pad_batch(BatchSpec{c.mode, c.draft_tokens, {}, {}, {}, {}, {}}, bs_graph, fill, width));
    backend.init_forward_metadata_out_graph(cap, /*in_capture=*/true);
    metadata_graph = dev.capture([&] { backend.init_forward_metadata_in_graph(cap); });
    forward_graph = dev.capture([&] { plan.step(cap); });
  } catch (const DeviceError& e) {  // e.g. a driver that will not instantiate an empty metadata graph
    // The capture-time metadata above replaced this batch size's state: a fresh single graph, as SGLang's.
    std::unique_ptr<Graph> single;
    {
      PhaseScope ps(dev.ledger(), "timing_capture");
      const ForwardBatch cap =
          gin->load(pad_batch(BatchSpec{c.mode, c.draft_tokens, {}, {}, {}, {}, {}}, bs_graph, fill, width));
      backend.init_forward_metadata_out_graph(cap, /*in_capture=*/true);
      single = dev.capture([&] {
        backend.init_forward_metadata_in_graph(cap);
        plan.step(cap);
      });
    }
    const ForwardBatch tfb = gin->load(pad_batch(wl.host().spec, bs_graph, fill, width));
    const TimedSteps t = time_steps(
        dev, s, [&] { backend.init_forward_metadata_out_graph(tfb, false); }, [&] { single->replay(); });
    fill_timing(row, t, case_as_run(c, backend.layer_windows(c.mode)), s);
    append_note(row.note, std::string("timed as one graph (metadata inside forward): ") + e.what());
    return;
  }
  const ForwardBatch tfb = gin->load(pad_batch(wl.host().spec, bs_graph, fill, width));
  // The split replay must give the single graph's output, bit for bit.
  poison(dev, og.data(), og.bytes());
  backend.init_forward_metadata_out_graph(tfb, false);
  metadata_graph->replay();
  forward_graph->replay();
  dev.synchronize();
  std::vector<unsigned char> split(got.size());
  dev.copy(split.data(), og.data(), static_cast<std::int64_t>(split.size()));
  dev.synchronize();
  if (std::memcmp(split.data(), got.data(), got.size()) != 0) {
    row.status = RowStatus::failed;
    append_note(row.note, "metadata and forward replayed as two graphs differ from the single graph's output");
  }
  const TimedSteps t = time_steps(
      dev, s,
      [&] {
        backend.init_forward_metadata_out_graph(tfb, false);
        metadata_graph->replay();
      },
      [&] { forward_graph->replay(); });
  fill_timing(row, t, case_as_run(c, backend.layer_windows(c.mode)), s);
  append_note(row.note, "timed as two graphs: metadata (in metadata_median_us), then the layers");
}

}  // namespace attnbench
