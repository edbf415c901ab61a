// trtllm_mha's SGLang 0.5.23 paths on the CPU: fmha_v2 extend over the fused K/V pool (no copy) and over
// separate K and V buffers (the batch's pages copied every layer), and the decode seq-len splits, each
// validated against the reference, bit-identical between trtllm_mha and trtllm_mha_legacy, and equal to
// the 30cb848d4 path where the arithmetic is the same.
#include <gtest/gtest.h>

#include "backends/registry.hpp"
#include "device/cpu_device.hpp"
#include "runner/case_runner.hpp"

namespace attnbench {
namespace {

RunSettings validate_only() {
  RunSettings s;
  s.timing = false;
  return s;
}

Case make_case(const std::string& mode, const ServerArgs& server, int batch = 3, const std::string& model = "tiny",
               bool varied = false) {
  RunPlan p;
  if (varied) {  // lengths drawn per request, so that sorting by length reorders the batch
    p.length_dist = "uniform";
    p.length_min = 5;
  }
  p.models = {model};
  p.modes = {mode};
  p.batches = {batch};
  p.kv_lens = {70};
  p.prefix_lens = {37};
  p.extend_lens = {20};
  p.page_sizes = {16};
  p.model.server = server;
  p.backends = backend_names();
  return expand_cases(p).at(0);
}

const DeviceMaker cpu = [] { return std::make_unique<CpuDevice>(); };

const ResultRow& row(const CaseOutcome& o, const std::string& backend) {
  for (const ResultRow& r : o.rows)
    if (r.backend == backend) return r;
  throw std::runtime_error("no row for " + backend);
}

void expect_valid_and_identical(const CaseOutcome& out, const std::string& what) {
  for (const ResultRow& r : out.rows) {
    EXPECT_EQ(r.status, RowStatus::ok) << what << " " << r.backend << ": " << r.note;
    ASSERT_TRUE(r.ref_pass.has_value()) << what << " " << r.backend;
    EXPECT_TRUE(*r.ref_pass) << what << " " << r.backend << " max abs " << *r.ref_max_abs_err;
  }
  EXPECT_NE(row(out, "trtllm_mha").bitwise_equal_to.find("trtllm_mha_legacy"), std::string::npos) << what;
}

TEST(Fmha2Extend, FusedAndSeparateLayoutsValidateAndAgreeBitForBit) {
  for (const std::string model : {"tiny", "tiny-swa"}) {
    ServerArgs fused;  // 0.5.23 default: fused K/V pool, fmha_v2 fast path
    ServerArgs separate;
    separate.kv_layout = "separate";
    ServerArgs old;
    old.sglang_version = "30cb848d4";
    const CaseOutcome a = run_case(make_case("extend", fused, 3, model), backend_names(), cpu, validate_only());
    const CaseOutcome b = run_case(make_case("extend", separate, 3, model), backend_names(), cpu, validate_only());
    const CaseOutcome c = run_case(make_case("extend", old, 3, model), backend_names(), cpu, validate_only());
    expect_valid_and_identical(a, model + " fused");
    expect_valid_and_identical(b, model + " separate");
    expect_valid_and_identical(c, model + " 30cb848d4");
    EXPECT_NE(row(a, "trtllm_mha").note.find("fmha_v2 prefill (sm90, fused K/V pool: no copy)"), std::string::npos)
        << row(a, "trtllm_mha").note;
    EXPECT_NE(row(b, "trtllm_mha").note.find("separate K/V pool"), std::string::npos) << row(b, "trtllm_mha").note;
    // The same keys in the same order: the errors against the reference are the same in all three.
    EXPECT_EQ(*row(a, "trtllm_mha").ref_max_abs_err, *row(b, "trtllm_mha").ref_max_abs_err) << model;
    EXPECT_EQ(*row(a, "trtllm_mha").ref_max_abs_err, *row(c, "trtllm_mha").ref_max_abs_err) << model;
  }
}

TEST(Fmha2Extend, DecodeAndVerifySeqLenSplitsValidate) {
  for (const std::string mode : {"decode", "verify"}) {
    for (int splits : {2, 3, 7}) {  // 7 > batch 5: min(splits, bs) groups
      ServerArgs s;
      s.trtllm_decode_seq_len_splits = splits;
      const CaseOutcome out = run_case(make_case(mode, s, 5, "tiny", true), backend_names(), cpu, validate_only());
      expect_valid_and_identical(out, mode + " splits " + std::to_string(splits));
    }
  }
}

}  // namespace
}  // namespace attnbench
