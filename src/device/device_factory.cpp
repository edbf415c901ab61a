#include "device/device_factory.hpp"

#include "core/enum_names.hpp"
#include "core/errors.hpp"
#include "device/cpu_device.hpp"
#if defined(ATTNBENCH_HAS_CUDA)
#include "device/cuda_device.hpp"
#endif

namespace attnbench {

DeviceChoice parse_device_choice(const std::string& s) {
  if (s == "auto") return DeviceChoice::automatic;
  if (s == "cpu") return DeviceChoice::cpu;
  if (s == "cuda" || s == "gpu") return DeviceChoice::cuda;
  throw InputError("--device: unknown device '" + s + "' (expected auto, cpu or cuda)");
}

namespace {
constexpr EnumName<DeviceChoice> kDeviceChoiceNames[] = {
    {DeviceChoice::automatic, "auto"}, {DeviceChoice::cpu, "cpu"}, {DeviceChoice::cuda, "cuda"}};
}  // namespace

const char* device_choice_name(DeviceChoice c) { return enum_name(kDeviceChoiceNames, c); }

GpuAvailability gpu_availability() {
  GpuAvailability a;
#if defined(ATTNBENCH_HAS_CUDA)
  a.compiled = true;
  const CudaProbe p = cuda_probe();
  a.usable = p.usable;
  a.detail = p.detail;
#else
  a.detail = "attnbench was built without CUDA";
#endif
  return a;
}

DeviceChoice resolve_device_choice(DeviceChoice choice) {
  if (choice != DeviceChoice::automatic) return choice;
  return gpu_availability().usable ? DeviceChoice::cuda : DeviceChoice::cpu;
}

DeviceChoice resolve_usable_device(DeviceChoice choice) {
  const DeviceChoice c = resolve_device_choice(choice);
  if (c == DeviceChoice::cuda && !gpu_availability().usable)
    throw InputError("--device cuda: no usable GPU (" + gpu_availability().detail + ")");
  return c;
}

std::unique_ptr<Device> make_device(DeviceChoice choice) {
  const DeviceChoice c = resolve_device_choice(choice);
  if (c == DeviceChoice::cpu) return std::make_unique<CpuDevice>();
  const GpuAvailability a = gpu_availability();
  if (!a.usable) throw InputError("--device cuda: no usable GPU (" + a.detail + ")");
#if defined(ATTNBENCH_HAS_CUDA)
  return make_cuda_device(0);
#else
  return nullptr;
#endif
}

}  // namespace attnbench
