// What the command line parses into (app/cli.cpp), unit-tested by feeding argv vectors: each subcommand's
// options are the struct its command takes, declared beside the command in runner/ or report/.
#pragma once

#include <string>
#include <vector>

#include "report/commands.hpp"
#include "report/shards.hpp"
#include "runner/memory_command.hpp"
#include "runner/sweep_command.hpp"

namespace attnbench {

// The subcommands, in the order --help, the error messages and --config's sections name them.
inline const std::vector<std::string> kSubcommands = {"run",    "validate", "memory", "compare",
                                                      "report", "merge",    "list",   "env"};
// "run, validate, memory, compare, report, merge, list, env": for error messages.
std::string subcommand_list();

// `env`: the machine, the build, whether a GPU is usable.
struct EnvOptions {
  std::string format = "text";  // text | json
};

enum class Command { none, memory, list, env, run, validate, compare, report, merge };

struct ParsedCli {
  Command command = Command::none;
  MemoryOptions memory;       // runner/memory_command.hpp
  RunOptions run;             // runner/sweep_command.hpp
  CompareCliOptions compare;  // report/commands.hpp
  ReportOptions report;       // report/commands.hpp
  EnvOptions env;
  MergeOptions merge;  // report/shards.hpp
  std::vector<std::string> args;  // the arguments as given (for repro commands)
  bool exit_now = false;  // --help / --version: print `output`, exit with exit_code
  int exit_code = 0;
  std::string output;
};

}  // namespace attnbench
