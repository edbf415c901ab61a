// The measurement protocol shared by `memory` and `run`: phases bracketed by marks, in order, each counting
// what it allocated and kept, and the phases measured before a failure kept.
#include "runner/phases.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "device/cpu_device.hpp"
#include "engine/memory_pool.hpp"
#include "runner/memory_probe.hpp"

namespace attnbench {
namespace {

std::int64_t tag_sum(const PhaseDelta& d, MemKind kind) {
  std::int64_t n = 0;
  for (const TagBytes& g : d.by_tag())
    if (g.kind == kind) n += g.bytes;
  return n;
}

struct Engine {
  CpuDevice dev;
  ServerArgs server;
  ModelRunner runner;
  ReqToTokenPool pool;
  BatchInputs inputs;
  CapturePlan plan;
  explicit Engine(std::vector<int> capture, int inputs_bs)
      : server(make_server(capture)),
        runner(dev, find_model_preset("tiny"), server),
        pool(dev, 1, 16),
        inputs(dev, inputs_bs, inputs_bs) {
    runner.req_to_token_pool = &pool;
    plan.batch_sizes = capture;
    plan.max_bs = capture.back();
    plan.max_tokens = capture.back();
    plan.inputs = &inputs;
  }
  static ServerArgs make_server(const std::vector<int>& capture) {
    ServerArgs s;
    s.cuda_graph_bs = capture;
    return s;
  }
};

TEST(Phases, ConstructGraphStateAndCaptureInOrderEachCountingItsOwnBytes) {
  Engine e({1, 2, 4}, 4);
  std::vector<PhaseDelta> phases;
  auto backend = measure_phases(e.dev, e.runner, find_backend("flashinfer"), &e.plan, phases);
  ASSERT_NE(backend, nullptr);
  ASSERT_EQ(phases.size(), 3u);
  EXPECT_EQ(phases[0].phase, "construct");
  EXPECT_EQ(phases[1].phase, "graph_state");
  EXPECT_EQ(phases[2].phase, "capture");
  for (const PhaseDelta& d : phases) {
    EXPECT_EQ(d.totals()[MemKind::device], tag_sum(d, MemKind::device)) << d.phase;
    EXPECT_EQ(d.totals()[MemKind::pinned], tag_sum(d, MemKind::pinned)) << d.phase;
    EXPECT_FALSE(d.driver_delta_bytes().has_value()) << "no driver on the CPU";
    for (const TagBytes& g : d.by_tag()) EXPECT_EQ(g.phase, d.phase) << g.tag;
  }
  EXPECT_GT(phases[0].totals()[MemKind::device], 0);
  EXPECT_GT(phases[1].totals()[MemKind::device], 0) << "FlashInfer's graph state (kv indices, wrappers)";
  // One protocol: the marks are contiguous, so the phases add up to what the backend holds in all.
  EXPECT_EQ(phases[2].after.ledger.live[MemKind::device] - phases[0].before.ledger.live[MemKind::device],
            phases[0].totals()[MemKind::device] + phases[1].totals()[MemKind::device] + phases[2].totals()[MemKind::device]);
}

TEST(Phases, WithoutACapturePlanOnlyConstruction) {
  Engine e({1}, 1);
  std::vector<PhaseDelta> phases;
  measure_phases(e.dev, e.runner, find_backend("trtllm_mha"), nullptr, phases);
  ASSERT_EQ(phases.size(), 1u);
  EXPECT_EQ(phases[0].phase, "construct");
}

TEST(Phases, AFailedCaptureKeepsThePhasesMeasuredBeforeIt) {
  Engine e({1, 8}, 4);  // static inputs for 4 requests: batch size 8 does not fit
  std::vector<PhaseDelta> phases;
  EXPECT_ANY_THROW(measure_phases(e.dev, e.runner, find_backend("trtllm_mha"), &e.plan, phases));
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[1].phase, "graph_state");
}

TEST(Phases, RecordingAStepNeedsGraphsWhichTheCpuDoesNotHave) {
  Engine e({1}, 1);
  ConstructedBackend built = construct_backend(e.dev, e.runner, find_backend("trtllm_mha"));
  e.plan.step = [](const ForwardBatch&) {};
  init_graph_state(e.dev, *built.backend, e.plan);
  EXPECT_THROW(capture_graphs(e.dev, *built.backend, e.plan), Unsupported);
}

// `memory` reports exactly the phases measure_phases measured.
TEST(Phases, MemoryReportsTheMeasuredPhases) {
  MemoryRequest req;
  req.model = find_model_preset("tiny");
  req.server.cuda_graph_bs = {1, 2, 4};
  req.backends = {"flashinfer"};
  const MemoryReport report = measure_memory(req, [] { return std::make_unique<CpuDevice>(); });
  ASSERT_EQ(report.backends.size(), 1u);
  const auto& got = report.backends[0].phases;
  ASSERT_EQ(got.size(), 3u);

  Engine e({1, 2, 4}, 4);
  std::vector<PhaseDelta> phases;
  measure_phases(e.dev, e.runner, find_backend("flashinfer"), &e.plan, phases);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(got[i].phase, phases[i].phase);
    EXPECT_EQ(got[i].device_bytes, phases[i].totals()[MemKind::device]) << got[i].phase;
    EXPECT_EQ(got[i].pinned_bytes, phases[i].totals()[MemKind::pinned]) << got[i].phase;
  }
}

}  // namespace
}  // namespace attnbench
