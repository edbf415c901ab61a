// A sweep stopped mid-run leaves a valid CSV of complete rows, and --resume completes it without duplicates:
// gracefully (SIGINT: the case in flight stops sampling and is dropped, exit 130) and abruptly (SIGKILL).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <algorithm>
#include <set>
#include <tuple>

#include "report/results_io.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

// Twelve small cases (one per seed), about a second each on two cores.
const std::string kSweep =
    "run --device cpu --model tiny --mode decode --batch 3 --kv-len 300 --page-size 16 --seed "
    "1,2,3,4,5,6,7,8,9,10,11,12 --warmup 1 --min-samples 20 --max-samples 20 --time-budget 10 --quiet";

void expect_complete_without_duplicates(const std::string& csv) {
  const auto rows = read_results_csv(csv);
  EXPECT_EQ(rows.size(), 12u * 3u);
  std::set<std::tuple<std::string, std::string, std::string>> keys;
  for (const auto& r : rows) {
    EXPECT_TRUE(keys.insert({r.case_id, r.backend, r.timing}).second) << "duplicate " << r.case_id << " " << r.backend;
    EXPECT_EQ(r.status, RowStatus::ok) << r.note;
  }
}

std::size_t valid_rows(const std::string& csv) { return read_results_csv(csv).size(); }

// Lines in `path` (0 when it does not exist yet).
std::size_t lines_in(const std::string& path) {
  const std::string text = std::filesystem::exists(path) ? test::read_file(path) : std::string();
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// Starts `command` (a shell command line) and, once `csv` holds the header and at least one complete case (three
// rows), sends `sig` to the process; returns its wait status. The signal follows progress, not the clock, so a
// loaded machine cannot make the sweep finish early or not start at all. Fails the test after two minutes.
int signal_after_first_case(const std::string& command, const std::string& csv, int sig) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  int status = 0;
  while (lines_in(csv) < 1 + 3) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      ADD_FAILURE() << "the sweep ended before its first case was written";
      return status;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "no complete case within two minutes";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, sig);
  ::waitpid(pid, &status, 0);
  return status;
}

TEST(Interrupt, SigintKeepsCompleteRowsAndResumeFinishesTheSweep) {
  test::TempDir d;
  const std::string csv = d.file("r.csv");
  const auto first = test::run_attnbench("--version", d);  // warm the binary's pages
  ASSERT_EQ(first.exit_code, 0);
  const int status = signal_after_first_case(
      ATTNBENCH_BINARY " " + kSweep + " --out " + csv + " >/dev/null 2>" + d.file("err.txt"), csv, SIGINT);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130) << test::read_file(d.file("err.txt"));
  EXPECT_NE(test::read_file(d.file("err.txt")).find("--resume"), std::string::npos);
  const std::size_t n = valid_rows(csv);  // parses: every line is a complete row
  EXPECT_GT(n, 0u);
  EXPECT_LT(n, 36u);
  EXPECT_EQ(n % 3, 0u) << "a graceful stop writes whole cases only";
  const auto again = test::run_attnbench(kSweep + " --out " + csv + " --resume", d);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  expect_complete_without_duplicates(csv);
  EXPECT_TRUE(std::filesystem::exists(d.file("r.json")));
  // The rows kept from the first run keep their raw samples and ledger (the CSV has neither: they come from the
  // report the interrupted run wrote), so the JSON stays a full report.
  const ResultSet report = load_result_set(d.file("r.json"));
  ASSERT_EQ(report.rows.size(), 36u);
  for (const ResultRow& r : report.rows) {
    if (r.status != RowStatus::ok || r.samples == 0) continue;
    EXPECT_EQ(static_cast<std::int64_t>(r.samples_us.size()), r.samples) << r.case_id << " " << r.backend;
    EXPECT_FALSE(r.ledger.empty()) << r.case_id << " " << r.backend;
  }
  EXPECT_EQ(again.err.find("no raw samples"), std::string::npos) << again.err;
}

TEST(Interrupt, SigkillLeavesAValidCsvAndResumeDropsAPartialCase) {
  test::TempDir d;
  const std::string csv = d.file("k.csv");
  const int status = signal_after_first_case(ATTNBENCH_BINARY " " + kSweep + " --out " + csv + " >/dev/null 2>&1", csv, SIGKILL);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  ASSERT_TRUE(std::filesystem::exists(csv));
  const std::size_t n = valid_rows(csv);
  EXPECT_LT(n, 36u);
  // Simulate a kill between two rows of one case: cut the file after its first data row of the next case.
  const auto rows = read_results_csv(csv);
  {
    ResultsCsvWriter w(csv);
    for (const auto& r : rows) w.write(r);
    ResultRow partial = rows.empty() ? ResultRow{} : rows.front();
    partial.case_id = "decode/tiny/b=3/kv=300/p=16/bf16/seed=12";  // the last case's first row
    partial.seed = 12;
    partial.backend = "flashinfer";
    w.write(partial);
  }
  const auto again = test::run_attnbench(kSweep + " --out " + csv + " --resume", d);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("partial case"), std::string::npos) << again.err;
  expect_complete_without_duplicates(csv);
  // The killed run never wrote its report's rows: the kept rows have no raw samples to restore, and it is said.
  if (n >= 3) EXPECT_NE(again.err.find("have no raw samples in"), std::string::npos) << again.err;
}

}  // namespace
}  // namespace attnbench
