// Model vs SGLang from hand-written rows: SGLang rows (*_sglang) paired with their catalog twins, the memory per
// phase and tag with the difference explained, the change's saving on SGLang's classes beside the model's, the
// step table, and the section in `report --peers`.
#include "report/sglang_peers.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "report/markdown.hpp"
#include "report/peers.hpp"
#include "support/backend_catalog.hpp"
#include "support/result_rows.hpp"

namespace attnbench {
namespace {

const BackendCatalog kCatalog = test::standard_catalog();
const char* kDecode = "decode/llama-3.1-8b/L=6/b=16/kv=4096/p=64/bf16";

ResultRow::LedgerGroup g(const std::string& phase, const std::string& tag, const std::string& kind, std::int64_t b,
                         int count = 1) {
  return {phase, tag, kind, b, false, count};
}

// The facts' H200 figures (facts-0.5.23 §4), split by tag as attnbench's ledger spells them.
std::vector<ResultRow::LedgerGroup> flashinfer_construct() {
  return {g("construct", "flashinfer.workspace_buffer", "device", 402653184),
          g("construct", "flashinfer.decode_wrappers[0].int_workspace", "device", 8388608),
          g("construct", "flashinfer.decode_wrappers[0].pin_memory_int_workspace", "pinned", 8388608)};
}

std::vector<ResultRow::LedgerGroup> trtllm_construct() {
  return {g("construct", "trtllm_mha.workspace_buffer", "device", 545259520),
          g("construct", "trtllm_mha.multi_ctas_kv_counter_buffer", "device", 1048576),
          g("construct", "trtllm_mha.default_kv_scale", "device", 4)};
}

ResultRow with(ResultRow r, std::vector<ResultRow::LedgerGroup> a, std::vector<ResultRow::LedgerGroup> b = {}) {
  r.ledger = std::move(a);
  r.ledger.insert(r.ledger.end(), b.begin(), b.end());
  r.step_median_us = 100;
  return r;
}

struct Rows {
  std::vector<ResultRow> model, sglang;
};

Rows rows() {
  Rows r;
  r.model = {with(test::llama_row(kDecode, "trtllm_mha_legacy", "eager"), flashinfer_construct(), trtllm_construct()),
             with(test::llama_row(kDecode, "trtllm_mha", "eager"), trtllm_construct()),
             with(test::llama_row(kDecode, "trtllm_mha", "graph"), trtllm_construct(),
                  {g("graph_state", "trtllm_mha.decode_cuda_graph_metadata.page_table", "device", 2097152),
                   g("capture", "trtllm_mha.decode_cuda_graph_metadata[bs].cu_seqlens_q", "device", 17116, 36)})};
  ResultRow inh = with(test::llama_row(kDecode, "trtllm_mha_sglang", "eager"), flashinfer_construct(), trtllm_construct());
  inh.step_median_us = 80;
  inh.ctor_device_bytes = 982828544;
  inh.bitwise_equal_to = "trtllm_mha_lean_sglang";
  // SGLang's lean object: the same construct tensors, plus one the model does not have, the capture at 35 sizes
  ResultRow lean = with(test::llama_row(kDecode, "trtllm_mha_lean_sglang", "eager"), trtllm_construct(),
                        {g("construct", "trtllm_mha.extra_buffer", "device", 64),
                         g("graph_state", "trtllm_mha.decode_cuda_graph_metadata.page_table", "device", 2097152),
                         g("capture", "trtllm_mha.decode_cuda_graph_metadata[bs].cu_seqlens_q", "device", 16000, 35)});
  lean.ctor_device_bytes = 546309632;
  lean.bitwise_equal_to = "trtllm_mha_sglang";
  ResultRow orphan = test::llama_row(kDecode, "cudnn_sglang", "eager");
  r.sglang = {inh, lean, orphan};
  return r;
}

const SglangTagLine* line(const SglangMemory& m, const std::string& phase, const std::string& tag) {
  for (const SglangTagLine& l : m.lines)
    if (l.phase == phase && l.tag == tag) return &l;
  return nullptr;
}

TEST(SglangPeers, NamesAndTwinsComeFromTheCatalog) {
  EXPECT_TRUE(is_sglang_backend("trtllm_mha_sglang"));
  EXPECT_FALSE(is_sglang_backend("trtllm_mha"));
  EXPECT_FALSE(is_sglang_backend("_sglang"));
  EXPECT_TRUE(is_peer_backend("flashinfer_lib"));
  EXPECT_TRUE(is_peer_backend("flashinfer_sglang"));
  EXPECT_EQ(kCatalog.model_twin_of_sglang("trtllm_mha_sglang"), "trtllm_mha_legacy");
  EXPECT_EQ(kCatalog.model_twin_of_sglang("trtllm_mha_lean_sglang"), "trtllm_mha");
  EXPECT_EQ(kCatalog.model_twin_of_sglang("flashinfer_sglang"), "flashinfer");
  EXPECT_FALSE(kCatalog.model_twin_of_sglang("trtllm_lib"));
  const auto [model, peers] = split_library_rows(rows().sglang);
  EXPECT_TRUE(model.empty()) << "SGLang rows never count as the model's";
}

TEST(SglangPeers, MemoryPerPhaseAndTagWithTheDifferenceExplained) {
  const Rows r = rows();
  const SglangComparison c = compare_sglang(r.model, r.sglang, kCatalog);
  ASSERT_EQ(c.memory.size(), 2u);
  const SglangMemory& lean = c.memory[1];
  EXPECT_EQ(lean.model_backend, "trtllm_mha");
  EXPECT_EQ(lean.sglang_backend, "trtllm_mha_lean_sglang");
  const SglangTagLine* ws = line(lean, "construct", "trtllm_mha.workspace_buffer");
  ASSERT_NE(ws, nullptr);
  EXPECT_EQ(ws->why, "equal");
  EXPECT_EQ(ws->difference(), 0);
  const SglangTagLine* extra = line(lean, "construct", "trtllm_mha.extra_buffer");
  ASSERT_NE(extra, nullptr);
  EXPECT_FALSE(extra->model_bytes);
  EXPECT_EQ(extra->why, "not in attnbench's ledger (not modelled)");
  // graph_state / capture of the model come from its graph row, SGLang's from its memory pass
  EXPECT_EQ(line(lean, "graph_state", "trtllm_mha.decode_cuda_graph_metadata.page_table")->why, "equal");
  const SglangTagLine* cap = line(lean, "capture", "trtllm_mha.decode_cuda_graph_metadata[bs].cu_seqlens_q");
  ASSERT_NE(cap, nullptr);
  EXPECT_EQ(cap->difference(), 16000 - 17116);
  EXPECT_EQ(cap->why, "SGLang -1,116 B; 35 allocation(s) in SGLang, 36 modelled");
  EXPECT_EQ(lean.equal, 4);  // three construct tags and the page table
  EXPECT_EQ(lean.differing, 2);
  EXPECT_EQ(c.sglang_without_model.size(), 1u);
  EXPECT_NE(c.sglang_without_model[0].find("cudnn_sglang"), std::string::npos);
}

TEST(SglangPeers, TheSavingOnSglangsClassesBesideTheModels) {
  const Rows r = rows();
  const SglangComparison c = compare_sglang(r.model, r.sglang, kCatalog);
  ASSERT_EQ(c.savings.size(), 1u);
  const SglangSaving& s = c.savings[0];
  EXPECT_EQ(s.model_device, 402653184 + 8388608);
  EXPECT_EQ(s.model_pinned, 8388608);
  EXPECT_EQ(s.sglang_device, 402653184 + 8388608 - 64);
  EXPECT_EQ(s.sglang_pinned, 8388608);
  EXPECT_EQ(s.sglang_allocated_device, 982828544 - 546309632);
  std::ostringstream os;
  write_sglang_markdown(os, c);
  const std::string md = os.str();
  EXPECT_NE(md.find("## Model vs SGLang"), std::string::npos);
  EXPECT_NE(md.find("differs by -64 B device, 0 B pinned"), std::string::npos) << md;
  EXPECT_NE(md.find("### trtllm_mha vs trtllm_mha_lean_sglang, llama-3.1-8b, page 64"), std::string::npos);
  EXPECT_NE(md.find("| `" + std::string(kDecode) + "` | eager | trtllm_mha | trtllm_mha_lean_sglang | 100.0 | 100.0 | "
                    "1.000 | pass | trtllm_mha_sglang |"),
            std::string::npos)
      << md;
}

TEST(SglangPeers, StandInsAreCountedAndNamedByTopLevelPackageOnce) {
  const Rows r = rows();
  const SglangComparison c = compare_sglang(
      r.model, r.sglang, kCatalog,
      {{{"stubs", "IPython (imported by sglang.utils); IPython.display (imported by sglang.utils); "
                  "deep_gemm.utils (imported by sglang.srt.layers.deep_gemm_wrapper.entrypoint)"}},
       {{"stubs", "IPython (imported by sglang.utils)"}}});
  std::ostringstream os;
  write_sglang_markdown(os, c);
  const std::string md = os.str();
  // two runs' lists: 3 distinct modules (IPython in both), of two packages, each package named once
  EXPECT_NE(md.find("Stand-in modules in the SGLang run: 3 modules of 2 packages"), std::string::npos) << md;
  EXPECT_NE(md.find("stubs.txt): IPython, deep_gemm."), std::string::npos) << md;
  EXPECT_EQ(md.find("IPython.display"), std::string::npos) << md;
}

TEST(SglangPeers, EqualSavingSaysSoAndTheReportCarriesTheSection) {
  Rows r = rows();
  r.sglang[1].ledger.erase(r.sglang[1].ledger.begin() + 3);  // SGLang's extra tensor gone: to the byte
  const SglangComparison c = compare_sglang(r.model, r.sglang, kCatalog, {{{"stubs", "none"}}});
  std::ostringstream os;
  write_sglang_markdown(os, c);
  EXPECT_NE(os.str().find("**equal to the byte**"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("Stand-in modules in the SGLang run: none."), std::string::npos);

  ResultSet all;
  all.rows = r.model;
  ResultSet peers;
  peers.rows = r.sglang;
  peers.environment = {{"stubs", "none"}, {"sglang_version", "0.5.23"}};
  std::ostringstream report;
  write_markdown_report(report, all, nullptr, "", kCatalog, {peers}, {});
  EXPECT_NE(report.str().find("## Model vs SGLang"), std::string::npos);
  EXPECT_EQ(report.str().find("## Model vs library"), std::string::npos) << "no *_lib row: no library section";
}

}  // namespace
}  // namespace attnbench
