#include "device/device.hpp"

#include "core/errors.hpp"
#include "core/units.hpp"

namespace attnbench {

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    reset();
    device_ = o.device_;
    data_ = o.data_;
    bytes_ = o.bytes_;
    kind_ = o.kind_;
    id_ = o.id_;
    o.device_ = nullptr;
    o.data_ = nullptr;
    o.bytes_ = 0;
    o.id_ = -1;
  }
  return *this;
}

void Buffer::reset() {
  if (device_ != nullptr) device_->release(data_, kind_, id_);
  device_ = nullptr;
  data_ = nullptr;
  bytes_ = 0;
  id_ = -1;
}

Buffer Device::allocate(std::int64_t bytes, MemKind kind, std::string tag) {
  if (bytes < 0) throw std::logic_error("negative allocation size for " + tag);
  void* p = bytes == 0 ? nullptr : raw_allocate(bytes, kind);
  if (bytes != 0 && p == nullptr) {
    throw OutOfMemoryError("out of " + std::string(mem_kind_name(kind)) + " memory allocating " +
                               format_bytes(bytes) + " (" + std::to_string(bytes) + " B) for " + tag,
                           static_cast<std::size_t>(bytes));
  }
  const Ledger::Id id = ledger_.on_alloc(std::move(tag), kind, bytes, false);
  return Buffer(this, p, bytes, kind, id);
}

Buffer Device::allocate_zeroed(std::int64_t bytes, MemKind kind, std::string tag) {
  Buffer b = allocate(bytes, kind, std::move(tag));
  if (bytes > 0) raw_zero(b.data(), bytes, kind);
  return b;
}

std::shared_ptr<Buffer> Device::named_buffer(const std::string& name, std::int64_t bytes, MemKind kind,
                                             bool zeroed, std::string tag) {
  if (auto it = named_.find(name); it != named_.end()) return it->second;
  if (bytes < 0) throw std::logic_error("negative allocation size for " + tag);
  void* p = bytes == 0 ? nullptr : raw_allocate(bytes, kind);
  if (bytes != 0 && p == nullptr) {
    throw OutOfMemoryError("out of " + std::string(mem_kind_name(kind)) + " memory allocating " +
                               format_bytes(bytes) + " for shared buffer " + name,
                           static_cast<std::size_t>(bytes));
  }
  const Ledger::Id id = ledger_.on_alloc(std::move(tag), kind, bytes, true);
  auto buf = std::make_shared<Buffer>(this, p, bytes, kind, id);
  if (zeroed && bytes > 0) raw_zero(p, bytes, kind);
  named_.emplace(name, buf);
  return buf;
}

std::unique_ptr<Graph> Device::capture(const std::function<void()>&) {
  throw Unsupported("CUDA graphs need a GPU (device " + name() + ")");
}

MemoryMark mark_memory(Device& device) {
  device.synchronize();
  return MemoryMark{device.ledger().snapshot(), device.memory_info()};
}

void Device::release(void* p, MemKind kind, Ledger::Id id) noexcept {
  if (p != nullptr) raw_free(p, kind);
  try {
    ledger_.on_free(id);
  } catch (...) {
  }
}

}  // namespace attnbench
