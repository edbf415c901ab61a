// The run table printed at the end of a sweep.
#include "report/run_summary.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "support/result_rows.hpp"

namespace attnbench {
namespace {

TEST(RunSummary, OneLinePerRowWithDashesForMissingValues) {
  ResultRow ok = test::tiny_row("trtllm_mha");
  test::set_step_us(ok, 11.0, 12.34, 13.5);
  ok.tb_per_s = 1.234;
  ok.tflops = 0.5;
  ok.ref_max_abs_err = 0.001;
  ok.bitwise_equal_to = "trtllm_mha_legacy";
  ResultRow skipped = ok;
  skipped.backend = "flashinfer";
  skipped.status = RowStatus::skipped;
  skipped.step_median_us.reset();
  skipped.step_p10_us.reset();
  skipped.tb_per_s.reset();
  skipped.tflops.reset();
  skipped.ref_max_abs_err.reset();
  skipped.ref_pass.reset();
  skipped.bitwise_equal_to.clear();
  std::ostringstream os;
  print_run_table(os, {ok, skipped});
  std::istringstream lines(os.str());
  std::string header, a, b, extra;
  ASSERT_TRUE(std::getline(lines, header));
  ASSERT_TRUE(std::getline(lines, a));
  ASSERT_TRUE(std::getline(lines, b));
  EXPECT_FALSE(std::getline(lines, extra));
  EXPECT_EQ(header.rfind("case", 0), 0u);
  EXPECT_NE(header.find("median us"), std::string::npos);
  EXPECT_NE(a.find("12.3"), std::string::npos) << a;
  EXPECT_NE(a.find("11.0 - 13.5"), std::string::npos) << a;
  EXPECT_NE(a.find("1.23"), std::string::npos) << a;
  EXPECT_NE(a.find("0.00100"), std::string::npos) << a;
  EXPECT_NE(a.find("pass  trtllm_mha_legacy"), std::string::npos) << a;
  EXPECT_EQ(b.find("12.3"), std::string::npos) << b;
  EXPECT_NE(b.find("skipped"), std::string::npos) << b;
  // Columns line up: the status column starts at the same offset in every line.
  EXPECT_EQ(header.find("status"), a.find("ok"));
  EXPECT_EQ(header.find("status"), b.find("skipped"));
  // A case id longer than the default column (fp8 extend ids run past 58 characters) widens the column: every line
  // still has a space between the id and the backend, and the columns still line up.
  ResultRow long_id = ok;
  long_id.case_id = "extend/gpt-oss-20b/L=24/b=16/prefix=4096/ext=512/p=64/bf16/kvcache=fp8_e4m3/sinks";
  std::ostringstream wide;
  print_run_table(wide, {ok, long_id});
  std::istringstream wl(wide.str());
  std::string h2, r1, r2;
  ASSERT_TRUE(std::getline(wl, h2) && std::getline(wl, r1) && std::getline(wl, r2));
  EXPECT_NE(r2.find(long_id.case_id + " trtllm_mha"), std::string::npos) << r2;
  EXPECT_EQ(h2.find("backend"), r1.find("trtllm_mha"));
  EXPECT_EQ(h2.find("backend"), r2.find("trtllm_mha"));
}

// The run's verdict on the change: every ok candidate row with an ok baseline row of the same case and timing
// must name it in bitwise_equal_to.
TEST(RunSummary, BitIdentityBreaksAreTheCandidateRowsThatDoNotNameTheirBaseline) {
  const BackendChange kChange{"trtllm_mha_legacy", "trtllm_mha"};
  ResultRow lean = test::tiny_row("trtllm_mha"), legacy = test::tiny_row("trtllm_mha_legacy"),
            fi = test::tiny_row("flashinfer");
  lean.bitwise_equal_to = "flashinfer;trtllm_mha_legacy";
  legacy.bitwise_equal_to = "flashinfer;trtllm_mha";
  fi.bitwise_equal_to = "trtllm_mha;trtllm_mha_legacy";
  ResultRow lean_graph = test::tiny_row("trtllm_mha", "graph"), legacy_graph = test::tiny_row("trtllm_mha_legacy", "graph");
  lean_graph.bitwise_equal_to = "trtllm_mha_legacy";
  std::vector<ResultRow> rows = {fi, lean, legacy, lean_graph, legacy_graph};
  EXPECT_TRUE(bit_identity(rows, kChange).breaks.empty());
  EXPECT_EQ(bit_identity(rows, kChange).compared, 2);  // eager and graph

  rows[1].bitwise_equal_to = "flashinfer";  // lean eager lost legacy
  auto b = bit_identity(rows, kChange).breaks;
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0], &rows[1]);
  EXPECT_TRUE(bit_identity(rows, BackendChange{}).breaks.empty());  // no change named: nothing to check

  // Without an ok baseline row of the same case and timing there is nothing to be equal to.
  rows[2].status = RowStatus::failed;
  EXPECT_TRUE(bit_identity(rows, kChange).breaks.empty());
  rows[2].status = RowStatus::ok;
  rows[2].timing = "graph_other";
  EXPECT_TRUE(bit_identity(rows, kChange).breaks.empty());
  // A candidate row that is not ok is no output to compare.
  rows[2].timing = "eager";
  rows[1].status = RowStatus::skipped;
  EXPECT_TRUE(bit_identity(rows, kChange).breaks.empty());
}

}  // namespace
}  // namespace attnbench
