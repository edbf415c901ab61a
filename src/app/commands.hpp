// One function per subcommand (`list` and `env` print runner/inventory.hpp). Each returns the process exit code; results go to files / stdout,
// progress and warnings to stderr.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "app/options.hpp"

namespace attnbench {

int run_memory_command(const MemoryOptions& options, std::ostream& out);
// `compare`: 0 pass, 1 when the gate fails (a confirmed slowdown, memory growth, a correctness loss, a missing row).
// When one side holds only library rows (*_lib) and the other model rows, it compares model vs library instead
// (report/peers.hpp): informational, 0.
int run_compare_command(const CompareCliOptions& options, std::ostream& out);
int run_report_command(const ReportOptions& options, std::ostream& out);
// `run` / `validate`: args are the command line as given (repro commands are built from them).
int run_sweep_command(const RunOptions& options, const std::vector<std::string>& args, bool validate_only,
                      std::ostream& out);

}  // namespace attnbench
