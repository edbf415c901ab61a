// OpenMP's wait policy for timing on the CPU. OpenMP worker threads that busy-wait between parallel regions
// (OMP_WAIT_POLICY unset: GCC's libgomp spins ~300k iterations before sleeping) steal the cores from whatever
// else runs; on a loaded 2-core machine CPU medians swung from 0.1 ms to 40 ms. attnbench therefore runs with
// OMP_WAIT_POLICY=PASSIVE unless the user set the variable.
#pragma once

#include <cstdint>
#include <string>

namespace attnbench {

// Call first thing in main(), before anything else runs. When OMP_WAIT_POLICY is unset: sets it to PASSIVE
// (and ATTNBENCH_SET_OMP_WAIT_POLICY=1, so that `env` can say who set it), then re-executes the program
// (/proc/self/exe, same argv) once. Why the re-exec: libgomp reads its environment in a shared-library
// constructor, before main(), so a setenv in main() alone reaches only runtimes that read it lazily (LLVM's
// libomp). When the variable is set already, or the re-exec fails, it returns and the program continues; so
// it does when OMP_NUM_THREADS is refused (check_omp_num_threads: parse_cli then exits 2).
// Never call it from a process that must not be replaced (the test binary calls main_app directly).
void ensure_passive_omp_wait(char** argv);

// OMP_NUM_THREADS as libgomp would use it, checked before OpenMP starts a thread (parse_cli calls it first,
// before any file is opened). libgomp takes the value as given: 100000 crashed attnbench (SIGSEGV inside
// libgomp creating the team), 50000 ended it with "libgomp: Thread creation failed" (exit 1); a value it cannot
// read ("", "0", "-1", "0x10", "4abc", "4,") it ignores with a warning of its own and runs on every core, so a
// timing would not be taken with the threads asked for. Throws InputError naming OMP_NUM_THREADS when `value`
// (the variable's text; nullptr when unset, which is fine) is not a comma-separated list of decimal integers
// >= 1 (libgomp's syntax: one per nesting level; no blanks, signs or leading zeros, as attnbench's integer
// options), or when the threads it can start, the product of the levels, exceed omp_num_threads_limit().
void check_omp_num_threads(const char* value);
// check_omp_num_threads(std::getenv("OMP_NUM_THREADS")).
void check_omp_num_threads_env();

// The most OpenMP threads attnbench accepts: max(1024, 4 x `hardware_threads`) (std::thread's
// hardware_concurrency() by default; 0 when unknown). 4x: oversubscription beyond that only adds contention
// to a timing; 1024 at least: a fixed value a config can rely on on any machine, far below the tens of
// thousands at which libgomp fails, and above the hardware threads of today's largest CPU hosts.
std::int64_t omp_num_threads_limit(unsigned hardware_threads);
std::int64_t omp_num_threads_limit();

// "PASSIVE (set by attnbench)", "ACTIVE (from the environment)", or "unset (OpenMP's default)".
std::string omp_wait_policy_description();

}  // namespace attnbench
