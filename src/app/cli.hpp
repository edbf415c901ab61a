// The command line: CLI11 wiring from argv to the option structs. Bad usage throws InputError (exit 2).
#pragma once

#include <string>
#include <vector>

#include "app/options.hpp"
#include "engine/model_config.hpp"

namespace attnbench {

// args excludes the program name. `--config FILE` (anywhere) reads TOML: top-level keys set the options of
// the subcommand being run, a [memory] / [run] section those of that subcommand only.
ParsedCli parse_cli(const std::vector<std::string>& args);

// The preset with --layers / server overrides applied, validated (InputError names the option).
ModelConfig resolve_model(const ModelOptions& m);
ServerArgs resolve_server_args(const ModelOptions& m);
// The sweep axes of `run` / `validate` (checked when expanded).
struct RunPlan;
RunPlan make_run_plan(const RunOptions& r);

// "all" expands to every registered backend; names are checked against the registry.
std::vector<std::string> resolve_backends(const std::vector<std::string>& names);

}  // namespace attnbench
