#include "core/omp_env.hpp"

#include <unistd.h>

#include <cstdlib>

namespace attnbench {

namespace {
constexpr const char* kMarker = "ATTNBENCH_SET_OMP_WAIT_POLICY";
}

void ensure_passive_omp_wait(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  ::setenv(kMarker, "1", 1);
  if (argv && argv[0]) ::execv("/proc/self/exe", argv);  // returns only on failure: carry on without it
}

std::string omp_wait_policy_description() {
  const char* v = std::getenv("OMP_WAIT_POLICY");
  if (!v) return "unset (OpenMP's default)";
  const char* marker = std::getenv(kMarker);
  return std::string(v) + (marker && std::string(marker) == "1" ? " (set by attnbench)" : " (from the environment)");
}

}  // namespace attnbench
