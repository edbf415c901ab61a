// ForwardBatch: what one forward step hands the attention backend (SGLang's ForwardBatch, attention part).
// It is a view: the device tensors live in a BatchInputs (eager) or in the CUDA-graph runner's static
// buffers; the host copies are what SGLang keeps as *_cpu.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "device/device.hpp"

namespace attnbench {

enum class ForwardMode : std::uint8_t { decode, extend, target_verify };
std::string_view forward_mode_name(ForwardMode m);  // "decode" | "extend" | "verify"

// What a backend is asked to run (AttentionBackend::supports): a step of `mode`, eager or under a CUDA graph.
struct StepKind {
  ForwardMode mode = ForwardMode::decode;
  bool cuda_graph = false;  // captured and replayed (else eager)
  bool sinks = false;       // with attention sinks
  bool any_prefix = false;  // some request has cached tokens (SGLang's extend_no_prefix negated: FlashInfer's path)
};

struct ForwardBatch {
  ForwardMode forward_mode = ForwardMode::decode;
  int batch_size = 0;
  int num_tokens = 0;        // query rows = new tokens = out_cache_loc entries
  int num_draft_tokens = 0;  // target_verify: draft tokens per request (chain, topk = 1)

  // Device tensors.
  const std::int32_t* req_pool_indices = nullptr;    // [batch_size] rows of req_to_token
  const std::int32_t* seq_lens = nullptr;            // [batch_size] tokens in the cache after this step's writes;
                                                     // target_verify: before the draft tokens (SGLang)
  const std::int64_t* out_cache_loc = nullptr;       // [num_tokens] slots of the new tokens
  const std::int32_t* extend_prefix_lens = nullptr;  // [batch_size] extend: cached prefix per request
  const std::int32_t* extend_seq_lens = nullptr;     // [batch_size] extend: new tokens per request

  // Host copies.
  std::vector<std::int32_t> req_pool_indices_cpu, seq_lens_cpu, extend_prefix_lens_cpu, extend_seq_lens_cpu;
  std::vector<std::int64_t> out_cache_loc_cpu;

  std::int64_t seq_lens_sum() const;
  bool extend_no_prefix() const;  // extend with every prefix empty
};

// Host description of a batch: what the engine decided; BatchInputs::load puts it on the device.
struct BatchSpec {
  ForwardMode forward_mode = ForwardMode::decode;
  int num_draft_tokens = 0;
  std::vector<std::int32_t> req_pool_indices, seq_lens, extend_prefix_lens, extend_seq_lens;
  std::vector<std::int64_t> out_cache_loc;
};

// SGLang's CUDA-graph runner pads a batch to the captured size: the extra slots use the padding row of
// req_to_token (req_pool_index 0), seq_len = the backend's fill value and out_cache_loc 0 (the padding slot),
// `width` new tokens each (1 for decode, N for verify). An empty `real` gives the capture-time batch.
BatchSpec pad_batch(const BatchSpec& real, int bs, int fill_value, int width);

// Device input tensors for batches of up to max_bs requests and max_tokens new tokens (like SGLang's
// CUDA-graph runner's static input buffers; eager runs use one sized to the batch).
class BatchInputs {
 public:
  BatchInputs(Device& device, int max_bs, int max_tokens);
  // Copies `spec` into the buffers and returns a view over them. Throws if the batch does not fit.
  ForwardBatch load(const BatchSpec& spec);

 private:
  Device& device_;
  int max_bs_, max_tokens_;
  Buffer req_pool_indices_, seq_lens_, extend_prefix_lens_, extend_seq_lens_;  // [max_bs] int32
  Buffer out_cache_loc_;                                                       // [max_tokens] int64
};

}  // namespace attnbench
