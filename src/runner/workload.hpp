// The engine of one case on one device: pools sized for the case, a KV cache filled with seeded random
// data, req_to_token rows, the ForwardBatch and the seeded q / k / v of the step. Every backend of a case
// gets its own Workload, built identically (same seed, same slot map).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backends/attention_backend.hpp"
#include "engine/forward_batch.hpp"
#include "engine/memory_pool.hpp"
#include "engine/model_runner.hpp"
#include "runner/case.hpp"

namespace attnbench {

// Value ranges of the seeded inputs: q wider than k so attention is peaked enough to expose indexing errors.
inline constexpr float kQueryRange = 4.0f;
inline constexpr float kKvRange = 1.0f;

// Seeds of a case's tensors (the reference regenerates the values from them on the host).
struct WorkloadSeeds {
  std::uint64_t pool, q, k_new, v_new, sinks;
};
WorkloadSeeds workload_seeds(std::uint64_t case_seed);

// The step's batch on the host: what the engine decided (rows 1..batch of req_to_token, slots per token).
struct HostBatch {
  BatchSpec spec;
  std::vector<std::vector<std::int32_t>> slots;  // per request: slot of every logical position
  std::vector<int> q_offset;                     // per request: first query row
};

class Workload {
 public:
  Workload(Device& device, const Case& c);  // allocations are tagged engine.* in phase "engine"

  ModelRunner& model_runner() { return runner_; }
  const HostBatch& host() const { return host_; }
  const ForwardBatch& forward_batch() const { return fb_; }
  const std::vector<Layer>& layers() const { return layers_; }
  AttentionIO io() const { return {q_.data(), k_.data(), v_.data(), o_.data()}; }
  const Buffer& output() const { return o_; }
  std::int64_t output_bytes() const { return o_.bytes(); }
  void poison_output();
  const Case& spec_case() const { return case_; }

 private:
  Device& device_;
  Case case_;
  ModelRunner runner_;
  std::unique_ptr<ReqToTokenPool> req_to_token_pool_;
  std::unique_ptr<TokenToKVPool> token_to_kv_pool_;
  std::unique_ptr<BatchInputs> inputs_;
  HostBatch host_;
  ForwardBatch fb_;
  Buffer q_, k_, v_, o_;  // [T, Hq, D], [T, Hkv, D] x2, [T, Hq, D]
  Buffer sinks_;          // [Hq] float (with --sinks)
  std::vector<Layer> layers_;
};

// The host batch of a case (slot map included) without any device: a pure function of the case.
HostBatch plan_host_batch(const Case& c, std::int64_t* pool_capacity_tokens = nullptr);

}  // namespace attnbench
