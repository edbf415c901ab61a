// app/config_toml: the toml++ --config reader. Items as the old reader made them (routing, sections, values as
// text), valid TOML the old reader refused, and hostile files (deep nesting, FIFOs, directories, huge files,
// NUL bytes) as clean errors.
#include "app/config_toml.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "core/errors.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

namespace fs = std::filesystem;
using test::TempDir;
using test::write_file;

// One item as text: "run/batch=<1><2>", "run/++=".
std::string show(const CLI::ConfigItem& it) {
  std::string s;
  for (const auto& p : it.parents) s += p + "/";
  s += it.name + "=";
  for (const auto& in : it.inputs) s += "<" + in + ">";
  return s;
}

std::vector<std::string> items_of(const std::string& text, const std::string& subcommand = "run") {
  TomlConfig c;
  c.subcommand = subcommand;
  c.file = "c.toml";
  std::vector<std::string> v;
  for (const auto& it : c.parse(text)) v.push_back(show(it));
  return v;
}

std::string error_of(const std::string& text, const std::string& subcommand = "run") {
  try {
    items_of(text, subcommand);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << text.substr(0, 80);
  return "";
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// ---- items --------------------------------------------------------------------------------------------

TEST(TomlConfig, TopLevelKeysGoToTheSubcommandBeingRun) {
  EXPECT_EQ(items_of("model = [\"tiny\"]\nlayers = 2\nbackend = [\"all\"]\ntime-budget = 0.5\n"),
            (std::vector<std::string>{"run/model=<tiny>", "run/layers=<2>", "run/backend=<all>",
                                      "run/time-budget=<0.5>"}));
  EXPECT_EQ(items_of("model = \"tiny\"\n", "memory"), std::vector<std::string>{"memory/model=<tiny>"});
  EXPECT_EQ(items_of("model = \"tiny\"\n", ""), std::vector<std::string>{"model=<tiny>"});
}

TEST(TomlConfig, ItemsKeepTheFileOrder) {
  EXPECT_EQ(items_of("zz = 1\naa = 2\nmm = 3\n"),
            (std::vector<std::string>{"run/zz=<1>", "run/aa=<2>", "run/mm=<3>"}));
}

TEST(TomlConfig, SectionOfTheRunningSubcommandAppliesOthersAreLeftOut) {
  const std::string text = "warmup = 1\n[run]\nbatch = [1]\n[validate]\nbatch = [2]\n[memory]\nlayers = 3\n";
  EXPECT_EQ(items_of(text, "run"),
            (std::vector<std::string>{"run/warmup=<1>", "run/++=", "run/batch=<1>", "run/--="}));
  EXPECT_EQ(items_of(text, "validate"),
            (std::vector<std::string>{"validate/warmup=<1>", "validate/++=", "validate/batch=<2>", "validate/--="}));
  EXPECT_EQ(items_of(text, "memory"),
            (std::vector<std::string>{"memory/warmup=<1>", "memory/++=", "memory/layers=<3>", "memory/--="}));
  // A section only for another subcommand: nothing applies, and the file is not "empty".
  EXPECT_EQ(items_of("[validate]\nbatch = [3]\n", "run"), std::vector<std::string>{});
  // A dotted key names the same table as a section.
  EXPECT_EQ(items_of("run.batch = [4]\n", "run"),
            (std::vector<std::string>{"run/++=", "run/batch=<4>", "run/--="}));
}

TEST(TomlConfig, ValuesAsText) {
  EXPECT_EQ(items_of("a = \"x y\"\nb = 'lit\\n'\nc = -7\nd = true\ne = false\nf = 1.5\ng = 3.0\nh = 1e3\n"
                     "i = 4e9\nj = [1, 2, 3]\nk = []\nl = -0.0\nm = 1_000\n"),
            (std::vector<std::string>{"run/a=<x y>", "run/b=<lit\\n>", "run/c=<-7>", "run/d=<true>",
                                      "run/e=<false>", "run/f=<1.5>", "run/g=<3.0>", "run/h=<1000.0>",
                                      "run/i=<4e+09>", "run/j=<1><2><3>", "run/k=", "run/l=<-0.0>",
                                      "run/m=<1000>"}));
  EXPECT_EQ(items_of("a = inf\nb = -inf\nc = nan\n"),
            (std::vector<std::string>{"run/a=<inf>", "run/b=<-inf>", "run/c=<nan>"}));
}

TEST(TomlConfig, MultiLineArraysAndStringsWork) {
  // CLI11 2.1.2's reader read this array as the single value "[", and the string as '"""first'.
  EXPECT_EQ(items_of("batch = [\n  1,  # one\n  2,\n]\nmodel = \"\"\"\nllama\"\"\"\ntrace = '''\nt.csv'''\n"
                     "backend = [ \"flashinfer\" , \"trtllm_mha\" ] # c\n"),
            (std::vector<std::string>{"run/batch=<1><2>", "run/model=<llama>", "run/trace=<t.csv>",
                                      "run/backend=<flashinfer><trtllm_mha>"}));
}

TEST(TomlConfig, SeedsUpToTwoToThe64MinusOne) {
  EXPECT_EQ(items_of("seed = [18446744073709551615, 1, 9223372036854775808]\nx = \"18446744073709551615\"\n"),
            (std::vector<std::string>{"run/seed=<18446744073709551615><1><9223372036854775808>",
                                      "run/x=<18446744073709551615>"}));
  EXPECT_EQ(items_of("seed = 18446744073709551615 # 18446744073709551615\n"),
            std::vector<std::string>{"run/seed=<18446744073709551615>"});
  EXPECT_EQ(items_of("seed = [\n  18446744073709551615,\n  18446744073709551614,\n]\n"),
            std::vector<std::string>{"run/seed=<18446744073709551615><18446744073709551614>"});
  // 2^64 and beyond are errors, not clamped.
  const std::string e = error_of("seed = 18446744073709551616\n");
  EXPECT_TRUE(has(e, "--config c.toml line 1: --seed: ")) << e;
  EXPECT_TRUE(has(e, "18446744073709551616")) << e;
  EXPECT_TRUE(has(error_of("seed = [1, 99999999999999999999]\n"), "line 1: --seed: "));
  EXPECT_TRUE(has(error_of("seed = -9223372036854775809\n"), "--seed"));
}

// ---- refused ---------------------------------------------------------------------------------------------

TEST(TomlConfig, DuplicateKeys) {
  EXPECT_EQ(error_of("draft-tokens = 2\ndraft-tokens = 3\n"),
            "--config c.toml line 2: duplicate key 'draft-tokens' (in 'draft-tokens = 3')");
  EXPECT_EQ(error_of("\"batch\" = [1]\n\"batch\" = [2]\n"),
            "--config c.toml line 2: duplicate key 'batch' (in '\"batch\" = [2]')");
  EXPECT_EQ(error_of("batch = [1]\n[run]\nbatch = [2]\n"),
            "--config c.toml line 3: duplicate key 'batch' (at the top level and in [run])");
  EXPECT_TRUE(has(error_of("[run]\nx = 1\n[run]\ny = 2\n"), "line 3: duplicate section '[run]'"));
  // The top level and another subcommand's section may share a key.
  EXPECT_EQ(items_of("batch = [1]\n[validate]\nbatch = [2]\n"), std::vector<std::string>{"run/batch=<1>"});
}

TEST(TomlConfig, UnknownSectionsArraysOfTablesAndNestedTables) {
  EXPECT_EQ(error_of("[bogus]\nx = 1\n"),
            "--config c.toml: unknown section '[bogus]' (sections: [run], [validate], [memory])");
  EXPECT_EQ(error_of("[[run]]\nbatch = 1\n"), "--config c.toml line 1: array of tables '[[run]]' (not supported)");
  EXPECT_EQ(error_of("x = [{a = 1}]\n"), "--config c.toml line 1: array of tables '[[x]]' (not supported)");
  EXPECT_EQ(error_of("[run]\nx = 1\n[[run.y]]\nz = 2\n"),
            "--config c.toml line 3: array of tables '[[run.y]]' (not supported)");
  EXPECT_EQ(error_of("[run.x]\nbatch = 1\n"),
            "--config c.toml line 1: nested table '[run.x]' (a section holds options only)");
  EXPECT_TRUE(has(error_of("[run]\nx = {a = 1}\n"), "nested table '[run.x]'"));
  // In another subcommand's section too: the structure is checked everywhere.
  EXPECT_TRUE(has(error_of("[validate.x]\nbatch = 1\n"), "nested table '[validate.x]'"));
  EXPECT_TRUE(has(error_of("a.b.c = 1\n"), "unknown section '[a]'"));
}

TEST(TomlConfig, KeysThatCannotBeOptionNames) {
  EXPECT_EQ(error_of("\"++\" = 1\n"), "--config c.toml line 1: unknown key '++'");
  EXPECT_EQ(error_of("\"--\" = 1\n"), "--config c.toml line 1: unknown key '--'");
  EXPECT_EQ(error_of("\"\" = 1\n"), "--config c.toml line 1: unknown key ''");
  EXPECT_EQ(error_of("\"bad\\u001b[31mkey\" = 1\n"), "--config c.toml line 1: unknown key 'bad\\x1b[31mkey'");
  EXPECT_EQ(error_of("\"a.b\" = 1\n"), "--config c.toml line 1: unknown key 'a.b'");
}

TEST(TomlConfig, ValuesThatAreNotOptionValues) {
  EXPECT_EQ(error_of("warmup = 0x10\n"),
            "--config c.toml line 1: --warmup: integers are written in decimal here (not hexadecimal, octal or "
            "binary)");
  EXPECT_TRUE(has(error_of("warmup = 0o17\n"), "--warmup: integers are written in decimal"));
  EXPECT_TRUE(has(error_of("batch = [1, 0b11]\n"), "--batch: integers are written in decimal"));
  EXPECT_EQ(error_of("when = 1979-05-27\n"), "--config c.toml line 1: --when: dates and times are not option values");
  EXPECT_EQ(error_of("batch = [[1], [2]]\n"),
            "--config c.toml line 1: --batch: an array holds plain values, not arrays or tables");
  std::string many = "batch = [";
  for (std::size_t i = 0; i <= kMaxArrayValues; ++i) many += "1,";
  many += "]\n";
  EXPECT_EQ(error_of(many), "--config c.toml line 1: --batch: more than 10000 values");
}

TEST(TomlConfig, EmptyFiles) {
  for (const std::string text : {"", "# nothing but a comment\n\n", "[run]\n", "\n\n[run]\n[validate]\n"})
    EXPECT_EQ(error_of(text), "--config c.toml: the file is empty (no options)") << text;
}

TEST(TomlConfig, ParseErrorsNameTheLineTheOptionAndTheText) {
  EXPECT_EQ(error_of("warmup = 010\n"),
            "--config c.toml line 1: --warmup: decimal integer: leading zeroes are prohibited (in 'warmup = 010')");
  EXPECT_TRUE(has(error_of("x = 1\nmodel = \"tiny\n"), "--config c.toml line 2: --model: string: "));
  EXPECT_TRUE(has(error_of("this is not toml\n"), "--config c.toml line 1: key-value pair: expected '='"));
  // A control character in the offending line is escaped in the message.
  const std::string e = error_of("x = \x1b[2J\n");
  EXPECT_FALSE(has(e, "\x1b")) << e;
  EXPECT_TRUE(has(e, "\\x1b[2J")) << e;
  // Long lines are cut.
  const std::string long_line = "model = " + std::string(500, 'x') + "\n";
  EXPECT_LT(error_of(long_line).size(), 250u);
}

// ---- hostile inputs ----------------------------------------------------------------------------------

TEST(TomlConfigHostile, HundredThousandNestedBracketsAreAnError) {
  // CLI11 2.1.2's reader crashed on this (stack overflow); toml++ stops at 256 levels.
  const std::string e = error_of("x = " + std::string(100000, '[') + "\n");
  EXPECT_TRUE(has(e, "--config c.toml line 1: --x: ")) << e;
  EXPECT_TRUE(has(e, "nested")) << e;
  EXPECT_TRUE(has(error_of("x = " + std::string(100000, '{') + "\n"), "--config c.toml line 1: --x: "));
  std::string inline_tables = "x = ";
  for (int i = 0; i < 50000; ++i) inline_tables += "{a=";
  EXPECT_TRUE(has(error_of(inline_tables + "\n"), "nested"));
}

// Inputs on which toml++ 3.3 breaks its own parser assumptions (found by config_toml_fuzz): a clean error,
// never an abort (asserts) or undefined behaviour (NDEBUG's __builtin_assume).
TEST(TomlConfigHostile, InputsThatBreakTomlPlusPlusAssumptionsAreAnError) {
  for (const std::string text : {std::string("warmup = 1\n[ ="), std::string("\xEF\xBB\xBF [[[[[[[[1]]]\n"),
                                 std::string("[[ =\n"), std::string("[\t]\n")}) {
    const std::string e = error_of(text);
    EXPECT_TRUE(has(e, "--config c.toml")) << e;
  }
}

// toml++ 3.3's is_non_ascii_horizontal_whitespace() reaches __builtin_unreachable for U+00A1..U+0499 (Latin-1,
// Greek, Cyrillic) where it tests for whitespace after a value (found by config_toml_fuzz): a non-ASCII character
// outside a string or comment, never valid TOML, is refused before toml++ sees it. Inside strings and comments,
// and as a byte order mark, non-ASCII text stays valid.
TEST(TomlConfigHostile, NonAsciiOutsideStringsIsAnErrorInsideStringsItIsText) {
  for (const std::string text : {std::string("warmup = 1\xC3\xA9\n"), std::string("model = \"tiny\"\xD1\x97\n"),
                                 std::string("sinks = 1\nwarmup = 0.c.d.e.f\xD4\x98\xD1\x97 =1 .h.."),
                                 std::string("caf\xC3\xA9 = 1\n"), std::string("\xE3\x80\x80warmup = 1\n")}) {
    const std::string e = error_of(text);
    EXPECT_TRUE(has(e, ": a non-ASCII character outside a string or comment")) << e;
  }
  EXPECT_TRUE(has(error_of("warmup = 1\n\nlayers = 2\xC2\xA0\n"), "c.toml line 3: a non-ASCII"));
  EXPECT_EQ(items_of("\xEF\xBB\xBF# caf\xC3\xA9\nmodel = \"t\xC3\xAFny\" # \xD1\x97\nfilter = '''\xCE\xBB\n'''\n"),
            (std::vector<std::string>{"run/model=<t\xC3\xAFny>", "run/filter=<\xCE\xBB\n>"}));
}

// The same toml++ function wherever it tests for whitespace, also where the scan above cannot tell a string: a
// quote inside a malformed bare value ("1run.x.'c...") opens no string for toml++, which tests the Cyrillic
// after it (found by config_toml_fuzz in CI). Every non-ASCII code point of the BMP after a value, after such a
// quote, and inside basic and literal strings: an error or the text itself, never an abort (the generated
// whitespace test returns false where it had no answer: U+00A1..U+0499, U+2C5E..U+2FFF, U+3001..U+3057,
// U+FB26..U+FEFE).
TEST(TomlConfigHostile, EveryNonAsciiCodePointIsAnErrorOrTextNeverAnAbort) {
  EXPECT_TRUE(has(error_of("af.g.h = 1run.modeb.'c\xD2\x9B\xD1\x9A\xD1\x99\xD1\x98.h.i4044"), "c.toml line 1"));
  EXPECT_TRUE(has(error_of("uaf.g.h = 1run.modeb.'c\xD2\x9Bseed\xD1\x9A\xD1\x99\xD1\x98.h.i4\xEF\xBB\x9Fzn.a\x0B"
                           "c"),
                  "c.toml line 1"));
  int errors = 0, texts = 0;
  for (std::uint32_t cp = 0x80; cp <= 0xFFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;  // surrogates: no UTF-8
    std::string u;
    if (cp < 0x800) {
      u += static_cast<char>(0xC0 | (cp >> 6));
    } else {
      u += static_cast<char>(0xE0 | (cp >> 12));
      u += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    }
    u += static_cast<char>(0x80 | (cp & 0x3F));
    for (const std::string& text : {"warmup = 1" + u + "\n", "model = 1run.x.'c" + u + "d\n"}) {
      const std::string e = error_of(text);
      EXPECT_TRUE(has(e, "--config c.toml line 1")) << "U+" << std::hex << cp << ": " << e;
      ++errors;
    }
    if (cp == 0x85 || cp == 0x2028 || cp == 0x2029 || cp == 0xFEFF) continue;  // toml++: line breaks, BOM
    const std::vector<std::string> items = items_of("model = \"a" + u + "\"\nfilter = 'b" + u + "'\n");
    EXPECT_EQ(items, (std::vector<std::string>{"run/model=<a" + u + ">", "run/filter=<b" + u + ">"})) << std::hex << cp;
    ++texts;
  }
  EXPECT_EQ(errors, 2 * (0xFFFF - 0x80 + 1 - 0x800));
  EXPECT_GT(texts, 60000);
}

TEST(TomlConfigHostile, DeepDottedKeysAreRefusedBeforeParsing) {
  // 300,000 parts: toml++ itself overflows the stack building (and freeing) one table per part.
  std::string key = "a";
  for (int i = 0; i < 300000; ++i) key += ".a";
  EXPECT_EQ(error_of(key + " = 1\n"),
            "--config c.toml line 1: a key of more than 8 dotted parts (options are 'name' or 'section.name')");
  EXPECT_TRUE(has(error_of("x = 1\n[" + key + "]\n"), "line 2: a key of more than 8 dotted parts"));
  EXPECT_TRUE(has(error_of("x = { " + key + " = 1 }\n"), "more than 8 dotted parts"));
  EXPECT_TRUE(has(error_of("\"a\" . 'b' . c.d.e.f.g.h.i = 1\n"), "more than 8 dotted parts"));
  // 8 parts pass this check (and are then a nested table); dots inside strings, comments and floats never count.
  EXPECT_TRUE(has(error_of("run.a.b.c.d.e.f.g = 1\n"), "nested table"));
  EXPECT_EQ(items_of("model = \"a.b.c.d.e.f.g.h.i.j.k\" # a.b.c.d.e.f.g.h.i.j\nz = 1.5\n"
                     "trace = '''\n1.2.3.4.5.6.7.8.9.10\n'''\ny = \"\"\"x.\\\"\"\".y.z.a.b.c.d.e.f.g\"\"\"\n"),
            (std::vector<std::string>{"run/model=<a.b.c.d.e.f.g.h.i.j.k>", "run/z=<1.5>",
                                      "run/trace=<1.2.3.4.5.6.7.8.9.10\n>", "run/y=<x.\"\"\".y.z.a.b.c.d.e.f.g>"}));
  EXPECT_EQ(items_of("s = \"\"\"a.\"\"\"\"\"\nt = 1\n"),
            (std::vector<std::string>{"run/s=<a.\"\">", "run/t=<1>"}));
}

TEST(TomlConfigHostile, NulBytesAreAnError) {
  EXPECT_EQ(error_of(std::string("x = 1\ny = \"a\0b\"\n", 15)), "--config c.toml line 2: contains a NUL byte");
}

TEST(TomlConfigHostile, OversizedTextIsAnError) {
  const std::string big = "# " + std::string(2 << 20, 'x') + "\nbatch = [1]\n";
  EXPECT_EQ(error_of(big), "--config c.toml: larger than 1048576 bytes");
  TomlConfig c;
  c.file = "c.toml";
  std::istringstream in(big);
  try {
    c.from_config(in);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--config c.toml: larger than 1048576 bytes");
  }
}

TEST(TomlConfigHostile, FilesThatAreNotRegularOrTooLargeAreRefusedBeforeReading) {
  TempDir d;
  ASSERT_EQ(::mkfifo(d.file("fifo.toml").c_str(), 0600), 0);
  const auto check = [](const std::string& path) -> std::string {
    try {
      TomlConfig::check_file(path);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(check(d.file("fifo.toml")), "--config " + d.file("fifo.toml") + ": not a regular file (a FIFO)");
  EXPECT_EQ(check(d.path()), "--config " + d.path() + ": not a regular file (a directory)");
  EXPECT_EQ(check("/dev/zero"), "--config /dev/zero: not a regular file (a character device)");
  std::ofstream(d.file("big.toml")) << "# " << std::string(2 << 20, 'x') << "\n";
  EXPECT_EQ(check(d.file("big.toml")),
            "--config " + d.file("big.toml") + ": larger than 1048576 bytes (" +
                std::to_string(fs::file_size(d.file("big.toml"))) + " bytes)");
  EXPECT_TRUE(has(check(d.file("missing.toml")), ": cannot read (No such file or directory)"));
  write_file(d.file("ok.toml"), "x = 1\n");
  EXPECT_EQ(check(d.file("ok.toml")), "");
}

// ---- through CLI11 ------------------------------------------------------------------------------------

struct Parsed {
  std::vector<int> batch;
  std::string model;
  bool sinks = false;
  double zipf = 0;
  std::vector<std::uint64_t> seeds;
  int warmup = 0;
  std::vector<std::string> modes;
};

// A small app in the shape of attnbench's (run / validate sharing option variables, memory), reading `text` as
// --config after TomlConfig::check_file, as parse_cli is to do.
Parsed parse_app(const TempDir& d, const std::string& text, std::vector<std::string> args) {
  write_file(d.file("c.toml"), text);
  Parsed p;
  CLI::App app{"test"};
  auto fmt = std::make_shared<TomlConfig>();
  app.fallthrough();          // `run --config FILE`, as attnbench parses it
  app.config_formatter(fmt);  // before the subcommands: they copy the formatter when created
  app.set_config("--config");
  app.allow_config_extras(CLI::config_extras_mode::error);
  app.require_subcommand(1);
  CLI::App* run = app.add_subcommand("run");
  CLI::App* validate = app.add_subcommand("validate");
  CLI::App* memory = app.add_subcommand("memory");
  for (CLI::App* sub : {run, validate}) {
    sub->add_option("--batch", p.batch)->delimiter(',');
    sub->add_option("--seed", p.seeds)->delimiter(',');
    sub->add_option("--zipf-s", p.zipf);
    sub->add_option("--warmup", p.warmup);
    sub->add_option("--mode", p.modes)->delimiter(',');
    sub->add_flag("--sinks", p.sinks);
  }
  memory->add_option("--model", p.model);
  fmt->subcommand = args.at(0);
  fmt->file = d.file("c.toml");
  TomlConfig::check_file(fmt->file);
  args.push_back("--config");
  args.push_back(fmt->file);
  std::vector<const char*> argv{"attnbench"};
  for (const auto& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  return p;
}

TEST(TomlConfigCli, ValuesReachTheOptions) {
  TempDir d;
  const Parsed p = parse_app(d,
                             "batch = [\n  1,\n  16,\n]\nseed = [18446744073709551615, 2]\nzipf-s = 1.25\n"
                             "sinks = true\nmode = [\"decode\", \"verify\"]\n[validate]\nwarmup = 9\n",
                             {"run"});
  EXPECT_EQ(p.batch, (std::vector<int>{1, 16}));
  EXPECT_EQ(p.seeds, (std::vector<std::uint64_t>{18446744073709551615ull, 2}));
  EXPECT_EQ(p.zipf, 1.25);
  EXPECT_TRUE(p.sinks);
  EXPECT_EQ(p.modes, (std::vector<std::string>{"decode", "verify"}));
  EXPECT_EQ(p.warmup, 0);  // [validate] does not change run
  EXPECT_EQ(parse_app(d, "[validate]\nwarmup = 9\n", {"validate"}).warmup, 9);
  EXPECT_EQ(parse_app(d, "[memory]\nmodel = \"tiny\"\n", {"memory"}).model, "tiny");
  EXPECT_FALSE(parse_app(d, "sinks = false\n", {"run"}).sinks);
}

TEST(TomlConfigCli, CommandLineOverridesTheFile) {
  TempDir d;
  EXPECT_EQ(parse_app(d, "batch = [1, 2]\n", {"run", "--batch", "7"}).batch, std::vector<int>{7});
}

TEST(TomlConfigCli, UnknownKeysAreCli11ConfigErrors) {
  TempDir d;
  // parse_cli turns "INI was not able to parse run.bogus" into "--config FILE: unknown key 'bogus'".
  EXPECT_THROW(parse_app(d, "bogus = 1\n", {"run"}), CLI::ConfigError);
  EXPECT_THROW(parse_app(d, "[run]\nnot-an-option = 1\n", {"run"}), CLI::ConfigError);
}

TEST(TomlConfigCli, FlagsTakeBooleansOnly) {
  TempDir d;
  const auto flag_error = [&](const std::string& text) -> std::string {
    try {
      parse_app(d, text, {"run"});
    } catch (const InputError& e) {
      return e.what();
    }
    ADD_FAILURE() << "accepted: " << text;
    return "";
  };
  const std::string file = d.file("c.toml");
  EXPECT_EQ(flag_error("sinks = 1\n"),
            "--config " + file + " line 1: --sinks is a flag: its value is true or false, not the integer 1");
  EXPECT_TRUE(has(flag_error("[run]\nwarmup = 0\nsinks = 0\n"), file + " line 3: --sinks is a flag"));
  EXPECT_TRUE(has(flag_error("sinks = \"true\"\n"), "--sinks is a flag: its value is true or false, not the string \"true\""));
  EXPECT_TRUE(has(flag_error("sinks = \"maybe\"\n"), "--sinks is a flag"));
  EXPECT_TRUE(has(flag_error("sinks = [true]\n"), "not an array"));
}

TEST(TomlConfigCli, FloatsAreNotIntegers) {
  TempDir d;
  EXPECT_THROW(parse_app(d, "warmup = 1e3\n", {"run"}), CLI::ParseError);  // "1000.0" is no int
  EXPECT_EQ(parse_app(d, "zipf-s = 1e3\n", {"run"}).zipf, 1000.0);
}

TEST(TomlConfigCli, ToConfigWritesTheOptions) {
  TempDir d;
  CLI::App app{"test"};
  app.config_formatter(std::make_shared<TomlConfig>());
  std::vector<int> batch;
  app.add_option("--batch", batch)->delimiter(',');
  const char* argv[] = {"t", "--batch", "3,4"};
  app.parse(3, const_cast<char**>(argv));
  EXPECT_TRUE(has(app.config_to_str(), "batch=[3, 4]")) << app.config_to_str();
}

// The fuzz target's seed corpus (fuzz/corpus/config_toml_fuzz/): each parses or is refused with an InputError.
TEST(TomlConfigHostile, FuzzSeedCorpusParsesOrIsRefused) {
  int files = 0, refused = 0;
  for (const auto& e : fs::directory_iterator(fs::path(ATTNBENCH_SOURCE_DIR) / "fuzz/corpus/config_toml_fuzz")) {
    ++files;
    TomlConfig c;
    c.subcommand = "run";
    c.file = e.path().string();
    TomlConfig::check_file(c.file);
    std::ifstream in(c.file, std::ios::binary);
    try {
      for (const auto& it : c.from_config(in)) EXPECT_LE(it.parents.size(), 1u) << c.file;
    } catch (const InputError&) {
      ++refused;
      EXPECT_NE(e.path().filename().string().rfind("near_", 0), std::string::npos) << c.file << " was refused";
    }
  }
  EXPECT_GE(files, 8);
  EXPECT_GE(refused, 3);
}

}  // namespace
}  // namespace attnbench
