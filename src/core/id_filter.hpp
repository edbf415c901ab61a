// The --filter of `run` / `validate`: a regular expression searched in each case id, on RE2, whose matching
// takes time linear in the id's length whatever the pattern (std::regex backtracks: "(a*)*b" hangs it, and
// 20,000 nested parentheses overflow its recursive parser's stack).
// Semantics for ordinary patterns are those std::regex (ECMAScript) gave the old --filter: a search anywhere in
// the id ("b=64" matches "decode/tiny/b=64/..."), alternation "a|b", ".*", classes, anchors ^ and $, \d.
// Not supported (RE2 has no backtracking): back-references and look-around; such a pattern is a clean error.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace attnbench {

class IdFilter {
 public:
  // Longest pattern accepted, in bytes: far beyond any useful case-id filter, and it bounds nesting
  // (RE2 also refuses nesting deeper than 1,000 on its own) and the compiled program's size.
  static constexpr std::size_t kMaxPatternBytes = 1000;

  // Compiles `pattern`. Throws InputError "<option>: invalid regular expression 'PATTERN' (reason)" for a bad
  // pattern, and "<option>: the regular expression is longer than 1000 bytes (N bytes)" for a long one (the
  // pattern is echoed with control characters escaped, and cut to its first 80 bytes when long).
  // The empty pattern matches every id.
  explicit IdFilter(const std::string& pattern, const std::string& option = "--filter");
  ~IdFilter();
  IdFilter(IdFilter&&) noexcept;
  IdFilter& operator=(IdFilter&&) noexcept;

  // Whether the pattern matches somewhere in `id` (a search, not a full match).
  bool matches(std::string_view id) const;

  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  std::unique_ptr<re2::RE2> re_;
};

}  // namespace attnbench
