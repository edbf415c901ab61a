#include "report/commands.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <set>
#include <utility>

#include "core/errors.hpp"
#include "core/files.hpp"
#include "report/compare.hpp"
#include "report/memory_report.hpp"
#include "report/peers.hpp"
#include "report/results_io.hpp"
#include "report/sglang_peers.hpp"

namespace attnbench {

int run_compare_command(const CompareCliOptions& o, std::ostream& out, const BackendCatalog& catalog) {
  CompareOptions opt = o.gate;
  opt.must_stay_identical = catalog.change;
  // NaN compares false with everything: --max-slowdown nan would let every slowdown through, --min-effect nan
  // would call every change "same". Both gates must be finite.
  if (!(opt.max_slowdown >= 0 && std::isfinite(opt.max_slowdown)))
    throw InputError("--max-slowdown: must be a finite number >= 0 (a fraction, e.g. 0.05)");
  if (opt.max_memory_growth < 0) throw InputError("--max-memory-growth: must be >= 0 bytes");
  if (!(opt.alpha > 0 && opt.alpha < 1)) throw InputError("--alpha: must be in (0, 1)");
  if (!(opt.min_effect >= 0 && std::isfinite(opt.min_effect)))
    throw InputError("--min-effect: must be a finite number >= 0 (a fraction)");
  OutputTarget output(o.out, out, {{"BASE", o.base}, {"NEW", o.now}});
  const ResultSet base = load_result_set(o.base);
  const ResultSet now = load_result_set(o.now);
  if (o.peers) {
    // Model rows (BASE) against the real libraries' rows (NEW): how far attnbench is from the library, not a gate.
    check_peer_sides(base, now, o.base, o.now);
    const std::string line = "peer comparison: model rows of BASE vs library rows of NEW";
    PeerComparison pc = compare_peers(base.rows, now.rows, catalog);
    for (const std::string& w : check_peer_environments(base, now, opt.allow_env_mismatch, "BASE", "NEW"))
      pc.warnings.push_back(w);
    if (!now.environment.empty()) pc.library_environments.push_back(now.environment);
    std::ostream& os = output.stream();
    // CSV and JSON stay machine-readable: the line goes to stderr, and into the JSON document.
    if (o.format == "md" || o.format == "markdown") {
      os << line << "\n\n";
      write_peer_markdown(os, pc);
      const SglangComparison sc = compare_sglang(base.rows, now.rows, catalog, {now.environment});
      if (!sc.memory.empty()) write_sglang_markdown(os << "\n", sc);
    } else if (o.format == "csv") {
      std::cerr << "attnbench compare: " << line << "\n";
      write_peer_csv(os, pc);
    } else if (o.format == "json") {
      write_peer_json(os, pc, line);
    } else {
      os << line << "\n\n";
      write_peer_table(os, pc);
    }
    output.finish();
    return 0;
  }
  check_compare_sides(base, now, o.base, o.now);
  const CompareResult r = compare_results(base, now, opt);
  std::ostream& os = output.stream();
  if (o.format == "md" || o.format == "markdown")
    write_compare_markdown(os, r);
  else if (o.format == "csv")
    write_compare_csv(os, r);
  else if (o.format == "json")
    write_compare_json(os, r);
  else
    write_compare_table(os, r);
  output.finish();
  const auto too_few = std::count_if(r.pairs.begin(), r.pairs.end(), [](const PairResult& p) { return p.too_few_samples; });
  if (too_few > 0 && !opt.strict)
    std::cerr << "attnbench compare: warning: " << too_few
              << " pair(s) with too few samples for a latency verdict (a failure with --strict)\n";
  if (r.failed)
    for (const auto& f : r.failures) std::cerr << "attnbench compare: FAIL: " << f << "\n";
  return r.failed ? 1 : 0;
}

int run_report_command(const ReportOptions& o, std::ostream& out, const BackendCatalog& catalog,
                       MarkdownExtras extras) {
  std::vector<std::pair<std::string, std::string>> inputs = {{"RESULTS", o.results}, {"--memory", o.memory}};
  for (const std::string& p : o.peers) inputs.push_back({"--peers", p});
  OutputTarget output(o.out, out, inputs);
  const ResultSet set = load_result_set(o.results);
  if (!o.plots.empty()) extras.figures = figure_links(o.plots, o.out);
  std::optional<MemoryReport> memory;
  if (!o.memory.empty()) memory = load_memory_report_json(o.memory, catalog);
  if (memory && !memory->sglang_version.empty()) {  // one report, one modelled SGLang (as compare)
    const std::set<std::string> rows = sglang_versions_of(set);
    if (!rows.empty() && rows != std::set<std::string>{memory->sglang_version}) {
      std::string listed;
      for (const std::string& v : rows) listed += (listed.empty() ? "" : ", ") + v;
      throw InputError("report: --memory " + o.memory + " models SGLang " + memory->sglang_version + ", " +
                       o.results + " SGLang " + listed + ": measure both with one --sglang");
    }
  }
  std::vector<ResultSet> peers;
  for (const std::string& p : o.peers) peers.push_back(load_peer_set(p, catalog));
  {  // a peer row twice (two --peers files, or RESULTS' own peer rows and a --peers file): refused, not dropped
    std::vector<std::pair<std::string, const ResultSet*>> files = {{o.results, &set}};
    for (std::size_t i = 0; i < peers.size(); ++i) files.emplace_back(o.peers[i], &peers[i]);
    check_peer_rows_unique(files);
  }
  write_markdown_report(output.stream(), set, memory ? &*memory : nullptr, set.command, catalog, peers,
                        extras);
  output.finish();
  return 0;
}

}  // namespace attnbench
