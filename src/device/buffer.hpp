// Buffer: an RAII allocation made through a Device and counted by its ledger. Move-only; freeing it
// (destruction or reset()) returns the memory and updates the ledger.
#pragma once

#include <cstdint>

#include "device/ledger.hpp"

namespace attnbench {

class Device;

class Buffer {
 public:
  Buffer() = default;
  Buffer(Device* device, void* data, std::int64_t bytes, MemKind kind, Ledger::Id id)
      : device_(device), data_(data), bytes_(bytes), kind_(kind), id_(id) {}
  Buffer(Buffer&& o) noexcept { *this = static_cast<Buffer&&>(o); }
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { reset(); }

  void reset();  // frees now

  void* data() const { return data_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  std::int64_t bytes() const { return bytes_; }
  MemKind kind() const { return kind_; }
  bool allocated() const { return device_ != nullptr; }

 private:
  Device* device_ = nullptr;
  void* data_ = nullptr;
  std::int64_t bytes_ = 0;
  MemKind kind_ = MemKind::device;
  Ledger::Id id_ = -1;
};

}  // namespace attnbench
