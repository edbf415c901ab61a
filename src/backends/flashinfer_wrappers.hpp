// Models of the three FlashInfer wrappers SGLang's FlashInfer backend builds (flashinfer v0.6.15.post1):
// what each allocates (an 8 MiB device int workspace and its 8 MiB pinned twin; the paged-prefill wrapper
// also a kv_lens buffer), what plan() does on the host (reads indptr back, schedules a work partition into
// the pinned buffer, copies it to the device, carves split-KV temporaries from the shared float workspace),
// and what run() launches. Allocation sizes: sglang-backends.md section 1d.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/attention_backend.hpp"
#include "device/device.hpp"
#include "kernels/params.hpp"

namespace attnbench {

// flashinfer decode.py L871-885 / prefill.py L1723-1734, L3142-3150: 8 MiB int workspace per wrapper.
inline constexpr std::int64_t kFlashInferIntWorkspaceBytes = 8 * 1024 * 1024;
// prefill.py L1723: _kv_lens_buffer = torch.empty(32768, int32).
inline constexpr int kFlashInferKvLensBufferEntries = 32768;

// What plan() leaves for run().
struct PlanInfo {
  bool planned = false;
  int batch_size = 0;
  int total_q = 0;
  int max_q_len = 0;
  int max_kv_len = 0;
  int kv_chunk_size = 0;  // 0: no split-KV
  int max_num_chunks = 1;  // per request, launch bound
  int num_work_items = 0;
  std::int64_t tmp_bytes = 0;  // split-KV temporaries carved from the float workspace (at offset 0)
};

// Common part of every wrapper: the workspaces and FlashInfer's scheduler.
class FlashInferWrapper {
 public:
  const PlanInfo& plan_info() const { return plan_; }
  // The plan's data_type (SGLang passes the KV cache dtype; q_data_type is the model dtype): fp8_e4m3 /
  // fp8_e5m2 makes the paged reads dequantize; any other value reads the pool in the model dtype.
  DType kv_data_type = DType::bf16;

 protected:
  FlashInferWrapper(Device& device, std::shared_ptr<Buffer> float_workspace, const std::string& tag);

  // FlashInfer's C++ scheduler (scheduler.cuh): picks a KV chunk size so that the work items
  // (query tile, KV chunk, KV head) about fill the GPU, writes the partition into the pinned buffer and
  // copies it to the device int workspace, and reserves the split-KV temporaries in the float workspace.
  void schedule(const std::vector<std::int32_t>& qo_indptr_host, const std::vector<std::int32_t>& kv_lens_host,
                int num_qo_heads, int num_kv_heads, int head_dim, int cta_tile_q);
  // indptr.to("cpu"): a device-to-host read of n int32 (a host allocation per call, as torch makes one).
  std::vector<std::int32_t> read_back(const std::int32_t* device_ptr, int n, const char* what);
  void fill_split(AttentionParams& p) const;
  void set_kv_data_type(AttentionParams& p, const Layer& layer) const;

  Device& device_;
  std::string tag_;
  std::shared_ptr<Buffer> float_workspace_;  // shared F1
  Buffer int_workspace_;                     // [8 MiB] uint8, device, torch.empty
  Buffer pin_memory_int_workspace_;          // [8 MiB] uint8, pinned host
  PlanInfo plan_;
};

// BatchDecodeWithPagedKVCacheWrapper (decode.py L777), page size 1 (token indices), NHD.
class DecodeWrapper : public FlashInferWrapper {
 public:
  // use_cuda_graph: the fixed buffers are the caller's (kv_indptr[:bs+1], cuda_graph_kv_indices,
  // kv_last_page_len[:bs]); with tensor cores it also allocates _qo_indptr_buf = arange(bs + 1).
  DecodeWrapper(Device& device, std::shared_ptr<Buffer> float_workspace, const std::string& tag,
                bool use_tensor_cores, bool use_cuda_graph = false, int fixed_batch_size = 0);

  // plan(): reads indptr and last_page_len back to the host (a sync), schedules.
  void plan(const std::int32_t* kv_indptr, const std::int32_t* kv_indices, const std::int32_t* kv_last_page_len,
            int batch_size, int num_qo_heads, int num_kv_heads, int head_dim);
  // fast_decode_plan (decode.py L3566-3734): the same from a host indptr, with no device-to-host read.
  void fast_plan(const std::vector<std::int32_t>& kv_indptr_host, const std::int32_t* kv_indptr,
                 const std::int32_t* kv_indices, int num_qo_heads, int num_kv_heads, int head_dim);
  // forward(): one query row per request over the token-indexed KV pool of one layer.
  void run(const AttentionIO& io, const void* k_cache, const void* v_cache, const Layer& layer, int num_qo_heads,
           int num_kv_heads, int head_dim, DType dtype) const;

 private:
  bool use_tensor_cores_, use_cuda_graph_;
  Buffer qo_indptr_buf_;  // [bs + 1] int32: arange, graph mode with tensor cores, or per eager plan (H2D)
  const std::int32_t* kv_indptr_ = nullptr;
  const std::int32_t* kv_indices_ = nullptr;
};

// BatchPrefillWithPagedKVCacheWrapper (prefill.py L1608), page size 1.
class PagedPrefillWrapper : public FlashInferWrapper {
 public:
  PagedPrefillWrapper(Device& device, std::shared_ptr<Buffer> float_workspace, const std::string& tag);

  // plan(): qo_indptr, kv_indptr and last_page_len read back (L2284, L2295-2296), kv_lens to _kv_lens_buffer.
  void plan(const std::int32_t* qo_indptr, const std::int32_t* kv_indptr, const std::int32_t* kv_indices,
            const std::int32_t* kv_last_page_len, int batch_size, int num_qo_heads, int num_kv_heads, int head_dim);
  // forward() / forward_return_lse(): lse may be nullptr. q_start_pos / kv_start_pos: see kernels/params.hpp.
  void run(const AttentionIO& io, float* lse, const void* k_cache, const void* v_cache, const Layer& layer,
           bool causal, int window_left, const std::int32_t* q_start_pos, const std::int32_t* kv_start_pos,
           int num_qo_heads, int num_kv_heads, int head_dim, DType dtype) const;

 private:
  Buffer kv_lens_buffer_;  // [32768] int32 device (grows with the batch)
  const std::int32_t* qo_indptr_ = nullptr;
  const std::int32_t* kv_indptr_ = nullptr;
  const std::int32_t* kv_indices_ = nullptr;
};

// BatchPrefillWithRaggedKVCacheWrapper (prefill.py L3050): new tokens against new tokens.
class RaggedPrefillWrapper : public FlashInferWrapper {
 public:
  RaggedPrefillWrapper(Device& device, std::shared_ptr<Buffer> float_workspace, const std::string& tag);

  // plan(): qo_indptr and kv_indptr read back (prefill.py L3391-3392).
  void plan(const std::int32_t* qo_indptr, const std::int32_t* kv_indptr, int batch_size, int num_qo_heads,
            int num_kv_heads, int head_dim);
  void run(const AttentionIO& io, float* lse, const Layer& layer, bool causal, int window_left, int num_qo_heads,
           int num_kv_heads, int head_dim, DType dtype) const;

 private:
  const std::int32_t* qo_indptr_ = nullptr;
  const std::int32_t* kv_indptr_ = nullptr;
};

}  // namespace attnbench
