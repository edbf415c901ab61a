#include "runner/case_rows.hpp"

#include <sstream>

#include "runner/case_work.hpp"

namespace attnbench {

std::string format_double(double v) {
  std::ostringstream os;
  os.precision(3);
  os << v;
  return os.str();
}

void append_note(std::string& note, const std::string& more) {
  if (more.empty()) return;
  note += (note.empty() ? "" : "; ") + more;
}

namespace {

std::string repro_command(const Case& c, const std::string& backend, const RunSettings& s) {
  std::string cmd = s.repro_prefix;
  if (!s.repro_options.empty()) cmd += " " + s.repro_options;
  return cmd + " --backend " + backend + " --case-id '" + c.id + "'";
}

}  // namespace

ResultRow base_row(const Case& c, const std::string& backend, const std::string& device, const std::string& timing,
                   const RunSettings& s) {
  ResultRow r;
  r.case_id = c.id;
  r.backend = backend;
  r.device = device;
  r.sglang_version = c.server.sglang_version;
  r.arch = c.server.arch > 0 ? arch_name(c.server.arch) : "";  // the device's, filled where it is known
  r.mode = std::string(forward_mode_name(c.mode));
  r.timing = timing;
  r.status = RowStatus::ok;
  r.model = c.model.name;
  r.layers = c.model.num_layers;
  r.batch = c.batch;
  r.q_tokens = c.q_tokens();
  r.kv_len_mean = c.kv_len_mean();
  r.kv_len_max = c.kv_len_max();
  r.prefix_len_mean = c.prefix_len_mean();
  r.num_qo_heads = c.model.num_qo_heads();
  r.num_kv_heads = c.model.num_kv_heads();
  r.head_dim = c.model.head_dim;
  r.page_size = c.server.page_size;
  r.dtype = std::string(dtype_name(c.model.dtype));
  r.sliding_window = c.model.has_sliding_window() ? c.model.sliding_window : -1;
  r.seed = c.seed;
  r.repro = repro_command(c, backend, s);
  return r;
}

void add_ledger(ResultRow& r, const PhaseDelta& d) {
  for (const TagBytes& g : d.by_tag()) r.ledger.push_back({d.phase, g.tag, mem_kind_name(g.kind), g.bytes, g.shared, g.count});
}

void fill_timing(ResultRow& r, const TimedSteps& t, const Case& c, const RunSettings& s) {
  const Samples& smp = t.samples;
  r.samples_us = smp.us;
  r.step_median_us = smp.summary.median;
  r.step_p10_us = smp.summary.p10;
  r.step_p90_us = smp.summary.p90;
  r.step_min_us = smp.summary.min;
  r.step_max_us = smp.summary.max;
  r.step_spread_pct = smp.summary.spread_pct;
  r.samples = smp.summary.n;
  const Summary ms = summarize(t.metadata_us), fs = summarize(t.forward_us);
  r.metadata_median_us = ms.median;
  r.forward_median_us = fs.median / c.model.num_layers;
  // Throughput over the forward part (the kernels of every layer), the metadata excluded.
  const StepWork w = step_work(c);
  if (fs.median > 0) {
    r.tflops = w.flops / (fs.median * 1e-6) / 1e12;
    r.tb_per_s = w.bytes / (fs.median * 1e-6) / 1e12;
    if (s.read_bandwidth > 0) r.bw_fraction = w.bytes / (fs.median * 1e-6) / s.read_bandwidth;
  }
  r.step_peak_device_bytes = t.peak_device_bytes;
  append_note(r.note, "stop: " + smp.stop_reason);
  if (smp.first_sample_outlier) append_note(r.note, "first run was an outlier (cold start)");
}

}  // namespace attnbench
