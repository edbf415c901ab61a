// `attnbench compare BASE NEW`: pairs the rows of two result sets by (case_id, backend, timing) and says, per
// pair, whether NEW is faster, slower or the same as BASE (with the noise accounted for), how much memory
// grew and whether correctness regressed. The gate fails when NEW is not evidence that nothing regressed:
//   - a confirmed slowdown beyond max_slowdown, or memory growth beyond max_memory_growth;
//   - a row of BASE that NEW lacks;
//   - a row that was ok in BASE and is anything else in NEW (skipped, failed, oom);
//   - a failed reference check (ref_pass 0) on either side: a baseline that failed it is no evidence either;
//   - nothing compared: no rows, no key in common, or no pair that is ok on both sides;
//   - with `strict`, a pair whose latency verdict needs the rank test when the sample sizes cannot reach alpha
//     ("too few samples"; without `strict` a warning).
// Values outside a column's domain (NaN, infinities, negatives, unknown status / mode / timing) never reach a
// verdict: the readers refuse them and compare_results throws InputError on sets built in memory.
//
// Statistics. With raw samples on both sides: the Mann-Whitney U test (two-sided; the exact distribution for
// small samples without ties, else the normal approximation with tie and continuity correction, as
// scipy.stats.mannwhitneyu(method="auto"); core/rank_test.hpp), significant when p < alpha, plus a minimum
// effect: the relative change of the sample medians must reach min_effect. When the change reaches min_effect
// but no data of these sizes could give p < alpha (min_reachable_p >= alpha, e.g. 4 samples per side at
// alpha 0.01), the verdict is "too few samples (N vs M; at least K per side needed at alpha A)".
// With CSV rows only: the p10-p90 ranges stand in for the test (disjoint ranges = a real difference).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/stats.hpp"
#include "report/backend_catalog.hpp"
#include "report/results_io.hpp"

namespace attnbench {

struct CompareOptions {
  double max_slowdown = 0.05;          // fail when a confirmed slowdown exceeds this relative change
  std::int64_t max_memory_growth = 0;  // bytes; fail when any compared memory column grows by more
  double alpha = 0.01;                 // significance level of the Mann-Whitney test (two-sided)
  double min_effect = 0.02;            // |relative median change| below this is "same" whatever the test says
  bool allow_env_mismatch = false;     // compare results from different GPUs / drivers anyway
  bool allow_version_mismatch = false; // compare rows that model different SGLang releases anyway
  bool strict = false;                 // a pair with too few samples for a verdict fails (else: a warning)
  // The change under test, whose two backends must stay bit-identical (design: "no behavioural change"; the
  // command fills it from the catalog): a pair whose BASE row was bit-identical to the other backend and whose
  // NEW row is not fails the gate. Empty names: no such pair.
  BackendChange must_stay_identical;
};

// One memory column of a pair: both values present, new - base in bytes.
struct MemoryDelta {
  std::string column;  // e.g. "ctor_device_bytes"
  std::int64_t base = 0, now = 0;
  std::int64_t delta() const { return now - base; }
};

// The memory columns compare checks (a column missing on either side is not compared).
const std::vector<std::string>& compared_memory_columns();

struct PairResult {
  std::string case_id, backend, timing;
  RowStatus base_status = RowStatus::ok, new_status = RowStatus::ok;
  std::optional<double> base_median_us,
      new_median_us;             // of the samples when both sides have them, else the rows'
  std::optional<double> change;  // (new - base) / base of the medians; + = slower
  // faster | slower | same | ambiguous (latency, noise accounted for); skipped (either side skipped);
  // n/a (a side failed, or a median is missing); "too few samples (N vs M; at least K per side needed at
  // alpha A)" (the change reaches min_effect, the sample sizes cannot reach alpha)
  std::string verdict;
  bool too_few_samples = false;   // the verdict is "too few samples (...)"
  std::string method;             // "mann-whitney" | "p10-p90" | "" (no latency comparison)
  std::optional<double> p_value;  // Mann-Whitney only
  std::vector<MemoryDelta> memory;
  std::vector<std::string>
      correctness;                    // "ref_pass 1 -> 0", "status ok -> failed", "bitwise_equal_to lost X"
  std::vector<std::string> failures;  // why this pair fails the gate (empty = passes)
  bool correctness_regression = false;  // one of them is about correctness (status, reference check, bit-identity)
};

struct CompareResult {
  CompareOptions options;
  std::vector<PairResult>
      pairs;  // in BASE's row order, then nothing else (rows only in NEW are listed below)
  std::vector<std::string> missing_in_new, only_in_new;  // sample_key()s
  // environment differences accepted with allow_env_mismatch; pairs with too few samples (without strict)
  std::vector<std::string> warnings;
  bool failed = false;
  std::vector<std::string> failures;  // every reason, one line each, naming the pair
};

// Compares NEW against BASE under `opt`. Throws InputError when the two sets hold different schema versions
// (or one set mixes versions), when a set holds a key twice, when a row or a raw sample is outside its
// column's domain (result_row_domain_error: "compare: NEW row 3 (KEY): status 'done' is not ..."), or when
// the GPU (env gpu_name, else the rows' device) or the driver (env driver_version) differ and
// opt.allow_env_mismatch is false. Never throws for a regression: that is result.failed.
CompareResult compare_results(const ResultSet& base, const ResultSet& now, const CompareOptions& opt = {});

// A fixed-width table, one line per pair, then rows missing / only in NEW, the failures and one summary line
// ("compare: PASS|FAIL: N pairs: ...").
void write_compare_table(std::ostream& os, const CompareResult& r);

// The same as a Markdown section (summary first, then a table of the pairs that are not "same").
void write_compare_markdown(std::ostream& os, const CompareResult& r);

// One CSV row per pair. Columns: case_id, backend, timing, base_status, new_status, base_median_us,
// new_median_us, change_pct ((new - base) / base * 100), verdict, method, p_value, then for each column of
// compared_memory_columns() "<column>_delta" (new - base bytes; empty = not compared), correctness (changes
// joined by "; "), gate (pass | fail), failures (joined by "; "). Rows missing in NEW follow with
// verdict "missing" and gate "fail"; rows only in NEW with verdict "new" and gate "pass".
void write_compare_csv(std::ostream& os, const CompareResult& r);

// The whole result as one JSON document ({"schema": "attnbench.compare", "failed": ..., "options", "summary",
// "pairs", "missing_in_new", "only_in_new", "warnings", "failures"}).
void write_compare_json(std::ostream& os, const CompareResult& r);

// The SGLang releases a set's rows model (version 1 rows: 30cb848d4); empty when no row says.
std::set<std::string> sglang_versions_of(const ResultSet& s);

}  // namespace attnbench
