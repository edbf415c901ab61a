// The CUDA kernel table: one launch function per op (kernels/cuda/kernels_cuda.cuh).
#include "kernels/cuda/kernels_cuda.cuh"

namespace attnbench {

namespace {

// Prefill calls with few query rows per request (FlashInfer's verify, short extends) go to the decode kernel,
// which puts a request's rows and its GQA group's heads into the M rows of one tile, as FlashInfer's prefill
// does with a small cta_tile_q and head fusion, instead of 128-row tiles that would be mostly padding (and
// would read the KV once per query head). The choice depends on the batch shape only (graph-safe).
void launch_attention_prefill_dispatch(const AttentionParams& p, void* stream) {
  const int group = p.num_qo_heads / p.num_kv_heads;
  if (p.dtype != DType::fp32 && p.max_q_len > 0 && p.max_q_len * group <= 64)
    launch_attention_decode(p, stream);
  else
    launch_attention_prefill(p, stream);
}

}  // namespace

const KernelTable& cuda_kernel_table() {
  static const KernelTable table = [] {
    KernelTable t;
    t.write_kv = launch_write_kv;
    t.lengths = launch_lengths;
    t.build_kv_indices = launch_build_kv_indices;
    t.build_page_table = launch_build_page_table;
    t.attention_decode = launch_attention_decode;
    t.attention_prefill = launch_attention_prefill_dispatch;
    t.merge_state = launch_merge_state;
    t.fill_uniform = launch_fill_uniform;
    t.copy_rows = launch_copy_rows;
    return t;
  }();
  return table;
}

}  // namespace attnbench
