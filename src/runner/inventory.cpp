#include "runner/inventory.hpp"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "backends/registry.hpp"
#include "core/data_dir.hpp"
#include "core/errors.hpp"
#include "core/omp_env.hpp"
#include "core/version.hpp"
#include "device/device_factory.hpp"
#include "device/environment.hpp"
#include "engine/model_config.hpp"
#include "engine/sglang_profile.hpp"

namespace attnbench {

void write_inventory(std::ostream& out) {
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
  out << "SGLang versions modelled (--sglang; the first is the default):\n";
  for (const auto& p : sglang_profiles())
    out << "  " << p.version << std::string(20 - std::min<std::size_t>(19, p.version.size()), ' ') << "FlashInfer "
        << p.flashinfer_version << ": " << p.description << "\n";
  out << "configs:\n";
  // The working directory's configs/, the installed ones (<prefix>/share/attnbench/configs), the source folder's;
  // ATTNBENCH_DATA_DIR overrides (core/data_dir.hpp).
  if (const std::optional<std::string> dir = config_dir()) {
    std::error_code ec;
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(*dir, ec))
      if (e.path().extension() == ".toml") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) out << "  " << f << "\n";
  } else {
    std::string where;
    for (const std::string& d : config_dir_candidates()) where += (where.empty() ? "" : ", ") + d;
    out << "  none found (looked in " << where << "; set ATTNBENCH_DATA_DIR to a folder holding configs/)\n";
  }
}

void write_environment_report(std::ostream& out, const std::string& format) {
  const GpuAvailability gpu = gpu_availability();
  const std::optional<std::string> configs = config_dir();
  const std::optional<double> load = load_average_1m();
  if (format == "json") {
    // The host part under the keys of every results file's "environment" (device/environment.hpp), then the rest.
    nlohmann::ordered_json j;
    j["schema"] = "attnbench.env";
    j["schema_version"] = 1;
    for (const auto& [k, v] : host_environment()) j[k] = v;
    j["cuda_compiled"] = gpu.compiled;
    j["gpu_usable"] = gpu.usable;
    j["gpu"] = gpu.detail;
    j["device_auto"] = device_choice_name(resolve_device_choice(DeviceChoice::automatic));
    j["omp_wait_policy"] = omp_wait_policy_description();
    j["load_average_1m"] = load ? nlohmann::ordered_json(*load) : nlohmann::ordered_json(nullptr);
    j["configs_dir"] = configs ? nlohmann::ordered_json(*configs) : nlohmann::ordered_json(nullptr);
    out << j.dump(2) << "\n";
    return;
  }
  if (format != "text") throw InputError("--format: '" + format + "' (expected text or json)");
  out << "attnbench " << version() << " (commit " << git_commit() << ")\n";
  out << "compiler: " << compiler() << "\n";
  out << "cpu: " << cpu_model() << ", " << hardware_threads() << " hardware threads\n";
  out << "cuda: " << (gpu.compiled ? "compiled in" : "not compiled in") << "\n";
  out << "gpu: " << (gpu.usable ? gpu.detail : "none usable (" + gpu.detail + ")") << "\n";
  out << "device auto: " << device_choice_name(resolve_device_choice(DeviceChoice::automatic)) << "\n";
  out << "openmp wait policy: " << omp_wait_policy_description() << "\n";
  if (load) out << "load average (1 min): " << std::fixed << std::setprecision(2) << *load << std::defaultfloat << "\n";
  out << "configs: " << (configs ? *configs : std::string("none found")) << "\n";
}

}  // namespace attnbench
