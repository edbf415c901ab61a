// The small cases the backend and runner tests drive on the CPU: one case of a model preset in one mode, 3
// requests at 70 cached tokens (or `prefix` cached + 20 new for extend), page 16, every registered backend.
#pragma once

#include <string>

#include "backends/registry.hpp"
#include "runner/plan.hpp"

namespace attnbench::test {

inline Case tiny_case(const std::string& mode, const std::string& model = "tiny", int prefix = 37) {
  RunPlan p;
  p.models = {model};
  p.modes = {mode};
  p.batches = {3};
  p.kv_lens = {70};
  p.prefix_lens = {prefix};
  p.extend_lens = {20};
  p.page_sizes = {16};
  p.backends = backend_names();
  return expand_cases(p).at(0);
}

}  // namespace attnbench::test
