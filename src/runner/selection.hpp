// Which of the expanded cases a sweep runs: --case-id and --filter pick them, and --resume drops the cases
// already complete in the results file being continued (and says which of its rows stay).
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "report/results_io.hpp"
#include "runner/case.hpp"

namespace attnbench {

// The cases of `cases` that plan.case_id (equal id) and plan.filter (a regular expression searched in the id,
// RE2: core/id_filter.hpp) keep, in order. InputError naming --case-id / --filter when the pattern is invalid or
// longer than IdFilter::kMaxPatternBytes, or nothing is left.
std::vector<Case> select_cases(std::vector<Case> cases, const RunPlan& plan);

struct ResumePoint {
  std::vector<Case> cases;       // still to run, in order
  std::vector<ResultRow> kept;   // rows of `previous` that stay: those of complete cases, in file order
  std::size_t cases_done = 0;    // cases not run again: `previous` holds every row the runner writes for them
  bool dropped_partial = false;  // `previous` held rows of a case cut off half-way: they are not kept
};

// --resume: a case is complete when `previous` (the rows already in --out) lacks none of its rows by
// missing_rows_of_case (report/results_io.hpp, merge's rule too): an eager row of each of `backends` and, with
// `graph_rows` (--timing names graph on a CUDA device), a graph row beside each eager row that is not skipped,
// unless the case is extend; complete cases are not run again, and a partial case runs again whole.
// A previous row of a backend not in `backends`, or of a case outside `sweep_ids` (every case the sweep expands
// to, selected or not: the selection may change between runs; null: the ids of `cases`), is another sweep's:
// InputError.
ResumePoint resume_from(std::vector<Case> cases, const std::vector<std::string>& backends,
                        std::vector<ResultRow> previous, bool graph_rows = false,
                        const std::set<std::string>* sweep_ids = nullptr);

}  // namespace attnbench
