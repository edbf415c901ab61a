#include "app/cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <sstream>

#include "app/config_toml.hpp"
#include "core/errors.hpp"
#include "core/files.hpp"
#include "core/integer_text.hpp"
#include "core/omp_env.hpp"
#include "core/version.hpp"
#include "device/device_factory.hpp"

namespace attnbench {

namespace {

bool is_subcommand(const std::string& name) {
  return std::find(kSubcommands.begin(), kSubcommands.end(), name) != kSubcommands.end();
}

// Integers in decimal only, and 64-bit ones in range (core/integer_text.hpp: CLI11 2.1.2 reads "0100" as octal
// and clamps what overflows); no sign for options that are never negative ("-1" would wrap to 2^64 - 1 in an
// unsigned option). Narrower integers CLI11 range-checks itself.
const CLI::Validator kDecimal([](std::string& s) { return decimal_integer_problem(s); }, "DECIMAL", "decimal");
const CLI::Validator kUnsigned([](std::string& s) { return negative_integer_problem(s); }, "UNSIGNED", "unsigned");
CLI::Validator in_range(bool is_unsigned) {  // runs after kDecimal
  return CLI::Validator([is_unsigned](std::string& s) { return integer_range_problem(s, is_unsigned); }, "RANGE",
                        "in range");
}

// A floating-point value as written: decimal digits with an optional '.', '-' and exponent (std::from_chars,
// general format), the whole text, finite. CLI11 2.1.2 converts with strtold, which takes hexadecimal ("0x10"
// is 16), leading blanks (" 7" is 7), infinities, and an empty text as 0 ('' gave --target-spread 0 and
// "--zipf-s ... got 0.000000"); the same rules as the integer options (no blanks, no '+', decimal only).
std::string decimal_real_problem(const std::string& s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) return "'" + s + "' is beyond the range of a double";
  if (ec != std::errc() || end != s.data() + s.size())
    return "'" + s + "' is not a number (decimal: digits, an optional '-', '.' and exponent)";
  if (!std::isfinite(v)) return "'" + s + "' is not a finite number";
  return {};
}
const CLI::Validator kDecimalReal([](std::string& s) { return decimal_real_problem(s); }, "REAL", "decimal number");

// Every floating-point option of `app` (CLI11 names their type FLOAT) accepts a decimal number only.
void decimal_reals_only(CLI::App* app) {
  for (CLI::Option* opt : app->get_options())
    if (opt->get_type_name().find("FLOAT") != std::string::npos) opt->check(kDecimalReal);
}

// Every 64-bit-capable integer option of `app` is checked for range (in_range).
void integers_in_range(CLI::App* app) {
  for (CLI::Option* opt : app->get_options()) {
    const std::string t = opt->get_type_name();
    if (t.find("UINT") != std::string::npos)
      opt->check(in_range(true));
    else if (t.find("INT") != std::string::npos)
      opt->check(in_range(false));
  }
}

// CLI11's "Could not convert: --batch = 2147483648" as "--batch: '2147483648' is beyond 2^31 - 1 (2147483647)"
// (an int option's decimal value that passed in_range's 64-bit check), else "--alpha: 'abc' is not a number".
std::string conversion_error_text(const std::string& what) {
  const std::string prefix = "Could not convert: ";
  const std::size_t eq = what.find(" = ");
  if (what.rfind(prefix, 0) != 0 || eq == std::string::npos) return what;
  const std::string name = what.substr(prefix.size(), eq - prefix.size()), value = what.substr(eq + 3);
  // A list option names its whole value ("4,9223372036854775807"): name the item that does not fit.
  std::size_t begin = 0;
  while (begin <= value.size()) {
    const std::size_t end = std::min(value.find(',', begin), value.size());
    const std::string item = value.substr(begin, end - begin);
    begin = end + 1;
    if (!decimal_integer_problem(item).empty()) {
      if (item.find_first_not_of("0123456789.eE+-") == std::string::npos && !item.empty()) continue;  // a real
      return name + ": '" + item + "' is not a number";
    }
    const bool negative = item[0] == '-';
    // At most 19 digits here (in_range refused more); compare as text against the int limits.
    const std::string digits = item.substr(negative ? 1 : 0);
    const std::string limit = negative ? "2147483648" : "2147483647";
    if (digits.size() > limit.size() || (digits.size() == limit.size() && digits > limit))
      return name + ": '" + item + "' is " +
             (negative ? "below -2^31 (-2147483648)" : "beyond 2^31 - 1 (2147483647)");
  }
  return name + ": '" + value + "' is not a number";
}

// The flags of `app` (options that take no value), by long name: "--sinks".
void collect_flags(const CLI::App* app, std::set<std::string>& flags) {
  for (const CLI::Option* opt : app->get_options())
    if (opt->get_expected_max() == 0)
      for (const std::string& n : opt->get_lnames()) flags.insert("--" + n);
}

// Every integer option of `app` (CLI11 names their type INT / UINT, lists [INT]) accepts decimal only.
void decimal_integers_only(CLI::App* app) {
  for (CLI::Option* opt : app->get_options()) {
    const std::string t = opt->get_type_name();
    if (t.find("INT") != std::string::npos) opt->check(kDecimal);
  }
}

void add_model_options(CLI::App* sub, ModelOptions& m, bool page_size = true, bool model = true) {
  if (model) sub->add_option("--model", m.model, "Model preset (attnbench list shows them), a config.json or a model folder")->capture_default_str();
  sub->add_option("--layers", m.layers, "Layers to run, at most the model's (0: all of them)")->capture_default_str();
  sub->add_option("--tp-size", m.tp_size, "Tensor-parallel degree: heads per rank = heads / tp (0: the preset's)")
      ->capture_default_str();
  ServerArgs& s = m.server;
  sub->add_option("--context-length,--context-len", s.context_len, "Context length in tokens (0: the model's)")
      ->capture_default_str();
  sub->add_flag("--allow-overwrite-longer-context-len", s.allow_overwrite_longer_context_len,
                "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN: accept a --context-length above the model's derived one");
  sub->add_option("--max-running-requests", s.max_running_requests,
                  "R = req_to_token_pool.size = the backends' max_bs")
      ->capture_default_str();
  sub->add_option("--cuda-graph-max-bs", s.cuda_graph_max_bs, "Largest captured batch (SGLang's H200 default)")
      ->capture_default_str();
  sub->add_option("--cuda-graph-bs", s.cuda_graph_bs, "Explicit capture list (default: SGLang's list up to the max)")
      ->delimiter(',');
  sub->add_flag("--disable-cuda-graph", s.disable_cuda_graph, "No CUDA-graph state or capture");
  if (page_size)
    sub->add_option("--page-size", s.page_size, "KV page size in tokens (TRTLLM-MHA: 16/32/64/128)")->capture_default_str();
  if (model)  // run: verify cases set it from --draft-tokens
    sub->add_option("--speculative-num-draft-tokens", s.speculative_num_draft_tokens,
                    "Draft tokens per request (0: no speculative decoding)")
        ->capture_default_str();
  sub->add_option("--kv-cache-dtype", m.kv_cache_dtype,
                  "SGLang's --kv-cache-dtype: auto (the model dtype), bf16, fp16, fp8_e4m3, fp8_e5m2")
      ->capture_default_str();
  sub->add_flag("--enable-deterministic-inference", s.enable_deterministic_inference,
                "SGLang's deterministic mode (2 GiB FlashInfer workspace, paged extend)");
  sub->add_option("--flashinfer-workspace-size", m.flashinfer_workspace_size,
                  "SGLANG_FLASHINFER_WORKSPACE_SIZE in bytes, as if set at start (0: unset)")
      ->capture_default_str();
  sub->add_option("--flashinfer-use-tensor-core", m.flashinfer_use_tensor_core,
                  "SGLANG_FLASHINFER_USE_TENSOR_CORE (true/false; default: SGLang's rule)")
      ->check(CLI::IsMember({"true", "false"}));
  sub->add_flag("--flashinfer-use-paged", s.env_flashinfer_use_paged, "SGLANG_FLASHINFER_USE_PAGED: no ragged extend");
  sub->add_flag("--trtllm-keep-indptr", s.trtllm_keep_indptr,
                "trtllm_mha keeps kv_indptr / kv_last_page_len (PRs #31394, #44073)");
  sub->add_option("--sglang", s.sglang_version, "Modelled SGLang release (attnbench list shows the profiles)")
      ->capture_default_str();
  sub->add_option("--arch", m.arch, "GPU architecture whose path the backends take: sm90, sm100, sm120 (default: the device's; the CPU models an H200, sm90)");
  sub->add_option("--trtllm-decode-seq-len-splits", s.trtllm_decode_seq_len_splits,
                  "SGLANG_TRTLLM_MHA_DECODE_SEQ_LEN_SPLITS: trtllm_mha decode in this many length-sorted groups (0.5.23)")
      ->capture_default_str();
  sub->add_option("--kv-layout", s.kv_layout,
                  "auto (the profile's KV pool: K and V halves of one buffer in 0.5.23) or separate (fmha_v2 then copies pages)")
      ->capture_default_str();
  sub->add_option("--device", m.device,
                  std::string(kDeviceValues) + " (cuda: GPU 0, or the launcher's local rank)")
      ->capture_default_str();
}

std::string config_error_text(const std::string& what, const std::string& file) {
  // CLI11: "INI was not able to parse memory.bogus" -> name the key and the file.
  const std::string marker = "INI was not able to parse ";
  if (auto pos = what.find(marker); pos != std::string::npos) {
    std::string key = what.substr(pos + marker.size());
    if (key.size() >= 3 && key.compare(key.size() - 3, 3, ".++") == 0) {  // CLI11's marker of an unknown [section]
      return "--config " + printable(file) + ": unknown section '[" + printable(key.substr(0, key.size() - 3)) +
             "]' (sections: [run], [validate], [memory])";
    }
    if (auto dot = key.find('.'); dot != std::string::npos) key = key.substr(dot + 1);
    return "--config " + printable(file) + ": unknown key '" + printable(key) + "'";
  }
  return "--config " + printable(file) + ": " + printable(what);
}

}  // namespace

std::string subcommand_list() {
  std::string list;
  for (const std::string& name : kSubcommands) list += (list.empty() ? "" : ", ") + name;
  return list;
}

ParsedCli parse_cli(const std::vector<std::string>& args) {
  // First, before any file is opened: an OMP_NUM_THREADS that libgomp would crash on or misread (omp_env.hpp).
  check_omp_num_threads_env();
  ParsedCli out;
  CLI::App app{"attnbench: evidence about SGLang attention backends (memory, latency, correctness)", "attnbench"};
  app.fallthrough();
  app.set_version_flag("--version", attnbench::version() + " (" + git_commit() + ")");
  // Before the subcommands are added (they take the formatter from their parent): toml++ instead of CLI11's
  // reader (app/config_toml.hpp).
  auto config_formatter = std::make_shared<TomlConfig>();
  app.config_formatter(config_formatter);
  std::string config_file;
  app.set_config("--config", "", "TOML file of options (top-level keys apply to the subcommand)");
  app.allow_config_extras(CLI::config_extras_mode::error);
  app.require_subcommand(1);

  CLI::App* memory = app.add_subcommand("memory", "Construct each backend and report what it allocates, by phase and tag");
  add_model_options(memory, out.memory.m);
  // SGLang's --attention-backend sets both phases; --decode-attention-backend / --prefill-attention-backend a
  // hybrid (SGLang then builds the prefill backend too, in the same process: named buffers are shared).
  memory->add_option("--attention-backend,--decode-attention-backend,--backend", out.memory.backends,
                     "Backends, comma separated, or all (each measured on its own)")
      ->delimiter(',')->capture_default_str();
  memory->add_option("--prefill-attention-backend,--prefill-backend", out.memory.prefill_backend,
                     "A hybrid's prefill backend: built first in the same process (named buffers are then shared)");
  memory->add_option("--format", out.memory.format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  memory->add_option("--out", out.memory.out, "Write to this file instead of stdout");

  CLI::App* run = app.add_subcommand("run", "Run a sweep: validate every output, time every step, write result rows");
  CLI::App* validate = app.add_subcommand("validate", "The same sweep without timing; exit 1 when any case fails");
  for (CLI::App* sub : {run, validate}) {
    RunOptions& r = out.run;
    RunPlan& p = r.plan;  // what runs: bound straight into the runner's plan
    add_model_options(sub, p.model, /*page_size=*/false, /*model=*/false);
    sub->add_option("--model", p.models, "Model presets, config.json files or model folders, comma separated")->delimiter(',')->capture_default_str();
    sub->add_option("--page-size", p.page_sizes, "KV page sizes in tokens (TRTLLM-MHA: 16/32/64/128)")->delimiter(',')->capture_default_str();
    sub->add_option("--attention-backend,--backend", p.backends, "Backends to compare, comma separated, or all")
        ->delimiter(',')->capture_default_str();
    sub->add_option("--mode", p.modes, "decode, extend, verify (comma separated)")->delimiter(',')->capture_default_str();
    sub->add_option("--dtype", p.dtypes, "Model dtypes (queries, outputs; the KV cache too unless --kv-cache-dtype): auto (each model's "
                    "config dtype, as SGLang's --dtype auto), bf16, fp16, fp32; comma separated")->delimiter(',')->capture_default_str();
    sub->add_option("--batch", p.batches, "Requests per step")->delimiter(',')->capture_default_str();
    sub->add_option("--kv-len", p.kv_lens, "decode / verify: cached tokens per request (the upper bound L with a distribution)")
        ->delimiter(',')->capture_default_str();
    sub->add_option("--prefix-len", p.prefix_lens, "extend: cached prefix tokens per request")->delimiter(',')->capture_default_str();
    sub->add_option("--extend-len", p.extend_lens, "extend: new tokens per request")->delimiter(',')->capture_default_str();
    sub->add_option("--extend-batch", p.extend_batches, "extend: batch sizes (default: --batch)")->delimiter(',');
    sub->add_option("--verify-batch", p.verify_batches, "verify: batch sizes (default: --batch)")->delimiter(',');
    sub->add_option("--verify-kv-len", p.verify_kv_lens, "verify: cached tokens per request (default: --kv-len)")->delimiter(',');
    sub->add_option("--length-dist", p.length_dist, "fixed, uniform or zipf: per-request lengths in [--length-min, L]")
        ->capture_default_str();
    sub->add_option("--length-min", p.length_min, "Lower bound of uniform / zipf lengths")->capture_default_str();
    sub->add_option("--zipf-s", p.zipf_s, "Zipf exponent")->capture_default_str();
    sub->add_option("--speculative-num-draft-tokens,--draft-tokens", p.draft_tokens,
                    "verify: draft tokens per request (chain, topk 1)")
        ->capture_default_str();
    sub->add_option("--trace", p.trace, "CSV of request_id,prefix_len,extend_len: the batch and its lengths");
    sub->add_option("--seed", p.seeds, "Seeds of the cache, queries and page shuffling")->check(kUnsigned)->delimiter(',')->capture_default_str();
    sub->add_flag("--sinks", p.sinks, "Attention-sink logits per head (GPT-OSS style)");
    sub->add_option("--timing", p.timing, "eager, graph (graph rows where the device has CUDA graphs)")->delimiter(',')
        ->capture_default_str();
    sub->add_option("--warmup", p.sampling.warmup, "Untimed steps before sampling")->capture_default_str();
    sub->add_option("--min-samples", p.sampling.min_samples, "Samples before convergence can stop sampling")->capture_default_str();
    sub->add_option("--max-samples", p.sampling.max_samples, "Sample cap per row")->capture_default_str();
    sub->add_option("--target-spread", p.sampling.target_spread_pct, "Stop when (p90 - p10) / median is below this percent")->capture_default_str();
    sub->add_option("--time-budget", p.sampling.time_budget_s, "Seconds of sampling per row at most")->capture_default_str();
    sub->add_flag("--no-flush-l2", p.no_flush_l2, "Do not evict the L2 cache before each timed step");
    sub->add_flag("--capture-needed-only", p.capture_needed_only, "Capture only the graph that is timed (not SGLang's whole list)");
    sub->add_option("--reference-flop-budget", p.reference_flop_budget,
                    "Per layer: beyond this, the reference checks the first and last rows of each request")
        ->capture_default_str();
    sub->add_option("--case-id", p.case_id, "Run only the case with this id (see --list-cases)");
    sub->add_flag("--list-cases", r.list_cases, "Print the expanded case ids and exit");
    sub->add_option("--format", r.list_format, "With --list-cases: text (the ids) or csv (every case's shape, lengths and policy)")
        ->check(CLI::IsMember({"text", "csv"}))->capture_default_str();
    sub->add_option("--out", r.out, "Results CSV (default results/local/run-<time>.csv)");
    sub->add_option("--json", r.json, "JSON report: environment, command, rows with raw samples (default: beside --out)");
    sub->add_option("--filter", p.filter, "Run only the cases whose id matches this regular expression");
    sub->add_flag("--resume", r.resume, "Keep the rows already in --out, run only the cases missing there");
    sub->add_flag("-q,--quiet", r.quiet, "No progress on stderr");
    sub->add_option("--shard", r.shard, "K/N: run shard K (from 0) of N, balanced by estimated cost; default: the "
                                         "launcher's rank (torchrun, Slurm, Open MPI); files get .rankK-of-N");
  }

  for (CLI::App* sub : {run, validate})
    sub->add_option("--report", out.run.report, "md: print the Markdown report (for a PR) after the table")
        ->check(CLI::IsMember({"md"}));

  CLI::App* compare = app.add_subcommand("compare", "Compare two result files (CSV or JSON): the CI regression gate "
                                                     "(with --peers: model vs library)");
  {
    CompareCliOptions& c = out.compare;
    compare->add_option("base", c.base, "Baseline results (.csv or .json)")->required();
    compare->add_option("new", c.now, "New results (.csv or .json)")->required();
    compare->add_option("--max-slowdown", c.gate.max_slowdown, "Fail on a confirmed slowdown beyond this fraction")
        ->capture_default_str();
    compare->add_option("--max-memory-growth", c.gate.max_memory_growth, "Fail on memory growth beyond this many bytes")
        ->capture_default_str();
    compare->add_option("--alpha", c.gate.alpha, "Significance of the rank test (raw samples on both sides)")->capture_default_str();
    compare->add_option("--min-effect", c.gate.min_effect, "Smallest median change that counts (fraction)")->capture_default_str();
    compare->add_flag("--allow-env-mismatch", c.gate.allow_env_mismatch, "Compare results from different GPUs / drivers");
    compare->add_flag("--allow-version-mismatch", c.gate.allow_version_mismatch,
                      "Compare rows that model different SGLang releases (--sglang)");
    compare->add_flag("--strict", c.gate.strict,
                      "Fail a pair whose samples are too few for the rank test to reach --alpha (default: warn)");
    compare->add_flag("--peers", c.peers,
                      "Model vs library, not the gate: BASE holds attnbench's rows, NEW the library script's "
                      "(backends *_lib); per case the latency ratio model / library");
    compare->add_option("--format", c.format, "table, md, csv or json")
        ->check(CLI::IsMember({"table", "md", "markdown", "csv", "json"}))
        ->capture_default_str();
    compare->add_option("--out", c.out, "Write to this file instead of stdout");
  }
  CLI::App* report = app.add_subcommand("report", "The Markdown report of a run, for a PR description");
  {
    ReportOptions& r = out.report;
    report->add_option("results", r.results, "Results (.json, or .csv without raw samples)")->required();
    report->add_option("--memory", r.memory, "attnbench memory --format json output to include");
    // One file per --peers (repeat it): a vector option would otherwise swallow the RESULTS positional after it.
    report->add_option("--peers", r.peers, "Library rows (.json or .csv, backends *_lib) to compare the model with")
        ->allow_extra_args(false);
    report->add_option("--format", r.format, "md")->check(CLI::IsMember({"md", "markdown"}))->capture_default_str();
    report->add_option("--out", r.out, "Write to this file instead of stdout");
    report->add_option("--plots", r.plots, "Directory of scripts/plot.py's PNGs to link in the report");
  }

  CLI::App* merge = app.add_subcommand("merge", "Join the shards of a sweep (run --shard / a launcher) into one CSV + JSON");
  {
    MergeOptions& g = out.merge;
    merge->add_option("shards", g.shards, "Each rank's JSON report (OUT.rankK-of-N.json; a .csv stands for its .json)")
        ->required();
    merge->add_option("--out", g.out, "Merged results CSV ('-': stdout)")->required();
    merge->add_option("--json", g.json, "Merged JSON report (default: beside --out; '-': stdout)");
  }
  CLI::App* list = app.add_subcommand("list", "List backends, model presets and configs");
  CLI::App* env = app.add_subcommand("env", "Show the machine, the build and whether a GPU is usable");
  env->add_option("--format", out.env.format, "text or json")->check(CLI::IsMember({"text", "json"}))->capture_default_str();

  for (CLI::App* sub : {memory, run, validate, compare, report, merge}) {
    decimal_integers_only(sub);
    decimal_reals_only(sub);
  }
  // compare too: CLI11 clamps --max-memory-growth 99999999999999999999 to 2^63 - 1, a gate that never fails.
  for (CLI::App* sub : {memory, run, validate, compare}) integers_in_range(sub);
  if (!args.empty() && !args[0].empty() && args[0][0] != '-' && !is_subcommand(args[0]))
    throw InputError("unknown subcommand '" + printable(args[0]) +
                     "' (expected " + subcommand_list() + "); try --help");
  for (const auto& a : args) {  // the subcommand whose options top-level config keys set
    if (is_subcommand(a)) {
      config_formatter->subcommand = a;
      break;
    }
  }
  // A flag takes no value on the command line ("--sinks=1", "--sinks=false" are errors; CLI11 would take them);
  // in a config file, a TOML boolean (TomlConfig::to_flag).
  {
    std::set<std::string> flags;
    for (const CLI::App* sub : {memory, run, validate}) collect_flags(sub, flags);
    for (const auto& a : args) {
      if (a == "--") break;
      const auto eq = a.find('=');
      if (a.rfind("--", 0) == 0 && eq != std::string::npos && flags.count(a.substr(0, eq)))
        throw InputError(a.substr(0, eq) + ": a flag takes no value (got '" + printable(a) + "'; give " +
                         a.substr(0, eq) + " alone to set it)");
    }
  }
  // A comma list with an empty item: CLI11 drops it ("4,,5" is 4, 5) or, for "--batch ,", takes the next
  // argument as the value and names that ("'--device' is not a decimal integer").
  {
    std::set<std::string> lists;
    for (const CLI::App* sub : {memory, run, validate, compare, report, merge})
      for (const CLI::Option* opt : sub->get_options())
        if (opt->get_delimiter() == ',')
          for (const std::string& n : opt->get_lnames()) lists.insert("--" + n);
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (args[i] == "--") break;
      const auto eq = args[i].find('=');
      std::string name = args[i], value;
      if (eq != std::string::npos) {
        name = args[i].substr(0, eq);
        value = args[i].substr(eq + 1);
      } else if (i + 1 < args.size()) {
        value = args[i + 1];
      } else {
        continue;
      }
      if (!lists.count(name) || value.find(',') == std::string::npos) continue;
      if (value.front() == ',' || value.back() == ',' || value.find(",,") != std::string::npos)
        throw InputError(name + ": '" + printable(value) + "' has an empty item (values separated by single commas)");
    }
  }
  // One option under two of its names in a config file (context-len and context-length) is a duplicate, as on
  // the command line: the formatter learns every alias's primary name.
  for (const CLI::App* sub : {memory, run, validate})
    for (const CLI::Option* opt : sub->get_options()) {
      const auto& names = opt->get_lnames();
      for (std::size_t i = 1; i < names.size(); ++i) config_formatter->primary_names[sub->get_name()][names[i]] = names[0];
    }
  // Which options take numbers, for the config reader (CLI11 names their types INT, UINT, FLOAT).
  for (const CLI::App* sub : {memory, run, validate, compare, report, merge})
    for (const CLI::Option* opt : sub->get_options()) {
      const std::string t = opt->get_type_name();
      if (t.find("INT") != std::string::npos || t.find("FLOAT") != std::string::npos)
        for (const std::string& n : opt->get_lnames()) config_formatter->numeric[sub->get_name()].insert(n);
    }
  config_file = config_file_of(args);
  config_formatter->file = config_file;
  out.run.config_file = config_file;
  out.memory.config_file = config_file;
  // CLI11 opens the file with std::ifstream, which blocks forever on a FIFO: check it first (a regular file
  // within kMaxConfigBytes, opened without blocking).
  if (!config_file.empty()) TomlConfig::check_file(config_file);

  std::vector<const char*> argv{"attnbench"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  } catch (const CLI::Success& e) {  // --help, --help-all, --version
    std::ostringstream os, es;
    out.exit_code = app.exit(e, os, es);
    out.exit_now = true;
    out.output = os.str() + es.str();
    return out;
  } catch (const CLI::FileError& e) {
    throw InputError("--config: " + printable(e.what()));
  } catch (const CLI::ConfigError& e) {
    throw InputError(config_error_text(e.what(), config_file));
  } catch (const CLI::ConversionError& e) {
    throw InputError(printable(conversion_error_text(e.what())));
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (what.rfind("A subcommand is required", 0) == 0 || what.find("subcommand") != std::string::npos)
      what = "a subcommand is required (" + subcommand_list() + "); try --help";
    throw InputError(printable(what));
  }
  out.args = args;
  if (memory->parsed()) out.command = Command::memory;
  if (run->parsed()) out.command = Command::run;
  if (validate->parsed()) out.command = Command::validate;
  if (compare->parsed()) out.command = Command::compare;
  if (report->parsed()) out.command = Command::report;
  if (merge->parsed()) out.command = Command::merge;
  if (list->parsed()) out.command = Command::list;
  if (env->parsed()) out.command = Command::env;
  return out;
}

}  // namespace attnbench
