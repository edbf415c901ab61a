// `attnbench report`: the evidence a PR description needs, as one compact Markdown document: the headline
// (memory saved, bit-identity, reference checks, latency ratio), memory per backend and what the change
// (the catalog's baseline -> candidate) saves in KV-cache tokens, latency per case with the ratios between
// backends and their noise, correctness verdicts, the environment and the command that reproduces it all.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "report/backend_catalog.hpp"
#include "report/results_io.hpp"
#include "report/memory_report.hpp"

namespace attnbench {

// Writes the Markdown report of `results` to `os`. Memory comes from `memory` (the `attnbench memory`
// evidence, per phase, with the model's full KV bytes per token) when it is non-null, else from the rows'
// ctor_ / graph_state_ / capture_ columns: per model, one row per backend from the first case that every
// backend ran (a graph row when there is one), KV bytes per token = 2 * num_kv_heads * head_dim * dtype
// bytes * the row's `layers` (stated in the text). `command` is printed as the reproducing command; when
// empty, results.command (the JSON report's) is used. Writes only to `os`; never throws for missing data
// (absent columns print "-").
// `catalog` names the change under test (headline, saving, bit-identity; latency ratios of its candidate
// against its baseline, then against every other backend of the rows) and the library twins.
// Library rows (backends named *_lib, report/peers.hpp) of `results` and every row of `peers` (the library
// script's result files) feed a final "## Model vs library" section and nothing else; without any, the report
// has no such section.
void write_markdown_report(std::ostream& os, const ResultSet& results, const MemoryReport* memory,
                           const std::string& command, const BackendCatalog& catalog,
                           const std::vector<ResultSet>& peers = {});

// Reads a memory report written by write_memory_json (`attnbench memory --format json`), so that
// `attnbench report` can take the memory evidence from a file. The model name is the top-level "model" when
// present, else the context's "model" up to its first " (". Throws InputError naming `path` when the file is
// unreadable, not a regular file (a FIFO, a directory, a device: refused before any read), larger than
// kMaxMemoryReportBytes, holds a NUL byte, nests JSON deeper than kMaxJsonNesting, is not JSON, not an
// "attnbench.memory" document of schema_version 1, or a field has the wrong type.
MemoryReport load_memory_report_json(const std::string& path);

}  // namespace attnbench
