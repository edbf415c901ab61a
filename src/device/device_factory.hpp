// Picks the device: --device auto (CUDA when a usable GPU exists, else the CPU), cpu, cuda, or cuda:N (the GPU of
// ordinal N among the visible ones; plain cuda is GPU 0, or the launcher's local rank in a sharded sweep).
#pragma once

#include <memory>
#include <string>

#include "device/device.hpp"

namespace attnbench {

enum class DeviceChoice { automatic, cpu, cuda };

// What --device takes, for its help text and its errors.
inline constexpr const char* kDeviceValues = "auto, cpu, cuda, gpu (= cuda) or cuda:N";

// InputError naming --device, the value and kDeviceValues; "gpu" and "cuda:N" -> cuda.
DeviceChoice parse_device_choice(const std::string& s);
// N of "cuda:N" (decimal, no sign or leading zero), -1 for any other valid --device; InputError naming --device.
int parse_device_ordinal(const std::string& s);
// InputError "<what>: only N GPU(s) visible (cuda:0 to cuda:N-1)" unless 0 <= ordinal < visible.
void check_cuda_ordinal(int ordinal, int visible, const std::string& what);
const char* device_choice_name(DeviceChoice c);

struct GpuAvailability {
  bool compiled = false;  // built with CUDA
  bool usable = false;    // a GPU answered
  std::string detail;     // GPU name, or why none is usable
  int count = 0;          // visible GPUs (CUDA_VISIBLE_DEVICES applies)
};
GpuAvailability gpu_availability();

// A fresh device (its own ledger and named buffers). `cuda` without a usable GPU is an InputError.
std::unique_ptr<Device> make_device(DeviceChoice choice);
// The same on GPU `cuda_ordinal` when `choice` resolves to cuda (ignored for the CPU).
std::unique_ptr<Device> make_device(DeviceChoice choice, int cuda_ordinal);
// What `automatic` resolves to here.
DeviceChoice resolve_device_choice(DeviceChoice choice);
// resolve_device_choice of parse_device_choice(`typed`), checked before any work: `typed` (the --device value
// as given) asking for a GPU where none is usable is an InputError naming --device, `typed`, why, and the
// values that run here: "--device 'gpu': no usable GPU (attnbench was built without CUDA); --device takes
// auto, cpu, cuda, gpu (= cuda) or cuda:N, and here only auto or cpu".
DeviceChoice resolve_usable_device(const std::string& typed);

}  // namespace attnbench
