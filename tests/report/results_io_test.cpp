// Results I/O. The CSV: golden header, cell formatting, bit-exact write -> read round trip, flushing after
// each row, and the reader's errors (schema version, missing column, bad number). The JSON report: typed
// rows, exact bytes, read back with every column, the raw samples and the ledger, and its reader's errors.
#include "report/results_io.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <filesystem>
#include <functional>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/case_id.hpp"
#include "core/errors.hpp"
#include "core/stats.hpp"
#include "report/markdown.hpp"
#include "support/backend_catalog.hpp"
#include "support/errors.hpp"
#include "support/golden.hpp"
#include "support/result_rows.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

constexpr const char* kGoldenHeader =
    "schema_version,case_id,backend,device,sglang_version,arch,mode,timing,status,note,model,layers,batch,q_tokens,kv_len_mean,"
    "kv_len_max,prefix_len_mean,num_qo_heads,num_kv_heads,head_dim,page_size,dtype,sliding_window,seed,"
    "step_median_us,step_p10_us,step_p90_us,step_min_us,step_max_us,step_spread_pct,samples,"
    "metadata_median_us,forward_median_us,tflops,tb_per_s,bw_fraction,ctor_device_bytes,ctor_pinned_bytes,"
    "ctor_driver_delta_bytes,graph_state_device_bytes,capture_device_bytes,capture_pinned_bytes,"
    "step_peak_device_bytes,ref_max_abs_err,ref_rel_l2_err,ref_mismatch_frac,ref_pass,bitwise_equal_to,repro";

// A fully populated row: every optional set.
ResultRow full_row() {
  ResultRow r;
  r.case_id = "decode/llama-3.1-8b/b=64/kv=4096/p=16/bf16/seed=42";
  r.backend = "trtllm_mha";
  r.device = "NVIDIA H200";
  r.mode = "decode";
  r.timing = "graph";
  r.status = RowStatus::ok;
  r.note = "";
  r.model = "llama-3.1-8b";
  r.layers = 32;
  r.batch = 64;
  r.q_tokens = 64;
  r.kv_len_mean = 4096.5;
  r.kv_len_max = 8192;
  r.prefix_len_mean = 4095.5;
  r.num_qo_heads = 32;
  r.num_kv_heads = 8;
  r.head_dim = 128;
  r.page_size = 16;
  r.dtype = "bf16";
  r.sliding_window = -1;
  r.seed = 42;
  r.step_median_us = 123456789.123;
  r.step_p10_us = 1e-300;  // min <= p10 <= median <= p90 <= max, each an edge of the double format
  r.step_p90_us = 123456789.5;
  r.step_min_us = std::numeric_limits<double>::denorm_min();
  r.step_max_us = std::numeric_limits<double>::max();
  r.step_spread_pct = -0.0;
  r.samples = 200;
  r.metadata_median_us = 1.0 / 3.0;
  r.forward_median_us = 2.5e-7;
  r.tflops = 312.000000001;
  r.tb_per_s = 4.8;
  r.bw_fraction = 0.87;
  r.ctor_device_bytes = 402653184;
  r.ctor_pinned_bytes = 33554432;
  r.ctor_driver_delta_bytes = std::numeric_limits<std::int64_t>::min();
  r.graph_state_device_bytes = std::numeric_limits<std::int64_t>::max();
  r.capture_device_bytes = 0;
  r.capture_pinned_bytes = 2097152;  // byte columns are >= 0 (ctor_driver_delta_bytes, a difference, may be < 0)
  r.step_peak_device_bytes = 1;
  r.ref_max_abs_err = 0.0078125;
  r.ref_rel_l2_err = 3.0517578125e-05;
  r.ref_mismatch_frac = 0;
  r.ref_pass = true;
  r.bitwise_equal_to = "trtllm_mha_legacy";
  r.repro = "attnbench run --backend trtllm_mha --mode decode --batch 64 --kv-len 4096";
  return r;
}

// A skipped row: text with separators and quotes, every optional empty.
ResultRow sparse_row() {
  ResultRow r;
  r.case_id = "extend/gemma-3-27b/b=1/prefix=0/ext=128/p=1/fp16/seed=18446744073709551615";
  r.backend = "flashinfer";
  r.device = "cpu";
  r.mode = "extend";
  r.timing = "eager";
  r.status = RowStatus::skipped;
  r.note = "unsupported: \"sliding window\", page_size 1 only,\rsee notes";
  r.model = "gemma-3-27b";
  r.layers = 62;
  r.batch = 1;
  r.q_tokens = 128;
  r.page_size = 1;
  r.dtype = "fp16";
  r.sliding_window = 1024;
  r.seed = std::numeric_limits<std::uint64_t>::max();
  r.ref_pass = false;
  r.repro = "attnbench run --note \"a, b\" --mode extend";
  return r;
}

std::uint64_t bits(double d) { return std::bit_cast<std::uint64_t>(d); }

// Every double column compared by bit pattern (operator== would call -0.0 and 0.0 equal).
void expect_bitwise_equal(const ResultRow& a, const ResultRow& b) {
  const std::optional<double> ResultRow::*doubles[] = {
      &ResultRow::kv_len_mean,       &ResultRow::prefix_len_mean, &ResultRow::step_median_us,
      &ResultRow::step_p10_us,       &ResultRow::step_p90_us,     &ResultRow::step_min_us,
      &ResultRow::step_max_us,       &ResultRow::step_spread_pct, &ResultRow::metadata_median_us,
      &ResultRow::forward_median_us, &ResultRow::tflops,          &ResultRow::tb_per_s,
      &ResultRow::bw_fraction,       &ResultRow::ref_max_abs_err, &ResultRow::ref_rel_l2_err,
      &ResultRow::ref_mismatch_frac};
  for (const auto m : doubles) {
    ASSERT_EQ((a.*m).has_value(), (b.*m).has_value());
    if ((a.*m).has_value()) {
      EXPECT_EQ(bits(*(a.*m)), bits(*(b.*m))) << *(a.*m) << " vs " << *(b.*m);
    }
  }
  EXPECT_EQ(a, b);
}

class ResultsCsvFiles : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return dir_.file(name); }
  std::string write_file(const std::string& name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
    return path(name);
  }
  static std::string slurp(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static std::string read_error(const std::string& p) {
    try {
      read_results_csv(p);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no InputError";
  }

  test::TempDir dir_;
};

TEST(ResultsCsv, HeaderIsExactlyTheSchema) {
  EXPECT_EQ(results_csv_header(), kGoldenHeader);
  const std::vector<std::string>& cols = results_csv_columns();
  ASSERT_EQ(cols.size(), 49u);
  EXPECT_EQ(cols.front(), "schema_version");
  EXPECT_EQ(cols.back(), "repro");
  std::string joined;
  for (const std::string& c : cols) joined += (joined.empty() ? "" : ",") + c;
  EXPECT_EQ(joined, kGoldenHeader);
  EXPECT_EQ(kResultsSchemaVersion, 2);
}

TEST(ResultsCsv, LineFormatsCells) {
  const std::string line = results_csv_line(sparse_row());
  EXPECT_EQ(
      line,
      "2,extend/gemma-3-27b/b=1/prefix=0/ext=128/p=1/fp16/seed=18446744073709551615,flashinfer,cpu,,,extend,"
      "eager,skipped,"
      "\"unsupported: \"\"sliding window\"\", page_size 1 only,\rsee notes\","
      "gemma-3-27b,62,1,128,,,,0,0,0,1,fp16,1024,18446744073709551615,"
      ",,,,,,0,,,,,,,,,,,,,,,,0,,"
      "\"attnbench run --note \"\"a, b\"\" --mode extend\"");

  ResultRow r;
  r.step_median_us = 0.1;
  r.tflops = 1e-300;
  r.kv_len_max = -5;
  r.note = "plain text: no quoting";
  r.repro = "two\nlines";
  const std::string l = results_csv_line(r);
  EXPECT_NE(l.find(",plain text: no quoting,"), std::string::npos) << l;
  EXPECT_NE(l.find(",0.1,"), std::string::npos) << l;  // shortest form, not 0.10000000000000001
  EXPECT_NE(l.find(",1e-300,"), std::string::npos) << l;
  EXPECT_NE(l.find(",-5,"), std::string::npos) << l;
  EXPECT_EQ(l.substr(l.size() - 12), ",\"two\nlines\"") << l;  // LF forces quoting
}

TEST_F(ResultsCsvFiles, RoundTripIsBitExact) {
  const std::string p = path("results.csv");
  // Every optional empty, every number 0; the enumerated columns hold allowed values, and the case_id agrees
  // with the columns it names.
  ResultRow minimal;
  minimal.case_id = "verify/m/b=0/kv=0/draft=0/p=0/bf16/seed=0";
  minimal.model = "m";
  minimal.dtype = "bf16";
  minimal.mode = "verify";
  minimal.timing = "eager";
  minimal.status = RowStatus::failed;
  const std::vector<ResultRow> written = {full_row(), sparse_row(), minimal};
  {
    ResultsCsvWriter w(p);
    for (const ResultRow& r : written) w.write(r);
  }
  const std::vector<ResultRow> read = read_results_csv(p);
  ASSERT_EQ(read.size(), written.size());
  for (std::size_t i = 0; i < read.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    expect_bitwise_equal(read[i], written[i]);
  }
  EXPECT_EQ(bits(*read[0].step_spread_pct), bits(-0.0));
  EXPECT_EQ(*read[0].step_p10_us, 1e-300);
  EXPECT_EQ(*read[0].step_p90_us, 123456789.5);
  EXPECT_EQ(*read[0].step_median_us, 123456789.123);
  EXPECT_EQ(read[1].note, "unsupported: \"sliding window\", page_size 1 only,\rsee notes");
  EXPECT_EQ(read[1].repro, "attnbench run --note \"a, b\" --mode extend");
  EXPECT_FALSE(read[1].tflops.has_value());
  EXPECT_FALSE(read[1].ctor_device_bytes.has_value());
  EXPECT_EQ(read[1].ref_pass, std::optional<bool>(false));
  EXPECT_FALSE(read[2].ref_pass.has_value());
}

TEST_F(ResultsCsvFiles, NonFiniteErrorsAreWrittenEmpty) {
  // A garbage output gives a NaN or infinite error; the row must still be written and read back. The CSV
  // writes non-finite numbers as empty cells, as the JSON report writes them null: no reader takes them.
  ResultRow r = full_row();
  r.ref_max_abs_err = std::numeric_limits<double>::quiet_NaN();
  r.ref_rel_l2_err = std::numeric_limits<double>::infinity();
  r.ref_mismatch_frac = -std::numeric_limits<double>::infinity();
  const std::string p = path("nan.csv");
  ResultsCsvWriter(p).write(r);
  const std::vector<ResultRow> read = read_results_csv(p);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_FALSE(read[0].ref_max_abs_err.has_value());
  EXPECT_FALSE(read[0].ref_rel_l2_err.has_value());
  EXPECT_FALSE(read[0].ref_mismatch_frac.has_value());
  // The row said pass; beside an error that is not a number that is no pass: written 0, in both formats.
  EXPECT_EQ(read[0].ref_pass, std::optional<bool>(false));
  EXPECT_TRUE(row_failed(read[0]));
  const std::string j = path("nan.json");
  write_results_json(j, {}, "cmd", {r});
  EXPECT_EQ(load_result_set(j).rows.at(0).ref_pass, std::optional<bool>(false));
}

// ref_pass as written: a 1 only beside both error figures, finite; 0 and empty stay what they are.
TEST(ResultsRefPass, APassNeedsBothErrorFigures) {
  ResultRow r = full_row();
  ASSERT_EQ(r.ref_pass, std::optional<bool>(true));
  EXPECT_EQ(ref_pass_as_written(r), std::optional<bool>(true));
  EXPECT_FALSE(row_failed(r));
  for (const auto member : {&ResultRow::ref_max_abs_err, &ResultRow::ref_rel_l2_err}) {
    for (const std::optional<double> bad : {std::optional<double>(std::numeric_limits<double>::quiet_NaN()),
                                            std::optional<double>(std::numeric_limits<double>::infinity()),
                                            std::optional<double>()}) {
      ResultRow x = full_row();
      x.*member = bad;
      EXPECT_EQ(ref_pass_as_written(x), std::optional<bool>(false));
      EXPECT_TRUE(row_failed(x));
      // Both writers: the CSV line (read back) and the typed cells the JSON report is written from.
      test::TempDir d;
      test::write_file(d.file("x.csv"), results_csv_header() + "\n" + results_csv_line(x) + "\n");
      EXPECT_EQ(read_results_csv(d.file("x.csv")).at(0).ref_pass, std::optional<bool>(false));
      const auto& cols = results_csv_columns();
      const auto at = static_cast<std::size_t>(std::find(cols.begin(), cols.end(), "ref_pass") - cols.begin());
      ASSERT_LT(at, cols.size());
      const ResultCell cell = result_row_cells(x).at(at);
      ASSERT_TRUE(std::holds_alternative<bool>(cell));
      EXPECT_FALSE(std::get<bool>(cell));
    }
  }
  ResultRow zero = full_row();
  zero.ref_pass = false;
  zero.ref_max_abs_err.reset();
  EXPECT_EQ(ref_pass_as_written(zero), std::optional<bool>(false));
  zero.ref_pass.reset();
  EXPECT_EQ(ref_pass_as_written(zero), std::nullopt);
  EXPECT_FALSE(row_failed(zero));
}

// A file that says ref_pass 1 beside an empty error (not attnbench's writer: it writes 0 there) is bad input,
// named by file and line: the peer tables would otherwise print it as a pass. Only on ok rows; a 0 beside an
// empty error, or a 1 on a row that did not finish, is read as before.
TEST_F(ResultsCsvFiles, APassWithoutItsErrorFiguresIsRefused) {
  const std::string h = std::string(kGoldenHeader) + "\n";
  const std::string good = results_csv_line(full_row());
  const auto with = [&](std::vector<std::pair<std::string, std::string>> cells) {
    std::vector<std::string> c;
    std::stringstream ss(good);
    for (std::string x; std::getline(ss, x, ',');) c.push_back(x);
    const auto& cols = results_csv_columns();
    for (std::size_t k = 0; k < cols.size(); ++k)
      for (const auto& [col, v] : cells)
        if (cols[k] == col) c[k] = v;
    std::string line;
    for (const std::string& x : c) line += (line.empty() ? "" : ",") + x;
    return line;
  };
  const std::string both = write_file("both.csv", h + good + "\n" + with({{"ref_max_abs_err", ""}, {"ref_rel_l2_err", ""}}) + "\n");
  EXPECT_EQ(read_error(both), "results " + both +
                                  " line 3: ref_pass 1 with ref_max_abs_err empty: a reference pass of an ok row needs "
                                  "both ref_max_abs_err and ref_rel_l2_err (attnbench writes ref_pass 0 beside an "
                                  "error that is not a number)");
  const std::string rel = write_file("rel.csv", h + with({{"ref_rel_l2_err", ""}}) + "\n");
  EXPECT_THAT(read_error(rel), ::testing::HasSubstr("results " + rel + " line 2: ref_pass 1 with ref_rel_l2_err empty"));
  try {  // load_result_set (compare, report, --peers) refuses it the same way
    load_result_set(rel);
    ADD_FAILURE() << "accepted by load_result_set";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), read_error(rel));
  }
  // A pass with elements outside the tolerance contradicts itself (ErrorStats::pass: no mismatch); a fraction
  // above 1 is no fraction. A failed check with mismatches stays readable.
  const std::string mism = write_file("mism.csv", h + with({{"ref_mismatch_frac", "0.25"}}) + "\n");
  EXPECT_EQ(read_error(mism), "results " + mism + " line 2: ref_pass 1 with ref_mismatch_frac 0.25: a reference pass "
                                                   "has no element outside the tolerance");
  const std::string over = write_file("over.csv", h + with({{"ref_mismatch_frac", "1.5"}, {"ref_pass", "0"}}) + "\n");
  EXPECT_EQ(read_error(over), "results " + over + " line 2: ref_mismatch_frac 1.5 is above 1 (a fraction of the elements)");
  const std::string failed = write_file("failed.csv", h + with({{"ref_mismatch_frac", "0.25"}, {"ref_pass", "0"}}) + "\n");
  ASSERT_EQ(read_results_csv(failed).size(), 1u);
  EXPECT_EQ(read_results_csv(failed)[0].ref_mismatch_frac, std::optional<double>(0.25));
  // What stays readable: ref_pass 0 or empty beside empty errors; a failed row that kept its ref_pass 1.
  const std::string zero = write_file("zero.csv", h + with({{"ref_max_abs_err", ""}, {"ref_rel_l2_err", ""}, {"ref_pass", "0"}, {"backend", "a"}}) + "\n" +
                                                  with({{"ref_max_abs_err", ""}, {"ref_rel_l2_err", ""}, {"ref_pass", ""}, {"backend", "b"}}) + "\n" +
                                                  with({{"ref_max_abs_err", ""}, {"ref_rel_l2_err", ""}, {"status", "failed"}, {"backend", "c"}}) + "\n");
  const std::vector<ResultRow> read = read_results_csv(zero);
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[0].ref_pass, std::optional<bool>(false));
  EXPECT_FALSE(read[1].ref_pass.has_value());
  EXPECT_EQ(read[2].ref_pass, std::optional<bool>(true));
  // The JSON report: the same rule, naming the row.
  test::TempDir d;
  write_results_json(d.file("r.json"), {}, "cmd", {full_row()});
  auto j = nlohmann::json::parse(test::read_file(d.file("r.json")));
  j["rows"][0]["ref_max_abs_err"] = nullptr;
  test::write_file(d.file("null.json"), j.dump());
  try {
    load_result_set(d.file("null.json"));
    ADD_FAILURE() << "null error beside ref_pass true accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(std::string(e.what()),
                ::testing::StartsWith("results " + d.file("null.json") + ": row 0: ref_pass 1 with ref_max_abs_err empty"));
  }
}

// Every column's domain: the first offending column is named with its value and what it should be.
TEST_F(ResultsCsvFiles, ValuesOutsideTheirDomainAreRefused) {
  const std::string good = results_csv_line(full_row());
  const std::string h = std::string(kGoldenHeader) + "\n";
  struct Bad {
    std::string column, cell, want;
  };
  const std::vector<Bad> bad = {
      {"status", "done", "status 'done' is not ok, skipped, failed or oom"},
      {"status", "", "status '' is not ok, skipped, failed or oom"},
      {"status", "OK", "status 'OK' is not ok, skipped, failed or oom"},
      {"mode", "prefill", "mode 'prefill' is not decode, extend or verify"},
      {"timing", "cuda-graph", "timing 'cuda-graph' is not eager or graph"},
      {"step_median_us", "nan", "step_median_us 'nan' is not a finite number >= 0"},
      {"step_median_us", "-nan", "step_median_us '-nan' is not a finite number >= 0"},
      {"step_p10_us", "inf", "step_p10_us 'inf' is not a finite number >= 0"},
      {"step_p90_us", "-inf", "step_p90_us '-inf' is not a finite number >= 0"},
      {"step_min_us", "-0.5", "step_min_us '-0.5' is not a finite number >= 0"},
      {"step_spread_pct", "-1", "step_spread_pct '-1' is not a finite number >= 0"},
      {"metadata_median_us", "1e999", "metadata_median_us"},  // from_chars: out of range, not a number
      {"forward_median_us", "-3", "forward_median_us '-3' is not a finite number >= 0"},
      {"tflops", "nan", "tflops 'nan' is not a finite number >= 0"},
      {"tb_per_s", "-4.8", "tb_per_s '-4.8' is not a finite number >= 0"},
      {"bw_fraction", "-0.1", "bw_fraction '-0.1' is not a finite number >= 0"},
      {"kv_len_mean", "-1", "kv_len_mean '-1' is not a finite number >= 0"},
      {"kv_len_max", "-1", "kv_len_max '-1' is not an integer >= 0"},
      {"ctor_device_bytes", "-1", "ctor_device_bytes '-1' is not an integer >= 0"},
      {"capture_pinned_bytes", "-2097152", "capture_pinned_bytes '-2097152' is not an integer >= 0"},
      {"step_peak_device_bytes", "-8", "step_peak_device_bytes '-8' is not an integer >= 0"},
      {"ref_max_abs_err", "nan", "ref_max_abs_err 'nan' is not a finite number >= 0"},
      {"ref_rel_l2_err", "inf", "ref_rel_l2_err 'inf' is not a finite number >= 0"},
      {"ref_mismatch_frac", "-0.5", "ref_mismatch_frac '-0.5' is not a finite number >= 0"},
      {"samples", "-1", "samples '-1' is not an integer >= 0"},
      {"ref_pass", "2", "ref_pass '2' is not 1, 0 or empty"},
  };
  for (std::size_t i = 0; i < bad.size(); ++i) {
    std::vector<std::string> cells;
    std::stringstream ss(good);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    const auto& cols = results_csv_columns();
    for (std::size_t k = 0; k < cols.size(); ++k)
      if (cols[k] == bad[i].column) cells[k] = bad[i].cell;
    std::string line;
    for (const std::string& c : cells) line += (line.empty() ? "" : ",") + c;
    const std::string p = write_file("domain" + std::to_string(i) + ".csv", h + good + "\n" + line + "\n");
    const std::string e = read_error(p);
    EXPECT_EQ(e.rfind("results " + p + " line 3: ", 0), 0u) << e;
    EXPECT_NE(e.find(bad[i].want), std::string::npos) << e;
    // load_result_set (compare, report, --peers) refuses it the same way.
    try {
      load_result_set(p);
      ADD_FAILURE() << bad[i].column << " '" << bad[i].cell << "' accepted by load_result_set";
    } catch (const InputError& x) {
      EXPECT_EQ(std::string(x.what()), e);
    }
  }
  // The edges that are in the domain: -0, 0, the largest double, a negative driver delta.
  ResultRow edge = full_row();
  edge.step_spread_pct = -0.0;
  edge.tflops = 0;
  edge.step_max_us = std::numeric_limits<double>::max();
  edge.ctor_driver_delta_bytes = -2097152;
  EXPECT_EQ(result_row_domain_error(edge), "");
}

TEST(ResultsDomain, FirstOffendingColumnNamedAndSamplesChecked) {
  ResultRow r = test::llama_row(test::kLlamaDecode, "trtllm_mha", "graph");
  EXPECT_EQ(result_row_domain_error(r), "");
  r.step_median_us = std::numeric_limits<double>::quiet_NaN();
  r.status = static_cast<RowStatus>(99);  // a value outside the enum (readers refuse unknown text)
  EXPECT_EQ(result_row_domain_error(r), "status '?' is not ok, skipped, failed or oom");
  r.status = RowStatus::oom;
  EXPECT_EQ(result_row_domain_error(r), "step_median_us 'nan' is not a finite number >= 0");
  r.mode = "decode\x1b[2J";  // control bytes are escaped in the message
  EXPECT_EQ(result_row_domain_error(r), "mode 'decode\\x1b[2J' is not decode, extend or verify");
  EXPECT_EQ(samples_domain_error(std::vector<double>{1, 0, 2.5}), "");
  EXPECT_EQ(samples_domain_error(std::vector<double>{1, -1}), "samples_us[1] '-1' is not a finite number >= 0");
  EXPECT_EQ(samples_domain_error(std::vector<double>{std::numeric_limits<double>::infinity()}),
            "samples_us[0] 'inf' is not a finite number >= 0");
}

// The columns a case_id names agree with it (a row is paired by its id and printed by its columns): the first
// contradicting column is named with its value, the id and what the id says; an id the runner never writes is
// refused too (nothing could be checked against it).
TEST(ResultsDomain, ColumnsThatContradictTheCaseIdAreRefused) {
  ResultRow r = full_row();  // decode/llama-3.1-8b/b=64/kv=4096/p=16/bf16/seed=42
  ASSERT_EQ(result_row_domain_error(r), "");
  const std::string id = r.case_id;
  const auto error_with = [&](auto ResultRow::*m, auto value) {
    ResultRow x = r;
    x.*m = value;
    return result_row_domain_error(x);
  };
  EXPECT_EQ(error_with(&ResultRow::mode, std::string("extend")),
            "mode 'extend' contradicts case_id '" + id + "' (mode decode)");
  EXPECT_EQ(error_with(&ResultRow::model, std::string("tiny")),
            "model 'tiny' contradicts case_id '" + id + "' (model llama-3.1-8b)");
  EXPECT_EQ(error_with(&ResultRow::batch, 4), "batch '4' contradicts case_id '" + id + "' (b=64)");
  EXPECT_EQ(error_with(&ResultRow::page_size, 64), "page_size '64' contradicts case_id '" + id + "' (p=16)");
  EXPECT_EQ(error_with(&ResultRow::dtype, std::string("fp16")),
            "dtype 'fp16' contradicts case_id '" + id + "' (dtype bf16)");
  EXPECT_EQ(error_with(&ResultRow::seed, std::uint64_t{1}),
            "seed '1' contradicts case_id '" + id + "' (seed=42)");
  // layers: checked where the id names them (--layers); the preset's depth is not in the id.
  EXPECT_EQ(error_with(&ResultRow::layers, 7), "");
  ResultRow l = test::llama_row(test::kLlamaDecode, "trtllm_mha", "eager");  // .../L=6/...
  ASSERT_EQ(result_row_domain_error(l), "");
  l.layers = 32;
  EXPECT_EQ(result_row_domain_error(l),
            "layers '32' contradicts case_id '" + std::string(test::kLlamaDecode) + "' (L=6)");
  l.layers = 6;
  l.seed = 2;  // no "/seed=": seed 1
  EXPECT_EQ(result_row_domain_error(l),
            "seed '2' contradicts case_id '" + std::string(test::kLlamaDecode) + "' (no seed=: seed 1)");
  // An id the runner never writes, control characters escaped.
  EXPECT_EQ(
      error_with(&ResultRow::case_id, std::string("decode/x")),
      "case_id 'decode/x' is not a case id as attnbench writes them (MODE/MODEL/.../b=N/.../p=N/DTYPE, e.g. "
      "decode/llama-3.1-8b/b=64/kv=4096/p=16/bf16)");
  EXPECT_THAT(
      error_with(&ResultRow::case_id, id + "\x1b[2J"),
      ::testing::StartsWith("case_id '" + id + "\\x1b[2J' is not a case id as attnbench writes them"));
  // Each reader names the file and the line (CSV) or row (JSON).
  test::TempDir d;
  ResultRow bad = r;
  bad.batch = 4;
  test::write_file(d.file("r.csv"),
                   results_csv_header() + "\n" + results_csv_line(r) + "\n" + results_csv_line(bad) + "\n");
  EXPECT_EQ(test::error_of([&] { read_results_csv(d.file("r.csv")); }),
            "results " + d.file("r.csv") + " line 3: batch '4' contradicts case_id '" + id + "' (b=64)");
  write_results_json(d.file("r.json"), {}, "cmd", {bad});
  EXPECT_EQ(test::error_of([&] { load_result_set(d.file("r.json")); }),
            "results " + d.file("r.json") + ": row 0: batch '4' contradicts case_id '" + id + "' (b=64)");
}

TEST(ResultsJsonNesting, OnlyBracketsOutsideStringsCount) {
  EXPECT_NO_THROW(check_json_nesting(std::string(64, '[') + std::string(64, ']'), 64, "x"));
  try {
    check_json_nesting(std::string(65, '[') + std::string(65, ']'), 64, "results f.json");
    ADD_FAILURE() << "65 levels accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "results f.json: JSON nested deeper than 64 levels (at byte 64)");
  }
  EXPECT_NO_THROW(check_json_nesting("{\"a\": \"" + std::string(1000, '[') + "\"}", 2, "x"));
  EXPECT_NO_THROW(check_json_nesting("[\"\\\"[[[[\"]", 1, "x"));  // an escaped quote does not end the string
  EXPECT_THROW(check_json_nesting("[\"\\\\\", [[]]]", 2, "x"), InputError);  // "\\" ends it
}

TEST_F(ResultsCsvFiles, EachRowIsFlushedWhenWritten) {
  const std::string p = path("live.csv");
  ResultsCsvWriter w(p);
  EXPECT_EQ(slurp(p), std::string(kGoldenHeader) + "\n");
  w.write(full_row());
  EXPECT_EQ(slurp(p), std::string(kGoldenHeader) + "\n" + results_csv_line(full_row()) + "\n");
  w.write(sparse_row());
  const std::vector<ResultRow> so_far = read_results_csv(p);  // the writer is still alive
  ASSERT_EQ(so_far.size(), 2u);
  EXPECT_EQ(so_far[1].case_id, sparse_row().case_id);
}

TEST_F(ResultsCsvFiles, WriterNamesTheOptionWhenItCannotOpen) {
  const std::string p = path("no/such/dir/results.csv");
  try {
    ResultsCsvWriter w(p);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--out: cannot write '" + p + "'");
  }
}

TEST_F(ResultsCsvFiles, HeaderOnlyFileHasNoRows) {
  const std::string p = path("empty.csv");
  { ResultsCsvWriter w(p); }
  EXPECT_TRUE(read_results_csv(p).empty());
}

TEST_F(ResultsCsvFiles, ColumnsInAnyOrderAndExtraColumnsIgnored) {
  // Swap the first two columns and append an unknown one.
  const std::string line = results_csv_line(full_row());
  const std::size_t comma1 = line.find(',');
  const std::size_t comma2 = line.find(',', comma1 + 1);
  const std::string swapped_line =
      line.substr(comma1 + 1, comma2 - comma1 - 1) + "," + line.substr(0, comma1) + line.substr(comma2);
  const std::string header = std::string(kGoldenHeader);
  const std::string swapped_header = "case_id,schema_version" + header.substr(header.find(",backend"));
  const std::string p =
      write_file("reordered.csv", swapped_header + ",gpu_clock_mhz\n" + swapped_line + ",1980\n");
  const std::vector<ResultRow> read = read_results_csv(p);
  ASSERT_EQ(read.size(), 1u);
  expect_bitwise_equal(read[0], full_row());
}

TEST_F(ResultsCsvFiles, OtherSchemaVersionIsRefused) {
  std::string line = results_csv_line(full_row());
  line[0] = '3';
  const std::string p = write_file("v3.csv", std::string(kGoldenHeader) + "\n" + line + "\n");
  EXPECT_EQ(read_error(p), "results " + p + ": schema_version 3, this attnbench reads 1 to 2");
}

TEST_F(ResultsCsvFiles, MissingColumnIsNamed) {
  std::string header = kGoldenHeader;
  header.erase(header.find(",tflops"), std::string(",tflops").size());
  const std::string p = write_file("missing.csv", header + "\n");
  EXPECT_EQ(read_error(p), "results " + p + " line 1: missing column 'tflops'");
}

TEST_F(ResultsCsvFiles, BadNumbersAreNamedWithTheirLine) {
  const std::string good = results_csv_line(full_row());
  const auto with_cell = [&](const std::string& column, const std::string& cell) {
    // Replace the cell of `column` in `good` (no quoted text precedes these columns' values with commas).
    const std::vector<std::string>& cols = results_csv_columns();
    std::vector<std::string> cells;
    std::stringstream ss(good);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    EXPECT_EQ(cells.size(), cols.size());
    for (std::size_t i = 0; i < cols.size(); ++i) {
      if (cols[i] == column) cells[i] = cell;
    }
    std::string out;
    for (const std::string& c : cells) out += (out.empty() ? "" : ",") + c;
    return out;
  };
  const std::string h = std::string(kGoldenHeader) + "\n";
  std::string p = write_file("bad1.csv", h + good + "\n" + with_cell("tflops", "fast") + "\n");
  EXPECT_EQ(read_error(p), "results " + p + " line 3: tflops 'fast' is not a number or empty");
  p = write_file("bad2.csv", h + with_cell("layers", "") + "\n");
  EXPECT_EQ(read_error(p), "results " + p + " line 2: layers '' is not an integer");
  p = write_file("bad3.csv", h + with_cell("ref_pass", "yes") + "\n");
  EXPECT_EQ(read_error(p), "results " + p + " line 2: ref_pass 'yes' is not 1, 0 or empty");
  p = write_file("bad4.csv", h + with_cell("ctor_device_bytes", "1.5") + "\n");
  EXPECT_EQ(read_error(p), "results " + p + " line 2: ctor_device_bytes '1.5' is not an integer or empty");
  p = write_file("bad5.csv", h + with_cell("seed", "-1") + "\n");
  EXPECT_EQ(read_error(p), "results " + p + " line 2: seed '-1' is not a non-negative integer");
  p = write_file("bad6.csv", h + with_cell("schema_version", "one") + "\n");
  EXPECT_EQ(read_error(p), "results " + p + " line 2: schema_version 'one' is not an integer");
}

TEST_F(ResultsCsvFiles, MalformedFiles) {
  const std::string h = std::string(kGoldenHeader) + "\n";
  EXPECT_EQ(read_error(write_file("empty.csv", "")),
            "results " + path("empty.csv") + " line 1: empty file, no header");
  EXPECT_EQ(read_error(write_file("short.csv", h + "1,a,b\n")),
            "results " + path("short.csv") + " line 2: too few columns");
  const std::string missing = path("absent.csv");
  EXPECT_EQ(read_error(missing).rfind("results " + missing + ": cannot read", 0), 0u) << read_error(missing);
}

TEST_F(ResultsCsvFiles, LineFeedInTextCannotBeReadBack) {
  // Written as RFC 4180 says, but fast-cpp-csv-parser splits lines before it looks at quotes: the reader
  // must fail loudly rather than return a wrong row.
  ResultRow r = full_row();
  r.note = "first line\nsecond line";
  const std::string p = path("lf.csv");
  ResultsCsvWriter(p).write(r);
  EXPECT_NE(slurp(p).find("\"first line\nsecond line\""), std::string::npos);
  EXPECT_EQ(read_error(p), "results " + p + " line 2: unterminated quoted field");
}

TEST(ResultsJson, CarriesEnvironmentCommandAndTypedRows) {
  test::TempDir d;
  ResultRow a;
  a.case_id = "decode/tiny/b=1/kv=8/p=16/bf16";
  a.backend = "trtllm_mha";
  a.status = RowStatus::ok;
  a.note = "with, \"quotes\"";
  a.seed = 7;
  a.step_median_us = 12.5;
  a.ref_max_abs_err = 0.001;  // a pass is written 1 beside its figures only
  a.ref_rel_l2_err = 0.002;
  a.ref_pass = true;
  a.ctor_device_bytes = 537919492;
  ResultRow b = a;
  b.backend = "flashinfer";
  b.step_median_us.reset();
  b.ref_pass = false;
  write_results_json(d.file("r.json"), {{"gpu_name", "X"}, {"copy_bandwidth_bytes_per_s", "1e12"}}, "attnbench run --x",
                     {a, b});
  const auto j = nlohmann::json::parse(test::read_file(d.file("r.json")));
  EXPECT_EQ(j["schema_version"], kResultsSchemaVersion);
  EXPECT_EQ(j["environment"]["gpu_name"], "X");
  EXPECT_EQ(j["command"], "attnbench run --x");
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0].size(), results_csv_columns().size() + 2) << "the columns, samples_us and ledger";
  EXPECT_EQ(j["rows"][0]["note"], "with, \"quotes\"");
  EXPECT_EQ(j["rows"][0]["step_median_us"], 12.5);
  EXPECT_EQ(j["rows"][0]["ctor_device_bytes"], 537919492);
  EXPECT_EQ(j["rows"][0]["ref_pass"], true);
  EXPECT_EQ(j["rows"][0]["seed"], 7);
  EXPECT_TRUE(j["rows"][1]["step_median_us"].is_null());
  EXPECT_EQ(j["rows"][1]["ref_pass"], false);
  EXPECT_TRUE(j["rows"][1]["tflops"].is_null());
}

// A row with every optional set, so that a round trip covers every column.
// `r` of seed `seed`, its case_id saying so (readers check the columns an id names against it).
ResultRow with_seed(ResultRow r, std::uint64_t seed) {
  const std::optional<CaseIdParts> parsed = parse_case_id(r.case_id);
  if (!parsed) throw std::logic_error("with_seed: '" + r.case_id + "' is not a case id");
  CaseIdParts id = *parsed;
  id.seed = seed;
  r.case_id = format_case_id(id);
  r.seed = seed;
  return r;
}

ResultRow report_row(const std::string& backend) {
  ResultRow r = with_seed(test::measured_row(backend, "graph", 100.25, 99.5, 101.75), 1234567890123ULL);
  r.note = "with, \"quotes\"";
  r.kv_len_mean = 4096.5;
  r.kv_len_max = 8192;
  r.prefix_len_mean = 4095.5;
  r.sliding_window = 1024;
  r.step_min_us = 98.0;
  r.step_max_us = 120.0;
  r.step_spread_pct = 2.25;
  r.metadata_median_us = 9.5;
  r.forward_median_us = 15.0;
  r.tflops = 0.5;
  r.tb_per_s = 4.25;
  r.bw_fraction = 0.99;
  r.ctor_driver_delta_bytes = 536870912;
  r.graph_state_device_bytes = 2097152;
  r.capture_device_bytes = 34234;
  r.capture_pinned_bytes = 0;
  r.step_peak_device_bytes = 4100;
  r.ref_rel_l2_err = 0.002;
  r.ref_mismatch_frac = 0;
  r.repro = "attnbench run --case-id 'x'";
  r.samples_us = {99.5, 100.25, 101.75};
  r.samples = 3;  // the samples counted are the samples kept
  const Summary sm = summarize(r.samples_us);  // and the statistics are theirs (the JSON reader checks it)
  r.step_median_us = sm.median;
  r.step_p10_us = sm.p10;
  r.step_p90_us = sm.p90;
  r.step_min_us = sm.min;
  r.step_max_us = sm.max;
  r.ledger = {{"construct", backend + ".workspace_buffer", "device", 536870912, true, 1}};
  return r;
}

// The CSV carries neither raw samples nor the ledger.
std::vector<ResultRow> without_json_only_fields(std::vector<ResultRow> rows) {
  for (ResultRow& r : rows) {
    r.samples_us.clear();
    r.ledger.clear();
  }
  return rows;
}

TEST(ResultsLoad, ReadsCsvAndJsonReportsBack) {
  test::TempDir d;
  const std::vector<ResultRow> rows = {report_row("trtllm_mha"), report_row("trtllm_mha_legacy")};
  {
    ResultsCsvWriter w(d.file("r.csv"));
    for (const ResultRow& r : rows) w.write(r);
  }
  const ResultSet csv = load_result_set(d.file("r.csv"));
  EXPECT_EQ(csv.rows, without_json_only_fields(rows));
  EXPECT_TRUE(csv.samples.empty());
  EXPECT_TRUE(csv.environment.empty());

  const Environment env = {{"gpu_name", "NVIDIA H200"}, {"driver_version", "13.0"}};
  write_results_json(d.file("r.json"), env, "attnbench run --x", rows);
  const ResultSet js = load_result_set(d.file("r.json"));
  EXPECT_EQ(js.rows, rows);  // every column, the raw samples and the ledger
  EXPECT_EQ(js.environment, env);
  EXPECT_EQ(js.command, "attnbench run --x");
  ASSERT_EQ(js.samples.size(), 2u);
  EXPECT_EQ(js.samples.at(sample_key(rows[1])), rows[1].samples_us);

  // Older reports: no samples_us / ledger keys, ref_pass written as 1 / 0, empty text as null.
  auto j = nlohmann::json::parse(test::read_file(d.file("r.json")));
  j["rows"][1].erase("samples_us");
  j["rows"][1].erase("ledger");
  j["rows"][1]["ref_pass"] = 1;
  j["rows"][1]["bitwise_equal_to"] = nullptr;
  test::write_file(d.file("s.json"), j.dump());
  const ResultSet s = load_result_set(d.file("s.json"));
  ASSERT_EQ(s.samples.size(), 1u);
  EXPECT_TRUE(s.rows[1].samples_us.empty());
  EXPECT_EQ(s.rows[1].ref_pass, true);
  EXPECT_EQ(s.rows[1].bitwise_equal_to, "");
}

TEST(ResultsLoad, MalformedJsonIsInputErrorNamingTheFile) {
  test::TempDir d;
  write_results_json(d.file("r.json"), {}, "cmd", {report_row("trtllm_mha")});
  const std::string text = test::read_file(d.file("r.json"));
  const auto expect_error = [&](const std::string& name, const std::string& content,
                                const std::string& what) {
    test::write_file(d.file(name), content);
    try {
      load_result_set(d.file(name));
      ADD_FAILURE() << name << ": expected InputError";
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(d.file(name)), std::string::npos) << msg;
      EXPECT_NE(msg.find(what), std::string::npos) << msg;
    }
  };
  expect_error("truncated.json", text.substr(0, text.size() / 2), "not valid JSON");

  auto j = nlohmann::json::parse(text);
  j["rows"][0].erase("tb_per_s");
  expect_error("missing.json", j.dump(), "missing column 'tb_per_s'");

  j = nlohmann::json::parse(text);
  j["rows"][0]["batch"] = "64";
  expect_error("type.json", j.dump(), "batch \"64\" is not an integer");

  j = nlohmann::json::parse(text);
  j["rows"][0]["schema_version"] = 3;
  j["schema_version"] = 2;
  expect_error("version.json", j.dump(), "schema_version 3, this attnbench reads 1 to 2");

  j = nlohmann::json::parse(text);
  j["rows"][0]["samples_us"] = {1.0, "x"};
  expect_error("samples.json", j.dump(), "samples_us");

  j = nlohmann::json::parse(text);
  j["rows"][0]["ledger"][0].erase("bytes");
  expect_error("ledger.json", j.dump(), "ledger entry");

  j = nlohmann::json::parse(text);
  j["rows"].push_back(j["rows"][0]);
  expect_error("dup.json", j.dump(), "two rows for");

  expect_error("memory.json", R"({"schema": "attnbench.memory", "schema_version": 1})", "attnbench.results");
  EXPECT_THROW(load_result_set(d.file("absent.json")), InputError);
}

// run --seed takes 0 to 2^64 - 1; the JSON report wrote a seed >= 2^63 as a negative number and refused it
// when read back.
TEST(ResultsLoad, JsonSeedsBeyondInt64RoundTrip) {
  test::TempDir d;
  const ResultRow a = with_seed(report_row("trtllm_mha"), 18446744073709551615ull),
                  b = with_seed(report_row("flashinfer"), 9223372036854775808ull);
  write_results_json(d.file("r.json"), {}, "cmd", {a, b});
  EXPECT_NE(test::read_file(d.file("r.json")).find("\"seed\": 18446744073709551615"), std::string::npos);
  const ResultSet s = load_result_set(d.file("r.json"));
  ASSERT_EQ(s.rows.size(), 2u);
  EXPECT_EQ(s.rows[0].seed, 18446744073709551615ull);
  EXPECT_EQ(s.rows[1].seed, 9223372036854775808ull);
}

TEST(ResultsLoad, JsonValuesOutsideTheirDomainAreRefused) {
  test::TempDir d;
  write_results_json(d.file("r.json"), {}, "cmd", {report_row("trtllm_mha"), report_row("flashinfer")});
  const std::string text = test::read_file(d.file("r.json"));
  const auto expect_error = [&](const std::string& name, const nlohmann::json& j, const std::string& what) {
    test::write_file(d.file(name), j.dump());
    try {
      load_result_set(d.file(name));
      ADD_FAILURE() << name << ": expected InputError";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), "results " + d.file(name) + ": " + what);
    }
  };
  auto j = nlohmann::json::parse(text);
  j["rows"][1]["status"] = "done";
  expect_error("status.json", j, "row 1: status 'done' is not ok, skipped, failed or oom");
  j = nlohmann::json::parse(text);
  j["rows"][0]["mode"] = "prefill";
  expect_error("mode.json", j, "row 0: mode 'prefill' is not decode, extend or verify");
  j = nlohmann::json::parse(text);
  j["rows"][0]["timing"] = "";
  expect_error("timing.json", j, "row 0: timing '' is not eager or graph");
  j = nlohmann::json::parse(text);
  j["rows"][0]["step_median_us"] = -1.5;
  expect_error("negative.json", j, "row 0: step_median_us '-1.5' is not a finite number >= 0");
  j = nlohmann::json::parse(text);
  j["rows"][1]["ctor_pinned_bytes"] = -1;
  expect_error("bytes.json", j, "row 1: ctor_pinned_bytes '-1' is not an integer >= 0");
  j = nlohmann::json::parse(text);
  j["rows"][0]["samples"] = -2;
  expect_error("samples.json", j, "row 0: samples '-2' is not an integer >= 0");
  j = nlohmann::json::parse(text);
  j["rows"][0]["samples_us"] = {1.0, -2.0, 3.0};
  expect_error("raw.json", j, "row 0: samples_us[1] '-2' is not a finite number >= 0");
  // The count and the list disagree: one of them was cut or padded.
  j = nlohmann::json::parse(text);
  j["rows"][1]["samples_us"] = {99.5, 100.25};
  expect_error("fewer.json", j, "row 1: samples_us holds 2 values, samples says 3");
  j = nlohmann::json::parse(text);
  j["rows"][0]["samples"] = 30;
  expect_error("more.json", j, "row 0: samples_us holds 3 values, samples says 30");
  j = nlohmann::json::parse(text);
  j["rows"][0]["samples_us"] = nlohmann::json::array();  // no raw samples (an older report): the count stands
  test::write_file(d.file("none.json"), j.dump());
  EXPECT_EQ(load_result_set(d.file("none.json")).rows[0].samples, 3);
  // Unsigned beyond 2^63 - 1: read as std::int64_t it wrapped to -9223372036854775808 and the message named
  // a value the file does not hold.
  j = nlohmann::json::parse(text);
  j["rows"][1]["ctor_device_bytes"] = 9223372036854775808ull;
  expect_error("wrap.json", j,
               "row 1: ctor_device_bytes 9223372036854775808 is not an integer in range (at most "
               "9223372036854775807) or null");
  j = nlohmann::json::parse(text);
  j["rows"][0]["layers"] = 18446744073709551615ull;
  expect_error("layers.json", j,
               "row 0: layers 18446744073709551615 is not an integer in range (at most 9223372036854775807)");
  // Across columns: the step statistics in order; an ok row with samples has a median.
  j = nlohmann::json::parse(text);
  j["rows"][0]["step_median_us"] = 1e308;
  expect_error("order.json", j,
               "row 0: step_median_us '1e+308' is above step_p90_us '101.45': the step statistics are out of order");
  j = nlohmann::json::parse(text);
  j["rows"][0]["samples"] = 5;
  j["rows"][0]["step_median_us"] = nullptr;
  expect_error("nomedian.json", j,
               "row 0: status ok with 5 samples but step_median_us empty: a measured step takes more than 0 us");
  // Beyond double range, as text: the JSON parser refuses it (an exception that is not a parse_error).
  std::string t = text;
  const auto pos = t.find("\"ref_rel_l2_err\": ");
  t.replace(pos, t.find(',', pos) - pos, "\"ref_rel_l2_err\": -1e400");
  test::write_file(d.file("inf.json"), t);
  try {
    load_result_set(d.file("inf.json"));
    ADD_FAILURE() << "-1e400 accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "results " + d.file("inf.json") + ": not valid JSON (number overflow parsing '-1e400')");
  }
}

// A row's step statistics are its raw samples' (fill_timing: summarize(samples_us)): doubled statistics beside the
// measured samples (the gate would judge the samples, the tables print the row), a sample far beyond step_max_us.
TEST(ResultsLoad, JsonStatisticsThatAreNotTheSamplesAreRefused) {
  test::TempDir d;
  write_results_json(d.file("r.json"), {}, "cmd", {report_row("trtllm_mha"), report_row("flashinfer")});
  const auto base = nlohmann::json::parse(test::read_file(d.file("r.json")));
  const auto error_of = [&](const std::string& name, const nlohmann::json& j) -> std::string {
    test::write_file(d.file(name), j.dump());
    try {
      load_result_set(d.file(name));
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of("same.json", base), "");
  auto j = base;
  for (const char* k : {"step_min_us", "step_p10_us", "step_median_us", "step_p90_us", "step_max_us"})
    j["rows"][1][k] = j["rows"][1][k].get<double>() * 2;
  EXPECT_EQ(error_of("doubled.json", j),
            "results " + d.file("doubled.json") + ": row 1: step_min_us 199 is not that of its samples_us (99.5)");
  j = base;
  j["rows"][0]["samples_us"][2] = 1e300;
  EXPECT_EQ(error_of("far.json", j),
            "results " + d.file("far.json") + ": row 0: step_p90_us 101.45 is not that of its samples_us (8e+299)");
  j = base;
  j["rows"][0]["step_median_us"] = j["rows"][0]["step_median_us"].get<double>() * (1 + 1e-12);  // JSON rounding
  EXPECT_EQ(error_of("rounded.json", j), "");
}

// A key given twice in one object: nlohmann (and Python's json.load) kept the last silently, so a second
// "rows": [] emptied a report and a second "step_median_us" replaced the measured one. Refused, naming the key.
// A ledger entry's bytes beyond 2^63-1 wrapped negative, its count beyond int range wrapped too.
TEST(ResultsLoad, JsonDuplicateKeysAndWrappingLedgerIntegersAreRefused) {
  test::TempDir d;
  write_results_json(d.file("r.json"), {}, "cmd", {report_row("trtllm_mha"), report_row("flashinfer")});
  const std::string text = test::read_file(d.file("r.json"));
  ASSERT_FALSE(first_duplicate_json_key(text));
  const auto expect_error = [&](const std::string& name, const std::string& content, const std::string& what) {
    test::write_file(d.file(name), content);
    EXPECT_EQ(test::error_of([&] { load_result_set(d.file(name)); }), "results " + d.file(name) + ": " + what);
  };
  const std::size_t end = text.rfind('}');
  expect_error("rows.json", text.substr(0, end) + ", \"rows\": []}",
               "key \"rows\" given twice in one object (which one is meant?)");
  std::string t = text;
  const std::size_t at = t.find("\"step_median_us\"");
  t.insert(at, "\"step_median_us\": 1.0, ");
  expect_error("cell.json", t, "key \"step_median_us\" given twice in one object (which one is meant?)");
  // The same key in two objects (every row has its own) is fine; so is a key that only differs in case.
  EXPECT_FALSE(first_duplicate_json_key(R"({"a": {"k": 1}, "b": {"k": 2}, "K": [{"k": 1}, {"k": 2}]})"));
  EXPECT_EQ(first_duplicate_json_key(R"({"a": [{"k": 1, "x": {"k": 0}, "k": 2}]})").value_or(""), "k");

  auto j = nlohmann::json::parse(text);
  ASSERT_TRUE(j["rows"][0]["ledger"].is_array() && !j["rows"][0]["ledger"].empty());
  j["rows"][0]["ledger"][0]["bytes"] = 18446744073709551615ull;
  test::write_file(d.file("bytes.json"), j.dump());
  EXPECT_NE(test::error_of([&] { load_result_set(d.file("bytes.json")); }).find("row 0: ledger entry"),
            std::string::npos);
  j = nlohmann::json::parse(text);
  j["rows"][0]["ledger"][0]["count"] = 4294967297ll;
  test::write_file(d.file("count.json"), j.dump());
  EXPECT_NE(test::error_of([&] { load_result_set(d.file("count.json")); }).find("row 0: ledger entry"),
            std::string::npos);
  j = nlohmann::json::parse(text);
  j["schema_version"] = 4294967298ll;  // get<int> wrapped it to 2
  test::write_file(d.file("version.json"), j.dump());
  EXPECT_EQ(test::error_of([&] { load_result_set(d.file("version.json")); }),
            "results " + d.file("version.json") + ": schema_version 4294967298, this attnbench reads 1 to 2");
  // A negative ledger delta is legitimate (a group freed inside the phase, device/ledger.cpp Ledger::diff).
  j = nlohmann::json::parse(text);
  j["rows"][0]["ledger"][0]["bytes"] = -4096;
  test::write_file(d.file("freed.json"), j.dump());
  EXPECT_EQ(load_result_set(d.file("freed.json")).rows[0].ledger[0].bytes, -4096);
}

// FIFOs, devices, oversized files, NUL bytes and deep JSON are refused before anything is parsed (a FIFO
// without a writer would block a plain open forever; /dev/zero would be read until memory runs out).
TEST(ResultsLoad, HostileFilesAreRefusedBeforeReading) {
  test::TempDir d;
  const auto message = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const InputError& e) {
      return e.what();
    }
    return "no InputError";
  };
  for (const std::string name : {"fifo.csv", "fifo.json", "fifo"}) {
    const std::string p = d.file(name);
    ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0);
    EXPECT_EQ(message([&] { load_result_set(p); }), "results " + p + ": not a regular file (a FIFO)");
    EXPECT_EQ(message([&] { read_results_csv(p); }), "results " + p + ": not a regular file (a FIFO)");
    EXPECT_EQ(message([&] { read_results_json(p); }), "results " + p + ": not a regular file (a FIFO)");
  }
  EXPECT_EQ(message([&] { load_result_set("/dev/zero"); }), "results /dev/zero: not a regular file (a character device)");
  EXPECT_EQ(message([&] { load_result_set(d.path()); }), "results " + d.path() + ": is a directory");

  const std::string big = d.file("big.json");
  std::ofstream(big) << "{";
  std::filesystem::resize_file(big, (512u << 20) + 1);  // sparse
  EXPECT_EQ(message([&] { load_result_set(big); }),
            "results " + big + ": larger than 536870912 bytes (536870913 bytes)");

  const std::string good = results_csv_header() + "\n" + results_csv_line(report_row("x")) + "\n";
  const std::string nul = d.file("nul.csv");
  std::ofstream(nul, std::ios::binary) << good << std::string("1,a\0b\n", 6);
  EXPECT_EQ(message([&] { read_results_csv(nul); }), "results " + nul + " line 3: contains a NUL byte");

  const std::string deep = d.file("deep.json");
  test::write_file(deep, "{\"rows\": [" + std::string(200000, '[') + std::string(200001, ']') + "}");
  EXPECT_EQ(message([&] { load_result_set(deep); }),
            "results " + deep + ": JSON nested deeper than 64 levels (at byte 72)");
  // Just within the limit: parsed, and refused for what it is.
  test::write_file(deep, "{\"rows\": [" + std::string(62, '[') + std::string(63, ']') + "}");
  EXPECT_EQ(message([&] { load_result_set(deep); }), "results " + deep + ": row 0: not an object");
}

TEST(ResultsJsonGolden, ExactBytes) {
  test::TempDir d;
  write_results_json(d.file("r.json"), {{"gpu_name", "NVIDIA H200"}, {"driver_version", "13.0"}},
                     "attnbench run --x", {report_row("trtllm_mha"), report_row("flashinfer")});
  test::expect_golden("results.json", test::read_file(d.file("r.json")));
}

// The one rule of merge (a shard is complete) and --resume (a case is not run again): which rows a case lacks.
TEST(CaseRows, MissingRowsOfACase) {
  const std::vector<std::string> backends = {"flashinfer", "trtllm_mha"};
  const auto row = [](const std::string& backend, const std::string& timing, RowStatus status = RowStatus::ok,
                      const std::string& mode = "decode") {
    ResultRow r;
    r.case_id = mode + "/tiny/b=1";
    r.backend = backend;
    r.timing = timing;
    r.status = status;
    r.mode = mode;
    return r;
  };
  const auto missing = [&](const std::vector<ResultRow>& rows, bool graphs_due) {
    std::vector<const ResultRow*> p;
    for (const ResultRow& r : rows) p.push_back(&r);
    return missing_rows_of_case(p, backends, graphs_due);
  };
  using Lack = std::vector<std::string>;
  const ResultRow fe = row("flashinfer", "eager"), fg = row("flashinfer", "graph");
  const ResultRow te = row("trtllm_mha", "eager"), tg = row("trtllm_mha", "graph");
  EXPECT_EQ(missing({fe, fg, te, tg}, true), Lack{});
  EXPECT_EQ(missing({tg, te, fg, fe}, true), Lack{}) << "any order";
  // An eager row missing: no row of the backend at all, or its graph row alone.
  EXPECT_EQ(missing({fe, fg}, true), Lack{"no row of trtllm_mha"});
  EXPECT_EQ(missing({}, true), (Lack{"no row of flashinfer", "no row of trtllm_mha"}));
  EXPECT_EQ(missing({fe, fg, tg}, true), Lack{"no eager row of trtllm_mha"});
  EXPECT_EQ(missing({fe, tg}, false), Lack{"no eager row of trtllm_mha"}) << "eager rows are due without graphs";
  // A graph row missing beside an eager row that ran (ok, or failed / oom: the runner writes the graph row of a
  // failed backend too, case_runner.cpp fail_all).
  EXPECT_EQ(missing({fe, fg, te}, true), Lack{"no graph row of trtllm_mha"});
  EXPECT_EQ(missing({fe, te}, true), (Lack{"no graph row of flashinfer", "no graph row of trtllm_mha"}));
  EXPECT_EQ(missing({fe, fg, row("trtllm_mha", "eager", RowStatus::failed)}, true), Lack{"no graph row of trtllm_mha"});
  EXPECT_EQ(missing({fe, fg, row("trtllm_mha", "eager", RowStatus::oom)}, true), Lack{"no graph row of trtllm_mha"});
  // A skipped eager row needs no graph row (a case skipped whole by the memory cap or after a sticky device
  // error has eager rows only).
  EXPECT_EQ(missing({fe, fg, row("trtllm_mha", "eager", RowStatus::skipped)}, true), Lack{});
  EXPECT_EQ(missing({row("flashinfer", "eager", RowStatus::skipped), row("trtllm_mha", "eager", RowStatus::skipped)}, true),
            Lack{});
  // An extend case has no graph rows (want_graph is false for extend).
  EXPECT_EQ(missing({row("flashinfer", "eager", RowStatus::ok, "extend"), row("trtllm_mha", "eager", RowStatus::ok, "extend")}, true),
            Lack{});
  EXPECT_EQ(missing({row("flashinfer", "eager", RowStatus::ok, "extend")}, true), Lack{"no row of trtllm_mha"});
  // Graphs not due (eager timing only, or a CPU sweep): eager rows are enough.
  EXPECT_EQ(missing({fe, te}, false), Lack{});
  EXPECT_EQ(missing({fe, fg, te}, false), Lack{});
  // Rows of a backend the sweep did not ask for change nothing.
  EXPECT_EQ(missing({fe, fg, te, tg, row("triton", "eager")}, true), Lack{});
}

// Every results file committed under results/ (a CSV whose header starts with schema_version, a JSON report of
// schema attnbench.results) loads with every rule of the readers, and every memory report with its reader:
// a rule added to the readers must not make the project's own evidence unreadable.
TEST(ResultsLoad, EveryCommittedResultsFileLoads) {
  const std::filesystem::path root = std::filesystem::path(ATTNBENCH_SOURCE_DIR) / "results";
  int csv = 0, json = 0, memory = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    const std::string p = e.path().string(), ext = e.path().extension().string();
    const std::string text = ext == ".csv" || ext == ".json" ? test::read_file(p) : std::string();
    try {
      if (ext == ".csv" && text.rfind("schema_version,", 0) == 0) {
        EXPECT_FALSE(load_result_set(p).rows.empty()) << p;
        ++csv;
      } else if (ext == ".json" && text.find("\"attnbench.results\"") != std::string::npos) {
        EXPECT_FALSE(load_result_set(p).rows.empty()) << p;
        ++json;
      } else if (ext == ".json" && text.find("\"attnbench.memory\"") != std::string::npos) {
        EXPECT_FALSE(load_memory_report_json(p, test::standard_catalog()).backends.empty()) << p;
        ++memory;
      }
    } catch (const std::exception& x) {
      ADD_FAILURE() << p << ": " << x.what();
    }
  }
  // As many as on 2026-12-01 at least (53 results CSVs, 29 results JSON reports, 3 memory reports).
  EXPECT_GE(csv, 53);
  EXPECT_GE(json, 29);
  EXPECT_GE(memory, 3);
}

}  // namespace
}  // namespace attnbench
