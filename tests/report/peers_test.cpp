// Model vs library: pairing library rows (*_lib) with their model twins, the ratios and their summary (with
// the cases beyond 1.5x), the construction memory per ledger tag, the Markdown section of `report`, and the
// CLI: `report --peers`, `compare --peers`, and the refusals.
#include "report/peers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/case_id.hpp"
#include "core/errors.hpp"
#include "report/markdown.hpp"
#include "report/results_io.hpp"
#include "support/errors.hpp"
#include "support/backend_catalog.hpp"
#include "support/golden.hpp"
#include "support/result_rows.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

using test::run_attnbench;
using test::TempDir;

const BackendCatalog kCatalog = test::standard_catalog();

const char* kCaseA = "decode/llama-3.1-8b/L=6/b=64/kv=4096/p=64/bf16";
const char* kCaseB = "decode/llama-3.1-8b/L=6/b=8/kv=1024/p=64/bf16";
const char* kCaseC = "decode/llama-3.1-8b/L=6/b=1/kv=512/p=64/bf16";

// An ok row with forward (one layer) and step medians; p10 / p90 at -1% / +2%; its batch the id's (where the id
// is a case id: the summary tests key rows by short names that never reach a reader).
ResultRow row(const std::string& case_id, const std::string& backend, const std::string& timing,
              double forward, double step) {
  ResultRow r = test::llama_row(case_id, backend, timing);
  if (const std::optional<CaseIdParts> id = parse_case_id(case_id)) r.batch = id->batch;
  r.q_tokens = 64;
  r.samples = 30;
  r.forward_median_us = forward;
  test::set_step_us(r, step * 0.99, step, step * 1.02);
  r.metadata_median_us = 5.0;
  return r;
}

ResultRow::LedgerGroup entry(const std::string& tag, const std::string& kind, std::int64_t bytes,
                             const std::string& phase = "construct") {
  return {phase, tag, kind, bytes, false, 1};
}

using test::has;

const PeerPair* find_pair(const PeerComparison& c, const std::string& case_id, const std::string& lib,
                          const std::string& timing) {
  for (const PeerPair& p : c.pairs)
    if (p.case_id == case_id && p.lib_backend == lib && p.timing == timing) return &p;
  return nullptr;
}

TEST(PeersNames, LibrarySuffixAndTwins) {
  EXPECT_TRUE(is_library_backend("flashinfer_lib"));
  EXPECT_TRUE(is_library_backend("trtllm_lib"));
  EXPECT_FALSE(is_library_backend("flashinfer"));
  EXPECT_FALSE(is_library_backend("trtllm_mha_legacy"));
  EXPECT_FALSE(is_library_backend("_lib"));
  EXPECT_FALSE(is_library_backend("lib_flashinfer"));
  EXPECT_EQ(kCatalog.model_twin_of("flashinfer_lib"), "flashinfer");
  EXPECT_EQ(kCatalog.model_twin_of("trtllm_lib"), "trtllm_mha");
  EXPECT_FALSE(kCatalog.model_twin_of("cudnn_lib"));
  EXPECT_FALSE(kCatalog.model_twin_of("flashinfer"));
}

TEST(PeersPairing, MatchesByCaseTimingAndTwinAndListsTheUnmatched) {
  const std::vector<ResultRow> model = {
      row(kCaseA, "flashinfer", "eager", 30, 400), row(kCaseA, "flashinfer", "graph", 28, 300),
      row(kCaseA, "trtllm_mha", "eager", 20, 200), row(kCaseA, "trtllm_mha_legacy", "eager", 99, 999),
      row(kCaseB, "flashinfer", "eager", 10, 100),
  };
  const std::vector<ResultRow> lib = {
      row(kCaseA, "flashinfer_lib", "eager", 20, 250),
      row(kCaseA, "flashinfer_lib", "graph", 28, 310),
      row(kCaseA, "trtllm_lib", "eager", 25, 160),
      row(kCaseC, "flashinfer_lib", "eager", 5, 50),
      row(kCaseA, "cudnn_lib", "eager", 1, 10),
      row(kCaseA, "flashinfer", "eager", 1, 1),  // a model row among the library rows: ignored
  };
  const PeerComparison c = compare_peers(model, lib, kCatalog);
  ASSERT_EQ(c.pairs.size(), 3u);
  const PeerPair* fe = find_pair(c, kCaseA, "flashinfer_lib", "eager");
  const PeerPair* fg = find_pair(c, kCaseA, "flashinfer_lib", "graph");
  const PeerPair* te = find_pair(c, kCaseA, "trtllm_lib", "eager");
  ASSERT_TRUE(fe && fg && te);
  EXPECT_EQ(fe->model_backend, "flashinfer");
  EXPECT_DOUBLE_EQ(*fe->model_forward_median_us, 30);  // the eager model row, not the graph one
  EXPECT_DOUBLE_EQ(*fg->model_forward_median_us, 28);
  // trtllm_lib pairs with trtllm_mha (forward 20), never with trtllm_mha_legacy (forward 99).
  EXPECT_EQ(te->model_backend, "trtllm_mha");
  EXPECT_DOUBLE_EQ(*te->model_forward_median_us, 20);

  ASSERT_EQ(c.library_without_model.size(), 2u);
  EXPECT_EQ(c.library_without_model[0], std::string(kCaseC) + "|flashinfer_lib|eager");
  EXPECT_TRUE(has(c.library_without_model[1], "cudnn_lib")) << c.library_without_model[1];
  EXPECT_TRUE(has(c.library_without_model[1], "no twin")) << c.library_without_model[1];
  // Model rows of twin backends without a library row; trtllm_mha_legacy has no library counterpart at all.
  ASSERT_EQ(c.model_without_library.size(), 1u);
  EXPECT_EQ(c.model_without_library[0], std::string(kCaseB) + "|flashinfer|eager");
}

TEST(PeersPairing, RatiosAreModelOverLibrary) {
  const PeerComparison c = compare_peers({row(kCaseA, "flashinfer", "eager", 30, 400)},
                                         {row(kCaseA, "flashinfer_lib", "eager", 20, 250)}, kCatalog);
  ASSERT_EQ(c.pairs.size(), 1u);
  const PeerPair& p = c.pairs[0];
  ASSERT_TRUE(p.ratio_forward && p.ratio_step);
  EXPECT_DOUBLE_EQ(*p.ratio_forward, 1.5);  // 30 / 20
  EXPECT_DOUBLE_EQ(*p.ratio_step, 1.6);     // 400 / 250
  EXPECT_DOUBLE_EQ(*p.model_step_median_us, 400);
  EXPECT_DOUBLE_EQ(*p.lib_step_median_us, 250);
  EXPECT_DOUBLE_EQ(*p.model_step_p10_us, 396);
  EXPECT_DOUBLE_EQ(*p.lib_step_p90_us, 255);
  EXPECT_DOUBLE_EQ(*p.lib_metadata_median_us, 5.0);
  EXPECT_EQ(p.model_ref_pass, true);
  EXPECT_EQ(p.lib_ref_pass, true);

  // A missing or zero library figure gives no ratio (never inf).
  ResultRow lib = row(kCaseA, "flashinfer_lib", "eager", 0, 250);
  lib.step_median_us.reset();
  const PeerComparison z = compare_peers({row(kCaseA, "flashinfer", "eager", 30, 400)}, {lib}, kCatalog);
  ASSERT_EQ(z.pairs.size(), 1u);
  EXPECT_FALSE(z.pairs[0].ratio_forward);
  EXPECT_FALSE(z.pairs[0].ratio_step);
}

TEST(PeersPairing, RowsNotOkArePairedWithTheirStatusesAndNoRatio) {
  ResultRow skipped = row(kCaseA, "trtllm_lib", "eager", 20, 200);
  skipped.status = RowStatus::skipped;
  ResultRow failed = row(kCaseA, "flashinfer", "graph", 30, 300);
  failed.status = RowStatus::failed;
  const PeerComparison c = compare_peers(
      {row(kCaseA, "trtllm_mha", "eager", 30, 300), failed, row(kCaseA, "flashinfer", "eager", 30, 300)},
      {skipped, row(kCaseA, "flashinfer_lib", "graph", 20, 200),
       row(kCaseA, "flashinfer_lib", "eager", 20, 200)}, kCatalog);
  ASSERT_EQ(c.pairs.size(), 3u);
  const PeerPair* s = find_pair(c, kCaseA, "trtllm_lib", "eager");
  const PeerPair* f = find_pair(c, kCaseA, "flashinfer_lib", "graph");
  ASSERT_TRUE(s && f);
  EXPECT_EQ(s->lib_status, RowStatus::skipped);
  EXPECT_EQ(s->model_status, RowStatus::ok);
  EXPECT_FALSE(s->ratio_forward);
  EXPECT_FALSE(s->ratio_step);
  EXPECT_EQ(f->model_status, RowStatus::failed);
  EXPECT_FALSE(f->ratio_forward);
  EXPECT_TRUE(find_pair(c, kCaseA, "flashinfer_lib", "eager")->ratio_forward);
  int not_compared = 0;
  for (const PeerSummary& x : c.summary) not_compared += x.not_compared;
  EXPECT_EQ(not_compared, 2);

  std::ostringstream os;
  write_peer_markdown(os, c);
  EXPECT_TRUE(has(os.str(), "| skipped |")) << os.str();
  EXPECT_TRUE(has(os.str(), "| failed |")) << os.str();
}

TEST(PeersSummary, MedianMinMaxAndTheCasesBeyondOneAndAHalf) {
  // Forward ratios 0.9, 1.2, 1.5 (not beyond: strictly greater counts), 1.6, 2.0 in eager; one graph pair.
  const std::vector<std::pair<std::string, double>> ratios = {
      {"c/0.9", 0.9}, {"c/1.6", 1.6}, {"c/1.2", 1.2}, {"c/2.0", 2.0}, {"c/1.5", 1.5}};
  std::vector<ResultRow> model, lib;
  for (const auto& [id, r] : ratios) {
    model.push_back(row(id, "flashinfer", "eager", 10 * r, 100));
    lib.push_back(row(id, "flashinfer_lib", "eager", 10, 100));
  }
  model.push_back(row("c/g", "flashinfer", "graph", 30, 100));
  lib.push_back(row("c/g", "flashinfer_lib", "graph", 10, 100));
  const PeerComparison c = compare_peers(model, lib, kCatalog);
  ASSERT_EQ(c.summary.size(), 2u);
  const PeerSummary& e = c.summary[0];
  EXPECT_EQ(e.timing, "eager");
  EXPECT_EQ(e.model_backend, "flashinfer");
  EXPECT_EQ(e.lib_backend, "flashinfer_lib");
  EXPECT_EQ(e.count, 5);
  EXPECT_NEAR(e.median, 1.5, 1e-12);
  EXPECT_NEAR(e.min, 0.9, 1e-12);
  EXPECT_NEAR(e.max, 2.0, 1e-12);
  ASSERT_TRUE(e.step_median);
  EXPECT_DOUBLE_EQ(*e.step_median, 1.0);
  ASSERT_EQ(e.slow.size(), 2u);  // 2.0 and 1.6, largest first; 1.5 is not beyond 1.5
  EXPECT_EQ(e.slow[0].first, "c/2.0");
  EXPECT_EQ(e.slow[1].first, "c/1.6");
  const PeerSummary& g = c.summary[1];
  EXPECT_EQ(g.timing, "graph");
  EXPECT_EQ(g.count, 1);
  EXPECT_NEAR(g.median, 3.0, 1e-12);
  ASSERT_EQ(g.slow.size(), 1u);

  const std::vector<std::string> lines = peer_summary_lines(c);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(has(lines[0],
                  "flashinfer / flashinfer_lib eager: 5 cases, per-layer ratio median 1.500 (min 0.900, "
                  "max 2.000)"))
      << lines[0];
  EXPECT_TRUE(has(lines[0], "2 above 1.5x: c/2.0 (2.000), c/1.6 (1.600)")) << lines[0];
  EXPECT_FALSE(has(lines[0], "c/1.5 (")) << lines[0];
}

TEST(PeersMemory, PerTagDifferencesWithTagsMissingOnEitherSide) {
  ResultRow m1 = row(kCaseA, "flashinfer", "eager", 30, 400),
            l1 = row(kCaseA, "flashinfer_lib", "eager", 20, 250);
  ResultRow m2 = row(kCaseB, "flashinfer", "eager", 30, 400),
            l2 = row(kCaseB, "flashinfer_lib", "eager", 20, 250);
  // Case A: only the model has a ledger, so case B is the one used.
  m1.ledger = {entry("flashinfer.workspace_buffer", "device", 1)};
  m2.ledger = {
      entry("flashinfer.workspace_buffer", "device", 402653184),
      entry("flashinfer.decode_wrappers[0].int_workspace", "device", 8388608),
      entry("flashinfer.decode_wrappers[0].pin_memory_int_workspace", "pinned", 8388608),
      entry("flashinfer.kv_indptr[0]", "device", 16388),  // modelled, the library lacks it
      entry("flashinfer.cuda_graph_kv_indices", "device", 777, "graph_state"),  // not the construct phase
  };
  l2.ledger = {
      entry("flashinfer.workspace_buffer", "device", 402653184),
      entry("flashinfer.decode_wrappers[0].int_workspace", "device", 8388608 + 4096),
      entry("flashinfer.decode_wrappers[0].pin_memory_int_workspace", "pinned", 8388608),
      entry("flashinfer.prefill_wrapper_ragged.int_workspace", "device", 1000),  // measured only
  };
  const PeerComparison c = compare_peers({m1, m2}, {l1, l2}, kCatalog);
  ASSERT_EQ(c.memory.size(), 1u);
  const PeerMemory& pm = c.memory[0];
  EXPECT_EQ(pm.case_id, kCaseB);
  EXPECT_EQ(pm.model_backend, "flashinfer");
  EXPECT_EQ(pm.lib_backend, "flashinfer_lib");
  ASSERT_EQ(pm.lines.size(), 5u);  // sorted by tag; the graph_state entry left out
  const auto line = [&](const std::string& tag) -> const PeerTagLine& {
    const auto it =
        std::find_if(pm.lines.begin(), pm.lines.end(), [&](const PeerTagLine& l) { return l.tag == tag; });
    EXPECT_NE(it, pm.lines.end()) << tag;
    return *it;
  };
  EXPECT_TRUE(std::is_sorted(pm.lines.begin(), pm.lines.end(),
                             [](const PeerTagLine& a, const PeerTagLine& b) { return a.tag < b.tag; }));
  EXPECT_EQ(line("flashinfer.workspace_buffer").difference(), 0);
  EXPECT_EQ(line("flashinfer.decode_wrappers[0].int_workspace").difference(), 4096);
  EXPECT_EQ(line("flashinfer.decode_wrappers[0].pin_memory_int_workspace").kind, "pinned");
  const PeerTagLine& only_model = line("flashinfer.kv_indptr[0]");
  EXPECT_EQ(only_model.model_bytes, 16388);
  EXPECT_FALSE(only_model.lib_bytes);
  EXPECT_FALSE(only_model.difference());
  const PeerTagLine& only_lib = line("flashinfer.prefill_wrapper_ragged.int_workspace");
  EXPECT_FALSE(only_lib.model_bytes);
  EXPECT_EQ(only_lib.lib_bytes, 1000);
  EXPECT_EQ(only_lib.kind, "device");
  // Totals per kind over each side's own tags: device first, then pinned.
  ASSERT_EQ(pm.totals.size(), 2u);
  EXPECT_EQ(pm.totals[0].kind, "device");
  EXPECT_EQ(pm.totals[0].model_bytes, 402653184 + 8388608 + 16388);
  EXPECT_EQ(pm.totals[0].lib_bytes, 402653184 + 8388608 + 4096 + 1000);
  EXPECT_EQ(pm.totals[1].kind, "pinned");
  EXPECT_EQ(pm.totals[1].model_bytes, 8388608);
  EXPECT_EQ(pm.totals[1].lib_bytes, 8388608);

  std::ostringstream os;
  write_peer_markdown(os, c);
  const std::string s = os.str();
  EXPECT_TRUE(has(s, "### Wrapper memory, modelled vs measured")) << s;
  EXPECT_TRUE(has(s, "| `flashinfer.kv_indptr[0]` | device | 16,388 (16.00 KiB) | - | - |")) << s;
  EXPECT_TRUE(
      has(s,
          "| `flashinfer.decode_wrappers[0].int_workspace` | device | 8,388,608 (8.00 MiB) | 8,392,704 "
          "(8.00 MiB) | +4,096 (+4.00 KiB) |"))
      << s;
  EXPECT_TRUE(
      has(s, "| `flashinfer.prefill_wrapper_ragged.int_workspace` | device | - | 1,000 (1000 B) | - |"))
      << s;
  EXPECT_TRUE(has(s, "| **total pinned** | pinned | 8,388,608 (8.00 MiB) | 8,388,608 (8.00 MiB) | 0 |")) << s;
  EXPECT_FALSE(has(s, "needs the JSON reports")) << s;
}

TEST(PeersMemory, WithoutLedgersTheSectionAsksForTheJsonReports) {
  const PeerComparison c = compare_peers({row(kCaseA, "trtllm_mha", "eager", 30, 400)},
                                         {row(kCaseA, "trtllm_lib", "eager", 20, 250)}, kCatalog);
  ASSERT_EQ(c.memory.size(), 1u);
  EXPECT_TRUE(c.memory[0].case_id.empty());
  EXPECT_TRUE(c.memory[0].lines.empty());
  std::ostringstream os;
  write_peer_markdown(os, c);
  EXPECT_TRUE(has(os.str(), "**trtllm_mha vs trtllm_lib**: needs the JSON reports")) << os.str();
}

ResultSet model_set() {
  ResultSet s;
  s.rows = {row(kCaseA, "flashinfer", "eager", 30, 400), row(kCaseA, "trtllm_mha", "eager", 20, 300),
            row(kCaseA, "trtllm_mha_legacy", "eager", 20, 310)};
  s.environment = {{"gpu_name", "NVIDIA H200"}, {"attnbench_version", "0.1.0"}};
  s.command = "attnbench run --config configs/h200.toml";
  return s;
}

ResultSet library_set() {
  ResultSet s;
  s.rows = {row(kCaseA, "flashinfer_lib", "eager", 10, 250), row(kCaseA, "trtllm_lib", "eager", 16, 240)};
  s.rows[0].ledger = {entry("flashinfer.workspace_buffer", "device", 402653184)};
  s.environment = {{"gpu_name", "NVIDIA H200"}, {"flashinfer_version", "0.2.14"}, {"torch_version", "2.8.0"}};
  return s;
}

std::string report(const ResultSet& s, const std::vector<ResultSet>& peers = {}) {
  std::ostringstream os;
  write_markdown_report(os, s, nullptr, "", kCatalog, peers);
  return os.str();
}

TEST(PeersMarkdown, SectionOnlyWithLibraryRows) {
  const std::string without = report(model_set());
  EXPECT_FALSE(has(without, "Model vs library")) << without;

  const std::string with = report(model_set(), {library_set()});
  const auto at = with.find("## Model vs library");
  ASSERT_NE(at, std::string::npos) << with;
  // Everything before the section is the report without peers.
  EXPECT_EQ(with.substr(0, without.size()), without);
  const std::string sec = with.substr(at);
  EXPECT_TRUE(has(sec, "a ratio > 1 means attnbench is slower")) << sec;
  EXPECT_TRUE(has(sec, "Library environment: FlashInfer 0.2.14, torch 2.8.0, NVIDIA H200.")) << sec;
  EXPECT_TRUE(has(sec, "- flashinfer / flashinfer_lib eager: 1 case, per-layer ratio median 3.000")) << sec;
  EXPECT_TRUE(has(sec, "1 above 1.5x: " + std::string(kCaseA) + " (3.000)")) << sec;
  EXPECT_TRUE(has(sec, "- trtllm_mha / trtllm_lib eager: 1 case, per-layer ratio median 1.250")) << sec;
  EXPECT_TRUE(has(sec, "0 above 1.5x")) << sec;
  EXPECT_TRUE(has(sec, "### flashinfer vs flashinfer_lib")) << sec;
  EXPECT_TRUE(
      has(sec,
          "| case | timing | model µs/layer | library µs/layer | ratio | model step µs | library step µs "
          "| step ratio | library reference check |"))
      << sec;
  EXPECT_TRUE(has(sec, "| `" + std::string(kCaseA) +
                           "` | eager | 30.00 | 10.00 | 3.000 | 400.0 | 250.0 | 1.600 | pass |"))
      << sec;
  // flashinfer's model row has no ledger here: the memory table needs the JSON reports.
  EXPECT_TRUE(has(sec, "**flashinfer vs flashinfer_lib**: needs the JSON reports")) << sec;
}

TEST(PeersMarkdown, MergedFileUsesItsLibraryRowsAsPeersAndKeepsThemOutOfTheRest) {
  ResultSet merged = model_set();
  for (const ResultRow& r : library_set().rows) merged.rows.push_back(r);
  const std::string s = report(merged);
  ASSERT_TRUE(has(s, "## Model vs library")) << s;
  // The model report counts the three model rows only, and no library backend gets a latency column.
  EXPECT_TRUE(has(s, "- **Correctness:** 3 rows")) << s;
  const std::string before = s.substr(0, s.find("## Model vs library"));
  EXPECT_FALSE(has(before, "flashinfer_lib")) << before;
  EXPECT_TRUE(has(s, "| `" + std::string(kCaseA) + "` | eager | 20.00 | 16.00 | 1.250 |")) << s;
  // A GPU mismatch between the model run and the library run is said in the section.
  ResultSet other = library_set();
  other.environment = {{"gpu_name", "NVIDIA H100"}};
  EXPECT_TRUE(has(report(model_set(), {other}), "attnbench ran on NVIDIA H200, the library on NVIDIA H100"));
}

// A results CSV carries no environment: the GPU check fell silent and a library CSV of another GPU was
// compared as if it ran beside the model. The rows' device column stands in for a missing gpu_name.
TEST(PeersEnvironment, WithoutGpuNameTheRowsDeviceColumnIsCompared) {
  ResultSet m = model_set(), l = library_set();
  l.environment.clear();
  EXPECT_TRUE(check_peer_environments(m, l, false, "BASE", "NEW").empty());  // the same H200
  for (ResultRow& r : l.rows) r.device = "NVIDIA A100-SXM4-80GB";
  EXPECT_EQ(test::error_of([&] { check_peer_environments(m, l, false, "BASE", "NEW"); }),
            "compare: BASE ran on NVIDIA H200, NEW on NVIDIA A100-SXM4-80GB; --allow-env-mismatch to compare anyway");
  m.environment.clear();  // neither side has an environment
  EXPECT_EQ(check_peer_environments(m, l, true, "BASE", "NEW"),
            std::vector<std::string>{"BASE ran on NVIDIA H200, NEW on NVIDIA A100-SXM4-80GB"});
  // Nothing to compare: a CPU model run, the torch device type only, or rows of several GPUs on one side.
  ResultSet cpu = model_set();
  cpu.environment.clear();
  for (ResultRow& r : cpu.rows) r.device = "cpu (2 threads)";
  EXPECT_TRUE(check_peer_environments(cpu, l, false, "BASE", "NEW").empty());
  ResultSet typed = library_set();
  typed.environment.clear();
  for (ResultRow& r : typed.rows) r.device = "cuda";
  EXPECT_TRUE(check_peer_environments(m, typed, false, "BASE", "NEW").empty());
  // The environment wins over the rows where it names a GPU.
  l.environment = {{"gpu_name", "NVIDIA H200"}};
  EXPECT_TRUE(check_peer_environments(m, l, false, "BASE", "NEW").empty());
}

TEST(PeersLoad, PeerFilesMustHoldLibraryRowsOnly) {
  TempDir d;
  write_results_json(d.file("lib.json"), library_set().environment, "bench_libraries.py", library_set().rows);
  write_results_json(d.file("model.json"), model_set().environment, "attnbench run", model_set().rows);
  const ResultSet ok = load_peer_set(d.file("lib.json"), kCatalog);
  ASSERT_EQ(ok.rows.size(), 2u);
  EXPECT_EQ(ok.rows[0].backend, "flashinfer_lib");
  EXPECT_EQ(ok.rows[0].ledger.size(), 1u);
  try {
    load_peer_set(d.file("model.json"), kCatalog);
    FAIL() << "a model file was accepted as --peers";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("--peers " + d.file("model.json"), 0), 0u) << what;
    EXPECT_TRUE(has(what, "'flashinfer'")) << what;
  }
  EXPECT_THROW(load_peer_set(d.file("missing.json"), kCatalog), InputError);
}

// A peer row (library *_lib or SGLang *_sglang) of one (case, backend, timing) in two files is refused, naming
// both; the model's own rows may repeat (RESULTS against itself is no peer duplicate), and one file's rows are
// its loader's business.
TEST(PeersLoad, APeerRowInTwoFilesIsRefusedNamingBoth) {
  const ResultSet lib = library_set(), model = model_set();
  ResultSet sglang;
  sglang.rows = {row(kCaseA, "trtllm_mha_sglang", "eager", 20, 300)};
  ResultSet other = library_set();
  for (ResultRow& r : other.rows) r.timing = "graph";  // the same cases and backends, another timing
  EXPECT_NO_THROW(check_peer_rows_unique({{"model.json", &model}, {"lib.json", &lib}, {"sglang.json", &sglang},
                                          {"graph.json", &other}}));
  EXPECT_NO_THROW(check_peer_rows_unique({{"a.json", &model}, {"b.json", &model}}));
  const auto error = [](const std::vector<std::pair<std::string, const ResultSet*>>& files) {
    try {
      check_peer_rows_unique(files);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no InputError");
  };
  const std::string key = std::string(kCaseA) + "|flashinfer_lib|eager";
  EXPECT_EQ(error({{"model.json", &model}, {"lib.json", &lib}, {"sglang.json", &sglang}, {"again.json", &lib}}),
            "--peers: the row " + key + " is in both 'lib.json' and 'again.json': give each peer row once (the "
            "report would keep the first and drop the other)");
  // SGLang's rows too (compare_sglang kept the first silently).
  EXPECT_EQ(error({{"s1.json", &sglang}, {"s2.json", &sglang}}),
            "--peers: the row " + std::string(kCaseA) +
                "|trtllm_mha_sglang|eager is in both 's1.json' and 's2.json': give each peer row once (the report "
                "would keep the first and drop the other)");
  // RESULTS (a merged file with library rows of its own) and a --peers file.
  ResultSet merged = model;
  merged.rows.push_back(lib.rows[1]);
  EXPECT_EQ(error({{"merged.json", &merged}, {"lib.json", &lib}}),
            "--peers: the row " + std::string(kCaseA) + "|trtllm_lib|eager is in both 'merged.json' and 'lib.json': "
            "give each peer row once (the report would keep the first and drop the other)");
}

TEST(PeersMode, CompareRefusesLibraryRowsOnOneSideWithoutPeersAndWrongSidesWithIt) {
  const ResultSet m = model_set(), l = library_set();
  ResultSet merged = m;
  merged.rows.push_back(l.rows[0]);
  // Without --peers: library rows on exactly one side are an error that says to pass --peers.
  EXPECT_NO_THROW(check_compare_sides(m, m, "m", "m"));
  EXPECT_NO_THROW(check_compare_sides(l, l, "l", "l"));  // like with like
  EXPECT_NO_THROW(check_compare_sides(merged, merged, "a", "b"));
  for (const auto& [base, now] : {std::pair{m, l}, std::pair{l, m}, std::pair{m, merged}}) {
    try {
      check_compare_sides(base, now, "base.json", "new.json");
      ADD_FAILURE() << "library rows on one side were accepted without --peers";
    } catch (const InputError& e) {
      EXPECT_TRUE(has(e.what(), "pass --peers")) << e.what();
      EXPECT_TRUE(has(e.what(), "library rows")) << e.what();
    }
  }
  // With --peers: BASE holds the model rows, NEW the library rows, as given.
  EXPECT_NO_THROW(check_peer_sides(m, l, "m", "l"));
  EXPECT_NO_THROW(check_peer_sides(merged, l, "m", "l"));
  try {
    check_peer_sides(l, m, "lib.json", "model.json");
    ADD_FAILURE() << "an all-library BASE was accepted";
  } catch (const InputError& e) {
    EXPECT_TRUE(has(e.what(), "--peers")) << e.what();
    EXPECT_TRUE(has(e.what(), "lib.json")) << e.what();
    EXPECT_TRUE(has(e.what(), "only library rows")) << e.what();
  }
  EXPECT_THROW(check_peer_sides(m, m, "m", "m2"), InputError);  // NEW without a library row
  EXPECT_THROW(check_peer_sides(ResultSet{}, l, "empty", "l"), InputError);
}

// ---- the binary ------------------------------------------------------------------------------------------

struct PeerFiles {
  TempDir d;
  std::string model, lib, lib_h100;
  PeerFiles() : model(d.file("model.json")), lib(d.file("lib.json")), lib_h100(d.file("lib-h100.json")) {
    write_results_json(model, model_set().environment, "attnbench run", model_set().rows);
    write_results_json(lib, library_set().environment, "bench_libraries.py", library_set().rows);
    write_results_json(lib_h100, {{"gpu_name", "NVIDIA H100"}}, "bench_libraries.py", library_set().rows);
  }
};

TEST(PeersCli, CompareWithPeersComparesModelWithLibraryAndExitsZero) {
  PeerFiles f;
  const auto t = run_attnbench("compare --peers " + f.model + " " + f.lib, f.d);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(t.out.rfind("peer comparison: model rows of BASE vs library rows of NEW\n", 0), 0u) << t.out;
  EXPECT_TRUE(has(t.out, "flashinfer / flashinfer_lib eager: 1 case, per-layer ratio median 3.000")) << t.out;
  EXPECT_FALSE(has(t.out, "compare: PASS")) << t.out;  // not the regression gate

  const auto r = run_attnbench("compare " + f.model + " " + f.lib + " --peers --format md", f.d);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("peer comparison: model rows of BASE vs library rows of NEW\n", 0), 0u) << r.out;
  EXPECT_TRUE(has(r.out, "## Model vs library")) << r.out;

  const auto j = run_attnbench("compare --peers " + f.model + " " + f.lib + " --format json", f.d);
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["schema"], "attnbench.peers");
  EXPECT_EQ(doc["comparison"], "peer comparison: model rows of BASE vs library rows of NEW");
  ASSERT_EQ(doc["pairs"].size(), 2u);
  EXPECT_DOUBLE_EQ(doc["pairs"][1]["ratio_forward"].get<double>(), 1.25);
  EXPECT_EQ(doc["library_environments"][0]["flashinfer_version"], "0.2.14");

  const auto c = run_attnbench("compare --peers " + f.model + " " + f.lib + " --format csv", f.d);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.out.rfind("case_id,timing,model_backend,library_backend,", 0), 0u) << c.out;
  EXPECT_TRUE(has(c.out, std::string(kCaseA) + ",eager,trtllm_mha,trtllm_lib,ok,ok,20,16,1.25,300,240,1.25,"))
      << c.out;
  EXPECT_TRUE(has(c.err, "peer comparison: model rows of BASE vs library rows of NEW")) << c.err;
}

TEST(PeersCli, CompareWithoutPeersOrWithSwappedSidesIsAnError) {
  PeerFiles f;
  // Library rows on one side without --peers: exit 2, one line saying to pass --peers; nothing on stdout.
  for (const std::string& args : {f.model + " " + f.lib, f.lib + " " + f.model}) {
    const auto r = run_attnbench("compare " + args, f.d);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_TRUE(has(r.err, "pass --peers")) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  // --peers with the library file as BASE: exit 2 naming the option and the file.
  const auto s = run_attnbench("compare --peers " + f.lib + " " + f.model, f.d);
  EXPECT_EQ(s.exit_code, 2) << s.out;
  EXPECT_TRUE(has(s.err, "--peers")) << s.err;
  EXPECT_TRUE(has(s.err, f.lib)) << s.err;
  EXPECT_TRUE(s.out.empty()) << s.out;
}

TEST(PeersCli, CompareRefusesDifferentGpusUnlessAllowed) {
  PeerFiles f;
  const auto r = run_attnbench("compare --peers " + f.model + " " + f.lib_h100, f.d);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(has(r.err, "BASE ran on NVIDIA H200, NEW on NVIDIA H100")) << r.err;
  EXPECT_TRUE(has(r.err, "--allow-env-mismatch")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  const auto a = run_attnbench("compare --peers " + f.model + " " + f.lib_h100 + " --allow-env-mismatch", f.d);
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_TRUE(has(a.out, "BASE ran on NVIDIA H200, NEW on NVIDIA H100")) << a.out;
}

TEST(PeersCli, ReportWithPeersAddsTheSectionAndRefusesModelFiles) {
  PeerFiles f;
  const auto plain = run_attnbench("report " + f.model, f.d);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_FALSE(has(plain.out, "Model vs library")) << plain.out;

  // --peers takes one file each time, before or after RESULTS; the files hold different rows.
  ResultSet other = library_set();
  for (ResultRow& r : other.rows) r.case_id = kCaseB, r.batch = 8;
  const std::string lib_b = f.d.file("lib-b.json");
  write_results_json(lib_b, {{"gpu_name", "NVIDIA H100"}}, "bench_libraries.py", other.rows);
  const auto with = run_attnbench("report --peers " + f.lib + " " + f.model + " --peers " + lib_b, f.d);
  ASSERT_EQ(with.exit_code, 0) << with.err;
  EXPECT_TRUE(has(with.out, "## Model vs library")) << with.out;
  EXPECT_EQ(with.out.substr(0, plain.out.size()), plain.out);
  EXPECT_TRUE(
      has(with.out, "Library environments: FlashInfer 0.2.14, torch 2.8.0, NVIDIA H200; NVIDIA H100."))
      << with.out;
  EXPECT_FALSE(has(with.out, "two library rows")) << with.out;
  // The same rows in two --peers files: refused, naming both files (the report would keep one and drop the
  // other without a word).
  const auto twice = run_attnbench("report --peers " + f.lib + " " + f.model + " --peers " + f.lib_h100, f.d);
  EXPECT_EQ(twice.exit_code, 2) << twice.out;
  EXPECT_EQ(twice.err, "attnbench: error: --peers: the row " + std::string(kCaseA) + "|flashinfer_lib|eager is in both '" +
                           f.lib + "' and '" + f.lib_h100 +
                           "': give each peer row once (the report would keep the first and drop the other)\n");
  EXPECT_TRUE(twice.out.empty()) << twice.out;

  const auto bad = run_attnbench("report " + f.model + " --peers " + f.model, f.d);
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_TRUE(has(bad.err, "--peers")) << bad.err;
  EXPECT_TRUE(has(bad.err, "not a library backend")) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  EXPECT_TRUE(bad.out.empty()) << bad.out;
}

// ---- golden outputs --------------------------------------------------------------------------------------

// Ratios above and below 1.5x, rows not ok, ledgers with tags on one side only and a kind disagreement, a
// pair without ledgers, unmatched rows on both sides, a library row without a twin, two environments.
PeerComparison rich_peers() {
  ResultRow m1 = row(kCaseA, "flashinfer", "eager", 30, 400), l1 = row(kCaseA, "flashinfer_lib", "eager", 10, 250);
  m1.ledger = {entry("flashinfer.workspace_buffer", "device", 402653184),
               entry("flashinfer.decode_wrappers[0].int_workspace", "device", 8388608),
               entry("fi.pin", "pinned", 8388608), entry("fi.x", "device", 16388),
               entry("flashinfer.cuda_graph_kv_indices", "device", 777, "graph_state")};
  l1.ledger = {entry("flashinfer.workspace_buffer", "device", 402653184),
               entry("flashinfer.decode_wrappers[0].int_workspace", "device", 8388608 + 4096),
               entry("fi.pin", "device", 8388608), entry("ragged", "device", 1000)};
  ResultRow m2 = row(kCaseB, "flashinfer", "graph", 12, 100), l2 = row(kCaseB, "flashinfer_lib", "graph", 11, 90);
  ResultRow m3 = row(kCaseA, "trtllm_mha", "eager", 20, 300), l3 = row(kCaseA, "trtllm_lib", "eager", 16, 240);
  ResultRow m4 = row(kCaseB, "trtllm_mha", "eager", 20, 300), l4 = row(kCaseB, "trtllm_lib", "eager", 16, 240);
  l4.status = RowStatus::skipped;
  l4.ref_pass.reset();
  ResultRow m5 = row(kCaseC, "trtllm_mha", "eager", 5, 50);  // no library row
  ResultRow l6 = row(kCaseC, "flashinfer_lib", "eager", 5, 50);  // no model row
  ResultRow l7 = row(kCaseA, "cudnn_lib", "eager", 1, 10);       // no twin
  l3.ref_pass = false;
  PeerComparison c = compare_peers({m1, m2, m3, m4, m5}, {l1, l2, l3, l4, l6, l7}, kCatalog);
  c.library_environments = {library_set().environment, {{"gpu_name", "NVIDIA H100"}, {"driver_version", "570"}}};
  c.warnings = {"attnbench ran on NVIDIA H200, the library on NVIDIA H100"};
  return c;
}

TEST(PeersGolden, TableMarkdownCsvJson) {
  const PeerComparison c = rich_peers();
  std::ostringstream table, md, csv, js;
  write_peer_table(table, c);
  write_peer_markdown(md, c);
  write_peer_csv(csv, c);
  write_peer_json(js, c, "peer comparison: model rows of BASE vs library rows of NEW");
  test::expect_golden("peers.txt", table.str());
  test::expect_golden("peers.md", md.str());
  test::expect_golden("peers.csv", csv.str());
  test::expect_golden("peers.json", js.str());

  const PeerComparison empty = compare_peers(model_set().rows, {}, kCatalog);
  std::ostringstream et, em;
  write_peer_table(et, empty);
  write_peer_markdown(em, empty);
  test::expect_golden("peers-empty.txt", et.str());
  test::expect_golden("peers-empty.md", em.str());
}

TEST(PeersGolden, ReportWithPeers) {
  ResultSet merged = model_set();
  for (const ResultRow& r : library_set().rows) merged.rows.push_back(r);
  merged.environment.emplace_back("flashinfer_version", "0.2.14");
  ResultSet other = library_set();
  other.environment = {{"gpu_name", "NVIDIA H100"}};
  test::expect_golden("report-peers.md", report(merged, {other}));
}

}  // namespace
}  // namespace attnbench
