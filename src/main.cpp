// attnbench: drives SGLang-modelled attention backends through identical workloads, validates every output
// against an independent reference and reports latency and memory. See README.md.
#include "app/main_app.hpp"

int main(int argc, char** argv) { return attnbench::main_app(argc, argv); }
