#include "runner/case_list.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>

#include "backends/registry.hpp"
#include "report/results_io.hpp"

namespace attnbench {

namespace {

template <class T>
std::string join(const std::vector<T>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ";" : "") + std::to_string(v[i]);
  return out;
}

std::string number(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form, no locale
  return std::string(buf, r.ptr);
}

// The value of the fact `name` some registered backend derives; std::logic_error when none does (a column
// of the schema with no backend behind it is a programming error, not an input error).
const std::string& fact(const DerivedFacts& facts, const std::string& name) {
  for (const auto& [n, v] : facts)
    if (n == name) return v;
  throw std::logic_error("case list: no registered backend derives '" + name + "'");
}

}  // namespace

const std::vector<std::string>& case_list_columns() {
  static const std::vector<std::string> k = {
      "case_list_version", "case_id", "mode", "model", "architecture", "layers", "num_qo_heads", "num_kv_heads",
      "num_attention_heads", "head_dim", "dtype", "page_size", "batch", "q_tokens", "prefix_lens", "new_lens",
      "draft_tokens", "seed", "sinks", "layer_windows", "sm_scale", "context_len", "max_running_requests",
      "cuda_graph_max_bs", "flashinfer_workspace_bytes", "flashinfer_use_tensor_cores", "flashinfer_use_paged",
      "trtllm_workspace_bytes", "timings", "warmup", "min_samples", "max_samples", "target_spread_pct",
      "time_budget_s", "flush_l2", "kv_cache_dtype", "k_scale", "v_scale", "runner_sliding_window_size",
      "flashinfer_extend_ragged", "config_sliding_window"};
  return k;
}

void write_case_list_csv(std::ostream& os, const std::vector<Case>& cases, const RunSettings& s,
                         const std::vector<std::string>& timings) {
  const auto& cols = case_list_columns();
  for (std::size_t i = 0; i < cols.size(); ++i) os << (i ? "," : "") << cols[i];
  os << "\n";
  std::string timing_list;
  for (const auto& t : timings) timing_list += (timing_list.empty() ? "" : ";") + t;
  for (const Case& c : cases) {
    const ModelConfig& m = c.model;
    // Columns the backends' constructors decide from the model and the environment, as the registry's
    // backends derive them (no backend is constructed, nothing is allocated).
    const DerivedFacts facts = derived_facts(m, c.server);
    std::vector<int> windows;
    for (int l = 0; l < m.num_layers; ++l) windows.push_back(m.layer_sliding_window_size(l));
    const std::vector<std::string> cells = {
        std::to_string(kCaseListSchemaVersion), csv_field(c.id), std::string(forward_mode_name(c.mode)), csv_field(m.name),
        m.architecture, std::to_string(m.num_layers), std::to_string(m.num_qo_heads()), std::to_string(m.num_kv_heads()),
        std::to_string(m.num_attention_heads), std::to_string(m.head_dim), std::string(dtype_name(m.dtype)),
        std::to_string(c.server.page_size), std::to_string(c.batch), std::to_string(c.q_tokens()), join(c.prefix_lens),
        join(c.new_lens), std::to_string(c.draft_tokens), std::to_string(c.seed), c.sinks ? "1" : "0", join(windows),
        // The layer's float scaling, as the workload sets it (ModelConfig::sm_scale: 1 / sqrt(head_dim) in float,
        // or query_pre_attn_scalar**-0.5 for Gemma-2/3).
        number(static_cast<double>(m.sm_scale())),
        std::to_string(c.server.effective_context_len(m)), std::to_string(c.server.max_running_requests),
        std::to_string(c.server.cuda_graph_max_bs), fact(facts, "flashinfer_workspace_bytes"),
        fact(facts, "flashinfer_use_tensor_cores"),
        c.server.env_flashinfer_use_paged ? "1" : "0", fact(facts, "trtllm_workspace_bytes"), timing_list,
        std::to_string(s.sampling.warmup), std::to_string(s.sampling.min_samples), std::to_string(s.sampling.max_samples),
        number(s.sampling.target_spread_pct), number(s.sampling.time_budget_s), s.flush_l2 ? "1" : "0",
        // The KV cache's storage dtype (the model dtype unless --kv-cache-dtype fp8_*) and SGLang's per-tensor
        // scales (layer.k_scale_float / v_scale_float).
        std::string(dtype_name(m.kv_dtype())), number(m.k_scale), number(m.v_scale),
        // SGLang's model_runner.sliding_window_size (None written -1): the windowed layers' window where the model
        // runner learns it, which is what makes FlashInfer plan its two wrapper sets (ModelConfig::
        // runner_sliding_window); -1 for a model without windows and for Cohere2, whose layers carry windows that
        // only trtllm_mha applies.
        std::to_string(m.has_sliding_window() && m.runner_sliding_window ? m.sliding_window + m.sliding_window_offset
                                                                         : -1),
        fact(facts, "flashinfer_extend_ragged"),
        // config.sliding_window as the result rows' sliding_window column reports it (-1: no layer has a window);
        // the layers' windows derive from it by the class's rule (ModelConfig::sliding_window_offset)
        std::to_string(m.has_sliding_window() ? m.sliding_window : -1)};
    for (std::size_t i = 0; i < cells.size(); ++i) os << (i ? "," : "") << cells[i];
    os << "\n";
  }
}

}  // namespace attnbench
