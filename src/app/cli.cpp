#include "app/cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <set>
#include <sstream>

#include "core/errors.hpp"
#include "core/version.hpp"

namespace attnbench {

namespace {

const std::vector<std::string> kSubcommands = {"run", "validate", "memory", "compare", "report", "list", "env"};

bool is_subcommand(const std::string& name) {
  return std::find(kSubcommands.begin(), kSubcommands.end(), name) != kSubcommands.end();
}

// CLI11's TOML reader, with top-level keys routed to the subcommand being run, and the checks TOML makes that
// CLI11 does not: a key given twice is an error (CLI11 would merge lists), and so is a file with no option.
class SubcommandConfig : public CLI::ConfigTOML {
 public:
  std::string subcommand;
  std::string file;  // for messages
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override {
    const std::string text(std::istreambuf_iterator<char>(input), {});
    reject_duplicate_keys(text);
    std::istringstream in(text);
    std::vector<CLI::ConfigItem> items = CLI::ConfigTOML::from_config(in);
    // A section of another subcommand is for that subcommand only ([validate] must not change `run`, which
    // binds the same options): its items are left out.
    std::erase_if(items, [this](const CLI::ConfigItem& it) {
      return !it.parents.empty() && it.parents[0] != subcommand && is_subcommand(it.parents[0]);
    });
    bool any_option = false;
    for (auto& it : items) {
      if (it.name == "++" || it.name == "--") continue;  // CLI11's section markers
      any_option = true;
      if (it.parents.empty() && !subcommand.empty()) it.parents = {subcommand};
    }
    if (!any_option && !has_any_key(text)) throw InputError("--config " + file + ": the file is empty (no options)");
    return items;
  }

 private:
  // The key of a "key = value" line ("" for other lines); quoted keys are unquoted.
  static std::string line_key(const std::string& line, std::size_t b) {
    if (line[b] == '"' || line[b] == '\'') {
      const auto close = line.find(line[b], b + 1);
      if (close == std::string::npos || line.find('=', close) == std::string::npos) return "";
      return line.substr(b + 1, close - b - 1);
    }
    const auto eq = line.find('=', b);
    if (eq == std::string::npos) return "";
    std::string key = line.substr(b, eq - b);
    key.erase(key.find_last_not_of(" \t") + 1);
    if (key.find_first_of("\"'[],") != std::string::npos) return "";  // an array's continuation, not a key
    return key;
  }

  static bool has_any_key(const std::string& text) {
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
      const auto b = line.find_first_not_of(" \t");
      if (b != std::string::npos && line[b] != '#' && line[b] != '[' && !line_key(line, b).empty()) return true;
    }
    return false;
  }

  // CLI11 merges a repeated key's values; TOML forbids repeating a key in a table. Keys are read line by line
  // ("key = value" or "\"key\" = value" at the start of a line, [section] headers), which is all attnbench's
  // configs use. The top level and the section of the subcommand being run are one table for this check.
  void reject_duplicate_keys(const std::string& text) const {
    std::set<std::string> seen;
    std::string section, line;
    std::istringstream lines(text);
    while (std::getline(lines, line)) {
      const auto b = line.find_first_not_of(" \t");
      if (b == std::string::npos || line[b] == '#') continue;
      if (line[b] == '[') {
        const auto close = line.find(']', b);
        section = line.substr(b + 1, close == std::string::npos ? std::string::npos : close - b - 1);
        if (section == subcommand) section.clear();
        continue;
      }
      const std::string key = line_key(line, b);
      if (key.empty()) continue;
      if (!seen.insert(section + "." + key).second)
        throw InputError("--config " + file + ": duplicate key '" + key + "'" +
                         (section.empty() ? "" : " in [" + section + "]"));
    }
  }
};

// Integers in decimal only: CLI11 2.1.2 converts with base 0, so "0100" would be octal 64; and no sign for
// options that are never negative ("-1" would wrap to 2^64 - 1 in an unsigned option).
const CLI::Validator kDecimal(
    [](std::string& s) -> std::string {
      std::size_t i = (!s.empty() && s[0] == '-') ? 1 : 0;
      if (i == s.size()) return "'" + s + "' is not a decimal integer";
      for (std::size_t k = i; k < s.size(); ++k)
        if (s[k] < '0' || s[k] > '9') return "'" + s + "' is not a decimal integer";
      if (s.size() - i > 1 && s[i] == '0') return "'" + s + "' has a leading zero (write it in decimal without one)";
      return {};
    },
    "DECIMAL", "decimal");
const CLI::Validator kUnsigned(
    [](std::string& s) -> std::string {
      if (!s.empty() && s[0] == '-') return "'" + s + "' is negative";
      return {};
    },
    "UNSIGNED", "unsigned");

// Every integer option of `app` (CLI11 names their type INT / UINT, lists [INT]) accepts decimal only.
void decimal_integers_only(CLI::App* app) {
  for (CLI::Option* opt : app->get_options()) {
    const std::string t = opt->get_type_name();
    if (t.find("INT") != std::string::npos) opt->check(kDecimal);
  }
}

void add_model_options(CLI::App* sub, ModelOptions& m, bool page_size = true, bool model = true) {
  if (model) sub->add_option("--model", m.model, "Model preset (attnbench list shows them)")->capture_default_str();
  sub->add_option("--layers", m.layers, "Layers to run (0: the preset's)")->capture_default_str();
  sub->add_option("--tp-size", m.tp_size, "Tensor-parallel degree: heads per rank = heads / tp (0: the preset's)")
      ->capture_default_str();
  ServerArgs& s = m.server;
  sub->add_option("--context-len", s.context_len, "SGLang --context-length in tokens (0: the model's)")
      ->capture_default_str();
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
  sub->add_option("--device", m.device, "auto, cpu or cuda")->capture_default_str();
}

std::string config_error_text(const std::string& what, const std::string& file) {
  // CLI11: "INI was not able to parse memory.bogus" -> name the key and the file.
  const std::string marker = "INI was not able to parse ";
  if (auto pos = what.find(marker); pos != std::string::npos) {
    std::string key = what.substr(pos + marker.size());
    if (key.size() >= 3 && key.compare(key.size() - 3, 3, ".++") == 0) {  // CLI11's marker of an unknown [section]
      return "--config " + file + ": unknown section '[" + key.substr(0, key.size() - 3) +
             "]' (sections: [run], [validate], [memory])";
    }
    if (auto dot = key.find('.'); dot != std::string::npos) key = key.substr(dot + 1);
    return "--config " + file + ": unknown key '" + key + "'";
  }
  return "--config " + file + ": " + what;
}

}  // namespace

ParsedCli parse_cli(const std::vector<std::string>& args) {
  ParsedCli out;
  CLI::App app{"attnbench: evidence about SGLang attention backends (memory, latency, correctness)", "attnbench"};
  app.fallthrough();
  app.set_version_flag("--version", attnbench::version() + " (" + git_commit() + ")");
  auto config_formatter = std::make_shared<SubcommandConfig>();
  app.config_formatter(config_formatter);
  std::string config_file;
  app.set_config("--config", "", "TOML file of options (top-level keys apply to the subcommand)");
  app.allow_config_extras(CLI::config_extras_mode::error);
  app.require_subcommand(1);

  CLI::App* memory = app.add_subcommand("memory", "Construct each backend and report what it allocates, by phase and tag");
  add_model_options(memory, out.memory.m);
  memory->add_option("--backend", out.memory.backends, "Backends, comma separated, or all")->delimiter(',')->capture_default_str();
  memory->add_option("--prefill-backend", out.memory.prefill_backend,
                     "Build this backend first in the same process (named buffers are then shared)");
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
    sub->add_option("--model", p.models, "Model presets, comma separated")->delimiter(',')->capture_default_str();
    sub->add_option("--page-size", p.page_sizes, "KV page sizes in tokens (TRTLLM-MHA: 16/32/64/128)")->delimiter(',')->capture_default_str();
    sub->add_option("--backend", p.backends, "Backends, comma separated, or all")->delimiter(',')->capture_default_str();
    sub->add_option("--mode", p.modes, "decode, extend, verify (comma separated)")->delimiter(',')->capture_default_str();
    sub->add_option("--dtype", p.dtypes, "bf16, fp16, fp32 (KV cache, queries and outputs)")->delimiter(',')->capture_default_str();
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
    sub->add_option("--draft-tokens", p.draft_tokens, "verify: draft tokens per request (chain, topk 1)")->capture_default_str();
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
    compare->add_option("--max-slowdown", c.max_slowdown, "Fail on a confirmed slowdown beyond this fraction")
        ->capture_default_str();
    compare->add_option("--max-memory-growth", c.max_memory_growth, "Fail on memory growth beyond this many bytes")
        ->capture_default_str();
    compare->add_option("--alpha", c.alpha, "Significance of the rank test (raw samples on both sides)")->capture_default_str();
    compare->add_option("--min-effect", c.min_effect, "Smallest median change that counts (fraction)")->capture_default_str();
    compare->add_flag("--allow-env-mismatch", c.allow_env_mismatch, "Compare results from different GPUs / drivers");
    compare->add_flag("--strict", c.strict,
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
  }

  CLI::App* list = app.add_subcommand("list", "List backends, model presets and configs");
  CLI::App* env = app.add_subcommand("env", "Show the machine, the build and whether a GPU is usable");

  for (CLI::App* sub : {memory, run, validate, compare, report}) decimal_integers_only(sub);
  if (!args.empty() && !args[0].empty() && args[0][0] != '-' && !is_subcommand(args[0]))
    throw InputError("unknown subcommand '" + args[0] + "' (expected run, validate, memory, compare, report, list, env); try --help");
  for (const auto& a : args) {  // the subcommand whose options top-level config keys set
    if (is_subcommand(a)) {
      config_formatter->subcommand = a;
      break;
    }
  }
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--config") config_file = args[i + 1];
  config_formatter->file = config_file;
  out.run.config_file = config_file;

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
    throw InputError("--config: " + std::string(e.what()));
  } catch (const CLI::ConfigError& e) {
    throw InputError(config_error_text(e.what(), config_file));
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (what.rfind("A subcommand is required", 0) == 0 || what.find("subcommand") != std::string::npos)
      what = "a subcommand is required (run, validate, memory, compare, report, list, env); try --help";
    throw InputError(what);
  }
  out.args = args;
  if (memory->parsed()) out.command = Command::memory;
  if (run->parsed()) out.command = Command::run;
  if (validate->parsed()) out.command = Command::validate;
  if (compare->parsed()) out.command = Command::compare;
  if (report->parsed()) out.command = Command::report;
  if (list->parsed()) out.command = Command::list;
  if (env->parsed()) out.command = Command::env;
  return out;
}

}  // namespace attnbench
