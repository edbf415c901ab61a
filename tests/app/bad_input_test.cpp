// Bad input, enumerated: the CLI (run, validate, memory, list), config files, trace CSVs and results files.
// Every case that goes through the binary must exit 2 with exactly one line on stderr naming the culprit (the
// option, key or file), print nothing on stdout and write nothing (no --out file, no JSON beside it, no file
// at all in the test's directory). Results files are also read with read_results_csv directly: an InputError
// naming the file and what is wrong.
//
// At the bottom (BadInputRegression.*): inputs that used to overwrite an input or be taken silently, one test
// each.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "device/device_factory.hpp"
#include "report/results_io.hpp"
#include "support/result_rows.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

namespace fs = std::filesystem;
using test::run_attnbench;
using test::TempDir;

// A bad input for the binary. `args` may hold {D} (the test's directory) and {OUT} (a fresh --out path for
// this case, inside {D}); every string of `culprits` must appear in the error line.
struct BinaryCase {
  std::string category;  // cli | config | trace | compare
  std::string args;
  std::vector<std::string> culprits;
};

std::string expand(std::string s, const std::string& dir, const std::string& out) {
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"{D}", dir}, {"{OUT}", out}}) {
    for (std::size_t pos; (pos = s.find(key)) != std::string::npos;) s.replace(pos, key.size(), value);
  }
  return s;
}

// Every regular file under `dir` with its size and modification time: what a run could have written.
std::map<std::string, std::pair<std::uintmax_t, fs::file_time_type>> files_under(const std::string& dir) {
  std::map<std::string, std::pair<std::uintmax_t, fs::file_time_type>> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name == "stdout.txt" || name == "stderr.txt") continue;  // run_attnbench's own captures
    if (it->is_regular_file(ec)) out[it->path().string()] = {it->file_size(ec), it->last_write_time(ec)};
  }
  return out;
}

// Runs one case through the binary and checks the contract; returns false (after EXPECT failures) when
// broken.
bool expect_rejected(const BinaryCase& c, const TempDir& d, int index) {
  const std::string out = d.file("out-" + std::to_string(index)) + "/x.csv";
  const std::string args = expand(c.args, d.path(), out);
  const auto before = files_under(d.path());
  const auto r = run_attnbench(args, d);
  const auto after = files_under(d.path());
  std::vector<std::string> problems;
  const auto check = [&](bool cond, const std::string& what) {
    if (!cond) problems.push_back(what);
  };
  check(r.exit_code == 2, "exit code " + std::to_string(r.exit_code) + ", not 2");
  check(std::count(r.err.begin(), r.err.end(), '\n') == 1 && !r.err.empty() && r.err.back() == '\n',
        "stderr is not exactly one line");
  check(r.err.rfind("attnbench: error: ", 0) == 0, "stderr does not start with 'attnbench: error: '");
  for (const auto& culprit : c.culprits) {
    const std::string want = expand(culprit, d.path(), out);
    check(r.err.find(want) != std::string::npos, "stderr does not name '" + want + "'");
  }
  check(r.out.empty(), "stdout is not empty");
  check(!fs::exists(out), "the --out file was created");
  std::string written;
  for (const auto& [path, stamp] : after) {
    const auto it = before.find(path);
    if (it == before.end() || it->second != stamp) written += " " + path;
  }
  check(written.empty(), "files were written:" + written);
  std::string list;
  for (const auto& p : problems) list += "\n  - " + p;
  EXPECT_TRUE(problems.empty()) << "[" << c.category << "] attnbench " << args << list
                                << "\n  stderr: " << r.err << "  stdout: " << r.out.substr(0, 300);
  const bool ok = problems.empty();
  return ok;
}

// A path nobody can open for reading, root included: a UNIX socket (open() fails with ENXIO). As another
// user, a mode-000 file is used instead where `prefer_file` asks for it.
std::string make_unreadable(const TempDir& d, const std::string& name, bool prefer_file) {
  const std::string path = d.file(name);
  if (prefer_file && ::geteuid() != 0) {
    test::write_file(path, "model = \"tiny\"\n");
    ::chmod(path.c_str(), 0);
    return path;
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    ADD_FAILURE() << "socket " << path;
  ::close(fd);  // the socket file stays
  return path;
}

// ---- results files, read with read_results_csv -----------------------------------------------------------

struct ResultsCase {
  std::string name;
  std::string text;                   // file content
  std::vector<std::string> culprits;  // each must appear in the InputError's message (besides the path)
};

ResultRow sample_row() {
  ResultRow r = test::tiny_row("trtllm_mha");
  r.note = "ref: layers 0 1, sampled; stop: converged";
  r.step_median_us = 12.5;
  r.ref_max_abs_err = 0.001;
  r.repro = "attnbench run --model tiny --batch 1 --kv-len 8";
  return r;
}

constexpr const char* kTraceHeader = "request_id,prefix_len,extend_len\n";

// The binary's cases. Sweeps run with --device cpu and the tiny preset, so a case that is wrongly accepted
// finishes in seconds (and then fails the test because it exited 0 and wrote its CSV).
std::vector<BinaryCase> binary_cases(const TempDir& d) {
  const std::string run =
      "run --device cpu --model tiny --batch 1 --kv-len 8 --warmup 0 --min-samples 1 --max-samples 2 --out "
      "{OUT}";
  const std::string validate = "validate --device cpu --model tiny --batch 1 --kv-len 8 --out {OUT}";
  const std::string memory = "memory --device cpu --model tiny --out {OUT}";
  const std::string extend =
      "run --device cpu --model tiny --mode extend --warmup 0 --min-samples 1 --max-samples 2 --out {OUT}";
  std::vector<BinaryCase> v = {
      // ---- command line: run / validate
      {"cli", run + " --batch abc", {"--batch"}},
      {"cli", run + " --batch 0", {"--batch"}},
      {"cli", run + " --batch 99999999999", {"--batch"}},
      {"cli", run + " --batch", {"--batch"}},
      {"cli", run + " --batch 5000", {"--batch", "--max-running-requests"}},
      {"cli", run + " --kv-len -1", {"--kv-len"}},
      {"cli", run + " --kv-len 99999999", {"--kv-len", "context length"}},
      {"cli", "run --device cpu --model gpt-9 --batch 1 --kv-len 8 --out {OUT}", {"--model", "gpt-9"}},
      {"cli", run + " --mode prefill", {"--mode", "prefill"}},
      {"cli", run + " --dtype fp8", {"--dtype", "fp8"}},
      {"cli", run + " --kv-cache-dtype fp8", {"--kv-cache-dtype", "fp8"}},
      {"cli", run + " --kv-cache-dtype fp8_e4m3fn", {"--kv-cache-dtype", "fp8_e4m3fn"}},
      {"cli", run + " --kv-cache-dtype fp16", {"--kv-cache-dtype", "fp16"}},  // the model dtype is bf16
      {"cli", run + " --kv-cache-dtype", {"--kv-cache-dtype"}},
      {"cli", "memory --device cpu --kv-cache-dtype int8", {"--kv-cache-dtype", "int8"}},
      {"cli", run + " --backend fastattn", {"--backend", "fastattn"}},
      {"cli", run + " --page-size 3", {"--page-size"}},
      {"cli", run + " --page-size 8 --backend trtllm_mha", {"--page-size"}},
      {"cli", run + " --tp-size 3", {"--tp-size"}},
      {"cli", run + " --layers -1", {"--layers"}},
      {"cli", run + " --layers abc", {"--layers"}},
      {"cli", run + " --seed abc", {"--seed"}},
      {"cli", run + " --length-dist normal", {"--length-dist", "normal"}},
      {"cli", run + " --length-min -1", {"--length-min"}},
      {"cli", run + " --timing cold", {"--timing", "cold"}},
      {"cli", run + " --warmup -1", {"--warmup"}},
      {"cli", validate + " --min-samples 5 --max-samples 2", {"--max-samples"}},
      {"cli", run + " --time-budget 0", {"--time-budget"}},
      {"cli", run + " --time-budget nan", {"--time-budget"}},
      {"cli", run + " --reference-flop-budget 0", {"--reference-flop-budget"}},
      {"cli", run + " --case-id decode/nope", {"--case-id", "decode/nope"}},
      {"cli", run + " --mode verify --draft-tokens 0", {"--draft-tokens"}},
      {"cli", run + " --mode extend --extend-len 0", {"--extend-len"}},
      {"cli", run + " --mode extend --prefix-len -1", {"--prefix-len"}},
      {"cli", run + " --max-running-requests 0", {"--max-running-requests"}},
      {"cli", run + " --context-len 99999999", {"--context-len"}},
      {"cli", run + " --context-length 99999999", {"--context-length"}},
      {"cli", run + " --attention-backend fastattn", {"--attention-backend", "fastattn"}},
      {"cli", run + " --mode verify --speculative-num-draft-tokens 0", {"--speculative-num-draft-tokens"}},
      {"cli", run + " --cuda-graph-max-bs 0", {"--cuda-graph-max-bs"}},
      {"cli", run + " --flashinfer-use-tensor-core maybe", {"--flashinfer-use-tensor-core"}},
      {"cli", run + " --kv-len 2147483647", {"--kv-len"}},  // int + 1 must not wrap past the context check
      {"cli", run + " --mode verify --kv-len 2147483646", {"--kv-len"}},
      {"cli", run + " --kv-len 0100", {"--kv-len", "0100"}},  // not octal 64
      {"cli", run + " --seed -1", {"--seed", "-1"}},          // not 2^64 - 1
      {"cli", run + " --seed 0x10", {"--seed", "0x10"}},
      {"cli", run + " --length-dist zipf --zipf-s 0", {"--zipf-s"}},
      {"cli", run + " --target-spread -5", {"--target-spread"}},
      {"cli", run + " --target-spread nan", {"--target-spread"}},
      {"cli", run + " --reference-flop-budget nan", {"--reference-flop-budget"}},
      {"cli", run + " --json {D}/a-file/x.json", {"--json", "{D}/a-file/x.json"}},
      {"cli", run + " --json {D}", {"--json", "{D}"}},
      {"cli", run + " --bogus-flag", {"--bogus-flag"}},
      {"cli", run + " stray-positional", {"stray-positional"}},
      {"cli", "run --device quantum --model tiny --batch 1 --kv-len 8 --out {OUT}", {"--device", "quantum"}},
      {"cli", "run --device cpu --model tiny --batch 1 --kv-len 8 --out {D}", {"--out", "{D}"}},
      {"cli",
       "run --device cpu --model tiny --batch 1 --kv-len 8 --out {D}/a-file/x.csv",
       {"--out", "{D}/a-file/x.csv"}},
      {"cli", validate + " --mode decode,bogus", {"--mode", "bogus"}},
      {"cli", validate + " --dtype bf16,fp64", {"--dtype", "fp64"}},
      {"cli", validate + " --model tiny,nope", {"--model", "nope"}},
      // ---- command line: memory, list, no / unknown subcommand
      {"cli", memory + " --format xml", {"--format", "xml"}},
      {"cli", "memory --device cpu --model gpt-9 --out {OUT}", {"--model", "gpt-9"}},
      {"cli", memory + " --backend fastattn", {"--backend", "fastattn"}},
      {"cli", memory + " --prefill-backend fastattn", {"--prefill-backend", "fastattn"}},
      {"cli", memory + " --prefill-attention-backend fastattn", {"--prefill-attention-backend", "fastattn"}},
      {"cli", memory + " --decode-attention-backend fastattn", {"fastattn"}},
      {"cli", memory + " --page-size 48", {"--page-size"}},
      {"cli", memory + " --cuda-graph-bs 0", {"--cuda-graph-bs"}},
      {"cli", memory + " --speculative-num-draft-tokens 100", {"--speculative-num-draft-tokens"}},
      {"cli", memory + " --flashinfer-workspace-size -1", {"--flashinfer-workspace-size"}},
      {"cli",
       "memory --device cpu --model tiny --backend trtllm_mha --out {D}/a-file/m.csv",
       {"--out", "{D}/a-file/m.csv"}},
      {"cli", "list --bogus", {"--bogus"}},
      {"cli", "list extra-word", {"extra-word"}},
      {"cli", "list --model tiny", {"--model"}},
      {"cli", "", {"subcommand"}},
      {"cli", "frobnicate", {"frobnicate"}},
      // ---- config files (run / validate / memory --config FILE)
      {"config",
       run + " --config {D}/unknown-key.toml",
       {"unknown key", "bogus-key", "{D}/unknown-key.toml"}},
      {"config", run + " --config {D}/unknown-key-in-section.toml", {"unknown key", "not-an-option"}},
      {"config", run + " --config {D}/key-of-another-command.toml", {"unknown key", "max-slowdown"}},
      // toml++'s own message, with the line (CLI11's reader said "unknown key" for a line without '=').
      {"config", run + " --config {D}/not-toml.toml", {"{D}/not-toml.toml line 1", "expected '='"}},
      {"config", run + " --config {D}/wrong-type-int.toml", {"--time-budget"}},
      {"config", run + " --config {D}/wrong-type-list.toml", {"--mode", "bogus"}},
      {"config",
       "run --device cpu --model tiny --kv-len 8 --out {OUT} --config {D}/wrong-type-list-item.toml",
       {"--batch"}},
      {"config", run + " --config {D}/wrong-type-bool.toml", {"--sinks"}},
      {"config", run + " --config {D}/list-for-scalar.toml", {"--speculative-num-draft-tokens"}},
      {"config", run + " --config {D}/duplicate-scalar-key.toml", {"draft-tokens"}},
      {"config",
       "run --device cpu --model tiny --kv-len 8 --out {OUT} --config {D}/duplicate-list-key.toml",
       {"duplicate key", "batch"}},
      {"config", run + " --config {D}/empty.toml", {"--config", "{D}/empty.toml", "empty"}},
      {"config", run + " --config {D}/comments-only.toml", {"--config", "{D}/comments-only.toml", "empty"}},
      {"config", run + " --config {D}/unknown-section.toml", {"{D}/unknown-section.toml", "bogus"}},
      {"config", run + " --config {D}/negative-seed.toml", {"--seed"}},
      {"config",
       "run --device cpu --model tiny --batch 1 --kv-len 8 --out {OUT} --config {D}/octal-warmup.toml",
       {"--warmup", "010"}},
      {"config",
       "run --device cpu --batch 1 --kv-len 8 --out {OUT} --config {D}/unknown-model.toml",
       {"--model", "nope"}},
      {"config",
       "run --device cpu --batch 1 --kv-len 8 --out {OUT} --config {D}/unterminated-string.toml",
       {"--model"}},
      {"config", memory + " --config {D}/memory-bad-format.toml", {"--format", "xml"}},
      {"config", run + " --config {D}/a-directory", {"--config", "{D}/a-directory"}},
      {"config", run + " --config {D}/missing.toml", {"--config", "{D}/missing.toml"}},
      {"config", run + " --config {D}/unreadable.toml", {"--config", "{D}/unreadable.toml"}},
      {"config", run + " --config", {"--config"}},
      // ---- trace CSVs (run --trace FILE): the file is named, with the line where it matters
      {"trace",
       extend + " --trace {D}/trace-missing-column.csv",
       {"{D}/trace-missing-column.csv", "extend_len"}},
      {"trace", extend + " --trace {D}/trace-extra-column.csv", {"{D}/trace-extra-column.csv", "foo"}},
      {"trace",
       extend + " --trace {D}/trace-duplicate-column.csv",
       {"{D}/trace-duplicate-column.csv", "prefix_len"}},
      {"trace", extend + " --trace {D}/trace-not-a-number.csv", {"{D}/trace-not-a-number.csv line 3", "abc"}},
      {"trace", extend + " --trace {D}/trace-fraction.csv", {"{D}/trace-fraction.csv line 2", "1.5"}},
      {"trace", extend + " --trace {D}/trace-hex.csv", {"{D}/trace-hex.csv line 2", "0x10"}},
      {"trace",
       extend + " --trace {D}/trace-negative-prefix.csv",
       {"{D}/trace-negative-prefix.csv line 2", "prefix_len"}},
      {"trace",
       extend + " --trace {D}/trace-zero-extend.csv",
       {"{D}/trace-zero-extend.csv line 2", "extend_len"}},
      {"trace",
       extend + " --trace {D}/trace-overflow.csv",
       {"{D}/trace-overflow.csv line 2", "99999999999999999999"}},
      {"trace", extend + " --trace {D}/trace-oversized.csv", {"{D}/trace-oversized.csv line 2", "16777216"}},
      {"trace",
       extend + " --trace {D}/trace-too-few-cells.csv",
       {"{D}/trace-too-few-cells.csv line 2", "too few"}},
      {"trace",
       extend + " --trace {D}/trace-too-many-cells.csv",
       {"{D}/trace-too-many-cells.csv line 2", "too many"}},
      {"trace",
       extend + " --trace {D}/trace-unterminated-quote.csv",
       {"{D}/trace-unterminated-quote.csv", "quoted"}},
      {"trace", extend + " --trace {D}/trace-empty.csv", {"{D}/trace-empty.csv", "empty"}},
      {"trace", extend + " --trace {D}/trace-header-only.csv", {"{D}/trace-header-only.csv", "no rows"}},
      {"trace",
       extend + " --trace {D}/trace-huge.csv",
       {"{D}/trace-huge.csv line 1000002", "more than 1000000 rows"}},
      {"trace", extend + " --trace {D}/trace-beyond-context.csv", {"{D}/trace-beyond-context.csv"}},
      {"trace",
       "run --device cpu --model tiny --mode verify --out {OUT} --trace {D}/trace-beyond-context.csv",
       {"{D}/trace-beyond-context.csv"}},
      {"trace",
       extend + " --trace {D}/trace-too-many-requests.csv",
       {"{D}/trace-too-many-requests.csv", "--max-running-requests"}},
      {"trace", extend + " --trace {D}/a-directory", {"{D}/a-directory", "directory"}},
      {"trace", extend + " --trace {D}/missing.csv", {"{D}/missing.csv", "cannot read"}},
      {"trace", extend + " --trace {D}/unreadable.csv", {"{D}/unreadable.csv", "cannot read"}},
  };
  // `compare BASE NEW` (the CI gate) reads results files through read_results_csv / the JSON reader
  const std::string good = " {D}/good.csv";
  for (const BinaryCase& c : std::vector<BinaryCase>{
           {"compare",
            "compare" + good + " {D}/cmp-truncated.csv --out {OUT}",
            {"{D}/cmp-truncated.csv line 3"}},
           {"compare",
            "compare {D}/cmp-v3.csv" + good + " --out {OUT}",
            {"{D}/cmp-v3.csv", "schema_version 3"}},
           {"compare",
            "compare" + good + " {D}/cmp-v3.json --out {OUT}",
            {"{D}/cmp-v3.json", "schema_version 3"}},
           {"compare", "compare" + good + " {D}/cmp-truncated.json --out {OUT}", {"{D}/cmp-truncated.json"}},
           {"compare",
            "compare" + good + " {D}/cmp-out-of-order.csv --out {OUT}",
            {"{D}/cmp-out-of-order.csv line 2", "step_median_us '12.5' is above step_p90_us '2'"}},
           {"compare", "compare" + good + " {D}/missing.csv --out {OUT}", {"{D}/missing.csv"}},
           {"compare", "compare" + good + " {D}/a-directory --out {OUT}", {"{D}/a-directory"}},
           {"compare", "compare" + good + " --out {OUT}", {"new"}},
           {"compare", "compare" + good + good + " --alpha 2 --out {OUT}", {"--alpha"}},
           // Gates that could never fail: NaN compares false, CLI11 clamped the overflow to 2^63 - 1.
           {"compare", "compare" + good + good + " --max-slowdown nan --out {OUT}", {"--max-slowdown", "finite"}},
           {"compare", "compare" + good + good + " --max-slowdown inf --out {OUT}", {"--max-slowdown", "finite"}},
           {"compare", "compare" + good + good + " --min-effect nan --out {OUT}", {"--min-effect", "finite"}},
           {"compare",
            "compare" + good + good + " --max-memory-growth 99999999999999999999 --out {OUT}",
            {"--max-memory-growth", "beyond 2^63 - 1"}},
           {"compare", "compare" + good + good + " --format xml --out {OUT}", {"--format", "xml"}},
           {"compare", "compare" + good + good + " --out {D}/a-file/x.md", {"--out", "{D}/a-file/x.md"}},
       })
    v.push_back(c);
  // --device cuda is bad input only where no GPU is usable (CI); on a GPU machine it would run.
  const auto env = run_attnbench("env", d);
  if (env.out.find("gpu: none usable") != std::string::npos)
    v.push_back({"cli",
                 "run --device cuda --model tiny --batch 1 --kv-len 8 --out {OUT}",
                 {"--device 'cuda': no usable GPU"}});
  return v;
}

void write_binary_case_files(const TempDir& d) {
  using test::write_file;
  fs::create_directories(d.file("a-directory"));
  write_file(d.file("a-file"), "a regular file where a directory is expected\n");
  // config files
  write_file(d.file("unknown-key.toml"), "model = [\"tiny\"]\nbogus-key = 3\n");
  write_file(d.file("unknown-key-in-section.toml"), "[run]\nnot-an-option = 1\n");
  write_file(d.file("key-of-another-command.toml"), "max-slowdown = 0.1\n");
  write_file(d.file("not-toml.toml"), "this is not toml\n");
  write_file(d.file("wrong-type-int.toml"), "time-budget = \"fast\"\n");
  write_file(d.file("wrong-type-list.toml"), "mode = [\"decode\", \"bogus\"]\n");
  write_file(d.file("wrong-type-list-item.toml"), "batch = [1, \"x\"]\n");
  write_file(d.file("wrong-type-bool.toml"), "sinks = \"maybe\"\n");
  write_file(d.file("list-for-scalar.toml"), "draft-tokens = [1, 2]\n");
  write_file(d.file("duplicate-scalar-key.toml"), "draft-tokens = 2\ndraft-tokens = 3\n");
  write_file(d.file("duplicate-list-key.toml"), "batch = [1]\nbatch = [2]\n");
  write_file(d.file("empty.toml"), "");
  write_file(d.file("comments-only.toml"), "# nothing but a comment\n\n");
  write_file(d.file("unknown-section.toml"), "[bogus]\nx = 1\n");
  write_file(d.file("negative-seed.toml"), "seed = [-1]\n");
  write_file(d.file("octal-warmup.toml"), "warmup = 010\n");
  write_file(d.file("unknown-model.toml"), "model = \"nope\"\n");
  write_file(d.file("unterminated-string.toml"), "model = \"tiny\n");
  write_file(d.file("memory-bad-format.toml"), "[memory]\nformat = \"xml\"\n");
  make_unreadable(d, "unreadable.toml", /*prefer_file=*/true);
  // trace files
  const std::string h = kTraceHeader;
  write_file(d.file("trace-missing-column.csv"), "request_id,prefix_len\nr0,1\n");
  write_file(d.file("trace-extra-column.csv"), "request_id,prefix_len,extend_len,foo\nr0,1,2,3\n");
  write_file(d.file("trace-duplicate-column.csv"), "request_id,prefix_len,extend_len,prefix_len\nr0,1,2,3\n");
  write_file(d.file("trace-not-a-number.csv"), h + "r0,1,2\nr1,abc,2\n");
  write_file(d.file("trace-fraction.csv"), h + "r0,1.5,2\n");
  write_file(d.file("trace-hex.csv"), h + "r0,1,0x10\n");
  write_file(d.file("trace-negative-prefix.csv"), h + "r0,-1,2\n");
  write_file(d.file("trace-zero-extend.csv"), h + "r0,1,0\n");
  write_file(d.file("trace-overflow.csv"), h + "r0,1,99999999999999999999\n");
  write_file(d.file("trace-oversized.csv"), h + "r0,16777215,2\n");
  write_file(d.file("trace-too-few-cells.csv"), h + "r0,1\n");
  write_file(d.file("trace-too-many-cells.csv"), h + "r0,1,2,3\n");
  write_file(d.file("trace-unterminated-quote.csv"), h + "\"r0,1,2\n");
  write_file(d.file("trace-empty.csv"), "");
  write_file(d.file("trace-header-only.csv"), h);
  write_file(d.file("trace-beyond-context.csv"), h + "r0,0,1\nr1,5000,10\n");  // tiny's context is 4096
  {
    std::string t = h;
    for (int i = 0; i < 5000; ++i) t += "r" + std::to_string(i) + ",1,1\n";  // > --max-running-requests 4096
    write_file(d.file("trace-too-many-requests.csv"), t);
  }
  make_unreadable(d, "unreadable.csv", /*prefer_file=*/false);
  // results files for `compare`
  const std::string rh = results_csv_header() + "\n", line = results_csv_line(sample_row());
  write_file(d.file("good.csv"), rh + line + "\n");
  write_file(d.file("cmp-truncated.csv"), rh + line + "\n" + line.substr(0, line.size() / 2) + "\n");
  write_file(d.file("cmp-v3.csv"), rh + "3" + line.substr(1) + "\n");
  {  // a median of 12.5 inside a p10-p90 of 1-2 (the gate read it as "ambiguous": a pass)
    ResultRow r = sample_row();
    r.samples = 5;
    r.step_p10_us = 1;
    r.step_p90_us = 2;
    write_file(d.file("cmp-out-of-order.csv"), rh + results_csv_line(r) + "\n");
  }
  write_file(d.file("cmp-v3.json"),
             "{\"schema\": \"attnbench.results\", \"schema_version\": 3, \"rows\": []}\n");
  write_file(d.file("cmp-truncated.json"),
             "{\"schema\": \"attnbench.results\", \"schema_version\": 1, \"rows\": [");
  {  // 1,000,001 valid rows: one more than kMaxTraceRows (about 13 MB)
    std::string text = h;
    text.reserve(16u << 20);
    char row[32];
    for (int i = 0; i <= 1000000; ++i)
      text.append(row, static_cast<std::size_t>(std::snprintf(row, sizeof row, "r%d,0,1\n", i)));
    std::ofstream(d.file("trace-huge.csv"), std::ios::binary) << text;
  }
}

// `line` with cell `column` replaced by `value` (cells split on commas outside quotes).
std::string with_cell(const std::string& line, const std::string& column, const std::string& value) {
  const auto& cols = results_csv_columns();
  const std::size_t target =
      static_cast<std::size_t>(std::find(cols.begin(), cols.end(), column) - cols.begin());
  std::string out;
  std::size_t cell = 0;
  bool quoted = false;
  for (std::size_t i = 0; i <= line.size(); ++i) {
    const bool end_of_cell = i == line.size() || (line[i] == ',' && !quoted);
    if (i < line.size() && line[i] == '"') quoted = !quoted;
    if (cell == target) {
      if (end_of_cell) {
        out += value;
        if (i < line.size()) out += ',';
        ++cell;
      }
      continue;
    }
    if (i < line.size()) out += line[i];
    if (end_of_cell) ++cell;
  }
  return out;
}

std::string header_without(const std::string& column) {
  std::string out;
  for (const auto& c : results_csv_columns())
    if (c != column) out += (out.empty() ? "" : ",") + c;
  return out;
}

std::vector<ResultsCase> results_cases() {
  const std::string h = results_csv_header() + "\n";
  const std::string line = results_csv_line(sample_row());
  const std::string row = line + "\n";
  const std::size_t half = line.find(',', line.size() / 2);
  std::string header_twice_case_id = results_csv_header() + ",case_id\n";
  return {
      {"truncated-row", h + row + line.substr(0, half) + "\n", {"line 3", "too few columns"}},
      {"truncated-last-line-no-newline", h + row + line.substr(0, half), {"line 3", "too few columns"}},
      {"cut-inside-quoted-note", h + line.substr(0, line.find("ref: layers") + 5), {"quoted"}},
      {"too-many-cells", h + line + ",extra\n", {"line 2", "too many columns"}},
      {"missing-column-repro",
       header_without("repro") + "\n" + line.substr(0, line.rfind(',')) + "\n",
       {"missing column 'repro'"}},
      {"missing-column-schema-version",
       header_without("schema_version") + "\n" + line.substr(2) + "\n",
       {"missing column 'schema_version'"}},
      {"duplicate-column", header_twice_case_id + line + ",x\n", {"duplicate column 'case_id'"}},
      {"schema-version-3",
       h + with_cell(line, "schema_version", "3") + "\n",
       {"schema_version 3", "reads 1 to 2"}},
      {"schema-version-0",
       h + with_cell(line, "schema_version", "0") + "\n",
       {"schema_version 0", "reads 1 to 2"}},
      {"schema-version-text",
       h + with_cell(line, "schema_version", "v1") + "\n",
       {"line 2", "schema_version 'v1'"}},
      {"schema-version-3-after-a-good-row",
       h + row + with_cell(line, "schema_version", "3") + "\n",
       {"schema_version 3"}},
      {"empty-file", "", {"empty file"}},
      {"integer-not-a-number", h + with_cell(line, "layers", "abc") + "\n", {"line 2", "layers 'abc'"}},
      {"integer-overflow",
       h + with_cell(line, "batch", "99999999999") + "\n",
       {"line 2", "batch '99999999999'"}},
      {"integer-empty", h + with_cell(line, "q_tokens", "") + "\n", {"line 2", "q_tokens ''"}},
      {"negative-seed", h + with_cell(line, "seed", "-1") + "\n", {"line 2", "seed '-1'"}},
      {"double-junk", h + with_cell(line, "kv_len_mean", "1.5.2") + "\n", {"line 2", "kv_len_mean '1.5.2'"}},
      {"bytes-fraction",
       h + with_cell(line, "ctor_device_bytes", "1.5") + "\n",
       {"line 2", "ctor_device_bytes '1.5'"}},
      {"bool-not-0-or-1", h + with_cell(line, "ref_pass", "yes") + "\n", {"line 2", "ref_pass 'yes'"}},
      // columns that contradict the row's case_id (test::kTinyDecode), and an id attnbench never writes
      {"batch-contradicts-case-id",
       h + with_cell(line, "batch", "2") + "\n",
       {"line 2", "batch '2' contradicts case_id", "(b=1)"}},
      {"mode-contradicts-case-id",
       h + with_cell(line, "mode", "verify") + "\n",
       {"line 2", "mode 'verify' contradicts case_id"}},
      {"seed-contradicts-case-id",
       h + with_cell(line, "seed", "2") + "\n",
       {"line 2", "seed '2' contradicts", "(no seed=: seed 1)"}},
      {"case-id-not-an-id",
       h + with_cell(line, "case_id", "decode/tiny/p=64/bf16") + "\n",
       {"line 2", "case_id 'decode/tiny/p=64/bf16' is not a case id"}},
      {"binary-garbage", std::string("\x01\x02\xff\xfe,\x00\x00\n\x7f", 10), {"NUL byte"}},
  };
}

// ---- the enumeration
// ----------------------------------------------------------------------------------------

TEST(BadInput, EveryBadInputIsRejectedCleanly) {
  TempDir d;
  write_binary_case_files(d);
  std::map<std::string, int> per_category;
  int checked = 0;

  const std::vector<BinaryCase> cases = binary_cases(d);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    expect_rejected(cases[i], d, static_cast<int>(i));
    ++per_category[cases[i].category];
    ++checked;
  }

  // Results files: InputError naming the file and what is wrong, in one line.
  std::vector<ResultsCase> rc = results_cases();
  const std::string unreadable = make_unreadable(d, "unreadable-results.csv", /*prefer_file=*/true);
  for (std::size_t i = 0; i < rc.size(); ++i) {
    const std::string path = d.file("results-" + rc[i].name + ".csv");
    std::ofstream(path, std::ios::binary) << rc[i].text;
    rc[i].name = path;
  }
  rc.push_back({d.file("a-directory"), "", {"is a directory"}});
  rc.push_back({d.file("results-missing.csv"), "", {"cannot read"}});
  {
    // As root make_unreadable may give a socket (refused before reading: not a regular file).
    struct stat st {};
    const bool regular = ::stat(unreadable.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    rc.push_back({unreadable, "", {regular ? "cannot read" : "not a regular file"}});
  }
  for (const ResultsCase& c : rc) {
    try {
      const auto rows = read_results_csv(c.name);
      ADD_FAILURE() << "[results] " << c.name << ": accepted (" << rows.size() << " rows)";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("results " + c.name, 0), 0u)
          << "[results] does not start with 'results FILE': " << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << "[results] more than one line: " << what;
      for (const auto& culprit : c.culprits)
        EXPECT_NE(what.find(culprit), std::string::npos)
            << "[results] " << c.name << ": no '" << culprit << "' in: " << what;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "[results] " << c.name << ": not an InputError: " << e.what();
    }
    ++per_category["results"];
    ++checked;
  }

  std::printf("bad inputs checked: %d (cli %d, config %d, trace %d, compare %d, results %d)\n", checked,
              per_category["cli"], per_category["config"], per_category["trace"], per_category["compare"],
              per_category["results"]);
  EXPECT_GE(checked, 40);
}

// ---- regressions: inputs that once overwrote an input or were taken silently, one test each ----------------

// Runs `args` as one bad input in a fresh directory after `setup` wrote its files there.
template <class Setup>
void expect_one_rejected(const std::string& args, std::vector<std::string> culprits, Setup setup) {
  TempDir d;
  setup(d);
  expect_rejected({"regression", args, std::move(culprits)}, d, 0);
}
void expect_one_rejected(const std::string& args, std::vector<std::string> culprits) {
  expect_one_rejected(args, std::move(culprits), [](const TempDir&) {});
}

const std::string kRun =
    "run --device cpu --model tiny --batch 1 --kv-len 8 --warmup 0 --min-samples 1 --max-samples 2 --out "
    "{OUT}";

TEST(BadInputRegression, JsonSameFileAsOutOverwritesTheCsv) {
  expect_one_rejected(kRun + " --json {OUT}", {"--json", "--out"});
}

TEST(BadInputRegression, OutSameFileAsTheConfigOverwritesTheConfig) {
  expect_one_rejected(
      "run --device cpu --batch 1 --kv-len 8 --warmup 0 --min-samples 1 --max-samples 2 "
      "--config {D}/c.toml --out {D}/c.toml",
      {"--out", "{D}/c.toml"},
      [](const TempDir& d) { test::write_file(d.file("c.toml"), "model = [\"tiny\"]\n"); });
}

TEST(BadInputRegression, OutSameFileAsTheTraceOverwritesTheTrace) {
  expect_one_rejected(
      "run --device cpu --model tiny --mode extend --warmup 0 --min-samples 1 --max-samples 2 "
      "--trace {D}/t.csv --out {D}/t.csv",
      {"--out", "{D}/t.csv"},
      [](const TempDir& d) { test::write_file(d.file("t.csv"), std::string(kTraceHeader) + "r0,1,2\n"); });
}

TEST(BadInputRegression, QuotedDuplicateKeyIsMergedSilently) {
  expect_one_rejected(
      "run --device cpu --model tiny --kv-len 8 --warmup 0 --min-samples 1 --max-samples 2 --out {OUT} "
      "--config {D}/dup.toml",
      {"duplicate key", "batch"},
      [](const TempDir& d) { test::write_file(d.file("dup.toml"), "\"batch\" = [1]\n\"batch\" = [2]\n"); });
}

TEST(BadInputRegression, TopLevelKeyAndRunSectionKeyForTheSameOptionFirstOneWins) {
  expect_one_rejected(
      "run --device cpu --model tiny --kv-len 8 --warmup 0 --min-samples 1 --max-samples 2 --out {OUT} "
      "--config {D}/both.toml",
      {"batch"},
      [](const TempDir& d) { test::write_file(d.file("both.toml"), "batch = [1]\n[run]\nbatch = [2]\n"); });
}

TEST(BadInputRegression, ValidateSectionAppliesToRun) {
  TempDir d;
  test::write_file(d.file("v.toml"), "[validate]\nbatch = [3]\n");
  const auto r =
      run_attnbench("run --device cpu --model tiny --kv-len 8 --list-cases --config " + d.file("v.toml"), d);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("b=3"), std::string::npos) << "run took batch from [validate]:\n" << r.out;
}

// --device gpu (cuda's other spelling) where no GPU is usable said "--device cuda: no usable GPU": a value
// the user did not type. The error names --device, the value as typed, and what --device takes.
TEST(BadInputRegression, DeviceWithoutAUsableGpuIsNamedAsTyped) {
  if (gpu_availability().usable) GTEST_SKIP() << "a usable GPU: --device gpu runs here";
  const std::string takes =
      "--device takes auto, cpu, cuda, gpu (= cuda) or cuda:N, and here only auto or cpu";
  expect_one_rejected("run --device gpu --model tiny --batch 1 --kv-len 8 --out {OUT}",
                      {"--device 'gpu': no usable GPU (", takes});
  expect_one_rejected("validate --device cuda:1 --model tiny --batch 1 --kv-len 8 --out {OUT}",
                      {"--device 'cuda:1': no usable GPU (", takes});
  expect_one_rejected("memory --device gpu --model tiny --out {OUT}",
                      {"--device 'gpu': no usable GPU (", takes});
  // An unknown value lists the accepted ones, gpu among them.
  expect_one_rejected("run --device tpu --model tiny --batch 1 --kv-len 8 --out {OUT}",
                      {"--device: unknown device 'tpu' (expected auto, cpu, cuda, gpu (= cuda) or cuda:N)"});
}

}  // namespace
}  // namespace attnbench
