// Golden files of the report writers: tests/report/golden/NAME holds the exact bytes a writer produced when the
// golden was taken. A test compares what the writer produces now with it, byte for byte. To take them again
// (only when an output is meant to change): ATTNBENCH_UPDATE_GOLDEN=1 attnbench_tests --gtest_filter='*Golden*'.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace attnbench::test {

inline void expect_golden(const std::string& name, const std::string& got) {
  const std::string path = std::string(ATTNBENCH_SOURCE_DIR) + "/tests/report/golden/" + name;
  if (std::getenv("ATTNBENCH_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << got;
    return;
  }
  std::ifstream f(path, std::ios::binary);
  ASSERT_TRUE(f) << "no golden file " << path;
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_EQ(ss.str(), got) << "differs from the golden file " << path;
}

}  // namespace attnbench::test
