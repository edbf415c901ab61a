#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
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

MannWhitney mann_whitney_u(std::span<const double> a, std::span<const double> b) {
  if (a.empty() || b.empty()) throw std::invalid_argument("mann_whitney_u: a sample set is empty");
  struct Obs {
    double v;
    bool from_a;
  };
  std::vector<Obs> all;
  all.reserve(a.size() + b.size());
  for (const double x : a) all.push_back({x, true});
  for (const double x : b) all.push_back({x, false});
  for (const Obs& o : all)
    if (!std::isfinite(o.v)) throw std::invalid_argument("mann_whitney_u: a sample is not a finite number");
  std::sort(all.begin(), all.end(), [](const Obs& x, const Obs& y) { return x.v < y.v; });

  // Mid-ranks (1-based), and the tie term sum(t^3 - t) over groups of equal values.
  const double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size()), n = n1 + n2;
  double rank_sum_a = 0, tie_term = 0;
  bool ties = false;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t k = i;
    while (k < all.size() && all[k].v == all[i].v) ++k;
    const double t = static_cast<double>(k - i);
    if (k - i > 1) ties = true;
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(k)) / 2.0;
    for (std::size_t m = i; m < k; ++m)
      if (all[m].from_a) rank_sum_a += mid_rank;
    tie_term += t * t * t - t;
    i = k;
  }
  MannWhitney r;
  r.ties = ties;
  r.u = rank_sum_a - n1 * (n1 + 1) / 2.0;
  const double mu = n1 * n2 / 2.0;
  const double var = n1 * n2 / 12.0 * ((n + 1) - (n > 1 ? tie_term / (n * (n - 1)) : 0.0));
  r.var = std::max(0.0, var);
  if (var <= 0) return r;  // every value ties: no evidence of a difference (z = 0, p = 1)
  const double d = r.u - mu;
  const double corrected = std::max(0.0, std::abs(d) - 0.5);  // continuity correction towards the mean
  r.z = std::copysign(corrected / std::sqrt(var), d);
  r.p_value = std::min(1.0, std::erfc(std::abs(r.z) / std::sqrt(2.0)));
  return r;
}

namespace {

// The median of `v` (reordered) as percentile_sorted(sorted v, 50) computes it, in linear time: the element of
// rank floor((n - 1) / 2) by selection, its successor the least element above it.
double median_by_selection(std::vector<double>& v) {
  const double pos = static_cast<double>(v.size() - 1) * 50 / 100.0;
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
  const double at_lo = v[lo];
  const double at_hi = hi == lo ? at_lo : *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(hi), v.end());
  return at_lo + (at_hi - at_lo) * frac;
}

}  // namespace

BootstrapBand bootstrap_median_ratio(std::span<const double> a, std::span<const double> b, std::uint64_t seed) {
  if (a.empty() || b.empty()) throw std::invalid_argument("bootstrap_median_ratio: a sample set is empty");
  for (const auto side : {a, b})
    for (const double x : side)
      if (!(std::isfinite(x) && x > 0))
        throw std::invalid_argument("bootstrap_median_ratio: a sample is not a finite number > 0");
  std::mt19937_64 rng(seed);
  // One side: its draws per resample, and (m-out-of-n, beyond the bound) its sample median and the factor
  // sqrt(m / n) that scales a resampled median's distance from it (stats.hpp says why).
  struct Side {
    std::span<const double> from;
    std::vector<double> into;
    double center = 0, scale = 1;
    bool capped = false;
  };
  const auto side = [](std::span<const double> from) {
    Side s{from, std::vector<double>(std::min(from.size(), kMaxBootstrapDraws))};
    s.capped = from.size() > kMaxBootstrapDraws;
    if (s.capped) {
      std::vector<double> all(from.begin(), from.end());
      s.center = median_by_selection(all);
      s.scale = std::sqrt(static_cast<double>(kMaxBootstrapDraws) / static_cast<double>(from.size()));
    }
    return s;
  };
  Side sa = side(a), sb = side(b);
  const auto median_of_resample = [&rng](Side& s) {
    for (double& x : s.into) x = s.from[rng() % s.from.size()];
    const double m = median_by_selection(s.into);
    return s.capped ? s.center + (m - s.center) * s.scale : m;
  };
  std::vector<double> ratios;
  ratios.reserve(kBootstrapResamples);
  for (int i = 0; i < kBootstrapResamples; ++i) {
    const double ma = median_of_resample(sa);  // a's draws first, then b's: the order the band was defined in
    const double mb = median_of_resample(sb);
    ratios.push_back(ma / mb);
  }
  std::sort(ratios.begin(), ratios.end());
  BootstrapBand band;
  band.lo = percentile_sorted(ratios, 5);
  band.hi = percentile_sorted(ratios, 95);
  band.resamples = kBootstrapResamples;
  band.draws_a = sa.into.size();
  band.draws_b = sb.into.size();
  return band;
}

}  // namespace attnbench
