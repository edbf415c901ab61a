#include "report/results_json.hpp"

#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "core/errors.hpp"

namespace attnbench {


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
    o["samples_us"] = r.samples_us;
    o["ledger"] = nlohmann::ordered_json::array();
    for (const auto& g : r.ledger)
      o["ledger"].push_back({{"phase", g.phase}, {"tag", g.tag}, {"kind", g.kind}, {"bytes", g.bytes}, {"shared", g.shared},
                             {"count", g.count}});
    j["rows"].push_back(o);
  }
  std::ofstream f(path);
  if (!f) throw InputError("--json: cannot write '" + path + "'");
  f << std::setw(2) << j << "\n";
}

}  // namespace attnbench
