// The sweep plan: one validate() pass that names the option at fault, the settings it gives the runner and
// the repro options of its rows.
#include "runner/plan.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

#include "backends/registry.hpp"
#include "core/errors.hpp"
#include "runner/case.hpp"
#include "runner/sampler.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

RunPlan tiny_plan() {
  RunPlan p;
  p.models = {"tiny"};
  p.batches = {2};
  p.kv_lens = {8};
  return p;
}

// validate() of tiny_plan() changed by `change` throws InputError whose message is `message` exactly, or
// (with `exact` false) contains it.
void expect_message(const std::function<void(RunPlan&)>& change, const std::string& message, bool exact = true) {
  RunPlan p = tiny_plan();
  change(p);
  try {
    validate(p);
    ADD_FAILURE() << "accepted; expected: " << message;
  } catch (const InputError& e) {
    if (exact)
      EXPECT_EQ(std::string(e.what()), message);
    else
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

void expect_named(const std::function<void(RunPlan&)>& change, const std::string& option) {
  expect_message(change, option, /*exact=*/false);
}

TEST(Plan, DefaultsAndATinyPlanAreValid) {
  EXPECT_NO_THROW(validate(RunPlan{}));
  EXPECT_NO_THROW(validate(tiny_plan()));
}

// The sampling policy as user input: InputError naming the option (the sampler's own precondition check
// throws std::invalid_argument, for programs: sampler_test).
TEST(Plan, SamplingPolicyIsUserInputAndNamesTheOption) {
  expect_message([](RunPlan& p) { p.sampling.warmup = -1; }, "--warmup: must be >= 0 (got -1)");
  expect_message([](RunPlan& p) { p.sampling.min_samples = 0; }, "--min-samples: must be >= 1 (got 0)");
  expect_message([](RunPlan& p) { p.sampling.min_samples = 5, p.sampling.max_samples = 2; },
                 "--max-samples: 2 is below --min-samples 5");
  expect_message([](RunPlan& p) { p.sampling.target_spread_pct = -5; }, "--target-spread: must be a finite percentage >= 0");
  expect_message([](RunPlan& p) { p.sampling.target_spread_pct = std::nan(""); },
                 "--target-spread: must be a finite percentage >= 0");
  expect_message([](RunPlan& p) { p.sampling.time_budget_s = 0; }, "--time-budget: must be a finite number of seconds > 0");
  expect_message([](RunPlan& p) { p.sampling.time_budget_s = std::numeric_limits<double>::infinity(); },
                 "--time-budget: must be a finite number of seconds > 0");
  expect_message([](RunPlan& p) { p.reference_flop_budget = 0; }, "--reference-flop-budget: must be a finite number > 0");
  expect_message([](RunPlan& p) { p.timing = {"eager", "cold"}; }, "--timing: unknown timing 'cold' (expected eager, graph)");
  // The same policy given to the sampler directly is a program error, not user input.
  SamplingPolicy bad;
  bad.warmup = -1;
  EXPECT_THROW(validate_sampling_policy(bad), std::invalid_argument);
}

TEST(Plan, ModelServerAndBackendOptionsAreCheckedInTheSamePass) {
  expect_message([](RunPlan& p) { p.model.layers = -1; }, "--layers: must be positive (got -1)");
  expect_message([](RunPlan& p) { p.model.tp_size = -2; }, "--tp-size: must be positive (got -2)");
  expect_message([](RunPlan& p) { p.model.flashinfer_workspace_size = -1; },
                 "--flashinfer-workspace-size: must be positive (got -1)");
  expect_message([](RunPlan& p) { p.backends = {}; }, "--attention-backend (--backend): no backend selected");
  expect_message([](RunPlan& p) { p.draft_tokens = 17; }, "--speculative-num-draft-tokens (--draft-tokens): must be in [1, 16]");
  expect_message([](RunPlan& p) { p.batches = {}; }, "--batch: needs at least one value");
  expect_message([](RunPlan& p) { p.kv_lens = {-1}; }, "--kv-len: -1 is below the minimum 0");
  expect_named([](RunPlan& p) { p.backends = {"fastattn"}; }, "--backend");
  expect_named([](RunPlan& p) { p.models = {"tiny", "nope"}; }, "--model");
  expect_named([](RunPlan& p) { p.dtypes = {"fp64"}; }, "--dtype");
  expect_named([](RunPlan& p) { p.modes = {"prefill"}; }, "--mode");
  expect_named([](RunPlan& p) { p.length_dist = "normal"; }, "--length-dist");
  expect_named([](RunPlan& p) { p.model.server.max_running_requests = 0; }, "--max-running-requests");
  // A page size the TRTLLM backends reject, only when they are selected (registry validate per page size).
  expect_named([](RunPlan& p) { p.page_sizes = {8}; }, "--page-size");
  RunPlan fi = tiny_plan();
  fi.page_sizes = {8};
  fi.backends = {"flashinfer"};
  EXPECT_NO_THROW(validate(fi));
  // Verify cases validate the server with their draft tokens (SGLang's --speculative-num-draft-tokens).
  RunPlan verify = tiny_plan();
  verify.modes = {"verify"};
  verify.draft_tokens = 16;
  EXPECT_NO_THROW(validate(verify));
}

// Two --model values that are one model by name (the preset and a config.json of that name) would give rows of
// two models one case id: refused, naming both.
TEST(Plan, TwoModelsOfOneNameAreRefused) {
  test::TempDir d;
  test::write_file(d.file("tiny.json"), test::read_file(std::string(ATTNBENCH_SOURCE_DIR) + "/configs/models/tiny.json"));
  const std::string path = d.file("tiny.json");
  expect_message([&path](RunPlan& p) { p.models = {"tiny", path}; },
                 "--model: 'tiny' and '" + path + "' are both model 'tiny' (case ids name the model: give one, or "
                 "rename a config's folder)");
  RunPlan p = tiny_plan();
  p.models = {path};
  EXPECT_NO_THROW(validate(p)) << "one spelling alone is fine";
}

TEST(Plan, ResolveBackendsExpandsAllAndDropsDuplicates) {
  EXPECT_EQ(resolve_backends({"all"}), backend_names());
  EXPECT_EQ(resolve_backends({"trtllm_mha", "all", "trtllm_mha"}),
            (std::vector<std::string>{"trtllm_mha", "flashinfer", "trtllm_mha_legacy"}));
  EXPECT_THROW(resolve_backends({"fastattn"}), InputError);
}

TEST(Plan, ResolveModelAndServerArgsApplyTheOverrides) {
  ModelOptions m;
  m.layers = 3;
  m.tp_size = 2;
  m.flashinfer_workspace_size = 1 << 20;
  m.flashinfer_use_tensor_core = "false";
  const ModelConfig model = resolve_model("llama-3.1-8b", m);
  EXPECT_EQ(model.num_layers, 3);
  EXPECT_EQ(model.tp_size, 2);
  const ServerArgs s = resolve_server_args(m);
  EXPECT_EQ(s.env_flashinfer_workspace_size, std::int64_t{1} << 20);
  EXPECT_EQ(s.env_flashinfer_use_tensor_core, false);
  EXPECT_FALSE(resolve_server_args(ModelOptions{}).env_flashinfer_workspace_size.has_value());
}

// --layers takes at most the model's own layers (a layer it does not have has no window, no shape of its own).
TEST(Plan, LayersBeyondTheModelAreRefusedNamingTheOption) {
  ModelOptions m;
  m.layers = 32;
  EXPECT_EQ(resolve_model("llama-3.1-8b", m).num_layers, 32);
  m.layers = 33;
  try {
    resolve_model("llama-3.1-8b", m);
    ADD_FAILURE() << "--layers 33 on a 32-layer model was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--layers: 33 is more than the 32 layers of model 'llama-3.1-8b'");
  }
  m.layers = 100000;
  EXPECT_THROW(resolve_model("gemma-3-12b", m), InputError);
}

TEST(Plan, RunSettingsFollowThePlan) {
  RunPlan p = tiny_plan();
  p.timing = {"eager"};
  p.no_flush_l2 = true;
  p.capture_needed_only = true;
  p.sampling.warmup = 7;
  p.reference_flop_budget = 1e6;
  const RunSettings s = run_settings(p, /*validate_only=*/false, {"run", "--model", "tiny", "--out", "x.csv"});
  EXPECT_TRUE(s.timing);
  EXPECT_FALSE(s.graph);
  EXPECT_FALSE(s.flush_l2);
  EXPECT_FALSE(s.capture_all);
  EXPECT_EQ(s.sampling.warmup, 7);
  EXPECT_EQ(s.reference_flop_budget, 1e6);
  EXPECT_EQ(s.repro_prefix, "attnbench run");
  EXPECT_EQ(s.repro_options, "--model tiny");
  const RunSettings v = run_settings(RunPlan{}, /*validate_only=*/true, {});
  EXPECT_FALSE(v.timing);
  EXPECT_TRUE(v.graph);
  EXPECT_TRUE(v.flush_l2);
  EXPECT_EQ(v.repro_prefix, "attnbench validate");
}

TEST(Plan, ReproOptionsDropTheRowPlacingOptionsAndQuoteForTheShell) {
  EXPECT_EQ(repro_options({"validate", "--model", "tiny", "--out", "a.csv", "--json=b.json", "--backend", "flashinfer",
                           "--case-id", "x", "--filter", "y", "--resume", "-q", "--quiet", "--list-cases", "--batch",
                           "1,2", "--attention-backend", "trtllm_mha", "--trace", "my trace.csv"}),
            "--model tiny --batch 1,2 --trace 'my trace.csv'");
}

TEST(Plan, ARepeatedListValueIsAnErrorNamingTheOptionAndTheValue) {
  expect_message([](RunPlan& p) { p.batches = {1, 2, 1}; },
                 "--batch: the value '1' is given twice (a list holds each value once)");
  expect_named([](RunPlan& p) { p.modes = {"decode", "decode"}; }, "--mode: the value 'decode'");
  expect_named([](RunPlan& p) { p.seeds = {7, 7}; }, "--seed: the value '7'");
  expect_named([](RunPlan& p) { p.models = {"tiny", "tiny"}; }, "--model: the value 'tiny'");
  expect_named([](RunPlan& p) { p.backends = {"flashinfer", "flashinfer"}; }, "--attention-backend (--backend): the value 'flashinfer'");
  expect_named([](RunPlan& p) { p.dtypes = {"bf16", "bf16"}; }, "--dtype");
  expect_named([](RunPlan& p) { p.kv_lens = {8, 8}; }, "--kv-len");
  expect_named([](RunPlan& p) { p.page_sizes = {64, 64}; }, "--page-size");
  expect_named([](RunPlan& p) { p.timing = {"eager", "eager"}; }, "--timing");
  expect_named([](RunPlan& p) { p.model.server.cuda_graph_bs = {1, 1}; }, "--cuda-graph-bs: the value '1'");
  expect_named([](RunPlan& p) { p.models = {"ti\nny", "ti\nny"}; }, "'ti\\nny'");  // escaped
}

TEST(Plan, ASweepTooLargeIsRefusedWithItsSizeBeforeAnythingIsBuilt) {
  RunPlan p = tiny_plan();
  p.modes = {"decode", "extend", "verify"};
  p.batches = {1, 2};
  p.kv_lens = {8, 16, 32};
  p.prefix_lens = {0, 4};
  p.extend_lens = {8};
  p.seeds = {1, 2};
  // decode 2 x 3, extend 2 x 2 x 1, verify 2 x 3 cases, each x 2 seeds; requests: the batches' sum per length.
  const SweepSize s = sweep_size(p);
  EXPECT_EQ(s.cases, (6 + 4 + 6) * 2);
  EXPECT_EQ(s.requests, ((1 + 2) * 3 + (1 + 2) * 2 + (1 + 2) * 3) * 2);
  std::vector<int> many;
  for (int i = 1; i <= 1000; ++i) many.push_back(i);
  expect_message(
      [&](RunPlan& q) {
        q.batches = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
        q.kv_lens = many;
        q.seeds = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
      },
      "--batch, --kv-len, --seed: the sweep would expand to 110000 cases (--batch 11 values x --kv-len 1000 values "
      "x --seed 10 values), more than the limit of 100000; narrow these lists");
  expect_message(
      [&](RunPlan& q) {
        q.batches = {4096};
        q.kv_lens.clear();
        for (int i = 1; i <= 2500; ++i) q.kv_lens.push_back(i);
      },
      "--batch: the sweep would build 10240000 requests over its 2500 cases (--batch up to 4096 requests per case), "
      "more than the limit of 10000000; narrow --kv-len, --batch");
  // Lists far beyond any memory: refused from their sizes alone, at once.
  expect_named(
      [&](RunPlan& q) {
        q.kv_lens = many;
        q.batches = many;
        q.seeds.clear();
        for (std::uint64_t i = 1; i <= 1000; ++i) q.seeds.push_back(i);
      },
      "1000000000 cases");
}

}  // namespace
}  // namespace attnbench
