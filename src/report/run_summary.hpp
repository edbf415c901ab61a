// The table `attnbench run` / `validate` prints on stdout at the end of a sweep: one line per result row
// (case, backend, timing, status, latency, throughput, reference error and verdict, bitwise-equal peers).
#pragma once

#include <ostream>
#include <vector>

#include "report/backend_catalog.hpp"
#include "report/results_io.hpp"

namespace attnbench {

// Fixed-width columns; "-" where a row has no value (skipped rows, validate without timing).
void print_run_table(std::ostream& out, const std::vector<ResultRow>& rows);

// The ok rows of the change's candidate whose case and timing also have an ok row of its baseline that their
// bitwise_equal_to does not name: where the change under test gave a different output (design: trtllm_mha and
// trtllm_mha_legacy must be bit-identical). Pointers into `rows`, in row order; none when the change names no
// backends.
std::vector<const ResultRow*> bit_identity_breaks(const std::vector<ResultRow>& rows, const BackendChange& change);

}  // namespace attnbench
