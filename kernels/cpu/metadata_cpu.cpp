// Metadata kernels on the CPU: per-request lengths and prefix sums, FlashInfer kv_indices, TRTLLM page
// tables (semantics in kernels/params.hpp). Checked by tests/kernels/metadata_cpu_test.cpp against
// hand-computed tables.
#include <algorithm>
#include <cstring>

#include "kernels/cpu/kernels_cpu.hpp"

namespace attnbench {

void lengths_cpu(const LengthsParams& p, void*) {
  std::int32_t acc = 0;
  if (p.indptr_out) p.indptr_out[0] = 0;
  for (int i = 0; i < p.batch_size; ++i) {
    const std::int32_t full = (p.seq_lens ? p.seq_lens[i] : 0) - (p.sub ? p.sub[i] : 0) + p.add;
    const std::int32_t len = p.clamp_max > 0 ? std::min(full, p.clamp_max) : full;
    if (p.lens_out) p.lens_out[i] = len;
    if (p.start_out) p.start_out[i] = full - len;
    acc += len;
    if (p.indptr_out) p.indptr_out[i + 1] = acc;
  }
}

void build_kv_indices_cpu(const KvIndicesParams& p, void*) {
  for (int i = 0; i < p.batch_size; ++i) {
    const std::int32_t* row = p.req_to_token + p.req_pool_indices[i] * p.req_to_token_stride;
    const std::int32_t start = p.kv_start ? p.kv_start[i] : 0;
    const std::int32_t n = p.kv_indptr[i + 1] - p.kv_indptr[i];
    std::memcpy(p.kv_indices + p.kv_indptr[i], row + start, sizeof(std::int32_t) * static_cast<std::size_t>(n));
  }
}

void build_page_table_cpu(const PageTableParams& p, void*) {
  for (int i = 0; i < p.batch_size; ++i) {
    const std::int32_t* row = p.req_to_token + p.req_pool_indices[i] * p.req_to_token_stride;
    std::int32_t* out = p.page_table + static_cast<std::int64_t>(i) * (p.row_stride > 0 ? p.row_stride : p.max_num_pages);
    const int pages = std::min((p.seq_lens[i] + p.page_size - 1) / p.page_size, p.max_num_pages);
    for (int pg = 0; pg < pages; ++pg) out[pg] = row[static_cast<std::int64_t>(pg) * p.page_size] / p.page_size + p.add;
  }
}

}  // namespace attnbench
