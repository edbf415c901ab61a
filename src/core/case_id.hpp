// The canonical case id, e.g. "decode/llama-3.1-8b/b=64/kv=4096/p=16/bf16": one format, written here and read
// back here. The runner builds every case's id with format_case_id (runner/case.cpp); the results readers
// take it apart with parse_case_id to check a row's columns against its id (report/results_io.cpp).
// parse_case_id accepts exactly the ids format_case_id writes: it rebuilds the id from what it read and
// refuses any other spelling.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace attnbench {

// The parts of a case id, in the order they are written.
struct CaseIdParts {
  std::string mode;                  // "decode" | "extend" | "verify" (forward_mode_name)
  std::string model;                 // the model's name ([A-Za-z0-9._+-], never '/')
  std::optional<int> layers;         // "/L=N": written when --layers was given
  std::optional<int> tp_size;        // "/tp=N": written when --tp-size was given
  std::optional<std::string> trace;  // "/trace=NAME": the trace file's name (controls escaped, no '/')
  int batch = 0;                     // "/b=N"
  // The length axes of a case without a trace: extend "/prefix=N/ext=N", decode and verify "/kv=N", then
  // "/DIST[MIN,L]" when the lengths are drawn (length_dist not empty; "fixed" is written as nothing).
  int kv_len = 0;
  int prefix_len = 0, extend_len = 0;
  std::string length_dist;
  int length_min = 0;
  int draft_tokens = 0;        // "/draft=N": a verify case without a trace
  int page_size = 0;           // "/p=N"
  std::string dtype;           // "/bf16": the model dtype
  std::string kv_cache_dtype;  // "/kvcache=NAME": the KV cache's dtype where not the model's (fp8); else ""
  std::optional<std::uint64_t> seed;  // "/seed=N": written for several seeds or a seed other than 1
  bool sinks = false;                 // "/sinks"

  // The case's seed: the one written, else 1 (an id without "/seed=" is of seed 1).
  std::uint64_t seed_or_default() const { return seed.value_or(1); }
  bool operator==(const CaseIdParts&) const = default;
};

// The id of `parts`: "MODE/MODEL[/L=N][/tp=N]" + ("/trace=NAME/b=N" | "/b=N/prefix=N/ext=N[/DIST[MIN,L]]" for
// extend | "/b=N/kv=N[/DIST[MIN,L]][/draft=N for verify]") + "/p=N/DTYPE[/kvcache=NAME][/seed=N][/sinks]".
std::string format_case_id(const CaseIdParts& parts);

// The parts of `id`; std::nullopt when `id` is not what format_case_id writes (a segment missing, out of
// order or unknown, a number with a sign or a leading zero, ...).
std::optional<CaseIdParts> parse_case_id(std::string_view id);

}  // namespace attnbench
