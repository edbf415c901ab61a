#include "app/cli.hpp"

#include <CLI/CLI.hpp>
#include <sstream>

#include "backends/registry.hpp"
#include "core/errors.hpp"
#include "core/version.hpp"

namespace attnbench {

namespace {

// CLI11's TOML reader, with top-level keys routed to the subcommand being run.
class SubcommandConfig : public CLI::ConfigTOML {
 public:
  std::string subcommand;
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override {
    std::vector<CLI::ConfigItem> items = CLI::ConfigTOML::from_config(input);
    for (auto& it : items)
      if (it.parents.empty() && !subcommand.empty()) it.parents = {subcommand};
    return items;
  }
};

void add_model_options(CLI::App* sub, ModelOptions& m) {
  sub->add_option("--model", m.model, "Model preset (attnbench list shows them)")->capture_default_str();
  sub->add_option("--layers", m.layers, "Layers to run (0: the preset's)")->capture_default_str();
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
  sub->add_option("--page-size", s.page_size, "KV page size in tokens (TRTLLM-MHA: 16/32/64/128)")->capture_default_str();
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

  CLI::App* list = app.add_subcommand("list", "List backends, model presets and configs");
  CLI::App* env = app.add_subcommand("env", "Show the machine, the build and whether a GPU is usable");

  for (const auto& a : args) {  // the subcommand whose options top-level config keys set
    if (a == "memory" || a == "list" || a == "env") {
      config_formatter->subcommand = a;
      break;
    }
  }
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--config") config_file = args[i + 1];

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
      what = "a subcommand is required (memory, list, env); try --help";
    throw InputError(what);
  }
  if (memory->parsed()) out.command = Command::memory;
  if (list->parsed()) out.command = Command::list;
  if (env->parsed()) out.command = Command::env;
  return out;
}

ModelConfig resolve_model(const ModelOptions& m) {
  ModelConfig model = find_model_preset(m.model);
  if (m.layers < 0) throw InputError("--layers: must be positive (got " + std::to_string(m.layers) + ")");
  if (m.layers > 0) model.num_layers = m.layers;
  return model;
}

ServerArgs resolve_server_args(const ModelOptions& m) {
  ServerArgs s = m.server;
  if (m.flashinfer_workspace_size < 0)
    throw InputError("--flashinfer-workspace-size: must be positive (got " + std::to_string(m.flashinfer_workspace_size) + ")");
  if (m.flashinfer_workspace_size > 0) s.env_flashinfer_workspace_size = m.flashinfer_workspace_size;
  if (!m.flashinfer_use_tensor_core.empty()) s.env_flashinfer_use_tensor_core = m.flashinfer_use_tensor_core == "true";
  return s;
}

std::vector<std::string> resolve_backends(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names) {
    if (n == "all") {
      for (const auto& b : backend_names())
        if (std::find(out.begin(), out.end(), b) == out.end()) out.push_back(b);
      continue;
    }
    find_backend(n);
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  if (out.empty()) throw InputError("--backend: no backend selected");
  return out;
}

}  // namespace attnbench
