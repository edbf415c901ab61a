// The JSON report of a run: the environment fingerprint, the command line, and every result row (the same
// columns as the CSV, nulls for empty cells, plus "samples_us": the raw step samples and "ledger": the
// backend's allocations by phase and tag). Versioned like the CSV.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "report/results_csv.hpp"

namespace attnbench {

using Environment = std::vector<std::pair<std::string, std::string>>;

// Writes the whole document to `path` (throws InputError naming --json when it cannot be written).
void write_results_json(const std::string& path, const Environment& env, const std::string& command,
                        const std::vector<ResultRow>& rows);

}  // namespace attnbench
