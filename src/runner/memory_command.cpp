#include "runner/memory_command.hpp"

#include <iostream>

#include "core/files.hpp"
#include "device/device_factory.hpp"
#include "device/environment.hpp"
#include "engine/model_config.hpp"
#include "report/memory_report.hpp"
#include "runner/backend_catalog.hpp"
#include "runner/memory_probe.hpp"
#include "runner/sweep_files.hpp"

namespace attnbench {

int run_memory_command(const MemoryOptions& o, std::ostream& out) {
  const MemoryRequest req = make_memory_request(o.m, o.backends, o.prefill_backend);
  const DeviceChoice choice = parse_device_choice(o.m.device);
  const DeviceChoice resolved = resolve_usable_device(o.m.device);
  // --out: checked (never the --config file, by device and inode) and opened before any work, so a bad path
  // fails fast (exit 2) and nothing is measured in vain; written all or nothing. "-": stdout.
  if (!o.out.empty() && o.out != "-") check_output_path(o.out, "--out");
  OutputTarget output(o.out, out, {{"--config", o.config_file}, {"--model", model_config_file(o.m.model)}});
  std::ostream& os = output.stream();
  std::cerr << "attnbench: memory on " << device_choice_name(resolved)
            << (choice == DeviceChoice::automatic ? " (auto)" : "") << ", " << req.backends.size() << " backend(s)\n";
  const int ordinal = resolved == DeviceChoice::cuda && parse_device_ordinal(o.m.device) >= 0
                          ? parse_device_ordinal(o.m.device)
                          : 0;
  if (resolved == DeviceChoice::cuda) check_cuda_ordinal(ordinal, gpu_availability().count, "--device " + o.m.device);
  const MemoryReport report = measure_memory(req, [resolved, ordinal] { return make_device(resolved, ordinal); });
  if (o.format == "csv")
    write_memory_csv(os, report);
  else if (o.format == "json")
    write_memory_json(os, report, backend_catalog());
  else
    write_memory_table(os, report, backend_catalog());
  output.finish();
  if (!output.is_stdout()) std::cerr << "attnbench: wrote " << printable(o.out) << "\n";
  for (const auto& b : report.backends)
    if (!b.error.empty()) return 1;
  return 0;
}

}  // namespace attnbench
