// Results I/O: the result row (the CSV schema, docs/csv-schema.md, version 1, plus a `repro` column), one
// ResultSet as loaded from a file, and both directions of both formats:
//   CSV:  one header line, then one row per (case, backend, timing mode), each written and flushed as soon as
//         it exists. Numbers at full precision (shortest round-trip form, no locale); an empty cell means
//         "not applicable".
//   JSON: the report of a run: the environment fingerprint, the command line, and every row (the CSV's
//         columns, nulls for empty cells, plus "samples_us": the raw step samples and "ledger": the backend's
//         allocations by phase and tag). Versioned like the CSV.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <ostream>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/files.hpp"

namespace attnbench {

// Version 2 added `sglang_version` and `arch` (the modelled SGLang release and the GPU path taken). Version 1
// files are still read: their rows describe SGLang main @30cb848d4 (the only profile before version 2) and
// have no arch.
inline constexpr int kResultsSchemaVersion = 2;
inline constexpr int kOldestReadableSchemaVersion = 1;
inline constexpr const char* kSchemaV1SglangVersion = "30cb848d4";

// Limits of the readers, checked before a byte is parsed: a results file (CSV or JSON) of more bytes is refused,
// and so is JSON nested deeper (nlohmann's parser and printer recurse; attnbench's own reports nest 5 deep).
inline constexpr std::int64_t kMaxResultsFileBytes = std::int64_t{512} << 20;  // 512 MiB
inline constexpr std::int64_t kMaxMemoryReportBytes = std::int64_t{64} << 20;  // 64 MiB (memory JSON)

// One CSV cell: `s` as is, or double-quoted (quotes doubled) when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s);

// What became of a row: it ran (`ok`; its figures may still miss the reference: ref_pass), it was not run
// (`skipped`: the note says why), the backend threw (`failed`) or ran out of device memory (`oom`). Text only
// where rows are written and read (this file's CSV and JSON, docs/result-schema.md) and where it is printed
// (operator<<); compared everywhere else as the enum.
enum class RowStatus { ok, skipped, failed, oom };
// "ok", "skipped", "failed", "oom" ("?" for a value outside the enum).
const char* row_status_name(RowStatus s);
// The status spelled exactly `text`; nullopt for any other text.
std::optional<RowStatus> parse_row_status(std::string_view text);
// Its name: tables, progress lines, test messages.
std::ostream& operator<<(std::ostream& os, RowStatus s);

// One row; members in column order. Units are in the names (µs, bytes); std::nullopt -> empty cell.
struct ResultRow {
  // identity
  int schema_version = kResultsSchemaVersion;
  std::string case_id;  // e.g. "decode/llama-3.1-8b/b=64/kv=4096/p=16/bf16"
  std::string backend;  // a registered backend (attnbench list), or a library one (*_lib)
  std::string device;   // e.g. "NVIDIA H200" or "cpu"
  std::string sglang_version;  // the modelled SGLang release (--sglang), e.g. "0.5.23"
  std::string arch;            // the GPU path the backends took: sm90 | sm100 | sm120 (empty in version 1 files)
  std::string mode;     // decode | extend | verify
  std::string timing;   // eager | graph
  RowStatus status = RowStatus::ok;
  std::string note;     // skip reason, failure message, caveat
  // shape
  std::string model;
  int layers = 0;
  int batch = 0;
  int q_tokens = 0;  // query tokens in the batch
  std::optional<double> kv_len_mean;
  std::optional<std::int64_t> kv_len_max;
  std::optional<double> prefix_len_mean;
  int num_qo_heads = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int page_size = 0;
  std::string dtype;
  int sliding_window = -1;  // tokens; -1 = none
  std::uint64_t seed = 0;
  // latency, µs (one step = init_forward_metadata + forward_* over every layer)
  std::optional<double> step_median_us;
  std::optional<double> step_p10_us;
  std::optional<double> step_p90_us;
  std::optional<double> step_min_us;
  std::optional<double> step_max_us;
  std::optional<double> step_spread_pct;
  int samples = 0;
  std::optional<double> metadata_median_us;
  std::optional<double> forward_median_us;  // one layer
  // throughput
  std::optional<double> tflops;
  std::optional<double> tb_per_s;
  std::optional<double> bw_fraction;  // of the copy bandwidth measured in the same run
  // memory, bytes
  std::optional<std::int64_t> ctor_device_bytes;
  std::optional<std::int64_t> ctor_pinned_bytes;
  std::optional<std::int64_t> ctor_driver_delta_bytes;
  std::optional<std::int64_t> graph_state_device_bytes;
  std::optional<std::int64_t> capture_device_bytes;
  std::optional<std::int64_t> capture_pinned_bytes;
  std::optional<std::int64_t> step_peak_device_bytes;
  // correctness
  std::optional<double> ref_max_abs_err;
  std::optional<double> ref_rel_l2_err;
  std::optional<double> ref_mismatch_frac;
  std::optional<bool> ref_pass;  // written 1 / 0
  std::string bitwise_equal_to;  // the backend whose output is bit-identical, or empty
  // the command that regenerates this row
  std::string repro;

  // Not CSV columns: the JSON report carries them.
  std::vector<double> samples_us;  // raw step samples (µs, measurement order, warm-up excluded)
  struct LedgerGroup {
    std::string phase, tag, kind;  // construct | graph_state | capture; tag; device | pinned | host
    std::int64_t bytes = 0;
    bool shared = false;
    int count = 0;
    bool operator==(const LedgerGroup&) const = default;
  };
  std::vector<LedgerGroup> ledger;  // what the backend allocated and kept, by phase and tag

  bool operator==(const ResultRow&) const = default;
};

// ref_pass as the writers write it (CSV and JSON): a 1 only beside both error figures, ref_max_abs_err and
// ref_rel_l2_err, present and finite. A NaN or infinite error is written empty, and a pass without its figures
// is no pass: then 0. Readers refuse an ok row with ref_pass 1 and an empty error (result_row_domain_error).
std::optional<bool> ref_pass_as_written(const ResultRow& row);

// A row that makes a sweep (and a merge of its shards) exit 1: failed, oom, or outside the reference's tolerance
// (ref_pass_as_written 0).
bool row_failed(const ResultRow& row);

// Column names in file order (a static list; the reference stays valid for the program's lifetime).
const std::vector<std::string>& results_csv_columns();

// The backend names of a bitwise_equal_to cell ("a;b", ',' also accepted, blanks ignored).
std::set<std::string> bitwise_equal_names(const std::string& cell);

// One typed cell per column, in column order; std::monostate for an empty ("not applicable") cell.
// Other formats (the JSON report) serialise rows through this, so every format walks the same columns.
using ResultCell = std::variant<std::monostate, std::string, std::int64_t, double, bool>;
std::vector<ResultCell> result_row_cells(const ResultRow& row);

// What each column holds (for readers of other formats, e.g. the JSON report), in column order.
enum class CellKind { text, integer, unsigned_integer, real_or_empty, integer_or_empty, bool_or_empty };
const std::vector<CellKind>& results_column_kinds();
// Sets column `col` of `row` from a typed cell (std::monostate: empty); false when the cell does not fit the
// column's kind (a string for a number, an empty cell for a required integer, an int beyond int range, ...).
bool set_result_cell(ResultRow& row, std::size_t col, const ResultCell& cell);

// ---- the domain of each column ----------------------------------------------------------------------------
// Every reader checks every row against these rules (so compare, report and --peers all refuse the same
// values), and compare_results checks the sets it is handed:
//   status in {ok, skipped, failed, oom}; mode in {decode, extend, verify}; timing in {eager, graph};
//   every real-valued column (lengths, latencies, spread, throughput, bw_fraction, reference errors) finite and
//   >= 0 when present; every integer byte / length column >= 0 when present, except ctor_driver_delta_bytes
//   (a difference of two driver readings: free memory can rise while a constructor runs); samples >= 0;
//   ref_pass 1 / 0 / empty (the parsers already allow nothing else), and an ok row with ref_pass 1 has both
//   ref_max_abs_err and ref_rel_l2_err (a pass without its figures: see ref_pass_as_written).
// Raw samples (JSON samples_us): every value finite and >= 0.

// What is wrong with `row`, as "COLUMN 'VALUE' is not WHAT" (the first column that breaks a rule, in column
// order); "" when every value is in its column's domain. Then the rules across columns: case_id is an id as
// the runner writes it (core/case_id.hpp) and the columns it names agree with it (mode, model, layers where
// the id has "/L=", batch, page_size, dtype, seed: "batch '4' contradicts case_id
// 'decode/tiny/b=1/kv=8/p=64/bf16' (b=1)"); an ok row with samples > 0 has a step_median_us > 0, and
// step_min_us <= step_p10_us <= step_median_us <= step_p90_us <= step_max_us (those present).
std::string result_row_domain_error(const ResultRow& row);

// What is wrong with raw step samples, as "samples_us[I] 'VALUE' is not a finite number >= 0"; "" when none.
std::string samples_domain_error(std::span<const double> samples_us);

// The message of a JSON parser exception without nlohmann's "[json.exception.KIND.N] " prefix, printable.
std::string json_error_text(const std::exception& e);

// The first key that one JSON object of `text` holds twice (nlohmann and Python keep the last silently);
// std::nullopt when there is none. Text that is not JSON: what was read before the error (the callers parse
// first and report that).
std::optional<std::string> first_duplicate_json_key(std::string_view text);

// check_json_nesting / kMaxJsonNesting: core/files.hpp.

// The header line, column names joined by commas, without a line terminator.
std::string results_csv_header();

// One data line for `row`, without a line terminator. Doubles in shortest round-trip form, integers plain,
// std::nullopt as an empty cell, and so is a NaN or an infinity (as the JSON report writes them: null; a row
// whose output held NaNs has an infinite relative error, which no reader accepts as a number), with ref_pass
// written as ref_pass_as_written (never 1 beside an empty error); text quoted (RFC 4180, quotes doubled) only
// when it holds , " CR or LF.
std::string results_csv_line(const ResultRow& row);

// Writes a results CSV to a file it owns: the header at construction, then one flushed line per write().
class ResultsCsvWriter {
 public:
  // Creates or truncates `path` and writes the header; throws InputError "--out: cannot write 'PATH'".
  // With `append`, adds rows to an existing results file (written by this schema) without a new header.
  explicit ResultsCsvWriter(const std::string& path, bool append = false);

  // Appends `row` as one line and flushes it, so a crash later loses nothing already written.
  // Throws std::runtime_error naming the file when the write fails (e.g. disk full).
  void write(const ResultRow& row);

 private:
  std::string path_;
  std::ofstream out_;
};

// Reads a results CSV written by ResultsCsvWriter: every column of results_csv_columns() must be in the
// header (any order; unknown columns are ignored). The file must be a regular file of at most
// kMaxResultsFileBytes without NUL bytes (checked before it is parsed: a FIFO, a device or a directory is
// refused, never read). Throws InputError "results FILE line N: ..." on an unreadable file, a missing column,
// a malformed line, a bad number or a value outside its column's domain ("results FILE line N: status 'done'
// is not ok, skipped, failed or oom"), and "results FILE: schema_version X, this attnbench reads 1" on another
// schema version.
// Limitation of the CSV parser (fast-cpp-csv-parser): a field holding a line feed cannot be read back.
// torn_tail (--resume): when given, a last line without its line feed (a run killed while writing a row) is left
// out and *torn_tail says so, so that its case runs again; without it such a line is read (and refused) as any.
std::vector<ResultRow> read_results_csv(const std::string& path, bool* torn_tail = nullptr);


// "case_id|backend|timing": the pairing key of a row and the key of its samples in a SampleMap.
std::string sample_key(const ResultRow& row);

// ---- JSON -----------------------------------------------------------------------------------------------

// The environment fingerprint of a run, in print order (gpu_name, driver_version, ...).
using Environment = std::vector<std::pair<std::string, std::string>>;

// Writes the whole JSON report to `path` (throws InputError naming --json when it cannot be written).
void write_results_json(const std::string& path, const Environment& env, const std::string& command,
                        const std::vector<ResultRow>& rows);
// The same document written to `os` (e.g. std::cout for `--json -`); the caller checks the stream.
void write_results_json(std::ostream& os, const Environment& env, const std::string& command,
                        const std::vector<ResultRow>& rows);

// ---- one result file, either format ---------------------------------------------------------------------

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

// Reads a JSON report written by write_results_json (rows as objects with the CSV's column names, typed, null
// for empty, optionally "samples_us": [µs, ...] and "ledger": [{phase, tag, kind, bytes, shared, count}],
// both kept in the row). Reports written before the typed writer (empty text as null, ref_pass as 1 / 0)
// are read too. The same file checks as read_results_csv, and JSON nested deeper than kMaxJsonNesting is
// refused before parsing. Throws InputError "results PATH: ..." for an unreadable or malformed file: truncated
// JSON, another schema, a missing column, a wrongly typed value, another schema_version, a value outside its
// column's domain or a bad raw sample ("results PATH: row I: step_median_us '-1' is not a finite number >= 0").
ResultSet read_results_json(const std::string& path);

// Throws InputError `PREFIX: two rows for KEY` when `rows` holds a pairing key (sample_key) twice.
void check_unique_keys(const std::vector<ResultRow>& rows, const std::string& prefix);

// Which rows a case lacks, by the rule of the runner that wrote them (runner/case_runner.cpp): an eager row of
// each of `backends`, and, where graph rows are due (`graphs_due`: --timing names graph and the sweep ran on a
// CUDA device), a graph row beside each eager row that is not skipped, unless the case is extend (want_graph is
// false for extend). A case skipped whole (the memory cap, or a sticky device error earlier in the sweep) has
// skipped eager rows only, so none is due there. `rows` are the rows of one case, in any order. One line per
// backend that lacks a row, in `backends` order: "no row of B", "no eager row of B" (a graph row alone) or
// "no graph row of B"; empty when the case is complete. The one rule of `merge` (a shard is complete) and of
// `run --resume` (a case is not run again).
std::vector<std::string> missing_rows_of_case(const std::vector<const ResultRow*>& rows,
                                              const std::vector<std::string>& backends, bool graphs_due);

// Reads a results file: ".csv" through read_results_csv, ".json" through read_results_json; any other
// extension is sniffed ('{' first = JSON). Throws InputError naming `path` for an unreadable or malformed
// file (see the two readers) or two rows with the same key (sample_key).
ResultSet load_result_set(const std::string& path);

// A sweep's options as one environment value (runner/sweep_options.hpp): "--model=tiny; --batch=1,2; ..." and
// back. parse_options_text() of a text it did not write returns what it can (pairs without '=' have an empty
// value).
std::string options_text(const std::vector<std::pair<std::string, std::string>>& options);
std::vector<std::pair<std::string, std::string>> parse_options_text(const std::string& text);

}  // namespace attnbench
