#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnbench {

double percentile_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("percentile_sorted: no samples");
  if (!(q >= 0 && q <= 100))
    throw std::invalid_argument("percentile_sorted: q " + std::to_string(q) + " not in [0, 100]");
  const double pos = static_cast<double>(sorted.size() - 1) * q / 100.0;
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Summary summarize(std::span<const double> samples) {
  Summary s;
  if (samples.empty()) return s;
  for (const double x : samples) {
    if (!std::isfinite(x)) throw std::invalid_argument("summarize: sample is not a finite number");
  }

  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());

  s.n = static_cast<int>(sorted.size());
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = percentile_sorted(sorted, 50);
  s.p10 = percentile_sorted(sorted, 10);
  s.p90 = percentile_sorted(sorted, 90);

  double sum = 0;
  for (const double x : sorted) sum += x;
  s.mean = sum / s.n;
  if (s.n > 1) {
    double sq = 0;
    for (const double x : sorted) sq += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(sq / (s.n - 1));
  }
  s.spread_pct = s.median == 0 ? 0 : (s.p90 - s.p10) / s.median * 100.0;
  return s;
}

}  // namespace attnbench
