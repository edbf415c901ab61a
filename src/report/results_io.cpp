#include "report/results_io.hpp"

#include "core/csv_reading.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "core/case_id.hpp"
#include "core/enum_names.hpp"
#include "core/errors.hpp"
#include "core/files.hpp"
#include "core/stats.hpp"
#include "report/text.hpp"

namespace attnbench {

namespace {

constexpr EnumName<RowStatus> kRowStatusNames[] = {
    {RowStatus::ok, "ok"}, {RowStatus::skipped, "skipped"}, {RowStatus::failed, "failed"}, {RowStatus::oom, "oom"}};

// "status 'TEXT' is not ok, skipped, failed or oom": a status cell that names no RowStatus.
std::string bad_status(std::string_view text) {
  return "status '" + printable(text) + "' is not ok, skipped, failed or oom";
}

}  // namespace

const char* row_status_name(RowStatus s) { return enum_name(kRowStatusNames, s); }
std::optional<RowStatus> parse_row_status(std::string_view text) { return enum_from_name(kRowStatusNames, text); }
std::ostream& operator<<(std::ostream& os, RowStatus s) { return os << row_status_name(s); }

std::optional<bool> ref_pass_as_written(const ResultRow& row) {
  if (!row.ref_pass || !*row.ref_pass) return row.ref_pass;
  const auto figure = [](const std::optional<double>& e) { return e && std::isfinite(*e); };
  return figure(row.ref_max_abs_err) && figure(row.ref_rel_l2_err);
}

bool row_failed(const ResultRow& row) {
  return row.status == RowStatus::failed || row.status == RowStatus::oom || ref_pass_as_written(row) == false;
}

namespace {

// A column: its name and the ResultRow member it holds. The writer, the reader and the header all walk
// this one table, so they cannot disagree about order or types.
using Field = std::variant<std::string ResultRow::*, RowStatus ResultRow::*, int ResultRow::*, std::uint64_t ResultRow::*,
                           std::optional<double> ResultRow::*, std::optional<std::int64_t> ResultRow::*,
                           std::optional<bool> ResultRow::*>;
struct Column {
  const char* name;
  Field field;
};

constexpr Column kColumns[] = {
    {"schema_version", &ResultRow::schema_version},
    {"case_id", &ResultRow::case_id},
    {"backend", &ResultRow::backend},
    {"device", &ResultRow::device},
    {"sglang_version", &ResultRow::sglang_version},
    {"arch", &ResultRow::arch},
    {"mode", &ResultRow::mode},
    {"timing", &ResultRow::timing},
    {"status", &ResultRow::status},
    {"note", &ResultRow::note},
    {"model", &ResultRow::model},
    {"layers", &ResultRow::layers},
    {"batch", &ResultRow::batch},
    {"q_tokens", &ResultRow::q_tokens},
    {"kv_len_mean", &ResultRow::kv_len_mean},
    {"kv_len_max", &ResultRow::kv_len_max},
    {"prefix_len_mean", &ResultRow::prefix_len_mean},
    {"num_qo_heads", &ResultRow::num_qo_heads},
    {"num_kv_heads", &ResultRow::num_kv_heads},
    {"head_dim", &ResultRow::head_dim},
    {"page_size", &ResultRow::page_size},
    {"dtype", &ResultRow::dtype},
    {"sliding_window", &ResultRow::sliding_window},
    {"seed", &ResultRow::seed},
    {"step_median_us", &ResultRow::step_median_us},
    {"step_p10_us", &ResultRow::step_p10_us},
    {"step_p90_us", &ResultRow::step_p90_us},
    {"step_min_us", &ResultRow::step_min_us},
    {"step_max_us", &ResultRow::step_max_us},
    {"step_spread_pct", &ResultRow::step_spread_pct},
    {"samples", &ResultRow::samples},
    {"metadata_median_us", &ResultRow::metadata_median_us},
    {"forward_median_us", &ResultRow::forward_median_us},
    {"tflops", &ResultRow::tflops},
    {"tb_per_s", &ResultRow::tb_per_s},
    {"bw_fraction", &ResultRow::bw_fraction},
    {"ctor_device_bytes", &ResultRow::ctor_device_bytes},
    {"ctor_pinned_bytes", &ResultRow::ctor_pinned_bytes},
    {"ctor_driver_delta_bytes", &ResultRow::ctor_driver_delta_bytes},
    {"graph_state_device_bytes", &ResultRow::graph_state_device_bytes},
    {"capture_device_bytes", &ResultRow::capture_device_bytes},
    {"capture_pinned_bytes", &ResultRow::capture_pinned_bytes},
    {"step_peak_device_bytes", &ResultRow::step_peak_device_bytes},
    {"ref_max_abs_err", &ResultRow::ref_max_abs_err},
    {"ref_rel_l2_err", &ResultRow::ref_rel_l2_err},
    {"ref_mismatch_frac", &ResultRow::ref_mismatch_frac},
    {"ref_pass", &ResultRow::ref_pass},
    {"bitwise_equal_to", &ResultRow::bitwise_equal_to},
    {"repro", &ResultRow::repro},
};
constexpr std::size_t kNumColumns = std::size(kColumns);
static_assert(std::string_view(kColumns[0].name) == "schema_version", "read_results_csv checks it first");

// ---- writing --------------------------------------------------------------------------------------------

template <class T>
void append_number(std::string& out, T v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form for doubles, no locale
  out.append(buf, r.ptr);
}

void append_text(std::string& out, const std::string& s) { out += csv_field(s); }

// Appends the cell of one column of `row` to `out`.
struct CellWriter {
  const ResultRow& row;
  std::string& out;

  void operator()(std::string ResultRow::*m) const { append_text(out, row.*m); }
  void operator()(RowStatus ResultRow::*m) const { out += row_status_name(row.*m); }
  void operator()(int ResultRow::*m) const { append_number(out, row.*m); }
  void operator()(std::uint64_t ResultRow::*m) const { append_number(out, row.*m); }
  void operator()(std::optional<double> ResultRow::*m) const {
    if (row.*m && std::isfinite(*(row.*m))) append_number(out, *(row.*m));  // NaN / inf: empty, as JSON's null
  }
  void operator()(std::optional<std::int64_t> ResultRow::*m) const {
    if (row.*m) append_number(out, *(row.*m));
  }
  void operator()(std::optional<bool> ResultRow::*m) const {
    const std::optional<bool> v = m == &ResultRow::ref_pass ? ref_pass_as_written(row) : row.*m;
    if (v) out += *v ? '1' : '0';
  }
};

// ---- domains --------------------------------------------------------------------------------------------

template <class T>
std::string number_text(T v) {
  std::string s;
  append_number(s, v);
  return s;
}

// The allowed values of the enumerated text columns; nullptr for free text.
const std::vector<std::string>* enum_values(std::string_view column) {
  static const std::vector<std::string> mode = {"decode", "extend", "verify"};
  static const std::vector<std::string> timing = {"eager", "graph"};
  if (column == "mode") return &mode;
  if (column == "timing") return &timing;
  return nullptr;
}

// The rule of one column applied to `row`: "" or "COLUMN 'VALUE' is not WHAT".
struct DomainCheck {
  const ResultRow& row;
  std::string_view name;

  std::string bad(const std::string& value, const std::string& what) const {
    return std::string(name) + " '" + printable(value) + "' is not " + what;
  }
  std::string operator()(std::string ResultRow::*m) const {
    const std::vector<std::string>* allowed = enum_values(name);
    if (!allowed || std::find(allowed->begin(), allowed->end(), row.*m) != allowed->end()) return "";
    return bad(row.*m, text::one_of(*allowed));
  }
  std::string operator()(RowStatus ResultRow::*m) const {  // only a value cast from outside the enum
    return parse_row_status(row_status_name(row.*m)) ? "" : bad_status(row_status_name(row.*m));
  }
  std::string operator()(int ResultRow::*m) const {
    if (name == "samples" && row.*m < 0) return bad(number_text(row.*m), "an integer >= 0");
    return "";
  }
  std::string operator()(std::uint64_t ResultRow::*) const { return ""; }
  std::string operator()(std::optional<double> ResultRow::*m) const {
    const std::optional<double>& v = row.*m;
    if (!v || (std::isfinite(*v) && *v >= 0)) return "";
    return bad(number_text(*v), "a finite number >= 0");
  }
  std::string operator()(std::optional<std::int64_t> ResultRow::*m) const {
    const std::optional<std::int64_t>& v = row.*m;
    if (!v || *v >= 0 || name == "ctor_driver_delta_bytes") return "";
    return bad(number_text(*v), "an integer >= 0");
  }
  std::string operator()(std::optional<bool> ResultRow::*) const { return ""; }
};

// ---- reading --------------------------------------------------------------------------------------------

template <class T>
bool parse_optional_number(std::string_view cell, std::optional<T>& out) {
  if (csv::trim_blanks(cell).empty()) {
    out.reset();
    return true;
  }
  T v{};
  if (!csv::parse_number(cell, v)) return false;
  out = v;
  return true;
}

// Stores `cell` into one column of `row`; false when the cell does not parse as the column's type.
struct CellReader {
  ResultRow& row;
  std::string_view cell;

  bool operator()(std::string ResultRow::*m) const {
    row.*m = std::string(cell);
    return true;
  }
  bool operator()(RowStatus ResultRow::*m) const {
    const std::optional<RowStatus> v = parse_row_status(cell);
    if (v) row.*m = *v;
    return v.has_value();
  }
  bool operator()(int ResultRow::*m) const { return csv::parse_number(cell, row.*m); }
  bool operator()(std::uint64_t ResultRow::*m) const { return csv::parse_number(cell, row.*m); }
  bool operator()(std::optional<double> ResultRow::*m) const { return parse_optional_number(cell, row.*m); }
  bool operator()(std::optional<std::int64_t> ResultRow::*m) const {
    return parse_optional_number(cell, row.*m);
  }
  bool operator()(std::optional<bool> ResultRow::*m) const {
    const std::string_view v = csv::trim_blanks(cell);
    if (v.empty()) {
      (row.*m).reset();
    } else if (v == "1" || v == "0") {
      row.*m = v == "1";
    } else {
      return false;
    }
    return true;
  }
};

// What a cell of each column type must hold, for error messages.
struct ExpectedKind {
  const char* operator()(std::string ResultRow::*) const { return "text"; }
  const char* operator()(RowStatus ResultRow::*) const { return "ok, skipped, failed or oom"; }
  const char* operator()(int ResultRow::*) const { return "an integer"; }
  const char* operator()(std::uint64_t ResultRow::*) const { return "a non-negative integer"; }
  const char* operator()(std::optional<double> ResultRow::*) const { return "a number or empty"; }
  const char* operator()(std::optional<std::int64_t> ResultRow::*) const { return "an integer or empty"; }
  const char* operator()(std::optional<bool> ResultRow::*) const { return "1, 0 or empty"; }
};

using ResultsReader = io::CSVReader<kNumColumns, io::trim_chars<>, io::double_quote_escape<',', '"'>>;

// Columns added after version 1: a version 1 file lacks them.
bool added_after_v1(std::string_view column) { return column == "sglang_version" || column == "arch"; }

// What a version 1 row means in version 2's columns.
void upgrade_v1_row(ResultRow& row) {
  row.sglang_version = kSchemaV1SglangVersion;
  row.arch.clear();
}

bool readable_version(int v) { return v >= kOldestReadableSchemaVersion && v <= kResultsSchemaVersion; }

template <std::size_t... I>
void read_header(ResultsReader& reader, std::index_sequence<I...>) {
  reader.read_header(io::ignore_extra_column | io::ignore_missing_column, std::string(kColumns[I].name)...);
  for (const Column& c : kColumns)
    if (!added_after_v1(c.name) && !reader.has_column(c.name))
      throw io::error::missing_column_in_header([&] {
        io::error::missing_column_in_header e;
        e.set_column_name(c.name);
        return e;
      }());
}

template <std::size_t... I>
bool read_row(ResultsReader& reader, std::array<char*, kNumColumns>& cells, std::index_sequence<I...>) {
  return reader.read_row(cells[I]...);
}


}  // namespace

const std::vector<std::string>& results_csv_columns() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Column& c : kColumns) v.emplace_back(c.name);
    return v;
  }();
  return names;
}

std::string results_csv_header() {
  std::string out;
  for (std::size_t i = 0; i < kNumColumns; ++i) {
    if (i > 0) out += ',';
    out += kColumns[i].name;
  }
  return out;
}

std::set<std::string> bitwise_equal_names(const std::string& cell) {
  std::set<std::string> out;
  std::string cur;
  for (const char c : cell + ";") {
    if (c == ';' || c == ',') {
      if (!cur.empty()) out.insert(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  return out;
}

std::vector<ResultCell> result_row_cells(const ResultRow& row) {
  struct Typed {
    const ResultRow& row;
    ResultCell operator()(std::string ResultRow::*m) const { return row.*m; }
    ResultCell operator()(RowStatus ResultRow::*m) const { return std::string(row_status_name(row.*m)); }
    ResultCell operator()(int ResultRow::*m) const { return static_cast<std::int64_t>(row.*m); }
    ResultCell operator()(std::uint64_t ResultRow::*m) const { return static_cast<std::int64_t>(row.*m); }
    ResultCell operator()(std::optional<double> ResultRow::*m) const {
      return row.*m ? ResultCell(*(row.*m)) : ResultCell();
    }
    ResultCell operator()(std::optional<std::int64_t> ResultRow::*m) const {
      return row.*m ? ResultCell(*(row.*m)) : ResultCell();
    }
    ResultCell operator()(std::optional<bool> ResultRow::*m) const {
      const std::optional<bool> v = m == &ResultRow::ref_pass ? ref_pass_as_written(row) : row.*m;
      return v ? ResultCell(*v) : ResultCell();
    }
  };
  std::vector<ResultCell> cells;
  cells.reserve(kNumColumns);
  for (const Column& c : kColumns) cells.push_back(std::visit(Typed{row}, c.field));
  return cells;
}

const std::vector<CellKind>& results_column_kinds() {
  static const std::vector<CellKind> kinds = [] {
    struct Kind {
      CellKind operator()(std::string ResultRow::*) const { return CellKind::text; }
      CellKind operator()(RowStatus ResultRow::*) const { return CellKind::text; }
      CellKind operator()(int ResultRow::*) const { return CellKind::integer; }
      CellKind operator()(std::uint64_t ResultRow::*) const { return CellKind::unsigned_integer; }
      CellKind operator()(std::optional<double> ResultRow::*) const { return CellKind::real_or_empty; }
      CellKind operator()(std::optional<std::int64_t> ResultRow::*) const { return CellKind::integer_or_empty; }
      CellKind operator()(std::optional<bool> ResultRow::*) const { return CellKind::bool_or_empty; }
    };
    std::vector<CellKind> v;
    for (const Column& c : kColumns) v.push_back(std::visit(Kind{}, c.field));
    return v;
  }();
  return kinds;
}

bool set_result_cell(ResultRow& row, std::size_t col, const ResultCell& cell) {
  if (col >= kNumColumns) return false;
  struct Setter {
    ResultRow& row;
    const ResultCell& cell;
    bool operator()(std::string ResultRow::*m) const {
      if (std::holds_alternative<std::monostate>(cell)) return (row.*m).clear(), true;
      if (!std::holds_alternative<std::string>(cell)) return false;
      return row.*m = std::get<std::string>(cell), true;
    }
    bool operator()(RowStatus ResultRow::*m) const {
      const std::optional<RowStatus> v =
          std::holds_alternative<std::string>(cell) ? parse_row_status(std::get<std::string>(cell)) : std::nullopt;
      if (v) row.*m = *v;
      return v.has_value();
    }
    bool operator()(int ResultRow::*m) const {
      if (!std::holds_alternative<std::int64_t>(cell)) return false;
      const std::int64_t v = std::get<std::int64_t>(cell);
      if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) return false;
      return row.*m = static_cast<int>(v), true;
    }
    bool operator()(std::uint64_t ResultRow::*m) const {
      if (!std::holds_alternative<std::int64_t>(cell) || std::get<std::int64_t>(cell) < 0) return false;
      return row.*m = static_cast<std::uint64_t>(std::get<std::int64_t>(cell)), true;
    }
    bool operator()(std::optional<double> ResultRow::*m) const {
      if (std::holds_alternative<std::monostate>(cell)) return (row.*m).reset(), true;
      if (std::holds_alternative<double>(cell)) return row.*m = std::get<double>(cell), true;
      if (std::holds_alternative<std::int64_t>(cell)) return row.*m = static_cast<double>(std::get<std::int64_t>(cell)), true;
      return false;
    }
    bool operator()(std::optional<std::int64_t> ResultRow::*m) const {
      if (std::holds_alternative<std::monostate>(cell)) return (row.*m).reset(), true;
      if (!std::holds_alternative<std::int64_t>(cell)) return false;
      return row.*m = std::get<std::int64_t>(cell), true;
    }
    bool operator()(std::optional<bool> ResultRow::*m) const {
      if (std::holds_alternative<std::monostate>(cell)) return (row.*m).reset(), true;
      if (!std::holds_alternative<bool>(cell)) return false;
      return row.*m = std::get<bool>(cell), true;
    }
  };
  return std::visit(Setter{row, cell}, kColumns[col].field);
}

std::string results_csv_line(const ResultRow& row) {
  std::string out;
  for (std::size_t i = 0; i < kNumColumns; ++i) {
    if (i > 0) out += ',';
    std::visit(CellWriter{row, out}, kColumns[i].field);
  }
  return out;
}

ResultsCsvWriter::ResultsCsvWriter(const std::string& path, bool append)
    : path_(path), out_(path, std::ios::binary | (append ? std::ios::app : std::ios::trunc)) {
  if (!out_) throw InputError("--out: cannot write '" + path + "'");
  if (!append) out_ << results_csv_header() << '\n';
  out_.flush();
  if (!out_) throw InputError("--out: cannot write '" + path + "'");
}

void ResultsCsvWriter::write(const ResultRow& row) {
  out_ << results_csv_line(row) << '\n';
  out_.flush();
  if (!out_) throw std::runtime_error("results " + path_ + ": write failed");
}

namespace {

// The rows of a results CSV whose text is `text` (read from `path`, named in errors).
std::vector<ResultRow> rows_from_csv_text(const std::string& path, const std::string& text) {
  const std::string label = "results " + printable(path);
  const auto error_at = [&label](unsigned line, const std::string& what) {
    return InputError(label + " line " + std::to_string(line) + ": " + what);
  };
  ResultsReader reader(path, text.data(), text.data() + text.size());
  std::vector<ResultRow> rows;
  try {
    read_header(reader, std::make_index_sequence<kNumColumns>());
    std::array<char*, kNumColumns> cells{};
    while (true) {
      cells.fill(nullptr);
      if (!read_row(reader, cells, std::make_index_sequence<kNumColumns>())) break;
      const unsigned line = reader.get_file_line();
      ResultRow row;
      // The version first: a file of another version may hold anything in its other columns.
      if (!CellReader{row, cells[0]}(&ResultRow::schema_version)) {
        throw error_at(line, std::string("schema_version '") + printable(cells[0]) + "' is not an integer");
      }
      if (!readable_version(row.schema_version)) {
        throw InputError(label + ": schema_version " + std::to_string(row.schema_version) +
                         ", this attnbench reads " + std::to_string(kOldestReadableSchemaVersion) + " to " +
                         std::to_string(kResultsSchemaVersion));
      }
      for (std::size_t i = 1; i < kNumColumns; ++i) {
        if (added_after_v1(kColumns[i].name)) {
          if (row.schema_version == 1) continue;
          if (!reader.has_column(kColumns[i].name))
            throw error_at(1, std::string("missing column '") + kColumns[i].name + "' (schema_version 2)");
        }
        if (!std::visit(CellReader{row, cells[i]}, kColumns[i].field)) {
          throw error_at(line, std::string(kColumns[i].name) + " '" + printable(cells[i]) + "' is not " +
                                   std::visit(ExpectedKind{}, kColumns[i].field));
        }
      }
      if (row.schema_version == 1) upgrade_v1_row(row);
      if (const std::string e = result_row_domain_error(row); !e.empty()) throw error_at(line, e);
      rows.push_back(std::move(row));
    }
  } catch (const io::error::base& e) {
    throw error_at(std::max(1u, reader.get_file_line()), csv::describe_error(e));
  }
  return rows;
}

// The whole of a results file, after the checks of read_input_file (regular file, size, no NUL byte).
std::string read_results_text(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError("results " + printable(path) + ": is a directory");
  return read_input_file(path, "results", kMaxResultsFileBytes);
}

}  // namespace

std::vector<ResultRow> read_results_csv(const std::string& path, bool* torn_tail) {
  std::string text = read_results_text(path);
  if (torn_tail != nullptr) {
    *torn_tail = false;
    const auto last_lf = text.rfind('\n');
    if (!text.empty() && text.back() != '\n' && last_lf != std::string::npos) {  // the header whole, a row cut off
      text.resize(last_lf + 1);
      *torn_tail = true;
    }
  }
  return rows_from_csv_text(path, text);
}

namespace {

// What is wrong between `row`'s case_id and the columns the id names (mode, model, layers when the id has
// "/L=", batch, page_size, dtype, seed): "" when they agree. The id is taken apart by parse_case_id, the
// reader of the one format the runner writes (core/case_id.hpp).
std::string case_id_error(const ResultRow& row) {
  const std::optional<CaseIdParts> id = parse_case_id(row.case_id);
  if (!id)
    return "case_id '" + printable(row.case_id) +
           "' is not a case id as attnbench writes them (MODE/MODEL/.../b=N/.../p=N/DTYPE, e.g. "
           "decode/llama-3.1-8b/b=64/kv=4096/p=16/bf16)";
  const auto contradicts = [&row](const char* column, const std::string& value, const std::string& named) {
    return std::string(column) + " '" + printable(value) + "' contradicts case_id '" +
           printable(row.case_id) + "' (" + named + ")";
  };
  if (row.mode != id->mode) return contradicts("mode", row.mode, "mode " + id->mode);
  if (row.model != id->model) return contradicts("model", row.model, "model " + id->model);
  if (id->layers && row.layers != *id->layers)
    return contradicts("layers", std::to_string(row.layers), "L=" + std::to_string(*id->layers));
  if (row.batch != id->batch)
    return contradicts("batch", std::to_string(row.batch), "b=" + std::to_string(id->batch));
  if (row.page_size != id->page_size)
    return contradicts("page_size", std::to_string(row.page_size), "p=" + std::to_string(id->page_size));
  if (row.dtype != id->dtype) return contradicts("dtype", row.dtype, "dtype " + id->dtype);
  if (row.seed != id->seed_or_default())
    return contradicts("seed", std::to_string(row.seed),
                       id->seed ? "seed=" + std::to_string(*id->seed) : std::string("no seed=: seed 1"));
  return "";
}

}  // namespace

std::string result_row_domain_error(const ResultRow& row) {
  for (const Column& c : kColumns)
    if (std::string e = std::visit(DomainCheck{row, c.name}, c.field); !e.empty()) return e;
  if (std::string e = case_id_error(row); !e.empty()) return e;
  // A pass is a claim with its figures: an ok row with ref_pass 1 has both reference errors. The writer writes a
  // NaN error empty and, beside it, ref_pass 0 (ref_pass_as_written); an empty error beside a 1 came from
  // elsewhere, and the peer tables would print it as "pass".
  if (row.status == RowStatus::ok && row.ref_pass == true)
    for (const auto& [name, err] : {std::pair{"ref_max_abs_err", &row.ref_max_abs_err}, std::pair{"ref_rel_l2_err", &row.ref_rel_l2_err}})
      if (!*err)
        return std::string("ref_pass 1 with ") + name +
               " empty: a reference pass of an ok row needs both ref_max_abs_err and ref_rel_l2_err (attnbench "
               "writes ref_pass 0 beside an error that is not a number)";
  // ... and none of its elements outside the tolerance (ErrorStats::pass: no mismatch, no NaN).
  if (row.status == RowStatus::ok && row.ref_pass == true && row.ref_mismatch_frac && *row.ref_mismatch_frac > 0)
    return "ref_pass 1 with ref_mismatch_frac " + number_text(*row.ref_mismatch_frac) +
           ": a reference pass has no element outside the tolerance";
  if (row.ref_mismatch_frac && *row.ref_mismatch_frac > 1)
    return "ref_mismatch_frac " + number_text(*row.ref_mismatch_frac) + " is above 1 (a fraction of the elements)";
  // Across columns: an ok row that took samples has a positive median (a gate that meets an ok row without one
  // has no latency to judge and would call it n/a, a pass), and the step statistics are in order. A median
  // outside its own p10-p90 (1e308 between 273 and 318) would otherwise read as "ambiguous": a pass.
  if (row.status == RowStatus::ok && row.samples > 0 && !(row.step_median_us && *row.step_median_us > 0))
    return "status ok with " + std::to_string(row.samples) + " samples but step_median_us " +
           (row.step_median_us ? "'" + number_text(*row.step_median_us) + "'" : std::string("empty")) +
           ": a measured step takes more than 0 us";
  const std::pair<const char*, const std::optional<double>*> order[] = {
      {"step_min_us", &row.step_min_us},       {"step_p10_us", &row.step_p10_us},
      {"step_median_us", &row.step_median_us}, {"step_p90_us", &row.step_p90_us},
      {"step_max_us", &row.step_max_us}};
  for (std::size_t i = 0; i < std::size(order); ++i)
    for (std::size_t k = i + 1; k < std::size(order); ++k)
      if (*order[i].second && *order[k].second && **order[i].second > **order[k].second)
        return std::string(order[i].first) + " '" + number_text(**order[i].second) + "' is above " +
               order[k].first + " '" + number_text(**order[k].second) + "': the step statistics are out of order";
  return "";
}

std::string samples_domain_error(std::span<const double> samples_us) {
  for (std::size_t i = 0; i < samples_us.size(); ++i)
    if (!std::isfinite(samples_us[i]) || samples_us[i] < 0)
      return "samples_us[" + std::to_string(i) + "] '" + number_text(samples_us[i]) +
             "' is not a finite number >= 0";
  return "";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string sample_key(const ResultRow& row) { return row.case_id + "|" + row.backend + "|" + row.timing; }

// ---- JSON ---------------------------------------------------------------------------------------------
void write_results_json(const std::string& path, const Environment& env, const std::string& command,
                        const std::vector<ResultRow>& rows) {
  std::ofstream f(path);
  if (!f) throw InputError("--json: cannot write '" + path + "'");
  write_results_json(f, env, command, rows);
}

void write_results_json(std::ostream& f, const Environment& env, const std::string& command,
                        const std::vector<ResultRow>& rows) {
  nlohmann::ordered_json j;
  j["schema"] = "attnbench.results";
  j["schema_version"] = kResultsSchemaVersion;
  nlohmann::ordered_json e = nlohmann::ordered_json::object();
  for (const auto& [k, v] : env) e[k] = v;
  j["environment"] = e;
  j["command"] = command;
  j["rows"] = nlohmann::ordered_json::array();
  const auto& cols = results_csv_columns();
  for (const ResultRow& r : rows) {
    nlohmann::ordered_json o;
    const std::vector<ResultCell> cells = result_row_cells(r);
    for (std::size_t c = 0; c < cols.size(); ++c)
      std::visit(
          [&](const auto& v) {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>)
              o[cols[c]] = nullptr;
            else
              o[cols[c]] = v;
          },
          cells[c]);
    o["seed"] = r.seed;  // unsigned: result_row_cells' std::int64_t would write a seed >= 2^63 negative
    o["samples_us"] = r.samples_us;
    o["ledger"] = nlohmann::ordered_json::array();
    for (const auto& g : r.ledger)
      o["ledger"].push_back({{"phase", g.phase}, {"tag", g.tag}, {"kind", g.kind}, {"bytes", g.bytes}, {"shared", g.shared},
                             {"count", g.count}});
    j["rows"].push_back(o);
  }
  f << std::setw(2) << j << "\n";
}

// ---- reading JSON, and either format ----------------------------------------------------------------

std::string json_error_text(const std::exception& e) {
  std::string what = e.what();
  if (what.rfind("[json.exception.", 0) == 0) {
    const auto close = what.find("] ");
    if (close != std::string::npos) what = what.substr(close + 2);
  }
  return printable(what);
}

namespace {

// Walks the document once (SAX: no values built) and keeps the first key that an object holds twice.
class DuplicateKeyFinder : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::optional<std::string> duplicate;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    open_.emplace_back();
    return true;
  }
  bool key(string_t& k) override {
    if (!open_.empty() && !open_.back().insert(k).second) {
      duplicate = k;
      return false;  // stop: one is enough
    }
    return true;
  }
  bool end_object() override {
    if (!open_.empty()) open_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  std::vector<std::set<std::string>> open_;
};

}  // namespace

std::optional<std::string> first_duplicate_json_key(std::string_view text) {
  DuplicateKeyFinder finder;
  nlohmann::json::sax_parse(text, &finder);
  return finder.duplicate;
}

namespace {

using json = nlohmann::ordered_json;  // keeps the environment in file order

// A JSON value as the typed cell of a column of kind `kind` (results_csv's one column table decides the
// kinds); what the value should have been when it does not fit. Reports written before the typed writer
// stored empty text as null and ref_pass as 1 / 0: both are still read.
// An unsigned JSON integer above INT64_MAX: get<std::int64_t>() would wrap it to a negative number.
bool beyond_int64(const json& v) {
  return v.is_number_unsigned() &&
         v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
}

std::variant<ResultCell, std::string> json_cell(const json& v, CellKind kind) {
  switch (kind) {
    case CellKind::text:
      if (v.is_null()) return ResultCell{};
      if (v.is_string()) return ResultCell{v.get<std::string>()};
      return std::string("text or null");
    case CellKind::integer:
    case CellKind::unsigned_integer:
      if (beyond_int64(v)) return std::string("an integer in range (at most 9223372036854775807)");
      if (v.is_number_integer() && (kind == CellKind::integer || v.get<std::int64_t>() >= 0))
        return ResultCell{v.get<std::int64_t>()};
      return std::string(kind == CellKind::integer ? "an integer in int range" : "a non-negative integer");
    case CellKind::real_or_empty:
      if (v.is_null()) return ResultCell{};
      if (v.is_number()) return ResultCell{v.get<double>()};
      return std::string("a number or null");
    case CellKind::integer_or_empty:
      if (v.is_null()) return ResultCell{};
      if (beyond_int64(v)) return std::string("an integer in range (at most 9223372036854775807) or null");
      if (v.is_number_integer()) return ResultCell{v.get<std::int64_t>()};
      return std::string("an integer or null");
    case CellKind::bool_or_empty:
      if (v.is_null()) return ResultCell{};
      if (v.is_boolean()) return ResultCell{v.get<bool>()};
      if (v.is_number_integer() && (v.get<std::int64_t>() == 0 || v.get<std::int64_t>() == 1))
        return ResultCell{v.get<std::int64_t>() == 1};
      return std::string("true, false, 1, 0 or null");
  }
  return std::string("a known column kind");
}

std::string version_error(const std::string& path, const std::string& version) {
  return "results " + printable(path) + ": schema_version " + version + ", this attnbench reads " +
         std::to_string(kOldestReadableSchemaVersion) + " to " + std::to_string(kResultsSchemaVersion);
}

ResultSet load_json(const std::string& path, const std::string& text) {
  check_json_nesting(text, kMaxJsonNesting, "results " + printable(path));
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError("results " + printable(path) + ": not valid JSON (byte " + std::to_string(e.byte) +
                     (e.byte >= text.size() ? ": the file ends early, truncated?" : "") + ")");
  } catch (const json::exception& e) {  // e.g. out_of_range 406: a number beyond double range
    throw InputError("results " + printable(path) + ": not valid JSON (" + json_error_text(e) + ")");
  }
  // nlohmann keeps the last of a key given twice, Python's json.load too: the file means whatever the last
  // reader decides (a second "rows": [] would empty a report). Refused, naming the key.
  if (const auto k = first_duplicate_json_key(text))
    throw InputError("results " + printable(path) + ": key \"" + printable(*k) +
                     "\" given twice in one object (which one is meant?)");
  if (!j.is_object())
    throw InputError("results " + printable(path) + ": not an attnbench results report (not a JSON object)");
  if (j.contains("schema") && j["schema"] != "attnbench.results")
    throw InputError("results " + printable(path) + ": schema " + j["schema"].dump() +
                     ", expected \"attnbench.results\"");
  if (j.contains("schema_version") &&
      !(j["schema_version"].is_number_integer() && !beyond_int64(j["schema_version"]) &&
        j["schema_version"].get<std::int64_t>() == j["schema_version"].get<int>() &&
        readable_version(j["schema_version"].get<int>())))
    throw InputError(version_error(path, j["schema_version"].dump()));
  if (!j.contains("rows") || !j["rows"].is_array())
    throw InputError("results " + printable(path) + ": no \"rows\" array");

  ResultSet set;
  if (j.contains("environment")) {
    if (!j["environment"].is_object())
      throw InputError("results " + printable(path) + ": \"environment\" is not an object");
    for (const auto& [k, v] : j["environment"].items())
      set.environment.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
  }
  if (j.contains("command") && j["command"].is_string()) set.command = j["command"].get<std::string>();

  std::size_t index = 0;
  for (const json& o : j["rows"]) {
    const std::string where = "results " + printable(path) + ": row " + std::to_string(index++);
    if (!o.is_object()) throw InputError(where + ": not an object");
    ResultRow row;
    // The version first: a row of another version may hold anything in its other columns.
    const auto& names = results_csv_columns();
    const auto& kinds = results_column_kinds();
    for (std::size_t c = 0; c < names.size(); ++c) {
      if (c > 0 && row.schema_version == 1 && added_after_v1(names[c])) continue;
      if (!o.contains(names[c])) throw InputError(where + ": missing column '" + names[c] + "'");
      if (names[c] == "seed" && o[names[c]].is_number_unsigned()) {  // the one std::uint64_t column: all of it
        row.seed = o[names[c]].get<std::uint64_t>();
        continue;
      }
      const auto cell = json_cell(o[names[c]], kinds[c]);
      if (std::holds_alternative<std::string>(cell) || !set_result_cell(row, c, std::get<ResultCell>(cell))) {
        if (names[c] == "status" && std::holds_alternative<ResultCell>(cell)) {  // text (or null) naming no status
          const ResultCell& v = std::get<ResultCell>(cell);
          throw InputError(where + ": " + bad_status(std::holds_alternative<std::string>(v) ? std::get<std::string>(v) : ""));
        }
        throw InputError(where + ": " + names[c] + " " + o[names[c]].dump() + " is not " +
                         (std::holds_alternative<std::string>(cell) ? std::get<std::string>(cell) : "in range"));
      }
      if (c == 0 && !readable_version(row.schema_version))
        throw InputError(version_error(path, std::to_string(row.schema_version)));
    }
    if (row.schema_version == 1) upgrade_v1_row(row);
    if (const std::string e = result_row_domain_error(row); !e.empty()) throw InputError(where + ": " + e);
    if (o.contains("samples_us") && !o["samples_us"].is_null()) {
      const json& s = o["samples_us"];
      if (!s.is_array()) throw InputError(where + ": samples_us is not an array");
      row.samples_us.reserve(s.size());
      for (const json& x : s) {
        if (!x.is_number()) throw InputError(where + ": samples_us holds " + x.dump() + ", not a number");
        row.samples_us.push_back(x.get<double>());
      }
      if (const std::string e = samples_domain_error(row.samples_us); !e.empty()) throw InputError(where + ": " + e);
      // The writer keeps every sample it counts (runner/case_rows.cpp: samples = the summary's n of samples_us):
      // a list of another length is cut or padded, and the rank test would run on what the count denies.
      if (!row.samples_us.empty() && static_cast<std::int64_t>(row.samples_us.size()) != row.samples)
        throw InputError(where + ": samples_us holds " + std::to_string(row.samples_us.size()) +
                         " values, samples says " + std::to_string(row.samples));
      // ... and its step statistics are those of the samples (runner/case_rows.cpp fill_timing: summarize(samples_us)):
      // a row whose median says 141 beside samples whose median is 71 is two measurements in one, and the gate
      // would judge the samples while the tables print the row.
      if (!row.samples_us.empty()) {
        const Summary sm = summarize(row.samples_us);
        const std::pair<const char*, std::pair<const std::optional<double>*, double>> stats[] = {
            {"step_min_us", {&row.step_min_us, sm.min}},       {"step_p10_us", {&row.step_p10_us, sm.p10}},
            {"step_median_us", {&row.step_median_us, sm.median}}, {"step_p90_us", {&row.step_p90_us, sm.p90}},
            {"step_max_us", {&row.step_max_us, sm.max}}};
        for (const auto& [name, field] : stats) {
          const auto& [value, of_samples] = field;
          if (!*value || std::abs(**value - of_samples) > 1e-9 * std::max(1.0, std::abs(of_samples)))
            throw InputError(where + ": " + name + " " + (*value ? number_text(**value) : std::string("empty")) +
                             " is not that of its samples_us (" + number_text(of_samples) + ")");
        }
        set.samples[sample_key(row)] = row.samples_us;
      }
    }
    if (o.contains("ledger") && !o["ledger"].is_null()) {
      const json& l = o["ledger"];
      if (!l.is_array()) throw InputError(where + ": ledger is not an array");
      for (const json& g : l) {
        const bool well_formed =
            g.is_object() && g.contains("phase") && g["phase"].is_string() && g.contains("tag") &&
            g["tag"].is_string() && g.contains("kind") && g["kind"].is_string() && g.contains("bytes") &&
            g["bytes"].is_number_integer() && !beyond_int64(g["bytes"]) &&
            (!g.contains("shared") || g["shared"].is_boolean()) &&
            (!g.contains("count") || (g["count"].is_number_integer() && !beyond_int64(g["count"]) &&
                                      g["count"].get<std::int64_t>() >= std::numeric_limits<int>::min() &&
                                      g["count"].get<std::int64_t>() <= std::numeric_limits<int>::max()));
        if (!well_formed)
          throw InputError(where + ": ledger entry " + g.dump() +
                           " is not {phase, tag, kind: text, bytes: 64-bit integer, shared: bool, count: int}");
        ResultRow::LedgerGroup lg;
        lg.phase = g["phase"].get<std::string>();
        lg.tag = g["tag"].get<std::string>();
        lg.kind = g["kind"].get<std::string>();
        lg.bytes = g["bytes"].get<std::int64_t>();
        lg.shared = g.value("shared", false);
        lg.count = g.value("count", 0);
        row.ledger.push_back(std::move(lg));
      }
    }
    set.rows.push_back(std::move(row));
  }
  return set;
}

}  // namespace

void check_unique_keys(const std::vector<ResultRow>& rows, const std::string& prefix) {
  std::set<std::string> seen;
  for (const ResultRow& r : rows)
    if (!seen.insert(sample_key(r)).second) throw InputError(prefix + ": two rows for " + sample_key(r));
}

std::vector<std::string> missing_rows_of_case(const std::vector<const ResultRow*>& rows,
                                              const std::vector<std::string>& backends, bool graphs_due) {
  std::set<std::pair<std::string, std::string>> have;  // (backend, timing)
  std::set<std::string> measured;                     // backends whose eager row is not skipped
  bool extend = false;
  for (const ResultRow* r : rows) {
    have.insert({r->backend, r->timing});
    if (r->timing == "eager" && r->status != RowStatus::skipped) measured.insert(r->backend);
    extend = extend || r->mode == "extend";
  }
  std::vector<std::string> lack;
  for (const std::string& b : backends) {
    const bool eager = have.count({b, "eager"}) > 0, graph = have.count({b, "graph"}) > 0;
    if (!eager && !graph)
      lack.push_back("no row of " + b);
    else if (!eager)
      lack.push_back("no eager row of " + b);
    else if (graphs_due && !extend && measured.count(b) && !graph)
      lack.push_back("no graph row of " + b);
  }
  return lack;
}

ResultSet read_results_json(const std::string& path) { return load_json(path, read_results_text(path)); }

ResultSet load_result_set(const std::string& path) {
  const std::string text = read_results_text(path);
  const std::string ext = std::filesystem::path(path).extension().string();
  ResultSet set;
  const auto first = text.find_first_not_of(" \t\r\n");
  if (ext != ".csv" && (ext == ".json" || (first != std::string::npos && text[first] == '{'))) {
    set = load_json(path, text);
  } else {
    set.rows = rows_from_csv_text(path, text);
  }
  check_unique_keys(set.rows, "results " + printable(path));
  return set;
}

std::string options_text(const std::vector<std::pair<std::string, std::string>>& options) {
  std::string out;
  for (const auto& [k, v] : options) out += (out.empty() ? "" : "; ") + k + "=" + v;
  return out;
}

std::vector<std::pair<std::string, std::string>> parse_options_text(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find("; ", begin);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(begin, end - begin);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos)
      out.push_back({item, ""});
    else
      out.push_back({item.substr(0, eq), item.substr(eq + 1)});
    begin = end + 2;
  }
  return out;
}

}  // namespace attnbench
