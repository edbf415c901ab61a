// Device: where attnbench allocates, copies, fills, times and launches. Backends are device-agnostic:
// they allocate through a Device (so the ledger sees every byte) and launch through its kernel table.
// Implementations: CpuDevice (always) and the CUDA device (src/device/cuda_device.*, when built with CUDA).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "device/buffer.hpp"
#include "device/ledger.hpp"

namespace attnbench {

struct KernelTable;

enum class DeviceType : std::uint8_t { cpu, cuda };

// Driver view of device memory (CUDA: cudaMemGetInfo, which moves in 2 MiB steps).
struct MemoryInfo {
  std::int64_t free_bytes = 0;
  std::int64_t total_bytes = 0;
};

// Host-side or device-side interval timer; microseconds.
class Timer {
 public:
  virtual ~Timer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual double elapsed_us() = 0;  // waits for stop() to complete on the device
};

// A captured sequence of device work (CUDA graph), replayed as one launch.
class Graph {
 public:
  virtual ~Graph() = default;
  virtual void replay() = 0;  // asynchronous, on the device's stream
};

class Device {
 public:
  Device() = default;
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  virtual DeviceType type() const = 0;
  virtual std::string name() const = 0;  // "cpu (2 threads)" / "NVIDIA H200"
  bool is_gpu() const { return type() == DeviceType::cuda; }

  // Uninitialised allocation (torch.empty). Throws OutOfMemoryError naming the tag when refused.
  Buffer allocate(std::int64_t bytes, MemKind kind, std::string tag);
  // Zero-initialised allocation (torch.zeros): a distinct call, since which buffers are zeroed is modelled.
  Buffer allocate_zeroed(std::int64_t bytes, MemKind kind, std::string tag);

  // SGLang's get_buffer(name, ...): a process-wide buffer shared by name. The first caller sizes and
  // allocates it (ledger: shared=1, tag `tag`); later callers get the same buffer whatever size they ask.
  std::shared_ptr<Buffer> named_buffer(const std::string& name, std::int64_t bytes, MemKind kind, bool zeroed,
                                       std::string tag);
  bool has_named_buffer(const std::string& name) const { return named_.count(name) != 0; }

  // Copies `bytes` between any two buffers of this device (host, pinned or device), in stream order.
  virtual void copy(void* dst, const void* src, std::int64_t bytes) = 0;
  // Byte fill (cudaMemset semantics).
  virtual void memset(void* dst, int value, std::int64_t bytes) = 0;
  // Waits until all work issued so far has completed.
  virtual void synchronize() = 0;
  // Driver-reported free/total device memory; nullopt where there is no driver (CPU).
  virtual std::optional<MemoryInfo> memory_info() = 0;
  // Bytes a new case can still allocate (GPU: driver free memory; CPU: MemAvailable), if known.
  virtual std::optional<std::int64_t> available_bytes() {
    if (auto m = memory_info()) return m->free_bytes;
    return std::nullopt;
  }
  // Streaming multiprocessors; the CPU device reports the modelled GPU's (H200: 132) for sizes that use it.
  virtual int sm_count() const = 0;
  // Compute capability as major * 10 + minor (90 for an H200). The CPU device models an H200.
  virtual int sm_version() const { return 90; }
  virtual std::unique_ptr<Timer> make_timer() = 0;
  virtual const KernelTable& kernels() const = 0;
  // The stream kernels are launched on (cudaStream_t on CUDA; nullptr on the CPU).
  virtual void* stream() const { return nullptr; }

  // CUDA graphs: `body` issues work on stream(); it is recorded, not run. Throws Unsupported where graphs
  // do not exist (the CPU).
  virtual bool supports_graphs() const { return false; }
  virtual std::unique_ptr<Graph> capture(const std::function<void()>& body);

  // Last-level cache bytes (H200: 60 MB L2); flush_l2() evicts it (writes a buffer larger than it).
  virtual std::int64_t l2_bytes() const { return 0; }
  virtual void flush_l2() {}
  // Copy bandwidth in bytes/s (bytes read + written), measured now (recorded in the report's environment).
  virtual double measure_copy_bandwidth() = 0;
  // Read-only streaming bandwidth in bytes/s (every byte of a buffer larger than the last-level cache read
  // once, nothing written), measured now: the ceiling of a KV-cache read and the denominator of bw_fraction.
  virtual double measure_read_bandwidth() = 0;
  // Environment fingerprint for reports: (key, value) pairs, e.g. gpu_name, gpu_uuid, driver, runtime,
  // sm_count, l2_bytes, sm_clock_mhz.
  virtual std::vector<std::pair<std::string, std::string>> environment() const = 0;

  Ledger& ledger() { return ledger_; }
  const Ledger& ledger() const { return ledger_; }

 protected:
  // Returns nullptr when the memory is not available.
  virtual void* raw_allocate(std::int64_t bytes, MemKind kind) = 0;
  virtual void raw_free(void* p, MemKind kind) noexcept = 0;
  virtual void raw_zero(void* p, std::int64_t bytes, MemKind kind) = 0;
  // Derived destructors call this first: named buffers are freed while raw_free still works.
  void drop_named_buffers() noexcept { named_.clear(); }

 private:
  friend class Buffer;
  void release(void* p, MemKind kind, Ledger::Id id) noexcept;

  Ledger ledger_;
  std::map<std::string, std::shared_ptr<Buffer>> named_;
};

// A point in time for memory accounting: the ledger and (GPU) the driver's view, after a synchronize.
struct MemoryMark {
  Ledger::Snapshot ledger;
  std::optional<MemoryInfo> driver;
};
MemoryMark mark_memory(Device& device);

}  // namespace attnbench
