// The table `attnbench run` / `validate` prints on stdout at the end of a sweep: one line per result row
// (case, backend, timing, status, latency, throughput, reference error and verdict, bitwise-equal peers).
#pragma once

#include <ostream>
#include <vector>

#include "report/results_io.hpp"

namespace attnbench {

// Fixed-width columns; "-" where a row has no value (skipped rows, validate without timing).
void print_run_table(std::ostream& out, const std::vector<ResultRow>& rows);

}  // namespace attnbench
