#include "runner/plan.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <set>
#include <type_traits>

#include "backends/registry.hpp"
#include "core/errors.hpp"
#include "core/files.hpp"
#include "engine/forward_batch.hpp"
#include "engine/request_lengths.hpp"
#include "runner/case.hpp"

namespace attnbench {

template <class T>
void reject_repeated(const std::vector<T>& values, const std::string& option) {
  std::set<T> seen;
  for (const T& v : values) {
    if (seen.insert(v).second) continue;
    std::string shown;
    if constexpr (std::is_same_v<T, std::string>)
      shown = printable(v);
    else
      shown = std::to_string(v);
    throw InputError(option + ": the value '" + shown + "' is given twice (a list holds each value once)");
  }
}
template void reject_repeated(const std::vector<int>&, const std::string&);
template void reject_repeated(const std::vector<std::uint64_t>&, const std::string&);
template void reject_repeated(const std::vector<std::string>&, const std::string&);

void note_unapplied_window(const ModelConfig& model) {
  if (model.window_ignored <= 0) return;
  static std::set<std::string> told;  // once per model and process: a user who wrote the window should know
  if (told.insert(model.name).second)
    std::cerr << "attnbench: note: " << printable(model.name) << ": sliding_window " << model.window_ignored
              << " not applied: SGLang's " << printable(model.architecture)
              << " passes no window to its attention layers (every layer runs full attention, one FlashInfer wrapper set)\n";
}

ModelConfig resolve_model(const std::string& name, const ModelOptions& m) {
  ModelConfig model = find_model_preset(name);
  if (m.layers < 0) throw InputError("--layers: must be positive (got " + std::to_string(m.layers) + ")");
  if (m.layers > model.num_layers)  // a model has the layers its config says (num_hidden_layers)
    throw InputError("--layers: " + std::to_string(m.layers) + " is more than the " +
                     std::to_string(model.num_layers) + " layers of model '" + printable(name) + "'");
  if (m.layers > 0) model.num_layers = m.layers;
  if (m.tp_size < 0) throw InputError("--tp-size: must be positive (got " + std::to_string(m.tp_size) + ")");
  if (m.tp_size > 0) model.tp_size = m.tp_size;
  apply_kv_cache_dtype(model, m);
  return model;
}

namespace {
// A --dtype value other than "auto" (parse_dtype's spellings); the error lists auto too.
DType parse_run_dtype(const std::string& d) {
  try {
    return parse_dtype(d, "--dtype");
  } catch (const InputError&) {
    throw InputError("--dtype: unknown dtype '" + printable(d) + "' (expected auto, bf16, fp16 or fp32)");
  }
}
}  // namespace

std::vector<DType> run_dtypes(const std::vector<std::string>& dtypes, const ModelConfig& model) {
  std::vector<DType> out;
  for (const std::string& d : dtypes) {
    const DType t = d == "auto" ? model.dtype : parse_run_dtype(d);
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  return out;
}

void apply_kv_cache_dtype(ModelConfig& model, const ModelOptions& m) {
  model.kv_fp8 = parse_kv_cache_dtype(m.kv_cache_dtype, model.dtype);
}

ServerArgs resolve_server_args(const ModelOptions& m) {
  reject_repeated(m.server.cuda_graph_bs, "--cuda-graph-bs");
  ServerArgs s = m.server;
  if (m.flashinfer_workspace_size < 0)
    throw InputError("--flashinfer-workspace-size: must be positive (got " + std::to_string(m.flashinfer_workspace_size) + ")");
  if (m.flashinfer_workspace_size > 0) s.env_flashinfer_workspace_size = m.flashinfer_workspace_size;
  if (!m.flashinfer_use_tensor_core.empty()) s.env_flashinfer_use_tensor_core = m.flashinfer_use_tensor_core == "true";
  if (!m.arch.empty()) s.arch = parse_arch(m.arch);
  find_sglang_profile(s.sglang_version);  // InputError naming --sglang
  return s;
}

std::vector<std::string> resolve_backends(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names) {
    if (n == "all") {
      for (const auto& b : backend_names())
        if (std::find(out.begin(), out.end(), b) == out.end()) out.push_back(b);
      continue;
    }
    find_backend(n);
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  if (out.empty()) throw InputError("--attention-backend (--backend): no backend selected");
  return out;
}

namespace {

void require_positive_list(const std::vector<int>& v, const std::string& option, int min = 1) {
  if (v.empty()) throw InputError(option + ": needs at least one value");
  for (int x : v)
    if (x < min) throw InputError(option + ": " + std::to_string(x) + " is below the minimum " + std::to_string(min));
}

void validate_axes(const RunPlan& p) {
  // Unknown names first (a repeated option may also bring an unknown value: that is the error to name).
  std::vector<ModelConfig> models;  // each --model resolved once (a config.json is read and checked here)
  std::vector<std::string> model_names;
  for (const auto& m : p.models) model_names.push_back(models.emplace_back(find_model_preset(m)).name);
  for (const auto& m : p.modes) parse_mode(m);
  for (const auto& d : p.dtypes)
    if (d != "auto") parse_run_dtype(d);
  for (const ModelConfig& model : models)  // (--dtype auto: each model's own dtype against --kv-cache-dtype)
    for (const DType d : run_dtypes(p.dtypes, model)) parse_kv_cache_dtype(p.model.kv_cache_dtype, d);
  reject_repeated(p.models, "--model");
  {  // two spellings of one model (a preset and a config.json of the same name, two folders named alike): their
     // case ids would be the same, and compare / report / --resume would take one for the other
    std::map<std::string, std::string> by_name;
    for (std::size_t i = 0; i < p.models.size(); ++i) {
      const std::string& m = p.models[i];
      const auto [at, fresh] = by_name.emplace(model_names[i], m);
      if (!fresh)
        throw InputError("--model: '" + printable(at->second) + "' and '" + printable(m) + "' are both model '" +
                         printable(at->first) + "' (case ids name the model: give one, or rename a config's folder)");
    }
  }
  reject_repeated(p.backends, "--attention-backend (--backend)");
  reject_repeated(p.modes, "--mode");
  reject_repeated(p.dtypes, "--dtype");
  reject_repeated(p.seeds, "--seed");
  reject_repeated(p.page_sizes, "--page-size");
  reject_repeated(p.batches, "--batch");
  reject_repeated(p.kv_lens, "--kv-len");
  reject_repeated(p.prefix_lens, "--prefix-len");
  reject_repeated(p.extend_lens, "--extend-len");
  reject_repeated(p.extend_batches, "--extend-batch");
  reject_repeated(p.verify_batches, "--verify-batch");
  reject_repeated(p.verify_kv_lens, "--verify-kv-len");
  reject_repeated(p.timing, "--timing");
  if (p.models.empty()) throw InputError("--model: needs at least one preset");
  if (p.modes.empty()) throw InputError("--mode: needs at least one mode");
  if (p.dtypes.empty()) throw InputError("--dtype: needs at least one dtype");
  if (p.seeds.empty()) throw InputError("--seed: needs at least one seed");
  require_positive_list(p.page_sizes, "--page-size");
  require_positive_list(p.batches, "--batch");
  require_positive_list(p.kv_lens, "--kv-len", 0);
  require_positive_list(p.prefix_lens, "--prefix-len", 0);
  require_positive_list(p.extend_lens, "--extend-len");
  if (!p.extend_batches.empty()) require_positive_list(p.extend_batches, "--extend-batch");
  if (!p.verify_batches.empty()) require_positive_list(p.verify_batches, "--verify-batch");
  if (!p.verify_kv_lens.empty()) require_positive_list(p.verify_kv_lens, "--verify-kv-len", 0);
  if (p.draft_tokens < 1 || p.draft_tokens > 16) throw InputError("--speculative-num-draft-tokens (--draft-tokens): must be in [1, 16]");
  if (p.length_min < 0) throw InputError("--length-min: must be >= 0");
  if (parse_length_dist(p.length_dist) == LengthDist::zipf && !(p.zipf_s > 0 && std::isfinite(p.zipf_s)))
    throw InputError("--zipf-s: must be a finite number > 0 (got " + std::to_string(p.zipf_s) + ")");
}

// Every model x dtype x mode x page size: the server arguments and each backend against that configuration.
void validate_configurations(const RunPlan& p, const std::vector<std::string>& backends) {
  for_each_configuration(p, [&](const ModelConfig& model, ForwardMode, int, const ServerArgs& server) {
    validate_server_args(server, model);
    for (const auto& b : backends) find_backend(b).validate(model, server);
    note_unapplied_window(model);  // once it is valid: an error stays the one line on stderr
  });
}

// The user-facing twin of validate_sampling_policy (runner/sampler.hpp): the same rules, named as options.
void validate_timing(const RunPlan& p) {
  for (const auto& t : p.timing)
    if (t != "eager" && t != "graph") throw InputError("--timing: unknown timing '" + t + "' (expected eager, graph)");
  const SamplingPolicy& s = p.sampling;
  if (s.warmup < 0) throw InputError("--warmup: must be >= 0 (got " + std::to_string(s.warmup) + ")");
  if (s.min_samples < 1) throw InputError("--min-samples: must be >= 1 (got " + std::to_string(s.min_samples) + ")");
  if (s.max_samples < s.min_samples)
    throw InputError("--max-samples: " + std::to_string(s.max_samples) + " is below --min-samples " +
                     std::to_string(s.min_samples));
  if (!(s.target_spread_pct >= 0 && std::isfinite(s.target_spread_pct)))
    throw InputError("--target-spread: must be a finite percentage >= 0");
  if (!(s.time_budget_s > 0 && std::isfinite(s.time_budget_s)))
    throw InputError("--time-budget: must be a finite number of seconds > 0");
  if (!(p.reference_flop_budget > 0 && std::isfinite(p.reference_flop_budget)))
    throw InputError("--reference-flop-budget: must be a finite number > 0");
}

}  // namespace

void validate(const RunPlan& plan) {
  resolve_server_args(plan.model);
  const std::vector<std::string> backends = resolve_backends(plan.backends);
  validate_axes(plan);
  check_sweep_size(plan);  // before anything loops over the product of the lists
  validate_configurations(plan, backends);
  validate_timing(plan);
}

RunSettings run_settings(const RunPlan& plan, bool validate_only, const std::vector<std::string>& args) {
  RunSettings s;
  s.timing = !validate_only;
  s.graph = std::find(plan.timing.begin(), plan.timing.end(), "graph") != plan.timing.end();
  s.capture_all = !plan.capture_needed_only;
  s.flush_l2 = !plan.no_flush_l2;
  s.sampling = plan.sampling;
  s.reference_flop_budget = plan.reference_flop_budget;
  s.repro_prefix = std::string("attnbench ") + (validate_only ? "validate" : "run");
  s.repro_options = repro_options(args);
  return s;
}

std::string repro_options(const std::vector<std::string>& args) {
  std::string out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "run" || a == "validate" || a == "--list-cases" || a == "--resume" || a == "-q" || a == "--quiet") continue;
    bool skip = false;
    for (const char* opt : {"--out", "--backend", "--attention-backend", "--case-id", "--json", "--filter", "--shard"}) {
      if (a == opt) {
        ++i;  // and its value
        skip = true;
      } else if (a.rfind(std::string(opt) + "=", 0) == 0) {
        skip = true;
      }
    }
    if (skip) continue;
    const bool quote = a.find_first_of(" '\"$;&|<>*?") != std::string::npos;
    out += (out.empty() ? "" : " ") + (quote ? "'" + a + "'" : a);
  }
  return out;
}

}  // namespace attnbench
