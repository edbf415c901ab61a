// Model vs SGLang (issue 13): attnbench's backends beside SGLang's own classes, constructed and driven by
// SGLang's code (scripts/peer_sglang.py, backends *_sglang; the catalog's sglang_twin says which attnbench
// backend models which). Memory per phase and per tag (the model's ledger beside the tensors SGLang's object
// holds), the saving of the change measured on SGLang's classes beside the model's, and per case the latency
// ratio, SGLang's reference check and the lean class's bit identity. Informational: nothing here is a gate.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "report/backend_catalog.hpp"
#include "report/results_io.hpp"

namespace attnbench {

// One tag of one phase: the model's bytes beside SGLang's, and why they differ.
struct SglangTagLine {
  std::string phase, tag, kind;
  std::optional<std::int64_t> model_bytes, sglang_bytes;
  int model_count = 0, sglang_count = 0;  // allocations in the group (e.g. one per captured batch size)
  std::string why;                        // "equal", or what differs
  std::optional<std::int64_t> difference() const {  // SGLang - model, when both hold the tag
    if (!model_bytes || !sglang_bytes) return std::nullopt;
    return *sglang_bytes - *model_bytes;
  }
};

// Memory of one (model backend, SGLang backend) on one model preset and page size.
struct SglangMemory {
  std::string model_backend, sglang_backend, model;
  int page_size = 0;
  std::vector<SglangTagLine> lines;  // construct, graph_state, capture order; tags sorted within a phase
  // SGLang's construct phase as the allocator counted it (torch.cuda.memory_allocated around the constructor)
  std::optional<std::int64_t> sglang_ctor_device_bytes, sglang_ctor_pinned_bytes, sglang_ctor_driver_bytes;
  int equal = 0, differing = 0;  // tag lines
};

// What the change saves (baseline - candidate, construct phase), on SGLang's classes beside the model's.
struct SglangSaving {
  std::string model;
  int page_size = 0;
  std::string baseline, candidate;                // attnbench's backends (catalog.change)
  std::string sglang_baseline, sglang_candidate;  // their SGLang twins
  std::optional<std::int64_t> model_device, model_pinned;            // ledger
  std::optional<std::int64_t> sglang_device, sglang_pinned;          // ledger of SGLang's objects
  std::optional<std::int64_t> sglang_allocated_device;               // memory_allocated deltas
};

// One case: the model's row beside SGLang's.
struct SglangCaseLine {
  std::string case_id, timing, model_backend, sglang_backend;
  RowStatus model_status = RowStatus::ok, sglang_status = RowStatus::ok;
  std::optional<double> model_step_median_us, sglang_step_median_us, ratio_step;  // model / SGLang
  std::optional<bool> sglang_ref_pass;
  std::string sglang_bitwise_equal_to;
};

struct SglangComparison {
  std::vector<SglangCaseLine> cases;
  std::vector<SglangMemory> memory;
  std::vector<SglangSaving> savings;
  std::vector<std::string> sglang_without_model;  // sample_key()s of SGLang rows without a model twin row
  std::vector<std::string> stubs;                 // the SGLang environment's stand-in modules ("none" = none)
};

// Pairs every SGLang row (is_sglang_backend) of `peer_rows` with the model row of its catalog twin (same case_id
// and timing), gathers per (twin, model preset, page size) the ledgers of both sides per phase (the first row of
// each side that carries the phase), and the change's saving per model preset.
SglangComparison compare_sglang(const std::vector<ResultRow>& model_rows, const std::vector<ResultRow>& peer_rows,
                                const BackendCatalog& catalog, const std::vector<Environment>& sglang_envs = {});

// The "## Model vs SGLang" Markdown section.
void write_sglang_markdown(std::ostream& os, const SglangComparison& c);

}  // namespace attnbench
