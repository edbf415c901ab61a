#include "runner/sweep_options.hpp"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <map>

#include "core/errors.hpp"
#include "core/files.hpp"
#include "engine/request_lengths.hpp"

namespace attnbench {

namespace {

std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = 14695981039346656037ull) {
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string number(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

template <class T>
std::string joined(const std::vector<T>& v) {
  std::string out;
  for (const T& x : v) {
    if (!out.empty()) out += ',';
    if constexpr (std::is_same_v<T, std::string>)
      out += x;
    else
      out += std::to_string(x);
  }
  return out;
}

std::string boolean(bool b) { return b ? "true" : "false"; }

}  // namespace

SweepOptions sweep_options(const RunPlan& p, const std::vector<std::string>& backends, bool validate_only) {
  const ServerArgs& s = p.model.server;
  SweepOptions o = {
      {"subcommand", validate_only ? "validate" : "run"},
      {"--model", joined(p.models)},
      {"--layers", std::to_string(p.model.layers)},
      {"--tp-size", std::to_string(p.model.tp_size)},
      {"--context-len", std::to_string(s.context_len)},
      {"--allow-overwrite-longer-context-len", boolean(s.allow_overwrite_longer_context_len)},
      {"--max-running-requests", std::to_string(s.max_running_requests)},
      {"--cuda-graph-max-bs", std::to_string(s.cuda_graph_max_bs)},
      {"--cuda-graph-bs", joined(s.cuda_graph_bs)},
      {"--disable-cuda-graph", boolean(s.disable_cuda_graph)},
      {"--enable-deterministic-inference", boolean(s.enable_deterministic_inference)},
      {"--flashinfer-workspace-size", std::to_string(p.model.flashinfer_workspace_size)},
      {"--flashinfer-use-tensor-core", p.model.flashinfer_use_tensor_core},
      {"--flashinfer-use-paged", boolean(s.env_flashinfer_use_paged)},
      {"--trtllm-keep-indptr", boolean(s.trtllm_keep_indptr)},
      {"--sglang", s.sglang_version},
      {"--arch", std::to_string(s.arch)},
      {"--kv-layout", s.kv_layout},
      {"--trtllm-decode-seq-len-splits", std::to_string(s.trtllm_decode_seq_len_splits)},
      // The kind of device, not which one: the ranks of a sharded sweep (--device cuda:N each) are one sweep.
      {"--device", p.model.device.rfind("cuda:", 0) == 0 ? std::string("cuda") : p.model.device},
      {"--page-size", joined(p.page_sizes)},
      {"--backend", joined(backends)},
      {"--mode", joined(p.modes)},
      {"--dtype", joined(p.dtypes)},
      {"--kv-cache-dtype", p.model.kv_cache_dtype},
      {"--batch", joined(p.batches)},
      {"--kv-len", joined(p.kv_lens)},
      {"--prefix-len", joined(p.prefix_lens)},
      {"--extend-len", joined(p.extend_lens)},
      {"--extend-batch", joined(p.extend_batches)},
      {"--verify-batch", joined(p.verify_batches)},
      {"--verify-kv-len", joined(p.verify_kv_lens)},
      {"--length-dist", p.length_dist},
      {"--length-min", std::to_string(p.length_min)},
      {"--zipf-s", number(p.zipf_s)},
      {"--draft-tokens", std::to_string(p.draft_tokens)},
      {"--seed", joined(p.seeds)},
      {"--sinks", boolean(p.sinks)},
      {"--timing", joined(p.timing)},
      {"--warmup", std::to_string(p.sampling.warmup)},
      {"--min-samples", std::to_string(p.sampling.min_samples)},
      {"--max-samples", std::to_string(p.sampling.max_samples)},
      {"--target-spread", number(p.sampling.target_spread_pct)},
      {"--time-budget", number(p.sampling.time_budget_s)},
      {"--no-flush-l2", boolean(p.no_flush_l2)},
      {"--capture-needed-only", boolean(p.capture_needed_only)},
      {"--reference-flop-budget", number(p.reference_flop_budget)},
  };
  if (!p.trace.empty()) {
    // The contents shape the rows (and the file name the case ids, which the rows carry).
    const std::string text = read_input_file(p.trace, "trace", kMaxTraceBytes);
    o.push_back({"--trace", "fnv1a64:" + hex64(fnv1a(text))});
  } else {
    o.push_back({"--trace", ""});
  }
  return o;
}

std::string options_fingerprint(const SweepOptions& options) { return "v1:" + hex64(fnv1a(options_text(options))); }

std::vector<std::pair<std::string, std::string>> options_environment(const SweepOptions& options) {
  return {{kOptionsFingerprintKey, options_fingerprint(options)}, {kOptionsKey, options_text(options)}};
}

void check_resume_options(const std::vector<std::pair<std::string, std::string>>& previous,
                          const SweepOptions& now, const std::string& csv, const std::string& json) {
  const std::string* fingerprint = nullptr;
  const std::string* text = nullptr;
  for (const auto& [k, v] : previous) {
    if (k == kOptionsFingerprintKey) fingerprint = &v;
    if (k == kOptionsKey) text = &v;
  }
  if (!fingerprint)
    throw InputError("--resume: " + printable(json) + " has no " + kOptionsFingerprintKey +
                     " (written by an older attnbench?): cannot tell whether " + printable(csv) +
                     " holds the same sweep; run without --resume to start it again");
  if (*fingerprint == options_fingerprint(now)) return;
  // Which options differ, from the readable list (when it is there).
  std::map<std::string, std::string> before;
  if (text)
    for (const auto& [k, v] : parse_options_text(*text)) before[k] = v;
  std::string diff;
  const auto shown = [](const std::string& v) { return v.empty() ? std::string("(unset)") : printable(v); };
  for (const auto& [k, v] : now) {
    const auto it = before.find(k);
    if (it == before.end()) {
      if (text) diff += (diff.empty() ? "" : ", ") + k + " (not recorded; now " + shown(v) + ")";
      continue;
    }
    if (it->second != v) diff += (diff.empty() ? "" : ", ") + k + " " + shown(it->second) + " (now " + shown(v) + ")";
    before.erase(it);
  }
  for (const auto& [k, v] : before) diff += (diff.empty() ? "" : ", ") + printable(k) + " " + shown(v) + " (now unknown)";
  if (diff.empty()) diff = "the fingerprint " + printable(*fingerprint) + " differs from " + options_fingerprint(now);
  throw InputError("--resume: " + printable(csv) + " was written with other options: " + diff +
                   "; run with those options, or without --resume to start again");
}

}  // namespace attnbench
