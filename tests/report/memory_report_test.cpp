// Memory report writers: the CSV rows, the JSON document, the saving.
#include "report/memory_report.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "support/backend_catalog.hpp"
#include "support/golden.hpp"

namespace attnbench {
namespace {

MemoryReport sample_report() {
  MemoryReport r;
  r.model = "m";
  r.sglang_version = "0.5.23";
  r.kv_bytes_per_token = 100;
  r.context = {{"model", "m"}, {"device", "cpu"}};
  BackendMemory lean{"trtllm_mha", "lean", {{"construct", 500, 0, 0, std::nullopt, {{"t.ws", "device", 500, true, 1}}}}, ""};
  BackendMemory legacy{"trtllm_mha_legacy", "legacy",
                       {{"construct", 1750, 64, 0, 2097152,
                         {{"t.ws", "device", 500, true, 1}, {"f.ws", "device", 1250, true, 1}, {"f.pin", "pinned", 64, false, 2}}}},
                       ""};
  r.backends = {lean, legacy};
  return r;
}

TEST(MemoryReport, SavingIsLegacyMinusLeanInBytesAndTokens) {
  const auto s = memory_saving(sample_report(), "trtllm_mha_legacy", "trtllm_mha");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->device_bytes, 1250);
  EXPECT_EQ(s->pinned_bytes, 64);
  EXPECT_EQ(s->kv_tokens, 12);
  EXPECT_FALSE(memory_saving(sample_report(), "nope", "trtllm_mha"));
}

TEST(MemoryReport, CsvHasOneRowPerAllocationGroup) {
  std::ostringstream os;
  write_memory_csv(os, sample_report());
  EXPECT_EQ(os.str(),
            "backend,phase,tag,kind,bytes,shared,count\n"
            "trtllm_mha,construct,t.ws,device,500,1,1\n"
            "trtllm_mha_legacy,construct,t.ws,device,500,1,1\n"
            "trtllm_mha_legacy,construct,f.ws,device,1250,1,1\n"
            "trtllm_mha_legacy,construct,f.pin,pinned,64,0,2\n");
}

TEST(MemoryReport, JsonParsesAndCarriesPhasesDriverDeltaAndSaving) {
  std::ostringstream os;
  write_memory_json(os, sample_report(), test::standard_catalog());
  const auto j = nlohmann::json::parse(os.str());
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["backends"][1]["phases"][0]["driver_delta_bytes"], 2097152);
  EXPECT_TRUE(j["backends"][0]["phases"][0]["driver_delta_bytes"].is_null());
  EXPECT_EQ(j["saving"]["device_bytes"], 1250);
  EXPECT_EQ(j["context"]["device"], "cpu");
  EXPECT_EQ(j["sglang_version"], "0.5.23");  // report --memory checks it against the results' rows
}

TEST(MemoryReport, TableStatesTheSaving) {
  std::ostringstream os;
  write_memory_table(os, sample_report(), test::standard_catalog());
  EXPECT_NE(os.str().find("What the change saves (trtllm_mha_legacy - trtllm_mha)"), std::string::npos);
  EXPECT_NE(os.str().find("12 KV-cache tokens of m"), std::string::npos);
}

TEST(MemoryReportGolden, TableCsvJson) {
  MemoryReport r = sample_report();
  r.context.emplace_back("empty value", "");
  r.backends[1].phases.push_back({"capture", 34232, 4096, 0, std::nullopt,
                                  {{"t.x[bs]", "device", 34232, false, 36}, {"t.none", "device", 0, false, 0},
                                   {"t.pin", "pinned", 4096, false, 1}}});
  r.backends.push_back({"flashinfer", "FlashInferAttnBackend", {}, "out of memory"});
  r.backends.push_back({"short", "x", {}, "e"});
  std::ostringstream table, csv, js;
  write_memory_table(table, r, test::standard_catalog());
  write_memory_csv(csv, r);
  write_memory_json(js, r, test::standard_catalog());
  test::expect_golden("memory.txt", table.str());
  test::expect_golden("memory.csv", csv.str());
  test::expect_golden("memory.json", js.str());
  // No model bytes per token: the saving without its KV-token worth.
  r.kv_bytes_per_token = 0;
  std::ostringstream no_kv;
  write_memory_table(no_kv, r, test::standard_catalog());
  test::expect_golden("memory-no-kv.txt", no_kv.str());
}

}  // namespace
}  // namespace attnbench
