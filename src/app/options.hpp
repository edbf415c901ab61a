// Option structs of every subcommand: plain data filled by the CLI (app/cli.cpp) and unit-tested by feeding
// argv vectors. Defaults are SGLang's where an option models SGLang.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/server_args.hpp"

namespace attnbench {

// Model preset and SGLang server arguments, shared by `memory` and `run`.
struct ModelOptions {
  std::string model = "llama-3.1-8b";
  int layers = 0;  // 0: the preset's
  ServerArgs server;
  std::int64_t flashinfer_workspace_size = 0;   // SGLANG_FLASHINFER_WORKSPACE_SIZE; 0: unset
  std::string flashinfer_use_tensor_core;       // SGLANG_FLASHINFER_USE_TENSOR_CORE: "", "true" or "false"
  std::string device = "auto";
};

struct MemoryOptions {
  ModelOptions m;
  std::vector<std::string> backends = {"all"};
  std::string prefill_backend;  // empty: none
  std::string format = "table";  // table | csv | json
  std::string out;               // empty: stdout
};

enum class Command { none, memory, list, env };

struct ParsedCli {
  Command command = Command::none;
  MemoryOptions memory;
  bool exit_now = false;  // --help / --version: print `output`, exit with exit_code
  int exit_code = 0;
  std::string output;
};

}  // namespace attnbench
