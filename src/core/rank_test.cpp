#include "core/rank_test.hpp"

#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace attnbench {

namespace {

// Counts reach C(10008, 8) ~ 2.5e27 (kExactMaxLarger + kExactMaxSmaller choose kExactMaxSmaller), beyond
// 64 bits and far within 127.
__extension__ typedef __int128 Count;

void check_exact_sizes(std::size_t n1, std::size_t n2) {
  if (std::min(n1, n2) > kExactMaxSmaller || std::max(n1, n2) > kExactMaxLarger)
    throw std::invalid_argument("mann_whitney exact: samples of " + std::to_string(n1) + " and " +
                                std::to_string(n2) + " values are beyond the exact method's bounds");
}

// The coefficients of the Gaussian binomial [small + large choose small]_q: element u counts the ways U = u.
// Built as prod_{i=1..small} (1 - q^(large + i)) / (1 - q^i); after step i the polynomial is
// [large + i choose i]_q, whose coefficients are positive and bounded by C(large + i, i), so no intermediate
// value overflows. Shape: small * large + 1 counts.
std::vector<Count> u_counts(std::size_t n1, std::size_t n2) {
  const std::size_t small = std::min(n1, n2), large = std::max(n1, n2);
  std::vector<Count> c(small * large + 1, 0);
  c[0] = 1;
  std::size_t degree = 0;
  for (std::size_t i = 1; i <= small; ++i) {
    const std::size_t shift = large + i;
    // times (1 - q^shift): degree grows by shift (only up to i * large survives the division below)
    const std::size_t new_degree = degree + shift;
    std::vector<Count> t(new_degree + 1, 0);
    for (std::size_t k = 0; k <= degree; ++k) {
      t[k] += c[k];
      t[k + shift] -= c[k];
    }
    // divided by (1 - q^i): a running sum with stride i; exact, the quotient has degree new_degree - i
    for (std::size_t k = i; k <= new_degree; ++k) t[k] += t[k - i];
    degree = new_degree - i;  // = i * large
    std::copy(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(degree + 1), c.begin());
  }
  return c;
}

Count total_of(const std::vector<Count>& c) {
  Count s = 0;
  for (const Count x : c) s += x;
  return s;
}

long double to_ld(Count x) { return static_cast<long double>(x); }

// C(n1 + n2, n1) as a floating-point number (no overflow for the sizes asked here).
long double binomial(std::size_t n1, std::size_t n2) {
  const std::size_t k = std::min(n1, n2), n = n1 + n2;
  long double r = 1;
  for (std::size_t i = 1; i <= k; ++i) r = r * static_cast<long double>(n - k + i) / static_cast<long double>(i);
  return r;
}

// The asymptotic two-sided p of a standardised statistic.
double normal_p(double z) { return std::min(1.0, std::erfc(std::abs(z) / std::sqrt(2.0))); }

}  // namespace

const char* rank_method_name(RankMethod m) { return m == RankMethod::exact ? "exact" : "asymptotic"; }

RankMethod rank_test_method(std::size_t n1, std::size_t n2, bool ties) {
  if (ties || n1 == 0 || n2 == 0) return RankMethod::asymptotic;
  if (std::min(n1, n2) > kExactMaxSmaller || std::max(n1, n2) > kExactMaxLarger) return RankMethod::asymptotic;
  return RankMethod::exact;
}

std::vector<double> mann_whitney_u_pmf(std::size_t n1, std::size_t n2) {
  check_exact_sizes(n1, n2);
  const std::vector<Count> c = u_counts(n1, n2);
  const long double total = to_ld(total_of(c));
  std::vector<double> p(c.size());
  for (std::size_t u = 0; u < c.size(); ++u) p[u] = static_cast<double>(to_ld(c[u]) / total);
  return p;
}

double mann_whitney_exact_p(std::size_t u, std::size_t n1, std::size_t n2) {
  check_exact_sizes(n1, n2);
  const std::size_t max_u = n1 * n2;
  if (u > max_u)
    throw std::invalid_argument("mann_whitney_exact_p: U = " + std::to_string(u) + " is beyond n1 * n2 = " +
                                std::to_string(max_u));
  const std::vector<Count> c = u_counts(n1, n2);
  const std::size_t tail = std::min(u, max_u - u);  // the distribution is symmetric about n1 n2 / 2
  Count below = 0;
  for (std::size_t k = 0; k <= tail; ++k) below += c[k];
  const long double p = 2.0L * to_ld(below) / to_ld(total_of(c));
  return static_cast<double>(std::min(1.0L, p));
}

double min_reachable_p(std::size_t n1, std::size_t n2) {
  if (n1 == 0 || n2 == 0) return 1.0;
  if (rank_test_method(n1, n2, false) == RankMethod::exact)
    return static_cast<double>(std::min(1.0L, 2.0L / binomial(n1, n2)));
  const double a = static_cast<double>(n1), b = static_cast<double>(n2);
  const double z = (a * b / 2.0 - 0.5) / std::sqrt(a * b * (a + b + 1) / 12.0);
  return normal_p(z);
}

std::size_t min_samples_per_side(double alpha) {
  for (std::size_t n = 1; n <= 1000; ++n)
    if (min_reachable_p(n, n) < alpha) return n;
  return 0;
}

RankTest mann_whitney_test(std::span<const double> a, std::span<const double> b) {
  // U, z and the asymptotic p are core/stats' mann_whitney_u (one rank computation); the exact p replaces the
  // asymptotic one where rank_test_method says so.
  const MannWhitney mw = mann_whitney_u(a, b);
  RankTest r;
  r.u = mw.u;
  r.z = mw.z;
  r.p_value = mw.p_value;
  r.ties = mw.ties;
  r.method = rank_test_method(a.size(), b.size(), r.ties);
  if (r.method == RankMethod::exact) {  // no ties: U is a whole number
    r.p_value = mann_whitney_exact_p(static_cast<std::size_t>(std::llround(r.u)), a.size(), b.size());
    r.min_p = min_reachable_p(a.size(), b.size());
    return r;
  }
  // Asymptotic: the normal p at U = n1 n2 (or 0), with the tie-corrected variance mann_whitney_u computed.
  const double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size());
  r.min_p = mw.var > 0 ? normal_p((n1 * n2 / 2.0 - 0.5) / std::sqrt(mw.var)) : 1.0;
  return r;
}

}  // namespace attnbench
