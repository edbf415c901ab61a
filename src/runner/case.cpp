#include "runner/case.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "backends/registry.hpp"
#include "core/errors.hpp"
#include "engine/request_lengths.hpp"

namespace attnbench {

ForwardMode parse_mode(const std::string& s) {
  if (s == "decode") return ForwardMode::decode;
  if (s == "extend") return ForwardMode::extend;
  if (s == "verify") return ForwardMode::target_verify;
  throw InputError("--mode: unknown mode '" + s + "' (expected decode, extend or verify)");
}

int Case::q_tokens() const { return std::accumulate(new_lens.begin(), new_lens.end(), 0); }

std::int64_t Case::kv_tokens() const {
  std::int64_t n = 0;
  for (std::size_t i = 0; i < new_lens.size(); ++i) n += std::int64_t{prefix_lens[i]} + new_lens[i];
  return n;
}

double Case::kv_len_mean() const { return batch > 0 ? static_cast<double>(kv_tokens()) / batch : 0.0; }

std::int64_t Case::kv_len_max() const {
  std::int64_t m = 0;
  for (std::size_t i = 0; i < new_lens.size(); ++i) m = std::max<std::int64_t>(m, std::int64_t{prefix_lens[i]} + new_lens[i]);
  return m;
}

double Case::prefix_len_mean() const {
  return batch > 0 ? std::accumulate(prefix_lens.begin(), prefix_lens.end(), 0.0) / batch : 0.0;
}

namespace {

void require_positive_list(const std::vector<int>& v, const std::string& option, int min = 1) {
  if (v.empty()) throw InputError(option + ": needs at least one value");
  for (int x : v)
    if (x < min) throw InputError(option + ": " + std::to_string(x) + " is below the minimum " + std::to_string(min));
}

std::string dist_suffix(const RunPlan& p) {
  if (p.length_dist == "fixed") return "";
  return "/" + p.length_dist + "[" + std::to_string(p.length_min) + ",L]";
}

}  // namespace

std::vector<Case> expand_cases(const RunPlan& p) {
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
  if (p.draft_tokens < 1 || p.draft_tokens > 16) throw InputError("--draft-tokens: must be in [1, 16]");
  if (p.length_min < 0) throw InputError("--length-min: must be >= 0");
  const LengthDist dist = parse_length_dist(p.length_dist);
  if (dist == LengthDist::zipf && !(p.zipf_s > 0 && std::isfinite(p.zipf_s)))
    throw InputError("--zipf-s: must be a finite number > 0 (got " + std::to_string(p.zipf_s) + ")");
  std::vector<TraceRequest> trace;
  if (!p.trace.empty()) trace = read_trace(p.trace);

  std::vector<Case> cases;
  for (const auto& model_name : p.models) {
    ModelConfig model = find_model_preset(model_name);
    if (p.layers < 0) throw InputError("--layers: must be positive");
    if (p.layers > 0) model.num_layers = p.layers;
    if (p.tp_size < 0) throw InputError("--tp-size: must be positive");
    if (p.tp_size > 0) model.tp_size = p.tp_size;
    for (const auto& dtype_str : p.dtypes) {
      model.dtype = parse_dtype(dtype_str, "--dtype");
      for (const auto& mode_name : p.modes) {
        const ForwardMode mode = parse_mode(mode_name);
        for (int page : p.page_sizes) {
          ServerArgs server = p.server;
          server.page_size = page;
          server.speculative_num_draft_tokens = mode == ForwardMode::target_verify ? p.draft_tokens : 0;
          validate_server_args(server, model);
          for (const auto& b : p.backends) find_backend(b).validate(model, server);
          const int context = server.effective_context_len(model);
          // Length axes: (batch, first length, second length) triples.
          struct Axis {
            int batch, a, b;
          };
          std::vector<Axis> axes;
          if (!trace.empty()) {
            axes.push_back({static_cast<int>(trace.size()), 0, 0});
          } else {
            const bool ext_mode = mode == ForwardMode::extend, ver_mode = mode == ForwardMode::target_verify;
            const std::vector<int>& batches = ext_mode && !p.extend_batches.empty()   ? p.extend_batches
                                              : ver_mode && !p.verify_batches.empty() ? p.verify_batches
                                                                                      : p.batches;
            const std::vector<int>& kv_lens = ver_mode && !p.verify_kv_lens.empty() ? p.verify_kv_lens : p.kv_lens;
            for (int batch : batches) {
              if (ext_mode) {
                for (int pre : p.prefix_lens)
                  for (int ext : p.extend_lens) axes.push_back({batch, pre, ext});
              } else {
                for (int kv : kv_lens) axes.push_back({batch, kv, 0});
              }
            }
          }
          for (const Axis& ax : axes) {
            for (std::uint64_t seed : p.seeds) {
              Case c;
              c.model = model;
              c.server = server;
              c.mode = mode;
              c.batch = ax.batch;
              c.seed = seed;
              c.sinks = p.sinks;
              c.draft_tokens = mode == ForwardMode::target_verify ? p.draft_tokens : 0;
              const std::string mname(forward_mode_name(mode));
              std::string id = mname + "/" + model.name;
              if (p.layers > 0) id += "/L=" + std::to_string(model.num_layers);
              if (p.tp_size > 0) id += "/tp=" + std::to_string(model.tp_size);
              if (!trace.empty()) {
                for (const auto& r : trace) {
                  if (mode == ForwardMode::extend) {
                    c.prefix_lens.push_back(r.prefix_len);
                    c.new_lens.push_back(r.extend_len);
                  } else {  // decode / verify: the trace's whole request is the cached context
                    c.prefix_lens.push_back(r.prefix_len + r.extend_len);
                    c.new_lens.push_back(mode == ForwardMode::decode ? 1 : p.draft_tokens);
                  }
                }
                std::string base = p.trace.substr(p.trace.find_last_of('/') + 1);
                id += "/trace=" + base + "/b=" + std::to_string(c.batch);
              } else if (mode == ForwardMode::extend) {
                const std::uint64_t s1 = seed * 2654435761u + 11, s2 = seed * 2654435761u + 29;
                const auto pre = ax.a == 0 ? std::vector<int>(ax.batch, 0)
                                           : draw_lengths(dist, ax.batch, std::max(1, std::min(p.length_min, ax.a)), ax.a, p.zipf_s, s1);
                const auto ext = draw_lengths(dist, ax.batch, std::max(1, std::min(p.length_min, ax.b)), ax.b, p.zipf_s, s2);
                c.prefix_lens.assign(pre.begin(), pre.end());
                c.new_lens.assign(ext.begin(), ext.end());
                id += "/b=" + std::to_string(ax.batch) + "/prefix=" + std::to_string(ax.a) + "/ext=" + std::to_string(ax.b) +
                      dist_suffix(p);
              } else {
                const auto kv = ax.a == 0 ? std::vector<int>(ax.batch, 0)
                                          : draw_lengths(dist, ax.batch, std::max(1, std::min(p.length_min, ax.a)), ax.a, p.zipf_s,
                                                         seed * 2654435761u + 7);
                c.prefix_lens.assign(kv.begin(), kv.end());
                c.new_lens.assign(static_cast<std::size_t>(ax.batch), mode == ForwardMode::decode ? 1 : p.draft_tokens);
                id += "/b=" + std::to_string(ax.batch) + "/kv=" + std::to_string(ax.a) + dist_suffix(p);
                if (mode == ForwardMode::target_verify) id += "/draft=" + std::to_string(p.draft_tokens);
              }
              id += "/p=" + std::to_string(page) + "/" + std::string(dtype_name(model.dtype));
              if (p.seeds.size() > 1 || seed != 1) id += "/seed=" + std::to_string(seed);
              if (p.sinks) id += "/sinks";
              const std::string length_source = !trace.empty() ? "--trace " + p.trace
                                                : mode == ForwardMode::extend ? std::string("--prefix-len/--extend-len")
                                                                              : std::string("--kv-len");
              if (c.kv_len_max() > context)
                throw InputError(length_source + ": a request of " + std::to_string(c.kv_len_max()) +
                                 " tokens exceeds the context length " + std::to_string(context) + " of " + model.name +
                                 " (case " + id + ")");
              if (c.batch > server.max_running_requests)
                throw InputError((trace.empty() ? std::string("--batch") : "--trace " + p.trace) + ": " +
                                 std::to_string(c.batch) + " requests exceed --max-running-requests " +
                                 std::to_string(server.max_running_requests));
              c.id = id;
              cases.push_back(std::move(c));
            }
          }
        }
      }
    }
  }
  return cases;
}

}  // namespace attnbench
