#include "core/version.hpp"

namespace attnbench {

std::string version() { return ATTNBENCH_VERSION; }
std::string git_commit() { return ATTNBENCH_GIT_COMMIT; }
std::string compiler() { return ATTNBENCH_CXX_COMPILER; }

}  // namespace attnbench
