#include "core/id_filter.hpp"

#include <re2/re2.h>

#include "core/errors.hpp"
#include "core/files.hpp"

namespace attnbench {

namespace {

// The pattern as a message shows it: control characters escaped, at most 80 bytes.
std::string shown(const std::string& pattern) {
  if (pattern.size() <= 80) return printable(pattern);
  return printable(pattern.substr(0, 80)) + "...";
}

}  // namespace

IdFilter::IdFilter(const std::string& pattern, const std::string& option) : pattern_(pattern) {
  if (pattern.size() > kMaxPatternBytes)
    throw InputError(option + ": the regular expression is longer than " + std::to_string(kMaxPatternBytes) +
                     " bytes (" + std::to_string(pattern.size()) + " bytes: '" + shown(pattern) + "')");
  RE2::Options opts;
  opts.set_log_errors(false);  // RE2 would print to stderr; the error is in the exception instead
  re_ = std::make_unique<re2::RE2>(pattern, opts);
  if (!re_->ok())
    throw InputError(option + ": invalid regular expression '" + shown(pattern) + "' (" + printable(re_->error()) +
                     ")");
}

IdFilter::~IdFilter() = default;
IdFilter::IdFilter(IdFilter&&) noexcept = default;
IdFilter& IdFilter::operator=(IdFilter&&) noexcept = default;

bool IdFilter::matches(std::string_view id) const {
  return RE2::PartialMatch(re2::StringPiece(id.data(), id.size()), *re_);
}

}  // namespace attnbench
