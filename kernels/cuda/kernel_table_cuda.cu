// The CUDA kernel table: one launch function per op (kernels/cuda/kernels_cuda.cuh).
#include "kernels/cuda/kernels_cuda.cuh"

namespace attnbench {

const KernelTable& cuda_kernel_table() {
  static const KernelTable table = [] {
    KernelTable t;
    t.write_kv = launch_write_kv;
    t.lengths = launch_lengths;
    t.build_kv_indices = launch_build_kv_indices;
    t.build_page_table = launch_build_page_table;
    t.attention_decode = launch_attention_decode;
    t.attention_prefill = launch_attention_prefill;
    t.merge_state = launch_merge_state;
    t.fill_uniform = launch_fill_uniform;
    return t;
  }();
  return table;
}

}  // namespace attnbench
