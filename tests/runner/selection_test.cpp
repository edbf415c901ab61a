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

}  // namespace
}  // namespace attnbench
