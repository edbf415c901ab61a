// `attnbench compare` and `attnbench report` as commands: read the result files, run the gate (compare.hpp) or
// the peer comparison (peers.hpp, sglang_peers.hpp), or write the Markdown (markdown.hpp). What they need to
// know about backends and models comes in as data (backend_catalog.hpp, MarkdownExtras), filled by the layers
// above. Each returns the process exit code; results go to --out or `out`, warnings to stderr.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "report/backend_catalog.hpp"
#include "report/compare.hpp"
#include "report/markdown.hpp"

namespace attnbench {

// `compare BASE NEW`: the CI gate.
struct CompareCliOptions {
  std::string base, now;
  CompareOptions gate;  // --max-slowdown, --max-memory-growth, --alpha, --min-effect, --allow-*, --strict
  bool peers = false;  // --peers: BASE = model rows, NEW = library rows (*_lib): the peer comparison, not the gate
  std::string format = "table";  // table | md | csv | json
  std::string out;
};

// `report RESULTS`: the Markdown for a PR.
struct ReportOptions {
  std::string results;
  std::string memory;   // optional memory JSON (attnbench memory --format json)
  std::vector<std::string> peers;  // library rows (the library script's .json / .csv): "Model vs library"
  std::string format = "md";
  std::string out;
  std::string plots;  // --plots DIR: link DIR's PNGs (scripts/plot.py's output) under "### Figures"
};

// `compare`: 0 pass, 1 when the gate fails (a confirmed slowdown, memory growth, a correctness loss, a missing
// row). With --peers, model rows (BASE) against library rows (NEW) instead (peers.hpp): informational, 0.
int run_compare_command(const CompareCliOptions& options, std::ostream& out, const BackendCatalog& catalog);
// `report`: the Markdown report; `extras` without figures (--plots adds them).
int run_report_command(const ReportOptions& options, std::ostream& out, const BackendCatalog& catalog,
                       MarkdownExtras extras);

}  // namespace attnbench
