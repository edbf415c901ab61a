#include "runner/case.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "core/case_id.hpp"
#include "core/errors.hpp"
#include "core/files.hpp"
#include "engine/request_lengths.hpp"

namespace attnbench {

ForwardMode parse_mode(const std::string& s) {
  if (s == "decode") return ForwardMode::decode;
  if (s == "extend") return ForwardMode::extend;
  if (s == "verify") return ForwardMode::target_verify;
  throw InputError("--mode: unknown mode '" + printable(s) + "' (expected decode, extend or verify)");
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

bool Case::any_prefix() const {
  return std::any_of(prefix_lens.begin(), prefix_lens.end(), [](std::int32_t p) { return p > 0; });
}

namespace {

// The batch sizes and the per-request length axes a mode expands over (mirrors expand_cases).
struct ModeAxes {
  const std::vector<int>* batches;
  std::vector<std::pair<const char*, std::size_t>> lengths;  // (option, values)
  const char* batch_option;
};

ModeAxes mode_axes(const RunPlan& p, ForwardMode mode) {
  if (mode == ForwardMode::extend) {
    const bool own = !p.extend_batches.empty();
    return {own ? &p.extend_batches : &p.batches,
            {{"--prefix-len", p.prefix_lens.size()}, {"--extend-len", p.extend_lens.size()}},
            own ? "--extend-batch" : "--batch"};
  }
  if (mode == ForwardMode::target_verify) {
    const bool own_b = !p.verify_batches.empty(), own_kv = !p.verify_kv_lens.empty();
    return {own_b ? &p.verify_batches : &p.batches,
            {{own_kv ? "--verify-kv-len" : "--kv-len", own_kv ? p.verify_kv_lens.size() : p.kv_lens.size()}},
            own_b ? "--verify-batch" : "--batch"};
  }
  return {&p.batches, {{"--kv-len", p.kv_lens.size()}}, "--batch"};
}

std::string count_text(double v) {
  if (v < 1e15) return std::to_string(static_cast<long long>(v));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
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
    for (const DType dtype : run_dtypes(p.dtypes, model)) {
      model.dtype = dtype;
      apply_kv_cache_dtype(model, p.model);
      for (const auto& mode_name : p.modes) {
        const ForwardMode mode = parse_mode(mode_name);
        for (int page : p.page_sizes) visit(model, mode, page, case_server_args(base, mode, page, p.draft_tokens));
      }
    }
  }
}

SweepSize sweep_size(const RunPlan& p, std::int64_t trace_requests) {
  SweepSize size;
  const double configurations = static_cast<double>(p.models.size()) * static_cast<double>(p.dtypes.size()) *
                                static_cast<double>(p.page_sizes.size());
  const double seeds = static_cast<double>(p.seeds.size());
  for (const std::string& m : p.modes) {
    double cases = 0, requests = 0;
    if (!p.trace.empty()) {
      cases = 1;
      requests = static_cast<double>(std::max<std::int64_t>(1, trace_requests));
    } else {
      const ModeAxes axes = mode_axes(p, parse_mode(m));
      double lengths = 1;
      for (const auto& [option, n] : axes.lengths) lengths *= static_cast<double>(n);
      double batch_sum = 0;
      for (int b : *axes.batches) batch_sum += std::max(0, b);
      cases = static_cast<double>(axes.batches->size()) * lengths;
      requests = batch_sum * lengths;
    }
    size.cases += configurations * seeds * cases;
    size.requests += configurations * seeds * requests;
  }
  return size;
}

void check_sweep_size(const RunPlan& p, std::int64_t trace_requests) {
  const SweepSize size = sweep_size(p, trace_requests);
  if (size.cases <= kMaxSweepCases && size.requests <= kMaxSweepRequests) return;
  // The lists that multiply: every axis with more than one value that some mode expands over.
  std::vector<std::pair<std::string, std::size_t>> lists = {
      {"--model", p.models.size()}, {"--dtype", p.dtypes.size()}, {"--mode", p.modes.size()},
      {"--page-size", p.page_sizes.size()}};
  const auto add = [&lists](const std::string& option, std::size_t n) {
    for (const auto& l : lists)
      if (l.first == option) return;
    lists.push_back({option, n});
  };
  int largest_batch = 0;
  const char* batch_option = "--batch";
  if (p.trace.empty()) {
    for (const std::string& m : p.modes) {
      const ModeAxes axes = mode_axes(p, parse_mode(m));
      add(axes.batch_option, axes.batches->size());
      for (const auto& [option, n] : axes.lengths) add(option, n);
      for (int b : *axes.batches)
        if (b > largest_batch) {
          largest_batch = b;
          batch_option = axes.batch_option;
        }
    }
  }
  add("--seed", p.seeds.size());
  std::string names, product;
  for (const auto& [option, n] : lists) {
    if (n < 2) continue;
    names += (names.empty() ? "" : ", ") + option;
    product += (product.empty() ? "" : " x ") + option + " " + std::to_string(n) + " values";
  }
  if (size.cases > kMaxSweepCases)
    throw InputError((names.empty() ? std::string("the sweep") : names) + ": the sweep would expand to " +
                     count_text(size.cases) + " cases" + (product.empty() ? "" : " (" + product + ")") +
                     ", more than the limit of " + count_text(kMaxSweepCases) + "; narrow these lists");
  const std::string who = !p.trace.empty() ? "--trace " + printable(p.trace) : std::string(batch_option);
  throw InputError(who + ": the sweep would build " + count_text(size.requests) + " requests over its " +
                   count_text(size.cases) + " cases" +
                   (p.trace.empty() ? " (" + std::string(batch_option) + " up to " + std::to_string(largest_batch) +
                                          " requests per case)"
                                    : " (" + std::to_string(trace_requests) + " requests per case)") +
                   ", more than the limit of " + count_text(kMaxSweepRequests) + "; narrow " +
                   (names.empty() ? who : names + ", " + who));
}

std::vector<Case> expand_cases(const RunPlan& p) {
  validate(p);  // checks the sweep's size too (a trace counted as one request per case)
  const LengthDist dist = parse_length_dist(p.length_dist);
  // The lower end of a drawn length: --length-min, which must not pass the length L it is drawn up to (the id says
  // "[min,L]"; clamping it would run fixed lengths under a distribution's name).
  const auto low_end = [&](int L, const char* axis) {
    if (dist != LengthDist::fixed && p.length_min > L)
      throw InputError("--length-min: " + std::to_string(p.length_min) + " is above " + axis + " " + std::to_string(L) +
                       " (lengths are drawn in [--length-min, L])");
    return std::max(1, std::min(p.length_min, L));
  };
  std::vector<TraceRequest> trace;
  if (!p.trace.empty()) {
    trace = read_trace(p.trace);
    check_sweep_size(p, static_cast<std::int64_t>(trace.size()));
  }

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
      // Before any length is drawn: a batch beyond R would allocate its lengths in vain.
      if (ax.batch > server.max_running_requests)
        throw InputError((trace.empty() ? std::string("--batch") : "--trace " + printable(p.trace)) + ": " +
                         std::to_string(ax.batch) + " requests exceed --max-running-requests " +
                         std::to_string(server.max_running_requests));
      for (std::uint64_t seed : p.seeds) {
        Case c;
        c.model = model;
        c.server = server;
        c.mode = mode;
        c.batch = ax.batch;
        c.seed = seed;
        c.sinks = p.sinks || model.has_sinks;  // GPT-OSS learns its sinks: on without --sinks
        c.draft_tokens = mode == ForwardMode::target_verify ? p.draft_tokens : 0;
        CaseIdParts id;  // the case's id (core/case_id.hpp), filled beside the case
        id.mode = std::string(forward_mode_name(mode));
        id.model = model.name;
        if (p.model.layers > 0) id.layers = model.num_layers;
        if (p.model.tp_size > 0) id.tp_size = model.tp_size;
        id.batch = ax.batch;
        if (trace.empty() && dist != LengthDist::fixed) {  // drawn lengths (a trace's are its own)
          id.length_dist = p.length_dist;
          id.length_min = p.length_min;
        }
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
          // The file name in the id (and so in the CSV and on the terminal), control characters escaped.
          id.trace = printable(p.trace.substr(p.trace.find_last_of('/') + 1));
        } else if (mode == ForwardMode::extend) {
          const std::uint64_t s1 = seed * 2654435761u + 11, s2 = seed * 2654435761u + 29;
          const auto pre = ax.a == 0 ? std::vector<int>(ax.batch, 0)
                                     : draw_lengths(dist, ax.batch, low_end(ax.a, "--prefix-len"), ax.a, p.zipf_s, s1);
          const auto ext = draw_lengths(dist, ax.batch, low_end(ax.b, "--extend-len"), ax.b, p.zipf_s, s2);
          c.prefix_lens.assign(pre.begin(), pre.end());
          c.new_lens.assign(ext.begin(), ext.end());
          id.prefix_len = ax.a;
          id.extend_len = ax.b;
        } else {
          const auto kv = ax.a == 0 ? std::vector<int>(ax.batch, 0)
                                    : draw_lengths(dist, ax.batch,
                                                   low_end(ax.a, mode == ForwardMode::target_verify && !p.verify_kv_lens.empty()
                                                                     ? "--verify-kv-len"
                                                                     : "--kv-len"),
                                                   ax.a, p.zipf_s,
                                                   seed * 2654435761u + 7);
          c.prefix_lens.assign(kv.begin(), kv.end());
          c.new_lens.assign(static_cast<std::size_t>(ax.batch), mode == ForwardMode::decode ? 1 : p.draft_tokens);
          id.kv_len = ax.a;
          if (mode == ForwardMode::target_verify) id.draft_tokens = p.draft_tokens;
        }
        id.page_size = page;
        id.dtype = std::string(dtype_name(model.dtype));
        if (model.kv_dtype() != model.dtype) id.kv_cache_dtype = std::string(dtype_name(model.kv_dtype()));
        if (p.seeds.size() > 1 || seed != 1) id.seed = seed;
        id.sinks = c.sinks;
        c.id = format_case_id(id);
        const std::string length_source = !trace.empty() ? "--trace " + printable(p.trace)
                                          : mode == ForwardMode::extend ? std::string("--prefix-len/--extend-len")
                                                                        : std::string("--kv-len");
        if (c.kv_len_max() > context)
          throw InputError(length_source + ": a request of " + std::to_string(c.kv_len_max()) +
                           " tokens exceeds the context length " + std::to_string(context) + " of " +
                           model.name + " (case " + c.id + ")");
        cases.push_back(std::move(c));
      }
    }
  });
  return cases;
}

}  // namespace attnbench
