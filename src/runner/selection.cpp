#include "runner/selection.hpp"

#include <map>
#include <set>

#include "core/errors.hpp"
#include "core/files.hpp"
#include "core/id_filter.hpp"

namespace attnbench {

std::vector<Case> select_cases(std::vector<Case> cases, const RunPlan& plan) {
  if (!plan.case_id.empty()) {
    std::erase_if(cases, [&](const Case& c) { return c.id != plan.case_id; });
    if (cases.empty())
      throw InputError("--case-id: no case '" + printable(plan.case_id) + "' in this sweep (see --list-cases)");
  }
  if (!plan.filter.empty()) {
    const IdFilter filter(plan.filter, "--filter");  // RE2: linear time, bounded pattern (core/id_filter.hpp)
    std::erase_if(cases, [&](const Case& c) { return !filter.matches(c.id); });
    if (cases.empty())
      throw InputError("--filter: no case id matches '" + printable(plan.filter) + "' (see --list-cases)");
  }
  return cases;
}

ResumePoint resume_from(std::vector<Case> cases, const std::vector<std::string>& backends,
                        std::vector<ResultRow> previous, bool graph_rows, const std::set<std::string>* sweep_ids) {
  // Every previous row must be one this sweep writes: a row of another case or backend is another sweep's (a file
  // rewritten by another configuration while its JSON report, whose options --resume checks, stayed).
  std::set<std::string> ids, names(backends.begin(), backends.end());
  if (sweep_ids != nullptr)
    ids = *sweep_ids;
  else
    for (const Case& c : cases) ids.insert(c.id);
  for (const ResultRow& r : previous)
    if (!ids.count(r.case_id) || !names.count(r.backend))
      throw InputError("--resume: the results hold a row (" + printable(r.case_id) + ", " + printable(r.backend) +
                       ") this sweep does not write: another sweep's results; run without --resume to start again");
  std::map<std::string, std::vector<const ResultRow*>> rows_of;  // case id -> its rows
  for (const ResultRow& r : previous) rows_of[r.case_id].push_back(&r);
  std::set<std::string> done;  // case ids with every row the runner writes (merge's rule, one function)
  for (const auto& [id, rows] : rows_of)
    if (missing_rows_of_case(rows, backends, graph_rows).empty()) done.insert(id);
  const auto complete = [&](const std::string& id) { return done.count(id) > 0; };
  ResumePoint out;
  const std::size_t before = cases.size();
  std::erase_if(cases, [&](const Case& c) { return complete(c.id); });
  out.cases_done = before - cases.size();
  out.cases = std::move(cases);
  const std::size_t rows_before = previous.size();
  std::erase_if(previous, [&](const ResultRow& r) { return !complete(r.case_id); });
  out.dropped_partial = previous.size() != rows_before;
  out.kept = std::move(previous);
  return out;
}

}  // namespace attnbench
