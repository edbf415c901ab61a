#include "device/device_factory.hpp"

#include "core/enum_names.hpp"
#include "core/errors.hpp"
#include "core/files.hpp"
#include "device/cpu_device.hpp"
#if defined(ATTNBENCH_HAS_CUDA)
#include "device/cuda_device.hpp"
#include "kernels/cuda/kernels_cuda.cuh"
#endif

namespace attnbench {

DeviceChoice parse_device_choice(const std::string& s) {
  if (s == "auto") return DeviceChoice::automatic;
  if (s == "cpu") return DeviceChoice::cpu;
  if (s == "cuda" || s == "gpu") return DeviceChoice::cuda;
  if (parse_device_ordinal(s) >= 0) return DeviceChoice::cuda;
  throw InputError("--device: unknown device '" + printable(s) + "' (expected " + kDeviceValues + ")");
}

int parse_device_ordinal(const std::string& s) {
  if (s.rfind("cuda:", 0) != 0) return -1;
  const std::string n = s.substr(5);
  bool ok = !n.empty() && n.size() <= 4 && (n.size() == 1 || n[0] != '0');
  for (const char c : n) ok = ok && c >= '0' && c <= '9';
  if (!ok) throw InputError("--device: '" + printable(s) + "': N of cuda:N must be a GPU ordinal (0, 1, ...)");
  return std::stoi(n);
}

void check_cuda_ordinal(int ordinal, int visible, const std::string& what) {
  if (ordinal >= 0 && ordinal < visible) return;
  throw InputError(what + ": only " + std::to_string(visible) + " GPU(s) visible" +
                   (visible > 0 ? " (cuda:0 to cuda:" + std::to_string(visible - 1) + ")" : std::string()));
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
  a.count = p.count;
#else
  a.detail = "attnbench was built without CUDA";
#endif
  return a;
}

DeviceChoice resolve_device_choice(DeviceChoice choice) {
  if (choice != DeviceChoice::automatic) return choice;
  return gpu_availability().usable ? DeviceChoice::cuda : DeviceChoice::cpu;
}

DeviceChoice resolve_usable_device(const std::string& typed) {
  const DeviceChoice c = resolve_device_choice(parse_device_choice(typed));
  // The value as typed: "gpu" or "cuda:1" is no "cuda" to the one who typed it.
  if (c == DeviceChoice::cuda && !gpu_availability().usable)
    throw InputError("--device '" + printable(typed) + "': no usable GPU (" + gpu_availability().detail +
                     "); --device takes " + kDeviceValues + ", and here only auto or cpu");
#if defined(ATTNBENCH_HAS_CUDA)
  if (c == DeviceChoice::cuda) (void)prefill_kernel_from_env();  // a bad ATTNBENCH_PREFILL_KERNEL: exit 2 up front
#endif
  return c;
}

std::unique_ptr<Device> make_device(DeviceChoice choice) { return make_device(choice, 0); }

std::unique_ptr<Device> make_device(DeviceChoice choice, int cuda_ordinal) {
  const DeviceChoice c = resolve_device_choice(choice);
  if (c == DeviceChoice::cpu) return std::make_unique<CpuDevice>();
  const GpuAvailability a = gpu_availability();
  if (!a.usable) throw InputError("--device cuda: no usable GPU (" + a.detail + ")");
#if defined(ATTNBENCH_HAS_CUDA)
  check_cuda_ordinal(cuda_ordinal, a.count, "--device cuda:" + std::to_string(cuda_ordinal));
  return make_cuda_device(cuda_ordinal);
#else
  return nullptr;
#endif
}

}  // namespace attnbench
