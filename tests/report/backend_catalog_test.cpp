// The backend catalog the report writers receive: lookups by name and by library twin.
#include "report/backend_catalog.hpp"

#include <gtest/gtest.h>

#include "support/backend_catalog.hpp"

namespace attnbench {
namespace {

TEST(BackendCatalog, FindsBackendsAndTheModelTwinOfALibraryBackend) {
  const BackendCatalog c = test::standard_catalog();
  ASSERT_NE(c.find("trtllm_mha"), nullptr);
  EXPECT_EQ(c.find("trtllm_mha")->library_twin, "trtllm_lib");
  EXPECT_EQ(c.find("nope"), nullptr);
  EXPECT_EQ(c.model_twin_of("flashinfer_lib"), "flashinfer");
  EXPECT_EQ(c.model_twin_of("trtllm_lib"), "trtllm_mha");
  EXPECT_FALSE(c.model_twin_of("cudnn_lib"));
  EXPECT_FALSE(c.model_twin_of("flashinfer"));
  EXPECT_FALSE(c.model_twin_of("")) << "a backend without a twin has an empty library_twin";
  EXPECT_EQ(c.library_backends(), (std::vector<std::string>{"flashinfer_lib", "trtllm_lib"}));
}

TEST(BackendCatalog, AVariantIsData) {
  // A new backend with a twin pairs with its library rows without any code naming it.
  BackendCatalog c = test::standard_catalog();
  c.backends.push_back({"trtllm_mha_v2", "X", "trtllm_v2_lib", "something"});
  EXPECT_EQ(c.model_twin_of("trtllm_v2_lib"), "trtllm_mha_v2");
  EXPECT_EQ(c.library_backends().back(), "trtllm_v2_lib");
}

}  // namespace
}  // namespace attnbench
