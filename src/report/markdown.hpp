// `attnbench report`: the evidence a PR description needs, as one compact Markdown document: the headline
// (memory saved, bit-identity, reference checks, latency ratio), memory per backend and what the change
// (the catalog's baseline -> candidate) saves in KV-cache tokens, latency per case with the ratios between
// backends and their noise, correctness verdicts, the environment and the command that reproduces it all.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "report/backend_catalog.hpp"
#include "report/results_io.hpp"
#include "report/memory_report.hpp"

namespace attnbench {

// What the report needs from outside the report layer; the app fills it (app/commands.cpp).
// The PNG files of `dir` (--plots), sorted, as links relative to the report file `out` (its directory; the
// working directory for stdout). Throws InputError naming --plots when `dir` is not a directory.
std::vector<std::string> figure_links(const std::string& dir, const std::string& out);

struct MarkdownExtras {
  // Full depth (layers) per model name, e.g. the presets': the KV-cache tokens a saving buys are counted over
  // the model's full KV cache. A model not listed: the rows' `layers` (what the run stepped), said so in the text.
  std::map<std::string, int> model_layers;
  // Figures to link under "### Figures" (paths as the Markdown should show them, e.g. relative to the report's
  // file). Empty: one line says how scripts/plot.py draws them.
  std::vector<std::string> figures;
};

// The ratio of two rows' median step times with its noise band [lo, hi]; lo <= ratio <= hi always.
//   bootstrap (both rows carry raw samples, >= 5 each): the 5th-95th percentiles of the ratio of medians over
//     1000 resamples of both sample sets (a fixed seed: the same rows give the same band), widened to include
//     the ratio itself in the rare case it falls outside (discrete medians of few samples);
//   otherwise (CSV rows: p10 / p90 only): p10(a) / p90(b) to p90(a) / p10(b), the ratio of a fast step of one
//     to a slow step of the other. Since p10 <= median <= p90 on both sides, it holds the ratio of medians.
// Why not p10 / p10 - p90 / p90 (the report's band before): both quotients can lie on the same side of the
// median quotient (1.000 printed with the band 1.016-1.017), so that band did not describe the ratio's noise.
struct LatencyRatio {
  double ratio = 0;
  double lo = 0, hi = 0;
  bool has_band = false;
  bool bootstrap = false;
};
// nullopt unless both rows are ok with a positive median.
std::optional<LatencyRatio> latency_ratio(const ResultRow& a, const ResultRow& b);

// Writes the Markdown report of `results` to `os`. Memory comes from `memory` (the `attnbench memory`
// evidence, per phase, with the model's full KV bytes per token) when it is non-null, else from the rows'
// ctor_ / graph_state_ / capture_ columns: per model, one row per backend from the first case that every
// backend ran (a graph row when there is one), KV bytes per token = 2 * num_kv_heads * head_dim * dtype
// bytes * the model's full depth from `extras.model_layers`, else the row's `layers` (stated in the text). `command` is printed as the reproducing command; when
// empty, results.command (the JSON report's) is used. Writes only to `os`; never throws for missing data
// (absent columns print "-").
// `catalog` names the change under test (headline, saving, bit-identity; latency ratios of its candidate
// against its baseline, then against every other backend of the rows) and the library twins.
// Library rows (backends named *_lib, report/peers.hpp) of `results` and every row of `peers` (the library
// script's result files) feed a final "## Model vs library" section and nothing else; without any, the report
// has no such section.
void write_markdown_report(std::ostream& os, const ResultSet& results, const MemoryReport* memory,
                           const std::string& command, const BackendCatalog& catalog,
                           const std::vector<ResultSet>& peers = {}, const MarkdownExtras& extras = {});

// Reads a memory report written by write_memory_json (`attnbench memory --format json`), so that
// `attnbench report` can take the memory evidence from a file. The model name is the top-level "model" when
// present, else the context's "model" up to its first " (". Throws InputError naming `path` when the file is
// unreadable, not a regular file (a FIFO, a directory, a device: refused before any read), larger than
// kMaxMemoryReportBytes, holds a NUL byte, nests JSON deeper than kMaxJsonNesting, is not JSON, not an
// "attnbench.memory" document of schema_version 1, or a field has the wrong type, or names a backend that is
// not one of `catalog`'s (the registry's backends, handed in from above: "memory report PATH:
// backends[1].backend 'fa3' is not an attnbench backend (flashinfer, trtllm_mha or trtllm_mha_legacy)").
MemoryReport load_memory_report_json(const std::string& path, const BackendCatalog& catalog);

}  // namespace attnbench
