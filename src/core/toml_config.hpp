// The --config reader: TOML parsed by toml++ (a real TOML 1.0 parser) and turned into a flat list of option
// entries, which app/config_toml.hpp hands to CLI11 as its ConfigItem list, instead of CLI11 2.1.2's line reader (which rejects valid TOML such as multi-line arrays and
// strings, merges repeated keys, and crashes on 100,000 nested '[').
//
// Routing (as the reader it replaces, CLI11's own config reader did):
//   - a top-level key applies to the subcommand being run (`subcommand`);
//   - a section named after a subcommand ([run], [validate], [memory], ...) applies to that subcommand only;
//     sections of other subcommands are left out ([validate] does not change `run`, which binds the same
//     options), after the structural checks below;
//   - the same key at the top level and in the running subcommand's section is a duplicate key;
//   - a key may use SGLang's spelling with underscores (context_length = 4096 is --context-length): '_' reads
//     as '-' (no attnbench option has an underscore), and the two spellings of one key are a duplicate.
// Refused, with "--config FILE: ..." or "--config FILE line N: ..." messages (InputError, exit 2):
//   - a file that is not regular (FIFO, directory, device) or larger than kMaxConfigBytes (check_config_file,
//     before CLI11 opens it), NUL bytes, and anything toml++ rejects (a duplicate key, bad syntax, leading zeros,
//     an integer beyond 64 bits);
//   - an unknown section, an array of tables ([[run]]), a table nested in a section ([run.x], run.x.y = 1,
//     inline tables), a dotted key of more than kMaxKeyParts parts (refused before toml++ sees it: toml++
//     recurses once per part and a 1 MiB key of 300,000 parts overflows the stack);
//   - a key that cannot be an option name (letters, digits, '_' and '-', a letter or digit first), so no hostile
//     key reaches CLI11 or a message;
//   - dates and times, arrays of arrays or tables, arrays of more than kMaxArrayValues values, hexadecimal /
//     octal / binary integers (options are decimal), and a file with no key at all ("the file is empty");
//   - for a flag (ConfigEntry::boolean, app/config_toml.hpp's to_flag): any value but a TOML boolean (sinks = 1 and sinks = "true" are errors).
// Values reach CLI11 as text: strings as they are, integers in decimal, booleans as true / false, floats in
// their shortest round-trip form with a '.' or an exponent (1e3 stays a float: 1000.0, which an integer option
// refuses), arrays as one input per value. A decimal integer in [2^63, 2^64) (a uint64 seed) reaches CLI11 as
// its digits although TOML's integers are 64-bit signed; 2^64 and beyond are errors.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace attnbench {

inline constexpr std::int64_t kMaxConfigBytes = 1 << 20;  // 1 MiB: attnbench's configs are a few hundred bytes
inline constexpr int kMaxKeyParts = 8;                    // parts of one dotted key ("run.batch" has 2)
inline constexpr std::size_t kMaxArrayValues = 10000;     // values in one array

// One option read from the file, in file order.
struct ConfigEntry {
  std::string section;              // the subcommand it applies to ("" only when none is being run)
  bool from_section = false;        // written in [section] (true) or at the top level (false)
  std::string name;                 // the option's name without its dashes: the key with '_' read as '-'
  std::string written;              // the key as the file spells it
  std::vector<std::string> inputs;  // the value as text: one input per array value
  std::int64_t line = 0;            // 1-based line of the key
  std::string kind;                 // the value, described: "the boolean true", "the integer 1", "an array", ...
  bool boolean = false;             // the value was a TOML boolean (what a flag takes)
  // The first value that was a TOML string (the value, or a value of its array), described ("the string
  // \"1\""); "" when none. A decimal integer in [2^63, 2^64), which reaches CLI11 as its digits, is no string.
  // app/config_toml.cpp refuses a string for an option that takes numbers (batch = ["1"]).
  std::string string_value;
};

// Checks `path` before anyone opens it: a regular file of at most kMaxConfigBytes bytes, opened without
// blocking (std::ifstream blocks forever on a FIFO without a writer). Throws InputError "--config PATH: not a
// regular file (a FIFO)" and the like (core/files.hpp).
void check_config_file(const std::string& path);

// The entries of the TOML text `text` that apply to `subcommand` (the one being run; "" when none), routed as
// described above; `file` names the file in messages; `sections` are the subcommand names a section may have;
// `primary_of` maps an option's other names to its primary one (context-len -> context-length), so that one
// option under two names is a duplicate key as one key in two spellings is.
// Throws InputError for everything refused above.
std::vector<ConfigEntry> read_toml_config(std::string_view text, const std::string& file, const std::string& subcommand,
                                          const std::vector<std::string>& sections,
                                          const std::map<std::string, std::string>& primary_of = {});

// The --config file of the command line `args` ("--config FILE" or "--config=FILE"; the last one, as CLI11 takes
// it; nothing after "--"), "" when none.
std::string config_file_of(const std::vector<std::string>& args);

// "--config FILE" or "--config FILE line N" (N > 0): the prefix of every message about the file.
std::string config_where(const std::string& file, std::int64_t line);

}  // namespace attnbench
