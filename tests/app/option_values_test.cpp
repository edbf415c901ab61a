// Floating-point options as strict as the integer ones: a decimal number as written (optional '-', '.', and
// exponent), nothing else. CLI11 2.1.2 read them with strtold: '' became 0 ("--zipf-s ... got 0.000000"),
// '0x10' 16, ' 7' 7. And in --config, a TOML string for an option that takes numbers (batch = ["1"],
// target-spread = "0x10") is refused naming the key and its line, where CLI11 read the string's text as a number.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/cli.hpp"
#include "core/errors.hpp"
#include "support/errors.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

using test::error_of;
using test::TempDir;

const std::string kHow = " (decimal: digits, an optional '-', '.' and exponent)";  // after "is not a number"

std::string error_of_args(const std::vector<std::string>& args) {
  return error_of([&] { parse_cli(args); });
}

// Every floating-point option of every subcommand, with a command line that reaches it.
struct RealOption {
  std::vector<std::string> before;  // the subcommand and what it needs
  std::string name;
};
std::vector<RealOption> real_options() {
  std::vector<RealOption> v;
  for (const char* sub : {"run", "validate"})
    for (const char* name : {"--target-spread", "--time-budget", "--zipf-s", "--reference-flop-budget"})
      v.push_back({{sub}, name});
  for (const char* name : {"--max-slowdown", "--alpha", "--min-effect"}) v.push_back({{"compare", "a", "b"}, name});
  return v;
}

TEST(OptionValues, FloatOptionsRefuseWhatIsNotADecimalNumber) {
  for (const RealOption& o : real_options()) {
    const auto with = [&](const std::string& value) {
      std::vector<std::string> args = o.before;
      args.push_back(o.name);
      args.push_back(value);
      return args;
    };
    for (const std::string bad : {"", " 7", "7 ", "0x10", "0X1p4", "+5", "1,5", "5%", "abc", "1e", ".", "-", "1..2"})
      EXPECT_EQ(error_of_args(with(bad)), o.name + ": '" + bad + "' is not a number" + kHow) << o.name << " " << bad;
    for (const std::string bad : {"inf", "-inf", "nan", "infinity"})
      EXPECT_EQ(error_of_args(with(bad)), o.name + ": '" + bad + "' is not a finite number") << o.name << " " << bad;
    EXPECT_EQ(error_of_args(with("1e400")), o.name + ": '1e400' is beyond the range of a double") << o.name;
    // What is written as a decimal number stays accepted.
    for (const std::string good : {"7", "0.5", "-0.5", "1e3", "2.5E-1", "1.", ".5", "0"})
      EXPECT_NO_THROW(parse_cli(with(good))) << o.name << " " << good;
  }
  // The values arrive as written.
  const ParsedCli c = parse_cli({"run", "--target-spread", "2.5e1", "--zipf-s", "1.25", "--time-budget", ".5"});
  EXPECT_EQ(c.run.plan.sampling.target_spread_pct, 25.0);
  EXPECT_EQ(c.run.plan.zipf_s, 1.25);
  EXPECT_EQ(c.run.plan.sampling.time_budget_s, 0.5);
  EXPECT_EQ(parse_cli({"compare", "a", "b", "--max-slowdown", "0.1"}).compare.gate.max_slowdown, 0.1);
}

// Through the binary: one line naming the option, exit 2 (the review's inputs).
TEST(OptionValues, TheBinaryRefusesTheReviewsInputs) {
  TempDir d;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"run --model tiny --device cpu --list-cases --target-spread ''", "--target-spread: '' is not a number" + kHow},
      {"run --model tiny --device cpu --list-cases --target-spread 0x10", "--target-spread: '0x10' is not a number" + kHow},
      {"run --model tiny --device cpu --list-cases --target-spread ' 7'", "--target-spread: ' 7' is not a number" + kHow},
      {"compare a.csv b.csv --max-slowdown ''", "--max-slowdown: '' is not a number" + kHow},
      {"run --model tiny --device cpu --list-cases --length-dist zipf --zipf-s ''", "--zipf-s: '' is not a number" + kHow},
  };
  for (const auto& [args, says] : cases) {
    const test::RunResult r = test::run_attnbench(args, d);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err, "attnbench: error: " + says + "\n") << args;
    EXPECT_TRUE(r.out.empty()) << args << ": " << r.out;
  }
}

// --config: a TOML string where the option takes numbers is refused, naming the key and its line.
TEST(OptionValues, ConfigStringsForNumericOptionsAreRefused) {
  TempDir d;
  const auto config_error = [&](const std::string& text, const std::string& sub = "run") {
    test::write_file(d.file("c.toml"), text);
    std::vector<std::string> args = {sub};
    if (sub == "compare") args = {"compare", "a", "b"};
    args.push_back("--config");
    args.push_back(d.file("c.toml"));
    return error_of_args(args);
  };
  const std::string at = "--config " + d.file("c.toml");
  EXPECT_EQ(config_error("batch = [\"1\"]\n"),
            at + " line 1: --batch takes a number, not the string \"1\" (a TOML string: write the number without quotes)");
  EXPECT_EQ(config_error("model = \"tiny\"\nbatch = [1, \"2\"]\n"),
            at + " line 2: --batch takes a number, not the string \"2\" (a TOML string: write the number without quotes)");
  EXPECT_EQ(config_error("target-spread = \"\"\n"),
            at + " line 1: --target-spread takes a number, not the string \"\" (a TOML string: write the number "
                 "without quotes)");
  EXPECT_EQ(config_error("[run]\ntarget_spread = \"0x10\"\n"),
            at + " line 2: --target_spread takes a number, not the string \"0x10\" (a TOML string: write the number "
                 "without quotes)");
  EXPECT_EQ(config_error("seed = \"5\"\n"),
            at + " line 1: --seed takes a number, not the string \"5\" (a TOML string: write the number without quotes)");
  EXPECT_EQ(config_error("page-size = \"16\"\n", "memory"),
            at + " line 1: --page-size takes a number, not the string \"16\" (a TOML string: write the number without "
                 "quotes)");
  EXPECT_EQ(config_error("max-slowdown = \"0.1\"\n", "compare"),
            at + " line 1: --max-slowdown takes a number, not the string \"0.1\" (a TOML string: write the number "
                 "without quotes)");
  // An alias is the same option: context-len takes a number as context-length does.
  EXPECT_TRUE(test::has(config_error("context-len = \"4096\"\n", "memory"), "line 1: --context-len takes a number"));
  // A TOML float that is not finite reaches the option's check.
  EXPECT_EQ(config_error("target-spread = inf\n"), "--target-spread: 'inf' is not a finite number");

  // Options that take text keep their strings; numbers stay numbers; a seed in [2^63, 2^64) (quoted by the
  // reader, TOML's integers being signed) is no string.
  test::write_file(d.file("ok.toml"),
                   "model = \"tiny\"\nbatch = [1, 2]\ntarget-spread = 7\nzipf-s = 1.5\nkv-cache-dtype = \"auto\"\n"
                   "seed = [18446744073709551615, 3]\n[run]\nmode = [\"decode\"]\n");
  const ParsedCli c = parse_cli({"run", "--config", d.file("ok.toml")});
  EXPECT_EQ(c.run.plan.batches, (std::vector<int>{1, 2}));
  EXPECT_EQ(c.run.plan.sampling.target_spread_pct, 7.0);
  EXPECT_EQ(c.run.plan.zipf_s, 1.5);
  EXPECT_EQ(c.run.plan.seeds, (std::vector<std::uint64_t>{18446744073709551615ULL, 3}));
  test::write_file(d.file("big.toml"), "seed = 18446744073709551615\n");
  EXPECT_EQ(parse_cli({"run", "--config", d.file("big.toml")}).run.plan.seeds,
            std::vector<std::uint64_t>{18446744073709551615ULL});
}

}  // namespace
}  // namespace attnbench
