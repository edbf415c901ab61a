// CPU kernels: the twins of kernels/cuda/, over the same parameter structs (kernels/params.hpp).
// Each is checked against the Eigen reference by tests/kernels/ (ctest -L cpu -R Kernels).
#pragma once

#include "kernels/kernel_table.hpp"
#include "kernels/params.hpp"

namespace attnbench {

void write_kv_cpu(const KvWriteParams& p, void* stream = nullptr);
void lengths_cpu(const LengthsParams& p, void* stream = nullptr);
void build_kv_indices_cpu(const KvIndicesParams& p, void* stream = nullptr);
void build_page_table_cpu(const PageTableParams& p, void* stream = nullptr);
void attention_decode_cpu(const AttentionParams& p, void* stream = nullptr);
void attention_prefill_cpu(const AttentionParams& p, void* stream = nullptr);
void merge_state_cpu(const MergeStateParams& p, void* stream = nullptr);
void fill_uniform_cpu(const FillParams& p, void* stream = nullptr);
void copy_rows_cpu(const CopyRowsParams& p, void* stream = nullptr);

const KernelTable& cpu_kernel_table();

}  // namespace attnbench
