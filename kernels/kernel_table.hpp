// The kernel table: one entry per operation, filled by each device (CPU kernels or CUDA launches).
// Backends launch only through it, so the same backend code runs on either device. `stream` is the
// device's stream (cudaStream_t on CUDA, unused on the CPU).
#pragma once

#include "kernels/params.hpp"

namespace attnbench {

struct KernelTable {
  void (*write_kv)(const KvWriteParams&, void* stream) = nullptr;
  void (*lengths)(const LengthsParams&, void* stream) = nullptr;
  void (*build_kv_indices)(const KvIndicesParams&, void* stream) = nullptr;
  void (*build_page_table)(const PageTableParams&, void* stream) = nullptr;
  // Few query rows per request (decode: 1, verify through the decode kernel: q_len_per_req).
  void (*attention_decode)(const AttentionParams&, void* stream) = nullptr;
  // Many query rows per request (extend / prefill, FlashInfer's verify).
  void (*attention_prefill)(const AttentionParams&, void* stream) = nullptr;
  void (*merge_state)(const MergeStateParams&, void* stream) = nullptr;
  void (*fill_uniform)(const FillParams&, void* stream) = nullptr;
  void (*copy_rows)(const CopyRowsParams&, void* stream) = nullptr;
};

}  // namespace attnbench
