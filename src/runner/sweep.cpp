#include "runner/sweep.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "report/results_io.hpp"

namespace attnbench {

SweepSummary run_sweep(const std::vector<Case>& cases, const std::vector<std::string>& backends,
                       const DeviceMaker& make_device, const RunSettings& settings,
                       const std::function<void(const ResultRow&)>& sink, const Progress& progress) {
  SweepSummary sum;
  const RunSettings& s = settings;
  const std::atomic<bool>* stop = s.interrupt;
  std::string sticky;  // the error that made the device unusable
  const auto t0 = std::chrono::steady_clock::now();
  // "[i/n elapsed, ~eta left] " with `done` cases finished.
  auto head = [&](std::size_t i, std::size_t done) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double eta = done == 0 ? 0.0 : elapsed / static_cast<double>(done) * static_cast<double>(cases.size() - done);
    char b[96];
    std::snprintf(b, sizeof b, "[%zu/%zu %.0fs, ~%.0fs left] ", i + 1, cases.size(), elapsed, eta);
    return (progress.label.empty() ? std::string() : "[" + progress.label + "] ") + std::string(b);
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (stop && stop->load()) {
      sum.interrupted = true;
      break;
    }
    const Case& c = cases[i];
    if (progress.out && progress.terminal) *progress.out << "\r\033[K" << head(i, i) << "running " << c.id << std::flush;
    std::vector<ResultRow> rows;
    if (!sticky.empty()) {
      for (const auto& b : backends) rows.push_back(skipped_row(c, b, "", "eager", "device unusable after: " + sticky, s));
    } else {
      CaseOutcome out = run_case(c, backends, make_device, s);
      if (stop && stop->load() && s.timing) {  // raised while the case ran: its rows are cut short, none is kept
        sum.interrupted = true;
        break;
      }
      rows = std::move(out.rows);
      if (out.sticky_device_error)
        for (const auto& r : rows)
          if (r.status == RowStatus::failed) sticky = r.note;
    }
    for (ResultRow& r : rows) {
      // Notes may quote exception messages: keep every row on one line.
      std::replace(r.note.begin(), r.note.end(), '\n', ' ');
      std::replace(r.note.begin(), r.note.end(), '\r', ' ');
      sink(r);
      ++sum.rows;
      if (r.status == RowStatus::ok) ++sum.ok;
      if (r.status == RowStatus::skipped) ++sum.skipped;
      if (r.status == RowStatus::failed) ++sum.failed;
      if (r.status == RowStatus::oom) ++sum.oom;
      if (ref_pass_as_written(r) == false) ++sum.ref_failures;  // as the files say (a pass needs its figures)
    }
    ++sum.cases_done;
    if (progress.out) {
      std::ostream& p = *progress.out;
      if (progress.terminal) p << "\r\033[K";
      p << head(i, i + 1) << c.id << ":";
      for (const ResultRow& r : rows) {
        p << " " << r.backend << (r.timing == "graph" ? "(graph)" : "") << "=" << r.status;
        if (r.status == RowStatus::ok && r.step_median_us) {
          char t[48];
          std::snprintf(t, sizeof t, " %.1fus", *r.step_median_us);
          p << t;
        }
        if (ref_pass_as_written(r) == false) p << " REF-FAIL";
      }
      p << "\n" << std::flush;
    }
  }
  return sum;
}

}  // namespace attnbench
