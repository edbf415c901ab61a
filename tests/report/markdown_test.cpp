// The Markdown PR report: memory saving (from the rows and from a MemoryReport) with its KV-token worth,
// every case, the ratio columns with their noise, correctness verdicts, the environment and the command.
#include "report/markdown.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/errors.hpp"
#include "support/backend_catalog.hpp"
#include "support/errors.hpp"
#include "support/golden.hpp"
#include "support/result_rows.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

ResultRow row(const std::string& case_id, const std::string& backend, const std::string& timing,
              double median) {
  ResultRow r = test::llama_row(case_id, backend, timing);
  test::set_step_us(r, median * 0.99, median, median * 1.02);
  r.tb_per_s = 4.11;
  r.bw_fraction = 0.96;
  r.tflops = 254.0;
  const bool fi = backend == "flashinfer";
  r.ctor_device_bytes = fi ? 436518920 : backend == "trtllm_mha" ? 537919492 : 974438412;
  r.ctor_pinned_bytes = fi || backend == "trtllm_mha_legacy" ? 33554432 : 0;
  if (timing == "graph") {
    r.graph_state_device_bytes = fi ? 167804936 : 2098176;
    r.capture_device_bytes = fi ? 302007004 : 34232;
    r.capture_pinned_bytes = fi ? 301989888 : 0;
    r.note = "36 graphs captured, replayed at bs 64; replay bit-identical to eager";
  }
  r.ref_max_abs_err = 1.5e-3;
  r.bitwise_equal_to = backend == "trtllm_mha"          ? "trtllm_mha_legacy"
                       : backend == "trtllm_mha_legacy" ? "trtllm_mha"
                                                        : "";
  return r;
}

const char* kDecode = "decode/llama-3.1-8b/L=6/b=64/kv=4096/p=64/bf16";
const char* kExtend = "extend/llama-3.1-8b/L=6/b=1/prefix=0/ext=4096/p=64/bf16";

ResultSet small_set() {
  ResultSet s;
  for (const char* timing : {"eager", "graph"}) {
    s.rows.push_back(row(kDecode, "flashinfer", timing, 125.0));
    s.rows.push_back(row(kDecode, "trtllm_mha", timing, 100.0));
    s.rows.push_back(row(kDecode, "trtllm_mha_legacy", timing, 100.0));
  }
  s.rows.push_back(row(kExtend, "flashinfer", "eager", 2976.0));
  s.rows.push_back(row(kExtend, "trtllm_mha", "eager", 3262.0));
  s.rows.push_back(row(kExtend, "trtllm_mha_legacy", "eager", 3271.0));
  return s;
}

std::string report(const ResultSet& s, const MemoryReport* m, const std::string& cmd) {
  std::ostringstream os;
  write_markdown_report(os, s, m, cmd, test::standard_catalog());
  return os.str();
}

using test::has;

TEST(Markdown, FromRowsCarriesSavingCasesRatiosAndCommand) {
  const std::string cmd = "attnbench run --config configs/pr-evidence.toml --device cuda";
  const std::string md = report(small_set(), nullptr, cmd);
  // (a) the saving: 974,438,412 - 537,919,492 = 436,518,920 B; 24,576 B per token (2*8*128*2 B*6 layers).
  EXPECT_TRUE(has(md, "416.30 MiB device (436,518,920 B) + 32.00 MiB pinned")) << md;
  EXPECT_TRUE(has(md, "17,762 KV-cache tokens of llama-3.1-8b at 24,576 B per token")) << md;
  EXPECT_TRUE(has(md, "(2 x 8 KV heads x 128 head_dim x 2 B (bf16) x 6 layers)")) << md;
  EXPECT_TRUE(has(md, "the rows' `layers` are the layers this run stepped")) << md;
  EXPECT_TRUE(has(md, "| llama-3.1-8b | flashinfer | 416.30 MiB |")) << md;
  // (b) every case id, the ratio columns and their values with the noise band.
  EXPECT_TRUE(has(md, std::string("`") + kDecode + "`"));
  EXPECT_TRUE(has(md, std::string("`") + kExtend + "`"));
  EXPECT_TRUE(has(md, "| trtllm_mha / trtllm_mha_legacy | trtllm_mha / flashinfer |")) << md;
  // The band: p10 / p90 - p90 / p10 (rows without raw samples), which holds the ratio (markdown.hpp).
  EXPECT_TRUE(has(md, "| 1.000 (0.971-1.030) | 0.800 (0.776-0.824) |")) << md;
  EXPECT_TRUE(has(md, "| 100.0 (99.0-102.0) |")) << md;
  EXPECT_TRUE(has(md, "4.11 TB/s (0.96)"));
  EXPECT_TRUE(has(md, "254 TFLOP/s"));
  EXPECT_TRUE(has(md, "median 1.000, range 0.997-1.000 over 3 (case, timing) pairs")) << md;
  // (c) correctness, (d) environment, (e) the command.
  EXPECT_TRUE(has(md, "bit-identical to trtllm_mha_legacy in **3 of 3**")) << md;
  EXPECT_TRUE(has(md, "trtllm_mha = trtllm_mha_legacy: 3 of 3")) << md;
  EXPECT_TRUE(has(md, "flashinfer = trtllm_mha: 0 of 3")) << md;
  EXPECT_TRUE(has(md, "3 of 3 graph rows bit-identical")) << md;
  EXPECT_TRUE(has(md, "reference check 9 of 9 pass")) << md;
  EXPECT_TRUE(has(md, "Not recorded")) << md;
  EXPECT_TRUE(has(md, "```sh\n" + cmd + "\n```")) << md;
}

TEST(Markdown, ReportsFailuresEnvironmentAndMemoryReport) {
  ResultSet s = small_set();
  s.rows[1].ref_pass = false;
  s.rows[2].status = RowStatus::failed;
  s.rows[2].note = "CUDA error: illegal address";
  s.rows[2].ref_pass.reset();
  s.environment = {{"gpu_name", "NVIDIA H200"},
                   {"driver_version", "13.0"},
                   {"copy_bandwidth_bytes_per_s", "4265213133289.45"}};
  s.command = "attnbench run --from-json";

  MemoryReport m;
  m.model = "llama-3.1-8b";
  m.kv_bytes_per_token = 131072;
  const auto backend = [](const std::string& name, std::int64_t ctor, std::int64_t pinned) {
    BackendMemory b;
    b.backend = name;
    b.phases = {{"construct", ctor, pinned, 0, ctor - 311304, {}},
                {"graph_state", 2098176, 0, 0, std::nullopt, {}},
                {"capture", 34232, 0, 0, std::nullopt, {}}};
    return b;
  };
  m.backends = {backend("trtllm_mha", 537919492, 0), backend("trtllm_mha_legacy", 974438412, 33554432)};
  const std::string md = report(s, &m, "");
  EXPECT_TRUE(has(md, "= 3,330 KV-cache tokens of llama-3.1-8b at 131,072 B per token")) << md;
  EXPECT_TRUE(has(md, "From `attnbench memory`")) << md;
  EXPECT_TRUE(has(md, "reference check 7 of 8 pass")) << md;
  EXPECT_TRUE(has(md, "- Reference failures:\n  - `" + std::string(kDecode) + "` trtllm_mha eager")) << md;
  EXPECT_TRUE(has(md, "CUDA error: illegal address")) << md;
  EXPECT_TRUE(has(md, "| failed |")) << md;  // the latency cell of the failed row
  EXPECT_TRUE(has(md, "NVIDIA H200, driver 13.0, copy bandwidth 4265 GB/s")) << md;
  EXPECT_TRUE(has(md, "```sh\nattnbench run --from-json\n```")) << md;  // falls back to the set's command
}

TEST(Markdown, LoadsMemoryReportJsonBackAndTheCommittedH200One) {
  MemoryReport m;
  m.context = {{"model", "llama-3.1-8b (32 q / 8 kv heads per rank, head_dim 128, 32 layers, bf16)"},
               {"page_size", "64"}};
  m.model = "llama-3.1-8b";
  m.sglang_version = "0.5.23";
  m.kv_bytes_per_token = 131072;
  BackendMemory b;
  b.backend = "trtllm_mha";
  b.models = "TRTLLMHAAttnBackend(AttentionBackend)";
  b.phases = {{"construct",
               537919492,
               0,
               0,
               536870912,
               {{"trtllm_mha.workspace_buffer", "device", 536870912, true, 1}}},
              {"capture", 34232, 0, 0, std::nullopt, {{"trtllm_mha.x[bs]", "device", 34232, false, 36}}}};
  BackendMemory f;
  f.backend = "flashinfer";
  f.error = "out of memory";
  m.backends = {b, f};
  test::TempDir d;
  {
    std::ofstream out(d.file("m.json"));
    write_memory_json(out, m, test::standard_catalog());
  }
  const MemoryReport back = load_memory_report_json(d.file("m.json"), test::standard_catalog());
  EXPECT_EQ(back.model, "llama-3.1-8b");
  EXPECT_EQ(back.sglang_version, m.sglang_version);
  EXPECT_EQ(back.kv_bytes_per_token, 131072);
  EXPECT_EQ(back.context, m.context);
  ASSERT_EQ(back.backends.size(), 2u);
  EXPECT_EQ(back.backends[1].error, "out of memory");
  const MemoryPhase* c = back.backends[0].phase("construct");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->device_bytes, 537919492);
  EXPECT_EQ(c->driver_delta_bytes, 536870912);
  ASSERT_EQ(c->tags.size(), 1u);
  EXPECT_TRUE(c->tags[0].shared);
  EXPECT_EQ(back.backends[0].phase("capture")->tags[0].count, 36);
  EXPECT_FALSE(back.backends[0].phase("capture")->driver_delta_bytes);

  const MemoryReport h200 = load_memory_report_json(
      std::string(ATTNBENCH_SOURCE_DIR) + "/results/h200/memory.json", test::standard_catalog());
  EXPECT_TRUE(h200.sglang_version.empty());  // written before the field and the context's "sglang": no release
  const auto s = memory_saving(h200, "trtllm_mha_legacy", "trtllm_mha");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->device_bytes, 436518920);
  EXPECT_EQ(s->kv_tokens, 3330);

  test::write_file(d.file("cut.json"), test::read_file(d.file("m.json")).substr(0, 100));
  EXPECT_THROW(load_memory_report_json(d.file("cut.json"), test::standard_catalog()), InputError);
  test::write_file(d.file("results.json"), R"({"schema": "attnbench.results", "schema_version": 1})");
  EXPECT_THROW(load_memory_report_json(d.file("results.json"), test::standard_catalog()), InputError);
  test::write_file(
      d.file("type.json"),
      R"({"schema": "attnbench.memory", "schema_version": 1, "kv_bytes_per_token": "many", "backends": []})");
  try {
    load_memory_report_json(d.file("type.json"), test::standard_catalog());
    ADD_FAILURE() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("kv_bytes_per_token is not an integer"), std::string::npos)
        << e.what();
  }
}

// A malformed backend, phase or tag is named by its JSON path.
TEST(MemoryReportJson, ErrorsNameTheJsonPath) {
  test::TempDir d;
  const auto message = [&](const std::string& backends) {
    const std::string path = d.file("m.json");
    test::write_file(path, R"({"schema": "attnbench.memory", "schema_version": 1, "kv_bytes_per_token": 1024, )"
                           R"("backends": )" + backends + "}");
    const std::string what = test::error_of([&] { load_memory_report_json(path, test::standard_catalog()); });
    return what.substr(std::min(what.size(), ("memory report " + path + ": ").size()));
  };
  const std::string ok_phase = R"({"phase": "construct", "device_bytes": 1, "pinned_bytes": 0})";
  EXPECT_EQ(message("{}"), "no \"backends\" array");
  EXPECT_EQ(message(R"([{"backend": "flashinfer", "phases": []}, 7])"), "backends[1] is not an object");
  EXPECT_EQ(message(R"([{"backend": "flashinfer"}])"), "backends[0].phases is not an array");
  EXPECT_EQ(message(R"([{"backend": "flashinfer", "phases": [)" + ok_phase + R"(, "x"]}])"),
            "backends[0].phases[1] is not an object");
  EXPECT_EQ(message(R"([{"backend": "flashinfer", "phases": [{"phase": "construct", "pinned_bytes": 0}]}])"),
            "backends[0].phases[0].device_bytes is not an integer");
  EXPECT_EQ(
      message(R"([{"backend": "flashinfer", "phases": [{"phase": "p", "device_bytes": 1, "pinned_bytes": 0, )"
              R"("tags": [{"tag": "t", "kind": "device", "bytes": 1}, []]}]}])"),
      "backends[0].phases[0].tags[1] is not an object");
  EXPECT_EQ(
      message(R"([{"backend": "flashinfer", "phases": [{"phase": "p", "device_bytes": 1, "pinned_bytes": 0, )"
              R"("tags": [{"tag": "t", "kind": "device", "bytes": 1, "shared": 1}]}]}])"),
      "backends[0].phases[0].tags[0].shared is not true / false");
  // Integers that wrapped: 2^64-1 bytes read as -1, a count beyond int range as another count.
  EXPECT_EQ(
      message(R"([{"backend": "flashinfer", "phases": [{"phase": "p", "device_bytes": 18446744073709551615, )"
              R"("pinned_bytes": 0}]}])"),
      "backends[0].phases[0].device_bytes 18446744073709551615 is beyond 9223372036854775807");
  EXPECT_EQ(
      message(R"([{"backend": "flashinfer", "phases": [{"phase": "p", "device_bytes": 1, "pinned_bytes": 0, )"
              R"("tags": [{"tag": "t", "kind": "device", "bytes": 1, "count": 4294967297}]}]}])"),
      "backends[0].phases[0].tags[0].count 4294967297 is beyond int range");
  // A backend twice, a phase twice in one backend: refused, naming both places.
  EXPECT_EQ(message(R"([{"backend": "flashinfer", "phases": []}, {"backend": "trtllm_mha", "phases": []}, )"
                    R"({"backend": "flashinfer", "phases": []}])"),
            "backends[2].backend 'flashinfer' again (first at backends[0])");
  EXPECT_EQ(message(R"([{"backend": "flashinfer", "phases": [)" + ok_phase + ", " + ok_phase + "]}]"),
            "backends[0].phases[1].phase 'construct' again (first at backends[0].phases[0])");
  test::write_file(d.file("two.json"),
                   R"({"schema": "attnbench.memory", "schema_version": 1, "kv_bytes_per_token": 1024, )"
                   R"("backends": [{"backend": "flashinfer", "phases": [)" +
                       ok_phase + R"(]}, {"backend": "trtllm_mha", "phases": [)" + ok_phase + "]}]}");
  EXPECT_EQ(load_memory_report_json(d.file("two.json"), test::standard_catalog()).backends.size(),
            2u);  // one phase in two backends: fine
  // A key given twice in one object (nlohmann keeps the last silently): refused, naming it.
  EXPECT_EQ(
      message(R"([{"backend": "flashinfer", "phases": [{"phase": "p", "device_bytes": 1, "device_bytes": 2, )"
              R"("pinned_bytes": 0}]}])"),
      "key \"device_bytes\" given twice in one object (which one is meant?)");
}

// The memory report reader refuses FIFOs, devices, oversized files, NUL bytes and deep JSON before parsing.
TEST(MemoryReportJson, HostileFilesAreRefusedBeforeReading) {
  test::TempDir d;
  const auto message = [](const std::string& path) {
    return test::error_of([&] { load_memory_report_json(path, test::standard_catalog()); });
  };
  const std::string fifo = d.file("m.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_EQ(message(fifo), "memory report " + fifo + ": not a regular file (a FIFO)");
  EXPECT_EQ(message("/dev/zero"), "memory report /dev/zero: not a regular file (a character device)");
  EXPECT_EQ(message(d.path()), "memory report " + d.path() + ": not a regular file (a directory)");
  const std::string big = d.file("big.json");
  std::ofstream(big) << "{";
  std::filesystem::resize_file(big, (64u << 20) + 1);
  EXPECT_EQ(message(big), "memory report " + big + ": larger than 67108864 bytes (67108865 bytes)");
  const std::string nul = d.file("nul.json");
  std::ofstream(nul, std::ios::binary) << std::string("{\n\"schema\": \"\0\"}", 16);
  EXPECT_EQ(message(nul), "memory report " + nul + " line 2: contains a NUL byte");
  const std::string deep = d.file("deep.json");
  test::write_file(deep, "{\"schema\": \"attnbench.memory\", \"context\": " + std::string(100000, '{') + "}");
  EXPECT_EQ(message(deep), "memory report " + deep + ": JSON nested deeper than 64 levels (at byte 105)");
}

TEST(MarkdownGolden, FromRowsAndFromMemoryReport) {
  test::expect_golden("report-rows.md", report(small_set(), nullptr, "attnbench run --config c.toml"));
  ResultSet s = small_set();
  s.rows[1].ref_pass = false;
  s.rows[2].status = RowStatus::failed;
  s.rows[2].note = "CUDA error: illegal | address";
  s.rows[2].ref_pass.reset();
  s.rows[5].note = "replay vs eager max abs 0.001";
  s.environment = {{"gpu_name", "NVIDIA H200"}, {"driver_version", "13.0"}, {"git_commit", "abc"}};
  s.command = "attnbench run --from-json";
  MemoryReport m;
  m.model = "llama-3.1-8b";
  m.kv_bytes_per_token = 131072;
  m.context = {{"model", "llama-3.1-8b"}, {"device", "cuda"}};
  BackendMemory lean{"trtllm_mha", "lean", {{"construct", 537919492, 0, 0, 537919492, {}}}, ""};
  BackendMemory legacy{"trtllm_mha_legacy", "legacy", {{"construct", 974438412, 33554432, 0, std::nullopt, {}},
                                                       {"capture", 34232, 0, 0, std::nullopt, {}}}, ""};
  BackendMemory failed{"flashinfer", "fi", {}, "out of memory"};
  m.backends = {lean, legacy, failed};
  test::expect_golden("report-memory.md", report(s, &m, ""));
  // Only two backends, no flashinfer: no second ratio column.
  ResultSet two;
  for (const ResultRow& r : small_set().rows)
    if (r.backend != "flashinfer") two.rows.push_back(r);
  test::expect_golden("report-two.md", report(two, nullptr, ""));
}

}  // namespace
}  // namespace attnbench
