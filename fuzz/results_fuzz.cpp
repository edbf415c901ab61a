// libFuzzer target: a results file. Each input is written to two scratch files and read as a results CSV
// (attnbench::read_results_csv, the reader `compare`, `report` and `--resume` rely on) and as a JSON report
// (attnbench::load_result_set on a .json name). Expected outcomes: rows, or attnbench::InputError. Anything else
// is a finding: a crash, a hang, a sanitizer report, another exception, an accepted row or raw sample outside
// its column's domain (NaN, infinity, a negative, an unknown status / mode / timing: the readers must refuse
// them), or CSV rows that do not survive a write -> read round trip (the CSV is an API: what the reader
// accepts, the writer must reproduce). Text holding CR or LF is left out of the round trip: the parser
// cannot read a line feed inside a field back (a documented limitation of read_results_csv).
// Build and run: scripts/fuzz.sh (FUZZ_SECONDS per target, default 60).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "fuzz/scratch_file.hpp"
#include "report/results_io.hpp"

namespace {

// Scratch files per process (under $TMPDIR or /tmp), rewritten for every input.
std::string make_scratch(const char* name) { return attnbench::fuzz::make_scratch(name, 4); }

std::string g_input, g_again, g_json;

using attnbench::fuzz::write_file;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "results_fuzz finding: %s\n", what.c_str());
  std::abort();
}

bool has_line_break(const attnbench::ResultRow& r) {
  for (const std::string* s : {&r.case_id, &r.backend, &r.device, &r.mode, &r.timing, &r.note,
                               &r.model, &r.dtype, &r.bitwise_equal_to, &r.repro})
    if (s->find_first_of("\r\n") != std::string::npos) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (g_input.empty()) {
    g_input = make_scratch("attnbench-results-fuzz-XXXXXX.csv");
    g_again = make_scratch("attnbench-results-fuzz-again-XXXXXX.csv");
    g_json = attnbench::fuzz::make_scratch("attnbench-results-fuzz-XXXXXX.json", 5);
    std::atexit([] {
      std::remove(g_input.c_str());
      std::remove(g_again.c_str());
      std::remove(g_json.c_str());
    });
  }
  // As a JSON report: rows and raw samples in their domains, or InputError.
  write_file(g_json, data, size);
  try {
    const attnbench::ResultSet set = attnbench::load_result_set(g_json);
    for (const auto& r : set.rows) {
      if (const std::string e = attnbench::result_row_domain_error(r); !e.empty())
        finding("the JSON reader accepted a row outside its domain: " + e);
      if (const std::string e = attnbench::samples_domain_error(r.samples_us); !e.empty())
        finding("the JSON reader accepted a raw sample outside its domain: " + e);
    }
  } catch (const attnbench::InputError&) {
  }

  write_file(g_input, data, size);
  std::vector<attnbench::ResultRow> rows;
  try {
    rows = attnbench::read_results_csv(g_input);
  } catch (const attnbench::InputError&) {
    return 0;  // the expected outcome for bad input
  }

  // Round trip: the rows written back must read back as the same lines (lines, not rows: NaN != NaN).
  std::string text = attnbench::results_csv_header() + "\n";
  std::vector<std::string> lines;
  for (const auto& r : rows) {
    if (r.schema_version < attnbench::kOldestReadableSchemaVersion || r.schema_version > attnbench::kResultsSchemaVersion)
      finding("a row of an unreadable schema version accepted");
    if (const std::string e = attnbench::result_row_domain_error(r); !e.empty())
      finding("the CSV reader accepted a row outside its domain: " + e);
    if (has_line_break(r)) continue;
    lines.push_back(attnbench::results_csv_line(r));
    text += lines.back() + "\n";
  }
  write_file(g_again, text.data(), text.size());
  std::vector<attnbench::ResultRow> again;
  try {
    again = attnbench::read_results_csv(g_again);
  } catch (const attnbench::InputError& e) {
    finding(std::string("rows written by results_csv_line do not read back: ") + e.what());
  }
  if (again.size() != lines.size()) finding("round trip changed the number of rows");
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (attnbench::results_csv_line(again[i]) != lines[i])
      finding("round trip changed row " + std::to_string(i) + ":\n  " + lines[i] + "\n  " +
              attnbench::results_csv_line(again[i]));
  return 0;
}
