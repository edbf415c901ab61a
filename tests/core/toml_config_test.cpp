// read_toml_config's duplicate rule at its own depth: one key in two spellings, and one option under two names
// (the primary_of map the app passes), are one key.
#include "core/toml_config.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/errors.hpp"

namespace attnbench {
namespace {

const std::vector<std::string> kSections = {"run", "validate", "memory"};
const std::map<std::string, std::string> kPrimary = {{"context-len", "context-length"}};

std::string error_of(const std::string& text, const std::map<std::string, std::string>& primary_of) {
  try {
    read_toml_config(text, "c.toml", "run", kSections, primary_of);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(TomlConfig, AnOptionUnderTwoNamesIsADuplicateKeyOnlyWhenTheMapSaysSo) {
  const std::string text = "context-len = 4096\n[run]\ncontext_length = 2048\n";
  EXPECT_EQ(error_of(text, {}), "");  // two options as far as the reader knows
  EXPECT_EQ(error_of(text, kPrimary),
            "--config c.toml line 3: duplicate key 'context_length' (also written as 'context-len': both are "
            "--context-length) (at the top level and in [run])");
}

TEST(TomlConfig, OneNameInTwoSpellingsIsADuplicateWithoutAMap) {
  EXPECT_EQ(error_of("kv_cache_dtype = \"fp8_e4m3\"\nkv-cache-dtype = \"bf16\"\n", {}),
            "--config c.toml line 2: duplicate key 'kv-cache-dtype' (also written as 'kv_cache_dtype')");
}

TEST(TomlConfig, EntriesKeepTheirWrittenNameWhenMapped) {
  const auto e = read_toml_config("context-len = 4096\n", "c.toml", "run", kSections, kPrimary);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].name, "context-len");  // CLI11 resolves the alias; the reader only compares
  EXPECT_EQ(e[0].inputs, std::vector<std::string>{"4096"});
}

}  // namespace
}  // namespace attnbench
