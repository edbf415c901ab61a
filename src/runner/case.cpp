#include "runner/case.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

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

std::string dist_suffix(const RunPlan& p) {
  if (p.length_dist == "fixed") return "";
  return "/" + p.length_dist + "[" + std::to_string(p.length_min) + ",L]";
}

}  // namespace

ServerArgs case_server_args(const ServerArgs& base, ForwardMode mode, int page_size, int draft_tokens) {
  ServerArgs server = base;
  server.page_size = page_size;
  server.speculative_num_draft_tokens = mode == ForwardMode::target_verify ? draft_tokens : 0;
  return server;
}

void for_each_configuration(const RunPlan& p, const ConfigurationVisitor& visit) {
  const ServerArgs base = resolve_server_args(p.model);
  for (const auto& model_name : p.models) {
    ModelConfig model = resolve_model(model_name, p.model);
    for (const auto& dtype_str : p.dtypes) {
      model.dtype = parse_dtype(dtype_str, "--dtype");
      for (const auto& mode_name : p.modes) {
        const ForwardMode mode = parse_mode(mode_name);
        for (int page : p.page_sizes) visit(model, mode, page, case_server_args(base, mode, page, p.draft_tokens));
      }
    }
  }
}

std::vector<Case> expand_cases(const RunPlan& p) {
  validate(p);
  const LengthDist dist = parse_length_dist(p.length_dist);
  std::vector<TraceRequest> trace;
  if (!p.trace.empty()) trace = read_trace(p.trace);

  std::vector<Case> cases;
  for_each_configuration(p, [&](const ModelConfig& model, ForwardMode mode, int page, const ServerArgs& server) {
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
        c.sinks = p.sinks || model.has_sinks;  // GPT-OSS learns its sinks: on without --sinks
        c.draft_tokens = mode == ForwardMode::target_verify ? p.draft_tokens : 0;
        const std::string mname(forward_mode_name(mode));
        std::string id = mname + "/" + model.name;
        if (p.model.layers > 0) id += "/L=" + std::to_string(model.num_layers);
        if (p.model.tp_size > 0) id += "/tp=" + std::to_string(model.tp_size);
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
        if (c.sinks) id += "/sinks";
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
  });
  return cases;
}

}  // namespace attnbench
