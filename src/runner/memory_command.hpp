// `attnbench memory` as a command: constructs each backend on the chosen device (runner/memory_probe.hpp) and
// writes what it allocated as a table, CSV or JSON (report/memory_report.hpp).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "runner/plan.hpp"

namespace attnbench {

struct MemoryOptions {
  ModelOptions m;
  std::vector<std::string> backends = {"all"};
  std::string prefill_backend;  // empty: none
  std::string format = "table";  // table | csv | json
  std::string out;               // empty: stdout
  std::string config_file;       // --config (set by the parser; --out must never overwrite it)
};

// Returns the exit code: 0, or 1 when a backend could not be constructed (its error is in the report).
int run_memory_command(const MemoryOptions& options, std::ostream& out);

}  // namespace attnbench
