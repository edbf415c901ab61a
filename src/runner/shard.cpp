#include "runner/shard.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numeric>

#include "core/errors.hpp"
#include "core/files.hpp"
#include "device/device_factory.hpp"
#include "runner/case_work.hpp"

namespace attnbench {

EnvLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

ShardSpec parse_shard_option(const std::string& text) {
  const ShardIndex s = parse_shard_text(text, "--shard");
  ShardSpec spec;
  spec.index = s.index;
  spec.count = s.count;
  spec.source = "--shard";
  return spec;
}

namespace {

// A launcher variable: a decimal integer in [0, kMaxShards] (no sign, no leading zero, no blanks).
int env_int(const EnvLookup& env, const std::string& name, const std::string& launcher) {
  const std::optional<std::string> v = env(name);
  const std::string s = v.value_or("");
  bool digits = !s.empty() && s.size() <= 6 && (s.size() == 1 || s[0] != '0');
  for (const char c : s) digits = digits && c >= '0' && c <= '9';
  if (!digits || std::stoi(s) > kMaxShards)
    throw InputError(name + "='" + printable(s) + "' (" + launcher + "): not a decimal integer from 0 to " +
                     std::to_string(kMaxShards) + "; fix the launch, or give --shard K/N");
  return std::stoi(s);
}

struct Launcher {
  const char* name;
  const char* rank;
  const char* size;
  const char* local;
};

// Innermost first: torchrun under srun, mpirun inside a Slurm allocation.
constexpr Launcher kLaunchers[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {"open mpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
};

ShardSpec from_launcher(const Launcher& l, const EnvLookup& env) {
  for (const char* var : {l.rank, l.size, l.local})
    if (!env(var))
      throw InputError(std::string(var) + " is not set, but " + (env(l.rank) ? l.rank : l.size) + " is (" + l.name +
                       "): a launcher sets all of " + l.rank + ", " + l.size + " and " + l.local +
                       "; set them, unset them, or give --shard K/N");
  ShardSpec s;
  s.source = l.name;
  s.index = env_int(env, l.rank, l.name);
  s.count = env_int(env, l.size, l.name);
  s.local_rank = env_int(env, l.local, l.name);
  if (s.count < 1)
    throw InputError(std::string(l.size) + "=0 (" + l.name + "): a world of no process; fix the launch, or give --shard K/N");
  if (s.index >= s.count)
    throw InputError(std::string(l.rank) + "=" + std::to_string(s.index) + " is not below " + l.size + "=" +
                     std::to_string(s.count) + " (" + l.name + "); fix the launch, or give --shard K/N");
  if (s.local_rank >= s.count)
    throw InputError(std::string(l.local) + "=" + std::to_string(s.local_rank) + " is not below " + l.size + "=" +
                     std::to_string(s.count) + " (" + l.name + "); fix the launch, or give --shard K/N");
  if (s.local_rank > s.index)
    throw InputError(std::string(l.local) + "=" + std::to_string(s.local_rank) + " is above " + l.rank + "=" +
                     std::to_string(s.index) + " (" + l.name + "): a rank's local rank never is; fix the launch, or give --shard K/N");
  return s;
}

// sbatch --array=A-B: one job per index, each its own share. Only contiguous indices (no step, no list).
ShardSpec from_slurm_array(const EnvLookup& env) {
  const std::string launcher = "slurm array";
  for (const char* var : {"SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX"})
    if (!env(var))
      throw InputError(std::string(var) + " is not set, but SLURM_ARRAY_TASK_ID is (slurm array); give --shard K/N");
  const int id = env_int(env, "SLURM_ARRAY_TASK_ID", launcher);
  const int count = env_int(env, "SLURM_ARRAY_TASK_COUNT", launcher);
  const int lo = env_int(env, "SLURM_ARRAY_TASK_MIN", launcher);
  const int hi = env_int(env, "SLURM_ARRAY_TASK_MAX", launcher);
  if (const auto step = env("SLURM_ARRAY_TASK_STEP"); step && *step != "1")
    throw InputError("SLURM_ARRAY_TASK_STEP=" + printable(*step) +
                     " (slurm array): the array's indices are not contiguous; use --array=0-" +
                     std::to_string(count - 1) + ", or give --shard K/N");
  if (count < 1 || hi < lo || hi - lo + 1 != count)
    throw InputError("SLURM_ARRAY_TASK_COUNT=" + std::to_string(count) + " is not SLURM_ARRAY_TASK_MAX - SLURM_ARRAY_TASK_MIN + 1 (" +
                     std::to_string(hi) + " - " + std::to_string(lo) +
                     " + 1) (slurm array): the array's indices are not contiguous; use --array=0-" +
                     std::to_string(std::max(count, 1) - 1) + ", or give --shard K/N");
  if (id < lo || id > hi)
    throw InputError("SLURM_ARRAY_TASK_ID=" + std::to_string(id) + " is outside SLURM_ARRAY_TASK_MIN..MAX (" +
                     std::to_string(lo) + ".." + std::to_string(hi) + ") (slurm array); give --shard K/N");
  if (const auto ntasks = env("SLURM_NTASKS"); ntasks && *ntasks != "1")
    throw InputError("SLURM_NTASKS=" + printable(*ntasks) + " inside a job array (SLURM_ARRAY_TASK_ID=" +
                     std::to_string(id) + "): either one task per array job, or one job of many tasks; or give --shard K/N");
  ShardSpec s;
  s.source = launcher;
  s.index = id - lo;
  s.count = count;
  s.local_rank = 0;  // each array job gets its own GPU(s)
  return s;
}

}  // namespace

std::optional<ShardSpec> shard_from_environment(const EnvLookup& env) {
  for (const Launcher& l : kLaunchers) {
    const bool slurm = std::string(l.name) == "slurm";
    // A job array's batch step (SLURM_NTASKS unset or 1) is the array's; more tasks is a conflict (there).
    if (slurm && env("SLURM_ARRAY_TASK_ID")) return from_slurm_array(env);
    // Slurm: srun sets SLURM_NTASKS; a batch script's SLURM_PROCID alone is no launch.
    if (slurm ? env(l.size).has_value() : env(l.rank) || env(l.size)) return from_launcher(l, env);
  }
  return std::nullopt;
}

ShardSpec resolve_shard(const std::string& shard_option, const EnvLookup& env) {
  if (!shard_option.empty()) return parse_shard_option(shard_option);
  if (std::optional<ShardSpec> s = shard_from_environment(env)) return *s;
  return {};
}

namespace {

// The model behind case_cost: an H200-class GPU for the steps, one host thread per reference (range, query head).
constexpr double kGpuFlops = 400e12;          // dense bf16 tensor-core FLOP/s reached by attention
constexpr double kGpuBytes = 4e12;            // bytes/s (the H200's measured copy bandwidth is 4.2e12)
constexpr double kLayerOverheadS = 8e-6;      // launches per layer
constexpr double kStepOverheadS = 30e-6;      // init_forward_metadata
constexpr double kBackendFixedS = 0.15;       // engine, construction, validation step, reading back outputs
constexpr double kGraphRowS = 0.3;            // init_cuda_graph_state + SGLang's 36 captures (+ replays' checks)
constexpr double kGraphRowNeededOnlyS = 0.03;  // --capture-needed-only: one capture
constexpr double kReferenceFlopsPerThread = 0.3e9;  // float64 reference, one request range per thread
constexpr int kReferenceThreads = 8;          // fixed (not this host's): every rank computes the same costs

// The float64 reference's FLOPs on one validated layer and how many request ranges share them, after
// runner/validation.cpp's sampling rule (reference_layer: full when within the budget, else the first 16 and
// last 48 rows of each request, else every k-th request).
std::pair<double, int> reference_work(const Case& c, double budget) {
  const double hd = 4.0 * c.model.num_qo_heads() * c.model.head_dim;
  double full = 0;
  for (int i = 0; i < c.batch; ++i) full += hd * c.new_lens[i] * (c.prefix_lens[i] + c.new_lens[i]);
  if (full <= budget) return {full, c.batch};
  constexpr int kRows = 64;
  double sampled = 0;
  int ranges = 0;
  for (int i = 0; i < c.batch; ++i) {
    const int n = c.new_lens[i];
    sampled += hd * std::min(n, kRows) * (c.prefix_lens[i] + n);
    ranges += n <= kRows ? 1 : 2;
  }
  if (sampled <= budget) return {sampled, ranges};
  const double step = std::ceil(sampled / budget);
  const int kept = static_cast<int>(std::ceil(c.batch / step)) + 1;
  const double share = std::min(1.0, kept / static_cast<double>(c.batch));
  return {sampled * share, std::max(1, static_cast<int>(std::lround(ranges * share)))};
}

}  // namespace

double case_cost(const Case& c, const RunPlan& plan, bool validate_only, int num_backends) {
  const StepWork w = step_work(c);
  const double step_s = std::max(w.flops / kGpuFlops, w.bytes / kGpuBytes) +
                        c.model.num_layers * kLayerOverheadS + kStepOverheadS;
  double per_backend = kBackendFixedS;
  if (!validate_only) {
    const SamplingPolicy& p = plan.sampling;
    const double sampling = p.warmup * step_s + std::min(p.time_budget_s, p.max_samples * step_s);
    const bool graph_mode = c.mode != ForwardMode::extend && !c.server.disable_cuda_graph;
    for (const std::string& t : plan.timing) {
      if (t == "eager") per_backend += sampling;
      if (t == "graph" && graph_mode)
        per_backend += sampling + (plan.capture_needed_only ? kGraphRowNeededOnlyS : kGraphRowS);
    }
  }
  const auto [ref_flops, ranges] = reference_work(c, plan.reference_flop_budget);
  const int layers = std::min(c.model.num_layers, 2);  // validated_layers: the first and the last
  const double reference_s =
      layers * ref_flops /
      (kReferenceFlopsPerThread * std::clamp(ranges * c.model.num_qo_heads(), 1, kReferenceThreads));
  return num_backends * per_backend + reference_s;
}

std::vector<int> assign_shards(const std::vector<double>& costs, const std::vector<std::string>& ids, int n) {
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (costs[a] != costs[b]) return costs[a] > costs[b];
    if (ids[a] != ids[b]) return ids[a] < ids[b];
    return a < b;
  });
  std::vector<double> load(static_cast<std::size_t>(std::max(n, 1)), 0.0);
  std::vector<int> shard(costs.size(), 0);
  for (const std::size_t i : order) {
    const auto least = std::min_element(load.begin(), load.end());  // the first of equal loads: lowest index
    shard[i] = static_cast<int>(least - load.begin());
    *least += costs[i];
  }
  return shard;
}

std::vector<std::size_t> shard_case_indices(const std::vector<Case>& cases, const RunPlan& plan, bool validate_only,
                                            int num_backends, const ShardSpec& spec) {
  std::vector<double> costs;
  std::vector<std::string> ids;
  for (const Case& c : cases) {
    costs.push_back(case_cost(c, plan, validate_only, num_backends));
    ids.push_back(c.id);
  }
  const std::vector<int> shard = assign_shards(costs, ids, spec.count);
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (shard[i] == spec.index) out.push_back(i);
  return out;
}

std::string shard_file_name(const std::string& path, const ShardSpec& spec) {
  const std::string tag = ".rank" + std::to_string(spec.index) + "-of-" + std::to_string(spec.count);
  const std::size_t slash = path.find_last_of('/');
  const std::size_t name = slash == std::string::npos ? 0 : slash + 1;
  const std::size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || dot <= name) return path + tag;  // no extension (or a dot file: ".x")
  return path.substr(0, dot) + tag + path.substr(dot);
}

std::vector<std::pair<std::string, std::string>> shard_environment(const ShardSpec& spec,
                                                                   const std::vector<Case>& all_cases,
                                                                   const std::vector<std::size_t>& indices) {
  std::vector<std::string> ids;
  for (const Case& c : all_cases) ids.push_back(c.id);
  nlohmann::json mine = nlohmann::json::array();
  for (const std::size_t i : indices) mine.push_back(nlohmann::json::array({i, all_cases[i].id}));
  return {{kShardKey, std::to_string(spec.index) + "/" + std::to_string(spec.count)},
          {kShardSourceKey, spec.source},
          {kSweepCaseCountKey, std::to_string(all_cases.size())},
          {kSweepCaseIdsHashKey, case_ids_hash(ids)},
          {kShardCasesKey, mine.dump()}};
}

std::string shard_label(const ShardSpec& spec) {
  return "rank " + std::to_string(spec.index) + "/" + std::to_string(spec.count);
}

std::string local_rank_variable(const std::string& source) {
  for (const Launcher& l : kLaunchers)
    if (source == l.name) return l.local;
  if (source == "slurm array") return "SLURM_ARRAY_TASK_ID";
  return "--shard";
}

int launcher_cuda_ordinal(const ShardSpec& spec, int visible_gpus, const EnvLookup& env) {
  const int local = std::max(spec.local_rank, 0);
  if (local < visible_gpus) return local;
  const std::optional<std::string> cvd = env("CUDA_VISIBLE_DEVICES");
  if (visible_gpus == 1 && cvd && !cvd->empty()) return 0;  // the launcher bound one GPU to this rank
  throw InputError(local_rank_variable(spec.source) + "=" + std::to_string(local) + " (" + spec.source + "): only " +
                   std::to_string(visible_gpus) + " GPU(s) visible" +
                   (cvd ? " (CUDA_VISIBLE_DEVICES=" + printable(*cvd) + ")" : std::string()) +
                   ", so this rank has none of its own; start at most one rank per GPU, or give --device cuda:N");
}

int rank_cuda_ordinal(const std::string& device_option, const ShardSpec& spec, int visible_gpus, const EnvLookup& env) {
  const int named = parse_device_ordinal(device_option);
  if (named >= 0) {
    check_cuda_ordinal(named, visible_gpus, "--device " + device_option);
    return named;
  }
  if (spec.local_rank >= 0) return launcher_cuda_ordinal(spec, visible_gpus, env);
  return 0;
}

RankPlan plan_rank(const ShardSpec& spec, std::vector<Case> cases, const RunPlan& plan, bool validate_only,
                   int num_backends, const std::string& out, const std::string& json, bool listing) {
  RankPlan r;
  r.spec = spec;
  r.out = out;
  r.json = json;
  if (!spec.sharded()) {
    r.cases = std::move(cases);
    return r;
  }
  const std::string who = spec.source == "--shard" ? "--shard" : "a " + spec.source + " launch (" + shard_label(spec) + ")";
  if (out.empty() && !listing)
    throw InputError("--out: " + who + " needs --out FILE; each rank writes FILE with ." +
                     shard_file_name("", spec).substr(1) + " before the extension, and `attnbench merge` joins them");
  if (!listing && (out == "-" || json == "-"))
    throw InputError(std::string(out == "-" ? "--out" : "--json") + " -: " + who +
                     " writes files, not stdout (attnbench merge --out - joins them onto stdout)");
  const std::vector<std::size_t> mine = shard_case_indices(cases, plan, validate_only, num_backends, spec);
  r.environment = shard_environment(spec, cases, mine);
  for (const std::size_t i : mine) r.cases.push_back(cases[i]);
  if (!out.empty()) r.out = shard_file_name(out, spec);
  if (!json.empty()) r.json = shard_file_name(json, spec);
  r.label = shard_label(spec);
  return r;
}

}  // namespace attnbench
