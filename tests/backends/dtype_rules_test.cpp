// Which model / KV dtypes SGLang 0.5.23 (FlashInfer 0.7.2) runs on each backend, on the CPU: --dtype float32 is
// skipped with SGLang's reason where FlashInfer has no fp32 kernel (every FlashInfer plan; XQA decode / verify and
// fmha_v2 extend on SM90 / SM120), and runs where nothing was established against it (30cb848d4's FlashInfer,
// trtllm-gen on SM100); fp8_e5m2 runs on FlashInfer and is skipped on trtllm_mha on SM90 / SM120, whose XQA /
// fmha_v2 would read it as 16-bit values (README, "fp8 KV cache").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "device/cpu_device.hpp"
#include "runner/case_runner.hpp"

namespace attnbench {
namespace {

RunSettings validate_only() {
  RunSettings s;
  s.timing = false;
  s.graph = false;
  return s;
}

const DeviceMaker cpu = [] { return std::make_unique<CpuDevice>(); };

CaseOutcome run(const std::string& mode, const std::string& dtype, const ServerArgs& server,
                const std::string& kv_cache_dtype = "auto") {
  RunPlan p;
  p.models = {"tiny"};
  p.modes = {mode};
  p.dtypes = {dtype};
  p.batches = {2};
  p.kv_lens = {40};
  p.prefix_lens = {24};
  p.extend_lens = {16};
  p.page_sizes = {16};
  p.model.server = server;
  p.model.kv_cache_dtype = kv_cache_dtype;
  p.backends = backend_names();
  return run_case(expand_cases(p).at(0), backend_names(), cpu, validate_only());
}

const ResultRow& row(const CaseOutcome& o, const std::string& backend) {
  for (const ResultRow& r : o.rows)
    if (r.backend == backend && r.timing == "eager") return r;
  throw std::runtime_error("no eager row for " + backend);
}

void expect_ok(const ResultRow& r, const std::string& what) {
  EXPECT_EQ(r.status, RowStatus::ok) << what << " " << r.backend << ": " << r.note;
  ASSERT_TRUE(r.ref_pass.has_value()) << what << " " << r.backend;
  EXPECT_TRUE(*r.ref_pass) << what << " " << r.backend;
}

void expect_skipped(const ResultRow& r, const std::string& what, const std::string& cites) {
  EXPECT_EQ(r.status, RowStatus::skipped) << what << " " << r.backend << ": " << r.note;
  EXPECT_NE(r.note.find("--dtype float32"), std::string::npos) << what << " " << r.backend << ": " << r.note;
  EXPECT_NE(r.note.find(cites), std::string::npos) << what << " " << r.backend << ": " << r.note;
}

const std::vector<std::string> kModes = {"decode", "extend", "verify"};

TEST(DtypeRules, Fp32IsSkippedWithSglangsReasonOnFlashInferAndOnXqaArchitectures) {
  for (const int arch : {90, 120}) {
    ServerArgs s;  // the default profile: 0.5.23 with FlashInfer 0.7.2
    s.arch = arch;
    for (const std::string& mode : kModes) {
      const std::string what = "sm" + std::to_string(arch) + " " + mode;
      const CaseOutcome out = run(mode, "fp32", s);
      expect_skipped(row(out, "flashinfer"), what, "jit/attention/modules.py L222 decode, L421 prefill");
      for (const std::string b : {"trtllm_mha", "trtllm_mha_legacy"})
        expect_skipped(row(out, b), what, mode == "extend" ? "modules.py L2561-2566" : "jit/xqa.py L64-71");
    }
  }
}

TEST(DtypeRules, AcceptedCombinationsRun) {
  ServerArgs s;
  for (const std::string& mode : kModes) {
    // The same cases in bf16 and fp16: every backend runs and validates.
    for (const std::string dtype : {"bf16", "fp16"}) {
      const CaseOutcome out = run(mode, dtype, s);
      for (const std::string& b : backend_names()) expect_ok(row(out, b), mode + " " + dtype);
    }
    // fp8_e5m2 KV: FlashInfer takes it; SGLang's TRTLLM paths would misread it on SM90 / SM120 (skipped there),
    // trtllm-gen on SM100 was not established (runs).
    const CaseOutcome e5m2 = run(mode, "bf16", s, "fp8_e5m2");
    expect_ok(row(e5m2, "flashinfer"), mode + " bf16 kv fp8_e5m2");
    for (const std::string b : {"trtllm_mha", "trtllm_mha_legacy"}) {
      const ResultRow& r = row(e5m2, b);
      EXPECT_EQ(r.status, RowStatus::skipped) << mode << " " << b << ": " << r.note;
      EXPECT_NE(r.note.find("fp8_e4m3 only"), std::string::npos) << r.note;
      EXPECT_NE(r.note.find("xqa.py L73-80"), std::string::npos) << r.note;
    }
    ServerArgs sm100;
    sm100.arch = 100;
    const CaseOutcome gen = run(mode, "bf16", sm100, "fp8_e5m2");
    for (const std::string b : {"trtllm_mha", "trtllm_mha_legacy"}) expect_ok(row(gen, b), "sm100 " + mode + " e5m2");
  }
  // fp32 where no rule was established: trtllm-gen (SM100) decode, and every backend under 30cb848d4.
  ServerArgs sm100;
  sm100.arch = 100;
  const CaseOutcome gen = run("decode", "fp32", sm100);
  for (const std::string b : {"trtllm_mha", "trtllm_mha_legacy"}) expect_ok(row(gen, b), "sm100 decode fp32");
  expect_skipped(row(gen, "flashinfer"), "sm100 decode fp32", "jit/attention/modules.py");
  ServerArgs old;
  old.sglang_version = "30cb848d4";
  for (const std::string& mode : kModes) {
    const CaseOutcome out = run(mode, "fp32", old);
    for (const std::string& b : backend_names()) expect_ok(row(out, b), "30cb848d4 " + mode + " fp32");
  }
}

}  // namespace
}  // namespace attnbench
