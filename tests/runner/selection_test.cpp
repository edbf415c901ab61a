// Which cases a sweep runs: --case-id, --filter and --resume.
#include "runner/selection.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"

namespace attnbench {
namespace {

std::vector<Case> cases_with_ids(const std::vector<std::string>& ids) {
  std::vector<Case> out;
  for (const auto& id : ids) {
    Case c;
    c.id = id;
    out.push_back(c);
  }
  return out;
}

std::vector<std::string> ids(const std::vector<Case>& cases) {
  std::vector<std::string> out;
  for (const auto& c : cases) out.push_back(c.id);
  return out;
}

ResultRow row(const std::string& case_id, const std::string& backend) {
  ResultRow r;
  r.case_id = case_id;
  r.backend = backend;
  r.timing = "eager";
  return r;
}

const std::vector<std::string> kIds = {"decode/tiny/b=1/kv=8/p=64/bf16", "decode/tiny/b=2/kv=8/p=64/bf16",
                                       "extend/tiny/b=1/prefix=0/ext=4/p=64/bf16"};

TEST(Selection, CaseIdAndFilterKeepTheMatchingCasesInOrder) {
  RunPlan p;
  EXPECT_EQ(ids(select_cases(cases_with_ids(kIds), p)), kIds) << "nothing asked: every case";
  p.filter = "^decode/";
  EXPECT_EQ(ids(select_cases(cases_with_ids(kIds), p)), (std::vector<std::string>{kIds[0], kIds[1]}));
  p.case_id = kIds[1];
  EXPECT_EQ(ids(select_cases(cases_with_ids(kIds), p)), (std::vector<std::string>{kIds[1]}));
}

TEST(Selection, NothingLeftOrABadRegexNamesTheOption) {
  const auto expect_bad = [](const RunPlan& p, const std::string& message) {
    try {
      select_cases(cases_with_ids(kIds), p);
      ADD_FAILURE() << "accepted; expected " << message;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(message, 0), 0u) << e.what();
    }
  };
  RunPlan p;
  p.case_id = "decode/nope";
  expect_bad(p, "--case-id: no case 'decode/nope' in this sweep (see --list-cases)");
  p = RunPlan{};
  p.filter = "verify";
  expect_bad(p, "--filter: no case id matches 'verify' (see --list-cases)");
  p.filter = "(";
  expect_bad(p, "--filter: invalid regular expression '('");
}

// A previous row this sweep does not write (another case id or backend: the CSV rewritten by another configuration
// while the JSON report, whose options --resume checks, stayed) is refused, not kept.
TEST(Selection, ResumeRefusesRowsOfAnotherSweep) {
  const std::vector<std::string> backends = {"flashinfer", "trtllm_mha"};
  try {
    resume_from(cases_with_ids(kIds), backends, {row(kIds[0], "flashinfer"), row("decode/other/b=1", "flashinfer")});
    ADD_FAILURE() << "a row of another case was kept";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--resume: the results hold a row (decode/other/b=1, flashinfer) this sweep does "
                                     "not write: another sweep's results; run without --resume to start again");
  }
  EXPECT_THROW(resume_from(cases_with_ids(kIds), backends, {row(kIds[0], "trtllm_mha_legacy")}), InputError);
  // A case of the sweep that this run's selection (--filter) leaves out is not another sweep's: kept as it is.
  const std::set<std::string> sweep(kIds.begin(), kIds.end());
  const std::vector<Case> selected = cases_with_ids({kIds[1]});
  const ResumePoint r = resume_from(selected, backends, {row(kIds[0], "flashinfer"), row(kIds[0], "trtllm_mha")},
                                    false, &sweep);
  EXPECT_EQ(r.kept.size(), 2u);
  EXPECT_EQ(ids(r.cases), (std::vector<std::string>{kIds[1]}));
  EXPECT_THROW(resume_from(selected, backends, {row(kIds[0], "flashinfer")}, false, nullptr), InputError);
}

TEST(Selection, ResumeSkipsCompleteCasesAndDropsAPartialOne) {
  const std::vector<std::string> backends = {"flashinfer", "trtllm_mha"};
  // Case 0 complete (eager and graph rows of both), case 1 cut off after its first backend.
  const std::vector<ResultRow> previous = {row(kIds[0], "flashinfer"), row(kIds[0], "trtllm_mha"),
                                           row(kIds[0], "trtllm_mha"), row(kIds[1], "flashinfer")};
  const ResumePoint r = resume_from(cases_with_ids(kIds), backends, previous);
  EXPECT_EQ(ids(r.cases), (std::vector<std::string>{kIds[1], kIds[2]}));
  EXPECT_EQ(r.cases_done, 1u);
  EXPECT_TRUE(r.dropped_partial);
  ASSERT_EQ(r.kept.size(), 3u);
  for (const auto& k : r.kept) EXPECT_EQ(k.case_id, kIds[0]);

  const ResumePoint fresh = resume_from(cases_with_ids(kIds), backends, {});
  EXPECT_EQ(ids(fresh.cases), kIds);
  EXPECT_EQ(fresh.cases_done, 0u);
  EXPECT_FALSE(fresh.dropped_partial);
  EXPECT_TRUE(fresh.kept.empty());
}

// With graph rows due (--timing names graph on a CUDA device), a case whose backend lost its graph row (the run
// was cut between the eager and the graph row of the last backend, or a row was deleted) is not complete: it
// ran again whole. Merge's rule (report/shards.cpp): not beside a skipped eager row, not for extend cases.
TEST(Selection, ResumeWithGraphRowsNeedsAGraphRowBesideEachMeasuredEagerRow) {
  const std::vector<std::string> backends = {"flashinfer", "trtllm_mha"};
  const auto timed = [](const std::string& id, const std::string& backend, const std::string& timing,
                        RowStatus status = RowStatus::ok) {
    ResultRow r = row(id, backend);
    r.timing = timing;
    r.status = status;
    r.mode = id.rfind("extend/", 0) == 0 ? "extend" : "decode";
    return r;
  };
  const std::vector<ResultRow> previous = {
      // case 0: both backends, eager and graph
      timed(kIds[0], "flashinfer", "eager"), timed(kIds[0], "flashinfer", "graph"),
      timed(kIds[0], "trtllm_mha", "eager"), timed(kIds[0], "trtllm_mha", "graph"),
      // case 1: trtllm_mha's graph row is missing
      timed(kIds[1], "flashinfer", "eager"), timed(kIds[1], "flashinfer", "graph"),
      timed(kIds[1], "trtllm_mha", "eager"),
      // case 2 (extend): eager rows only, as the runner writes them
      timed(kIds[2], "flashinfer", "eager"), timed(kIds[2], "trtllm_mha", "eager")};
  const ResumePoint g = resume_from(cases_with_ids(kIds), backends, previous, /*graph_rows=*/true);
  EXPECT_EQ(ids(g.cases), (std::vector<std::string>{kIds[1]}));
  EXPECT_EQ(g.cases_done, 2u);
  EXPECT_TRUE(g.dropped_partial);
  EXPECT_EQ(g.kept.size(), 6u);
  for (const auto& k : g.kept) EXPECT_NE(k.case_id, kIds[1]);
  // Without graph rows due (eager only, or the CPU) every case with a row of each backend is complete.
  const ResumePoint e = resume_from(cases_with_ids(kIds), backends, previous, /*graph_rows=*/false);
  EXPECT_TRUE(e.cases.empty());
  EXPECT_EQ(e.kept.size(), previous.size());
  // A skipped eager row has no graph row beside it to wait for.
  std::vector<ResultRow> skipped = previous;
  skipped[6].status = RowStatus::skipped;
  EXPECT_TRUE(resume_from(cases_with_ids(kIds), backends, skipped, true).cases.empty());
}

}  // namespace
}  // namespace attnbench
