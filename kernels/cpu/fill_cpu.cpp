// Seeded uniform fill on the CPU (semantics in kernels/params.hpp, FillParams); the CUDA twin produces the
// same values. Checked by tests/kernels/fill_cpu_test.cpp.
#include "kernels/cpu/kernels_cpu.hpp"
#include "kernels/random.hpp"

namespace attnbench {

void fill_uniform_cpu(const FillParams& p, void*) {
  const float span = p.hi - p.lo;
#pragma omp parallel for schedule(static) if (p.n > (1 << 16))
  for (std::int64_t i = 0; i < p.n; ++i)
    store_from_float(p.data, i, p.dtype, p.lo + span * uniform_at(p.seed, static_cast<std::uint64_t>(i)));
}

}  // namespace attnbench
