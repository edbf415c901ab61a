// What attnbench knows and where it runs: the `list` and `env` subcommands' output.
#pragma once

#include <ostream>
#include <string>

namespace attnbench {

// `list`: the registered backends, the model presets, the modelled SGLang versions and the configs found
// (core/data_dir.hpp's search order).
void write_inventory(std::ostream& out);

// `env`: format "text" (default) or "json" (one object: the host keys of a results file's environment, then
// cuda_compiled, gpu_usable, gpu, device_auto, omp_wait_policy, load_average_1m, configs_dir). InputError naming
// --format for any other format.
void write_environment_report(std::ostream& out, const std::string& format);

}  // namespace attnbench
