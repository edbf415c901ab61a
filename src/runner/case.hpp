// The workload as a value: sweep axes (RunPlan) expand into cases (a pure function, pinned by a test), each
// with a canonical id, e.g. "decode/llama-3.1-8b/b=64/kv=4096/p=16/bf16".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/forward_batch.hpp"
#include "engine/model_config.hpp"
#include "engine/server_args.hpp"

namespace attnbench {

// List-valued options expand to their cartesian product, in this order (outermost first):
// model, dtype, mode, page size, batch, lengths (decode / verify: kv_len; extend: prefix_len x extend_len), seed.
struct RunPlan {
  std::vector<std::string> models = {"llama-3.1-8b"};
  int layers = 0;   // 0: the preset's
  int tp_size = 0;  // 0: the preset's
  ServerArgs server;  // page_size and speculative_num_draft_tokens are set per case
  std::vector<int> page_sizes = {64};
  std::vector<std::string> modes = {"decode"};
  std::vector<std::string> dtypes = {"bf16"};
  std::vector<int> batches = {16};
  std::vector<int> kv_lens = {1024};      // decode / verify: cached tokens per request before the step
  std::vector<int> prefix_lens = {0};     // extend: cached prefix per request
  std::vector<int> extend_lens = {512};   // extend: new tokens per request
  std::vector<int> extend_batches;        // extend: batch sizes (empty: `batches`)
  std::vector<int> verify_batches;        // verify: batch sizes (empty: `batches`)
  std::vector<int> verify_kv_lens;        // verify: cached tokens (empty: `kv_lens`)
  std::string length_dist = "fixed";      // fixed | uniform | zipf: per-request lengths in [length_min, L]
  int length_min = 1;
  double zipf_s = 1.1;
  int draft_tokens = 4;                   // verify: tokens per request (chain speculation, topk = 1)
  std::string trace;                      // CSV request_id,prefix_len,extend_len: replaces batch and lengths
  std::vector<std::uint64_t> seeds = {1};
  bool sinks = false;                     // attention-sink logits per head (GPT-OSS style)
  std::vector<std::string> backends;      // validated against each case (page sizes, heads)
};

struct Case {
  std::string id;
  ModelConfig model;
  ServerArgs server;
  ForwardMode mode = ForwardMode::decode;
  int batch = 0;
  std::vector<std::int32_t> prefix_lens;  // per request: tokens cached before this step
  std::vector<std::int32_t> new_lens;     // per request: tokens this step (1 decode, N verify, extend length)
  int draft_tokens = 0;                   // verify
  std::uint64_t seed = 0;
  bool sinks = false;

  int q_tokens() const;
  std::int64_t kv_tokens() const;           // sum over requests of prefix + new
  double kv_len_mean() const;               // (prefix + new) averaged over requests
  std::int64_t kv_len_max() const;
  double prefix_len_mean() const;
};

// Expands and validates (InputError naming the option: lengths vs context, page sizes per backend, ...).
std::vector<Case> expand_cases(const RunPlan& plan);

ForwardMode parse_mode(const std::string& s);  // decode | extend | verify; InputError naming --mode

}  // namespace attnbench
