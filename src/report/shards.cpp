#include "report/shards.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "core/errors.hpp"
#include "core/files.hpp"

namespace attnbench {

std::string case_ids_hash(const std::vector<std::string>& ids) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a, 64 bit
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) {
      h ^= static_cast<unsigned char>('\n');
      h *= 1099511628211ull;
    }
    for (const char c : ids[i]) {
      h ^= static_cast<unsigned char>(c);
      h *= 1099511628211ull;
    }
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "fnv1a64:%016llx", static_cast<unsigned long long>(h));
  return buf;
}

namespace {

// A decimal integer without sign or leading zero, at most `max`; nullopt otherwise.
std::optional<int> small_decimal(const std::string& s, int max) {
  if (s.empty() || s.size() > 9 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  for (const char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  const long v = std::stol(s);
  if (v > max) return std::nullopt;
  return static_cast<int>(v);
}

}  // namespace

ShardIndex parse_shard_text(const std::string& text, const std::string& what) {
  const std::size_t slash = text.find('/');
  const auto bad = [&](const std::string& why) {
    return InputError(what + ": '" + printable(text) + "' " + why);
  };
  if (slash == std::string::npos) throw bad("is not K/N (e.g. 0/4: the first of four shards; K counts from 0)");
  const std::optional<int> k = small_decimal(text.substr(0, slash), kMaxShards);
  const std::optional<int> n = small_decimal(text.substr(slash + 1), kMaxShards);
  if (!k || !n) throw bad("is not K/N with K and N decimal integers from 0 to " + std::to_string(kMaxShards));
  if (*n < 1) throw bad("has N = 0: there must be at least one shard");
  if (*k >= *n) throw bad("has K >= N: K counts from 0, so the shards of N = " + std::to_string(*n) + " are 0/" +
                          std::to_string(*n) + " to " + std::to_string(*n - 1) + "/" + std::to_string(*n));
  return {*k, *n};
}

namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

std::optional<std::string> env_get(const Env& env, const std::string& key) {
  for (const auto& [k, v] : env)
    if (k == key) return v;
  return std::nullopt;
}

// "--batch 1 (A: 2), ..." between two options texts; "" when they cannot be told apart.
std::string options_diff(const std::string& a, const std::string& b) {
  std::map<std::string, std::string> before;
  for (const auto& [k, v] : parse_options_text(a)) before[k] = v;
  std::string diff;
  const auto shown = [](const std::string& v) { return v.empty() ? std::string("(unset)") : printable(v); };
  for (const auto& [k, v] : parse_options_text(b)) {
    const auto it = before.find(k);
    const std::string was = it == before.end() ? std::string("(not recorded)") : shown(it->second);
    if (it == before.end() || it->second != v) diff += (diff.empty() ? "" : ", ") + printable(k) + " " + shown(v) + " (vs " + was + ")";
    if (it != before.end()) before.erase(it);
  }
  for (const auto& [k, v] : before) diff += (diff.empty() ? "" : ", ") + printable(k) + " not recorded (vs " + shown(v) + ")";
  return diff;
}

struct Shard {
  std::string path;
  const ResultSet* set = nullptr;
  ShardIndex index;
  std::string name() const { return printable(path) + " (shard " + std::to_string(index.index) + "/" + std::to_string(index.count) + ")"; }
};

std::string required(const Shard& s, const std::string& key) {
  const std::optional<std::string> v = env_get(s.set->environment, key);
  if (!v)
    throw InputError("merge: " + s.name() + " has no '" + key +
                     "' in its environment (written by an older attnbench?): cannot tell whether it belongs to the sweep");
  return *v;
}

// The --shard tokens of a shard's command line, removed: the command of the whole sweep.
std::string without_shard(const std::string& command) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < command.size()) {
    const std::size_t j = command.find(' ', i);
    words.push_back(command.substr(i, j == std::string::npos ? std::string::npos : j - i));
    if (j == std::string::npos) break;
    i = j + 1;
  }
  std::string out;
  for (std::size_t w = 0; w < words.size(); ++w) {
    if (words[w] == "--shard") {
      ++w;
      continue;
    }
    if (words[w].rfind("--shard=", 0) == 0) continue;
    out += (out.empty() ? "" : " ") + words[w];
  }
  return out;
}

std::string device_of(const Env& env) {
  std::string d = env_get(env, "gpu_name").value_or("cpu");
  if (auto u = env_get(env, "gpu_uuid")) d += " " + *u;
  if (auto o = env_get(env, "device_ordinal")) d += " (cuda:" + *o + ")";
  return d;
}

}  // namespace

ResultSet merge_shard_sets(const std::vector<std::pair<std::string, ResultSet>>& inputs,
                           std::vector<std::string>& warnings) {
  if (inputs.empty()) throw InputError("merge: no shards given");
  std::vector<Shard> shards;
  for (const auto& [path, set] : inputs) {
    Shard s;
    s.path = path;
    s.set = &set;
    const std::optional<std::string> spec = env_get(set.environment, kShardKey);
    if (!spec)
      throw InputError("merge: " + printable(path) + " is not a shard: its environment has no '" + kShardKey +
                       "' (a run without --shard or a launcher, a merged file, or a CSV: give each rank's JSON report)");
    s.index = parse_shard_text(*spec, "merge: " + printable(path) + ": shard");
    shards.push_back(s);
  }
  // One shard count, every index once.
  const int n = shards.front().index.count;
  std::map<int, const Shard*> by_index;
  for (const Shard& s : shards) {
    if (s.index.count != n)
      throw InputError("merge: " + s.name() + " is of another split than " + shards.front().name() +
                       ": the shards of one sweep share N");
    if (const auto it = by_index.find(s.index.index); it != by_index.end())
      throw InputError("merge: shard " + std::to_string(s.index.index) + "/" + std::to_string(n) + " is given twice: " +
                       printable(it->second->path) + " and " + printable(s.path));
    by_index[s.index.index] = &s;
  }
  std::string missing;
  int missing_count = 0;
  for (int k = 0; k < n; ++k)
    if (!by_index.count(k)) {
      if (++missing_count <= 8) missing += (missing.empty() ? "" : ", ") + std::to_string(k) + "/" + std::to_string(n);
    }
  if (missing_count > 0)
    throw InputError("merge: " + std::to_string(missing_count) + " of " + std::to_string(n) + " shard(s) missing: " + missing +
                     (missing_count > 8 ? ", ..." : "") + " (given: " + std::to_string(shards.size()) +
                     "); give every rank's JSON report");
  std::vector<const Shard*> ordered;
  for (const auto& [k, s] : by_index) ordered.push_back(s);
  const Shard& first = *ordered.front();

  // The same sweep: options, build, modelled SGLang, case list.
  for (const Shard* s : ordered) {
    const std::string fp = required(*s, "options_fingerprint");
    if (fp != required(first, "options_fingerprint")) {
      std::string diff = options_diff(env_get(first.set->environment, "options").value_or(""),
                                      env_get(s->set->environment, "options").value_or(""));
      if (diff.empty()) diff = "the fingerprints " + printable(fp) + " and " + printable(required(first, "options_fingerprint")) + " differ";
      throw InputError("merge: " + s->name() + " was run with other options than " + first.name() + ": " + diff);
    }
    // The options text is what the fingerprint hashes (runner/sweep_options.cpp options_fingerprint: "v1:" and the
    // 64-bit FNV-1a of the text, the hash case_ids_hash computes for a one-element list): a text edited under an
    // untouched fingerprint would make the merged report claim options its rows were not run with.
    if (fp != "v1:" + case_ids_hash({required(*s, "options")}).substr(std::strlen("fnv1a64:")))
      throw InputError("merge: " + s->name() + ": its options text does not hash to its options_fingerprint " +
                       printable(fp) + " (edited?)");
    for (const char* key : {"git_commit", "sglang_version", "arch"}) {
      const std::string a = required(first, key), b = required(*s, key);
      if (a != b)
        throw InputError("merge: " + s->name() + " has " + key + " " + printable(b) + ", " + first.name() + " " +
                         printable(a) + ": the shards of one sweep come from one attnbench build, one SGLang profile "
                         "and one modelled architecture");
    }
    // Its rows model the release its environment names (a row of another release is another measurement).
    for (const ResultRow& r : s->set->rows)
      if (!r.sglang_version.empty() && r.sglang_version != required(*s, "sglang_version"))
        throw InputError("merge: " + s->name() + " has a row (" + printable(sample_key(r)) + ") of SGLang " +
                         printable(r.sglang_version) + " under an environment of SGLang " +
                         printable(required(*s, "sglang_version")));
    for (const char* key : {kSweepCaseCountKey, kSweepCaseIdsHashKey}) {
      const std::string a = required(first, key), b = required(*s, key);
      if (a != b)
        throw InputError("merge: " + s->name() + " has " + key + " " + printable(b) + ", " + first.name() + " " +
                         printable(a) + ": they selected different case lists (other --filter / --case-id, or other "
                         "model files or traces on their hosts)");
    }
    for (const char* key : {"gpu_name", "driver_version"}) {
      const auto a = env_get(first.set->environment, key), b = env_get(s->set->environment, key);
      if (a != b)
        warnings.push_back(s->name() + " ran with " + key + " " + printable(b.value_or("(none)")) + ", " + first.name() +
                           " with " + printable(a.value_or("(none)")) + ": their timings are not of one machine");
    }
  }
  const std::optional<int> total = small_decimal(required(first, kSweepCaseCountKey), 1 << 30);
  if (!total) throw InputError("merge: " + first.name() + ": " + kSweepCaseCountKey + " is not a count");

  // Every case of the sweep in exactly one shard.
  std::vector<std::string> ids(static_cast<std::size_t>(*total));
  std::vector<const Shard*> owner(ids.size(), nullptr);
  std::map<const Shard*, std::map<std::string, std::size_t>> assigned;  // shard -> case id -> index in the sweep
  for (const Shard* s : ordered) {
    const std::string text = required(*s, kShardCasesKey);
    check_json_nesting(text, kMaxJsonNesting, "merge: " + s->name() + ": " + kShardCasesKey);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const std::exception& e) {
      throw InputError("merge: " + s->name() + ": " + kShardCasesKey + " is not JSON (" + printable(e.what()) + ")");
    }
    if (!j.is_array()) throw InputError("merge: " + s->name() + ": " + kShardCasesKey + " is not a list");
    for (const auto& e : j) {
      if (!e.is_array() || e.size() != 2 || !e[0].is_number_unsigned() || !e[1].is_string() ||
          e[0].get<std::uint64_t>() >= ids.size())
        throw InputError("merge: " + s->name() + ": " + kShardCasesKey + " holds " + printable(e.dump()) +
                         ", not [index below " + std::to_string(ids.size()) + ", \"case id\"]");
      const std::size_t i = e[0].get<std::size_t>();
      const std::string id = e[1].get<std::string>();
      if (owner[i])
        throw InputError("merge: case " + printable(id) + " is in two shards: " + owner[i]->name() + " and " + s->name());
      owner[i] = s;
      ids[i] = id;
      assigned[s][id] = i;
    }
  }
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (!owner[i])
      throw InputError("merge: case " + std::to_string(i) + " of the sweep's " + std::to_string(ids.size()) +
                       " is in no shard: the shards do not cover the sweep");
  if (case_ids_hash(ids) != required(first, kSweepCaseIdsHashKey))
    throw InputError("merge: the shards' cases do not add up to the sweep's case list (" + std::string(kSweepCaseIdsHashKey) +
                     " differs): were the shards written by this attnbench, with one command?");

  // Every row one of its shard's cases; every case with the rows the runner writes (missing_rows_of_case,
  // results_io.hpp), graph rows due where --timing names graph and the shard ran on a GPU (gpu_name).
  std::vector<std::string> backends;
  bool graph_timing = false;
  const auto split = [](const std::string& v) {
    std::vector<std::string> items;
    std::size_t b = 0;
    while (b <= v.size()) {
      const std::size_t e = std::min(v.find(',', b), v.size());
      if (e > b) items.push_back(v.substr(b, e - b));
      b = e + 1;
    }
    return items;
  };
  for (const auto& [k, v] : parse_options_text(required(first, "options"))) {
    if (k == "--backend") backends = split(v);
    if (k == "--timing") {
      const std::vector<std::string> t = split(v);
      graph_timing = std::find(t.begin(), t.end(), "graph") != t.end();
    }
  }
  if (backends.empty()) throw InputError("merge: " + first.name() + ": its options name no --backend");
  std::vector<std::vector<const ResultRow*>> rows_of(ids.size());
  for (const Shard* s : ordered) {
    const auto& mine = assigned[s];
    for (const ResultRow& r : s->set->rows) {
      const auto it = mine.find(r.case_id);
      if (it == mine.end())
        throw InputError("merge: " + s->name() + " has rows of case " + printable(r.case_id) +
                         ", which is not one of its cases");
      rows_of[it->second].push_back(&r);
    }
    const bool graphs = graph_timing && env_get(s->set->environment, "gpu_name").has_value();
    int incomplete = 0;
    std::string example;
    for (const auto& [id, i] : mine) {
      const std::vector<std::string> lack = missing_rows_of_case(rows_of[i], backends, graphs);
      if (!lack.empty() && incomplete++ == 0) example = id + " has " + lack.front();
    }
    if (incomplete > 0)
      throw InputError("merge: " + s->name() + " is incomplete: " + std::to_string(incomplete) + " of its " +
                       std::to_string(mine.size()) + " case(s) lack rows (" + printable(example) +
                       "); was it interrupted? continue that rank with the same command and --resume, then merge again");
  }

  ResultSet merged;
  for (std::size_t i = 0; i < ids.size(); ++i)
    for (const ResultRow* r : rows_of[i]) {
      merged.rows.push_back(*r);
      if (const auto it = owner[i]->set->samples.find(sample_key(*r)); it != owner[i]->set->samples.end())
        merged.samples[it->first] = it->second;
    }
  check_unique_keys(merged.rows, "merge");
  std::string devices;
  for (const Shard* s : ordered)
    devices += (devices.empty() ? "" : "; ") + std::to_string(s->index.index) + "/" + std::to_string(n) + ": " +
               device_of(s->set->environment);
  for (const auto& [k, v] : first.set->environment)
    if (k != kShardKey && k != kShardSourceKey && k != kShardCasesKey && k != "wall_seconds")
      merged.environment.emplace_back(k, v);
  // The shards ran side by side: the sweep's wall time is the longest shard's (when every shard recorded one).
  double wall = 0.0;
  bool every_wall = true;
  for (const Shard* s : ordered) {
    const std::optional<std::string> w = env_get(s->set->environment, "wall_seconds");
    every_wall = every_wall && w.has_value();
    if (w) wall = std::max(wall, std::atof(w->c_str()));
  }
  if (every_wall) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", wall);
    merged.environment.emplace_back("wall_seconds", b);
  }
  merged.environment.emplace_back(kMergedShardsKey, std::to_string(n));
  merged.environment.emplace_back(kMergedDevicesKey, devices);
  merged.command = without_shard(first.set->command);
  return merged;
}

namespace {

// Where the JSON report of a results CSV lives by default: .csv -> .json, else + ".json" (as run's --json).
std::string json_beside(const std::string& csv) {
  if (csv.size() > 4 && csv.compare(csv.size() - 4, 4, ".csv") == 0) return csv.substr(0, csv.size() - 4) + ".json";
  return csv + ".json";
}

}  // namespace

int run_merge_command(const MergeOptions& o, std::ostream& out) {
  if (o.shards.empty()) throw InputError("merge: give the shards' JSON reports (OUT.rankK-of-N.json ...)");
  if (o.out.empty()) throw InputError("--out: merge needs --out FILE (or --out - for stdout)");
  const std::string csv = o.out;
  const std::string json = !o.json.empty() ? o.json : (csv == "-" ? std::string() : json_beside(csv));
  if (csv == "-" && json == "-") throw InputError("--out - and --json -: only one of them can be stdout");
  // The inputs: each JSON report read, and the CSV beside it (a shard's other half: never overwritten either).
  std::vector<std::pair<std::string, std::string>> inputs;
  std::vector<std::string> reports;
  for (const std::string& s : o.shards) {
    std::string report = s;
    if (s.size() > 4 && s.compare(s.size() - 4, 4, ".csv") == 0) {
      report = json_beside(s);
      std::error_code ec;
      if (!std::filesystem::exists(report, ec))
        throw InputError("merge: " + printable(s) + ": its JSON report " + printable(report) +
                         " is missing (merge reads the JSON: it records the shard and the sweep's case list)");
    }
    reports.push_back(report);
    inputs.push_back({"SHARDS", report});
    inputs.push_back({"SHARDS", s});
    inputs.push_back({"SHARDS", report.size() > 5 && report.compare(report.size() - 5, 5, ".json") == 0
                                    ? report.substr(0, report.size() - 5) + ".csv"
                                    : std::string()});
  }
  // Both outputs refuse to be an input (exit 2) before anything is read, and are opened before either is
  // published: a path that cannot be written is bad input, and nothing is left half-written.
  OutputTarget csv_out(csv, out, inputs, "--out");
  std::optional<OutputTarget> json_out;
  if (!json.empty()) json_out.emplace(json, out, inputs, "--json");
  if (json_out && !json_out->is_stdout() && !csv_out.is_stdout() &&
      (json == csv || (file_id(json) && file_id(json) == file_id(csv))))
    throw InputError("--json: '" + printable(json) + "' is the --out file");
  std::vector<std::pair<std::string, ResultSet>> sets;
  for (const std::string& r : reports) sets.emplace_back(r, load_result_set(r));
  std::vector<std::string> warnings;
  const ResultSet merged = merge_shard_sets(sets, warnings);
  for (const std::string& w : warnings) std::cerr << "attnbench merge: warning: " << w << "\n";

  std::ostream& cs = csv_out.stream();
  if (json_out) json_out->stream();
  cs << results_csv_header() << "\n";
  for (const ResultRow& r : merged.rows) cs << results_csv_line(r) << "\n";
  if (json_out) write_results_json(json_out->stream(), merged.environment, merged.command, merged.rows);
  csv_out.finish();
  if (json_out) json_out->finish();

  int ok = 0, skipped = 0, bad = 0;
  std::set<std::string> cases;
  for (const ResultRow& r : merged.rows) {
    cases.insert(r.case_id);
    if (r.status == RowStatus::ok) ++ok;
    if (r.status == RowStatus::skipped) ++skipped;
    if (row_failed(r)) ++bad;
  }
  std::cerr << "attnbench merge: " << sets.size() << " shard(s), " << cases.size() << " case(s), " << merged.rows.size()
            << " rows: " << ok << " ok, " << skipped << " skipped, " << bad
            << " failed (failed, oom or a reference failure) -> " << (csv == "-" ? std::string("stdout") : printable(csv))
            << " (" << (json.empty() ? std::string("no JSON") : json == "-" ? std::string("stdout") : printable(json)) << ")\n";
  return bad == 0 ? 0 : 1;
}

}  // namespace attnbench
