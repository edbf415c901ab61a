// The table model's printers: fixed-width text (fit, margins, right alignment, short rows, rows that do not
// widen), Markdown (escaping, empty cells), CSV (quoting, typed values) and JSON (typed values, nulls).
#include "report/table.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace attnbench {
namespace {

using table::Align;
using table::str;

table::Table sample() {
  table::Table t;
  t.columns = {{"name", Align::left, 4, true}, {"n", Align::right, 6}, {"tail", Align::left, 0, false, 2}};
  t.add({str("a"), table::cell(std::int64_t{12}, "12"), str("x, \"y\"")});
  t.add({str("longer"), table::number(0.5, "%.2f"), str("")});
  t.add({str("total row that is long"), table::number(std::nullopt, "%.2f")}, false);
  return t;
}

TEST(TableText, FitMarginRightAlignShortRowsAndNoTrailingBlanks) {
  std::ostringstream os;
  table::print_text(os, sample());
  EXPECT_EQ(os.str(),
            "name         n  tail\n"
            "a           12  x, \"y\"\n"
            "longer    0.50\n"
            "total row that is long     -\n");
  table::Table t = sample();
  t.header = false;
  t.rows.resize(1);
  std::ostringstream no_header;
  table::print_text(no_header, t);
  // Without the title: max(4, longest cell 1) + 2 = 6 wide, then the right-aligned 6.
  EXPECT_EQ(no_header.str(), "a     " "    12" "  x, \"y\"\n");
}

TEST(TableMarkdown, EscapesPipesAndLineBreaksAndPrintsEmptyCellsAsOneBlank) {
  table::Table t;
  t.columns = {{"a"}, {"b"}, {"c"}};
  t.add({str("`x|y`"), str("two\nlines"), str("")});
  std::ostringstream os;
  table::print_markdown(os, t);
  EXPECT_EQ(os.str(), "| a | b | c |\n|---|---|---|\n| `x\\|y` | two lines | |\n");
}

TEST(TableCsv, QuotesTextAndWritesTypedValues) {
  std::ostringstream os;
  table::print_csv(os, sample());
  EXPECT_EQ(os.str(),
            "name,n,tail\n"
            "a,12,\"x, \"\"y\"\"\"\n"
            "longer,0.5,\n"
            "total row that is long,,\n");
  EXPECT_EQ(table::csv_cell(table::Value(0.1)), "0.10000000000000001");
  EXPECT_EQ(table::csv_cell(table::Value(true)), "1");
  EXPECT_EQ(table::csv_cell(table::Value(false)), "0");
  EXPECT_EQ(table::csv_cell(table::Value()), "");
}

TEST(TableJson, OneObjectPerRowWithTypedValuesAndNulls) {
  const nlohmann::ordered_json j = table::to_json(sample());
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0].dump(), R"({"name":"a","n":12,"tail":"x, \"y\""})");
  EXPECT_EQ(j[1].dump(), R"({"name":"longer","n":0.5,"tail":""})");
  EXPECT_EQ(j[2].dump(), R"({"name":"total row that is long","n":null,"tail":null})");
}

}  // namespace
}  // namespace attnbench
