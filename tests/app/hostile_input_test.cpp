// Hostile input and hostile outputs, class by class, through the binary (run / validate / memory / list / env):
//   1. no command writes over its input (a hard link, a symlink or the same name as --config / --trace);
//   2. a failed write is an error (/dev/full, a closed stdout): exit 1 and one clear line;
//   3. one writer per results file (an advisory lock; the second run exits 2 naming the file and the pid);
//   4. --resume resumes the same sweep (an options fingerprint in the JSON report), and its exit code covers
//      the whole file;
//   5. hostile files and patterns neither crash nor hang (FIFOs, devices, sizes, nesting, backtracking);
//   6. values are what they say (64-bit ranges, NUL bytes, flags, repeated list values, control characters,
//      sweeps too large to build).
// Every input runs the binary without a shell (exact bytes in argv) under a time limit: a hang is a failure,
// not a stuck test. ATTNBENCH_HOSTILE_BINARY, when set, runs another binary (e.g. an older build, to count the
// inputs it fails).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "core/files.hpp"
#include "report/results_io.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

enum class Stdout { file, dev_full, closed };

struct Result {
  int exit_code = -1;  // -1: killed (timed out or by a signal)
  bool timed_out = false;
  std::string out, err;
};

// Starts the binary with `args` in `dir`; stdout / stderr to files in `dir` (stdout possibly /dev/full or closed).
pid_t start(const std::vector<std::string>& args, const TempDir& dir, Stdout out_mode, const std::string& tag) {
  const std::string out = dir.file(tag + ".stdout"), err = dir.file(tag + ".stderr");
  const std::string bin = test::hostile_binary();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(dir.path().c_str()) != 0) _exit(126);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(e, 2);
    if (out_mode == Stdout::closed) {
      ::close(1);
    } else {
      const int o = ::open(out_mode == Stdout::dev_full ? "/dev/full" : out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(o, 1);
    }
    std::vector<char*> argv{const_cast<char*>(bin.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(bin.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

Result finish(pid_t pid, const TempDir& dir, const std::string& tag, double timeout_s) {
  Result r;
  int status = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > timeout_s) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!r.timed_out && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.out = test::read_file(dir.file(tag + ".stdout"));
  r.err = test::read_file(dir.file(tag + ".stderr"));
  fs::remove(dir.file(tag + ".stdout"));
  fs::remove(dir.file(tag + ".stderr"));
  return r;
}

Result run(const std::vector<std::string>& args, const TempDir& dir, Stdout out_mode = Stdout::file,
           double timeout_s = 60) {
  return finish(start(args, dir, out_mode, "run"), dir, "run", timeout_s);
}

// The checks each class makes, collected per input so that a summary can say how many inputs held.
struct Tally {
  std::string name;
  int inputs = 0, held = 0;
  ~Tally() { std::printf("hostile input, %s: %d of %d inputs handled as required\n", name.c_str(), held, inputs); }
  // One input: `problems` empty means it held.
  void add(const std::string& input, const std::vector<std::string>& problems, const Result& r) {
    ++inputs;
    if (problems.empty()) {
      ++held;
      return;
    }
    std::string list;
    for (const auto& p : problems) list += "\n  - " + p;
    ADD_FAILURE() << "[" << name << "] " << input << list << "\n  exit " << r.exit_code
                  << (r.timed_out ? " (timed out)" : "") << "\n  stderr: " << r.err.substr(0, 600);
  }
};

using test::has;

// One line on stderr, "attnbench: error: ...", with no raw control byte.
void one_clean_line(const Result& r, std::vector<std::string>& p) {
  if (std::count(r.err.begin(), r.err.end(), '\n') != 1 || r.err.empty() || r.err.back() != '\n')
    p.push_back("stderr is not exactly one line");
  if (r.err.rfind("attnbench: error: ", 0) != 0) p.push_back("stderr does not start with 'attnbench: error: '");
  for (std::size_t i = 0; i + 1 < r.err.size(); ++i) {
    const auto c = static_cast<unsigned char>(r.err[i]);
    if (c < 0x20 || c == 0x7f) {
      p.push_back("stderr holds a raw control byte");
      break;
    }
  }
}

// Exit 2, one clean line naming every culprit.
std::vector<std::string> rejected(const Result& r, const std::vector<std::string>& culprits) {
  std::vector<std::string> p;
  if (r.timed_out) p.push_back("timed out (a hang)");
  if (r.exit_code != 2) p.push_back("exit " + std::to_string(r.exit_code) + ", not 2");
  one_clean_line(r, p);
  for (const auto& c : culprits)
    if (!has(r.err, c)) p.push_back("stderr does not name '" + c + "'");
  return p;
}

std::vector<std::string> tiny_run(const std::string& out) {
  return {"run",         "--device", "cpu", "--model",       "tiny", "--batch", "1",       "--kv-len", "8",
          "--warmup",    "0",        "--min-samples", "1",    "--max-samples", "2",    "--quiet", "--out",    out};
}

std::vector<std::string> plus(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string numbers(int from, int to) {
  std::string s;
  for (int i = from; i <= to; ++i) s += (s.empty() ? "" : ",") + std::to_string(i);
  return s;
}

constexpr const char* kTraceHeader = "request_id,prefix_len,extend_len\n";

// ---- 1. no command writes over its input -----------------------------------------------------------------

TEST(HostileInput, NoCommandWritesOverItsInput) {
  Tally t{"1 outputs never overwrite inputs"};
  struct Case {
    std::string name;
    std::function<std::vector<std::string>(const TempDir&)> setup;  // makes the files, returns the args
    std::string input;                                               // the file that must stay as it was
    std::vector<std::string> culprits;
  };
  const std::string config = "model = [\"tiny\"]\nbatch = [1]\nkv-len = [8]\nwarmup = 0\nmin-samples = 1\nmax-samples = 2\n";
  const std::string trace = std::string(kTraceHeader) + "r0,1,2\n";
  const auto write = [](const TempDir& d, const std::string& name, const std::string& text) {
    test::write_file(d.file(name), text);
  };
  const auto link = [](const TempDir& d, const std::string& from, const std::string& to) {
    fs::create_hard_link(d.file(from), d.file(to));
  };
  // A --model config.json to protect (the tiny preset's file).
  const std::string tiny_json = test::read_file(std::string(ATTNBENCH_SOURCE_DIR) + "/configs/models/tiny.json");
  const std::vector<Case> cases = {
      {"run --out: a hard link of --config",
       [&](const TempDir& d) {
         write(d, "c.toml", config);
         link(d, "c.toml", "hl.csv");
         return std::vector<std::string>{"run", "--device", "cpu", "--quiet", "--config", "c.toml", "--out", "hl.csv"};
       },
       "c.toml",
       {"--out", "hl.csv", "--config"}},
      {"run --json: a hard link of --config",
       [&](const TempDir& d) {
         write(d, "c.toml", config);
         link(d, "c.toml", "hl.json");
         return std::vector<std::string>{"run", "--device", "cpu", "--quiet", "--config", "c.toml",
                                         "--out",  "r.csv",    "--json", "hl.json"};
       },
       "c.toml",
       {"--json", "hl.json", "--config"}},
      {"run --json: a hard link of --trace",
       [&](const TempDir& d) {
         write(d, "t.csv", trace);
         link(d, "t.csv", "hl.json");
         return std::vector<std::string>{"run", "--device", "cpu", "--model", "tiny", "--mode", "extend", "--warmup",
                                         "0", "--min-samples", "1", "--max-samples", "2", "--quiet", "--trace",
                                         "t.csv", "--out", "r.csv", "--json", "hl.json"};
       },
       "t.csv",
       {"--json", "--trace"}},
      {"validate --out: a hard link of --trace",
       [&](const TempDir& d) {
         write(d, "t.csv", trace);
         link(d, "t.csv", "hl.csv");
         return std::vector<std::string>{"validate", "--device", "cpu",   "--model", "tiny", "--mode", "extend",
                                         "--trace",  "t.csv",    "--out", "hl.csv"};
       },
       "t.csv",
       {"--out", "--trace"}},
      {"memory --out: the --config file by name",
       [&](const TempDir& d) {
         write(d, "m.toml", "model = \"tiny\"\n");
         return std::vector<std::string>{"memory", "--device", "cpu", "--config", "m.toml", "--out", "m.toml"};
       },
       "m.toml",
       {"--out", "--config"}},
      {"memory --out: a symlink to --config",
       [&](const TempDir& d) {
         write(d, "m.toml", "model = \"tiny\"\n");
         fs::create_symlink("m.toml", d.file("sym.txt"));
         return std::vector<std::string>{"memory", "--device", "cpu", "--config", "m.toml", "--out", "sym.txt"};
       },
       "m.toml",
       {"--out", "sym.txt", "--config"}},
      {"memory --out: a hard link of --config",
       [&](const TempDir& d) {
         write(d, "m.toml", "model = \"tiny\"\n");
         link(d, "m.toml", "hl.txt");
         return std::vector<std::string>{"memory", "--device", "cpu", "--config", "m.toml", "--out", "hl.txt"};
       },
       "m.toml",
       {"--out", "hl.txt", "--config"}},
      // The --model config.json is an input too: the JSON beside --out (m.csv -> m.json), an explicit --json or
      // --out, and a model folder's config.json (snap/config.csv -> snap/config.json).
      {"run --out m.csv: its JSON would be the --model m.json",
       [&](const TempDir& d) {
         write(d, "m.json", tiny_json);
         return std::vector<std::string>{"run", "--device", "cpu", "--model", "m.json", "--warmup", "0", "--min-samples",
                                         "1", "--max-samples", "1", "--quiet", "--out", "m.csv"};
       },
       "m.json",
       {"--json", "m.json", "--model"}},
      {"validate --out: a model folder's config.json",
       [&](const TempDir& d) {
         fs::create_directories(d.file("snap"));
         write(d, "snap/config.json", tiny_json);
         return std::vector<std::string>{"validate", "--device", "cpu", "--model", "snap", "--out", "snap/config.json"};
       },
       "snap/config.json",
       {"--out", "--model"}},
      {"memory --out: the --model file",
       [&](const TempDir& d) {
         write(d, "m.json", tiny_json);
         return std::vector<std::string>{"memory", "--device", "cpu", "--model", "m.json", "--out", "m.json"};
       },
       "m.json",
       {"--out", "--model"}},
      {"run --json: a hard link of the --out results (outputs are each other's input on --resume)",
       [&](const TempDir& d) {
         write(d, "r.csv", "x\n");
         link(d, "r.csv", "hl.json");
         return plus(tiny_run("r.csv"), {"--json", "hl.json"});
       },
       "r.csv",
       {"--json", "hl.json", "--out"}},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    TempDir d;
    const auto args = cases[i].setup(d);
    const std::string before = test::read_file(d.file(cases[i].input));
    const Result r = run(args, d);
    auto p = rejected(r, cases[i].culprits);
    if (test::read_file(d.file(cases[i].input)) != before) p.push_back(cases[i].input + " was changed");
    t.add(cases[i].name, p, r);
  }
}

// ---- 2. a failed write is an error -----------------------------------------------------------------------

TEST(HostileInput, AFailedWriteIsAnError) {
  Tally t{"2 failed writes"};
  struct Case {
    std::string name;
    std::vector<std::string> args;
    Stdout out;
    std::string reason;  // in the message
  };
  const std::string full = "No space left on device", closed = "Bad file descriptor";
  const std::vector<Case> cases = {
      {"run --out /dev/full (the CSV)", plus(tiny_run("/dev/full"), {"--json", "r.json"}), Stdout::file, full},
      {"run --json /dev/full (the JSON report)", plus(tiny_run("r.csv"), {"--json", "/dev/full"}), Stdout::file, full},
      {"memory --out /dev/full", {"memory", "--device", "cpu", "--model", "tiny", "--out", "/dev/full"}, Stdout::file, full},
      {"memory --format json > /dev/full",
       {"memory", "--device", "cpu", "--model", "tiny", "--format", "json"},
       Stdout::dev_full,
       full},
      {"memory with stdout closed", {"memory", "--device", "cpu", "--model", "tiny"}, Stdout::closed, closed},
      {"list > /dev/full", {"list"}, Stdout::dev_full, full},
      {"env with stdout closed", {"env"}, Stdout::closed, closed},
      {"run --list-cases > /dev/full",
       {"run", "--model", "tiny", "--batch", "1,2", "--list-cases"},
       Stdout::dev_full,
       full},
      {"validate (its table) > /dev/full",
       {"validate", "--device", "cpu", "--model", "tiny", "--batch", "1", "--kv-len", "8", "--quiet", "--out", "v.csv"},
       Stdout::dev_full,
       full},
      {"--version > /dev/full", {"--version"}, Stdout::dev_full, full},
  };
  for (const Case& c : cases) {
    TempDir d;
    const Result r = run(c.args, d, c.out);
    std::vector<std::string> p;
    if (r.timed_out) p.push_back("timed out");
    if (r.exit_code != 1) p.push_back("exit " + std::to_string(r.exit_code) + ", not 1");
    // Progress may come first (the write fails after the work): the error is the last line, and one line.
    Result last = r;
    if (const auto nl = r.err.rfind('\n', r.err.size() >= 2 ? r.err.size() - 2 : 0);
        nl != std::string::npos && nl + 1 < r.err.size())
      last.err = r.err.substr(nl + 1);
    one_clean_line(last, p);
    if (!has(last.err, "cannot write")) p.push_back("no 'cannot write' in the message");
    if (!has(r.err, c.reason)) p.push_back("the message does not say '" + c.reason + "'");
    t.add(c.name, p, r);
  }
}

// ---- 3. one writer per results file ----------------------------------------------------------------------

TEST(HostileInput, OneWriterPerResultsFile) {
  Tally t{"3 one writer per results file"};
  const std::string pid = "pid " + std::to_string(::getpid());
  {  // the same --out, held by a lock of this process
    TempDir d;
    FileLock held(d.file("r.csv"));
    const Result r = run(tiny_run("r.csv"), d);
    auto p = rejected(r, {"--out", "r.csv", "another attnbench run", pid});
    if (fs::exists(d.file("r.csv"))) p.push_back("r.csv was written");
    t.add("--out held by another writer", p, r);
  }
  {  // the same file through a symlink
    TempDir d;
    FileLock held(d.file("r.csv"));
    fs::create_symlink("r.csv", d.file("link.csv"));
    const Result r = run(tiny_run("link.csv"), d);
    t.add("--out a symlink to a file held by another writer", rejected(r, {"--out", "link.csv", pid}), r);
  }
  {  // the same file by another spelling of its name
    TempDir d;
    fs::create_directories(d.file("sub"));
    FileLock held(d.file("r.csv"));
    const Result r = run(tiny_run("sub/../r.csv"), d);
    t.add("--out sub/../r.csv held as r.csv", rejected(r, {"--out", pid}), r);
  }
  {  // the JSON report held
    TempDir d;
    FileLock held(d.file("j.json"), "--json");
    const Result r = run(plus(tiny_run("r.csv"), {"--json", "j.json"}), d);
    t.add("--json held by another writer", rejected(r, {"--json", "j.json", pid}), r);
  }
  {  // two real runs: the second exits 2 naming the first one's pid while the first one writes
    TempDir d;
    // Every row samples for its whole time budget (1 s): the first run writes for minutes unless stopped.
    const std::vector<std::string> slow = {"run", "--device", "cpu", "--model", "tiny", "--batch", "1", "--kv-len", "8",
                                           "--seed", numbers(1, 40), "--warmup", "0", "--min-samples", "1000000",
                                           "--max-samples", "1000000", "--time-budget", "1", "--quiet", "--out", "r.csv"};
    const pid_t first = start(slow, d, Stdout::file, "first");
    // Until the first run writes rows (its signal handler is then installed: SIGINT stops it gracefully).
    const auto lines = [&] {
      const std::string csv = test::read_file(d.file("r.csv"));
      return std::count(csv.begin(), csv.end(), '\n');
    };
    for (int i = 0; i < 3000 && lines() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const Result second = run(slow, d, Stdout::file, 30);
    // The same file under another name (a hard link): its own OUT.lock is free, the file itself is not.
    const std::string before_link = test::read_file(d.file("r.csv"));
    fs::create_hard_link(d.file("r.csv"), d.file("link.csv"));
    std::vector<std::string> by_link = slow;
    by_link.back() = "link.csv";
    by_link.insert(by_link.end(), {"--json", "link.json"});
    const Result third = run(by_link, d, Stdout::file, 30);
    const std::string after_link = test::read_file(d.file("r.csv"));
    ::kill(first, SIGINT);
    const Result r1 = finish(first, d, "first", 60);
    t.add("a second run with the same --out while the first one writes",
          rejected(second, {"--out", "r.csv", "pid " + std::to_string(first)}), second);
    auto linked = rejected(third, {"--out", "link.csv", "another attnbench run is writing this file"});
    if (after_link.rfind(before_link, 0) != 0) linked.push_back("the first run's rows were truncated");
    t.add("a second run writing the first one's --out through a hard link", linked, third);
    EXPECT_TRUE(r1.exit_code == 130 || r1.exit_code == 0) << "exit " << r1.exit_code << ": " << r1.err;
    // The first run's CSV is whole: every line a complete row.
    EXPECT_NO_THROW(read_results_csv(d.file("r.csv")));
    EXPECT_FALSE(fs::exists(d.file("r.csv.lock"))) << "the lock file outlives its run";
  }
}

// ---- 4. --resume resumes the same sweep ---------------------------------------------------------------------

TEST(HostileInput, ResumeResumesTheSameSweep) {
  Tally t{"4 --resume"};
  const std::vector<std::string> base = {"run", "--device", "cpu", "--model", "tiny", "--batch", "1", "--kv-len", "8",
                                         "--seed", "1,2", "--warmup", "0", "--min-samples", "1", "--max-samples", "2",
                                         "--quiet", "--out", "r.csv"};
  TempDir first;
  test::write_file(first.file("t.csv"), std::string(kTraceHeader) + "r0,1,2\n");
  ASSERT_EQ(run(base, first).exit_code, 0);
  const auto fresh = [&](TempDir& d) {
    fs::copy_file(first.file("r.csv"), d.file("r.csv"));
    fs::copy_file(first.file("r.json"), d.file("r.json"));
  };
  const auto with = [&](const std::string& option, const std::string& value) {
    std::vector<std::string> a = base;
    const auto it = std::find(a.begin(), a.end(), option);
    if (it != a.end())
      *(it + 1) = value;
    else
      a.insert(a.end(), {option, value});
    a.push_back("--resume");
    return a;
  };
  struct Case {
    std::string name;
    std::vector<std::string> args;
    std::vector<std::string> culprits;
  };
  const std::vector<Case> other_options = {
      {"--batch differs", with("--batch", "2"), {"--resume", "r.csv", "--batch 1 (now 2)"}},
      {"--seed differs", with("--seed", "1,2,3"), {"--seed 1,2 (now 1,2,3)"}},
      {"--warmup differs (sampling shapes the rows)", with("--warmup", "1"), {"--warmup 0 (now 1)"}},
      {"--sinks added", plus(with("--seed", "1,2"), {"--sinks"}), {"--sinks false (now true)"}},
  };
  for (const Case& c : other_options) {
    TempDir d;
    fresh(d);
    const std::string before = test::read_file(d.file("r.csv"));
    const Result r = run(c.args, d);
    auto p = rejected(r, c.culprits);
    if (test::read_file(d.file("r.csv")) != before) p.push_back("r.csv was changed");
    t.add(c.name, p, r);
  }
  {  // validate rows in a run's file
    TempDir d;
    fresh(d);
    std::vector<std::string> a = with("--seed", "1,2");
    a[0] = "validate";
    const Result r = run(a, d);
    t.add("validate --resume of a run's results", rejected(r, {"subcommand run (now validate)"}), r);
  }
  {  // no JSON report: nothing says which options wrote the CSV
    TempDir d;
    fresh(d);
    fs::remove(d.file("r.json"));
    const Result r = run(with("--seed", "1,2"), d);
    t.add("the JSON report is missing", rejected(r, {"--resume", "r.json", "missing"}), r);
  }
  {  // a JSON report without the fingerprint (an older attnbench)
    TempDir d;
    fresh(d);
    std::string json = test::read_file(d.file("r.json"));
    const auto at = json.find("\"options_fingerprint\"");
    ASSERT_NE(at, std::string::npos);
    json.replace(at, std::string("\"options_fingerprint\"").size(), "\"old_key\"");
    test::write_file(d.file("r.json"), json);
    const Result r = run(with("--seed", "1,2"), d);
    t.add("the JSON report has no fingerprint", rejected(r, {"--resume", "options_fingerprint"}), r);
  }
  {  // the trace's contents changed under the same name
    TempDir d;
    test::write_file(d.file("t.csv"), std::string(kTraceHeader) + "r0,1,2\n");
    const std::vector<std::string> tr = {"run", "--device", "cpu", "--model", "tiny", "--mode", "extend", "--trace",
                                         "t.csv", "--warmup", "0", "--min-samples", "1", "--max-samples", "2",
                                         "--quiet", "--out", "r.csv"};
    ASSERT_EQ(run(tr, d).exit_code, 0);
    test::write_file(d.file("t.csv"), std::string(kTraceHeader) + "r0,3,2\n");
    const Result r = run(plus(tr, {"--resume"}), d);
    t.add("the --trace file changed", rejected(r, {"--resume", "--trace"}), r);
  }
  {  // a run killed while writing a row: its last line has no line feed; --resume drops it and runs its case again
    TempDir d;
    fresh(d);
    const std::string whole = test::read_file(d.file("r.csv"));
    const auto rows_before = read_results_csv(d.file("r.csv")).size();
    const auto last_start = whole.rfind('\n', whole.size() - 2) + 1;
    test::write_file(d.file("r.csv"), whole.substr(0, last_start + (whole.size() - last_start) / 2));
    const Result r = run(with("--seed", "1,2"), d);
    std::vector<std::string> p;
    if (r.exit_code != 0) p.push_back("exit " + std::to_string(r.exit_code) + ", not 0");
    if (!has(r.err, "cut off before its line feed, dropped")) p.push_back("stderr does not say the torn line was dropped");
    try {
      const auto rows = read_results_csv(d.file("r.csv"));
      if (rows.size() != rows_before) p.push_back(std::to_string(rows.size()) + " rows after, not " + std::to_string(rows_before));
    } catch (const std::exception& e) {
      p.push_back(std::string("the CSV does not read back: ") + e.what());
    }
    // The complete cases' lines stay as they were, first; the torn row's case (all its rows) ran again after them.
    const auto rows = read_results_csv(first.file("r.csv"));
    const std::string torn_case = rows.back().case_id;
    std::string kept;
    std::size_t at = whole.find('\n') + 1;  // after the header
    kept = whole.substr(0, at);
    for (std::size_t end; (end = whole.find('\n', at)) != std::string::npos; at = end + 1) {
      const std::string line = whole.substr(at, end - at + 1);
      if (line.find("," + torn_case + ",") == std::string::npos) kept += line;
    }
    if (test::read_file(d.file("r.csv")).rfind(kept, 0) != 0) p.push_back("the complete cases' rows changed");
    t.add("--resume after a row cut off mid-line", p, r);
  }
  {  // a kept row whose columns contradict its case_id (an edited CSV): bad input naming line and column
    TempDir d;
    fresh(d);
    auto rows = read_results_csv(d.file("r.csv"));
    ASSERT_FALSE(rows.empty());
    rows[0].batch = 3;
    {
      ResultsCsvWriter w(d.file("r.csv"));
      for (const auto& row : rows) w.write(row);
    }
    const std::string before = test::read_file(d.file("r.csv"));
    const Result r = run(with("--seed", "1,2"), d);
    auto p = rejected(r, {"r.csv line 2", "batch '3' contradicts case_id '" + rows[0].case_id + "' (b=1)"});
    if (test::read_file(d.file("r.csv")) != before) p.push_back("r.csv was changed");
    t.add("a row whose batch contradicts its case_id", p, r);
  }
  {  // the exit code covers the whole file: a failed row written earlier still makes it 1
    TempDir d;
    fresh(d);
    auto rows = read_results_csv(d.file("r.csv"));
    ASSERT_FALSE(rows.empty());
    rows[0].status = RowStatus::failed;
    rows[0].note = "failed in an earlier run";
    {
      ResultsCsvWriter w(d.file("r.csv"));
      for (const auto& row : rows) w.write(row);
    }
    const Result r = run(with("--seed", "1,2"), d);
    std::vector<std::string> p;
    if (r.exit_code != 1) p.push_back("exit " + std::to_string(r.exit_code) + ", not 1");
    if (!has(r.err, "written earlier")) p.push_back("stderr does not say that earlier rows failed");
    t.add("a failed row from an earlier run (nothing left to run)", p, r);
  }
  {  // what does not shape the rows may change: the selection, quietness, the JSON path
    TempDir d;
    fresh(d);
    const Result r = run(plus(with("--seed", "1,2"), {"--filter", "seed=2"}), d);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
}

// ---- 5. hostile files neither crash nor hang -------------------------------------------------------------

TEST(HostileInput, HostileFilesNeitherCrashNorHang) {
  Tally t{"5 hostile files"};
  struct Case {
    std::string name;
    std::function<std::vector<std::string>(const TempDir&)> setup;
    std::vector<std::string> culprits;
  };
  const auto fifo = [](const TempDir& d, const std::string& name) {
    EXPECT_EQ(::mkfifo(d.file(name).c_str(), 0644), 0);
  };
  const std::vector<std::string> extend = {"run", "--device", "cpu", "--model", "tiny", "--mode", "extend",
                                           "--quiet", "--out", "r.csv"};
  // Case ids with a run of 40 'a's and no 'x': backtracking regexes explode on them.
  const std::string a40 = std::string(40, 'a') + ".csv";
  const auto a_trace = [&](const TempDir& d) {
    test::write_file(d.file(a40), std::string(kTraceHeader) + "r0,1,2\n");
    return std::vector<std::string>{"run", "--model", "tiny", "--trace", a40, "--list-cases", "--filter"};
  };
  const std::vector<Case> cases = {
      {"--config FIFO",
       [&](const TempDir& d) {
         fifo(d, "c.toml");
         return plus(tiny_run("r.csv"), {"--config", "c.toml"});
       },
       {"--config", "c.toml", "FIFO"}},
      {"--config=FIFO",
       [&](const TempDir& d) {
         fifo(d, "c.toml");
         return plus(tiny_run("r.csv"), {"--config=c.toml"});
       },
       {"--config", "FIFO"}},
      {"--trace FIFO",
       [&](const TempDir& d) {
         fifo(d, "t.csv");
         return plus(extend, {"--trace", "t.csv"});
       },
       {"t.csv", "FIFO"}},
      {"--config /dev/zero", [&](const TempDir&) { return plus(tiny_run("r.csv"), {"--config", "/dev/zero"}); },
       {"--config", "/dev/zero", "character device"}},
      {"--trace /dev/zero", [&](const TempDir&) { return plus(extend, {"--trace", "/dev/zero"}); },
       {"/dev/zero", "character device"}},
      {"--config of 100,000 nested '['",
       [&](const TempDir& d) {
         test::write_file(d.file("c.toml"), "batch = " + std::string(100000, '[') + "\n");
         return plus(tiny_run("r.csv"), {"--config", "c.toml"});
       },
       {"--config", "c.toml"}},
      {"--config of a 300,000-part dotted key",
       [&](const TempDir& d) {
         std::string key = "a";
         for (int i = 0; i < 300000; ++i) key += ".a";
         test::write_file(d.file("c.toml"), key + " = 1\n");
         return plus(tiny_run("r.csv"), {"--config", "c.toml"});
       },
       {"--config", "c.toml"}},
      {"--config larger than 1 MiB",
       [&](const TempDir& d) {
         test::write_file(d.file("c.toml"), "model = [\"tiny\"]\n" + std::string(2 << 20, '#') + "\n");
         return std::vector<std::string>{"run", "--config", "c.toml", "--list-cases"};
       },
       {"--config", "larger than 1048576 bytes"}},
      {"--trace larger than 64 MiB (sparse)",
       [&](const TempDir& d) {
         { std::ofstream(d.file("t.csv")) << kTraceHeader; }
         fs::resize_file(d.file("t.csv"), (std::uintmax_t{64} << 20) + 1);
         return plus(extend, {"--trace", "t.csv"});
       },
       {"t.csv", "larger than 67108864 bytes"}},
      {"[[run]]: an array of tables",
       [&](const TempDir& d) {
         test::write_file(d.file("c.toml"), "[[run]]\nbatch = [1]\n");
         return std::vector<std::string>{"run", "--model", "tiny", "--config", "c.toml", "--list-cases"};
       },
       {"--config", "array of tables"}},
      {"--filter of 20,000 nested parentheses",
       [&](const TempDir&) {
         return std::vector<std::string>{"run", "--model", "tiny", "--list-cases", "--filter",
                                         std::string(20000, '(') + "a" + std::string(20000, ')')};
       },
       {"--filter"}},
      {"--filter (a*)*x (exponential backtracking)", [&](const TempDir& d) { return plus(a_trace(d), {"(a*)*x"}); },
       {"--filter", "no case id matches"}},
      {"--filter (a+)+x", [&](const TempDir& d) { return plus(a_trace(d), {"(a+)+x"}); },
       {"--filter", "no case id matches"}},
      {"--filter (a|aa)*x", [&](const TempDir& d) { return plus(a_trace(d), {"(a|aa)*x"}); },
       {"--filter", "no case id matches"}},
  };
  for (const Case& c : cases) {
    TempDir d;
    const auto args = c.setup(d);
    const Result r = run(args, d, Stdout::file, 20);
    auto p = rejected(r, c.culprits);
    if (fs::exists(d.file("r.csv"))) p.push_back("r.csv was written");
    t.add(c.name, p, r);
  }
}

// A config whose window SGLang's class does not apply gets a note on stderr, but only once the model is valid: a
// model refused for another key (Phi-3-mini's head_dim 96) is the one error line, with no note before it.
TEST(HostileInput, AWindowNoteNeverPrecedesAnError) {
  TempDir d;
  test::write_file(d.file("phi3.json"),
                   R"({"architectures": ["Phi3ForCausalLM"], "hidden_size": 3072, "num_attention_heads": 32,
                       "num_key_value_heads": 32, "num_hidden_layers": 32, "max_position_embeddings": 4096,
                       "sliding_window": 2047, "torch_dtype": "bfloat16"})");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"memory", "--model", "phi3.json"},
        std::vector<std::string>{"validate", "--model", "phi3.json", "--layers", "1", "--batch", "1", "--kv-len", "8"}}) {
    const Result r = run(args, d);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("attnbench: error: --model"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("head_dim 96"), std::string::npos) << r.err;
  }
  // The same window on a valid model: the note, once.
  const std::string mistral = std::string(ATTNBENCH_SOURCE_DIR) + "/tests/data/mistral-7b-v0.1.json";
  const Result ok = run({"memory", "--model", mistral}, d);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  const auto note = ok.err.find("sliding_window 4096 not applied");
  EXPECT_NE(note, std::string::npos) << ok.err;
  EXPECT_EQ(ok.err.find("sliding_window 4096 not applied", note + 1), std::string::npos) << ok.err;
}

TEST(HostileInput, ValidTomlIsAccepted) {
  // CLI11's own reader refused these; TOML allows them.
  Tally t{"5b valid TOML accepted"};
  const std::vector<std::pair<std::string, std::string>> configs = {
      {"a multi-line array", "batch = [\n  1,\n  2,\n]\nmodel = [\"tiny\"]\n"},
      {"a multi-line string", "model = [\"\"\"\ntiny\"\"\"]\nbatch = [1, 2]\n"},
      {"an inline comment after an array", "batch = [1, 2] # two batches\nmodel = ['tiny']\n"},
  };
  for (const auto& [name, text] : configs) {
    TempDir d;
    test::write_file(d.file("c.toml"), text);
    const Result r = run({"run", "--config", "c.toml", "--list-cases"}, d);
    std::vector<std::string> p;
    if (r.exit_code != 0) p.push_back("exit " + std::to_string(r.exit_code));
    if (!has(r.out, "decode/tiny/b=1/") || !has(r.out, "decode/tiny/b=2/")) p.push_back("not both batches listed");
    t.add(name, p, r);
  }
}

// ---- 6. values are what they say -------------------------------------------------------------------------

TEST(HostileInput, ValuesAreWhatTheySay) {
  Tally t{"6 values"};
  struct Case {
    std::string name;
    std::function<std::vector<std::string>(const TempDir&)> setup;
    std::vector<std::string> culprits;
  };
  const std::vector<std::string> list = {"run", "--model", "tiny", "--list-cases"};
  const auto config = [](const std::string& text) {
    return [text](const TempDir& d) {
      test::write_file(d.file("c.toml"), text);
      return std::vector<std::string>{"run", "--model", "tiny", "--list-cases", "--config", "c.toml"};
    };
  };
  const auto args = [](std::vector<std::string> a) { return [a](const TempDir&) { return a; }; };
  const std::vector<Case> cases = {
      // 64-bit ranges: refused, not clamped
      {"--seed 2^64", args(plus(list, {"--seed", "18446744073709551616"})), {"--seed", "18446744073709551616"}},
      {"--seed 1,99999999999999999999999", args(plus(list, {"--seed", "1,99999999999999999999999"})), {"--seed"}},
      {"seed = [2^64] in TOML", config("seed = [18446744073709551616]\n"), {"--config", "seed"}},
      {"--flashinfer-workspace-size 2^63",
       args(plus(list, {"--flashinfer-workspace-size", "9223372036854775808"})),
       {"--flashinfer-workspace-size"}},
      // NUL bytes
      {"a NUL byte in --config", config(std::string("model = [\"tiny\"]\nbatch = [1]\0\n", 30)),
       {"--config", "line 2", "NUL"}},
      {"a NUL byte in --trace",
       [](const TempDir& d) {
         test::write_file(d.file("t.csv"), std::string(kTraceHeader) + std::string("r\0,1,2\n", 7));
         return std::vector<std::string>{"run", "--model", "tiny", "--mode", "extend", "--trace", "t.csv", "--list-cases"};
       },
       {"t.csv", "line 2", "NUL"}},
      // flags are booleans
      {"sinks = 1 in TOML", config("sinks = 1\n"), {"--config", "--sinks", "flag"}},
      {"--sinks=1", args(plus(list, {"--sinks=1"})), {"--sinks", "takes no value"}},
      {"--sinks=false", args(plus(list, {"--sinks=false"})), {"--sinks", "takes no value"}},
      {"--disable-cuda-graph=true", args(plus(list, {"--disable-cuda-graph=true"})), {"--disable-cuda-graph"}},
      // a list holds each value once
      {"--batch 1,1", args(plus(list, {"--batch", "1,1"})), {"--batch", "'1'", "twice"}},
      {"--mode decode,decode", args(plus(list, {"--mode", "decode,decode"})), {"--mode", "'decode'"}},
      {"--seed 1,1", args(plus(list, {"--seed", "1,1"})), {"--seed", "'1'"}},
      {"--model tiny,tiny", args({"run", "--model", "tiny,tiny", "--list-cases"}), {"--model", "'tiny'"}},
      {"--backend flashinfer,flashinfer",
       args({"run", "--model", "tiny", "--backend", "flashinfer,flashinfer", "--list-cases"}),
       {"--backend", "'flashinfer'"}},
      {"memory --backend trtllm_mha,trtllm_mha",
       args({"memory", "--device", "cpu", "--model", "tiny", "--backend", "trtllm_mha,trtllm_mha"}),
       {"--backend", "'trtllm_mha'"}},
      {"--cuda-graph-bs 1,1", args(plus(list, {"--cuda-graph-bs", "1,1"})), {"--cuda-graph-bs", "'1'"}},
      {"batch = [1, 1] in TOML", config("batch = [1, 1]\n"), {"--batch", "'1'"}},
      // user text echoed with control characters escaped
      {"--model with a line feed", args({"run", "--model", "ti\nny", "--list-cases"}), {"--model", "ti\\nny"}},
      {"--mode with an escape sequence", args(plus(list, {"--mode", "\x1b[31mred"})), {"--mode", "\\x1b[31mred"}},
      {"--backend with a carriage return", args(plus(list, {"--backend", "a\rb"})), {"--backend", "a\\rb"}},
      {"--dtype with a tab", args(plus(list, {"--dtype", "x\ty"})), {"--dtype", "x\\ty"}},
      {"--case-id with a line feed", args(plus(list, {"--case-id", "a\nb"})), {"--case-id", "a\\nb"}},
      {"--config named with a line feed", args(plus(list, {"--config", "no\nsuch.toml"})), {"--config", "no\\nsuch.toml"}},
      {"--trace named with an escape", args(plus(list, {"--mode", "extend", "--trace", "t\x1b.csv"})), {"t\\x1b.csv"}},
      {"a quoted TOML key with an escape", config("\"ba\\u001btch\" = [1]\n"), {"--config", "\\x1b"}},
      // a case list that would exhaust memory is refused with its size, before it is built
      {"200,000 cases (--seed 1..10000 x --batch 1..20)",
       args(plus(list, {"--seed", numbers(1, 10000), "--batch", numbers(1, 20)})),
       {"--batch", "--seed", "200000 cases", "100000"}},
      {"12,288,000 requests (--batch 4096 x --kv-len 1..3000)",
       args(plus(list, {"--batch", "4096", "--kv-len", numbers(1, 3000)})),
       {"--batch", "12288000 requests", "10000000"}},
      {"200,000 cases from TOML arrays",
       config("seed = [" + numbers(1, 10000) + "]\nbatch = [" + numbers(1, 20) + "]\n"),
       {"200000 cases"}},
  };
  for (const Case& c : cases) {
    TempDir d;
    const auto a = c.setup(d);
    const Result r = run(a, d, Stdout::file, 30);
    auto p = rejected(r, c.culprits);
    if (!r.out.empty()) p.push_back("stdout is not empty");
    t.add(c.name, p, r);
  }
}

}  // namespace
}  // namespace attnbench
