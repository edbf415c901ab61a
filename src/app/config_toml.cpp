#include "app/config_toml.hpp"

#include <CLI/CLI.hpp>
#include <istream>

#include "app/options.hpp"
#include "core/errors.hpp"
#include "core/files.hpp"

namespace attnbench {

std::vector<CLI::ConfigItem> TomlConfig::from_config(std::istream& input) const {
  std::string text(static_cast<std::size_t>(kMaxConfigBytes) + 1, '\0');
  input.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(input.gcount()));
  if (static_cast<std::int64_t>(text.size()) > kMaxConfigBytes)
    throw InputError(config_where(file, 0) + ": larger than " + std::to_string(kMaxConfigBytes) + " bytes");
  return parse(text);
}

std::vector<CLI::ConfigItem> TomlConfig::parse(std::string_view text) const {
  entries_.clear();
  std::vector<CLI::ConfigItem> items;
  std::string open_section;  // the [section] whose "++" marker is open
  const auto close = [&] {
    if (open_section.empty()) return;
    CLI::ConfigItem marker;
    marker.parents = {open_section};
    marker.name = "--";
    items.push_back(marker);
    open_section.clear();
  };
  static const std::map<std::string, std::string> none;
  const auto names = primary_names.find(subcommand);
  std::vector<ConfigEntry> entries =
      read_toml_config(text, file, subcommand, kSubcommands, names == primary_names.end() ? none : names->second);
  if (const auto options = numeric.find(subcommand); options != numeric.end())
    for (const ConfigEntry& e : entries)
      if (!e.string_value.empty() && options->second.count(e.name))
        throw InputError(config_where(file, e.line) + ": --" + printable(e.written) + " takes a number, not " +
                         e.string_value + " (a TOML string: write the number without quotes)");
  for (ConfigEntry& e : entries) {
    if (!e.from_section) close();
    if (e.from_section && open_section != e.section) {
      close();
      CLI::ConfigItem marker;
      marker.parents = {e.section};
      marker.name = "++";
      items.push_back(marker);
      open_section = e.section;
    }
    CLI::ConfigItem item;
    if (!e.section.empty()) item.parents = {e.section};
    item.name = e.name;
    item.inputs = std::move(e.inputs);
    entries_[item.fullname()] = std::move(e);
    items.push_back(std::move(item));
  }
  close();
  return items;
}

std::string TomlConfig::to_flag(const CLI::ConfigItem& item) const {
  const auto it = entries_.find(item.fullname());
  if (it != entries_.end() && it->second.boolean && item.inputs.size() == 1) return item.inputs[0];
  const std::int64_t line = it == entries_.end() ? 0 : it->second.line;
  const std::string got = it == entries_.end() ? "another value" : it->second.kind;
  throw InputError(config_where(file, line) + ": --" + printable(item.name) +
                   " is a flag: its value is true or false, not " + got);
}

std::string TomlConfig::to_config(const CLI::App* app, bool default_also, bool write_description,
                                  std::string prefix) const {
  return CLI::ConfigTOML().to_config(app, default_also, write_description, std::move(prefix));
}

}  // namespace attnbench
