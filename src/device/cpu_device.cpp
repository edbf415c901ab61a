#include "device/cpu_device.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <new>

#include "kernels/cpu/kernels_cpu.hpp"
#include "kernels/kernel_table.hpp"

namespace attnbench {

namespace {

class SteadyTimer final : public Timer {
 public:
  void start() override { t0_ = std::chrono::steady_clock::now(); }
  void stop() override { t1_ = std::chrono::steady_clock::now(); }
  double elapsed_us() override { return std::chrono::duration<double, std::micro>(t1_ - t0_).count(); }

 private:
  std::chrono::steady_clock::time_point t0_, t1_;
};

constexpr std::size_t kAlignment = 256;  // as cudaMalloc, so vectorised kernels see the same alignment

}  // namespace

CpuDevice::CpuDevice(int modelled_sm_count) : sm_count_(modelled_sm_count) {}

CpuDevice::~CpuDevice() { drop_named_buffers(); }

std::string CpuDevice::name() const { return "cpu (" + std::to_string(omp_get_max_threads()) + " threads)"; }

void CpuDevice::copy(void* dst, const void* src, std::int64_t bytes) {
  if (bytes > 0) std::memmove(dst, src, static_cast<std::size_t>(bytes));
}

void CpuDevice::memset(void* dst, int value, std::int64_t bytes) {
  if (bytes > 0) std::memset(dst, value, static_cast<std::size_t>(bytes));
}

std::unique_ptr<Timer> CpuDevice::make_timer() { return std::make_unique<SteadyTimer>(); }

const KernelTable& CpuDevice::kernels() const { return cpu_kernel_table(); }

std::optional<std::int64_t> CpuDevice::available_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  std::int64_t kib = 0;
  std::string unit;
  while (f >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return std::nullopt;
}

double CpuDevice::measure_copy_bandwidth() {
  const std::int64_t bytes = 256 * 1024 * 1024;
  Buffer a = allocate(bytes, MemKind::host, "device.bandwidth_probe.src");
  Buffer b = allocate(bytes, MemKind::host, "device.bandwidth_probe.dst");
  std::memset(a.data(), 1, static_cast<std::size_t>(bytes));
  std::memset(b.data(), 2, static_cast<std::size_t>(bytes));
  double best = 0.0;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    std::memcpy(b.data(), a.data(), static_cast<std::size_t>(bytes));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > 0) best = std::max(best, 2.0 * static_cast<double>(bytes) / s);
  }
  return best;
}

double CpuDevice::measure_read_bandwidth() {
  // The CPU twins read with OpenMP threads, so the probe does too: each thread sums its share of 64-bit words
  // (a reduction the compiler cannot drop: the sum is compared with a value it cannot know).
  const std::int64_t bytes = 256 * 1024 * 1024;
  Buffer a = allocate(bytes, MemKind::host, "device.bandwidth_probe.read");
  std::memset(a.data(), 1, static_cast<std::size_t>(bytes));
  const auto* w = static_cast<const std::uint64_t*>(a.data());
  const std::int64_t n = bytes / 8;
  double best = 0.0;
  std::uint64_t total = 0;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    std::uint64_t sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
    for (std::int64_t j = 0; j < n; ++j) sum += w[j];
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    total += sum;
    if (s > 0) best = std::max(best, static_cast<double>(bytes) / s);
  }
  // Every word is 0x0101010101010101: a different total means the loop did not read what it timed.
  if (total != 5ull * static_cast<std::uint64_t>(n) * 0x0101010101010101ull) return 0.0;
  return best;
}

std::vector<std::pair<std::string, std::string>> CpuDevice::environment() const {
  return {{"device", "cpu"}, {"threads", std::to_string(omp_get_max_threads())},
          {"modelled_sm_count", std::to_string(sm_count_)}};
}

void* CpuDevice::raw_allocate(std::int64_t bytes, MemKind) {
  const std::size_t n = (static_cast<std::size_t>(bytes) + kAlignment - 1) / kAlignment * kAlignment;
  return ::operator new(n, std::align_val_t(kAlignment), std::nothrow);
}

void CpuDevice::raw_free(void* p, MemKind) noexcept { ::operator delete(p, std::align_val_t(kAlignment)); }

void CpuDevice::raw_zero(void* p, std::int64_t bytes, MemKind) { std::memset(p, 0, static_cast<std::size_t>(bytes)); }

}  // namespace attnbench
