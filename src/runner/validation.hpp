// Validation: every checked output element against the Eigen reference (max abs error, relative L2 error,
// fraction outside atol + rtol * |ref|, NaN = fail), with the per-dtype tolerances in one place, and the
// reference inputs regenerated on the host from the seeds and the engine's slot map: the reference never
// reads device memory or any backend's metadata.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/attention_backend.hpp"
#include "core/dtype.hpp"
#include "runner/case.hpp"
#include "runner/workload.hpp"

namespace attnbench {

// Four units in the last place of the storage dtype at 1.0 (outputs are O(1)): inputs are exact in the
// dtype, accumulation is fp32, and the extend path rounds twice (two partial states, then the merge).
// An fp8 KV cache (kv != t) keeps the output dtype's tolerance: the reference reads the same fp8-stored
// values the kernels read (the storage error is in the inputs both see), fp8 -> fp32 conversion is exact, and
// the scales are applied in fp32 (logit and output factors); what remains is the kernel's fp32 accumulation and
// its bf16 / fp16 rounding of P and the output, as without fp8.
struct Tolerance {
  double atol, rtol;
};
Tolerance tolerance_for(DType t, DType kv);
inline Tolerance tolerance_for(DType t) { return tolerance_for(t, t); }

struct ErrorStats {
  double max_abs = 0.0;
  double sum_sq_err = 0.0, sum_sq_ref = 0.0;
  std::int64_t elements = 0, mismatches = 0, nans = 0;

  void add(double got, double ref, const Tolerance& tol);
  void merge(const ErrorStats& o);
  double rel_l2() const;
  double mismatch_frac() const;
  bool pass() const { return elements > 0 && nans == 0 && mismatches == 0; }
};

// Reference output of one layer of a case, for a subset of query rows: all of them when the reference work
// fits `flop_budget`; otherwise the first and last rows of every request (which see the fewest and the most
// keys), and if that is still over budget, those rows of every k-th request (the first and last always).
struct ReferenceLayer {
  int layer = 0;
  std::vector<int> rows;     // query rows checked (global row index), ascending
  std::vector<double> o;     // [rows.size(), Hq, D]
  bool sampled = false;      // true when not every row is checked
  int requests_checked = 0;
};
// With an fp8 KV cache, the inputs pass through fp8 as `view` says (cached tokens always: stored * scale).
// The scale is the model's (ModelConfig::sm_scale); the model's logit cap applies when `logit_cap` (the
// backend's AttentionBackend::applies_logit_cap: SGLang's trtllm_mha passes none).
ReferenceLayer reference_layer(const Case& c, const HostBatch& h, int layer, double flop_budget,
                               const Fp8ReadView& view = {}, bool logit_cap = true);

// Compares a backend's output of one layer (host copy, storage dtype) with the reference.
ErrorStats compare_with_reference(const Case& c, const ReferenceLayer& ref, const void* output_host);

// Which layers are checked against the reference: the first and the last (all when there are at most two).
std::vector<int> validated_layers(int num_layers);

// FNV-1a over bytes (bitwise comparisons between backends and between graph and eager outputs).
std::uint64_t hash_bytes(const void* data, std::size_t n, std::uint64_t h = 1469598103934665603ull);

}  // namespace attnbench
