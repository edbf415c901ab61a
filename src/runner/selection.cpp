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
                        std::vector<ResultRow> previous, bool graph_rows) {
  std::map<std::string, std::set<std::string>> have;  // case id -> backends with a row
  // case id -> backends whose eager row is not skipped and that have no graph row; extend cases have none
  std::map<std::string, std::set<std::string>> graph_missing;
  std::set<std::string> extend, with_graph;  // case ids; "case|backend" with a graph row
  for (const ResultRow& r : previous) {
    have[r.case_id].insert(r.backend);
    if (r.mode == "extend") extend.insert(r.case_id);
    if (r.timing == "graph") with_graph.insert(r.case_id + "|" + r.backend);
  }
  if (graph_rows)  // the rule of merge (report/shards.cpp), from case_runner.cpp's want_graph
    for (const ResultRow& r : previous)
      if (r.timing == "eager" && r.status != RowStatus::skipped && !with_graph.count(r.case_id + "|" + r.backend))
        graph_missing[r.case_id].insert(r.backend);
  auto complete = [&](const std::string& id) {
    auto it = have.find(id);
    if (it == have.end()) return false;
    for (const auto& b : backends)
      if (!it->second.count(b)) return false;
    const auto g = graph_missing.find(id);
    return extend.count(id) || g == graph_missing.end() || g->second.empty();
  };
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
