// The backend registry: the built-ins and what they publish (library twins, the change, derived facts), and a
// variant registered from this test file alone ("trtllm_mha_probe", a TrtllmMhaBackend under another name)
// reaching every command that iterates the registry (list, memory, run rows, the Markdown report) without any
// file outside src/backends/ knowing it.
#include "backends/registry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "app/main_app.hpp"
#include "backends/flashinfer_backend.hpp"
#include "backends/trtllm_mha_backend.hpp"
#include "core/errors.hpp"
#include "core/units.hpp"
#include "device/cpu_device.hpp"
#include "report/results_io.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

const char* const kProbe = "trtllm_mha_probe";

BackendInfo probe_info() {
  BackendInfo info;
  info.name = kProbe;
  info.models = "TRTLLMHAAttnBackend, registered by a test";
  info.validate = TrtllmMhaImpl::validate;
  info.create = [](ModelRunner& mr) -> std::unique_ptr<AttentionBackend> { return std::make_unique<TrtllmMhaBackend>(mr); };
  return info;
}

bool contains(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::string fact(const DerivedFacts& facts, const std::string& name) {
  for (const auto& [n, v] : facts)
    if (n == name) return v;
  return "<missing>";
}

TEST(Registry, BuiltinsInTheirOrderWithTwinsAndTheChange) {
  EXPECT_EQ(backend_names(), (std::vector<std::string>{"flashinfer", "trtllm_mha", "trtllm_mha_legacy"}));
  EXPECT_EQ(find_backend("flashinfer").library_twin, "flashinfer_lib");
  EXPECT_EQ(find_backend("trtllm_mha").library_twin, "trtllm_lib");
  EXPECT_EQ(find_backend("trtllm_mha_legacy").library_twin, "") << "same kernels as trtllm_mha: no twin of its own";
  EXPECT_EQ(find_backend("trtllm_mha").change_baseline, "trtllm_mha_legacy");
  EXPECT_EQ(find_backend("flashinfer").change_baseline, "");
  EXPECT_EQ(find_backend("trtllm_mha_legacy").change_baseline, "");
  EXPECT_EQ(change_pairs(), (Pairs{{"trtllm_mha_legacy", "trtllm_mha"}}));
  EXPECT_EQ(library_twins(), (Pairs{{"flashinfer_lib", "flashinfer"}, {"trtllm_lib", "trtllm_mha"}}));
  for (const auto& b : backend_registry()) {
    EXPECT_NE(b.validate, nullptr) << b.name;
    EXPECT_NE(b.create, nullptr) << b.name;
    EXPECT_NE(b.derived, nullptr) << b.name;
  }
}

TEST(Registry, UnknownNameIsAnInputErrorNamingTheOptionAndTheBackends) {
  try {
    find_backend("nope", "--prefill-backend");
    FAIL() << "no throw";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--prefill-backend"), std::string::npos) << what;
    EXPECT_NE(what.find("'nope'"), std::string::npos) << what;
    EXPECT_NE(what.find("flashinfer, trtllm_mha, trtllm_mha_legacy"), std::string::npos) << what;
  }
}

TEST(Registry, DerivedFactsFollowTheModelTheEnvironmentAndDeterministicMode) {
  const ModelConfig llama = find_model_preset("llama-3.1-8b");
  const ModelConfig qwen = find_model_preset("qwen2.5-7b");
  const ModelConfig tiny = find_model_preset("tiny");
  DerivedFacts f = derived_facts(llama, ServerArgs{});
  EXPECT_EQ(fact(f, "flashinfer_workspace_bytes"), std::to_string(384 * MiB));
  EXPECT_EQ(fact(f, "flashinfer_use_tensor_cores"), "1") << "32 / 8 query heads per KV head >= 4";
  EXPECT_EQ(fact(f, "trtllm_workspace_bytes"), std::to_string(512 * MiB));
  EXPECT_EQ(fact(f, "flashinfer_extend_ragged"), "1");
  EXPECT_EQ(f.size(), 4u) << "legacy republishes both sets; merged by name";
  EXPECT_EQ(fact(derived_facts(qwen, ServerArgs{}), "flashinfer_workspace_bytes"), std::to_string(512 * MiB));
  EXPECT_EQ(fact(derived_facts(tiny, ServerArgs{}), "flashinfer_use_tensor_cores"), "0");
  ServerArgs env;
  env.sglang_version = "30cb848d4";  // T1 = W exactly (0.5.23 adds XQA's 8 MiB prefix on SM90: sglang_profile_test)
  env.env_flashinfer_workspace_size = 100 * MiB;
  env.env_flashinfer_use_tensor_core = false;
  f = derived_facts(qwen, env);
  EXPECT_EQ(fact(f, "flashinfer_workspace_bytes"), std::to_string(512 * MiB)) << "the Qwen override .set()s it";
  EXPECT_EQ(fact(f, "trtllm_workspace_bytes"), std::to_string(100 * MiB)) << "read on entry, before the override";
  EXPECT_EQ(fact(f, "flashinfer_use_tensor_cores"), "0");
  ServerArgs det;
  det.enable_deterministic_inference = true;
  EXPECT_EQ(fact(derived_facts(tiny, det), "flashinfer_workspace_bytes"), std::to_string(2048 * MiB));
  // FlashInfer's extend leaves the ragged path when deterministic, under SGLANG_FLASHINFER_USE_PAGED and for a
  // multimodal model (flashinfer_backend.py L1048-1062)
  EXPECT_EQ(fact(derived_facts(tiny, det), "flashinfer_extend_ragged"), "0");
  ServerArgs paged;
  paged.env_flashinfer_use_paged = true;
  EXPECT_EQ(fact(derived_facts(tiny, paged), "flashinfer_extend_ragged"), "0");
  ModelConfig vl = tiny;
  vl.is_multimodal = true;
  EXPECT_EQ(fact(derived_facts(vl, ServerArgs{}), "flashinfer_extend_ragged"), "0");
  // Each backend's own facts are what its constructor allocates, each constructed on a fresh environment
  // (sharing one would let FlashInfer's Qwen override reach TRTLLM's entry read).
  CpuDevice d1, d2;
  ModelRunner mr1(d1, qwen, env), mr2(d2, qwen, env);
  auto fi = find_backend("flashinfer").create(mr1);
  auto lean = find_backend("trtllm_mha").create(mr2);
  // named_buffer hands back the existing buffer whatever size is asked.
  ASSERT_TRUE(d1.has_named_buffer("flashinfer_workspace"));
  ASSERT_TRUE(d2.has_named_buffer("trtllm_mha_zero_workspace"));
  EXPECT_EQ(std::to_string(d1.named_buffer("flashinfer_workspace", 1, MemKind::device, false, "t")->bytes()),
            fact(FlashInferBackend::derived_facts(qwen, env), "flashinfer_workspace_bytes"));
  EXPECT_EQ(std::to_string(d2.named_buffer("trtllm_mha_zero_workspace", 1, MemKind::device, false, "t")->bytes()),
            fact(TrtllmMhaImpl::derived_facts(qwen, env), "trtllm_workspace_bytes"));
}

TEST(Registry, AVariantRegisteredFromATestFileIsFoundAndCreatedAndLeavesWithItsToken) {
  {
    BackendRegistration token = register_backend(probe_info());
    EXPECT_EQ(token.name(), kProbe);
    EXPECT_EQ(backend_names(),
              (std::vector<std::string>{"flashinfer", "trtllm_mha", "trtllm_mha_legacy", kProbe}));
    const BackendInfo& info = find_backend(kProbe);
    EXPECT_EQ(info.models, "TRTLLMHAAttnBackend, registered by a test");
    EXPECT_EQ(info.derived, nullptr);
    EXPECT_EQ(change_pairs().size(), 1u) << "the probe claims no change";
    // Validation is the TRTLLM one: page size 8 is refused.
    ServerArgs bad;
    bad.page_size = 8;
    EXPECT_THROW(info.validate(find_model_preset("tiny"), bad), InputError);
    // It constructs what trtllm_mha constructs.
    CpuDevice a, b;
    ModelRunner ma(a, find_model_preset("tiny"), ServerArgs{}), mb(b, find_model_preset("tiny"), ServerArgs{});
    auto probe = info.create(ma);
    auto lean = find_backend("trtllm_mha").create(mb);
    ASSERT_NE(probe, nullptr);
    EXPECT_EQ(a.ledger().live()[MemKind::device], b.ledger().live()[MemKind::device]);
    EXPECT_GT(a.ledger().live()[MemKind::device], 0);
    // A second registration of the same name, or one without create, is refused.
    EXPECT_THROW((void)register_backend(probe_info()), std::invalid_argument);
    BackendInfo no_create = probe_info();
    no_create.name = "no_create";
    no_create.create = nullptr;
    EXPECT_THROW((void)register_backend(no_create), std::invalid_argument);
    BackendInfo unnamed = probe_info();
    unnamed.name.clear();
    EXPECT_THROW((void)register_backend(unnamed), std::invalid_argument);
    // Moving the token moves the registration.
    BackendRegistration moved = std::move(token);
    EXPECT_TRUE(contains(backend_names(), kProbe));
  }
  EXPECT_FALSE(contains(backend_names(), kProbe)) << "unregistered with its token";
  EXPECT_THROW(find_backend(kProbe), InputError);
}

TEST(Registry, AVariantWithoutValidateGetsNoChecks) {
  BackendInfo info = probe_info();
  info.validate = nullptr;
  const BackendRegistration token = register_backend(info);
  ServerArgs s;
  s.page_size = 8;
  EXPECT_NO_THROW(find_backend(kProbe).validate(find_model_preset("tiny"), s));
}

TEST(Registry, TwoBackendsThatDeriveOneFactDifferentlyAreAProgrammingError) {
  BackendInfo info = probe_info();
  info.derived = [](const ModelConfig&, const ServerArgs&) -> DerivedFacts { return {{"trtllm_workspace_bytes", "1"}}; };
  const BackendRegistration token = register_backend(info);
  try {
    (void)derived_facts(find_model_preset("tiny"), ServerArgs{});
    FAIL() << "no throw";
  } catch (const std::logic_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("trtllm_workspace_bytes"), std::string::npos) << what;
    EXPECT_NE(what.find(kProbe), std::string::npos) << what;
  }
}

// ---- end to end, in process: the commands that iterate the registry see the probe ----------------------

struct AppResult {
  int exit_code;
  std::string out;
};

// main_app with `args` (split on spaces), stdout captured.
AppResult app(const std::string& args) {
  std::vector<std::string> words = {"attnbench"};
  std::istringstream is(args);
  for (std::string w; is >> w;) words.push_back(w);
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  std::ostringstream out;
  std::streambuf* old = std::cout.rdbuf(out.rdbuf());
  int code = -1;
  try {
    code = main_app(static_cast<int>(argv.size()), argv.data());
  } catch (...) {
    std::cout.rdbuf(old);
    throw;
  }
  std::cout.rdbuf(old);
  return {code, out.str()};
}

TEST(RegistryEndToEnd, ListShowsTheProbe) {
  const BackendRegistration token = register_backend(probe_info());
  const AppResult r = app("list");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find(std::string(kProbe) + "    TRTLLMHAAttnBackend, registered by a test"), std::string::npos) << r.out;
}

TEST(RegistryEndToEnd, MemoryAllMeasuresTheProbeLikeTrtllmMha) {
  const BackendRegistration token = register_backend(probe_info());
  test::TempDir d;
  const AppResult r = app("memory --model tiny --device cpu --backend all --format json --out " + d.file("m.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(test::read_file(d.file("m.json")));
  const nlohmann::json *probe = nullptr, *lean = nullptr;
  for (const auto& b : j["backends"]) {
    if (b["backend"] == kProbe) probe = &b;
    if (b["backend"] == "trtllm_mha") lean = &b;
  }
  ASSERT_NE(probe, nullptr) << j.dump();
  ASSERT_NE(lean, nullptr);
  ASSERT_EQ((*probe)["phases"].size(), (*lean)["phases"].size());
  for (std::size_t i = 0; i < (*lean)["phases"].size(); ++i)
    EXPECT_EQ((*probe)["phases"][i]["device_bytes"], (*lean)["phases"][i]["device_bytes"]) << i;
}

TEST(RegistryEndToEnd, RunAllGivesProbeRowsBitIdenticalToTrtllmMhaAndTheReportNamesThem) {
  const BackendRegistration token = register_backend(probe_info());
  test::TempDir d;
  const std::string csv = d.file("r.csv");
  const AppResult r = app("run --device cpu --model tiny --layers 1 --batch 2 --kv-len 24 --page-size 16 --backend all "
                          "--warmup 0 --min-samples 1 --max-samples 2 --time-budget 0.01 --quiet --out " + csv);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto rows = read_results_csv(csv);
  ASSERT_EQ(rows.size(), 4u) << "one decode case x 4 backends, eager on the CPU";
  const ResultRow* probe = nullptr;
  for (const ResultRow& row : rows)
    if (row.backend == kProbe) probe = &row;
  ASSERT_NE(probe, nullptr);
  EXPECT_EQ(probe->status, RowStatus::ok) << probe->note;
  ASSERT_TRUE(probe->ref_pass.has_value());
  EXPECT_TRUE(*probe->ref_pass);
  EXPECT_NE(probe->bitwise_equal_to.find("trtllm_mha"), std::string::npos) << probe->bitwise_equal_to;
  EXPECT_NE(probe->bitwise_equal_to.find("trtllm_mha_legacy"), std::string::npos) << probe->bitwise_equal_to;
  const AppResult md = app("report " + d.file("r.json"));
  ASSERT_EQ(md.exit_code, 0);
  EXPECT_NE(md.out.find(std::string(kProbe) + " µs"), std::string::npos) << "a latency column of its own\n" << md.out;
}

}  // namespace
}  // namespace attnbench
