// Model vs library: attnbench's backends model SGLang's, with attnbench's own kernels; a separate script runs
// the real libraries on the same cases and writes rows of the same schema under library backend names
// (the BackendCatalog says which: each backend's library_twin). This pairs each library row with the row of
// its model twin (same case_id and timing) and says how far the
// model is from the real thing: latency as model / library (> 1 = attnbench slower), and the construction
// memory per ledger tag, modelled vs measured. Informational: nothing here is a gate.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "report/backend_catalog.hpp"
#include "report/results_io.hpp"

namespace attnbench {

// A case whose forward ratio exceeds this (attnbench slower than the library by more than 1.5x) is listed by
// name in the summary: the model no longer stands for the library there.
inline constexpr double kPeerSlowRatio = 1.5;

// A backend name of the library script: it ends with "_lib".
bool is_library_backend(const std::string& backend);
// A backend name of the SGLang peer script (scripts/peer_sglang.py: SGLang's own classes): it ends with "_sglang".
bool is_sglang_backend(const std::string& backend);
// Either of the two: rows that are not attnbench's model.
bool is_peer_backend(const std::string& backend);

// One library row and the row of its model twin. Latency figures are µs; forward is one layer.
struct PeerPair {
  std::string case_id, timing, model_backend, lib_backend;
  RowStatus model_status = RowStatus::ok, lib_status = RowStatus::ok;  // the rows' status
  std::optional<double> model_step_median_us, lib_step_median_us;
  std::optional<double> model_step_p10_us, model_step_p90_us, lib_step_p10_us, lib_step_p90_us;
  std::optional<double> model_forward_median_us, lib_forward_median_us;
  std::optional<double> model_metadata_median_us, lib_metadata_median_us;
  // model / library; set only when both rows are ok and both values are present and positive
  std::optional<double> ratio_forward, ratio_step;
  std::optional<bool> model_ref_pass, lib_ref_pass;
};

// Per (model backend, library backend, timing): the forward ratios of the pairs that have one.
struct PeerSummary {
  std::string model_backend, lib_backend, timing;
  int count = 0;                        // pairs with a forward ratio
  double median = 0, min = 0, max = 0;  // of ratio_forward (meaningless when count == 0)
  std::optional<double> step_median;    // median of ratio_step, when any pair has one
  int not_compared = 0;                 // pairs without a forward ratio (a side not ok, a value missing)
  std::vector<std::pair<std::string, double>> slow;  // (case_id, ratio) with ratio_forward > slow_ratio
};

// One ledger tag of the construct phase, modelled (attnbench's row) vs measured (the library's row).
struct PeerTagLine {
  std::string tag;
  std::string kind;  // the model's kind, or the library's when the model lacks the tag; "device / pinned"
                     // (model / library) when the two sides disagree
  std::optional<std::int64_t> model_bytes, lib_bytes;
  // library - modelled; only when both sides hold the tag
  std::optional<std::int64_t> difference() const {
    if (!model_bytes || !lib_bytes) return std::nullopt;
    return *lib_bytes - *model_bytes;
  }
};

// Totals per kind (device / pinned / host) over each side's own tags.
struct PeerKindTotal {
  std::string kind;
  std::int64_t model_bytes = 0, lib_bytes = 0;
};

// Construction memory of one (model backend, library backend), from the first paired case where both rows
// carry a ledger. case_id is empty when no such case exists (CSV inputs carry no ledger).
struct PeerMemory {
  std::string model_backend, lib_backend, case_id, timing;
  std::vector<PeerTagLine> lines;     // sorted by tag
  std::vector<PeerKindTotal> totals;  // device, pinned, host order, kinds that occur only
};

struct PeerComparison {
  BackendCatalog catalog;  // which library backend each model backend has, and what it runs
  double slow_ratio = kPeerSlowRatio;
  std::vector<PeerPair> pairs;                     // in library row order
  std::vector<PeerSummary> summary;                // in order of first appearance in `pairs`
  std::vector<PeerMemory> memory;                  // one per (model backend, library backend), same order
  std::vector<std::string> library_without_model;  // sample_key()s; a note says why when no twin is known
  std::vector<std::string> model_without_library;  // rows of a twin backend no library row pairs with
  std::vector<Environment> library_environments;   // of the library files (caller fills; JSON only)
  std::vector<std::string> warnings;               // accepted environment differences
};

// Pairs every library row of `library_rows` with the row of `model_rows` that has the same case_id, timing
// and the twin backend (catalog.model_twin_of). Rows of library_rows that are not library backends are ignored, as
// are model rows of backends without a library counterpart in `library_rows`. When a key occurs twice, the
// first row wins (the loaders refuse duplicates within one file).
PeerComparison compare_peers(const std::vector<ResultRow>& model_rows,
                             const std::vector<ResultRow>& library_rows, const BackendCatalog& catalog,
                             double slow_ratio = kPeerSlowRatio);

// Splits rows into (model rows, peer rows) by is_peer_backend, keeping the order.
std::pair<std::vector<ResultRow>, std::vector<ResultRow>> split_library_rows(
    const std::vector<ResultRow>& rows);

// Loads a --peers file (load_result_set) and checks that it holds only library rows. Throws InputError
// "--peers FILE: ..." when it cannot be read or a row's backend is not a library backend (the message names
// the catalog's library backends).
ResultSet load_peer_set(const std::string& path, const BackendCatalog& catalog);

// The peer rows (is_peer_backend) of several files, each (path, set), must not repeat each other: throws
// InputError "--peers: the row KEY is in both 'A' and 'B' ..." for the first key (sample_key: case, backend,
// timing; the backend's suffix, _lib or _sglang, says which peer script wrote it) that two files hold. The
// report pairs each model row with one peer row (compare_peers, compare_sglang: the first wins), so a second
// one would be dropped without a word. Rows of attnbench's own backends are not looked at; one file's
// duplicates are refused by its loader (check_unique_keys).
void check_peer_rows_unique(const std::vector<std::pair<std::string, const ResultSet*>>& files);

// `attnbench compare BASE NEW` (the gate): throws InputError saying to pass --peers when exactly one side
// holds library rows (a model file against a library file is not a regression). Both sides with library
// rows compare like with like and pass.
void check_compare_sides(const ResultSet& base, const ResultSet& now, const std::string& base_path,
                         const std::string& new_path);

// `attnbench compare --peers BASE NEW`: BASE holds the model rows, NEW the library rows. Throws InputError
// naming --peers when BASE holds no model row (e.g. only library rows: the files swapped) or NEW no library
// row.
void check_peer_sides(const ResultSet& base, const ResultSet& now, const std::string& base_path,
                      const std::string& new_path);

// The environments of the two sides: InputError "compare: ..." when both name a gpu_name (a side without one:
// the one GPU its rows' device column names, for a results CSV) and the names differ, unless `allow`; then the difference ("MODEL_SIDE ran on X, LIBRARY_SIDE on Y") is returned as a
// warning line.
std::vector<std::string> check_peer_environments(const ResultSet& model, const ResultSet& library, bool allow,
                                                 const std::string& model_side,
                                                 const std::string& library_side);

// The "## Model vs library" Markdown section: what is compared, the library environment, the summary, a table
// per (model backend, library backend) with one line per case, and the construction memory per tag.
void write_peer_markdown(std::ostream& os, const PeerComparison& c);

// The summary lines, one per (model, library, timing), e.g. "<model> / <model>_lib eager: 12 cases,
// forward ratio median 1.08 (min 0.95, max 1.62); 1 above 1.5x: decode/... (1.62)".
std::vector<std::string> peer_summary_lines(const PeerComparison& c);

// For `attnbench compare` in peer mode: a fixed-width table of the pairs, the summary, the memory per tag.
void write_peer_table(std::ostream& os, const PeerComparison& c);

// One CSV row per pair: case_id, timing, model_backend, library_backend, model_status, library_status,
// model_forward_median_us, library_forward_median_us, ratio_forward, model_step_median_us,
// library_step_median_us, ratio_step, model_metadata_median_us, library_metadata_median_us,
// model_step_p10_us, model_step_p90_us, library_step_p10_us, library_step_p90_us, model_ref_pass,
// library_ref_pass (1 / 0 / empty). Empty cell = not available.
void write_peer_csv(std::ostream& os, const PeerComparison& c);

// The whole comparison as one JSON document ({"schema": "attnbench.peers", "schema_version": 1, "comparison":
// `line`, "slow_ratio", "summary", "pairs", "memory", "library_without_model", "model_without_library",
// "library_environments", "warnings"}).
void write_peer_json(std::ostream& os, const PeerComparison& c, const std::string& line);

}  // namespace attnbench
