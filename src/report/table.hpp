// A small table model and one printer per format (the NVBench printer seam): a writer says what its table
// holds (columns; rows of cells) and a printer lays it out as fixed-width text, Markdown, CSV or JSON.
//
// A cell carries two faces: `value`, typed, what CSV and JSON carry (std::monostate: empty cell / null), and
// `text`, what a person reads in the text and Markdown layouts ("-", a status instead of a missing figure,
// a number through a printf format, ...). Writers that show other columns to people than to programs build
// one table per audience from the same data.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

namespace attnbench::table {

using Value = std::variant<std::monostate, std::string, std::int64_t, double, bool>;

struct Cell {
  Value value;       // CSV / JSON
  std::string text;  // text / Markdown
};

// A text cell: value and text are `s`.
Cell str(std::string s);
// `text` for people, `value` for programs.
Cell cell(Value value, std::string text);
// A number: the value (or null), its text through printf `format` (or `missing`).
Cell number(const std::optional<double>& v, const char* format, const std::string& missing = "-");
// An integer shown as `shown` (e.g. "1,024 (1.00 KiB)"); null and `missing` when absent.
Cell integer(const std::optional<std::int64_t>& v, const std::string& shown, const std::string& missing = "-");

enum class Align { left, right };

struct Column {
  std::string name;  // the CSV header / the JSON key / the title of the text and Markdown layouts
  Align align = Align::left;
  // Text layout: `margin` spaces, then the cell padded to `width` bytes (never cut). With `fit`, the width is
  // max(width, the longest cell of the rows that fit, the title when a header is printed) + 2.
  std::size_t width = 0;
  bool fit = false;
  std::size_t margin = 0;
  bool code = false;  // Markdown: the cell in backticks
};

// One row. A row may hold fewer cells than there are columns: its line ends after its last cell.
struct Row {
  std::vector<Cell> cells;
  bool fits = true;  // text: counts for the width of `fit` columns (a totals row may not)
};

struct Table {
  std::vector<Column> columns;
  std::vector<Row> rows;
  bool header = true;  // text: print the titles as the first line

  Table& add(std::vector<Cell> cells, bool fits = true) {
    rows.push_back({std::move(cells), fits});
    return *this;
  }
};

// Fixed-width text: one line per row (the titles first when t.header). A left-aligned cell that ends its line
// is not padded (and, when empty, gets no margin either).
void print_text(std::ostream& os, const Table& t);

// A GitHub Markdown table: "| title | ... |", "|---|...", then "| cell | ... |" per row; '|' in a cell is
// escaped and a line break becomes a space (text::md); an empty cell is a single blank.
void print_markdown(std::ostream& os, const Table& t);

// CSV: the column names, then one line per row. Text through csv_field (quoted when it holds , " CR or LF),
// integers plain, doubles with 17 significant digits, booleans 1 / 0, empty for std::monostate.
void print_csv(std::ostream& os, const Table& t);

// JSON: an array with one object per row, the column names as keys in column order, typed values (null for
// std::monostate). Writers embed it in their documents.
nlohmann::ordered_json to_json(const Table& t);

// One value as print_csv writes it.
std::string csv_cell(const Value& v);

}  // namespace attnbench::table
