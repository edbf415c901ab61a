// The untimed validation step of one backend (runner-internal): init_forward_metadata, then every layer's
// forward on a poisoned (NaN) output; each layer's output is copied to the host and hashed, and the
// validated layers (the first and the last) are compared with the reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/attention_backend.hpp"
#include "report/results_io.hpp"
#include "runner/validation.hpp"
#include "runner/workload.hpp"

namespace attnbench {

struct ValidationStep {
  ErrorStats err;                         // the validated layers against the reference, merged
  bool sampled = false;                   // the reference checked sampled rows only
  int requests_checked = 0;
  std::uint64_t output_hash = 0;          // every layer's output, in layer order
  std::vector<unsigned char> first_layer; // host copy of layer 0's output (peer comparison)
  std::vector<unsigned char> last_layer;  // host copy of the last layer's output (graph replay check)
};

// `refs` holds the reference of each layer of validated_layers(), in that order. Runs under ledger phase "step".
ValidationStep run_validation_step(const Case& c, AttentionBackend& backend, Device& device, Workload& workload,
                                   const std::vector<ReferenceLayer>& refs);

// The reference figures (max abs, relative L2, mismatch fraction, pass) into a row.
void fill_validation(ResultRow& row, const ValidationStep& v);
// "ref: layers 0 1[, first/last rows of each request][, k/b requests][, n NaN/unwritten elements]".
std::string validation_note(const Case& c, const ValidationStep& v);

}  // namespace attnbench
