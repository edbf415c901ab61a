// Request lengths for a batch: seeded generators (fixed / uniform / zipf) and a reader for recorded traces.
// Generators use std::mt19937_64 (fully specified by the standard) and their own sampling code, so a seed
// gives the same lengths with every standard library.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnbench {

enum class LengthDist { fixed, uniform, zipf };

// Parses "fixed" | "uniform" | "zipf"; throws InputError naming --length-dist otherwise.
LengthDist parse_length_dist(const std::string& s);
// The name parse_length_dist accepts for `d`.
std::string_view length_dist_name(LengthDist d);

// `n` lengths in tokens, deterministic for `seed`:
//   fixed:   every length is `hi` (lo and zipf_s are ignored);
//   uniform: integers uniform in [lo, hi];
//   zipf:    lo + k - 1 with k in [1, hi - lo + 1] drawn with P(k) proportional to k^(-zipf_s), so short
//            lengths are common and long ones rare.
// Throws InputError naming the argument at fault unless n >= 1 and 1 <= lo <= hi (fixed: 1 <= hi), and,
// for zipf, zipf_s is finite and > 0.
std::vector<int> draw_lengths(LengthDist d, int n, int lo, int hi, double zipf_s, std::uint64_t seed);

struct TraceRequest {
  std::string request_id;
  int prefix_len = 0;  // tokens already in the KV cache (>= 0)
  int extend_len = 0;  // new tokens of this step (>= 1)
};

inline constexpr std::int64_t kMaxTraceTokens = 16777216;  // prefix_len + extend_len per request, 2^24
inline constexpr int kMaxTraceRows = 1000000;
// Largest trace file read, in bytes: a million rows of long request ids fit; the file is refused before it is
// read beyond this.
inline constexpr std::int64_t kMaxTraceBytes = std::int64_t{64} << 20;

// Reads a CSV trace with the header request_id,prefix_len,extend_len (columns in any order, no others),
// one request per row, rows in file order. The file is checked before it is read (core/files.hpp): "trace
// FILE: not a regular file (a FIFO)" (a directory, a device), "trace FILE: larger than N bytes",
// "trace FILE line N: contains a NUL byte". Throws InputError "trace FILE line N: <what>" on an unreadable
// or empty file, a missing, duplicate or extra column, an empty or repeated request_id, a non-integer value, prefix_len < 0,
// extend_len < 1, prefix_len + extend_len > kMaxTraceTokens, no rows, or more than kMaxTraceRows rows.
std::vector<TraceRequest> read_trace(const std::string& path);

}  // namespace attnbench
