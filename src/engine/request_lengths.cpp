#include "engine/request_lengths.hpp"

#include "core/csv_reading.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>

#include "core/enum_names.hpp"
#include "core/errors.hpp"
#include "core/files.hpp"

namespace attnbench {

namespace {
constexpr EnumName<LengthDist> kLengthDistNames[] = {
    {LengthDist::fixed, "fixed"}, {LengthDist::uniform, "uniform"}, {LengthDist::zipf, "zipf"}};
}  // namespace

LengthDist parse_length_dist(const std::string& s) {
  if (const auto d = enum_from_name(kLengthDistNames, s)) return *d;
  throw InputError("--length-dist: unknown distribution '" + s + "' (expected fixed, uniform or zipf)");
}

std::string_view length_dist_name(LengthDist d) { return enum_name(kLengthDistNames, d); }

namespace {

// Uniform double in [0, 1) from the top 53 bits of one draw (exact; no library distribution involved).
double unit_double(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// Uniform integer in [0, range), range >= 1, without modulo bias: the lowest 2^64 mod range raw values are
// rejected so that the rest is a whole number of copies of [0, range).
std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t range) {
  const std::uint64_t reject_below = (0 - range) % range;
  while (true) {
    const std::uint64_t x = rng();
    if (x >= reject_below) return x % range;
  }
}

// Zipf's law on k in [1, n] with P(k) ~ k^(-s), by rejection-inversion (W. Hormann and G. Derflinger,
// "Rejection-inversion to generate variates from monotone discrete distributions", ACM TOMACS 6(3), 1996;
// the formulation of Apache Commons RNG's RejectionInversionZipfSampler). Constant memory and expected
// time for any n, unlike a CDF table (a 2^24-token range would need 128 MiB).
class ZipfSampler {
 public:
  ZipfSampler(std::int64_t n, double s) : n_(n), s_(s) {
    h_integral_x1_ = h_integral(1.5) - 1.0;
    h_integral_n_ = h_integral(static_cast<double>(n) + 0.5);
    accept_below_ = 2.0 - h_integral_inverse(h_integral(2.5) - h(2.0));
  }

  std::int64_t operator()(std::mt19937_64& rng) const {
    while (true) {
      // Draw x from the continuous hat function by inverting H, round it to k, then accept k when x fell
      // where the hat lies under P(k) (the quick test) or u under P(k)'s share of the cell (the full test).
      const double u = h_integral_n_ + unit_double(rng) * (h_integral_x1_ - h_integral_n_);
      const double x = h_integral_inverse(u);
      const std::int64_t k = std::clamp<std::int64_t>(static_cast<std::int64_t>(x + 0.5), 1, n_);
      if (static_cast<double>(k) - x <= accept_below_ ||
          u >= h_integral(static_cast<double>(k) + 0.5) - h(static_cast<double>(k))) {
        return k;
      }
    }
  }

 private:
  // h(x) = x^-s, the unnormalized probability.
  double h(double x) const { return std::exp(-s_ * std::log(x)); }
  // H(x) = (x^(1-s) - 1) / (1 - s), an antiderivative of h (log x when s == 1), computed stably near s == 1.
  double h_integral(double x) const {
    const double log_x = std::log(x);
    return expm1_over_x((1.0 - s_) * log_x) * log_x;
  }
  // The inverse of H.
  double h_integral_inverse(double x) const {
    const double t = std::max(-1.0, x * (1.0 - s_));
    return std::exp(log1p_over_x(t) * x);
  }
  // log(1 + x) / x and (exp(x) - 1) / x, with their Taylor series near 0 where the quotient loses precision.
  static double log1p_over_x(double x) {
    return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
  }
  static double expm1_over_x(double x) {
    return std::abs(x) > 1e-8 ? std::expm1(x) / x
                              : 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x));
  }

  std::int64_t n_;
  double s_;
  double h_integral_x1_ = 0;
  double h_integral_n_ = 0;
  double accept_below_ = 0;
};

}  // namespace

std::vector<int> draw_lengths(LengthDist d, int n, int lo, int hi, double zipf_s, std::uint64_t seed) {
  if (n < 1) throw InputError("lengths: n " + std::to_string(n) + " < 1");
  if (hi < 1) throw InputError("lengths: hi " + std::to_string(hi) + " < 1");
  if (d != LengthDist::fixed) {
    if (lo < 1) throw InputError("lengths: lo " + std::to_string(lo) + " < 1");
    if (lo > hi) throw InputError("lengths: lo " + std::to_string(lo) + " > hi " + std::to_string(hi));
  }
  if (d == LengthDist::zipf && !(zipf_s > 0 && std::isfinite(zipf_s))) {
    throw InputError("lengths: zipf_s " + std::to_string(zipf_s) + " must be a finite number > 0");
  }

  std::vector<int> out(static_cast<std::size_t>(n), hi);
  if (d == LengthDist::fixed) return out;

  std::mt19937_64 rng(seed);
  const std::int64_t range = static_cast<std::int64_t>(hi) - lo + 1;
  if (d == LengthDist::uniform) {
    for (int& len : out) len = lo + static_cast<int>(uniform_below(rng, static_cast<std::uint64_t>(range)));
  } else {
    const ZipfSampler zipf(range, zipf_s);
    for (int& len : out) len = lo + static_cast<int>(zipf(rng) - 1);
  }
  return out;
}

namespace {

using TraceReader = io::CSVReader<3, io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>>;

// The whole of `cell` as a decimal integer, or nothing (empty, fraction, sign only, trailing junk, overflow).
std::optional<long long> parse_integer(const char* cell) {
  long long v = 0;
  if (!csv::parse_number(cell, v)) return std::nullopt;
  return v;
}

}  // namespace

std::vector<TraceRequest> read_trace(const std::string& path) {
  const std::string shown = printable(path);
  const auto error_at = [&shown](unsigned line, const std::string& what) {
    return InputError("trace " + shown + " line " + std::to_string(line) + ": " + printable(what));
  };
  // Checked and read whole before parsing: a FIFO, a device or a directory is refused without blocking, a file
  // beyond kMaxTraceBytes before it is read, a NUL byte with its line.
  const std::string text = read_input_file(path, "trace", kMaxTraceBytes);
  std::unique_ptr<TraceReader> reader;
  try {
    reader = std::make_unique<TraceReader>(shown, text.data(), text.data() + text.size());
  } catch (const io::error::base& e) {
    throw error_at(1, csv::describe_error(e, ""));
  }

  std::vector<TraceRequest> out;
  try {
    reader->read_header(io::ignore_no_column, "request_id", "prefix_len", "extend_len");
    char* id = nullptr;
    char* prefix_cell = nullptr;
    char* extend_cell = nullptr;
    std::map<std::string, unsigned> id_lines;  // request_id -> its line: an id twice is a pasted row
    while (reader->read_row(id, prefix_cell, extend_cell)) {
      const unsigned line = reader->get_file_line();
      if (out.size() == static_cast<std::size_t>(kMaxTraceRows)) {
        throw error_at(line, "more than " + std::to_string(kMaxTraceRows) + " rows");
      }
      const std::optional<long long> prefix = parse_integer(prefix_cell);
      const std::optional<long long> extend = parse_integer(extend_cell);
      if (!prefix) throw error_at(line, std::string("prefix_len '") + prefix_cell + "' is not an integer");
      if (!extend) throw error_at(line, std::string("extend_len '") + extend_cell + "' is not an integer");
      if (*prefix < 0) throw error_at(line, "prefix_len " + std::to_string(*prefix) + " < 0");
      if (*extend < 1) throw error_at(line, "extend_len " + std::to_string(*extend) + " < 1");
      if (*prefix > kMaxTraceTokens - *extend) {  // prefix + extend > max, written so it cannot overflow
        throw error_at(line, "prefix_len + extend_len (" + std::to_string(*prefix) + " + " +
                                 std::to_string(*extend) + ") > " + std::to_string(kMaxTraceTokens));
      }
      if (*id == '\0') throw error_at(line, "request_id is empty");
      if (const auto [it, fresh] = id_lines.emplace(id, line); !fresh)
        throw error_at(line, std::string("request_id '") + id + "' again (first on line " +
                                 std::to_string(it->second) + "): one row per request");
      out.push_back(TraceRequest{id, static_cast<int>(*prefix), static_cast<int>(*extend)});
    }
  } catch (const io::error::base& e) {
    throw error_at(std::max(1u, reader->get_file_line()), csv::describe_error(e, " (header must be request_id,prefix_len,extend_len)"));
  }
  if (out.empty()) throw error_at(std::max(1u, reader->get_file_line()), "no rows after the header");
  return out;
}

}  // namespace attnbench
