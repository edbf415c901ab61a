// libFuzzer target: a request-length trace CSV (`--trace FILE`, request_id,prefix_len,extend_len). Each input
// is written to a scratch file and read with attnbench::read_trace (src/engine/request_lengths.cpp), which reads
// it through attnbench::read_input_file (src/core/files.cpp: the regular-file, size and NUL-byte checks). Expected
// outcomes: rows that keep read_trace's contract (checked below), or attnbench::InputError. Anything else is
// a finding: a crash, a sanitizer report, another exception, or a row that breaks the contract. Build and
// run: scripts/fuzz.sh (FUZZ_SECONDS per target, default 60).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "fuzz/scratch_file.hpp"
#include "engine/request_lengths.hpp"

namespace {

// One scratch file per process, rewritten for every input.
const std::string& write_scratch(const std::uint8_t* data, std::size_t size) {
  static attnbench::fuzz::ScratchFile scratch("attnbench-trace-fuzz-XXXXXX.csv", 4);
  return scratch.write(data, size);
}

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "trace_fuzz finding: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = write_scratch(data, size);
  std::vector<attnbench::TraceRequest> rows;
  try {
    rows = attnbench::read_trace(path);
  } catch (const attnbench::InputError&) {
    return 0;  // the expected outcome for bad input
  }
  // The contract of read_trace (request_lengths.hpp) for what it accepts.
  if (rows.empty()) finding("read_trace returned no rows without an error");
  for (std::size_t i = 0; i < size; ++i)
    if (data[i] == 0) finding("a NUL byte accepted");
  if (static_cast<std::int64_t>(size) > attnbench::kMaxTraceBytes) finding("a file beyond kMaxTraceBytes accepted");
  if (rows.size() > static_cast<std::size_t>(attnbench::kMaxTraceRows))
    finding("more rows than kMaxTraceRows");
  for (const auto& r : rows) {
    if (r.prefix_len < 0) finding("prefix_len < 0 accepted");
    if (r.extend_len < 1) finding("extend_len < 1 accepted");
    if (static_cast<std::int64_t>(r.prefix_len) + r.extend_len > attnbench::kMaxTraceTokens)
      finding("prefix_len + extend_len > kMaxTraceTokens accepted");
  }
  return 0;
}
