// Picks the device: --device auto (CUDA when a usable GPU exists, else the CPU), cpu, or cuda.
#pragma once

#include <memory>
#include <string>

#include "device/device.hpp"

namespace attnbench {

enum class DeviceChoice { automatic, cpu, cuda };

DeviceChoice parse_device_choice(const std::string& s);  // InputError naming --device
const char* device_choice_name(DeviceChoice c);

struct GpuAvailability {
  bool compiled = false;  // built with CUDA
  bool usable = false;    // a GPU answered
  std::string detail;     // GPU name, or why none is usable
};
GpuAvailability gpu_availability();

// A fresh device (its own ledger and named buffers). `cuda` without a usable GPU is an InputError.
std::unique_ptr<Device> make_device(DeviceChoice choice);
// What `automatic` resolves to here.
DeviceChoice resolve_device_choice(DeviceChoice choice);
// resolve_device_choice, checked before any work: `cuda` without a usable GPU is an InputError naming --device.
DeviceChoice resolve_usable_device(DeviceChoice choice);

}  // namespace attnbench
