// The run table printed at the end of a sweep.
#include "report/run_summary.hpp"

#include <gtest/gtest.h>

#include <sstream>

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
}

}  // namespace
}  // namespace attnbench
