// The rough edges a new user hits, through the binary: running from an empty directory (the default --out
// needs results/local/), from an install prefix (`cmake --install`, then `list` and a tiny validate from
// another directory), `--out -` / `--json -` on stdout, `env --format json`, OpenMP's passive wait policy,
// `report --plots`, and the report's headline on the committed H200 evidence (ratios inside their bands).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "device/environment.hpp"
#include "report/results_io.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

namespace fs = std::filesystem;
using test::RunResult;
using test::TempDir;

// A tiny sweep: one decode case of the tiny preset, two backends, CPU, seconds.
const std::string kTiny =
    " --model tiny --mode decode --backend trtllm_mha,trtllm_mha_legacy --batch 2 --kv-len 24 --page-size 16 "
    "--device cpu --warmup 0 --min-samples 2 --max-samples 3 --time-budget 0.05 -q";

// Runs `cmd` (a shell command line) in `cwd`, stdout and stderr captured into files of `capture` (a directory
// that is not `cwd`, so that the files a run writes can be listed exactly).
RunResult shell(const std::string& cmd, const std::string& cwd, const TempDir& capture) {
  const std::string out = capture.file("stdout.txt"), err = capture.file("stderr.txt");
  const std::string full = "cd '" + cwd + "' && " + cmd + " >'" + out + "' 2>'" + err + "'";
  const int status = std::system(full.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, test::read_file(out), test::read_file(err)};
}

std::string bin() { return std::string("'") + ATTNBENCH_BINARY + "'"; }

std::vector<std::string> files_under(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

using test::lines;

TEST(Edges, RunFromAnEmptyDirectoryCreatesResultsLocal) {
  TempDir work, capture;
  const RunResult r = shell(bin() + " run" + kTiny, work.path(), capture);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> files = files_under(work.path());
  ASSERT_EQ(files.size(), 2u) << ::testing::PrintToString(files);
  EXPECT_TRUE(std::regex_match(files[0], std::regex(R"(results/local/run-\d{8}-\d{6}\.csv)"))) << files[0];
  EXPECT_EQ(files[1], files[0].substr(0, files[0].size() - 4) + ".json");
  EXPECT_EQ(read_results_csv(work.file(files[0])).size(), 2u);
}

TEST(Edges, OutDashWritesTheCsvToStdoutAndNothingElse) {
  TempDir work, capture;
  const RunResult r = shell(bin() + " validate" + kTiny + " --out -", work.path(), capture);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(files_under(work.path()).empty()) << ::testing::PrintToString(files_under(work.path()));
  const std::vector<std::string> out = lines(r.out);
  ASSERT_EQ(out.size(), 3u) << r.out;  // the header and one row per backend: nothing else on stdout
  EXPECT_EQ(out[0], results_csv_header());
  // The CSV on stdout reads back as a results file.
  test::write_file(capture.file("back.csv"), r.out);
  const std::vector<ResultRow> rows = read_results_csv(capture.file("back.csv"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].backend, "trtllm_mha");
  EXPECT_EQ(rows[1].status, RowStatus::ok);
  // The table and the summary went to stderr, which says where the results went.
  EXPECT_NE(r.err.find("-> stdout"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("2 rows: 2 ok"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Results: stdout (no JSON)"), std::string::npos) << r.err;
}

TEST(Edges, JsonDashWritesTheJsonToStdout) {
  TempDir work, capture;
  const RunResult r = shell(bin() + " run" + kTiny + " --out x.csv --json -", work.path(), capture);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(files_under(work.path()), std::vector<std::string>{"x.csv"});
  const nlohmann::json j = nlohmann::json::parse(r.out);  // throws (fails the test) when stdout holds more
  EXPECT_EQ(j["schema"], "attnbench.results");
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_FALSE(j["rows"][0]["samples_us"].empty());
  EXPECT_EQ(read_results_csv(work.file("x.csv")).size(), 2u);
  EXPECT_NE(r.err.find("Results: x.csv (stdout)"), std::string::npos) << r.err;
}

TEST(Edges, BothOnStdoutOrResumeOnStdoutIsBadInput) {
  TempDir work, capture;
  for (const std::string extra : {" --out - --json -", " --out - --resume"}) {
    const RunResult r = shell(bin() + " validate" + kTiny + extra, work.path(), capture);
    EXPECT_EQ(r.exit_code, 2) << extra << ": " << r.err;
    EXPECT_EQ(lines(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find(extra.find("resume") != std::string::npos ? "--resume" : "--json"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_TRUE(files_under(work.path()).empty());
  }
}

TEST(Edges, EnvFormatJson) {
  TempDir work, capture;
  const RunResult r = shell(bin() + " env --format json", work.path(), capture);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "attnbench.env");
  EXPECT_EQ(j["schema_version"], 1);
  for (const auto& [k, v] : host_environment()) {
    ASSERT_TRUE(j.contains(k)) << k;
    if (k != "hardware_threads") {
      EXPECT_EQ(j[k], v) << k;
    }
  }
  EXPECT_TRUE(j["cuda_compiled"].is_boolean());
  EXPECT_TRUE(j["gpu_usable"].is_boolean());
  EXPECT_TRUE(j["gpu"].is_string());
  EXPECT_TRUE(j["device_auto"] == "cpu" || j["device_auto"] == "cuda");
  EXPECT_TRUE(j["omp_wait_policy"].is_string());
  EXPECT_TRUE(j["load_average_1m"].is_number() || j["load_average_1m"].is_null());
  EXPECT_TRUE(j["configs_dir"].is_string());  // the source folder's at least
  const RunResult bad = shell(bin() + " env --format xml", work.path(), capture);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--format"), std::string::npos) << bad.err;
}

TEST(Edges, OpenMpWaitsPassivelyUnlessTheUserSaysOtherwise) {
  TempDir work, capture;
  const auto policy = [&](const std::string& env) {
    const RunResult r = shell(env + " " + bin() + " env --format json", work.path(), capture);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["omp_wait_policy"].get<std::string>();
  };
  EXPECT_EQ(policy("env -u OMP_WAIT_POLICY -u ATTNBENCH_SET_OMP_WAIT_POLICY"), "PASSIVE (set by attnbench)");
  EXPECT_EQ(policy("env -u ATTNBENCH_SET_OMP_WAIT_POLICY OMP_WAIT_POLICY=ACTIVE"), "ACTIVE (from the environment)");
  // The runtime itself got it: libgomp reads its environment before main(), which is why attnbench re-executes
  // itself; its display of the settings (the re-executed process prints last) shows no spinning.
  const RunResult r = shell("env -u OMP_WAIT_POLICY OMP_DISPLAY_ENV=verbose " + bin() + " env", work.path(), capture);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto at = r.err.rfind("GOMP_SPINCOUNT = '");
  if (at == std::string::npos) GTEST_SKIP() << "not libgomp: no GOMP_SPINCOUNT in " << r.err;
  EXPECT_EQ(r.err.substr(at, 21), "GOMP_SPINCOUNT = '0'\n") << r.err;
}

TEST(Edges, LoadNoteOnlyWhenTheLoadExceedsTheCores) {
  EXPECT_EQ(cpu_load_note(1.5, 2), std::nullopt);
  EXPECT_EQ(cpu_load_note(2.0, 2), std::nullopt);
  EXPECT_EQ(cpu_load_note(9.0, 0), std::nullopt);  // cores unknown
  const auto note = cpu_load_note(5.432, 2);
  ASSERT_TRUE(note);
  EXPECT_EQ(*note,
            "load average 5.43 > 2 hardware threads at the start of the case: other work shares the CPU, timings are "
            "noisy");
  EXPECT_EQ(note->find(';'), std::string::npos);  // one note part (parts are joined by "; ")
}

TEST(Edges, InstalledBinaryFindsItsConfigsFromAnyDirectory) {
  TempDir prefix, work, capture;
  const std::string build_dir = fs::path(ATTNBENCH_BINARY).parent_path().string();
  const RunResult inst =
      shell(std::string("'") + ATTNBENCH_CMAKE + "' --install '" + build_dir + "' --prefix '" + prefix.path() + "'",
            work.path(), capture);
  ASSERT_EQ(inst.exit_code, 0) << inst.out << inst.err;
  const std::string installed = prefix.file("bin/attnbench");
  const std::string share = prefix.file("share/attnbench");
  ASSERT_TRUE(fs::is_regular_file(installed));
  for (const char* f : {"configs/smoke.toml", "configs/default.toml", "scripts/plot.py"})
    EXPECT_TRUE(fs::is_regular_file(fs::path(share) / f)) << f;

  // list: the installed configs, not the source folder's (which exists here too).
  const RunResult list = shell("'" + installed + "' list", work.path(), capture);
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const auto configs_at = list.out.find("configs:\n");
  ASSERT_NE(configs_at, std::string::npos) << list.out;
  const std::vector<std::string> config_lines = lines(list.out.substr(configs_at));
  ASSERT_GE(config_lines.size(), 3u) << list.out;
  for (std::size_t i = 1; i < config_lines.size(); ++i)
    EXPECT_EQ(config_lines[i].rfind("  " + share + "/configs/", 0), 0u) << config_lines[i];
  EXPECT_NE(list.out.find(share + "/configs/smoke.toml"), std::string::npos) << list.out;

  // A tiny validate from another directory, with an installed config.
  const RunResult v = shell("'" + installed + "' validate --config '" + share +
                                "/configs/smoke.toml' --mode decode --backend trtllm_mha --out v.csv -q",
                            work.path(), capture);
  EXPECT_EQ(v.exit_code, 0) << v.err;
  EXPECT_FALSE(read_results_csv(work.file("v.csv")).empty());

  // ATTNBENCH_DATA_DIR overrides where configs are found.
  fs::create_directories(work.file("data/configs"));
  test::write_file(work.file("data/configs/mine.toml"), "model = [\"tiny\"]\n");
  const RunResult over = shell("ATTNBENCH_DATA_DIR=data '" + installed + "' list", work.path(), capture);
  ASSERT_EQ(over.exit_code, 0) << over.err;
  EXPECT_NE(over.out.find("configs:\n  data/configs/mine.toml\n"), std::string::npos) << over.out;
  EXPECT_EQ(over.out.find("smoke.toml"), std::string::npos) << over.out;
}

TEST(Edges, ReportPlotsLinksTheFiguresRelativeToTheReport) {
  TempDir work, capture;
  ASSERT_EQ(shell(bin() + " validate" + kTiny + " --out x.csv", work.path(), capture).exit_code, 0);
  fs::create_directories(work.file("out/plots"));
  test::write_file(work.file("out/plots/ratio_tiny.png"), "png");
  test::write_file(work.file("out/plots/notes.txt"), "not a figure");
  const RunResult r = shell(bin() + " report x.json --plots out/plots --out out/report.md", work.path(), capture);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string md = test::read_file(work.file("out/report.md"));
  EXPECT_NE(md.find("### Figures\n\n![ratio_tiny](plots/ratio_tiny.png)\n"), std::string::npos) << md;
  EXPECT_EQ(md.find("notes.txt"), std::string::npos);
  const RunResult bad = shell(bin() + " report x.json --plots no-such-dir", work.path(), capture);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--plots"), std::string::npos) << bad.err;
}

// The committed H200 evidence (pr-evidence: 6 of llama-3.1-8b's 32 layers): the headline counts the full
// model's KV cache, as `attnbench memory` does (3,330 tokens, not 17,762), names the GPU and the SGLang version,
// says that lower latency is better, and every ratio it prints lies inside the band printed with it.
TEST(Edges, ReportHeadlineOnTheCommittedH200Evidence) {
  TempDir work, capture;
  const RunResult r =
      shell(bin() + " report '" + ATTNBENCH_SOURCE_DIR + "/results/h200/pr-evidence.json'", work.path(), capture);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string& md = r.out;
  const std::vector<std::string> head = lines(md.substr(0, 2000));
  ASSERT_GE(head.size(), 7u);
  EXPECT_EQ(head[2].rfind("**GPU:** NVIDIA H200 (132 SMs, driver 13.0); **SGLang:** ", 0), 0u) << head[2];
  EXPECT_NE(head[2].find("0.5.23"), std::string::npos) << head[2];  // the sweep ran under SGLang 0.5.23's profile
  EXPECT_NE(md.find("3,330 KV-cache tokens of llama-3.1-8b at 131,072 B per token (the full model: 32 layers; "
                    "this run stepped 6)"),
            std::string::npos)
      << md.substr(0, 2000);
  EXPECT_EQ(md.find("17,762"), std::string::npos);
  EXPECT_NE(md.find("- **Latency** (step time, lower is better) trtllm_mha / trtllm_mha_legacy"), std::string::npos);
  EXPECT_NE(md.find("lower is better. Ratios"), std::string::npos);
  // Every "r (lo-hi)" cell.
  const std::regex cell(R"((\d+\.\d{3}) \((\d+\.\d{3})-(\d+\.\d{3})\))");
  int n = 0;
  for (auto it = std::sregex_iterator(md.begin(), md.end(), cell); it != std::sregex_iterator(); ++it, ++n) {
    const double ratio = std::stod((*it)[1]), lo = std::stod((*it)[2]), hi = std::stod((*it)[3]);
    EXPECT_LE(lo, ratio) << it->str();
    EXPECT_LE(ratio, hi) << it->str();
  }
  EXPECT_GT(n, 100);
}

}  // namespace
}  // namespace attnbench
