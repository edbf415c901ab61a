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

// The change under test against its baseline (design: trtllm_mha and trtllm_mha_legacy must be bit-identical):
// `compared` counts the ok rows of the change's candidate whose case and timing also have an ok row of its baseline;
// `breaks` are those whose bitwise_equal_to does not name the baseline, where the change gave a different output
// (pointers into `rows`, in row order). Both empty when the change names no backends. `run` fails on a break; the
// report prints compared - breaks of compared.
struct BitIdentity {
  int compared = 0;
  std::vector<const ResultRow*> breaks;
};
BitIdentity bit_identity(const std::vector<ResultRow>& rows, const BackendChange& change);

}  // namespace attnbench
