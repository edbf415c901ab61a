#include "report/results_json.hpp"

#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>

#include "core/errors.hpp"

namespace attnbench {

namespace {

// Splits a CSV line into cells (RFC 4180 quoting, as results_csv_line writes it).
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        cells.back() += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      cells.emplace_back();
    } else {
      cells.back() += ch;
    }
  }
  return cells;
}

}  // namespace

void write_results_json(const std::string& path, const Environment& env, const std::string& command,
                        const std::vector<ResultRow>& rows) {
  nlohmann::ordered_json j;
  j["schema"] = "attnbench.results";
  j["schema_version"] = kResultsSchemaVersion;
  nlohmann::ordered_json e = nlohmann::ordered_json::object();
  for (const auto& [k, v] : env) e[k] = v;
  j["environment"] = e;
  j["command"] = command;
  j["rows"] = nlohmann::ordered_json::array();
  // One conversion path for every column: the CSV cell text, typed back (numbers stay numbers, empty = null).
  const auto& cols = results_csv_columns();
  for (const ResultRow& r : rows) {
    const std::vector<std::string> cells = split_csv(results_csv_line(r));
    nlohmann::ordered_json o;
    for (std::size_t c = 0; c < cols.size() && c < cells.size(); ++c) {
      const std::string& v = cells[c];
      if (v.empty()) {
        o[cols[c]] = nullptr;
        continue;
      }
      char* end = nullptr;
      const double d = std::strtod(v.c_str(), &end);
      const bool numeric = end && *end == '\0' && cols[c] != "case_id" && cols[c] != "note" && cols[c] != "repro" &&
                           cols[c] != "bitwise_equal_to" && cols[c] != "model";
      if (numeric)
        o[cols[c]] = (v.find_first_of(".eEnN") == std::string::npos) ? nlohmann::ordered_json(std::stoll(v)) : nlohmann::ordered_json(d);
      else
        o[cols[c]] = v;
    }
    j["rows"].push_back(o);
  }
  std::ofstream f(path);
  if (!f) throw InputError("--json: cannot write '" + path + "'");
  f << std::setw(2) << j << "\n";
}

}  // namespace attnbench
