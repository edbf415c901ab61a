// OMP_NUM_THREADS before OpenMP starts a thread: 100000 crashed attnbench (SIGSEGV in libgomp), 50000 ended it
// with "libgomp: Thread creation failed"; a value libgomp cannot read it ignores with a warning of its own (and
// runs on every core). Both are one error line naming OMP_NUM_THREADS, exit 2, before any file is opened.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "app/cli.hpp"
#include "core/errors.hpp"
#include "core/omp_env.hpp"
#include "support/errors.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

using test::error_of;

TEST(OmpEnvLimits, TheBoundIsAtLeast1024AndFourTimesTheHardwareThreads) {
  EXPECT_EQ(omp_num_threads_limit(0), 1024);  // hardware threads unknown
  EXPECT_EQ(omp_num_threads_limit(2), 1024);
  EXPECT_EQ(omp_num_threads_limit(256), 1024);
  EXPECT_EQ(omp_num_threads_limit(257), 1028);
  EXPECT_EQ(omp_num_threads_limit(1024), 4096);
  EXPECT_EQ(omp_num_threads_limit(), omp_num_threads_limit(std::thread::hardware_concurrency()));
}

TEST(OmpEnvLimits, ValuesLibgompReadsWithinTheBoundPass) {
  const std::string limit = std::to_string(omp_num_threads_limit());
  for (const std::string& v : {std::string("1"), std::string("4"), std::string("4,2"), std::string("2,2,2"), limit,
                              limit + ",1"})
    EXPECT_NO_THROW(check_omp_num_threads(v.c_str())) << v;
  EXPECT_NO_THROW(check_omp_num_threads(nullptr));  // unset: OpenMP's default
}

TEST(OmpEnvLimits, MoreThreadsThanTheBoundAreRefused) {
  const std::int64_t limit = omp_num_threads_limit();
  const std::string over = std::to_string(limit + 1);
  const std::string hw = std::to_string(std::thread::hardware_concurrency());
  EXPECT_EQ(error_of([&] { check_omp_num_threads(over.c_str()); }),
            "OMP_NUM_THREADS '" + over + "': more than " + std::to_string(limit) +
                " threads (attnbench's bound: max(1024, 4 x the " + hw +
                " hardware threads); libgomp crashes creating tens of thousands)");
  for (const std::string& v : {std::string("100000"), std::string("50000"), std::string("99999999999999999999999"),
                              std::string("18446744073709551617")}) {
    const std::string e = error_of([&] { check_omp_num_threads(v.c_str()); });
    EXPECT_EQ(e.rfind("OMP_NUM_THREADS '" + v + "': more than " + std::to_string(limit) + " threads (", 0), 0u) << e;
  }
  // Nested levels multiply: 2 x (limit / 2 + 1) threads when nested regions run.
  const std::string nested = "2," + std::to_string(limit / 2 + 1);
  EXPECT_TRUE(test::has(error_of([&] { check_omp_num_threads(nested.c_str()); }),
                        "more than " + std::to_string(limit) + " threads (its levels multiply)"));
  const std::string many = "1024,1024,1024,1024,1024,1024,1024,1024";  // no overflow of the product
  EXPECT_TRUE(test::has(error_of([&] { check_omp_num_threads(many.c_str()); }), "(its levels multiply)"));
}

TEST(OmpEnvLimits, MalformedValuesAreRefused) {
  const auto e = [](const char* v) { return error_of([&] { check_omp_num_threads(v); }); };
  // libgomp warns about these and runs on every core instead.
  EXPECT_EQ(e(""), "OMP_NUM_THREADS '': '' is not a decimal integer (a number of threads >= 1, or one per nesting "
                   "level separated by single commas)");
  EXPECT_EQ(e("0"), "OMP_NUM_THREADS '0': '0' is not a number of threads >= 1");
  EXPECT_EQ(e("-1"), "OMP_NUM_THREADS '-1': '-1' is not a number of threads >= 1");
  EXPECT_TRUE(test::has(e("0x10"), "OMP_NUM_THREADS '0x10': '0x10' is not a decimal integer")) << e("0x10");
  EXPECT_TRUE(test::has(e("4abc"), "'4abc' is not a decimal integer")) << e("4abc");
  EXPECT_TRUE(test::has(e("4,"), "OMP_NUM_THREADS '4,': '' is not a decimal integer")) << e("4,");
  EXPECT_TRUE(test::has(e("4,,2"), "'' is not a decimal integer")) << e("4,,2");
  // Blanks, a sign, a leading zero: as attnbench's integer options (libgomp would read 4, 4, 10).
  EXPECT_TRUE(test::has(e(" 4"), "' 4' is not a decimal integer")) << e(" 4");
  EXPECT_TRUE(test::has(e("+4"), "'+4' is not a decimal integer")) << e("+4");
  EXPECT_TRUE(test::has(e("010"), "'010' has a leading zero")) << e("010");
}

TEST(OmpEnvLimits, ParseCliChecksTheEnvironmentFirst) {
  const char* before = std::getenv("OMP_NUM_THREADS");
  const std::string saved = before ? before : "";
  ::setenv("OMP_NUM_THREADS", "100000", 1);
  const std::string e = error_of([] { parse_cli({"list"}); });
  if (before) ::setenv("OMP_NUM_THREADS", saved.c_str(), 1); else ::unsetenv("OMP_NUM_THREADS");
  EXPECT_EQ(e.rfind("OMP_NUM_THREADS '100000': more than ", 0), 0u) << e;
  EXPECT_NO_THROW(parse_cli({"list"}));
}

// Through the binary, as the review ran it: exit 2, one line naming OMP_NUM_THREADS, and no --out file (the
// check runs before any file is opened). Before, 100000 died of SIGSEGV and 50000 exited 1.
TEST(OmpEnvLimits, TheBinaryRefusesBeforeOpeningAnyFile) {
  test::TempDir d;
  for (const char* v : {"100000", "50000", "0x10", ""}) {
    const std::string out = d.file("f.csv"), err = d.file("err.txt");
    const std::string cmd = "env OMP_NUM_THREADS='" + std::string(v) + "' '" + ATTNBENCH_BINARY +
                            "' run --model tiny --device cpu --batch 1 --kv-len 16 --min-samples 1 --max-samples 1 "
                            "--warmup 0 -q --out '" + out + "' 2>'" + err + "'";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << v;
    EXPECT_EQ(WEXITSTATUS(status), 2) << v;
    // Ours is the last line; before it, for a value libgomp cannot read, only libgomp's own warning (printed
    // as the library loads, before main) and the blank line it starts with.
    const std::vector<std::string> lines = test::lines(test::read_file(err));
    ASSERT_FALSE(lines.empty()) << v;
    EXPECT_EQ(lines.back().rfind("attnbench: error: OMP_NUM_THREADS '" + std::string(v) + "': ", 0), 0u) << lines.back();
    for (std::size_t i = 0; i + 1 < lines.size(); ++i)
      EXPECT_TRUE(lines[i].empty() || lines[i] == "libgomp: Invalid value for environment variable OMP_NUM_THREADS")
          << v << ": " << lines[i];
    if (std::string(v) == "100000" || std::string(v) == "50000") {
      EXPECT_EQ(lines.size(), 1u) << v;
    }
    EXPECT_FALSE(std::filesystem::exists(out)) << v;
    EXPECT_FALSE(std::filesystem::exists(d.file("f.json"))) << v;
  }
  // A value within the bound runs.
  const std::string cmd = "env OMP_NUM_THREADS=2 '" + std::string(ATTNBENCH_BINARY) +
                          "' run --model tiny --device cpu --batch 1 --kv-len 16 --min-samples 1 --max-samples 1 "
                          "--warmup 0 -q --out '" + d.file("ok.csv") + "' 2>'" + d.file("ok.err") + "'";
  const int status = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << test::read_file(d.file("ok.err"));
  EXPECT_TRUE(std::filesystem::exists(d.file("ok.csv")));
}

}  // namespace
}  // namespace attnbench
