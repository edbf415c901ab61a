// Fuzzing, without the fuzzer: the checked-in seed corpora of fuzz/ replayed through the same entry points
// and the same expectations as the libFuzzer targets (fuzz/config_fuzz.cpp, trace_fuzz.cpp,
// results_fuzz.cpp, model_fuzz.cpp), so the normal test suite (gcc, no libFuzzer) keeps them meaningful, plus every input a
// fuzzer or a sanitizer run found, inline. Expected outcome of any input: a result, or attnbench::InputError;
// never another exception, a crash or a sanitizer report (scripts/sanitize.sh runs this file under ASan +
// UBSan).
//
// Seeds named valid* / reordered* / smoke / default / sections / scalars must be accepted, near_* must be
// rejected with an InputError; new findings go at the bottom, the input inline, with the bug they show.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "app/cli.hpp"
#include "core/errors.hpp"
#include "engine/hf_config.hpp"
#include "engine/request_lengths.hpp"
#include "report/results_io.hpp"
#include "runner/case.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

enum class Outcome { accepted, input_error };

std::vector<fs::path> corpus(const std::string& target) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(ATTNBENCH_SOURCE_DIR) / "fuzz" / "corpus" / target))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

bool expected_to_be_rejected(const fs::path& p) { return p.filename().string().rfind("near_", 0) == 0; }

// ---- the three targets' bodies (kept in step with fuzz/*.cpp)
// -------------------------------------------------

template <class T>
std::size_t count_or_one(const std::vector<T>& v) {
  return v.empty() ? 1 : v.size();
}

// config_fuzz: `run --config FILE`, then the plan is expanded into cases (bounded as in the fuzz target).
Outcome config_target(const std::string& path) {
  try {
    const ParsedCli cli = parse_cli({"run", "--config", path});
    if (cli.exit_now || cli.command != Command::run) return Outcome::accepted;
    RunPlan r = cli.run.plan;
    r.trace.clear();
    const std::size_t product = count_or_one(r.models) * count_or_one(r.dtypes) * count_or_one(r.modes) *
                                count_or_one(r.page_sizes) * count_or_one(r.batches) *
                                count_or_one(r.kv_lens) * count_or_one(r.prefix_lens) *
                                count_or_one(r.extend_lens) * count_or_one(r.seeds);
    if (product > 256) return Outcome::accepted;
    for (int b : r.batches)
      if (b > 4096) return Outcome::accepted;
    (void)expand_cases(r);
    return Outcome::accepted;
  } catch (const InputError&) {
    return Outcome::input_error;
  }
}

// trace_fuzz: read_trace, and what it accepts keeps its contract.
Outcome trace_target(const std::string& path) {
  try {
    const std::vector<TraceRequest> rows = read_trace(path);
    EXPECT_FALSE(rows.empty()) << path;
    EXPECT_LE(rows.size(), static_cast<std::size_t>(kMaxTraceRows)) << path;
    for (const auto& r : rows) {
      EXPECT_GE(r.prefix_len, 0) << path;
      EXPECT_GE(r.extend_len, 1) << path;
      EXPECT_LE(static_cast<std::int64_t>(r.prefix_len) + r.extend_len, kMaxTraceTokens) << path;
    }
    return Outcome::accepted;
  } catch (const InputError&) {
    return Outcome::input_error;
  }
}

// results_fuzz: read_results_csv, and what it accepts survives a write -> read round trip line for line.
Outcome results_target(const std::string& path) {
  std::vector<ResultRow> rows;
  try {
    rows = read_results_csv(path);
  } catch (const InputError&) {
    return Outcome::input_error;
  }
  TempDir d;
  std::string text = results_csv_header() + "\n";
  std::vector<std::string> lines;
  for (const auto& r : rows) {
    lines.push_back(results_csv_line(r));
    text += lines.back() + "\n";
  }
  test::write_file(d.file("again.csv"), text);
  const std::vector<ResultRow> again = read_results_csv(d.file("again.csv"));
  EXPECT_EQ(again.size(), lines.size()) << path;
  for (std::size_t i = 0; i < std::min(again.size(), lines.size()); ++i)
    EXPECT_EQ(results_csv_line(again[i]), lines[i]) << path << " row " << i;
  return Outcome::accepted;
}

// model_fuzz: parse_hf_config, and what it accepts keeps what the rest of attnbench relies on.
Outcome model_target(const std::string& path) {
  try {
    const ModelConfig m = read_hf_config(path);
    EXPECT_FALSE(m.name.empty()) << path;
    EXPECT_GE(m.num_layers, 1) << path;
    EXPECT_GE(m.num_key_value_heads, 1) << path;
    EXPECT_EQ(m.num_attention_heads % std::max(1, m.num_key_value_heads), 0) << path;
    EXPECT_GE(m.head_dim, 1) << path;
    EXPECT_TRUE(m.sliding_window == -1 || m.sliding_window > 0) << path;
    EXPECT_LE(m.sliding_layers.size(), static_cast<std::size_t>(m.num_layers)) << path;
    EXPECT_GT(m.kv_bytes_per_token(), 0) << path;
    return Outcome::accepted;
  } catch (const InputError&) {
    return Outcome::input_error;
  }
}

// ---- the seed corpora
// -----------------------------------------------------------------------------------------

template <class Target>
void replay(const std::string& name, Target target) {
  const std::vector<fs::path> files = corpus(name);
  ASSERT_GE(files.size(), 3u) << "fuzz/corpus/" << name << " is missing or nearly empty";
  for (const fs::path& f : files) {
    Outcome got = Outcome::accepted;
    try {
      got = target(f.string());
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << " " << f.filename() << ": not an InputError: " << e.what();
      continue;
    }
    const Outcome want = expected_to_be_rejected(f) ? Outcome::input_error : Outcome::accepted;
    EXPECT_EQ(got == Outcome::accepted, want == Outcome::accepted)
        << name << " " << f.filename() << (want == Outcome::accepted ? ": rejected" : ": accepted");
  }
}

TEST(FuzzRegression, ConfigSeedCorpus) { replay("config_fuzz", config_target); }
TEST(FuzzRegression, TraceSeedCorpus) { replay("trace_fuzz", trace_target); }
TEST(FuzzRegression, ResultsSeedCorpus) { replay("results_fuzz", results_target); }
TEST(FuzzRegression, ModelSeedCorpus) { replay("model_fuzz", model_target); }

// ---- findings, inline
// -----------------------------------------------------------------------------------------

// Found with the sanitizer build (UBSan: "src/runner/case.cpp:31: signed integer overflow: 2147483647 + 1
// cannot be represented in type 'int'", in Case::kv_len_max called from expand_cases), on the path
// config_fuzz drives: kv_len_max() and kv_tokens() added two ints, the sum wrapped, the context-length check
// passed and the binary died later with "vector::_M_default_append" (exit 1) after writing its CSV. Fixed in
// 798f901 (int64 sums).
TEST(FuzzRegression, KvLenNearIntMaxIsRejectedWithoutOverflow) {
  const std::vector<std::string>
      inputs =
          {
              "model = [\"tiny\"]\nbatch = [1]\nkv-len = [2147483647]\n",  // decode: + 1
              "model = [\"tiny\"]\nmode = [\"verify\"]\nbatch = [1]\nkv-len = [2147483646]\ndraft-tokens = "
              "4\n",  // verify: + 4
          };
  for (const std::string& text : inputs) {
    TempDir d;
    test::write_file(d.file("c.toml"), text);
    const ParsedCli cli = parse_cli({"run", "--config", d.file("c.toml")});
    try {
      const std::vector<Case> cases = expand_cases(cli.run.plan);
      ADD_FAILURE() << "accepted " << cases.size() << " case(s):\n" << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--kv-len"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace attnbench
