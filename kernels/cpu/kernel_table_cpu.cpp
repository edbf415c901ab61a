#include "kernels/cpu/kernels_cpu.hpp"

namespace attnbench {

const KernelTable& cpu_kernel_table() {
  static const KernelTable table = [] {
    KernelTable t;
    t.write_kv = write_kv_cpu;
    t.lengths = lengths_cpu;
    t.build_kv_indices = build_kv_indices_cpu;
    t.build_page_table = build_page_table_cpu;
    t.attention_decode = attention_decode_cpu;
    t.attention_prefill = attention_prefill_cpu;
    t.merge_state = merge_state_cpu;
    t.fill_uniform = fill_uniform_cpu;
    t.copy_rows = copy_rows_cpu;
    return t;
  }();
  return table;
}

}  // namespace attnbench
