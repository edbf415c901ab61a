// Sweeps split across processes (`run --shard K/N`, or under torchrun / Slurm / Open MPI) and put back together
// (`attnbench merge`). Each rank's JSON report carries, in its environment, what `merge` needs to prove that
// the shards are one sweep, complete, with no case twice:
//   shard                "K/N": this rank's share, K 0-based (like RANK), N shards in all
//   shard_source         who said so: "--shard", "torchrun", "slurm", "slurm array" or "open mpi"
//   sweep_case_count     how many cases the whole sweep has (after --filter / --case-id, before sharding)
//   sweep_case_ids_hash  "fnv1a64:<16 hex digits>" of those case ids in expansion order, joined by '\n'
//   shard_cases          JSON text [[index, "case id"], ...]: this rank's cases and their places in the sweep
// and, like every report, options_fingerprint / options (runner/sweep_options.hpp), git_commit and
// sglang_version, which must be equal across the shards.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "report/results_io.hpp"

namespace attnbench {

inline constexpr const char* kShardKey = "shard";
inline constexpr const char* kShardSourceKey = "shard_source";
inline constexpr const char* kSweepCaseCountKey = "sweep_case_count";
inline constexpr const char* kSweepCaseIdsHashKey = "sweep_case_ids_hash";
inline constexpr const char* kShardCasesKey = "shard_cases";
// Written by merge instead of the keys above: how many shards, and each one's device.
inline constexpr const char* kMergedShardsKey = "merged_shards";
inline constexpr const char* kMergedDevicesKey = "merged_devices";

// "fnv1a64:<16 hex digits>" of `ids` joined by '\n' (order matters).
std::string case_ids_hash(const std::vector<std::string>& ids);

// "K/N" parsed: 0 <= K < N, both decimal without sign or leading zeros (N at most kMaxShards). Throws InputError
// "<what>: ..." naming the value.
struct ShardIndex {
  int index = 0, count = 1;
  bool operator==(const ShardIndex&) const = default;
};
inline constexpr int kMaxShards = 65536;
ShardIndex parse_shard_text(const std::string& text, const std::string& what);

// `attnbench merge SHARDS... --out FILE [--json FILE]`.
struct MergeOptions {
  std::vector<std::string> shards;  // JSON reports of the shards (a .csv stands for the .json beside it)
  std::string out;                  // merged CSV; "-": stdout
  std::string json;                 // merged JSON report; default beside --out (.csv -> .json); "-": stdout
};

// The shards put together: rows in sweep order, the environment of the first shard without the per-shard keys
// (plus merged_shards and merged_devices), the command without --shard. Checks, each an InputError naming the
// file(s) at fault: every input a shard report; one shard count; every index 0..N-1 exactly once; equal
// options fingerprints (saying which options differ), git commits, SGLang versions and case lists; every case
// of the sweep assigned to exactly one shard; every row of a shard one of its cases; every case with the rows
// the runner writes (missing_rows_of_case: an eager row of each backend of the sweep, a graph row beside each
// eager row not skipped where graph rows are due; else the shard is incomplete: interrupted, to be continued
// with --resume, which uses the same rule).
// `warnings` gets what is allowed but worth knowing (shards on different GPU models or drivers).
ResultSet merge_shard_sets(const std::vector<std::pair<std::string, ResultSet>>& shards,
                           std::vector<std::string>& warnings);

// The command: reads the shards, merges them, writes --out (CSV) and the JSON report, all or nothing
// (AtomicFile; an output that is one of the inputs, by name or inode, is refused before anything is read).
// Returns 0 when every merged row is ok or skipped with no reference failure, 1 otherwise (like run).
int run_merge_command(const MergeOptions& options, std::ostream& out);

}  // namespace attnbench
