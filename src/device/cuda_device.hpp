// The CUDA device: entry points only (no CUDA headers here, so device_factory.cpp and the tests compile as
// plain C++). The implementation, CudaDevice, is in cuda_device.cu.
#pragma once

#include <memory>
#include <string>

#include "device/device.hpp"

namespace attnbench {

// Whether a CUDA GPU can be used in this process. Probed once (cudaGetDeviceCount) and cached: any error
// (no driver, a driver older than the runtime, ...) means not usable, with the CUDA error text as detail;
// usable: detail is "NVIDIA H200 (device 0 of 1)".
struct CudaProbe {
  bool usable = false;
  std::string detail;
  int count = 0;  // cudaGetDeviceCount: the GPUs visible to this process
};
CudaProbe cuda_probe();

// A fresh CUDA device on GPU `ordinal`: its own non-blocking stream, its own stream-ordered memory pool and
// ledger. Throws DeviceError when the GPU cannot be initialised.
std::unique_ptr<Device> make_cuda_device(int ordinal);

}  // namespace attnbench
