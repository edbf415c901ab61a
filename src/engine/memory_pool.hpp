// What SGLang's model runner owns beside the backends: the request-to-token map and the paged KV pool.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "core/dtype.hpp"
#include "device/device.hpp"

namespace attnbench {

// ReqToTokenPool: req_to_token [size + 1, width] int32, zero-initialised; row 0 is SGLang's padding row
// (memory_pool.py L256-283), used by padded CUDA-graph slots. Rows 1..size are handed out by alloc().
// A host mirror is kept so that the engine (and the reference) can read the map without a device read.
class ReqToTokenPool {
 public:
  ReqToTokenPool(Device& device, int size, int width);

  int size() const { return size_; }
  int width() const { return width_; }
  std::vector<int> alloc(int n);  // row indices in [1, size]; throws when exhausted
  // Writes row `row`'s first slots.size() entries (host mirror and device).
  void set_row(int row, std::span<const std::int32_t> slots);
  std::span<const std::int32_t> host_row(int row) const;
  const std::int32_t* device_data() const { return req_to_token_.as<const std::int32_t>(); }

 private:
  Device& device_;
  int size_, width_;
  Buffer req_to_token_;  // [size + 1, width] int32 (device)
  std::vector<std::int32_t> host_;
  int next_free_ = 1;
};

// MHA token-to-KV pool: per layer k_buffer and v_buffer, each [num_slots, num_kv_heads, head_dim] (NHD),
// num_slots = capacity + page_size: the first page is SGLang's padding page (slot 0 = dummy writes).
// With `fused_kv` (SGLang 0.5.23, mem_cache/memory_pool.py L2630-2645: one zeros((2, padded, Hkv, D)) per
// layer when K and V shapes match) a layer's K and V are the two halves of one allocation, so V sits
// num_slots / page_size pages after K (v_page_offset()): what lets fmha_v2 prefill read both through one
// block table without copying. Otherwise K and V are separate allocations.
// Pages are handed out by a page allocator; `shuffle` hands them out in a seeded random order so that a
// request's pages are not contiguous (fragmentation, as in a long-running server).
class TokenToKVPool {
 public:
  TokenToKVPool(Device& device, std::int64_t capacity_tokens, int page_size, int num_layers, int num_kv_heads,
                int head_dim, DType dtype, bool shuffle, std::uint64_t seed, bool fused_kv = false);

  int page_size() const { return page_size_; }
  std::int64_t num_slots() const { return num_slots_; }
  int num_layers() const { return static_cast<int>(k_ptr_.size()); }
  int num_kv_heads() const { return num_kv_heads_; }
  int head_dim() const { return head_dim_; }
  DType dtype() const { return dtype_; }
  std::int64_t free_pages() const { return static_cast<std::int64_t>(free_pages_.size()); }

  void* k_buffer(int layer) const { return k_ptr_[layer]; }
  void* v_buffer(int layer) const { return v_ptr_[layer]; }
  std::int64_t layer_bytes() const;  // one of k_buffer / v_buffer
  bool fused_kv() const { return fused_kv_; }
  // Fused layout: pages from k_buffer(l) to v_buffer(l) (= num_slots / page_size); 0 when not fused.
  std::int64_t v_page_offset() const { return fused_kv_ ? num_slots_ / page_size_ : 0; }

  // Allocates pages for a sequence of `tokens` tokens; returns the slot of every token (page-aligned).
  std::vector<std::int32_t> alloc_sequence(std::int64_t tokens);
  // Fills every layer's K and V with seeded uniform values in [-1, 1) (never zeros): element i of layer l's
  // K is seeded_element(fill_seed(seed, false, l), i, dtype, -1, 1), V likewise with true.
  void fill_random(std::uint64_t seed);
  static std::uint64_t fill_seed(std::uint64_t seed, bool value, int layer);

 private:
  Device& device_;
  int page_size_, num_kv_heads_, head_dim_;
  DType dtype_;
  std::int64_t num_slots_;
  bool fused_kv_ = false;
  std::vector<Buffer> k_, v_;         // per layer [num_slots, num_kv_heads, head_dim]; fused: kv_ instead
  std::vector<Buffer> kv_;            // fused: per layer [2, num_slots, num_kv_heads, head_dim]
  std::vector<void*> k_ptr_, v_ptr_;  // per layer: where K and V start
  std::vector<std::int32_t> free_pages_;  // page ids >= 1, popped from the back
};

}  // namespace attnbench
