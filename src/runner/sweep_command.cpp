#include "runner/sweep_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <ctime>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "core/errors.hpp"
#include "core/files.hpp"
#include "device/device_factory.hpp"
#include "device/environment.hpp"
#include "engine/model_config.hpp"
#include "report/markdown.hpp"
#include "report/results_io.hpp"
#include "report/run_summary.hpp"
#include "runner/backend_catalog.hpp"
#include "runner/case_list.hpp"
#include "runner/selection.hpp"
#include "runner/shard.hpp"
#include "runner/sweep.hpp"
#include "runner/sweep_files.hpp"
#include "runner/sweep_options.hpp"

namespace attnbench {

namespace {

std::atomic<bool> g_stop{false};
std::atomic<std::int64_t> g_first_stop_ns{0};  // CLOCK_MONOTONIC of the first signal

std::int64_t monotonic_ns() {  // clock_gettime is async-signal-safe
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// The first SIGINT / SIGTERM stops the sweep gracefully. A second one kills at once, but only when it comes
// later than 0.5 s: `timeout -s INT`, a shell's job control and launchers send one signal to the process and
// another to its process group at the same moment, and that pair is one request to stop, not two.
extern "C" void on_stop_signal(int sig) {
  const std::int64_t now = monotonic_ns();
  if (!g_stop.exchange(true)) {
    g_first_stop_ns.store(now);
    return;
  }
  if (now - g_first_stop_ns.load() > 500000000) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}

// While it lives, the first SIGINT / SIGTERM raises g_stop (the sweep cuts the case in flight short and drops
// it, keeps every row written and stops); a second one, later than 0.5 s, kills at once.
struct StopOnSignal {
  StopOnSignal() {
    g_stop.store(false);
    std::signal(SIGINT, on_stop_signal);
    std::signal(SIGTERM, on_stop_signal);
  }
  ~StopOnSignal() {
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
  }
};

}  // namespace

int run_sweep_command(const RunOptions& o, const std::vector<std::string>& args, bool validate_only, std::ostream& out) {
  const auto started = std::chrono::steady_clock::now();  // the environment's wall_seconds
  const RunPlan& plan = o.plan;
  std::vector<Case> expanded = expand_cases(plan);  // validates the plan
  std::set<std::string> sweep_ids;  // every case of the sweep, selected or not (--resume: rows it may hold)
  for (const Case& c : expanded) sweep_ids.insert(c.id);
  std::vector<Case> selected = select_cases(std::move(expanded), plan);
  if (o.list_format != "text" && !o.list_cases) throw InputError("--format: only with --list-cases");
  const std::vector<std::string> backends = resolve_backends(plan.backends);
  // This rank's share (--shard, or the launcher's environment: runner/shard.hpp) and its files.
  const EnvLookup env_vars = process_environment();
  const RankPlan rank = plan_rank(resolve_shard(o.shard, env_vars), std::move(selected), plan, validate_only,
                                  static_cast<int>(backends.size()), o.out, o.json, o.list_cases);
  const std::vector<Case>& cases = rank.cases;
  RunSettings s = run_settings(plan, validate_only, args);
  if (o.list_cases) {
    if (!rank.label.empty()) std::cerr << "attnbench: " << rank.label << " (" << rank.spec.source << "): " << cases.size() << " case(s)\n";
    if (o.list_format == "csv")
      write_case_list_csv(out, cases, s, s.timing ? plan.timing : std::vector<std::string>{});
    else
      for (const Case& c : cases) out << c.id << "\n";
    return 0;
  }
  // Every check before anything is written: a bad path fails with exit 2 and leaves no file behind.
  const DeviceChoice choice = parse_device_choice(plan.model.device);
  const DeviceChoice resolved = resolve_usable_device(plan.model.device);
  const int ordinal = resolved == DeviceChoice::cuda
                          ? rank_cuda_ordinal(plan.model.device, rank.spec, gpu_availability().count, env_vars)
                          : 0;
  std::vector<std::pair<std::string, std::string>> model_files;  // --model config files: inputs, never outputs
  for (const std::string& m : plan.models)
    if (const std::string f = model_config_file(m); !f.empty()) model_files.emplace_back(f, "--model");
  const SweepFiles files = sweep_files(rank.out, rank.json, o.config_file, plan.trace, o.resume, model_files);
  const SweepOptions shaping = sweep_options(plan, backends, validate_only);
  prepare_sweep_files(files, /*rewrite=*/false, {});  // the directories, for the locks
  const SweepLock lock(files);  // one writer per results file, for the run's lifetime
  const bool resuming = o.resume && std::filesystem::exists(files.csv);
  if (resuming) {  // the same sweep, or nothing
    if (!std::filesystem::exists(files.json))
      throw InputError("--resume: " + printable(files.json) + " is missing: cannot tell whether " +
                       printable(files.csv) + " holds the same sweep; run without --resume to start it again");
    check_resume_options(read_json_environment(files.json, "--resume: JSON report"), shaping, files.csv, files.json);
  }
  // A graph row is written where case_runner.cpp's want_graph holds: --timing names graph, on a CUDA device.
  bool torn = false;  // the file's last row was cut off (no line feed): dropped, and the file rewritten without it
  ResumePoint todo = resume_from(cases, backends,
                                 resuming ? read_results_csv(files.csv, &torn) : std::vector<ResultRow>{},
                                 s.graph && resolved == DeviceChoice::cuda, &sweep_ids);
  // The CSV holds no raw samples or ledger: the kept rows take theirs from the JSON report the run that measured
  // them wrote (rewritten below with the kept rows, so without this they were lost). A row the report lacks (a run
  // killed before writing it) stays without them, and is said.
  std::size_t without_samples = 0;
  if (resuming && !todo.kept.empty()) {
    const ResultSet previous = load_result_set(files.json);
    std::map<std::string, const ResultRow*> by_key;
    for (const ResultRow& r : previous.rows) by_key[sample_key(r)] = &r;
    for (ResultRow& k : todo.kept) {
      const auto it = by_key.find(sample_key(k));
      const bool same = it != by_key.end() && it->second->samples == k.samples &&
                        it->second->step_median_us == k.step_median_us && it->second->status == k.status;
      if (same) {
        k.samples_us = it->second->samples_us;
        k.ledger = it->second->ledger;
      }
      if (k.samples > 0 && k.samples_us.empty()) ++without_samples;
    }
  }
  // "-" is stdout (--out - or --json -): then stdout holds that document alone, and the table, the summary and the
  // Markdown report go to stderr with the progress.
  const bool csv_stdout = files.csv == "-", json_stdout = files.json == "-";
  std::ostream& human = csv_stdout || json_stdout ? std::cerr : out;
  // The results file opened (and locked: ResultsFileWriter) before the first line on stderr, so that a run refused
  // there says one line.
  prepare_sweep_files(files, todo.dropped_partial || torn, todo.kept);
  std::optional<ResultsFileWriter> writer;
  if (csv_stdout) {
    out << results_csv_header() << "\n" << std::flush;
  } else {
    writer.emplace(files.csv, resuming);
  }
  std::cerr << "attnbench: " << (rank.label.empty() ? "" : rank.label + ": ") << (validate_only ? "validate" : "run")
            << " on " << device_choice_name(resolved) << (resolved == DeviceChoice::cuda ? ":" + std::to_string(ordinal) : "")
            << (choice == DeviceChoice::automatic ? " (auto: " + gpu_availability().detail + ")" : std::string()) << ", "
            << todo.cases.size() << " case(s) x " << backends.size() << " backend(s) -> "
            << (csv_stdout ? std::string("stdout") : printable(files.csv)) << "\n";
  if (resuming)
    std::cerr << "attnbench: --resume: " << todo.cases_done << " case(s) already in " << printable(files.csv) << ", "
              << todo.cases.size() << " to run" << (todo.dropped_partial ? " (a partial case's rows dropped)" : "")
              << (torn ? " (its last line, cut off before its line feed, dropped)" : "") << "\n";
  if (without_samples > 0)
    std::cerr << "attnbench: --resume: " << without_samples << " kept row(s) have no raw samples in "
              << printable(files.json) << " (the run that measured them ended before writing its report): compare "
              << "judges those by their p10-p90 range\n";
  std::string command = s.repro_prefix;
  for (const auto& a : args)
    if (a != "run" && a != "validate") command += " " + a;
  Environment env;
  std::vector<ResultRow> rows = todo.kept;
  {
    auto d = make_device(resolved, ordinal);
    env = environment_fingerprint(*d);
    // The modelled SGLang release (every row names it too; a sweep has one).
    const SglangProfile profile = find_sglang_profile(plan.model.server.sglang_version);
    env.push_back({"sglang_version", profile.version});
    env.push_back({"flashinfer_version_modelled", profile.flashinfer_version});
    env.push_back({"arch", arch_name(plan.model.server.arch > 0 ? plan.model.server.arch : d->sm_version())});
    for (auto& kv : options_environment(shaping)) env.push_back(std::move(kv));
    for (const auto& kv : rank.environment) env.push_back(kv);  // a shard: what `attnbench merge` checks
    // The report is on disk, with the options' fingerprint, before any new row: a run that is killed can be
    // resumed (--resume refuses results without it).
    if (!json_stdout && !files.json.empty()) write_sweep_json(files.json, env, command, rows);
    if (!validate_only) {
      const double copy = d->measure_copy_bandwidth();
      s.read_bandwidth = d->measure_read_bandwidth();  // bw_fraction's denominator
      env.push_back({"copy_bandwidth_bytes_per_s", std::to_string(copy)});
      env.push_back({"read_bandwidth_bytes_per_s", std::to_string(s.read_bandwidth)});
      std::cerr << "attnbench: read bandwidth " << std::fixed << std::setprecision(1) << s.read_bandwidth / 1e9
                << " GB/s, copy bandwidth " << copy / 1e9 << " GB/s on " << d->name() << std::defaultfloat << "\n";
    }
  }
  SweepSummary sum;
  {
    const StopOnSignal stop_on_signal;
    const Progress progress{o.quiet ? nullptr : &std::cerr, !o.quiet && isatty(fileno(stderr)) != 0, rank.label};
    const auto sink = [&](const ResultRow& r) {
      if (writer) {
        writer->write(r);  // WriteError (exit 1) when the row did not reach the file
      } else {
        out << results_csv_line(r) << "\n" << std::flush;
      }
      rows.push_back(r);
    };
    s.interrupt = &g_stop;
    sum = run_sweep(todo.cases, backends, [resolved, ordinal] { return make_device(resolved, ordinal); }, s, sink,
                    progress);
  }
  {  // This invocation's wall time, start to last row (a --resume run: its own part only)
    char wall[32];
    std::snprintf(wall, sizeof wall, "%.1f",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    env.push_back({"wall_seconds", wall});
  }
  if (json_stdout) {
    write_results_json(out, env, command, rows);
    out.flush();
  } else if (!files.json.empty()) {
    write_sweep_json(files.json, env, command, rows);
  }
  print_run_table(human, rows);
  if (o.report == "md") {
    ResultSet set;
    set.rows = rows;
    set.environment = env;
    set.command = command;
    human << "\n";
    write_markdown_report(human, set, nullptr, command, backend_catalog(), {}, markdown_extras());
  }
  human << "\n" << sum.rows << " rows: " << sum.ok << " ok, " << sum.skipped << " skipped, " << sum.failed << " failed, "
        << sum.oom << " oom; " << sum.ref_failures << " reference failures. Results: "
        << (csv_stdout ? std::string("stdout") : files.csv) << " ("
        << (json_stdout ? std::string("stdout") : files.json.empty() ? std::string("no JSON") : files.json) << ")\n";
  if (sum.interrupted) {
    std::cerr << "attnbench: interrupted after " << sum.cases_done << " of " << todo.cases.size()
              << " case(s); the rows written are complete: continue with the same command and --resume\n";
    return 130;
  }
  // The exit code covers the whole file: rows kept from an earlier run count as much as this run's.
  const int earlier_bad = static_cast<int>(std::count_if(todo.kept.begin(), todo.kept.end(), row_failed));
  if (earlier_bad > 0)
    std::cerr << "attnbench: --resume: " << earlier_bad << " row(s) written earlier in " << printable(files.csv)
              << " failed (failed, oom or a reference failure)\n";
  // The change under test must give its baseline's output bit for bit (design: "no behavioural change"); rows
  // where it did not are ok rows (each passed its reference check) but the run's verdict on the change fails.
  const BackendChange change = backend_catalog().change;
  const std::vector<const ResultRow*> breaks = bit_identity(rows, change).breaks;
  if (!breaks.empty())
    std::cerr << "attnbench: " << change.candidate << " is not bit-identical to " << change.baseline << " in "
              << breaks.size() << " row(s), first " << printable(breaks.front()->case_id) << " "
              << breaks.front()->timing << " (the two must give the same output)\n";
  return sum.all_good() && earlier_bad == 0 && breaks.empty() ? 0 : 1;
}

}  // namespace attnbench
