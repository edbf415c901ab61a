// OpenMP's wait policy for timing on the CPU. OpenMP worker threads that busy-wait between parallel regions
// (OMP_WAIT_POLICY unset: GCC's libgomp spins ~300k iterations before sleeping) steal the cores from whatever
// else runs; on a loaded 2-core machine CPU medians swung from 0.1 ms to 40 ms. attnbench therefore runs with
// OMP_WAIT_POLICY=PASSIVE unless the user set the variable.
#pragma once

#include <string>

namespace attnbench {

// Call first thing in main(), before anything else runs. When OMP_WAIT_POLICY is unset: sets it to PASSIVE
// (and ATTNBENCH_SET_OMP_WAIT_POLICY=1, so that `env` can say who set it), then re-executes the program
// (/proc/self/exe, same argv) once. Why the re-exec: libgomp reads its environment in a shared-library
// constructor, before main(), so a setenv in main() alone reaches only runtimes that read it lazily (LLVM's
// libomp). When the variable is set already, or the re-exec fails, it returns and the program continues.
// Never call it from a process that must not be replaced (the test binary calls main_app directly).
void ensure_passive_omp_wait(char** argv);

// "PASSIVE (set by attnbench)", "ACTIVE (from the environment)", or "unset (OpenMP's default)".
std::string omp_wait_policy_description();

}  // namespace attnbench
