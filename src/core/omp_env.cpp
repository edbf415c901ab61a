#include "core/omp_env.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "core/errors.hpp"
#include "core/files.hpp"
#include "core/integer_text.hpp"

namespace attnbench {

namespace {
constexpr const char* kMarker = "ATTNBENCH_SET_OMP_WAIT_POLICY";
}

void ensure_passive_omp_wait(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  try {  // parse_cli refuses it (exit 2): not worth a re-exec, which would repeat libgomp's own warning about it
    check_omp_num_threads_env();
  } catch (const InputError&) {
    return;
  }
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  ::setenv(kMarker, "1", 1);
  if (argv && argv[0]) ::execv("/proc/self/exe", argv);  // returns only on failure: carry on without it
}

std::int64_t omp_num_threads_limit(unsigned hardware_threads) {
  return std::max<std::int64_t>(1024, std::int64_t{4} * hardware_threads);
}

std::int64_t omp_num_threads_limit() { return omp_num_threads_limit(std::thread::hardware_concurrency()); }

void check_omp_num_threads(const char* value) {
  if (value == nullptr) return;
  const std::string text(value);
  const std::int64_t limit = omp_num_threads_limit();
  const auto bad = [&](const std::string& why) {
    return InputError("OMP_NUM_THREADS '" + printable(text.substr(0, 80)) + (text.size() > 80 ? "..." : "") +
                      "': " + why);
  };
  std::int64_t threads = 1;  // the product of the levels so far, capped just above the limit
  std::size_t begin = 0;
  for (;;) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, end - begin);
    // Decimal digits, no leading zero: core/integer_text.hpp, as every integer option of attnbench.
    if (const std::string problem = decimal_integer_problem(item); !problem.empty())
      throw bad(problem + " (a number of threads >= 1, or one per nesting level separated by single commas)");
    if (item[0] == '-' || item == "0") throw bad("'" + item + "' is not a number of threads >= 1");
    // Up to 18 digits fit int64; more is beyond any limit.
    const std::int64_t n = item.size() > 18 ? limit + 1 : std::stoll(item);
    threads = std::min(threads * std::min(n, limit + 1), limit + 1);
    if (threads > limit)
      throw bad("more than " + std::to_string(limit) + " threads" +
                (end < text.size() || begin > 0 ? " (its levels multiply)" : "") + " (attnbench's bound: max(1024, 4 x the " +
                std::to_string(std::thread::hardware_concurrency()) +
                " hardware threads); libgomp crashes creating tens of thousands)");
    if (end == text.size()) break;
    begin = end + 1;
  }
}

void check_omp_num_threads_env() { check_omp_num_threads(std::getenv("OMP_NUM_THREADS")); }

std::string omp_wait_policy_description() {
  const char* v = std::getenv("OMP_WAIT_POLICY");
  if (!v) return "unset (OpenMP's default)";
  const char* marker = std::getenv(kMarker);
  return std::string(v) + (marker && std::string(marker) == "1" ? " (set by attnbench)" : " (from the environment)");
}

}  // namespace attnbench
