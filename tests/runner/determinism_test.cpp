// Determinism, end to end through the binary: the same seed gives bit-identical outputs and the same CSV
// apart from timing and environment columns (also with another OpenMP thread count); another seed gives other
// data (so the comparison can fail at all). Runs `attnbench validate --config configs/smoke.toml --device
// cpu` (CI's end-to-end workload, seconds).
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "report/results_io.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

using test::run_attnbench;
using test::TempDir;

// Columns that measure time or describe the machine: they may differ between two runs of the same seed.
const std::set<std::string> kTimingAndEnvironment = {"step_median_us",
                                                     "step_p10_us",
                                                     "step_p90_us",
                                                     "step_min_us",
                                                     "step_max_us",
                                                     "step_spread_pct",
                                                     "samples",
                                                     "metadata_median_us",
                                                     "forward_median_us",
                                                     "tflops",
                                                     "tb_per_s",
                                                     "bw_fraction",
                                                     "device",
                                                     "repro"};

// A note without its "stop: ..." parts (why sampling stopped depends on timing), e.g.
// "ref: layers 0 1; stop: converged" -> "ref: layers 0 1".
std::string note_without_stop(const std::string& note) {
  std::string out;
  std::size_t start = 0;
  while (start <= note.size()) {
    std::size_t end = note.find("; ", start);
    if (end == std::string::npos) end = note.size();
    const std::string part = note.substr(start, end - start);
    if (part.rfind("stop:", 0) != 0 && !part.empty()) out += (out.empty() ? "" : "; ") + part;
    start = end + 2;
  }
  return out;
}

// One cell as text, doubles by their bits (so -0.0 != 0.0 and NaN == NaN when the bits agree).
std::string cell_text(const ResultCell& c) {
  struct V {
    std::string operator()(std::monostate) const { return "<empty>"; }
    std::string operator()(const std::string& s) const { return "'" + s + "'"; }
    std::string operator()(std::int64_t v) const { return std::to_string(v); }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(double d) const {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g (bits %016llx)", d,
                    static_cast<unsigned long long>(std::bit_cast<std::uint64_t>(d)));
      return buf;
    }
  };
  return std::visit(V{}, c);
}

struct SweepRun {
  int exit_code;
  std::string err;
  std::vector<ResultRow> rows;
};

SweepRun validate_smoke(const TempDir& d, const std::string& name, const std::string& extra = "") {
  const std::string out = d.file(name + ".csv");
  const auto r = run_attnbench(std::string("validate --config ") + ATTNBENCH_SOURCE_DIR +
                                   "/configs/smoke.toml --device cpu --out " + out + " --json " +
                                   d.file(name + ".json") + extra,
                               d);
  SweepRun run{r.exit_code, r.err, {}};
  run.rows = read_results_csv(out);
  return run;
}

// Every column of every row equal, bit for bit, apart from timing and environment (notes without "stop:
// ...").
void expect_same_csv(const SweepRun& a, const SweepRun& b, const std::string& what) {
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  ASSERT_FALSE(a.rows.empty());
  ASSERT_EQ(a.rows.size(), b.rows.size());

  const std::vector<std::string>& names = results_csv_columns();
  std::size_t compared = 0, ok_rows = 0;
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    const std::vector<ResultCell> ca = result_row_cells(a.rows[i]), cb = result_row_cells(b.rows[i]);
    ASSERT_EQ(ca.size(), names.size());
    for (std::size_t c = 0; c < names.size(); ++c) {
      if (kTimingAndEnvironment.count(names[c])) continue;
      if (names[c] == "note") {
        EXPECT_EQ(note_without_stop(a.rows[i].note), note_without_stop(b.rows[i].note))
            << what << ": row " << i << " (" << a.rows[i].case_id << ", " << a.rows[i].backend << ")";
      } else {
        EXPECT_EQ(cell_text(ca[c]), cell_text(cb[c]))
            << what << ": column " << names[c] << ", row " << i << " (" << a.rows[i].case_id << ", "
            << a.rows[i].backend << ")";
      }
      ++compared;
    }
    if (a.rows[i].status == RowStatus::ok) {
      ++ok_rows;
      // Validated rows carry their reference errors: bit-identical outputs give bit-identical errors.
      EXPECT_TRUE(a.rows[i].ref_max_abs_err.has_value()) << a.rows[i].case_id << " " << a.rows[i].backend;
    }
  }
  EXPECT_GT(ok_rows, 0u);
  std::printf("determinism (%s): %zu rows, %zu cells compared (%zu ok rows)\n", what.c_str(), a.rows.size(),
              compared, ok_rows);
}

TEST(Determinism, SameSeedSameCsvApartFromTimingAndEnvironment) {
  TempDir d;
  const SweepRun a = validate_smoke(d, "a");
  const SweepRun b = validate_smoke(d, "b");
  expect_same_csv(a, b, "two runs");
}

// The CPU kernels split work over OpenMP threads: the split must not change a single bit of any output.
TEST(Determinism, SameSeedSameCsvWithOneThread) {
  TempDir d;
  const SweepRun a = validate_smoke(d, "threads-default");
  const char* saved = std::getenv("OMP_NUM_THREADS");
  const std::string restore = saved ? saved : "";
  ::setenv("OMP_NUM_THREADS", "1", 1);  // inherited by the binary run_attnbench starts
  const SweepRun b = validate_smoke(d, "threads-1");
  if (saved) {
    ::setenv("OMP_NUM_THREADS", restore.c_str(), 1);
  } else {
    ::unsetenv("OMP_NUM_THREADS");
  }
  expect_same_csv(a, b, "default threads vs OMP_NUM_THREADS=1");
}

TEST(Determinism, AnotherSeedChangesTheData) {
  TempDir d;
  const SweepRun a = validate_smoke(d, "seed1", " --seed 1");
  const SweepRun b = validate_smoke(d, "seed2", " --seed 2");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  ASSERT_EQ(a.rows.size(), b.rows.size());
  std::size_t changed = 0, ok_pairs = 0;
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    EXPECT_EQ(a.rows[i].seed, 1u);
    EXPECT_EQ(b.rows[i].seed, 2u);
    EXPECT_EQ(a.rows[i].backend, b.rows[i].backend) << "row " << i;
    EXPECT_EQ(a.rows[i].status, b.rows[i].status) << "row " << i << " " << a.rows[i].case_id;
    if (a.rows[i].status != RowStatus::ok || b.rows[i].status != RowStatus::ok) continue;
    ++ok_pairs;
    const auto bits = [](const std::optional<double>& v) {
      return v ? std::bit_cast<std::uint64_t>(*v) : std::uint64_t{0xffffffffffffffffull};
    };
    if (bits(a.rows[i].ref_max_abs_err) != bits(b.rows[i].ref_max_abs_err) ||
        bits(a.rows[i].ref_rel_l2_err) != bits(b.rows[i].ref_rel_l2_err) ||
        a.rows[i].bitwise_equal_to != b.rows[i].bitwise_equal_to)
      ++changed;
  }
  ASSERT_GT(ok_pairs, 0u);
  EXPECT_GT(changed, 0u) << "seed 1 and seed 2 gave the same reference errors in all " << ok_pairs
                         << " ok rows: the seed does not reach the data";
  std::printf("determinism: seed 2 changed %zu of %zu ok rows\n", changed, ok_pairs);
}

}  // namespace
}  // namespace attnbench
