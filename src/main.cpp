// attnbench: drives SGLang-modelled attention backends through identical workloads, validates every output
// against an independent reference and reports latency and memory. See README.md.
#include "app/main_app.hpp"
#include "core/omp_env.hpp"

int main(int argc, char** argv) {
  attnbench::ensure_passive_omp_wait(argv);  // may re-execute the program once (see omp_env.hpp)
  return attnbench::main_app(argc, argv);
}
