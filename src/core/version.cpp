#include "core/version.hpp"

namespace attnbench {

extern const char* const kGitCommit;  // generated at build time (cmake/git_commit.cmake)

std::string version() { return ATTNBENCH_VERSION; }
std::string git_commit() { return kGitCommit; }
std::string compiler() { return ATTNBENCH_CXX_COMPILER; }

}  // namespace attnbench
