#include "backends/flashinfer_wrappers.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/units.hpp"
#include "kernels/kernel_table.hpp"

namespace attnbench {

namespace {

constexpr int kMinKvChunk = 256;  // smallest split FlashInfer's scheduler makes (tokens, page size 1)

std::vector<std::int32_t> diff(const std::vector<std::int32_t>& indptr) {
  std::vector<std::int32_t> d(indptr.empty() ? 0 : indptr.size() - 1);
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = indptr[i + 1] - indptr[i];
  return d;
}

std::vector<std::int32_t> arange(int n) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

}  // namespace

FlashInferWrapper::FlashInferWrapper(Device& device, std::shared_ptr<Buffer> float_workspace, const std::string& tag)
    : device_(device),
      tag_(tag),
      float_workspace_(std::move(float_workspace)),
      int_workspace_(device.allocate(kFlashInferIntWorkspaceBytes, MemKind::device, tag + ".int_workspace")),
      pin_memory_int_workspace_(
          device.allocate(kFlashInferIntWorkspaceBytes, MemKind::pinned, tag + ".pin_memory_int_workspace")) {}

std::vector<std::int32_t> FlashInferWrapper::read_back(const std::int32_t* device_ptr, int n, const char* what) {
  Buffer host = device_.allocate(4LL * n, MemKind::host, tag_ + ".plan." + what + "_cpu");
  device_.copy(host.data(), device_ptr, 4LL * n);
  device_.synchronize();  // .to("cpu") waits for the device
  return std::vector<std::int32_t>(host.as<std::int32_t>(), host.as<std::int32_t>() + n);
}

void FlashInferWrapper::schedule(const std::vector<std::int32_t>& qo_indptr_host,
                                 const std::vector<std::int32_t>& kv_lens_host, int num_qo_heads, int num_kv_heads,
                                 int head_dim, int cta_tile_q) {
  const int bs = static_cast<int>(kv_lens_host.size());
  plan_ = PlanInfo{};
  plan_.planned = true;
  plan_.batch_size = bs;
  plan_.total_q = qo_indptr_host[bs];
  std::vector<std::int64_t> tiles(static_cast<std::size_t>(bs));
  std::int64_t tiles_total = 0;
  for (int i = 0; i < bs; ++i) {
    const int q_len = qo_indptr_host[i + 1] - qo_indptr_host[i];
    plan_.max_q_len = std::max(plan_.max_q_len, q_len);
    plan_.max_kv_len = std::max(plan_.max_kv_len, kv_lens_host[i]);
    tiles[i] = ceil_div(q_len, cta_tile_q);
    tiles_total += tiles[i];
  }
  // Split the KV only while the unsplit work cannot fill the GPU (num_blocks_per_sm * num_sm CTAs). The
  // rule depends only on the lengths, the batch size and the device, so a plan at CUDA-graph replay makes
  // the same choice as an eager plan of the same batch: graph and eager outputs stay bit-identical.
  const std::int64_t max_grid = 2LL * device_.sm_count();
  // The launch bound depends on the batch shape only (not on lengths), so a captured graph's grid suits
  // every replay of that batch size; the chunk size itself travels through the int workspace.
  plan_.max_num_chunks = static_cast<int>(
      std::max<std::int64_t>(1, max_grid / std::max<std::int64_t>(1, tiles_total * num_kv_heads)));
  auto fits = [&](int chunk) {
    std::int64_t w = 0, worst = 0;
    for (int i = 0; i < bs; ++i) {
      const std::int64_t c = std::max<std::int64_t>(1, ceil_div(kv_lens_host[i], chunk));
      w += tiles[i] * c;
      worst = std::max(worst, c);
    }
    return w * num_kv_heads <= max_grid && worst <= plan_.max_num_chunks;
  };
  if (plan_.max_num_chunks > 1 && plan_.max_kv_len > kMinKvChunk) {
    int lo = kMinKvChunk, hi = plan_.max_kv_len;
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (fits(mid))
        hi = mid;
      else
        lo = mid + 1;
    }
    if (lo < plan_.max_kv_len) plan_.kv_chunk_size = lo;
  }
  // Int workspace: [0] the chunk size (what the kernels read), then the work partition, (request, query
  // tile, KV chunk) triples; written to the pinned buffer, then one copy to the device.
  auto* part = pin_memory_int_workspace_.as<std::int32_t>();
  const std::int64_t capacity = kFlashInferIntWorkspaceBytes / 4;
  std::int64_t n = 0;
  part[n++] = plan_.kv_chunk_size;
  for (int i = 0; i < bs; ++i) {
    const std::int64_t chunks =
        plan_.kv_chunk_size > 0 ? std::max<std::int64_t>(1, ceil_div(kv_lens_host[i], plan_.kv_chunk_size)) : 1;
    for (std::int64_t t = 0; t < tiles[i]; ++t)
      for (std::int64_t c = 0; c < chunks; ++c) {
        if (n + 3 > capacity) throw std::runtime_error(tag_ + ": work partition exceeds the 8 MiB int workspace");
        part[n++] = i;
        part[n++] = static_cast<std::int32_t>(t);
        part[n++] = static_cast<std::int32_t>(c);
      }
  }
  plan_.num_work_items = static_cast<int>((n - 1) / 3);
  device_.copy(int_workspace_.data(), part, n * 4);
  plan_.tmp_bytes = split_kv_workspace_bytes(plan_.total_q, plan_.max_num_chunks, num_qo_heads, head_dim);
  if (plan_.tmp_bytes > float_workspace_->bytes())
    throw std::runtime_error(tag_ + ": split-KV temporaries need " + format_bytes(plan_.tmp_bytes) +
                             ", more than the " + format_bytes(float_workspace_->bytes()) + " float workspace");
}

void FlashInferWrapper::set_kv_data_type(AttentionParams& p, const Layer& layer) const {
  // plan(data_type = the KV dtype, q_data_type = the model dtype) and forward(k_scale = layer.k_scale_float,
  // v_scale = layer.v_scale_float) (flashinfer_backend.py L1476-1489, L1747-1770; sglang-backends.md §3.1).
  p.kv_fp8 = kv_data_type;
  p.k_scale = layer.k_scale;
  p.v_scale = layer.v_scale;
}

void FlashInferWrapper::fill_split(AttentionParams& p) const {
  p.kv_chunk_size = plan_.kv_chunk_size;
  p.kv_chunk_size_ptr = int_workspace_.as<std::int32_t>();
  p.max_num_chunks = plan_.max_num_chunks;
  p.workspace = float_workspace_->data();
  p.workspace_bytes = plan_.tmp_bytes;
}

// ---------------------------------------------------------------------------------------------------------

DecodeWrapper::DecodeWrapper(Device& device, std::shared_ptr<Buffer> float_workspace, const std::string& tag,
                             bool use_tensor_cores, bool use_cuda_graph, int fixed_batch_size)
    : FlashInferWrapper(device, std::move(float_workspace), tag),
      use_tensor_cores_(use_tensor_cores),
      use_cuda_graph_(use_cuda_graph) {
  if (use_cuda_graph && use_tensor_cores) {  // decode.py L917-924: _qo_indptr_buf = arange(fixed_bs + 1)
    qo_indptr_buf_ = device.allocate(4LL * (fixed_batch_size + 1), MemKind::device, tag + ".qo_indptr_buf");
    const auto a = arange(fixed_batch_size + 1);
    device.copy(qo_indptr_buf_.data(), a.data(), 4LL * (fixed_batch_size + 1));
  }
}

void DecodeWrapper::plan(const std::int32_t* kv_indptr, const std::int32_t* kv_indices,
                         const std::int32_t* kv_last_page_len, int batch_size, int num_qo_heads, int num_kv_heads,
                         int head_dim) {
  // decode.py L1431-1432: indptr.to("cpu"), last_page_len.to("cpu").
  const auto indptr_host = read_back(kv_indptr, batch_size + 1, "indptr");
  (void)read_back(kv_last_page_len, batch_size, "last_page_len");
  const auto qo_host = arange(batch_size + 1);
  if (use_tensor_cores_ && !use_cuda_graph_) {  // eager: _qo_indptr_buf = qo_indptr_host.to(device)
    qo_indptr_buf_ = device_.allocate(4LL * (batch_size + 1), MemKind::device, tag_ + ".qo_indptr_buf");
    device_.copy(qo_indptr_buf_.data(), qo_host.data(), 4LL * (batch_size + 1));
  }
  schedule(qo_host, diff(indptr_host), num_qo_heads, num_kv_heads, head_dim, 1);
  kv_indptr_ = kv_indptr;
  kv_indices_ = kv_indices;
}

void DecodeWrapper::fast_plan(const std::vector<std::int32_t>& kv_indptr_host, const std::int32_t* kv_indptr,
                              const std::int32_t* kv_indices, int num_qo_heads, int num_kv_heads, int head_dim) {
  const int bs = static_cast<int>(kv_indptr_host.size()) - 1;
  schedule(arange(bs + 1), diff(kv_indptr_host), num_qo_heads, num_kv_heads, head_dim, 1);
  kv_indptr_ = kv_indptr;
  kv_indices_ = kv_indices;
}

void DecodeWrapper::run(const AttentionIO& io, const void* k_cache, const void* v_cache, const Layer& layer,
                        int num_qo_heads, int num_kv_heads, int head_dim, DType dtype) const {
  if (!plan_.planned) throw std::logic_error(tag_ + ": run() before plan()");
  AttentionParams p;
  p.q = io.q;
  p.o = io.o;
  p.q_len_per_req = 1;
  p.addressing = KvAddressing::token_indices;
  p.k = k_cache;
  p.v = v_cache;
  p.kv_indptr = kv_indptr_;
  p.kv_indices = kv_indices_;
  p.batch_size = plan_.batch_size;
  p.total_q = plan_.batch_size;
  p.max_q_len = 1;
  p.max_kv_len = plan_.max_kv_len;
  p.num_qo_heads = num_qo_heads;
  p.num_kv_heads = num_kv_heads;
  p.head_dim = head_dim;
  p.dtype = dtype;
  p.causal = false;     // one query at the end of its sequence sees every key given
  p.window_left = -1;   // SGLang does not pass window_left to decode: windows are trimmed in the indices
  p.sm_scale = layer.scaling;
  p.logits_soft_cap = layer.logit_cap;  // as the backend planned it (FlashInferBackend::planned_layer)
  set_kv_data_type(p, layer);
  fill_split(p);
  device_.kernels().attention_decode(p, device_.stream());
}

// ---------------------------------------------------------------------------------------------------------

PagedPrefillWrapper::PagedPrefillWrapper(Device& device, std::shared_ptr<Buffer> float_workspace,
                                         const std::string& tag)
    : FlashInferWrapper(device, std::move(float_workspace), tag),
      kv_lens_buffer_(device.allocate(4LL * kFlashInferKvLensBufferEntries, MemKind::device, tag + ".kv_lens_buffer")) {}

void PagedPrefillWrapper::plan(const std::int32_t* qo_indptr, const std::int32_t* kv_indptr,
                               const std::int32_t* kv_indices, const std::int32_t* kv_last_page_len, int batch_size,
                               int num_qo_heads, int num_kv_heads, int head_dim) {
  const auto qo_host = read_back(qo_indptr, batch_size + 1, "qo_indptr");
  const auto kv_host = read_back(kv_indptr, batch_size + 1, "paged_kv_indptr");
  (void)read_back(kv_last_page_len, batch_size, "paged_kv_last_page_len");
  const auto kv_lens = diff(kv_host);  // page size 1: (pages - 1) * 1 + last_page_len = pages
  if (batch_size > kv_lens_buffer_.bytes() / 4)
    kv_lens_buffer_ = device_.allocate(4LL * batch_size, MemKind::device, tag_ + ".kv_lens_buffer");
  device_.copy(kv_lens_buffer_.data(), kv_lens.data(), 4LL * batch_size);
  const int avg_q = batch_size > 0 ? qo_host[batch_size] / batch_size : 0;
  schedule(qo_host, kv_lens, num_qo_heads, num_kv_heads, head_dim, avg_q > 64 ? 128 : (avg_q > 16 ? 64 : 16));
  qo_indptr_ = qo_indptr;
  kv_indptr_ = kv_indptr;
  kv_indices_ = kv_indices;
}

void PagedPrefillWrapper::run(const AttentionIO& io, float* lse, const void* k_cache, const void* v_cache,
                              const Layer& layer, bool causal, int window_left, const std::int32_t* q_start_pos,
                              const std::int32_t* kv_start_pos, int num_qo_heads, int num_kv_heads, int head_dim,
                              DType dtype) const {
  if (!plan_.planned) throw std::logic_error(tag_ + ": run() before plan()");
  AttentionParams p;
  p.q = io.q;
  p.o = io.o;
  p.lse = lse;
  p.qo_indptr = qo_indptr_;
  p.addressing = KvAddressing::token_indices;
  p.k = k_cache;
  p.v = v_cache;
  p.kv_indptr = kv_indptr_;
  p.kv_indices = kv_indices_;
  p.q_start_pos = q_start_pos;
  p.kv_start_pos = kv_start_pos;
  p.batch_size = plan_.batch_size;
  p.total_q = plan_.total_q;
  p.max_q_len = plan_.max_q_len;
  p.max_kv_len = plan_.max_kv_len;
  p.num_qo_heads = num_qo_heads;
  p.num_kv_heads = num_kv_heads;
  p.head_dim = head_dim;
  p.dtype = dtype;
  p.causal = causal;
  p.window_left = window_left;
  p.sm_scale = layer.scaling;
  p.logits_soft_cap = layer.logit_cap;  // as the backend planned it (FlashInferBackend::planned_layer)
  set_kv_data_type(p, layer);
  fill_split(p);
  device_.kernels().attention_prefill(p, device_.stream());
}

// ---------------------------------------------------------------------------------------------------------

RaggedPrefillWrapper::RaggedPrefillWrapper(Device& device, std::shared_ptr<Buffer> float_workspace,
                                           const std::string& tag)
    : FlashInferWrapper(device, std::move(float_workspace), tag) {}

void RaggedPrefillWrapper::plan(const std::int32_t* qo_indptr, const std::int32_t* kv_indptr, int batch_size,
                                int num_qo_heads, int num_kv_heads, int head_dim) {
  const auto qo_host = read_back(qo_indptr, batch_size + 1, "qo_indptr");
  const auto kv_host = read_back(kv_indptr, batch_size + 1, "kv_indptr");
  const int avg_q = batch_size > 0 ? qo_host[batch_size] / batch_size : 0;
  schedule(qo_host, diff(kv_host), num_qo_heads, num_kv_heads, head_dim, avg_q > 64 ? 128 : (avg_q > 16 ? 64 : 16));
  qo_indptr_ = qo_indptr;
  kv_indptr_ = kv_indptr;
}

void RaggedPrefillWrapper::run(const AttentionIO& io, float* lse, const Layer& layer, bool causal, int window_left,
                               int num_qo_heads, int num_kv_heads, int head_dim, DType dtype) const {
  if (!plan_.planned) throw std::logic_error(tag_ + ": run() before plan()");
  AttentionParams p;
  p.q = io.q;
  p.o = io.o;
  p.lse = lse;
  p.qo_indptr = qo_indptr_;
  p.addressing = KvAddressing::ragged;
  p.k = io.k;
  p.v = io.v;
  p.kv_indptr = kv_indptr_;
  p.batch_size = plan_.batch_size;
  p.total_q = plan_.total_q;
  p.max_q_len = plan_.max_q_len;
  p.max_kv_len = plan_.max_kv_len;
  p.num_qo_heads = num_qo_heads;
  p.num_kv_heads = num_kv_heads;
  p.head_dim = head_dim;
  p.dtype = dtype;
  p.causal = causal;
  p.window_left = window_left;
  p.sm_scale = layer.scaling;
  p.logits_soft_cap = layer.logit_cap;  // as the backend planned it (FlashInferBackend::planned_layer)
  set_kv_data_type(p, layer);
  fill_split(p);
  device_.kernels().attention_prefill(p, device_.stream());
}

}  // namespace attnbench
