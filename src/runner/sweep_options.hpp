// The options that shape a sweep's rows, recorded with the results so that --resume continues the same sweep:
// everything in the plan but the selection (--case-id, --filter) and where the rows go (--out, --json, ...).
// The JSON report's environment carries them as two keys:
//   options_fingerprint  "v1:<16 hex digits>", FNV-1a (64 bit) of the options text below;
//   options              the options themselves, readable: "--model=tiny; --batch=1,2; ...".
// A trace is recorded by its contents (FNV-1a of its bytes), not by its path.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "report/results_io.hpp"
#include "runner/plan.hpp"

namespace attnbench {

// (option, value) in a fixed order; list values joined by ','. Keys as the CLI spells them ("--batch"), and
// "subcommand" (run or validate: validate rows carry no timing).
using SweepOptions = std::vector<std::pair<std::string, std::string>>;

inline constexpr const char* kOptionsFingerprintKey = "options_fingerprint";
inline constexpr const char* kOptionsKey = "options";

// The options of a validated `plan` that shape its rows; `backends` as resolve_backends() returns them. Reads
// the trace file when there is one (InputError naming --trace when it cannot be read).
SweepOptions sweep_options(const RunPlan& plan, const std::vector<std::string>& backends, bool validate_only);

// options_text() / parse_options_text(): report/results_io.hpp (merge reads them too).

// "v1:<16 hex digits>" of options_text(options).
std::string options_fingerprint(const SweepOptions& options);

// The two environment entries ({kOptionsFingerprintKey, ...}, {kOptionsKey, ...}) of `options`.
std::vector<std::pair<std::string, std::string>> options_environment(const SweepOptions& options);

// --resume: whether the results being continued were written by the same options. `previous` is the
// environment of the JSON report at `json` (beside the results CSV `csv`). Throws InputError
//   "--resume: JSON has no options_fingerprint (written by an older attnbench?): cannot tell whether CSV holds
//    the same sweep; run without --resume to start it again"
//   "--resume: CSV was written with other options: --batch 1 (now 2), --mode decode (now extend); run with
//    those options, or without --resume to start again"
void check_resume_options(const std::vector<std::pair<std::string, std::string>>& previous,
                          const SweepOptions& now, const std::string& csv, const std::string& json);

}  // namespace attnbench
