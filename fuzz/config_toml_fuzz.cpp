// libFuzzer target: a --config TOML file read by the toml++ reader (src/app/config_toml.cpp). Each input is
// written to a scratch file, checked as parse_cli is to check it (TomlConfig::check_file), read through
// CLI11's own path (std::ifstream -> TomlConfig::from_config) and applied to a small CLI11 app in the shape
// of attnbench's (run / validate sharing option variables, a flag, vectors, a uint64 seed list).
// Expected outcomes: success, attnbench::InputError (exit 2 with a message) or a CLI::ParseError (an unknown
// key or a value of the wrong type, which parse_cli turns into an InputError). Anything else is a finding: a
// crash, a sanitizer report, a hang (libFuzzer's -timeout), another exception, or an item that breaks the
// reader's contract (a key that is not an option name, a section marker outside the running subcommand,
// parents deeper than one level) — reported as "config_toml_fuzz finding" and aborted.
// Build and run: scripts/fuzz.sh config_toml_fuzz (FUZZ_SECONDS per target, default 60).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/config_toml.hpp"
#include "core/errors.hpp"
#include "fuzz/scratch_file.hpp"

namespace {

const std::string& write_scratch(const std::uint8_t* data, std::size_t size) {
  static attnbench::fuzz::ScratchFile scratch("attnbench-config-toml-fuzz-XXXXXX.toml", 5);
  return scratch.write(data, size);
}

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "config_toml_fuzz finding: %s\n", what.c_str());
  std::abort();
}

bool option_name(const std::string& s) {
  if (s.empty() || !std::isalnum(static_cast<unsigned char>(s[0]))) return false;
  for (const char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

// The reader's contract on what it hands CLI11.
void check_items(const std::vector<CLI::ConfigItem>& items, const std::string& subcommand) {
  for (const auto& it : items) {
    if (it.parents.size() > 1) finding("parents deeper than one level: " + it.fullname());
    if (!it.parents.empty() && it.parents[0] != subcommand) finding("an item of another subcommand: " + it.fullname());
    if (it.name == "++" || it.name == "--") {
      if (it.parents.empty() || !it.inputs.empty()) finding("a malformed section marker");
      continue;
    }
    if (!option_name(it.name)) finding("a key that is no option name reached CLI11");
    for (const auto& in : it.inputs)
      if (in.find('\0') != std::string::npos) finding("a NUL byte in a value");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = write_scratch(data, size);
  try {
    attnbench::TomlConfig::check_file(path);
    {  // the reader alone, as CLI11 calls it
      auto fmt = std::make_shared<attnbench::TomlConfig>();
      fmt->subcommand = "run";
      fmt->file = path;
      std::ifstream in(path, std::ios::binary);
      check_items(fmt->from_config(in), "run");
    }
    // Applied to an app: to_flag, vectors, conversions.
    struct {
      std::vector<int> batch;
      std::vector<std::uint64_t> seeds;
      std::vector<std::string> modes;
      std::string model;
      double zipf = 0;
      int warmup = 0;
      bool sinks = false, quiet = false;
    } o;
    CLI::App app{"config_toml_fuzz"};
    app.fallthrough();  // `run --config FILE`, as attnbench parses it
    auto fmt = std::make_shared<attnbench::TomlConfig>();
    app.config_formatter(fmt);
    app.set_config("--config");
    app.allow_config_extras(CLI::config_extras_mode::error);
    CLI::App* run = app.add_subcommand("run");
    CLI::App* validate = app.add_subcommand("validate");
    for (CLI::App* sub : {run, validate}) {
      sub->add_option("--batch", o.batch)->delimiter(',');
      sub->add_option("--seed", o.seeds)->delimiter(',');
      sub->add_option("--mode", o.modes)->delimiter(',');
      sub->add_option("--model", o.model);
      sub->add_option("--zipf-s", o.zipf);
      sub->add_option("--warmup", o.warmup);
      sub->add_flag("--sinks", o.sinks);
      sub->add_flag("-q,--quiet", o.quiet);
    }
    fmt->subcommand = "run";
    fmt->file = path;
    const char* argv[] = {"attnbench", "run", "--config", path.c_str()};
    app.parse(4, const_cast<char**>(argv));
  } catch (const attnbench::InputError&) {
    // bad input, said so
  } catch (const CLI::ParseError&) {
    // an unknown key or a wrong type, which parse_cli turns into an InputError
  }
  return 0;
}
