#include "app/commands.hpp"

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <map>
#include <regex>
#include <set>
#include <unistd.h>
#include <sstream>
#include <fstream>
#include <iostream>
#include <thread>

#include "app/backend_catalog.hpp"
#include "app/cli.hpp"
#include "backends/registry.hpp"
#include "core/errors.hpp"
#include "core/version.hpp"
#include "device/device_factory.hpp"
#include "runner/case_list.hpp"
#include "runner/memory_probe.hpp"
#include "report/compare.hpp"
#include "report/markdown.hpp"
#include "report/peers.hpp"
#include "report/results_io.hpp"
#include "runner/sweep.hpp"

namespace attnbench {

namespace {

// Opens --out before any work, so a bad path fails fast (exit 2) and nothing is measured in vain.
std::ofstream open_output(const std::string& path) {
  std::ofstream f(path, std::ios::out | std::ios::trunc);
  if (!f) throw InputError("--out: cannot write '" + path + "'");
  return f;
}

// Whether `path` can be written, without creating anything: an existing writable file, or a new file in an
// existing writable directory (with `create_parents`, the first existing ancestor must be writable).
void check_writable(const std::string& path, const std::string& option, bool create_parents) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec)) throw InputError(option + ": '" + path + "' is a directory");
  if (fs::exists(p, ec)) {
    if (::access(path.c_str(), W_OK) != 0) throw InputError(option + ": cannot write '" + path + "'");
    return;
  }
  fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  while (create_parents && !fs::exists(dir, ec) && dir.has_parent_path() && dir != dir.parent_path()) dir = dir.parent_path();
  if (!fs::is_directory(dir, ec) || ::access(dir.c_str(), W_OK) != 0)
    throw InputError(option + ": cannot write '" + path + "' (" + dir.string() + " is not a writable directory)");
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      auto pos = line.find(':');
      return pos == std::string::npos ? line : line.substr(pos + 2);
    }
  return "unknown";
}

}  // namespace

int run_memory_command(const MemoryOptions& o, std::ostream& out) {
  MemoryRequest req;
  req.model = resolve_model(o.m);
  req.server = resolve_server_args(o.m);
  req.backends = resolve_backends(o.backends);
  if (!o.prefill_backend.empty()) req.prefill_backend = o.prefill_backend;
  validate_memory_request(req);
  const DeviceChoice choice = parse_device_choice(o.m.device);
  const DeviceChoice resolved = resolve_device_choice(choice);
  if (resolved == DeviceChoice::cuda && !gpu_availability().usable)
    throw InputError("--device cuda: no usable GPU (" + gpu_availability().detail + ")");
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
  out << "cpu: " << cpu_model() << ", " << std::thread::hardware_concurrency() << " hardware threads\n";
  out << "cuda: " << (gpu.compiled ? "compiled in" : "not compiled in") << "\n";
  out << "gpu: " << (gpu.usable ? gpu.detail : "none usable (" + gpu.detail + ")") << "\n";
  out << "device auto: " << device_choice_name(resolve_device_choice(DeviceChoice::automatic)) << "\n";
  return 0;
}

}  // namespace attnbench

namespace attnbench {

namespace {

std::string default_results_path() {
  const std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "results/local/run-%Y%m%d-%H%M%S.csv", std::localtime(&t));
  return buf;
}

// The sweep's own options, for repro commands: the arguments as given minus the subcommand and the options
// that select or place rows (--out, --json, --backend, --case-id, --filter, --resume, --list-cases, --quiet).
std::string repro_options(const std::vector<std::string>& args) {
  std::string out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "run" || a == "validate" || a == "--list-cases" || a == "--resume" || a == "-q" || a == "--quiet") continue;
    bool skip = false;
    for (const char* opt : {"--out", "--backend", "--case-id", "--json", "--filter"}) {
      if (a == opt) {
        ++i;  // and its value
        skip = true;
      } else if (a.rfind(std::string(opt) + "=", 0) == 0) {
        skip = true;
      }
    }
    if (skip) continue;
    const bool quote = a.find_first_of(" '\"$;&|<>*?") != std::string::npos;
    out += (out.empty() ? "" : " ") + (quote ? "'" + a + "'" : a);
  }
  return out;
}

std::string fmt(const std::optional<double>& v, int prec = 1) {
  if (!v) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", prec, *v);
  return b;
}

void print_table(std::ostream& out, const std::vector<ResultRow>& rows) {
  out << std::left << std::setw(58) << "case" << std::setw(19) << "backend" << std::setw(7) << "timing" << std::setw(8)
      << "status" << std::right << std::setw(12) << "median us" << std::setw(22) << "p10-p90 us" << std::setw(8) << "TB/s"
      << std::setw(9) << "TFLOP/s" << std::setw(11) << "ref err" << std::setw(5) << "ref"
      << "  bitwise equal to\n";
  for (const ResultRow& r : rows) {
    out << std::left << std::setw(58) << r.case_id << std::setw(19) << r.backend << std::setw(7) << r.timing << std::setw(8)
        << r.status << std::right << std::setw(12) << fmt(r.step_median_us) << std::setw(22)
        << (r.step_p10_us ? fmt(r.step_p10_us) + " - " + fmt(r.step_p90_us) : std::string("-")) << std::setw(8)
        << fmt(r.tb_per_s, 2) << std::setw(9) << fmt(r.tflops, 1) << std::setw(11)
        << (r.ref_max_abs_err ? fmt(r.ref_max_abs_err, 5) : std::string("-")) << std::setw(5)
        << (r.ref_pass ? (*r.ref_pass ? "pass" : "FAIL") : "-") << "  " << r.bitwise_equal_to << "\n";
  }
}

}  // namespace

namespace {

std::atomic<bool> g_stop{false};

// First SIGINT / SIGTERM: finish the case in flight, keep every row, stop. A second one kills at once.
extern "C" void on_stop_signal(int sig) {
  g_stop.store(true);
  std::signal(sig, SIG_DFL);
}

}  // namespace

int run_sweep_command(const RunOptions& o, const std::vector<std::string>& args, bool validate_only, std::ostream& out) {
  const RunPlan plan = make_run_plan(o);
  std::vector<Case> cases = expand_cases(plan);
  if (!o.case_id.empty()) {
    std::erase_if(cases, [&](const Case& c) { return c.id != o.case_id; });
    if (cases.empty()) throw InputError("--case-id: no case '" + o.case_id + "' in this sweep (see --list-cases)");
  }
  if (!o.filter.empty()) {
    std::regex re;
    try {
      re = std::regex(o.filter);
    } catch (const std::regex_error& e) {
      throw InputError("--filter: invalid regular expression '" + o.filter + "' (" + e.what() + ")");
    }
    std::erase_if(cases, [&](const Case& c) { return !std::regex_search(c.id, re); });
    if (cases.empty()) throw InputError("--filter: no case id matches '" + o.filter + "' (see --list-cases)");
  }
  if (o.list_format != "text" && !o.list_cases) throw InputError("--format: only with --list-cases");
  if (o.list_cases && o.list_format == "text") {
    for (const Case& c : cases) out << c.id << "\n";
    return 0;
  }
  RunSettings s;
  s.timing = !validate_only;
  for (const auto& t : o.timing)
    if (t != "eager" && t != "graph") throw InputError("--timing: unknown timing '" + t + "' (expected eager, graph)");
  s.graph = std::find(o.timing.begin(), o.timing.end(), "graph") != o.timing.end();
  s.capture_all = !o.capture_needed_only;
  s.flush_l2 = !o.no_flush_l2;
  if (o.warmup < 0) throw InputError("--warmup: must be >= 0 (got " + std::to_string(o.warmup) + ")");
  if (o.min_samples < 1) throw InputError("--min-samples: must be >= 1 (got " + std::to_string(o.min_samples) + ")");
  if (o.max_samples < o.min_samples)
    throw InputError("--max-samples: " + std::to_string(o.max_samples) + " is below --min-samples " + std::to_string(o.min_samples));
  if (!(o.target_spread >= 0 && std::isfinite(o.target_spread)))
    throw InputError("--target-spread: must be a finite percentage >= 0");
  if (!(o.time_budget > 0 && std::isfinite(o.time_budget))) throw InputError("--time-budget: must be a finite number of seconds > 0");
  s.sampling.warmup = o.warmup;
  s.sampling.min_samples = o.min_samples;
  s.sampling.max_samples = o.max_samples;
  s.sampling.target_spread_pct = o.target_spread;
  s.sampling.time_budget_s = o.time_budget;
  if (!(o.reference_flop_budget > 0 && std::isfinite(o.reference_flop_budget)))
    throw InputError("--reference-flop-budget: must be a finite number > 0");
  s.reference_flop_budget = o.reference_flop_budget;
  if (o.list_cases) {  // --format csv: after the policy is checked, since the list carries it
    write_case_list_csv(out, cases, s, s.timing ? o.timing : std::vector<std::string>{});
    return 0;
  }
  s.repro_prefix = std::string("attnbench ") + (validate_only ? "validate" : "run");
  s.repro_options = repro_options(args);

  const DeviceChoice choice = parse_device_choice(o.m.device);
  const DeviceChoice resolved = resolve_device_choice(choice);
  if (choice == DeviceChoice::cuda && !gpu_availability().usable)
    throw InputError("--device cuda: no usable GPU (" + gpu_availability().detail + ")");
  const std::string path = o.out.empty() ? default_results_path() : o.out;
  if (o.resume && o.out.empty()) throw InputError("--resume: needs --out (the results file to complete)");
  const std::string json_path = !o.json.empty() ? o.json
                                : std::filesystem::path(path).extension() == ".csv"
                                    ? std::filesystem::path(path).replace_extension(".json").string()
                                    : path + ".json";
  // Every check before anything is written: a bad path fails with exit 2 and leaves no file behind, and no
  // output may overwrite an input or the other output.
  auto same_file = [](const std::string& a, const std::string& b) {
    if (a.empty() || b.empty()) return false;
    std::error_code ec;
    return std::filesystem::weakly_canonical(a, ec) == std::filesystem::weakly_canonical(b, ec);
  };
  if (same_file(path, json_path)) throw InputError("--json: '" + json_path + "' is the --out file");
  for (const auto& [output, option] : {std::pair{path, std::string("--out")}, std::pair{json_path, std::string("--json")}}) {
    if (same_file(output, o.config_file)) throw InputError(option + ": '" + output + "' is the --config file");
    if (same_file(output, o.trace)) throw InputError(option + ": '" + output + "' is the --trace file");
  }
  check_writable(path, "--out", /*create_parents=*/true);
  check_writable(json_path, o.json.empty() ? "--out" : "--json", /*create_parents=*/true);
  // --resume: the rows already in the file stay; cases with a row for every backend are not run again.
  std::vector<ResultRow> previous;
  const bool resuming = o.resume && std::filesystem::exists(path);
  std::size_t resumed_cases = 0;
  bool dropped_partial = false;
  if (resuming) {
    previous = read_results_csv(path);
    std::map<std::string, std::set<std::string>> have;
    for (const ResultRow& r : previous) have[r.case_id].insert(r.backend);
    auto complete = [&](const std::string& id) {
      auto it = have.find(id);
      if (it == have.end()) return false;
      for (const auto& b : plan.backends)
        if (!it->second.count(b)) return false;
      return true;
    };
    const std::size_t before = cases.size();
    std::erase_if(cases, [&](const Case& c) { return complete(c.id); });
    resumed_cases = before - cases.size();
    // A case cut off half-way (a kill between its rows) runs again whole: its partial rows are dropped below.
    const std::size_t rows_before = previous.size();
    std::erase_if(previous, [&](const ResultRow& r) { return !complete(r.case_id); });
    dropped_partial = previous.size() != rows_before;
  }

  std::cerr << "attnbench: " << (validate_only ? "validate" : "run") << " on " << device_choice_name(resolved)
            << (choice == DeviceChoice::automatic ? " (auto: " + gpu_availability().detail + ")" : std::string()) << ", "
            << cases.size() << " case(s) x " << plan.backends.size() << " backend(s) -> " << path << "\n";
  if (resuming)
    std::cerr << "attnbench: --resume: " << resumed_cases << " case(s) already in " << path << ", " << cases.size()
              << " to run" << (dropped_partial ? " (a partial case's rows dropped)" : "") << "\n";
  for (const std::string& f : {path, json_path}) {  // --out and --json create their directories
    std::error_code ec;
    const auto parent = std::filesystem::path(f).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  }
  if (dropped_partial) {  // rewrite atomically (temp file + rename): no duplicates, nothing half-written
    const std::string tmp = path + ".resume-tmp";
    {
      ResultsCsvWriter w(tmp);
      for (const ResultRow& r : previous) w.write(r);
    }
    std::filesystem::rename(tmp, path);
  }
  ResultsCsvWriter writer(path, resuming);
  Environment env = {{"attnbench_version", version()}, {"git_commit", git_commit()}, {"compiler", compiler()},
                     {"cpu", cpu_model()}, {"hardware_threads", std::to_string(std::thread::hardware_concurrency())}};
  {
    auto d = make_device(resolved);
    for (const auto& kv : d->environment()) env.push_back(kv);
    if (!validate_only) {
      s.copy_bandwidth = d->measure_copy_bandwidth();
      env.push_back({"copy_bandwidth_bytes_per_s", std::to_string(s.copy_bandwidth)});
      std::cerr << "attnbench: copy bandwidth " << std::fixed << std::setprecision(1) << s.copy_bandwidth / 1e9 << " GB/s on "
                << d->name() << std::defaultfloat << "\n";
    }
  }
  std::vector<ResultRow> rows = previous;
  g_stop.store(false);
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  const Progress progress{o.quiet ? nullptr : &std::cerr, !o.quiet && isatty(fileno(stderr)) != 0};
  const SweepSummary sum = run_sweep(
      cases, plan.backends, [resolved] { return make_device(resolved); }, s,
      [&](const ResultRow& r) {
        writer.write(r);
        rows.push_back(r);
      },
      progress, &g_stop);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  std::string command = s.repro_prefix;
  for (const auto& a : args)
    if (a != "run" && a != "validate") command += " " + a;
  write_results_json(json_path, env, command, rows);
  print_table(out, rows);
  if (o.report == "md") {
    ResultSet set;
    set.rows = rows;
    set.environment = env;
    set.command = command;
    out << "\n";
    write_markdown_report(out, set, nullptr, command, backend_catalog());
  }
  out << "\n" << sum.rows << " rows: " << sum.ok << " ok, " << sum.skipped << " skipped, " << sum.failed << " failed, "
      << sum.oom << " oom; " << sum.ref_failures << " reference failures. Results: " << path << " (" << json_path << ")\n";
  if (sum.interrupted) {
    std::cerr << "attnbench: interrupted after " << sum.cases_done << " of " << cases.size()
              << " case(s); the rows written are complete: continue with the same command and --resume\n";
    return 130;
  }
  return sum.all_good() ? 0 : 1;
}

}  // namespace attnbench

namespace attnbench {

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
    std::ofstream file;
    if (!o.out.empty()) file = open_output(o.out);
    std::ostream& os = o.out.empty() ? out : static_cast<std::ostream&>(file);
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
    os.flush();
    return 0;
  }
  check_compare_sides(base, now, o.base, o.now);
  const CompareResult r = compare_results(base, now, opt);
  std::ofstream file;
  if (!o.out.empty()) file = open_output(o.out);
  std::ostream& os = o.out.empty() ? out : static_cast<std::ostream&>(file);
  if (o.format == "md" || o.format == "markdown")
    write_compare_markdown(os, r);
  else if (o.format == "csv")
    write_compare_csv(os, r);
  else if (o.format == "json")
    write_compare_json(os, r);
  else
    write_compare_table(os, r);
  os.flush();
  if (r.failed)
    for (const auto& f : r.failures) std::cerr << "attnbench compare: FAIL: " << f << "\n";
  return r.failed ? 1 : 0;
}

int run_report_command(const ReportOptions& o, std::ostream& out) {
  const ResultSet set = load_result_set(o.results);
  std::optional<MemoryReport> memory;
  if (!o.memory.empty()) memory = load_memory_report_json(o.memory);
  std::vector<ResultSet> peers;
  const BackendCatalog catalog = backend_catalog();
  for (const std::string& p : o.peers) peers.push_back(load_peer_set(p, catalog));
  std::ofstream file;
  if (!o.out.empty()) file = open_output(o.out);
  std::ostream& os = o.out.empty() ? out : static_cast<std::ostream&>(file);
  write_markdown_report(os, set, memory ? &*memory : nullptr, set.command, catalog, peers);
  os.flush();
  return 0;
}

}  // namespace attnbench
