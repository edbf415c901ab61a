// The --config reader: TOML parsed by toml++ (a real TOML 1.0 parser) and turned into the CLI::ConfigItem list
// CLI11 applies, instead of CLI11 2.1.2's line reader (which rejects valid TOML such as multi-line arrays and
// strings, merges repeated keys, and crashes on 100,000 nested '[').
//
// Routing (as the reader it replaces, SubcommandConfig in app/cli.cpp):
//   - a top-level key applies to the subcommand being run (`subcommand`);
//   - a section named after a subcommand ([run], [validate], [memory], ...) applies to that subcommand only;
//     sections of other subcommands are left out ([validate] does not change `run`, which binds the same
//     options), after the structural checks below;
//   - the same key at the top level and in the running subcommand's section is a duplicate key.
// Refused, with "--config FILE: ..." or "--config FILE line N: ..." messages (InputError, exit 2):
//   - a file that is not regular (FIFO, directory, device) or larger than kMaxConfigBytes (check_file, before
//     CLI11 opens it), NUL bytes, and anything toml++ rejects (a duplicate key, bad syntax, leading zeros,
//     an integer beyond 64 bits);
//   - an unknown section, an array of tables ([[run]]), a table nested in a section ([run.x], run.x.y = 1,
//     inline tables), a dotted key of more than kMaxKeyParts parts (refused before toml++ sees it: toml++
//     recurses once per part and a 1 MiB key of 300,000 parts overflows the stack);
//   - a key that cannot be an option name (letters, digits, '_' and '-', a letter or digit first), so no hostile
//     key reaches CLI11 or a message;
//   - dates and times, arrays of arrays or tables, arrays of more than kMaxArrayValues values, hexadecimal /
//     octal / binary integers (options are decimal), and a file with no key at all ("the file is empty");
//   - for a flag (to_flag): any value but a TOML boolean (sinks = 1 and sinks = "true" are errors).
// Values reach CLI11 as text: strings as they are, integers in decimal, booleans as true / false, floats in
// their shortest round-trip form with a '.' or an exponent (1e3 stays a float: 1000.0, which an integer option
// refuses), arrays as one input per value. A decimal integer in [2^63, 2^64) (a uint64 seed) reaches CLI11 as
// its digits although TOML's integers are 64-bit signed; 2^64 and beyond are errors.
#pragma once

#include <CLI/ConfigFwd.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace attnbench {

inline constexpr std::int64_t kMaxConfigBytes = 1 << 20;  // 1 MiB: attnbench's configs are a few hundred bytes
inline constexpr int kMaxKeyParts = 8;                    // parts of one dotted key ("run.batch" has 2)
inline constexpr std::size_t kMaxArrayValues = 10000;     // values in one array

class TomlConfig : public CLI::Config {
 public:
  std::string subcommand;  // the subcommand being run ("" when none): top-level keys and its section apply to it
  std::string file;        // the --config path, for messages

  // Checks `path` before CLI11 opens it (call it before CLI::App::parse): a regular file of at most
  // kMaxConfigBytes bytes, opened without blocking. CLI11 opens the file with std::ifstream, which blocks forever
  // on a FIFO without a writer; it is therefore refused here first.
  // Throws InputError "--config PATH: not a regular file (a FIFO)" and the like (core/files.hpp).
  static void check_file(const std::string& path);

  // The items of the TOML text `input` (at most kMaxConfigBytes bytes are read; more is an error), routed as
  // described above. Throws InputError for everything refused above.
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
  struct ValueInfo {
    std::string kind;  // "a boolean", "an integer 1", "a string \"x\"", ...
    std::int64_t line = 0;
    bool boolean = false;
  };
  // What each item's value was, by ConfigItem::fullname(), for to_flag (filled by from_config; CLI11 calls
  // to_flag after from_config on the same formatter).
  mutable std::map<std::string, ValueInfo> values_;

  std::string where(std::int64_t line) const;  // "--config FILE line N"
};

}  // namespace attnbench
