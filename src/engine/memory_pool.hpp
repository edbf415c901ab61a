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
// Pages are handed out by a page allocator; `shuffle` hands them out in a seeded random order so that a
// request's pages are not contiguous (fragmentation, as in a long-running server).
class TokenToKVPool {
 public:
  TokenToKVPool(Device& device, std::int64_t capacity_tokens, int page_size, int num_layers, int num_kv_heads,
                int head_dim, DType dtype, bool shuffle, std::uint64_t seed);

  int page_size() const { return page_size_; }
  std::int64_t num_slots() const { return num_slots_; }
  int num_layers() const { return static_cast<int>(k_.size()); }
  int num_kv_heads() const { return num_kv_heads_; }
  int head_dim() const { return head_dim_; }
  DType dtype() const { return dtype_; }
  std::int64_t free_pages() const { return static_cast<std::int64_t>(free_pages_.size()); }

  void* k_buffer(int layer) const { return k_[layer].data(); }
  void* v_buffer(int layer) const { return v_[layer].data(); }
  std::int64_t layer_bytes() const;  // one of k_buffer / v_buffer

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
  std::vector<Buffer> k_, v_;         // per layer [num_slots, num_kv_heads, head_dim]
  std::vector<std::int32_t> free_pages_;  // page ids >= 1, popped from the back
};

}  // namespace attnbench
