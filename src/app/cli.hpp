// The command line: CLI11 wiring from argv to the option structs. Bad usage throws InputError (exit 2).
#pragma once

#include <string>
#include <vector>

#include "app/options.hpp"

namespace attnbench {

// args excludes the program name. `--config FILE` (anywhere) reads TOML: top-level keys set the options of
// the subcommand being run, a [memory] / [run] section those of that subcommand only. Options are checked
// for their syntax here, for their meaning by the runner (validate in runner/plan.hpp).
ParsedCli parse_cli(const std::vector<std::string>& args);

}  // namespace attnbench
