// Graph rows on the GPU: every backend's graph row replays the in-graph metadata and the layers as two graphs,
// so forward_median_us holds the layers alone (TRTLLM's metadata kernels go to metadata_median_us, as
// FlashInfer's planning does), and the split replay still equals the single graph's output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/registry.hpp"
#include "device/device_factory.hpp"
#include "runner/case_runner.hpp"
#include "runner/plan.hpp"

#include <string>
#include <utility>
#include <vector>

namespace attnbench {
namespace {

TEST(GraphRows, MetadataIsTimedApartFromTheLayersForEveryBackend) {
  if (!gpu_availability().usable) GTEST_SKIP() << gpu_availability().detail;
  // Batch 4 is a capture size (the replay is checked bit for bit against eager); batch 3 is padded to 4 (checked
  // within the tolerance). Both are timed as the two graphs.
  for (const auto& [mode, batch] : std::vector<std::pair<std::string, int>>{{"decode", 4}, {"verify", 4}, {"decode", 3}}) {
    RunPlan p;
    p.models = {"tiny"};
    p.modes = {mode};
    p.batches = {batch};
    p.kv_lens = {70};
    p.page_sizes = {16};
    p.backends = backend_names();
    p.draft_tokens = 3;
    const Case c = expand_cases(p).at(0);
    RunSettings s;
    s.timing = true;
    s.capture_all = false;
    s.sampling.warmup = 1;
    s.sampling.min_samples = 3;
    s.sampling.max_samples = 3;
    s.sampling.time_budget_s = 0.05;
    const CaseOutcome out = run_case(c, backend_names(), [] { return make_device(DeviceChoice::cuda); }, s);
    int graph_rows = 0;
    for (const ResultRow& r : out.rows) {
      EXPECT_EQ(r.status, RowStatus::ok) << mode << " b=" << batch << " " << r.backend << " " << r.timing << ": " << r.note;
      if (r.timing != "graph") continue;
      ++graph_rows;
      EXPECT_THAT(r.note, ::testing::HasSubstr("timed as two graphs")) << r.backend;
      EXPECT_THAT(r.note, ::testing::HasSubstr(batch == 4 ? "replay bit-identical to eager" : "padded to bs 4: replay vs eager"))
          << r.backend << ": " << r.note;
      ASSERT_TRUE(r.metadata_median_us && r.forward_median_us) << r.backend;
      EXPECT_GT(*r.metadata_median_us, 0.0) << r.backend;
      EXPECT_GT(*r.forward_median_us, 0.0) << r.backend;
    }
    EXPECT_EQ(graph_rows, static_cast<int>(backend_names().size())) << mode << " b=" << batch;
  }
}

}  // namespace
}  // namespace attnbench
