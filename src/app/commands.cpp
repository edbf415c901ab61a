#include "app/commands.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <utility>

#include "app/backend_catalog.hpp"
#include "backends/registry.hpp"
#include "core/errors.hpp"
#include "core/files.hpp"
#include "core/version.hpp"
#include "device/device_factory.hpp"
#include "device/environment.hpp"
#include "report/compare.hpp"
#include "report/markdown.hpp"
#include "report/peers.hpp"
#include "report/results_io.hpp"
#include "report/run_summary.hpp"
#include "runner/case_list.hpp"
#include "runner/memory_probe.hpp"
#include "runner/selection.hpp"
#include "runner/sweep.hpp"
#include "runner/sweep_files.hpp"

namespace attnbench {

namespace {

// Opens --out before any work, so a bad path fails fast (exit 2) and nothing is measured in vain.
std::ofstream open_output(const std::string& path) {
  std::ofstream f(path, std::ios::out | std::ios::trunc);
  if (!f) throw InputError("--out: cannot write '" + path + "'");
  return f;
}

std::atomic<bool> g_stop{false};

extern "C" void on_stop_signal(int sig) {
  g_stop.store(true);
  std::signal(sig, SIG_DFL);
}

// While it lives, the first SIGINT / SIGTERM raises g_stop (the sweep finishes the case in flight, keeps every
// row and stops); a second one kills at once.
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

int run_memory_command(const MemoryOptions& o, std::ostream& out) {
  const MemoryRequest req = make_memory_request(o.m, o.backends, o.prefill_backend);
  const DeviceChoice choice = parse_device_choice(o.m.device);
  const DeviceChoice resolved = resolve_usable_device(choice);
  std::ofstream file;
  if (!o.out.empty()) file = open_output(o.out);
  std::cerr << "attnbench: memory on " << device_choice_name(resolved)
            << (choice == DeviceChoice::automatic ? " (auto)" : "") << ", " << req.backends.size() << " backend(s)\n";
  const MemoryReport report = measure_memory(req, [resolved] { return make_device(resolved); });
  std::ostream& os = o.out.empty() ? out : static_cast<std::ostream&>(file);
  if (o.format == "csv")
    write_memory_csv(os, report);
  else if (o.format == "json")
    write_memory_json(os, report, backend_catalog());
  else
    write_memory_table(os, report, backend_catalog());
  os.flush();
  if (!o.out.empty()) std::cerr << "attnbench: wrote " << o.out << "\n";
  for (const auto& b : report.backends)
    if (!b.error.empty()) return 1;
  return 0;
}

int run_list_command(std::ostream& out) {
  out << "backends:\n";
  for (const auto& b : backend_registry()) out << "  " << b.name << std::string(20 - std::min<std::size_t>(19, b.name.size()), ' ') << b.models << "\n";
  out << "model presets (per tensor-parallel rank):\n";
  for (const auto& m : model_presets()) {
    out << "  " << m.name << std::string(20 - std::min<std::size_t>(19, m.name.size()), ' ') << m.architecture << ", "
        << m.num_layers << " layers, " << m.num_qo_heads() << " q / " << m.num_kv_heads() << " kv heads, head_dim "
        << m.head_dim << ", context " << m.context_len;
    if (m.has_sliding_window()) out << ", window " << m.sliding_window;
    out << "\n";
  }
  out << "configs:\n";
  for (const char* dir : {"configs", ATTNBENCH_SOURCE_DIR "/configs"}) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) continue;
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
      if (e.path().extension() == ".toml") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) out << "  " << f << "\n";
    break;
  }
  return 0;
}

int run_env_command(std::ostream& out) {
  const GpuAvailability gpu = gpu_availability();
  out << "attnbench " << version() << " (commit " << git_commit() << ")\n";
  out << "compiler: " << compiler() << "\n";
  out << "cpu: " << cpu_model() << ", " << hardware_threads() << " hardware threads\n";
  out << "cuda: " << (gpu.compiled ? "compiled in" : "not compiled in") << "\n";
  out << "gpu: " << (gpu.usable ? gpu.detail : "none usable (" + gpu.detail + ")") << "\n";
  out << "device auto: " << device_choice_name(resolve_device_choice(DeviceChoice::automatic)) << "\n";
  return 0;
}

int run_sweep_command(const RunOptions& o, const std::vector<std::string>& args, bool validate_only, std::ostream& out) {
  const RunPlan& plan = o.plan;
  const std::vector<Case> cases = select_cases(expand_cases(plan), plan);  // expand_cases validates the plan
  if (o.list_format != "text" && !o.list_cases) throw InputError("--format: only with --list-cases");
  RunSettings s = run_settings(plan, validate_only, args);
  if (o.list_cases) {
    if (o.list_format == "csv")
      write_case_list_csv(out, cases, s, s.timing ? plan.timing : std::vector<std::string>{});
    else
      for (const Case& c : cases) out << c.id << "\n";
    return 0;
  }
  // Every check before anything is written: a bad path fails with exit 2 and leaves no file behind.
  const std::vector<std::string> backends = resolve_backends(plan.backends);
  const DeviceChoice choice = parse_device_choice(plan.model.device);
  const DeviceChoice resolved = resolve_usable_device(choice);
  const SweepFiles files = sweep_files(o.out, o.json, o.config_file, plan.trace, o.resume);
  const bool resuming = o.resume && std::filesystem::exists(files.csv);
  const ResumePoint todo = resume_from(cases, backends, resuming ? read_results_csv(files.csv) : std::vector<ResultRow>{});
  std::cerr << "attnbench: " << (validate_only ? "validate" : "run") << " on " << device_choice_name(resolved)
            << (choice == DeviceChoice::automatic ? " (auto: " + gpu_availability().detail + ")" : std::string()) << ", "
            << todo.cases.size() << " case(s) x " << backends.size() << " backend(s) -> " << files.csv << "\n";
  if (resuming)
    std::cerr << "attnbench: --resume: " << todo.cases_done << " case(s) already in " << files.csv << ", " << todo.cases.size()
              << " to run" << (todo.dropped_partial ? " (a partial case's rows dropped)" : "") << "\n";
  prepare_sweep_files(files, todo.dropped_partial, todo.kept);
  ResultsCsvWriter writer(files.csv, resuming);
  Environment env;
  {
    auto d = make_device(resolved);
    env = environment_fingerprint(*d);
    if (!validate_only) {
      s.copy_bandwidth = d->measure_copy_bandwidth();
      env.push_back({"copy_bandwidth_bytes_per_s", std::to_string(s.copy_bandwidth)});
      std::cerr << "attnbench: copy bandwidth " << std::fixed << std::setprecision(1) << s.copy_bandwidth / 1e9 << " GB/s on "
                << d->name() << std::defaultfloat << "\n";
    }
  }
  std::vector<ResultRow> rows = todo.kept;
  SweepSummary sum;
  {
    const StopOnSignal stop_on_signal;
    const Progress progress{o.quiet ? nullptr : &std::cerr, !o.quiet && isatty(fileno(stderr)) != 0};
    const auto sink = [&](const ResultRow& r) {
      writer.write(r);
      rows.push_back(r);
    };
    sum = run_sweep(todo.cases, backends, [resolved] { return make_device(resolved); }, s, sink, progress, &g_stop);
  }
  std::string command = s.repro_prefix;
  for (const auto& a : args)
    if (a != "run" && a != "validate") command += " " + a;
  write_results_json(files.json, env, command, rows);
  print_run_table(out, rows);
  if (o.report == "md") {
    ResultSet set;
    set.rows = rows;
    set.environment = env;
    set.command = command;
    out << "\n";
    write_markdown_report(out, set, nullptr, command, backend_catalog());
  }
  out << "\n" << sum.rows << " rows: " << sum.ok << " ok, " << sum.skipped << " skipped, " << sum.failed << " failed, "
      << sum.oom << " oom; " << sum.ref_failures << " reference failures. Results: " << files.csv << " (" << files.json << ")\n";
  if (sum.interrupted) {
    std::cerr << "attnbench: interrupted after " << sum.cases_done << " of " << todo.cases.size()
              << " case(s); the rows written are complete: continue with the same command and --resume\n";
    return 130;
  }
  return sum.all_good() ? 0 : 1;
}

namespace {

// Where compare / report write: `path` (all or nothing, through AtomicFile) or `out` (stdout); refused when it
// names one of `inputs` (the same file by device and inode: a symlink or a hard link too).
class ReportOutput {
 public:
  // Refuses an output that is one of `inputs` (exit 2, before anything is read or written).
  ReportOutput(const std::string& path, std::ostream& out,
               const std::vector<std::pair<std::string, std::string>>& inputs)
      : path_(path), out_(out) {
    if (!path.empty()) check_not_an_input(path, "--out", inputs);
  }
  // Opens the output (after the inputs were read, so that a bad input is the error reported): InputError
  // "--out: cannot write 'PATH': <reason>" (exit 2) when the file cannot be created.
  std::ostream& stream() {
    if (path_.empty()) return out_;
    if (!file_) {
      try {
        file_.emplace(path_);
      } catch (const WriteError& e) {
        throw InputError(std::string("--out: ") + e.what());
      }
    }
    return file_->stream();
  }
  // Publishes the file, or checks that every byte reached stdout; WriteError (exit 1) when not.
  void finish() {
    if (path_.empty()) {
      check_stream_written(out_, "stdout");
      return;
    }
    stream();  // opens it if nothing was written
    file_->commit();
  }

 private:
  std::string path_;
  std::ostream& out_;
  std::optional<AtomicFile> file_;
};

}  // namespace

int run_compare_command(const CompareCliOptions& o, std::ostream& out) {
  if (o.max_slowdown < 0) throw InputError("--max-slowdown: must be >= 0 (a fraction, e.g. 0.05)");
  if (o.max_memory_growth < 0) throw InputError("--max-memory-growth: must be >= 0 bytes");
  if (!(o.alpha > 0 && o.alpha < 1)) throw InputError("--alpha: must be in (0, 1)");
  if (o.min_effect < 0) throw InputError("--min-effect: must be >= 0 (a fraction)");
  CompareOptions opt;
  opt.max_slowdown = o.max_slowdown;
  opt.max_memory_growth = o.max_memory_growth;
  opt.alpha = o.alpha;
  opt.min_effect = o.min_effect;
  opt.allow_env_mismatch = o.allow_env_mismatch;
  opt.strict = o.strict;
  ReportOutput output(o.out, out, {{"BASE", o.base}, {"NEW", o.now}});
  const ResultSet base = load_result_set(o.base);
  const ResultSet now = load_result_set(o.now);
  if (o.peers) {
    // Model rows (BASE) against the real libraries' rows (NEW): how far attnbench is from the library, not a gate.
    check_peer_sides(base, now, o.base, o.now);
    const std::string line = "peer comparison: model rows of BASE vs library rows of NEW";
    PeerComparison pc = compare_peers(base.rows, now.rows, backend_catalog());
    for (const std::string& w : check_peer_environments(base, now, o.allow_env_mismatch, "BASE", "NEW"))
      pc.warnings.push_back(w);
    if (!now.environment.empty()) pc.library_environments.push_back(now.environment);
    std::ostream& os = output.stream();
    // CSV and JSON stay machine-readable: the line goes to stderr, and into the JSON document.
    if (o.format == "md" || o.format == "markdown") {
      os << line << "\n\n";
      write_peer_markdown(os, pc);
    } else if (o.format == "csv") {
      std::cerr << "attnbench compare: " << line << "\n";
      write_peer_csv(os, pc);
    } else if (o.format == "json") {
      write_peer_json(os, pc, line);
    } else {
      os << line << "\n\n";
      write_peer_table(os, pc);
    }
    output.finish();
    return 0;
  }
  check_compare_sides(base, now, o.base, o.now);
  const CompareResult r = compare_results(base, now, opt);
  std::ostream& os = output.stream();
  if (o.format == "md" || o.format == "markdown")
    write_compare_markdown(os, r);
  else if (o.format == "csv")
    write_compare_csv(os, r);
  else if (o.format == "json")
    write_compare_json(os, r);
  else
    write_compare_table(os, r);
  output.finish();
  const auto too_few = std::count_if(r.pairs.begin(), r.pairs.end(), [](const PairResult& p) { return p.too_few_samples; });
  if (too_few > 0 && !opt.strict)
    std::cerr << "attnbench compare: warning: " << too_few
              << " pair(s) with too few samples for a latency verdict (a failure with --strict)\n";
  if (r.failed)
    for (const auto& f : r.failures) std::cerr << "attnbench compare: FAIL: " << f << "\n";
  return r.failed ? 1 : 0;
}

int run_report_command(const ReportOptions& o, std::ostream& out) {
  std::vector<std::pair<std::string, std::string>> inputs = {{"RESULTS", o.results}, {"--memory", o.memory}};
  for (const std::string& p : o.peers) inputs.push_back({"--peers", p});
  ReportOutput output(o.out, out, inputs);
  const ResultSet set = load_result_set(o.results);
  std::optional<MemoryReport> memory;
  if (!o.memory.empty()) memory = load_memory_report_json(o.memory);
  std::vector<ResultSet> peers;
  const BackendCatalog catalog = backend_catalog();
  for (const std::string& p : o.peers) peers.push_back(load_peer_set(p, catalog));
  write_markdown_report(output.stream(), set, memory ? &*memory : nullptr, set.command, catalog, peers);
  output.finish();
  return 0;
}

}  // namespace attnbench
