#include "report/run_summary.hpp"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <optional>
#include <set>
#include <string>

namespace attnbench {

namespace {

std::string fmt(const std::optional<double>& v, int prec = 1) {
  if (!v) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", prec, *v);
  return b;
}

}  // namespace

void print_run_table(std::ostream& out, const std::vector<ResultRow>& rows) {
  // Columns as wide as their longest entry plus a space (an fp8 or sinks case id runs past 58 characters).
  int case_w = 58, backend_w = 19;
  for (const ResultRow& r : rows) {
    case_w = std::max(case_w, static_cast<int>(r.case_id.size()) + 1);
    backend_w = std::max(backend_w, static_cast<int>(r.backend.size()) + 1);
  }
  out << std::left << std::setw(case_w) << "case" << std::setw(backend_w) << "backend" << std::setw(7) << "timing" << std::setw(8)
      << "status" << std::right << std::setw(12) << "median us" << std::setw(22) << "p10-p90 us" << std::setw(8) << "TB/s"
      << std::setw(9) << "TFLOP/s" << std::setw(11) << "ref err" << std::setw(5) << "ref"
      << "  bitwise equal to\n";
  for (const ResultRow& r : rows) {
    out << std::left << std::setw(case_w) << r.case_id << std::setw(backend_w) << r.backend << std::setw(7) << r.timing << std::setw(8)
        << r.status << std::right << std::setw(12) << fmt(r.step_median_us) << std::setw(22)
        << (r.step_p10_us ? fmt(r.step_p10_us) + " - " + fmt(r.step_p90_us) : std::string("-")) << std::setw(8)
        << fmt(r.tb_per_s, 2) << std::setw(9) << fmt(r.tflops, 1) << std::setw(11)
        << (r.ref_max_abs_err ? fmt(r.ref_max_abs_err, 5) : std::string("-")) << std::setw(5)
        << (r.ref_pass ? (*r.ref_pass ? "pass" : "FAIL") : "-") << "  " << r.bitwise_equal_to << "\n";
  }
}

BitIdentity bit_identity(const std::vector<ResultRow>& rows, const BackendChange& change) {
  const std::string &baseline = change.baseline, &candidate = change.candidate;
  BitIdentity r;
  if (baseline.empty() || candidate.empty()) return r;
  std::set<std::pair<std::string, std::string>> baseline_ok;  // (case_id, timing)
  for (const ResultRow& b : rows)
    if (b.backend == baseline && b.status == RowStatus::ok) baseline_ok.insert({b.case_id, b.timing});
  for (const ResultRow& c : rows) {
    if (c.backend != candidate || c.status != RowStatus::ok || !baseline_ok.count({c.case_id, c.timing})) continue;
    ++r.compared;
    if (!bitwise_equal_names(c.bitwise_equal_to).count(baseline)) r.breaks.push_back(&c);
  }
  return r;
}

}  // namespace attnbench
