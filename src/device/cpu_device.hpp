// CpuDevice: the device where no GPU exists. "device" and "pinned" memory are host memory here, but the
// ledger keeps their kinds, so construction figures are the same as on a GPU. Kernels are the CPU kernels
// (kernels/cpu/, OpenMP over (request, kv head)); timers are steady_clock.
#pragma once

#include "device/device.hpp"

namespace attnbench {

class CpuDevice : public Device {
 public:
  // sm_count: the multiprocessor count of the modelled GPU, used only by sizes SGLang derives from it.
  explicit CpuDevice(int modelled_sm_count = 132);
  ~CpuDevice() override;

  DeviceType type() const override { return DeviceType::cpu; }
  std::string name() const override;
  void copy(void* dst, const void* src, std::int64_t bytes) override;
  void memset(void* dst, int value, std::int64_t bytes) override;
  void synchronize() override {}
  std::optional<MemoryInfo> memory_info() override { return std::nullopt; }
  std::optional<std::int64_t> available_bytes() override;  // /proc/meminfo MemAvailable
  int sm_count() const override { return sm_count_; }
  std::unique_ptr<Timer> make_timer() override;
  const KernelTable& kernels() const override;
  double measure_copy_bandwidth() override;  // memcpy of 256 MiB, best of 5
  double measure_read_bandwidth() override;  // every thread sums its share of 256 MiB, best of 5
  std::vector<std::pair<std::string, std::string>> environment() const override;

 protected:
  void* raw_allocate(std::int64_t bytes, MemKind kind) override;
  void raw_free(void* p, MemKind kind) noexcept override;
  void raw_zero(void* p, std::int64_t bytes, MemKind kind) override;

 private:
  int sm_count_;
};

}  // namespace attnbench
