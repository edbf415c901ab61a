// The current device's SM count and compute capability, asked of the driver once per device and process: the
// kernel launchers consult them on every eager launch (the decode kernel's CTA-shape rule and its merge's
// programmatic dependent launch, the Hopper prefill kernel's dispatch); graph replays never run this host code.
// current_device_facts() is nullptr where no device answers (cudaGetDevice or an attribute query failing, e.g. a
// machine without a driver); a device's answer, either way, is kept.
#pragma once

#include <cuda_runtime.h>

#include <mutex>

namespace attnbench::cuda_detail {

struct DeviceFacts {
  int sms = 0, major = 0, minor = 0;
};

inline const DeviceFacts* current_device_facts() {
  constexpr int kMaxDevices = 64;
  static DeviceFacts facts[kMaxDevices];
  static bool known[kMaxDevices];
  static std::once_flag once[kMaxDevices];
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return nullptr;
  std::call_once(once[dev], [dev] {
    DeviceFacts& f = facts[dev];
    known[dev] = cudaDeviceGetAttribute(&f.sms, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess &&
                 cudaDeviceGetAttribute(&f.major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
                 cudaDeviceGetAttribute(&f.minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess;
  });
  return known[dev] ? &facts[dev] : nullptr;
}

}  // namespace attnbench::cuda_detail
