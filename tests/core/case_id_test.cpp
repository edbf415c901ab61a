// core/case_id: the one case-id format, both ways. format_case_id writes each segment in its place;
// parse_case_id reads back exactly what it writes and nothing else (tests/runner/case_test.cpp checks it on
// the ids the expansion builds).
#include "core/case_id.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace attnbench {
namespace {

CaseIdParts decode_parts() {
  CaseIdParts p;
  p.mode = "decode";
  p.model = "llama-3.1-8b";
  p.batch = 64;
  p.kv_len = 4096;
  p.page_size = 16;
  p.dtype = "bf16";
  return p;
}

TEST(CaseId, FormatWritesEachSegmentInItsPlace) {
  CaseIdParts p = decode_parts();
  EXPECT_EQ(format_case_id(p), "decode/llama-3.1-8b/b=64/kv=4096/p=16/bf16");
  p.layers = 6;
  p.tp_size = 8;
  p.length_dist = "uniform";
  p.length_min = 50;
  p.kv_cache_dtype = "fp8_e4m3";
  p.seed = 2;
  p.sinks = true;
  EXPECT_EQ(
      format_case_id(p),
      "decode/llama-3.1-8b/L=6/tp=8/b=64/kv=4096/uniform[50,L]/p=16/bf16/kvcache=fp8_e4m3/seed=2/sinks");
  p.mode = "verify";
  p.draft_tokens = 4;
  EXPECT_EQ(format_case_id(p),
            "verify/llama-3.1-8b/L=6/tp=8/b=64/kv=4096/uniform[50,L]/draft=4/p=16/bf16/"
            "kvcache=fp8_e4m3/seed=2/sinks");
  p.mode = "extend";
  p.prefix_len = 0;
  p.extend_len = 512;
  EXPECT_EQ(format_case_id(p),
            "extend/llama-3.1-8b/L=6/tp=8/b=64/prefix=0/ext=512/uniform[50,L]/p=16/bf16/"
            "kvcache=fp8_e4m3/seed=2/sinks");
  p.trace = "t,1.csv";  // a trace's lengths are its own: no length segment, no draft
  EXPECT_EQ(format_case_id(p),
            "extend/llama-3.1-8b/L=6/tp=8/trace=t,1.csv/b=64/p=16/bf16/kvcache=fp8_e4m3/seed=2/sinks");
}

TEST(CaseId, ParseReadsBackWhatFormatWrites) {
  const std::vector<std::string> ids = {
      "decode/llama-3.1-8b/b=64/kv=4096/p=16/bf16",
      "decode/tiny/b=3/kv=300/p=16/bf16/seed=12",
      "decode/llama-3.1-8b/L=6/b=16/kv=4096/p=64/bf16/kvcache=fp8_e5m2",
      "decode/llama-3.1-70b-tp8/L=2/tp=8/b=0/kv=0/p=1/fp32/seed=1",
      "verify/tiny/b=8/kv=200/uniform[50,L]/draft=3/p=64/bf16/seed=1",
      "verify/gpt-oss-20b/L=2/b=4/kv=1024/draft=4/p=64/bf16/kvcache=fp8_e4m3/sinks",
      "extend/tiny/b=1/prefix=0/ext=64/p=16/bf16",
      "extend/tiny/L=2/b=2/prefix=32/ext=64/zipf[1,L]/p=64/fp16/seed=18446744073709551615",
      "extend/tiny/trace=t.csv/b=2/p=64/bf16",
      "decode/tiny/trace=odd,name=x.csv/b=1/p=64/bf16",  // a trace name may hold ',' and '='
  };
  for (const std::string& id : ids) {
    const std::optional<CaseIdParts> p = parse_case_id(id);
    ASSERT_TRUE(p.has_value()) << id;
    EXPECT_EQ(format_case_id(*p), id);
  }
  const std::optional<CaseIdParts> parsed =
      parse_case_id("verify/tiny/L=2/b=8/kv=200/uniform[50,L]/draft=3/p=64/fp16/seed=7/sinks");
  ASSERT_TRUE(parsed.has_value());
  const CaseIdParts& p = *parsed;
  EXPECT_EQ(p.mode, "verify");
  EXPECT_EQ(p.model, "tiny");
  EXPECT_EQ(p.layers, 2);
  EXPECT_FALSE(p.tp_size.has_value());
  EXPECT_EQ(p.batch, 8);
  EXPECT_EQ(p.kv_len, 200);
  EXPECT_EQ(p.length_dist, "uniform");
  EXPECT_EQ(p.length_min, 50);
  EXPECT_EQ(p.draft_tokens, 3);
  EXPECT_EQ(p.page_size, 64);
  EXPECT_EQ(p.dtype, "fp16");
  EXPECT_EQ(p.seed_or_default(), 7u);
  EXPECT_TRUE(p.sinks);
  const std::optional<CaseIdParts> plain = parse_case_id("decode/tiny/b=1/kv=8/p=64/bf16");
  ASSERT_TRUE(plain.has_value());
  EXPECT_FALSE(plain->seed.has_value());
  EXPECT_EQ(plain->seed_or_default(), 1u);  // no "/seed=": seed 1
}

TEST(CaseId, ParseRefusesWhatFormatNeverWrites) {
  const std::vector<std::string> ids = {
      "",
      "decode/other",
      "decode/nope/b=1",
      "prefill/tiny/b=1/kv=8/p=64/bf16",  // no such mode
      "decode//b=1/kv=8/p=64/bf16",       // no model
      "decode/tiny/b=01/kv=8/p=64/bf16",  // a leading zero
      "decode/tiny/b=+1/kv=8/p=64/bf16",  // a sign
      "decode/tiny/b=-1/kv=8/p=64/bf16",
      "decode/tiny/b= 1/kv=8/p=64/bf16",
      "decode/tiny/b=1x/kv=8/p=64/bf16",
      "decode/tiny/b=99999999999/kv=8/p=64/bf16",  // beyond int
      "decode/tiny/kv=8/b=1/p=64/bf16",            // out of order
      "decode/tiny/b=1/kv=8/p=64/bf16/sinks/seed=2",
      "extend/gpt-oss-20b/L=24/b=16/prefix=4096/ext=512/p=64/bf16/sinks/kvcache=fp8_e4m3",
      "decode/tiny/b=1/kv=8/p=64/bf16/extra",  // an unknown segment
      "decode/tiny/b=1/kv=8/p=64/bf16/",
      "decode/tiny/b=1/kv=8/p=64/",  // no dtype
      "decode/tiny/b=1/kv=8/p=64/kvcache=fp8_e4m3",
      "decode/tiny/b=1/kv=8/p=64/bf16/kvcache=",
      "decode/tiny/b=1/kv=8/p=64/bf16/seed=",
      "decode/tiny/b=1/p=64/bf16",                 // decode without its length
      "extend/gemma-3-27b/b=1/kv=128/p=1/fp16",    // extend with decode's length
      "decode/tiny/b=1/prefix=0/ext=8/p=64/bf16",  // decode with extend's lengths
      "decode/tiny/b=1/kv=8/draft=2/p=64/bf16",    // a draft outside verify
      "verify/tiny/b=1/kv=8/p=64/bf16",            // verify without its draft
      "decode/tiny/b=1/kv=8/[1,L]/p=64/bf16",      // a distribution without a name
      "decode/tiny/b=1/kv=8/uniform[x,L]/p=64/bf16",
      "decode/tiny/trace=t.csv/b=1/kv=8/p=64/bf16",  // a trace case has no length axis
  };
  for (const std::string& id : ids) EXPECT_FALSE(parse_case_id(id).has_value()) << id;
}

}  // namespace
}  // namespace attnbench
