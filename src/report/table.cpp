#include "report/table.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "report/results_io.hpp"
#include "report/text.hpp"

namespace attnbench::table {

Cell str(std::string s) {
  Cell c;
  c.text = s;
  c.value = std::move(s);
  return c;
}

Cell cell(Value value, std::string text) { return {std::move(value), std::move(text)}; }

Cell number(const std::optional<double>& v, const char* format, const std::string& missing) {
  if (!v) return {std::monostate{}, missing};
  return {*v, text::fmt(format, *v)};
}

Cell integer(const std::optional<std::int64_t>& v, const std::string& shown, const std::string& missing) {
  if (!v) return {std::monostate{}, missing};
  return {*v, shown};
}

namespace {

std::vector<std::size_t> text_widths(const Table& t) {
  std::vector<std::size_t> w;
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    const Column& col = t.columns[c];
    if (!col.fit) {
      w.push_back(col.width);
      continue;
    }
    std::size_t longest = std::max(col.width, t.header ? col.name.size() : 0);
    for (const Row& r : t.rows)
      if (r.fits && c < r.cells.size()) longest = std::max(longest, r.cells[c].text.size());
    w.push_back(longest + 2);
  }
  return w;
}

void text_line(std::ostream& os, const Table& t, const std::vector<std::size_t>& widths,
               const std::vector<std::string>& cells) {
  for (std::size_t c = 0; c < cells.size() && c < t.columns.size(); ++c) {
    const Column& col = t.columns[c];
    const std::string& s = cells[c];
    const std::size_t fill = s.size() >= widths[c] ? 0 : widths[c] - s.size();
    const bool last = c + 1 == cells.size();
    if (last && s.empty() && col.align == Align::left) break;  // nothing to show: no margin either
    os << std::string(col.margin, ' ');
    if (col.align == Align::right) {
      os << std::string(fill, ' ') << s;
    } else {
      os << s;
      if (!last) os << std::string(fill, ' ');
    }
  }
  os << '\n';
}

}  // namespace

void print_text(std::ostream& os, const Table& t) {
  const std::vector<std::size_t> widths = text_widths(t);
  if (t.header) {
    std::vector<std::string> titles;
    for (const Column& c : t.columns) titles.push_back(c.name);
    text_line(os, t, widths, titles);
  }
  for (const Row& r : t.rows) {
    std::vector<std::string> cells;
    for (const Cell& c : r.cells) cells.push_back(c.text);
    text_line(os, t, widths, cells);
  }
}

void print_markdown(std::ostream& os, const Table& t) {
  os << '|';
  for (const Column& c : t.columns) os << ' ' << c.name << " |";
  os << "\n|";
  for (std::size_t i = 0; i < t.columns.size(); ++i) os << "---|";
  os << '\n';
  for (const Row& r : t.rows) {
    os << '|';
    for (std::size_t c = 0; c < r.cells.size() && c < t.columns.size(); ++c) {
      const std::string& s = r.cells[c].text;
      if (s.empty()) {
        os << " |";
      } else if (t.columns[c].code) {
        os << " `" << text::md(s) << "` |";
      } else {
        os << ' ' << text::md(s) << " |";
      }
    }
    os << '\n';
  }
}

std::string csv_cell(const Value& v) {
  struct Visit {
    std::string operator()(std::monostate) const { return ""; }
    std::string operator()(const std::string& s) const { return csv_field(s); }
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const {
      std::ostringstream os;
      os << std::setprecision(17) << d;
      return os.str();
    }
    std::string operator()(bool b) const { return b ? "1" : "0"; }
  };
  return std::visit(Visit{}, v);
}

void print_csv(std::ostream& os, const Table& t) {
  for (std::size_t c = 0; c < t.columns.size(); ++c) os << (c ? "," : "") << t.columns[c].name;
  os << '\n';
  for (const Row& r : t.rows) {
    for (std::size_t c = 0; c < t.columns.size(); ++c)
      os << (c ? "," : "") << (c < r.cells.size() ? csv_cell(r.cells[c].value) : "");
    os << '\n';
  }
}

nlohmann::ordered_json to_json(const Table& t) {
  using oj = nlohmann::ordered_json;
  oj rows = oj::array();
  for (const Row& r : t.rows) {
    oj o = oj::object();
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
      const Value& v = c < r.cells.size() ? r.cells[c].value : Value{};
      o[t.columns[c].name] = std::visit(
          [](const auto& x) -> oj {
            if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>) {
              return oj();
            } else {
              return oj(x);
            }
          },
          v);
    }
    rows.push_back(std::move(o));
  }
  return rows;
}

}  // namespace attnbench::table
