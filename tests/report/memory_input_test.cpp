// load_memory_report_json against hostile figures (`attnbench report --memory`): byte counts beyond 2^50 (sums
// of 2^62 overflowed the saving: "saves -4294967296.51 GiB"), negative ones, kv_bytes_per_token 0 or negative,
// phase names and tag kinds attnbench never writes, tags adding up to more than their phase; and the files
// attnbench itself writes, which still load.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "core/errors.hpp"
#include "report/markdown.hpp"
#include "report/memory_report.hpp"
#include "support/backend_catalog.hpp"
#include "support/errors.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

using test::TempDir;

// A memory report around `backends` (a JSON array) with `kv` as kv_bytes_per_token.
std::string doc(const std::string& backends, const std::string& kv = "1024") {
  return R"({"schema": "attnbench.memory", "schema_version": 1, "model": "tiny", "kv_bytes_per_token": )" + kv +
         R"(, "backends": )" + backends + "}";
}

// The loader's message for `text`, without the "memory report PATH: " prefix ("" and a failure when accepted).
std::string message(const TempDir& d, const std::string& text) {
  const std::string path = d.file("m.json");
  test::write_file(path, text);
  const std::string what = test::error_of([&] { load_memory_report_json(path, test::standard_catalog()); });
  const std::string prefix = "memory report " + path + ": ";
  EXPECT_EQ(what.rfind(prefix, 0), 0u) << what;
  return what.substr(std::min(what.size(), prefix.size()));
}

// One backend (trtllm_mha) with one phase: `fields` after the phase name.
std::string one_phase(const std::string& fields, const std::string& name = "construct") {
  return R"([{"backend": "trtllm_mha", "phases": [{"phase": ")" + name + R"(", )" + fields + "}]}]";
}

TEST(MemoryInput, ByteCountsBeyondTwoToThe50AreRefusedSoNoSumOverflows) {
  TempDir d;
  // The review's file: 2^62 in each of a backend's three phases; the saving summed them past 2^63.
  const std::string big = "4611686018427387904";
  std::string three = R"([{"backend": "trtllm_mha_legacy", "phases": [)";
  for (const char* p : {"construct", "graph_state", "capture"})
    three += std::string(p == std::string("construct") ? "" : ", ") + R"({"phase": ")" + p +
             R"(", "device_bytes": )" + big + R"(, "pinned_bytes": 0})";
  three += R"(]}, {"backend": "trtllm_mha", "phases": []}])";
  EXPECT_EQ(message(d, doc(three)), "backends[0].phases[0].device_bytes " + big +
                                        " is beyond 2^50 (1 PiB, the bound on one memory figure)");
  // The bound itself is a figure attnbench could write; one more is not.
  const std::string at = std::to_string(std::int64_t{1} << 50), over = std::to_string((std::int64_t{1} << 50) + 1);
  test::write_file(d.file("at.json"), doc(one_phase(R"("device_bytes": )" + at + R"(, "pinned_bytes": )" + at +
                                                    R"(, "host_bytes": )" + at)));
  EXPECT_EQ(
      load_memory_report_json(d.file("at.json"), test::standard_catalog()).backends[0].phases[0].device_bytes,
      std::int64_t{1} << 50);
  EXPECT_EQ(message(d, doc(one_phase(R"("device_bytes": 0, "pinned_bytes": )" + over))),
            "backends[0].phases[0].pinned_bytes " + over + " is beyond 2^50 (1 PiB, the bound on one memory figure)");
  EXPECT_EQ(message(d, doc(one_phase(R"("device_bytes": 0, "pinned_bytes": 0, "host_bytes": )" + over))),
            "backends[0].phases[0].host_bytes " + over + " is beyond 2^50 (1 PiB, the bound on one memory figure)");
  EXPECT_EQ(message(d, doc(one_phase(R"("device_bytes": 0, "pinned_bytes": 0, "tags": [{"tag": "t", )"
                                     R"("kind": "device", "bytes": )" + over + "}]"))),
            "backends[0].phases[0].tags[0].bytes " + over + " is beyond 2^50 (1 PiB, the bound on one memory figure)");
  EXPECT_EQ(message(d, doc(one_phase(R"("device_bytes": 0, "pinned_bytes": 0, "driver_delta_bytes": -)" + over))),
            "backends[0].phases[0].driver_delta_bytes -" + over +
                " is beyond -2^50 (1 PiB, the bound on one memory figure)");
  EXPECT_EQ(message(d, doc("[]", over)),
            "kv_bytes_per_token " + over + " is beyond 2^50 (1 PiB, the bound on one memory figure)");
}

TEST(MemoryInput, NegativeByteCountsAndKvBytesPerTokenBelowOneAreRefused) {
  TempDir d;
  EXPECT_EQ(message(d, doc(one_phase(R"("device_bytes": -5, "pinned_bytes": 0)"))),
            "backends[0].phases[0].device_bytes -5 is negative (a byte count is >= 0)");
  EXPECT_EQ(message(d, doc(one_phase(R"("device_bytes": 0, "pinned_bytes": -1)"))),
            "backends[0].phases[0].pinned_bytes -1 is negative (a byte count is >= 0)");
  EXPECT_EQ(message(d, doc(one_phase(R"("device_bytes": 0, "pinned_bytes": 0, "host_bytes": -1)"))),
            "backends[0].phases[0].host_bytes -1 is negative (a byte count is >= 0)");
  EXPECT_EQ(message(d, doc(one_phase(R"("device_bytes": 0, "pinned_bytes": 0, "tags": [{"tag": "t", )"
                                     R"("kind": "device", "bytes": -3}])"))),
            "backends[0].phases[0].tags[0].bytes -3 is negative (a byte count is >= 0)");
  EXPECT_EQ(message(d, doc(one_phase(R"("device_bytes": 0, "pinned_bytes": 0, "tags": [{"tag": "t", )"
                                     R"("kind": "device", "bytes": 0, "count": -1}])"))),
            "backends[0].phases[0].tags[0].count -1 is negative (allocations)");
  EXPECT_EQ(message(d, doc("[]", "0")), "kv_bytes_per_token 0 is not > 0");
  EXPECT_EQ(message(d, doc("[]", "-1")), "kv_bytes_per_token -1 is negative (a byte count is >= 0)");
  // A driver delta is a difference of two readings (free memory can rise during a phase): negative is fine.
  test::write_file(d.file("delta.json"),
                   doc(one_phase(R"("device_bytes": 0, "pinned_bytes": 0, "driver_delta_bytes": -2097152)")));
  EXPECT_EQ(load_memory_report_json(d.file("delta.json"), test::standard_catalog())
                .backends[0]
                .phases[0]
                .driver_delta_bytes,
            -2097152);
}

TEST(MemoryInput, OnlyThePhasesAndKindsAttnbenchWrites) {
  TempDir d;
  EXPECT_EQ(message(d, doc(one_phase(R"("device_bytes": 1, "pinned_bytes": 0)", "warmup"))),
            "backends[0].phases[0].phase 'warmup' is not one attnbench writes (construct, graph_state, capture)");
  EXPECT_EQ(message(d, doc(one_phase(R"("device_bytes": 1, "pinned_bytes": 0)", "Construct"))),
            "backends[0].phases[0].phase 'Construct' is not one attnbench writes (construct, graph_state, capture)");
  EXPECT_EQ(message(d, doc(one_phase(R"("device_bytes": 1, "pinned_bytes": 0, "tags": [{"tag": "t", )"
                                     R"("kind": "managed", "bytes": 1}])"))),
            "backends[0].phases[0].tags[0].kind 'managed' is not device, pinned or host");
  // A backend named twice stays refused (which one would the saving take?).
  const std::string ok =
      R"({"backend": "trtllm_mha", "phases": [{"phase": "construct", "device_bytes": 1, "pinned_bytes": 0}]})";
  EXPECT_EQ(message(d, doc("[" + ok + ", " + ok + "]")),
            "backends[1].backend 'trtllm_mha' again (first at backends[0])");
  // Each of the three phases once, in one backend: fine.
  test::write_file(
      d.file("three.json"),
      doc(R"([{"backend": "trtllm_mha", "phases": [{"phase": "construct", "device_bytes": 1, "pinned_bytes": 0}, )"
          R"({"phase": "graph_state", "device_bytes": 2, "pinned_bytes": 0}, )"
          R"({"phase": "capture", "device_bytes": 3, "pinned_bytes": 0}]}])"));
  EXPECT_EQ(load_memory_report_json(d.file("three.json"), test::standard_catalog()).backends[0].phases.size(),
            3u);
}

TEST(MemoryInput, TagsOfEachKindAddUpToAtMostTheirPhase) {
  TempDir d;
  const std::string tags = R"("tags": [{"tag": "a", "kind": "device", "bytes": 100}, )"
                           R"({"tag": "b", "kind": "device", "bytes": 20}, {"tag": "c", "kind": "pinned", "bytes": 7}, )"
                           R"({"tag": "d", "kind": "host", "bytes": 3}])";
  // As attnbench writes them: every kind's tags add up to the phase's bytes.
  test::write_file(d.file("sum.json"),
                   doc(one_phase(R"("device_bytes": 120, "pinned_bytes": 7, "host_bytes": 3, )" + tags)));
  EXPECT_EQ(
      load_memory_report_json(d.file("sum.json"), test::standard_catalog()).backends[0].phases[0].tags.size(),
      4u);
  // Tags beyond the phase's bytes of their kind do not describe it.
  EXPECT_EQ(message(d, doc(one_phase(R"("device_bytes": 119, "pinned_bytes": 7, "host_bytes": 3, )" + tags))),
            "backends[0].phases[0].tags of kind device add up to 120 B, more than device_bytes 119");
  EXPECT_EQ(message(d, doc(one_phase(R"("device_bytes": 120, "pinned_bytes": 0, "host_bytes": 3, )" + tags))),
            "backends[0].phases[0].tags of kind pinned add up to 7 B, more than pinned_bytes 0");
  EXPECT_EQ(message(d, doc(one_phase(R"("device_bytes": 120, "pinned_bytes": 7, "host_bytes": 2, )" + tags))),
            "backends[0].phases[0].tags of kind host add up to 3 B, more than host_bytes 2");
  // A shorter list (an abridged report) still loads; without host_bytes the host tags are not checked.
  test::write_file(d.file("part.json"),
                   doc(one_phase(R"("device_bytes": 121, "pinned_bytes": 7, )" + tags)));
  EXPECT_EQ(load_memory_report_json(d.file("part.json"), test::standard_catalog())
                .backends[0]
                .phases[0]
                .device_bytes,
            121);
  // Many tags at the bound: the sum saturates instead of overflowing int64 (8,192 x 2^50 = 2^63).
  std::string many = R"("device_bytes": 1125899906842624, "pinned_bytes": 0, "tags": [)";
  for (int i = 0; i < 8192; ++i)
    many += std::string(i ? ", " : "") + R"({"tag": "t)" + std::to_string(i) +
            R"(", "kind": "device", "bytes": 1125899906842624})";
  EXPECT_EQ(message(d, doc(one_phase(many + "]"))),
            "backends[0].phases[0].tags of kind device add up to over 2^50 B, more than device_bytes "
            "1125899906842624");
}

// A backend attnbench does not have (a typo, another tool's report, a library twin) is refused, naming the
// file and the backend: its figures would print as evidence about a class nothing here models. The known
// names are the catalog's (the registry's, handed in from above), not a list in report/.
TEST(MemoryInput, ABackendAttnbenchDoesNotHaveIsRefused) {
  TempDir d;
  const std::string phase = R"("phases": [{"phase": "construct", "device_bytes": 1, "pinned_bytes": 0}])";
  EXPECT_EQ(
      message(d, doc(R"([{"backend": "fa3", )" + phase + "}]")),
      "backends[0].backend 'fa3' is not an attnbench backend (flashinfer, trtllm_mha or trtllm_mha_legacy)");
  EXPECT_EQ(message(d, doc(R"([{"backend": "trtllm_mha", )" + phase + R"(}, {"backend": "flashinfer_lib", )" +
                           phase + "}]")),
            "backends[1].backend 'flashinfer_lib' is not an attnbench backend (flashinfer, trtllm_mha or "
            "trtllm_mha_legacy)");
  EXPECT_EQ(message(d, doc(R"([{"backend": "trtllm_mha\u001b[2J", )" + phase + "}]")),
            "backends[0].backend 'trtllm_mha\\x1b[2J' is not an attnbench backend (flashinfer, trtllm_mha or "
            "trtllm_mha_legacy)");
  // Another catalog, other names: the list is the one handed in.
  BackendCatalog only_fa3;
  only_fa3.backends = {{"fa3", "FlashAttentionBackend", "", "", ""}};
  test::write_file(d.file("fa3.json"), doc(R"([{"backend": "fa3", )" + phase + "}]"));
  EXPECT_EQ(load_memory_report_json(d.file("fa3.json"), only_fa3).backends[0].backend, "fa3");
  test::write_file(d.file("fi.json"), doc(R"([{"backend": "flashinfer", )" + phase + "}]"));
  EXPECT_EQ(test::error_of([&] { load_memory_report_json(d.file("fi.json"), only_fa3); }),
            "memory report " + d.file("fi.json") +
                ": backends[0].backend 'flashinfer' is not an attnbench backend (fa3)");
}

// What attnbench writes still loads: write_memory_json of a report whose tags add up, and `attnbench memory`
// itself (the probe's ledger on the CPU, every backend, all three phases), and its saving is what the file says.
TEST(MemoryInput, WhatAttnbenchWritesLoads) {
  TempDir d;
  MemoryReport m;
  m.model = "tiny";
  m.kv_bytes_per_token = 1024;
  BackendMemory b;
  b.backend = "trtllm_mha";
  b.phases = {{"construct", 1500, 64, 8, std::nullopt,
               {{"w", "device", 1000, true, 1}, {"x", "device", 500, false, 2}, {"p", "pinned", 64, false, 1},
                {"h", "host", 8, false, 1}}},
              {"capture", 0, 0, 0, -2097152, {}}};
  m.backends = {b};
  {
    std::ofstream out(d.file("w.json"));
    write_memory_json(out, m, test::standard_catalog());
  }
  const MemoryReport back = load_memory_report_json(d.file("w.json"), test::standard_catalog());
  ASSERT_EQ(back.backends.size(), 1u);
  EXPECT_EQ(back.backends[0].phase("construct")->device_bytes, 1500);
  EXPECT_EQ(back.backends[0].phase("capture")->driver_delta_bytes, -2097152);

  const test::RunResult r = test::run_attnbench("memory --model tiny --device cpu --format json --out " + d.file("m.json"), d);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const MemoryReport probe = load_memory_report_json(d.file("m.json"), test::standard_catalog());
  ASSERT_EQ(probe.backends.size(), 3u);
  for (const BackendMemory& pb : probe.backends) {
    EXPECT_EQ(pb.phases.size(), 3u) << pb.backend;
    for (const MemoryPhase& p : pb.phases) {
      EXPECT_FALSE(p.tags.empty()) << pb.backend << " " << p.phase;
      // The probe lists every group, so its tags add up exactly (the loader asks at most that).
      std::int64_t device = 0, pinned = 0, host = 0;
      for (const MemoryTag& t : p.tags) (t.kind == "device" ? device : t.kind == "pinned" ? pinned : host) += t.bytes;
      EXPECT_EQ(device, p.device_bytes) << pb.backend << " " << p.phase;
      EXPECT_EQ(pinned, p.pinned_bytes) << pb.backend << " " << p.phase;
      EXPECT_EQ(host, p.host_bytes) << pb.backend << " " << p.phase;
    }
  }
  const auto saving = memory_saving(probe, "trtllm_mha_legacy", "trtllm_mha");
  ASSERT_TRUE(saving);
  EXPECT_GT(saving->device_bytes, 0);
  EXPECT_EQ(saving->kv_tokens, saving->device_bytes / probe.kv_bytes_per_token);
  const test::RunResult rep = test::run_attnbench(
      "report " + std::string(ATTNBENCH_SOURCE_DIR) + "/results/baseline/smoke.json --memory " + d.file("m.json"), d);
  EXPECT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_TRUE(test::has(rep.out, "from `attnbench memory`")) << rep.out;
}

// Through the binary: the review's overflowing file is one line on stderr, exit 2, naming the file and field.
TEST(MemoryInput, TheBinaryRefusesTheOverflowingFile) {
  TempDir d;
  std::string three = R"([{"backend": "trtllm_mha_legacy", "phases": [)";
  for (const char* p : {"construct", "graph_state", "capture"})
    three += std::string(p == std::string("construct") ? "" : ", ") + R"({"phase": ")" + p +
             R"(", "device_bytes": 4611686018427387904, "pinned_bytes": 0})";
  three += R"(]}, {"backend": "trtllm_mha", "phases": []}])";
  test::write_file(d.file("mem.json"), doc(three));
  const test::RunResult r = test::run_attnbench(
      "report " + std::string(ATTNBENCH_SOURCE_DIR) + "/results/baseline/smoke.json --memory " + d.file("mem.json"), d);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(test::lines(r.err).size(), 1u) << r.err;
  EXPECT_TRUE(test::has(r.err, d.file("mem.json") + ": backends[0].phases[0].device_bytes")) << r.err;
  EXPECT_FALSE(test::has(r.out, "saves")) << r.out;
}

}  // namespace
}  // namespace attnbench
