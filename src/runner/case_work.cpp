#include "runner/case_work.hpp"

#include <algorithm>

#include "core/units.hpp"

namespace attnbench {

StepWork step_work(const Case& c) {
  const ModelConfig& m = c.model;
  const double es = dtype_size(m.dtype);        // q, o and the new k / v (model dtype)
  const double kes = dtype_size(m.kv_dtype());  // the KV cache read (1 byte per element with fp8)
  StepWork w;
  const bool spare_new = c.windows == LayerWindows::cached_only;
  for (int l = 0; l < m.num_layers; ++l) {
    const int window = m.layer_sliding_window_size(l);
    double kv_layer = 0;
    for (int i = 0; i < c.batch; ++i) {
      const std::int64_t pre = c.prefix_lens[i], n = c.new_lens[i];
      double pairs = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        const std::int64_t visible = pre + j + 1;
        if (window < 0)
          pairs += static_cast<double>(visible);
        else if (spare_new)  // the cached keys within the window, and every earlier new token
          pairs += static_cast<double>(std::min<std::int64_t>(pre, std::max<std::int64_t>(0, window - j)) + j + 1);
        else
          pairs += static_cast<double>(std::min<std::int64_t>(visible, window + 1));
      }
      w.flops += 4.0 * pairs * m.num_qo_heads() * m.head_dim;
      // cached_only reads the same keys: the first new token's window reaches as far back as any
      const std::int64_t keys = window >= 0 ? std::min<std::int64_t>(pre + n, window + n) : pre + n;
      kv_layer += 2.0 * keys * m.num_kv_heads() * m.head_dim * kes;
    }
    w.bytes += kv_layer;
    if (l == 0) w.kv_bytes_layer = kv_layer;
  }
  const double t = c.q_tokens();
  w.bytes += m.num_layers * t * (2.0 * m.num_qo_heads() + 2.0 * m.num_kv_heads()) * m.head_dim * es;  // q, o, new k, v
  return w;
}

LayerWindows effective_layer_windows(const Case& c, LayerWindows windows) {
  if (!c.model.has_sliding_window()) return LayerWindows::all;
  if (windows == LayerWindows::cached_only) {
    int smallest = -1;
    for (int l = 0; l < c.model.num_layers; ++l) {
      const int w = c.model.layer_sliding_window_size(l);
      if (w >= 0 && (smallest < 0 || w < smallest)) smallest = w;
    }
    const std::int32_t longest = c.new_lens.empty() ? 0 : *std::max_element(c.new_lens.begin(), c.new_lens.end());
    if (longest - 1 <= smallest) return LayerWindows::all;
  }
  return windows;
}

Case case_as_run(const Case& c, LayerWindows windows) {
  windows = effective_layer_windows(c, windows);
  if (windows == LayerWindows::all) return c;
  Case r = c;
  if (windows == LayerWindows::none)
    r.model = c.model.without_windows();
  else
    r.windows = windows;
  return r;
}

CaseMemory estimate_case_memory(const Case& c) {
  const ModelConfig& m = c.model;
  const std::int64_t es = dtype_size(m.dtype), P = c.server.page_size;
  std::int64_t pages = 0, tokens = 0;
  for (int i = 0; i < c.batch; ++i) {
    pages += ceil_div(c.prefix_lens[i] + c.new_lens[i], P);
    tokens += c.prefix_lens[i] + c.new_lens[i];
  }
  const std::int64_t slots = (pages + pages / 4 + 5) * P;
  CaseMemory cm;
  cm.kv_pool_bytes = 2LL * m.num_layers * slots * m.num_kv_heads() * m.head_dim * dtype_size(m.kv_dtype());
  const std::int64_t t = c.q_tokens();
  cm.total_bytes = cm.kv_pool_bytes + 4LL * (c.batch + 1) * c.kv_len_max()           // req_to_token
                   + 4 * t * (m.num_qo_heads() + m.num_kv_heads()) * m.head_dim * es  // q, k, v, o (and graph copies)
                   + 8LL * tokens                                                     // kv_indices / page tables
                   + 2 * GiB;  // workspaces, graph state and capture of the largest backend (legacy: ~1.3 GiB)
  return cm;
}

std::optional<std::string> memory_cap_reason(const CaseMemory& need, std::optional<std::int64_t> available) {
  if (!available || need.total_bytes <= *available * 95 / 100) return std::nullopt;
  return "capped by memory: the case needs about " + format_bytes(need.total_bytes) + " (KV cache " +
         format_bytes(need.kv_pool_bytes) + "), the device has " + format_bytes(*available) + " free";
}

}  // namespace attnbench
