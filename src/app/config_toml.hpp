// The --config reader as CLI11 sees it: core/toml_config.hpp reads and checks the TOML (toml++), and this
// formatter hands its entries to CLI11 as ConfigItems (a [section]'s entries between CLI11's "++" / "--"
// markers) and answers CLI11's questions about flags.
#pragma once

#include <CLI/ConfigFwd.hpp>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/toml_config.hpp"

namespace attnbench {

class TomlConfig : public CLI::Config {
 public:
  std::string subcommand;  // the subcommand being run ("" when none): top-level keys and its section apply to it
  std::string file;        // the --config path, for messages
  // Per subcommand: an option's other long names -> its first one (without dashes), so that parse() refuses one
  // option written under two names.
  std::map<std::string, std::map<std::string, std::string>> primary_names;
  // Per subcommand: every long name (without dashes) of an option whose values are numbers (CLI11's INT / UINT /
  // FLOAT types): a TOML string for one of them is refused (batch = ["1"], target-spread = "0x10": CLI11 reads every
  // value as text, so "0x10" became 16 and "" became 0, past the checks the command line has).
  std::map<std::string, std::set<std::string>> numeric;

  // core/toml_config.hpp's check_config_file: call it before CLI::App::parse (CLI11 opens the file).
  static void check_file(const std::string& path) { check_config_file(path); }

  // The items of the TOML text `input` (at most kMaxConfigBytes bytes are read; more is an error).
  // Throws InputError for everything core/toml_config.hpp refuses.
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;

  // from_config on a string (tests, the fuzz target).
  std::vector<CLI::ConfigItem> parse(std::string_view text) const;

  // A flag's value: "true" or "false" when the key held a TOML boolean; InputError "--config FILE line N:
  // --NAME is a flag: its value is true or false, not <an integer 1>" otherwise.
  std::string to_flag(const CLI::ConfigItem& item) const override;

  // The options of `app` as TOML (CLI11's own writer: attnbench never writes configs, this is for completeness).
  std::string to_config(const CLI::App* app, bool default_also, bool write_description,
                        std::string prefix) const override;

 private:
  // Each item's entry, by ConfigItem::fullname(), for to_flag (filled by parse; CLI11 calls to_flag after
  // from_config on the same formatter).
  mutable std::map<std::string, ConfigEntry> entries_;
};

}  // namespace attnbench
