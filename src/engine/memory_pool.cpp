#include "engine/memory_pool.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/errors.hpp"
#include "engine/random_fill.hpp"

namespace attnbench {

ReqToTokenPool::ReqToTokenPool(Device& device, int size, int width)
    : device_(device),
      size_(size),
      width_(width),
      req_to_token_(device.allocate_zeroed(static_cast<std::int64_t>(size + 1) * width * 4, MemKind::device,
                                           "engine.req_to_token_pool.req_to_token")),
      host_(static_cast<std::size_t>(size + 1) * width, 0) {}

std::vector<int> ReqToTokenPool::alloc(int n) {
  if (next_free_ + n - 1 > size_)
    throw std::runtime_error("req_to_token_pool exhausted: " + std::to_string(n) + " rows requested, " +
                             std::to_string(size_ - next_free_ + 1) + " free");
  std::vector<int> rows(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) rows[i] = next_free_++;
  return rows;
}

void ReqToTokenPool::set_row(int row, std::span<const std::int32_t> slots) {
  if (row < 0 || row > size_ || static_cast<std::int64_t>(slots.size()) > width_)
    throw std::out_of_range("req_to_token row " + std::to_string(row) + " or width " + std::to_string(slots.size()));
  std::int32_t* h = host_.data() + static_cast<std::int64_t>(row) * width_;
  std::copy(slots.begin(), slots.end(), h);
  device_.copy(req_to_token_.as<std::int32_t>() + static_cast<std::int64_t>(row) * width_, h,
               static_cast<std::int64_t>(slots.size()) * 4);
}

std::span<const std::int32_t> ReqToTokenPool::host_row(int row) const {
  return {host_.data() + static_cast<std::int64_t>(row) * width_, static_cast<std::size_t>(width_)};
}

TokenToKVPool::TokenToKVPool(Device& device, std::int64_t capacity_tokens, int page_size, int num_layers,
                             int num_kv_heads, int head_dim, DType dtype, bool shuffle, std::uint64_t seed,
                             bool fused_kv)
    : device_(device), page_size_(page_size), num_kv_heads_(num_kv_heads), head_dim_(head_dim), dtype_(dtype),
      fused_kv_(fused_kv) {
  const std::int64_t pages = (capacity_tokens + page_size - 1) / page_size;
  num_slots_ = (pages + 1) * page_size;  // + the padding page; a whole number of pages (SGLang's padded rows)
  for (int l = 0; l < num_layers; ++l) {
    if (fused_kv_) {
      kv_.push_back(device.allocate(2 * layer_bytes(), MemKind::device, "engine.token_to_kv_pool.kv_buffer"));
      k_ptr_.push_back(kv_.back().data());
      v_ptr_.push_back(static_cast<char*>(kv_.back().data()) + layer_bytes());
    } else {
      k_.push_back(device.allocate(layer_bytes(), MemKind::device, "engine.token_to_kv_pool.k_buffer"));
      v_.push_back(device.allocate(layer_bytes(), MemKind::device, "engine.token_to_kv_pool.v_buffer"));
      k_ptr_.push_back(k_.back().data());
      v_ptr_.push_back(v_.back().data());
    }
  }
  free_pages_.resize(static_cast<std::size_t>(pages));
  for (std::int64_t p = 0; p < pages; ++p) free_pages_[p] = static_cast<std::int32_t>(pages - p);  // pop 1 first
  if (shuffle) {
    std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
    std::shuffle(free_pages_.begin(), free_pages_.end(), rng);
  }
}

std::int64_t TokenToKVPool::layer_bytes() const {
  return num_slots_ * num_kv_heads_ * head_dim_ * dtype_size(dtype_);
}

std::vector<std::int32_t> TokenToKVPool::alloc_sequence(std::int64_t tokens) {
  const std::int64_t pages = (tokens + page_size_ - 1) / page_size_;
  if (pages > static_cast<std::int64_t>(free_pages_.size()))
    throw std::runtime_error("token_to_kv_pool exhausted: " + std::to_string(pages) + " pages requested, " +
                             std::to_string(free_pages_.size()) + " free");
  std::vector<std::int32_t> slots(static_cast<std::size_t>(tokens));
  for (std::int64_t pg = 0; pg < pages; ++pg) {
    const std::int32_t page = free_pages_.back();
    free_pages_.pop_back();
    for (std::int64_t t = pg * page_size_; t < std::min(tokens, (pg + 1) * page_size_); ++t)
      slots[t] = page * page_size_ + static_cast<std::int32_t>(t % page_size_);
  }
  return slots;
}

void TokenToKVPool::fill_random(std::uint64_t seed) {
  const std::int64_t n = num_slots_ * num_kv_heads_ * head_dim_;
  for (int l = 0; l < num_layers(); ++l) {
    fill_uniform(device_, k_ptr_[l], n, dtype_, fill_seed(seed, false, l), -1.0f, 1.0f);
    fill_uniform(device_, v_ptr_[l], n, dtype_, fill_seed(seed, true, l), -1.0f, 1.0f);
  }
}

std::uint64_t TokenToKVPool::fill_seed(std::uint64_t seed, bool value, int layer) {
  return seed_for(seed, value ? "v_cache" : "k_cache", layer);
}

}  // namespace attnbench
