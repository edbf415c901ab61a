// `compare` and `report` against hostile and misleading inputs, through the binary, one table of cases per class
// of the issue "A CI gate that cannot be fooled, and outputs that never destroy inputs":
//   evidence  - NEW results that are not evidence fail the gate (exit 1), values outside a column's domain are
//               bad input (exit 2), for compare, report and --peers alike;
//   inputs    - no command writes over one of its inputs (same name, hard link, symlink): exit 2, nothing touched;
//   writes    - a failed write (/dev/full as --out, stdout closed or full) is exit 1 with one clear line;
//   hostile   - FIFOs, devices, directories, oversized files, NUL bytes and deep JSON neither crash nor hang.
// Every command runs under `timeout` and a virtual-memory cap, so a hang or a runaway read is a failed case,
// not a stuck test. ATTNBENCH_HOSTILE_BINARY runs the same table against another build (e.g. an older one:
// each class then prints how many of its cases that build gets wrong).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/stats.hpp"
#include "report/results_io.hpp"
#include "support/result_rows.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

struct Outcome {
  int exit_code;
  std::string out, err;
};

// Runs attnbench `args` with stdout sent to `stdout_to` (a shell redirection; empty: a capture file), under a
// 60 s timeout and a 2 GiB address-space cap (exit 124: it hung).
Outcome run(const std::string& args, const TempDir& d, const std::string& stdout_to = "") {
  const std::string out = d.file("stdout.txt"), err = d.file("stderr.txt");
  // AddressSanitizer reserves terabytes of shadow address space at start: no cap for a sanitized build (the
  // test binary and attnbench are built with the same flags).
#if defined(__SANITIZE_ADDRESS__)
  const std::string cap;
#else
  const std::string cap = "ulimit -v 2097152; ";
#endif
  const std::string cmd = cap + "timeout 60 " + test::hostile_binary() + " " + args + " " +
                          (stdout_to.empty() ? ">" + out : stdout_to) + " 2>" + err;
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, stdout_to.empty() ? test::read_file(out) : "",
          test::read_file(err)};
}

// ---- input files -----------------------------------------------------------------------------------------

ResultRow good_row(const std::string& backend, const std::string& timing = "eager") {
  ResultRow r = test::tiny_row(backend, timing);
  test::set_step_us(r, 99, 100, 101);
  r.samples = 5;
  r.ref_max_abs_err = 0.001;
  r.ref_rel_l2_err = 0.001;
  r.ref_mismatch_frac = 0;
  r.ctor_device_bytes = 1000;
  r.ctor_pinned_bytes = 0;
  return r;
}

std::vector<ResultRow> good_rows(const std::string& suffix = "") {
  return {good_row("flashinfer" + suffix), good_row("trtllm_mha" + suffix), good_row("trtllm_mha" + suffix, "graph")};
}

std::string csv_text(const std::vector<ResultRow>& rows) {
  std::string t = results_csv_header() + "\n";
  for (const ResultRow& r : rows) t += results_csv_line(r) + "\n";
  return t;
}

// `line` (a results CSV line without quoted commas) with the cell of `column` replaced by `value`.
std::string with_cell(const std::string& line, const std::string& column, const std::string& value) {
  const auto& cols = results_csv_columns();
  std::vector<std::string> cells;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= line.size(); ++i)
    if (i == line.size() || line[i] == ',') {
      cells.push_back(line.substr(start, i - start));
      start = i + 1;
    }
  std::string out;
  for (std::size_t i = 0; i < cells.size(); ++i)
    out += (i ? "," : "") + (cols[i] == column ? value : cells[i]);
  return out;
}

// A results CSV of good_rows(suffix) whose first row has `column` = `value`.
std::string csv_with(const std::string& column, const std::string& value, const std::string& suffix = "") {
  const std::vector<ResultRow> rows = good_rows(suffix);
  std::string t = results_csv_header() + "\n" + with_cell(results_csv_line(rows[0]), column, value) + "\n";
  for (std::size_t i = 1; i < rows.size(); ++i) t += results_csv_line(rows[i]) + "\n";
  return t;
}

void write_json(const std::string& path, const std::vector<ResultRow>& rows) {
  write_results_json(path, {{"gpu_name", "cpu"}}, "attnbench run", rows);
}

std::vector<ResultRow> with_samples(std::vector<ResultRow> rows, double first, int n) {
  for (ResultRow& r : rows) {
    r.samples_us.clear();
    for (int i = 0; i < n; ++i) r.samples_us.push_back(first + i);
    r.samples = n;
    // The row's statistics are its samples' (a JSON row whose statistics are not is refused).
    const Summary sm = summarize(r.samples_us);
    r.step_median_us = sm.median;
    r.step_p10_us = sm.p10;
    r.step_p90_us = sm.p90;
    r.step_min_us = sm.min;
    r.step_max_us = sm.max;
  }
  return rows;
}

const char* kMemoryJson =
    R"({"schema": "attnbench.memory", "schema_version": 1, "model": "tiny", "kv_bytes_per_token": 1024,
        "backends": [{"backend": "flashinfer", "phases": [{"phase": "construct", "device_bytes": 1000,
        "pinned_bytes": 0}]}]})";

// The files every case may use, in a fresh directory: base.csv, new.csv (= base), base.json / new.json (with
// samples), lib.csv (library rows), mem.json (a memory report).
void write_common(const TempDir& d) {
  test::write_file(d.file("base.csv"), csv_text(good_rows()));
  test::write_file(d.file("new.csv"), csv_text(good_rows()));
  write_json(d.file("base.json"), with_samples(good_rows(), 100, 10));
  write_json(d.file("new.json"), with_samples(good_rows(), 100, 10));
  test::write_file(d.file("lib.csv"), csv_text(good_rows("_lib")));
  test::write_file(d.file("mem.json"), kMemoryJson);
}

// ---- the table ---------------------------------------------------------------------------------------------

struct Case {
  Case(std::string klass_, std::string name_, std::function<void(const TempDir&)> setup_, std::string args_,
       int exit_code_, std::vector<std::string> in_err_, std::string stdout_to_ = "", bool one_line_ = true)
      : klass(std::move(klass_)), name(std::move(name_)), setup(std::move(setup_)), args(std::move(args_)),
        exit_code(exit_code_), in_err(std::move(in_err_)), stdout_to(std::move(stdout_to_)), one_line(one_line_) {}
  std::string klass;  // evidence | inputs | writes | hostile
  std::string name;
  std::function<void(const TempDir&)> setup;  // after write_common
  std::string args;                           // {D} = the directory
  int exit_code;
  std::vector<std::string> in_err;  // each must appear in stderr
  std::string stdout_to;            // a redirection of stdout, e.g. ">/dev/full" or ">&-"; empty: captured
  bool one_line = true;             // stderr is exactly one line (errors; a failed gate lists its failures)
};

std::string expand(std::string s, const std::string& dir) {
  for (std::size_t pos; (pos = s.find("{D}")) != std::string::npos;) s.replace(pos, 3, dir);
  return s;
}

// What identifies a file's contents and inode, to check that nothing touched it.
struct Stamp {
  std::string bytes;
  ino_t ino = 0;
  bool operator==(const Stamp&) const = default;
};
std::map<std::string, Stamp> stamps(const std::string& dir) {
  std::map<std::string, Stamp> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name == "stdout.txt" || name == "stderr.txt" || !e.is_regular_file() || e.file_size() > (1u << 20)) continue;
    struct stat st {};
    ::stat(e.path().c_str(), &st);
    out[name] = {test::read_file(e.path().string()), st.st_ino};
  }
  return out;
}

void sparse_file(const std::string& path, std::int64_t bytes) {
  std::ofstream(path) << "schema_version";
  fs::resize_file(path, static_cast<std::uintmax_t>(bytes));  // a hole: no disk used
}

std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::vector<Case> cases() {
  const auto file = [](const std::string& name, std::string text) {
    return [name, text](const TempDir& d) { test::write_file(d.file(name), text); };
  };
  const auto none = [](const TempDir&) {};
  const auto fifo = [](const std::string& name) {
    return [name](const TempDir& d) { ::mkfifo(d.file(name).c_str(), 0644); };
  };
  std::vector<Case> v;
  // -- evidence: NEW results that are not evidence fail; values outside their domain are bad input.
  std::vector<ResultRow> skipped = good_rows();
  for (ResultRow& r : skipped) r.status = RowStatus::skipped, r.ref_pass.reset();
  v.push_back({"evidence", "every NEW row skipped", file("new.csv", csv_text(skipped)),
               "compare {D}/base.csv {D}/new.csv", 1, {"status ok -> skipped"}, "", false});
  std::vector<ResultRow> one_failed = good_rows();
  one_failed[1].status = RowStatus::failed;
  v.push_back({"evidence", "a NEW row failed", file("new.csv", csv_text(one_failed)),
               "compare {D}/base.csv {D}/new.csv", 1, {"status ok -> failed"}, "", false});
  std::vector<ResultRow> ref0 = good_rows();
  for (ResultRow& r : ref0) r.ref_pass = false;
  v.push_back({"evidence", "both sides failed the reference",
               [=](const TempDir& d) {
                 test::write_file(d.file("base.csv"), csv_text(ref0));
                 test::write_file(d.file("new.csv"), csv_text(ref0));
               },
               "compare {D}/base.csv {D}/new.csv", 1, {"ref_pass 0 in BASE and NEW"}, "", false});
  v.push_back({"evidence", "BASE failed the reference", file("base.csv", csv_text(ref0)),
               "compare {D}/base.csv {D}/new.csv", 1, {"ref_pass 0 in BASE"}, "", false});
  const std::string header_only = results_csv_header() + "\n";
  v.push_back({"evidence", "neither file has a row",
               [=](const TempDir& d) {
                 test::write_file(d.file("base.csv"), header_only);
                 test::write_file(d.file("new.csv"), header_only);
               },
               "compare {D}/base.csv {D}/new.csv", 1, {"nothing compared", "neither BASE nor NEW has a row"}, "",
               false});
  std::vector<ResultRow> other = good_rows();
  for (ResultRow& r : other) r.case_id = "decode/tiny/b=2/kv=8/p=64/bf16", r.batch = 2;
  v.push_back({"evidence", "no key in common", file("new.csv", csv_text(other)), "compare {D}/base.csv {D}/new.csv",
               1, {"nothing compared", "no case_id|backend|timing in common"}, "", false});
  // Evidence BASE has and NEW lost: each of these passed before (n/a latency, no memory delta, no reference
  // verdict).
  std::vector<ResultRow> no_memory = good_rows(), no_ref = good_rows(), no_band = good_rows();
  no_memory[0].ctor_device_bytes.reset();
  no_ref[0].ref_pass.reset();
  no_band[0].step_p10_us.reset();
  no_band[0].step_p90_us.reset();
  no_band[0].step_median_us = *no_band[0].step_median_us * 1.5;
  v.push_back({"evidence", "a memory column empty in NEW", file("new.csv", csv_text(no_memory)),
               "compare {D}/base.csv {D}/new.csv", 1, {"ctor_device_bytes recorded in BASE", "missing in NEW"}, "",
               false});
  v.push_back({"evidence", "ref_pass empty in NEW", file("new.csv", csv_text(no_ref)),
               "compare {D}/base.csv {D}/new.csv", 1, {"ref_pass 1 -> empty"}, "", false});
  v.push_back({"evidence", "50% slower without a p10-p90 band in NEW", file("new.csv", csv_text(no_band)),
               "compare {D}/base.csv {D}/new.csv", 1, {"step_p10_us / step_p90_us in BASE, missing in NEW"}, "",
               false});
  // NEW's first row with one cell outside its column's domain: bad input naming the cell.
  const auto bad_new_cell = [&](const std::string& name, const std::string& column, const std::string& value,
                                std::vector<std::string> in_err) {
    v.push_back({"evidence", name, file("new.csv", csv_with(column, value)), "compare {D}/base.csv {D}/new.csv", 2,
                 std::move(in_err)});
  };
  bad_new_cell("NaN timing", "step_median_us", "nan", {"{D}/new.csv line 2", "step_median_us 'nan'"});
  bad_new_cell("infinite timing", "step_p90_us", "inf", {"{D}/new.csv line 2", "step_p90_us 'inf'"});
  bad_new_cell("negative timing", "step_median_us", "-5", {"{D}/new.csv line 2", "step_median_us '-5'"});
  bad_new_cell("NaN reference error", "ref_max_abs_err", "nan", {"ref_max_abs_err 'nan'"});
  bad_new_cell("negative memory", "ctor_device_bytes", "-4096", {"ctor_device_bytes '-4096'"});
  bad_new_cell("negative samples", "samples", "-3", {"samples '-3'"});
  bad_new_cell("unknown status", "status", "done", {"{D}/new.csv line 2", "status 'done'"});
  bad_new_cell("unknown mode", "mode", "prefill", {"mode 'prefill'"});
  bad_new_cell("unknown timing", "timing", "cuda", {"timing 'cuda'"});
  bad_new_cell("median above p90", "step_median_us", "1e308",
               {"{D}/new.csv line 2", "step_median_us '1e+308' is above step_p90_us"});
  bad_new_cell("ok, samples, no median", "step_median_us", "",
               {"{D}/new.csv line 2", "status ok with", "but step_median_us empty"});
  v.push_back({"evidence", "JSON timing beyond double range",
               [](const TempDir& d) {
                 std::string t = test::read_file(d.file("new.json"));
                 const auto pos = t.find("\"step_median_us\": ");
                 t.replace(pos, t.find(',', pos) - pos, "\"step_median_us\": 1e999");
                 test::write_file(d.file("new.json"), t);
               },
               "compare {D}/base.json {D}/new.json", 2, {"{D}/new.json: not valid JSON (number overflow parsing '1e999')"}});
  v.push_back({"evidence", "JSON negative raw sample",
               [](const TempDir& d) {
                 std::vector<ResultRow> rows = with_samples(good_rows(), 100, 10);
                 rows[2].samples_us[3] = -1;
                 write_json(d.file("new.json"), rows);
               },
               "compare {D}/base.json {D}/new.json", 2, {"{D}/new.json: row 2", "samples_us[3] '-1'"}});
  v.push_back({"evidence", "5 vs 5 samples, 20% slower (exact test confirms)",
               [](const TempDir& d) {
                 write_json(d.file("base.json"), with_samples(good_rows(), 100, 5));
                 write_json(d.file("new.json"), with_samples(good_rows(), 120, 5));
               },
               "compare {D}/base.json {D}/new.json", 1, {"slower (Mann-Whitney p = 0.0079)"}, "", false});
  v.push_back({"evidence", "4 vs 4 samples, 20% slower, --strict",
               [](const TempDir& d) {
                 write_json(d.file("base.json"), with_samples(good_rows(), 100, 4));
                 write_json(d.file("new.json"), with_samples(good_rows(), 120, 4));
               },
               "compare {D}/base.json {D}/new.json --strict", 1,
               {"too few samples (4 vs 4; at least 5 per side needed at alpha 0.01)"}, "", false});
  v.push_back({"evidence", "report: NaN timing", file("x.csv", csv_with("step_median_us", "nan")),
               "report {D}/x.csv", 2, {"{D}/x.csv line 2", "step_median_us 'nan'"}});
  v.push_back({"evidence", "report: unknown status", file("x.csv", csv_with("status", "passed")), "report {D}/x.csv",
               2, {"status 'passed'"}});
  v.push_back({"evidence", "report --peers: negative library timing",
               file("lib.csv", csv_with("step_median_us", "-1", "_lib")),
               "report {D}/base.csv --peers {D}/lib.csv", 2, {"--peers", "{D}/lib.csv", "step_median_us '-1'"}});
  v.push_back({"evidence", "compare --peers: unknown library status",
               file("lib.csv", csv_with("status", "crashed", "_lib")),
               "compare --peers {D}/base.csv {D}/lib.csv", 2, {"{D}/lib.csv", "status 'crashed'"}});
  // ref_pass 1 beside empty reference errors (attnbench writes ref_pass 0 there): a "pass" without its figures.
  const auto pass_without_errors = [](const std::string& suffix) {
    const std::vector<ResultRow> rows = good_rows(suffix);
    std::string t = results_csv_header() + "\n" +
                    with_cell(with_cell(results_csv_line(rows[0]), "ref_max_abs_err", ""), "ref_rel_l2_err", "") + "\n";
    for (std::size_t i = 1; i < rows.size(); ++i) t += results_csv_line(rows[i]) + "\n";
    return t;
  };
  v.push_back({"evidence", "report --peers: ref_pass 1 with empty errors", file("lib.csv", pass_without_errors("_lib")),
               "report {D}/base.csv --peers {D}/lib.csv", 2,
               {"--peers", "{D}/lib.csv line 2", "ref_pass 1 with ref_max_abs_err empty"}});
  v.push_back({"evidence", "compare --peers: ref_pass 1 with empty errors", file("lib.csv", pass_without_errors("_lib")),
               "compare --peers {D}/base.csv {D}/lib.csv", 2, {"{D}/lib.csv line 2", "ref_pass 1 with ref_max_abs_err empty"}});
  v.push_back({"evidence", "compare: NEW ref_pass 1 with empty errors", file("new.csv", pass_without_errors("")),
               "compare {D}/base.csv {D}/new.csv", 2, {"{D}/new.csv line 2", "ref_pass 1 with ref_max_abs_err empty"}});
  // A row whose columns contradict its case_id (the id pairs rows across files, the columns are what the
  // tables print): bad input naming the line and the column, in compare, report, --peers and JSON alike.
  const std::string tiny_id = test::kTinyDecode;
  bad_new_cell("batch contradicts the case_id", "batch", "4",
               {"{D}/new.csv line 2", "batch '4' contradicts case_id '" + tiny_id + "' (b=1)"});
  bad_new_cell("model contradicts the case_id", "model", "llama-3.1-8b",
               {"{D}/new.csv line 2", "model 'llama-3.1-8b' contradicts case_id", "(model tiny)"});
  bad_new_cell("page_size contradicts the case_id", "page_size", "16",
               {"page_size '16' contradicts", "(p=64)"});
  bad_new_cell("a case_id attnbench never writes", "case_id", "decode/tiny/b=1",
               {"{D}/new.csv line 2", "case_id 'decode/tiny/b=1' is not a case id as attnbench writes them"});
  v.push_back({"evidence", "report: dtype contradicts the case_id", file("x.csv", csv_with("dtype", "fp16")),
               "report {D}/x.csv", 2,
               {"{D}/x.csv line 2", "dtype 'fp16' contradicts case_id", "(dtype bf16)"}});
  v.push_back({"evidence", "report --peers: seed contradicts the case_id",
               file("lib.csv", csv_with("seed", "7", "_lib")), "report {D}/base.csv --peers {D}/lib.csv", 2,
               {"--peers", "{D}/lib.csv line 2", "seed '7' contradicts case_id", "(no seed=: seed 1)"}});
  v.push_back({"evidence", "compare: JSON mode contradicts the case_id",
               [](const TempDir& d) {
                 std::vector<ResultRow> rows = with_samples(good_rows(), 100, 10);
                 rows[1].mode = "verify";
                 write_json(d.file("new.json"), rows);
               },
               "compare {D}/base.json {D}/new.json", 2,
               {"{D}/new.json: row 1", "mode 'verify' contradicts case_id '" + tiny_id + "' (mode decode)"}});
  // A memory report naming a backend attnbench does not have: its figures are no evidence of anything here.
  v.push_back({"evidence", "report --memory: an unknown backend",
               file("mem-fa3.json", R"J({"schema": "attnbench.memory", "schema_version": 1, "model": "tiny",
                    "kv_bytes_per_token": 1024, "backends": [{"backend": "flashinfer", "phases": []},
                    {"backend": "fa3", "phases": [{"phase": "construct", "device_bytes": 1000,
                    "pinned_bytes": 0}]}]})J"),
               "report {D}/base.csv --memory {D}/mem-fa3.json", 2,
               {"memory report {D}/mem-fa3.json: backends[1].backend 'fa3' is not an attnbench backend "
                "(flashinfer, trtllm_mha or trtllm_mha_legacy)"}});
  // The same peer row in two --peers files: refused naming both, not one of them dropped.
  v.push_back({"evidence", "report --peers: a library row in two files", file("lib2.csv", csv_text(good_rows("_lib"))),
               "report {D}/base.csv --peers {D}/lib.csv --peers {D}/lib2.csv", 2,
               {"--peers: the row " + std::string(test::kTinyDecode) + "|flashinfer_lib|eager is in both '{D}/lib.csv' and '{D}/lib2.csv'"}});

  // -- inputs: no command writes over one of its inputs.
  const auto hardlink = [](const std::string& target, const std::string& name) {
    return [=](const TempDir& d) { fs::create_hard_link(d.file(target), d.file(name)); };
  };
  const auto symlink = [](const std::string& target, const std::string& name) {
    return [=](const TempDir& d) { fs::create_symlink(d.file(target), d.file(name)); };
  };
  v.push_back({"inputs", "compare A B --out B", none, "compare {D}/base.csv {D}/new.csv --out {D}/new.csv", 2,
               {"--out", "is the NEW file"}});
  v.push_back({"inputs", "compare A B --out A", none, "compare {D}/base.csv {D}/new.csv --out {D}/base.csv", 2,
               {"--out", "is the BASE file"}});
  v.push_back({"inputs", "compare A B --out (hard link of B)", hardlink("new.csv", "link.csv"),
               "compare {D}/base.csv {D}/new.csv --out {D}/link.csv", 2, {"--out", "is the NEW file"}});
  v.push_back({"inputs", "compare A B --out (symlink to A)", symlink("base.csv", "sym.csv"),
               "compare {D}/base.csv {D}/new.csv --out {D}/sym.csv --format csv", 2, {"is the BASE file"}});
  v.push_back({"inputs", "compare --peers A P --out P", none,
               "compare --peers {D}/base.csv {D}/lib.csv --out {D}/lib.csv", 2, {"is the NEW file"}});
  v.push_back({"inputs", "report X --out X", none, "report {D}/base.json --out {D}/base.json", 2,
               {"--out", "is the RESULTS file"}});
  v.push_back({"inputs", "report X --out (hard link of X)", hardlink("base.csv", "link.md"),
               "report {D}/base.csv --out {D}/link.md", 2, {"is the RESULTS file"}});
  v.push_back({"inputs", "report --memory M --out M", none,
               "report {D}/base.csv --memory {D}/mem.json --out {D}/mem.json", 2, {"is the --memory file"}});
  v.push_back({"evidence", "report --memory of another SGLang",
               [file](const TempDir& d) {
                 file("v.csv", csv_with("sglang_version", "0.5.23"))(d);
                 file("mem-old.json", R"J({"schema": "attnbench.memory", "schema_version": 1, "model": "tiny",
                    "context": {"sglang": "30cb848d4 (FlashInfer 0.6.15.post1)"}, "kv_bytes_per_token": 1024,
                    "backends": [{"backend": "flashinfer", "phases": [{"phase": "construct", "device_bytes": 1000,
                    "pinned_bytes": 0}]}]})J")(d);
               },
               "report {D}/v.csv --memory {D}/mem-old.json", 2,
               {"--memory {D}/mem-old.json models SGLang 30cb848d4", "SGLang 0.5.23"}});
  v.push_back({"evidence", "report --memory of another SGLang (its sglang_version field)",
               [file](const TempDir& d) {
                 file("v.csv", csv_with("sglang_version", "0.5.23"))(d);
                 file("mem-field.json", R"J({"schema": "attnbench.memory", "schema_version": 1, "model": "tiny",
                    "sglang_version": "30cb848d4", "context": {"sglang": "0.5.23 (the display text is not read)"},
                    "kv_bytes_per_token": 1024, "backends": [{"backend": "flashinfer", "phases": [{"phase":
                    "construct", "device_bytes": 1000, "pinned_bytes": 0}]}]})J")(d);
               },
               "report {D}/v.csv --memory {D}/mem-field.json", 2,
               {"--memory {D}/mem-field.json models SGLang 30cb848d4", "SGLang 0.5.23"}});
  v.push_back({"inputs", "report --memory M: sglang_version not text", [file](const TempDir& d) {
                 file("mem-num.json", R"J({"schema": "attnbench.memory", "schema_version": 1, "model": "tiny",
                    "sglang_version": 523, "kv_bytes_per_token": 1024, "backends": []})J")(d);
               },
               "report {D}/base.csv --memory {D}/mem-num.json", 2, {"mem-num.json", "sglang_version is not text"}});
  v.push_back({"inputs", "report --peers P --out P", none,
               "report {D}/base.csv --peers {D}/lib.csv --out {D}/lib.csv", 2, {"is the --peers file"}});
  v.push_back({"inputs", "report --peers P --out (symlink to P)", symlink("lib.csv", "sym.md"),
               "report {D}/base.csv --peers {D}/lib.csv --out {D}/sym.md", 2, {"is the --peers file"}});

  // -- writes: a failed write is an error.
  v.push_back({"writes", "compare --out /dev/full", none, "compare {D}/base.csv {D}/new.csv --out /dev/full", 1,
               {"cannot write '/dev/full'"}});
  v.push_back({"writes", "compare, stdout /dev/full", none, "compare {D}/base.csv {D}/new.csv", 1,
               {"cannot write stdout"}, ">/dev/full"});
  v.push_back({"writes", "compare, stdout closed", none, "compare {D}/base.csv {D}/new.csv --format json", 1,
               {"cannot write stdout"}, ">&-"});
  v.push_back({"writes", "compare --peers, stdout /dev/full", none, "compare --peers {D}/base.csv {D}/lib.csv", 1,
               {"cannot write stdout"}, ">/dev/full"});
  v.push_back({"writes", "report --out /dev/full", none, "report {D}/base.csv --out /dev/full", 1,
               {"cannot write '/dev/full'"}});
  v.push_back({"writes", "report, stdout /dev/full", none, "report {D}/base.csv", 1, {"cannot write stdout"},
               ">/dev/full"});
  v.push_back({"writes", "report, stdout closed", none, "report {D}/base.csv", 1, {"cannot write stdout"}, ">&-"});

  // -- hostile files: refused before they are read.
  v.push_back({"hostile", "compare: NEW is a FIFO", fifo("fifo.csv"), "compare {D}/base.csv {D}/fifo.csv", 2,
               {"{D}/fifo.csv", "not a regular file (a FIFO)"}});
  v.push_back({"hostile", "report: RESULTS is a FIFO", fifo("fifo.json"), "report {D}/fifo.json", 2,
               {"not a regular file (a FIFO)"}});
  v.push_back({"hostile", "report: --memory is a FIFO", fifo("fifo-mem.json"),
               "report {D}/base.csv --memory {D}/fifo-mem.json", 2, {"memory report", "a FIFO"}});
  v.push_back({"hostile", "report: --peers is a FIFO", fifo("fifo-lib.csv"),
               "report {D}/base.csv --peers {D}/fifo-lib.csv", 2, {"--peers", "a FIFO"}});
  v.push_back({"hostile", "compare: NEW is /dev/zero", none, "compare {D}/base.csv /dev/zero", 2,
               {"/dev/zero", "a character device"}});
  v.push_back({"hostile", "report: --memory is /dev/zero", none, "report {D}/base.csv --memory /dev/zero", 2,
               {"a character device"}});
  v.push_back({"hostile", "compare: NEW is a directory", [](const TempDir& d) { fs::create_directory(d.file("dir")); },
               "compare {D}/base.csv {D}/dir", 2, {"{D}/dir", "directory"}});
  v.push_back({"hostile", "compare: NEW of 600 MiB", [](const TempDir& d) { sparse_file(d.file("big.csv"), 600ll << 20); },
               "compare {D}/base.csv {D}/big.csv", 2, {"{D}/big.csv", "larger than 536870912 bytes"}});
  v.push_back({"hostile", "report: --memory of 65 MiB",
               [](const TempDir& d) { sparse_file(d.file("big-mem.json"), 65ll << 20); },
               "report {D}/base.csv --memory {D}/big-mem.json", 2, {"larger than 67108864 bytes"}});
  v.push_back({"hostile", "compare: NUL byte in a CSV",
               file("new.csv", csv_with("note", std::string("a\0b", 3))), "compare {D}/base.csv {D}/new.csv", 2,
               {"{D}/new.csv line 2", "NUL byte"}});
  v.push_back({"hostile", "compare: NUL byte in a JSON",
               file("nul.json", std::string("{\"schema\": \"attnbench.results\", \"rows\": [") + '\0' + "]}"),
               "compare {D}/base.json {D}/nul.json", 2, {"NUL byte"}});
  v.push_back({"hostile", "compare: JSON nested 100000 deep",
               file("deep.json", "{\"rows\": " + nested(100000) + "}"), "compare {D}/base.json {D}/deep.json", 2,
               {"{D}/deep.json", "nested deeper than 64"}});
  v.push_back({"hostile", "report: memory JSON nested 100000 deep",
               file("deep-mem.json", "{\"schema\": \"attnbench.memory\", \"context\": {\"x\": " + nested(100000) + "}}"),
               "report {D}/base.csv --memory {D}/deep-mem.json", 2, {"nested deeper than 64"}});
  v.push_back({"hostile", "report --peers: JSON nested 100000 deep", file("deep-lib.json", nested(100000)),
               "report {D}/base.csv --peers {D}/deep-lib.json", 2, {"--peers", "nested deeper than 64"}});
  return v;
}

// Runs one case in a fresh directory; the problems found (empty: as the issue wants).
std::vector<std::string> check_case(const Case& c) {
  TempDir d;
  write_common(d);
  c.setup(d);
  const auto before = stamps(d.path());
  const Outcome r = run(expand(c.args, d.path()), d, c.stdout_to);
  const auto after = stamps(d.path());
  std::vector<std::string> problems;
  if (r.exit_code != c.exit_code)
    problems.push_back("exit " + std::to_string(r.exit_code) + " (want " + std::to_string(c.exit_code) + ")" +
                       (r.exit_code == 124 ? ": it hung" : ""));
  for (const std::string& s : c.in_err)
    if (r.err.find(expand(s, d.path())) == std::string::npos) problems.push_back("stderr lacks '" + s + "'");
  if (c.one_line && (r.err.empty() || r.err.find('\n') != r.err.size() - 1))
    problems.push_back("stderr is not one line");
  if (c.exit_code == 2 && !r.out.empty()) problems.push_back("stdout is not empty");
  if (c.klass == "inputs" || c.exit_code == 2) {
    for (const auto& [name, stamp] : before) {
      const auto it = after.find(name);
      if (it == after.end() || !(it->second == stamp)) problems.push_back(name + " was touched");
    }
    for (const auto& [name, stamp] : after)
      if (!before.count(name)) problems.push_back(name + " was created");
  }
  if (!problems.empty()) problems.push_back("stderr: " + r.err.substr(0, 400));
  return problems;
}

TEST(HostileCompare, EveryClassEveryCase) {
  std::map<std::string, std::pair<int, int>> tally;  // class -> (cases, wrong)
  for (const Case& c : cases()) {
    const std::vector<std::string> problems = check_case(c);
    ++tally[c.klass].first;
    if (problems.empty()) continue;
    ++tally[c.klass].second;
    std::string list;
    for (const std::string& p : problems) list += "\n  - " + p;
    ADD_FAILURE() << "[" << c.klass << "] " << c.name << ": attnbench " << c.args << " " << c.stdout_to << list;
  }
  for (const auto& [klass, n] : tally)
    std::printf("hostile %s: %d cases, %d wrong (%s)\n", klass.c_str(), n.first, n.second,
                test::hostile_binary().c_str());
}

// Without --strict, too few samples for a verdict is a warning: exit 0, the verdict and the warning say why.
TEST(HostileCompare, TooFewSamplesWarnsWithoutStrict) {
  TempDir d;
  write_json(d.file("base.json"), with_samples(good_rows(), 100, 4));
  write_json(d.file("new.json"), with_samples(good_rows(), 120, 4));
  const Outcome r = run("compare " + d.file("base.json") + " " + d.file("new.json"), d);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("too few samples (4 vs 4; at least 5 per side needed at alpha 0.01)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("3 pair(s) with too few samples for a latency verdict (a failure with --strict)"),
            std::string::npos)
      << r.err;
}

// A successful --out replaces the file whole and leaves no temporary file beside it.
TEST(HostileCompare, OutputIsReplacedWhole) {
  TempDir d;
  write_common(d);
  test::write_file(d.file("out.md"), "old contents\n");
  const Outcome r = run("report " + d.file("base.csv") + " --out " + d.file("out.md"), d);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(test::read_file(d.file("out.md")).find("attnbench"), std::string::npos);
  for (const auto& e : fs::directory_iterator(d.path()))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
}

}  // namespace
}  // namespace attnbench
