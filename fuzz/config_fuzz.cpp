// libFuzzer target: a --config TOML file. Each input is written to a scratch file and parsed as
// `attnbench run --config FILE` (TomlConfig, toml++ under CLI11, routed to the subcommand: src/app/cli.cpp and
// src/app/config_toml.cpp, after TomlConfig::check_file);
// what parses is then turned into a plan and expanded into cases, the validation every option value goes
// through before anything is allocated (src/runner/case.cpp).
// Expected outcomes: success, or attnbench::InputError (exit 2 with a message). Anything else is a finding:
// a crash, a sanitizer report, or any other exception (libFuzzer keeps the input; std::terminate aborts).
// Build and run: scripts/fuzz.sh (FUZZ_SECONDS per target, default 60).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "app/cli.hpp"
#include "core/errors.hpp"
#include "fuzz/scratch_file.hpp"
#include "runner/case.hpp"

namespace {

// One scratch file per process, rewritten for every input.
const std::string& write_scratch(const std::uint8_t* data, std::size_t size) {
  static attnbench::fuzz::ScratchFile scratch("attnbench-config-fuzz-XXXXXX.toml", 5);
  return scratch.write(data, size);
}

template <class T>
std::size_t count_or_one(const std::vector<T>& v) {
  return v.empty() ? 1 : v.size();
}

// Expansion allocates per-request length vectors of every case. expand_cases refuses sweeps beyond
// kMaxSweepCases / kMaxSweepRequests before building anything (and a batch beyond --max-running-requests before
// drawing its lengths), but 10^7 requests are still seconds of work per input: larger plans only run
// check_sweep_size, which must refuse or accept them at once.
bool small_enough_to_expand(const attnbench::RunPlan& r) {
  const std::size_t product = count_or_one(r.models) * count_or_one(r.dtypes) * count_or_one(r.modes) *
                              count_or_one(r.page_sizes) * count_or_one(r.batches) * count_or_one(r.kv_lens) *
                              count_or_one(r.prefix_lens) * count_or_one(r.extend_lens) *
                              count_or_one(r.seeds) * count_or_one(r.extend_batches) *
                              count_or_one(r.verify_batches) * count_or_one(r.verify_kv_lens);
  if (product > 256) return false;
  for (const auto* list : {&r.batches, &r.extend_batches, &r.verify_batches})
    for (int b : *list)
      if (b > 4096) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = write_scratch(data, size);
  try {
    const attnbench::ParsedCli cli = attnbench::parse_cli({"run", "--config", path});
    if (cli.exit_now || cli.command != attnbench::Command::run) return 0;
    attnbench::RunPlan r = cli.run.plan;
    r.trace.clear();  // a fuzzed path could name /dev/stdin; traces have their own target (trace_fuzz)
    if (!small_enough_to_expand(r)) {
      attnbench::check_sweep_size(r);  // sizes alone: must not allocate per case
      return 0;
    }
    (void)attnbench::expand_cases(r);
  } catch (const attnbench::InputError&) {
    // the expected outcome for bad input
  }
  return 0;
}
