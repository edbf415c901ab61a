// `attnbench compare BASE NEW`: pairs the rows of two result sets by (case_id, backend, timing) and says, per
// pair, whether NEW is faster, slower or the same as BASE (with the noise accounted for), how much memory
// grew and whether correctness regressed. The gate fails only on a confirmed slowdown beyond a threshold,
// memory growth, a correctness regression, or rows of BASE that NEW lacks.
//
// Statistics. With raw samples on both sides: the Mann-Whitney U test (two-sided, normal approximation with
// tie and continuity correction, as scipy.stats.mannwhitneyu(method="asymptotic")), significant when
// p < alpha, plus a minimum effect: the relative change of the sample medians must reach min_effect.
// With CSV rows only: the p10-p90 ranges stand in for the test (disjoint ranges = a real difference).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "report/results_csv.hpp"
#include "report/results_json.hpp"

namespace attnbench {

// Raw step samples (µs, measurement order) keyed by sample_key(row) = "case_id|backend|timing"; empty when
// only CSVs are given. compare_results looks here first, then at the row's own ResultRow::samples_us.
using SampleMap = std::map<std::string, std::vector<double>>;

// One result file as loaded: rows, optional raw samples, optional environment and command (JSON only).
struct ResultSet {
  std::vector<ResultRow> rows;
  SampleMap samples;        // from the JSON rows' "samples_us" (also kept in each row's samples_us)
  Environment environment;  // gpu_name, driver_version, ... (JSON "environment"); empty for a CSV
  std::string command;      // the command line that produced the file (JSON "command"); empty for a CSV
};

// "case_id|backend|timing": the pairing key of a row and the key of its samples in a SampleMap.
std::string sample_key(const ResultRow& row);

// Reads a results file: ".csv" through read_results_csv; ".json" (a report of write_results_json: rows as
// objects with the CSV's column names, typed, null for empty, optionally "samples_us": [µs, ...] and
// "ledger": [{phase, tag, kind, bytes, shared, count}], both kept in the row) with nlohmann::json; any other
// extension is sniffed ('{' first = JSON). Throws InputError naming `path` for an unreadable or malformed
// file: truncated JSON, a missing column, a wrongly typed value, another schema_version, or two rows with
// the same key.
ResultSet load_result_set(const std::string& path);

struct CompareOptions {
  double max_slowdown = 0.05;          // fail when a confirmed slowdown exceeds this relative change
  std::int64_t max_memory_growth = 0;  // bytes; fail when any compared memory column grows by more
  double alpha = 0.01;                 // significance level of the Mann-Whitney test (two-sided)
  double min_effect = 0.02;            // |relative median change| below this is "same" whatever the test says
  bool allow_env_mismatch = false;     // compare results from different GPUs / drivers anyway
};

// Result of a two-sided Mann-Whitney U test of samples a vs b.
struct MannWhitney {
  double u = 0;        // U statistic of `a` (number of pairs with a > b, ties counted 1/2)
  double z = 0;        // standardised statistic (continuity and tie corrected); 0 when every value ties
  double p_value = 1;  // two-sided, normal approximation
};

// Mann-Whitney U test of `a` against `b` (both non-empty, finite): U of a, z with continuity correction and
// the tie-corrected variance n1*n2/12 * ((n+1) - sum(t^3 - t) / (n (n-1))), p = erfc(|z| / sqrt 2).
// Throws std::invalid_argument on an empty or non-finite input.
MannWhitney mann_whitney_u(std::span<const double> a, std::span<const double> b);

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
  std::string base_status, new_status;
  std::optional<double> base_median_us,
      new_median_us;             // of the samples when both sides have them, else the rows'
  std::optional<double> change;  // (new - base) / base of the medians; + = slower
  // faster | slower | same | ambiguous (latency, noise accounted for); skipped (either side skipped);
  // n/a (a side failed, or a median is missing)
  std::string verdict;
  std::string method;             // "mann-whitney" | "p10-p90" | "" (no latency comparison)
  std::optional<double> p_value;  // Mann-Whitney only
  std::vector<MemoryDelta> memory;
  std::vector<std::string>
      correctness;                    // "ref_pass 1 -> 0", "status ok -> failed", "bitwise_equal_to lost X"
  std::vector<std::string> failures;  // why this pair fails the gate (empty = passes)
};

struct CompareResult {
  CompareOptions options;
  std::vector<PairResult>
      pairs;  // in BASE's row order, then nothing else (rows only in NEW are listed below)
  std::vector<std::string> missing_in_new, only_in_new;  // sample_key()s
  std::vector<std::string> warnings;  // environment differences accepted with allow_env_mismatch
  bool failed = false;
  std::vector<std::string> failures;  // every reason, one line each, naming the pair
};

// Compares NEW against BASE under `opt`. Throws InputError when the two sets hold different schema versions
// (or one set mixes versions), when a set holds a key twice, or when the GPU (env gpu_name, else the rows'
// device) or the driver (env driver_version) differ and opt.allow_env_mismatch is false. Never throws for
// a regression: that is result.failed.
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

}  // namespace attnbench
