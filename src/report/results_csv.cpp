#include "report/results_csv.hpp"

#include "core/csv_reading.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <variant>

#include "core/errors.hpp"

namespace attnbench {

namespace {

// A column: its name and the ResultRow member it holds. The writer, the reader and the header all walk
// this one table, so they cannot disagree about order or types.
using Field = std::variant<std::string ResultRow::*, int ResultRow::*, std::uint64_t ResultRow::*,
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
  void operator()(int ResultRow::*m) const { append_number(out, row.*m); }
  void operator()(std::uint64_t ResultRow::*m) const { append_number(out, row.*m); }
  void operator()(std::optional<double> ResultRow::*m) const {
    if (row.*m) append_number(out, *(row.*m));
  }
  void operator()(std::optional<std::int64_t> ResultRow::*m) const {
    if (row.*m) append_number(out, *(row.*m));
  }
  void operator()(std::optional<bool> ResultRow::*m) const {
    if (row.*m) out += *(row.*m) ? '1' : '0';
  }
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
  const char* operator()(int ResultRow::*) const { return "an integer"; }
  const char* operator()(std::uint64_t ResultRow::*) const { return "a non-negative integer"; }
  const char* operator()(std::optional<double> ResultRow::*) const { return "a number or empty"; }
  const char* operator()(std::optional<std::int64_t> ResultRow::*) const { return "an integer or empty"; }
  const char* operator()(std::optional<bool> ResultRow::*) const { return "1, 0 or empty"; }
};

using ResultsReader = io::CSVReader<kNumColumns, io::trim_chars<>, io::double_quote_escape<',', '"'>>;

template <std::size_t... I>
void read_header(ResultsReader& reader, std::index_sequence<I...>) {
  reader.read_header(io::ignore_extra_column, std::string(kColumns[I].name)...);
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
    ResultCell operator()(int ResultRow::*m) const { return static_cast<std::int64_t>(row.*m); }
    ResultCell operator()(std::uint64_t ResultRow::*m) const { return static_cast<std::int64_t>(row.*m); }
    ResultCell operator()(std::optional<double> ResultRow::*m) const {
      return row.*m ? ResultCell(*(row.*m)) : ResultCell();
    }
    ResultCell operator()(std::optional<std::int64_t> ResultRow::*m) const {
      return row.*m ? ResultCell(*(row.*m)) : ResultCell();
    }
    ResultCell operator()(std::optional<bool> ResultRow::*m) const {
      return row.*m ? ResultCell(*(row.*m)) : ResultCell();
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

std::vector<ResultRow> read_results_csv(const std::string& path) {
  const auto error_at = [&path](unsigned line, const std::string& what) {
    return InputError("results " + path + " line " + std::to_string(line) + ": " + what);
  };
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError("results " + path + ": is a directory");

  std::unique_ptr<ResultsReader> reader;
  try {
    reader = std::make_unique<ResultsReader>(path);
  } catch (const io::error::can_not_open_file& e) {
    throw InputError("results " + path + ": cannot read (" + std::strerror(e.errno_value) + ")");
  }

  std::vector<ResultRow> rows;
  try {
    read_header(*reader, std::make_index_sequence<kNumColumns>());
    std::array<char*, kNumColumns> cells{};
    while (read_row(*reader, cells, std::make_index_sequence<kNumColumns>())) {
      const unsigned line = reader->get_file_line();
      ResultRow row;
      // The version first: a file of another version may hold anything in its other columns.
      if (!CellReader{row, cells[0]}(&ResultRow::schema_version)) {
        throw error_at(line, std::string("schema_version '") + cells[0] + "' is not an integer");
      }
      if (row.schema_version != kResultsSchemaVersion) {
        throw InputError("results " + path + ": schema_version " + std::to_string(row.schema_version) +
                         ", this attnbench reads " + std::to_string(kResultsSchemaVersion));
      }
      for (std::size_t i = 1; i < kNumColumns; ++i) {
        if (!std::visit(CellReader{row, cells[i]}, kColumns[i].field)) {
          throw error_at(line, std::string(kColumns[i].name) + " '" + cells[i] + "' is not " +
                                   std::visit(ExpectedKind{}, kColumns[i].field));
        }
      }
      rows.push_back(std::move(row));
    }
  } catch (const io::error::base& e) {
    throw error_at(std::max(1u, reader->get_file_line()), csv::describe_error(e));
  }
  return rows;
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

}  // namespace attnbench
