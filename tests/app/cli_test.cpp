// The CLI: argv -> option structs, config files, and bad input (exit 2 with one line naming the culprit).
#include "app/cli.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "core/errors.hpp"
#include "support/errors.hpp"
#include "support/test_util.hpp"

namespace attnbench {
namespace {

using test::run_attnbench;
using test::TempDir;

TEST(Cli, MemoryOptionsFromArgv) {
  const ParsedCli c = parse_cli({"memory", "--model", "qwen2.5-7b", "--page-size", "16", "--backend",
                                 "trtllm_mha,trtllm_mha_legacy", "--cuda-graph-bs", "1,2,4", "--format", "csv"});
  EXPECT_EQ(c.command, Command::memory);
  EXPECT_EQ(c.memory.m.model, "qwen2.5-7b");
  EXPECT_EQ(c.memory.m.server.page_size, 16);
  EXPECT_EQ(c.memory.backends, (std::vector<std::string>{"trtllm_mha", "trtllm_mha_legacy"}));
  EXPECT_EQ(c.memory.m.server.cuda_graph_bs, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(c.memory.format, "csv");
}

TEST(Cli, DefaultsAreSglangsH200Defaults) {
  const ParsedCli c = parse_cli({"memory"});
  EXPECT_EQ(c.memory.m.model, "llama-3.1-8b");
  EXPECT_EQ(c.memory.m.server.max_running_requests, 4096);
  EXPECT_EQ(c.memory.m.server.cuda_graph_max_bs, 256);
  EXPECT_EQ(c.memory.m.server.page_size, 64);
  EXPECT_EQ(resolve_backends(c.memory.backends), (std::vector<std::string>{"flashinfer", "trtllm_mha", "trtllm_mha_legacy"}));
}

TEST(Cli, ConfigFileTopLevelKeysAndCommandLineOverrides) {
  TempDir d;
  test::write_file(d.file("c.toml"), "model = \"gemma-3-12b\"\npage-size = 32\nbackend = [\"flashinfer\"]\n");
  const ParsedCli c = parse_cli({"memory", "--config", d.file("c.toml"), "--page-size", "128"});
  EXPECT_EQ(c.memory.m.model, "gemma-3-12b");
  EXPECT_EQ(c.memory.m.server.page_size, 128);
  EXPECT_EQ(c.memory.backends, (std::vector<std::string>{"flashinfer"}));
}

// SGLang's flag names are the primary ones; attnbench's earlier names stay as aliases; config keys may use
// SGLang's underscores.
TEST(Cli, SglangFlagNamesAndTheOldAliases) {
  const ParsedCli a = parse_cli({"memory", "--context-length", "8192", "--decode-attention-backend", "trtllm_mha",
                                 "--prefill-attention-backend", "flashinfer"});
  EXPECT_EQ(a.memory.m.server.context_len, 8192);
  EXPECT_EQ(a.memory.backends, std::vector<std::string>{"trtllm_mha"});
  EXPECT_EQ(a.memory.prefill_backend, "flashinfer");
  const ParsedCli b = parse_cli({"memory", "--context-len", "8192", "--backend", "trtllm_mha", "--prefill-backend",
                                 "flashinfer"});
  EXPECT_EQ(b.memory.m.server.context_len, 8192);
  EXPECT_EQ(b.memory.backends, std::vector<std::string>{"trtllm_mha"});
  EXPECT_EQ(b.memory.prefill_backend, "flashinfer");
  EXPECT_EQ(parse_cli({"memory", "--attention-backend", "flashinfer,trtllm_mha"}).memory.backends,
            (std::vector<std::string>{"flashinfer", "trtllm_mha"}));
  for (const char* sub : {"run", "validate"}) {
    const ParsedCli r = parse_cli({sub, "--attention-backend", "trtllm_mha", "--speculative-num-draft-tokens", "6",
                                   "--context-length", "4096"});
    EXPECT_EQ(r.run.plan.backends, std::vector<std::string>{"trtllm_mha"}) << sub;
    EXPECT_EQ(r.run.plan.draft_tokens, 6) << sub;
    EXPECT_EQ(r.run.plan.model.server.context_len, 4096) << sub;
    EXPECT_EQ(parse_cli({sub, "--draft-tokens", "3"}).run.plan.draft_tokens, 3) << sub;
  }
  TempDir d;
  test::write_file(d.file("c.toml"), "context_length = 2048\nmax_running_requests = 64\nattention_backend = \"trtllm_mha\"\n"
                                     "[memory]\nprefill_attention_backend = \"flashinfer\"\n");
  const ParsedCli c = parse_cli({"memory", "--config", d.file("c.toml")});
  EXPECT_EQ(c.memory.m.server.context_len, 2048);
  EXPECT_EQ(c.memory.m.server.max_running_requests, 64);
  EXPECT_EQ(c.memory.backends, std::vector<std::string>{"trtllm_mha"});
  EXPECT_EQ(c.memory.prefill_backend, "flashinfer");
  // One option written twice, in the two spellings or as alias and name, is an error, not a silent override.
  test::write_file(d.file("dup.toml"), "context_length = 2048\ncontext-length = 4096\n");
  try {
    parse_cli({"memory", "--config", d.file("dup.toml")});
    ADD_FAILURE() << "a key in both spellings was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("line 2: duplicate key 'context-length' (also written as 'context_length')"),
              std::string::npos)
        << e.what();
  }
  // Two names of one option (an alias and its primary name), in either order, at the top level or in a section.
  const std::vector<std::pair<std::string, std::string>> aliased = {
      {"context-len = 4096\ncontext-length = 2048\n", "line 2: duplicate key 'context-length' (also written as 'context-len': both are --context-length)"},
      {"context-length = 2048\ncontext_len = 4096\n", "line 2: duplicate key 'context_len' (also written as 'context-length': both are --context-length)"},
      {"draft_tokens = 3\n[run]\nspeculative_num_draft_tokens = 5\n", "line 3: duplicate key 'speculative_num_draft_tokens'"},
      {"backend = \"flashinfer\"\n[run]\nattention-backend = \"trtllm_mha\"\n", "line 3: duplicate key 'attention-backend'"},
  };
  for (const auto& [text, want] : aliased) {
    test::write_file(d.file("alias.toml"), text);
    for (const char* sub : {"run", "validate", "memory"}) {
      if (text.find("draft") != std::string::npos && std::string(sub) == "memory") continue;  // [run] only
      if (text.find("[run]") != std::string::npos && std::string(sub) != "run") continue;
      try {
        parse_cli({sub, "--config", d.file("alias.toml")});
        ADD_FAILURE() << sub << ": one option under two names was accepted: " << text;
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << sub << ": " << e.what();
      }
    }
  }
}

TEST(Cli, HelpAndVersionExitZero) {
  const ParsedCli h = parse_cli({"memory", "--help"});
  EXPECT_TRUE(h.exit_now);
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.output.find("--page-size"), std::string::npos);
  const ParsedCli v = parse_cli({"--version"});
  EXPECT_TRUE(v.exit_now);
  EXPECT_EQ(v.exit_code, 0);
}

void expect_bad(const std::vector<std::string>& args, const std::string& culprit) {
  test::expect_input_error([&] { parse_cli(args); }, culprit);
}

TEST(Cli, ParseErrorsNameTheCulprit) {
  expect_bad({}, "subcommand");
  expect_bad({"memory", "--page-size", "abc"}, "--page-size");
  expect_bad({"memory", "--format", "xml"}, "--format");
  expect_bad({"memory", "--bogus"}, "--bogus");
  expect_bad({"memory", "--config", "/nonexistent/x.toml"}, "--config");
  TempDir d;
  test::write_file(d.file("bad.toml"), "bogus-key = 3\n");
  expect_bad({"memory", "--config", d.file("bad.toml")}, "bogus-key");
}

TEST(Cli, HardenedParsing) {
  // A flag takes no value on the command line.
  expect_bad({"run", "--sinks=1"}, "--sinks: a flag takes no value (got '--sinks=1'; give --sinks alone to set it)");
  expect_bad({"memory", "--disable-cuda-graph=false"}, "--disable-cuda-graph: a flag takes no value");
  EXPECT_TRUE(parse_cli({"run", "--sinks"}).run.plan.sinks);
  // 64-bit integers: refused beyond their range, not clamped.
  expect_bad({"run", "--seed", "18446744073709551616"}, "'18446744073709551616' is beyond 2^64 - 1");
  expect_bad({"run", "--seed", "1,000000000000000000000000000001"}, "--seed");
  EXPECT_EQ(parse_cli({"run", "--seed", "18446744073709551615"}).run.plan.seeds,
            (std::vector<std::uint64_t>{18446744073709551615ull}));
  expect_bad({"memory", "--flashinfer-workspace-size", "9223372036854775808"}, "beyond 2^63 - 1");
  // 32-bit options: CLI11's "Could not convert: --batch = 2147483648" said neither the range nor the limit.
  expect_bad({"run", "--batch", "2147483648"}, "--batch: '2147483648' is beyond 2^31 - 1 (2147483647)");
  expect_bad({"run", "--batch", "4,9223372036854775807"}, "--batch: '9223372036854775807' is beyond 2^31 - 1");
  expect_bad({"run", "--kv-len", "-2147483649"}, "--kv-len: '-2147483649' is below -2^31 (-2147483648)");
  expect_bad({"memory", "--page-size", "4294967312"}, "--page-size: '4294967312' is beyond 2^31 - 1");
  expect_bad({"compare", "a.csv", "b.csv", "--alpha", "abc"}, "--alpha: 'abc' is not a number");
  expect_bad({"compare", "a.csv", "b.csv", "--max-memory-growth", "9223372036854775808"},
             "--max-memory-growth: '9223372036854775808' is beyond 2^63 - 1");
  EXPECT_EQ(parse_cli({"run", "--batch", "2147483647"}).run.plan.batches, (std::vector<int>{2147483647}));
  // Comma lists with an empty item: "," named the next argument, "4,,5" dropped the empty item silently.
  expect_bad({"run", "--batch", ",", "--device", "cpu"}, "--batch: ',' has an empty item");
  expect_bad({"run", "--batch=4,,5"}, "--batch: '4,,5' has an empty item");
  expect_bad({"run", "--kv-len", "8,"}, "--kv-len: '8,' has an empty item");
  EXPECT_EQ(parse_cli({"run", "--batch", "4,5"}).run.plan.batches, (std::vector<int>{4, 5}));
  // --config=FILE is checked like --config FILE (a FIFO would block CLI11's reader forever).
  TempDir d;
  const std::string fifo = d.file("c.toml");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  expect_bad({"run", "--config=" + fifo}, "--config " + fifo + ": not a regular file (a FIFO)");
  expect_bad({"run", "--config", fifo}, "not a regular file (a FIFO)");
  // The TOML reader is toml++: multi-line arrays are TOML; the --config path reaches memory's options too.
  test::write_file(d.file("m.toml"), "batch = [\n  1,\n  2,\n]\n");
  const ParsedCli c = parse_cli({"run", "--config=" + d.file("m.toml")});
  EXPECT_EQ(c.run.plan.batches, (std::vector<int>{1, 2}));
  EXPECT_EQ(c.run.config_file, d.file("m.toml"));
  test::write_file(d.file("mm.toml"), "page-size = 32\n");
  EXPECT_EQ(parse_cli({"memory", "--config", d.file("mm.toml")}).memory.config_file, d.file("mm.toml"));
  // Unknown names are echoed with control characters escaped.
  expect_bad({"frob\x1bnicate"}, "unknown subcommand 'frob\\x1bnicate'");
}

// End to end through the binary: exit code 2, one line on stderr naming the culprit, nothing on stdout.
struct BadCase {
  std::string args;
  std::string culprit;
};

TEST(CliBinary, BadInputExitsTwoWithOneClearLine) {
  TempDir d;
  test::write_file(d.file("bad.toml"), "model = \"llama-3.1-8b\"\nnot-an-option = 1\n");
  const std::vector<BadCase> cases = {
      {"memory --model gpt-9", "--model"},
      {"memory --backend fastattn", "--backend"},
      {"memory --backend trtllm_mha --page-size 1", "--page-size"},
      {"memory --page-size 48", "--page-size"},
      {"memory --tp-size 3", "--tp-size"},
      {"memory --max-running-requests -1", "--max-running-requests"},
      {"memory --context-len -5", "--context-len"},
      {"memory --flashinfer-workspace-size -1", "--flashinfer-workspace-size"},
      {"memory --config /nonexistent.toml", "--config"},
      {"memory --config " + d.file("bad.toml"), "not-an-option"},
      {"memory --device quantum", "--device"},
      {"memory --out /nonexistent-dir/x.csv --backend trtllm_mha", "--out"},
      {"frobnicate", "frobnicate"},
  };
  for (const auto& c : cases) {
    const auto r = run_attnbench(c.args, d);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.culprit), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << c.args;
  }
  std::printf("bad CLI inputs checked: %zu\n", cases.size());
}

TEST(CliBinary, MemoryCsvShowsTheSavingWithAPerTagBreakdown) {
  TempDir d;
  const auto r = run_attnbench("memory --model llama-3.1-8b --format csv --cuda-graph-bs 1,2", d);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("backend,phase,tag,kind,bytes,shared,count\n", 0), 0u);
  EXPECT_NE(r.out.find("trtllm_mha_legacy,construct,flashinfer.workspace_buffer,device,402653184,1,1"), std::string::npos);
  // SGLang 0.5.23 (the default) on the modelled H200: XQA's 8 MiB of semaphores + 512 MiB.
  EXPECT_NE(r.out.find("trtllm_mha,construct,trtllm_mha.workspace_buffer,device,545259520,1,1"), std::string::npos);
  EXPECT_NE(r.out.find("trtllm_mha_legacy,construct,flashinfer.decode_wrappers[0].pin_memory_int_workspace,pinned,8388608,0,1"),
            std::string::npos);
  const auto t = run_attnbench("memory --model llama-3.1-8b --cuda-graph-bs 1,2", d);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("416.30 MiB device (436,518,920 B), 32.00 MiB pinned"), std::string::npos) << t.out;
}

}  // namespace
}  // namespace attnbench
