// A sweep split across processes: each rank runs a disjoint share of the cases on its own GPU, with no
// communication between ranks; `attnbench merge` (report/shards.hpp) puts the shards back together.
//
// Who says which share: `--shard K/N` (K 0-based, like RANK), else the launcher's environment:
//   torchrun     RANK, WORLD_SIZE, LOCAL_RANK
//   Open MPI     OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK
//   Slurm array  SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT   (sbatch --array=0-7)
//   Slurm step   SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID                  (srun; SLURM_NTASKS marks it)
// checked in this order (the innermost launcher first: torchrun under srun, mpirun inside an allocation); the
// first whose variables are present decides and the others are ignored. A world of one process is no shard.
//
// Which cases: every case gets an estimated cost (case_cost: a pure function of the case and the options, so
// that every rank, on any host, computes the same shares), then greedy longest-processing-time: the costliest
// case first (ties by case id) onto the shard with the least cost so far (ties: the lowest index). Each shard
// runs its cases in sweep order. The largest share is at most total / N + the costliest case (any greedy list
// schedule) and at most 4/3 of the best possible split (LPT's bound).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/shards.hpp"
#include "runner/case.hpp"
#include "runner/plan.hpp"

namespace attnbench {

// A rank's share and where it came from.
struct ShardSpec {
  int index = 0, count = 1;
  std::string source;    // "--shard", "torchrun", "open mpi", "slurm", "slurm array"
  int local_rank = -1;   // the launcher's local rank (the GPU to use), -1 when none (--shard)
  bool sharded() const { return count > 1 || source == "--shard"; }
};

// An environment variable's value, nullopt when unset (std::getenv in the program, a map in tests).
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup process_environment();

// `--shard K/N` (InputError naming --shard).
ShardSpec parse_shard_option(const std::string& text);

// The launcher's rank and world size, nullopt when no launcher's variables are set. A variable that is not a
// decimal integer in range, a rank at or beyond the world size, a local rank at or beyond the world size, a
// launcher's variables set only in part, a Slurm array whose indices are not contiguous (a step), or an array
// of a multi-task step, is InputError naming the variable(s) and what to do.
std::optional<ShardSpec> shard_from_environment(const EnvLookup& env);

// `--shard` when given (the environment is then not read), else the launcher's, else none (count 1, source "").
ShardSpec resolve_shard(const std::string& shard_option, const EnvLookup& env);

// The estimated cost of a case in seconds of an H200-class GPU and its host, a pure function of the case and
// the options: per backend a fixed part (construction, engine, validation step), per timed row the sampling
// (warm-up plus min(--time-budget, --max-samples steps) of a step modelled from the case's FLOPs and bytes),
// per graph row the captures, and once per case the float64 host reference (its FLOPs after the sampling rule
// of runner/validation.cpp, at a fixed rate and parallelism). Only the ratios between cases matter.
double case_cost(const Case& c, const RunPlan& plan, bool validate_only, int num_backends);

// Greedy LPT of `costs` over `n` shards: the shard of each item. `ids` break ties between equal costs.
std::vector<int> assign_shards(const std::vector<double>& costs, const std::vector<std::string>& ids, int n);

// The positions (in `cases`) of shard `spec`'s cases, in order.
std::vector<std::size_t> shard_case_indices(const std::vector<Case>& cases, const RunPlan& plan, bool validate_only,
                                            int num_backends, const ShardSpec& spec);

// "OUT" with ".rankK-of-N" before the extension: results/x.csv -> results/x.rank0-of-2.csv, x -> x.rank0-of-2
// (a dot in a directory name is not an extension).
std::string shard_file_name(const std::string& path, const ShardSpec& spec);

// What a sharded run records in its JSON environment (report/shards.hpp): shard, shard_source,
// sweep_case_count, sweep_case_ids_hash, shard_cases.
std::vector<std::pair<std::string, std::string>> shard_environment(const ShardSpec& spec,
                                                                   const std::vector<Case>& all_cases,
                                                                   const std::vector<std::size_t>& indices);

// "rank K/N" for progress lines and messages.
std::string shard_label(const ShardSpec& spec);

// The CUDA device a rank uses when --device does not name one: the launcher's local rank when it is below the
// number of visible GPUs; GPU 0 when one GPU is visible and CUDA_VISIBLE_DEVICES is set (the launcher bound one
// GPU to each rank, as Slurm's --gpus-per-task does); else InputError naming the local rank variable.
int launcher_cuda_ordinal(const ShardSpec& spec, int visible_gpus, const EnvLookup& env);

// The name of the local rank variable of `source` ("LOCAL_RANK", ...).
std::string local_rank_variable(const std::string& source);

// The CUDA ordinal a rank runs on: --device cuda:N when it names one, else the launcher's local rank
// (launcher_cuda_ordinal), else 0; InputError "--device cuda:N: only M GPU(s) visible ..." when out of range.
// `visible_gpus`: the CUDA devices this process sees (device/device_factory.hpp: cuda_device_count()).
int rank_cuda_ordinal(const std::string& device_option, const ShardSpec& spec, int visible_gpus, const EnvLookup& env);

// What one rank of a sweep runs and where it writes: `cases` are the sweep's (expanded, --filter / --case-id
// applied); a sharded rank keeps its share and writes OUT / JSON with .rankK-of-N. A sharded run needs an
// explicit --out (the default's timestamp differs between ranks) and a file, not "-": InputError naming --out,
// --json or --shard.
struct RankPlan {
  ShardSpec spec;
  std::vector<Case> cases;  // this rank's, in sweep order
  std::string out, json;    // --out / --json for this rank (unchanged when not sharded)
  std::vector<std::pair<std::string, std::string>> environment;  // shard_environment(), empty when not sharded
  std::string label;  // shard_label(), "" when not sharded
};
// `listing`: --list-cases (nothing is written, so no file checks).
RankPlan plan_rank(const ShardSpec& spec, std::vector<Case> cases, const RunPlan& plan, bool validate_only,
                   int num_backends, const std::string& out, const std::string& json, bool listing = false);

}  // namespace attnbench
