// The result rows of a case as the runner fills them (runner-internal): the row every backend and timing
// starts from, its ledger phases, its timing and its notes.
#pragma once

#include <string>

#include "report/results_io.hpp"
#include "runner/case.hpp"
#include "runner/phases.hpp"
#include "runner/plan.hpp"
#include "runner/timed_step.hpp"

namespace attnbench {

// v with 3 significant digits (notes).
std::string format_double(double v);
// Appends `more` to a row's note, "; "-separated.
void append_note(std::string& note, const std::string& more);

// The case's shape, the backend, device and timing, status "ok" and the row's repro command.
ResultRow base_row(const Case& c, const std::string& backend, const std::string& device, const std::string& timing,
                   const RunSettings& s);
// The phase's ledger groups as the row's ledger entries (phase, tag, kind, bytes, shared, count).
void add_ledger(ResultRow& r, const PhaseDelta& d);
// Step statistics, the metadata / per-layer forward medians, throughput over the forward part, the step's
// transient peak and the sampler's notes.
void fill_timing(ResultRow& r, const TimedSteps& t, const Case& c, const RunSettings& s);

}  // namespace attnbench
