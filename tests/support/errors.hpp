// Helpers for tests of error paths: the message an exception carries, and "rejected, naming the culprit".
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/errors.hpp"

namespace attnbench::test {

// The message of the E that f() throws; a test failure and "" when it throws none.
template <typename E = InputError, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception of the expected type";
  return "";
}

// Expects f() to throw an InputError whose message contains `culprit` (an option, key or file name).
template <typename F>
void expect_input_error(F&& f, const std::string& culprit) {
  try {
    f();
    ADD_FAILURE() << "accepted; expected an error naming " << culprit;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(culprit), std::string::npos) << e.what();
  }
}

}  // namespace attnbench::test
