// The workload as a value: sweep axes (RunPlan, runner/plan.hpp) expand into cases (a pure function, pinned by a test), each
// with a canonical id, e.g. "decode/llama-3.1-8b/b=64/kv=4096/p=16/bf16".
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/forward_batch.hpp"
#include "engine/model_config.hpp"
#include "engine/server_args.hpp"
#include "runner/plan.hpp"

namespace attnbench {

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
  // The case as a backend computes it (case_as_run): which keys the layers' windows hide. `all` for a case as
  // planned; `cached_only` leaves the step's new tokens unwindowed against each other (`none` shows as a model
  // without windows instead).
  LayerWindows windows = LayerWindows::all;

  int q_tokens() const;
  std::int64_t kv_tokens() const;           // sum over requests of prefix + new
  double kv_len_mean() const;               // (prefix + new) averaged over requests
  std::int64_t kv_len_max() const;
  double prefix_len_mean() const;
  bool any_prefix() const;  // some request has cached tokens (SGLang's extend_no_prefix is false)
  StepKind step_kind(bool cuda_graph) const { return {mode, cuda_graph, sinks, any_prefix()}; }
};

// validate(plan), then the cartesian product of its axes, in order; a case beyond what the configuration
// holds (a request longer than the context, a batch beyond --max-running-requests) is an InputError naming
// the option (or trace file) and the case.
std::vector<Case> expand_cases(const RunPlan& plan);

// The server arguments of a case: `base` (resolve_server_args) with the case's page size, and the draft
// tokens of a verify case (SGLang's --speculative-num-draft-tokens; 0 otherwise).
ServerArgs case_server_args(const ServerArgs& base, ForwardMode mode, int page_size, int draft_tokens);

// Every model x dtype x mode x page size of the plan, outermost first (the expansion order): the model
// (preset with --layers / --tp-size and the dtype) and the case_server_args of that mode and page size.
// InputError naming --model, --layers, --tp-size, --dtype or --mode when one does not parse.
using ConfigurationVisitor = std::function<void(const ModelConfig&, ForwardMode, int page_size, const ServerArgs&)>;
void for_each_configuration(const RunPlan& plan, const ConfigurationVisitor& visit);

ForwardMode parse_mode(const std::string& s);  // decode | extend | verify; InputError naming --mode

// Limits of one sweep, checked before any case is built (a case list beyond them would exhaust memory, or take
// longer to expand than to refuse): cases, and requests over all cases (each request holds its lengths).
inline constexpr double kMaxSweepCases = 100000;
inline constexpr double kMaxSweepRequests = 10000000;

// How big `plan` expands: cases and requests over all cases, from the axes' sizes alone (nothing is built).
// `trace_requests`: the requests of the --trace file (read_trace), or 0 when it is not read yet (a trace case
// then counts 1 request). Doubles: the product of long lists may exceed any integer type.
struct SweepSize {
  double cases = 0, requests = 0;
};
SweepSize sweep_size(const RunPlan& plan, std::int64_t trace_requests = 0);

// Throws InputError when sweep_size(plan, trace_requests) is beyond kMaxSweepCases or kMaxSweepRequests, naming
// the options whose lists multiply, e.g. "--batch, --kv-len: the sweep would expand to 1000000 cases (--batch
// 1000 values x --kv-len 1000 values), more than the limit of 100000; narrow these lists".
void check_sweep_size(const RunPlan& plan, std::int64_t trace_requests = 0);

}  // namespace attnbench
