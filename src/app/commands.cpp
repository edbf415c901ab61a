#include "app/commands.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "app/cli.hpp"
#include "backends/registry.hpp"
#include "core/errors.hpp"
#include "core/version.hpp"
#include "device/device_factory.hpp"
#include "runner/memory_probe.hpp"

namespace attnbench {

namespace {

// Opens --out before any work, so a bad path fails fast (exit 2) and nothing is measured in vain.
std::ofstream open_output(const std::string& path) {
  std::ofstream f(path, std::ios::out | std::ios::trunc);
  if (!f) throw InputError("--out: cannot write '" + path + "'");
  return f;
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      auto pos = line.find(':');
      return pos == std::string::npos ? line : line.substr(pos + 2);
    }
  return "unknown";
}

}  // namespace

int run_memory_command(const MemoryOptions& o, std::ostream& out) {
  MemoryRequest req;
  req.model = resolve_model(o.m);
  req.server = resolve_server_args(o.m);
  req.backends = resolve_backends(o.backends);
  if (!o.prefill_backend.empty()) req.prefill_backend = o.prefill_backend;
  const DeviceChoice choice = parse_device_choice(o.m.device);
  const DeviceChoice resolved = resolve_device_choice(choice);
  if (resolved == DeviceChoice::cuda && !gpu_availability().usable)
    throw InputError("--device cuda: no usable GPU (" + gpu_availability().detail + ")");
  std::ofstream file;
  if (!o.out.empty()) file = open_output(o.out);
  std::cerr << "attnbench: memory on " << device_choice_name(resolved)
            << (choice == DeviceChoice::automatic ? " (auto)" : "") << ", " << req.backends.size() << " backend(s)\n";
  const MemoryReport report = measure_memory(req, [resolved] { return make_device(resolved); });
  std::ostream& os = o.out.empty() ? out : static_cast<std::ostream&>(file);
  if (o.format == "csv")
    write_memory_csv(os, report);
  else if (o.format == "json")
    write_memory_json(os, report);
  else
    write_memory_table(os, report);
  os.flush();
  if (!o.out.empty()) std::cerr << "attnbench: wrote " << o.out << "\n";
  for (const auto& b : report.backends)
    if (!b.error.empty()) return 1;
  return 0;
}

int run_list_command(std::ostream& out) {
  out << "backends:\n";
  for (const auto& b : backend_registry()) out << "  " << b.name << std::string(20 - std::min<std::size_t>(19, b.name.size()), ' ') << b.models << "\n";
  out << "model presets (per tensor-parallel rank):\n";
  for (const auto& m : model_presets()) {
    out << "  " << m.name << std::string(20 - std::min<std::size_t>(19, m.name.size()), ' ') << m.architecture << ", "
        << m.num_layers << " layers, " << m.num_qo_heads() << " q / " << m.num_kv_heads() << " kv heads, head_dim "
        << m.head_dim << ", context " << m.context_len;
    if (m.has_sliding_window()) out << ", window " << m.sliding_window;
    out << "\n";
  }
  out << "configs:\n";
  for (const char* dir : {"configs", ATTNBENCH_SOURCE_DIR "/configs"}) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) continue;
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
      if (e.path().extension() == ".toml") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) out << "  " << f << "\n";
    break;
  }
  return 0;
}

int run_env_command(std::ostream& out) {
  const GpuAvailability gpu = gpu_availability();
  out << "attnbench " << version() << " (commit " << git_commit() << ")\n";
  out << "compiler: " << compiler() << "\n";
  out << "cpu: " << cpu_model() << ", " << std::thread::hardware_concurrency() << " hardware threads\n";
  out << "cuda: " << (gpu.compiled ? "compiled in" : "not compiled in") << "\n";
  out << "gpu: " << (gpu.usable ? gpu.detail : "none usable (" + gpu.detail + ")") << "\n";
  out << "device auto: " << device_choice_name(resolve_device_choice(DeviceChoice::automatic)) << "\n";
  return 0;
}

}  // namespace attnbench
