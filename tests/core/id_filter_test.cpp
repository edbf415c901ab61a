// core/id_filter: --filter on RE2 keeps std::regex's search semantics for ordinary patterns, and hostile
// patterns are clean errors or linear-time matches.
#include "core/id_filter.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "core/errors.hpp"

namespace attnbench {
namespace {

std::string error_of(const std::string& pattern) {
  try {
    IdFilter f(pattern);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << pattern.substr(0, 60);
  return "";
}

TEST(IdFilter, SameMatchesAsStdRegexSearchOnOrdinaryPatterns) {
  const std::vector<std::string> ids = {
      "decode/llama-3.1-8b/b=64/kv=4096/p=16/bf16",
      "decode/tiny/b=3/kv=70/p=16/fp32",
      "extend/tiny/b=3/prefix=37/ext=20/p=16/bf16",
      "verify/gemma-3-12b/b=16/kv=4096/draft=4/p=64/fp16",
      "decode/llama-3.1-70b-tp8/b=256/kv=16384/p=64/bf16/seed=2",
      "",
  };
  const std::vector<std::string> patterns = {
      "", "b=64", "decode|extend", "^decode/", "bf16$", "kv=(1024|4096)", "b=\\d+/kv", ".*tiny.*", "[dv]e",
      "p=16/bf16$", "DECODE", "x{2}", "6+4", "^(extend|verify)/.*/p=(16|64)/", "llama-3\\.1", "llama-3.1",
      "seed=[0-9]", "[^/]+/tiny", "b=3/", "\\bkv", "4096/p", "^$", "(?:b|kv)=4096", "ext=2\\d",
  };
  for (const auto& p : patterns) {
    const IdFilter f(p);
    const std::regex re(p);
    EXPECT_EQ(f.pattern(), p);
    for (const auto& id : ids) EXPECT_EQ(f.matches(id), std::regex_search(id, re)) << "'" << p << "' on '" << id << "'";
  }
}

TEST(IdFilter, CatastrophicBacktrackingPatternsMatchInLinearTime) {
  // std::regex takes exponential time on these; RE2 answers correctly at once.
  const std::string as(100000, 'a');
  const IdFilter nested_star("(a*)*b");
  EXPECT_FALSE(nested_star.matches(as));
  EXPECT_TRUE(nested_star.matches(as + "b"));
  const IdFilter alternation("^(a|aa)+$");
  EXPECT_TRUE(alternation.matches(as));
  EXPECT_FALSE(alternation.matches(as + "c"));
  const IdFilter nested_plus("(x+x+)+y");
  EXPECT_FALSE(nested_plus.matches(std::string(50000, 'x')));
}

TEST(IdFilter, DeepNestingIsACleanError) {
  // 20,000 nested parentheses overflow std::regex's recursive parser (a crash); here a length error.
  const std::string deep = std::string(20000, '(') + "a" + std::string(20000, ')');
  const std::string e = error_of(deep);
  EXPECT_EQ(e.rfind("--filter: the regular expression is longer than 1000 bytes (40001 bytes: '((((", 0), 0u) << e;
  EXPECT_LT(e.size(), 200u);  // the pattern is cut, not echoed whole
  // Within the length bound, nesting works (RE2's own limit is 1,000 levels).
  const IdFilter ok(std::string(400, '(') + "a" + std::string(400, ')'));
  EXPECT_TRUE(ok.matches("xay"));
  EXPECT_FALSE(ok.matches("xyz"));
  EXPECT_NO_THROW(IdFilter(std::string(IdFilter::kMaxPatternBytes, 'a')));
  EXPECT_THROW(IdFilter(std::string(IdFilter::kMaxPatternBytes + 1, 'a')), InputError);
}

TEST(IdFilter, BadPatternsNameTheOptionAndThePattern) {
  EXPECT_EQ(error_of("("), "--filter: invalid regular expression '(' (missing ): ()");
  EXPECT_EQ(error_of("b=[64"), "--filter: invalid regular expression 'b=[64' (missing ]: [64)");
  EXPECT_EQ(error_of("*x").rfind("--filter: invalid regular expression '*x' (", 0), 0u);
  // What RE2 does not do: back-references, look-around.
  EXPECT_EQ(error_of("(a)\\1").rfind("--filter: invalid regular expression '(a)\\1' (", 0), 0u);
  EXPECT_EQ(error_of("(?=a)b").rfind("--filter: invalid regular expression '(?=a)b' (", 0), 0u);
  // Repetition counts are bounded too.
  EXPECT_NE(error_of("a{1001}").find("invalid regular expression"), std::string::npos);
  EXPECT_NE(error_of("((a{100}){100}){100}").find("invalid regular expression"), std::string::npos);
  // A control character in the pattern is escaped in the message.
  const std::string e = error_of("\x1b[31m(");
  EXPECT_EQ(e.find('\x1b'), std::string::npos) << e;
  EXPECT_NE(e.find("'\\x1b[31m('"), std::string::npos) << e;
  // Another option name.
  try {
    IdFilter f("(", "--peers-filter");
    ADD_FAILURE();
  } catch (const InputError& err) {
    EXPECT_EQ(std::string(err.what()).rfind("--peers-filter: invalid regular expression", 0), 0u);
  }
}

TEST(IdFilter, MovesKeepTheCompiledPattern) {
  IdFilter a("b=64");
  IdFilter b(std::move(a));
  EXPECT_TRUE(b.matches("decode/x/b=64/kv=1"));
  IdFilter c("zzz");
  c = std::move(b);
  EXPECT_TRUE(c.matches("b=64"));
  EXPECT_EQ(c.pattern(), "b=64");
}

}  // namespace
}  // namespace attnbench
