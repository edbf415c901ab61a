// The table `attnbench run` / `validate` prints on stdout at the end of a sweep: one line per result row
// (case, backend, timing, status, latency, throughput, reference error and verdict, bitwise-equal peers).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "report/results_io.hpp"

namespace attnbench {

// Fixed-width columns; "-" where a row has no value (skipped rows, validate without timing).
void print_run_table(std::ostream& out, const std::vector<ResultRow>& rows);

// The rows of `candidate` (ok) whose case and timing also have an ok row of `baseline` that their
// bitwise_equal_to does not name: where the change under test gave a different output (design: trtllm_mha and
// trtllm_mha_legacy must be bit-identical). Pointers into `rows`, in row order.
std::vector<const ResultRow*> bit_identity_breaks(const std::vector<ResultRow>& rows, const std::string& baseline,
                                                  const std::string& candidate);

}  // namespace attnbench
