// backend_catalog(): every registered backend, in registry order, with the library twins and the change
// under test; the same catalog the report tests use (tests/support/backend_catalog.hpp).
#include "runner/backend_catalog.hpp"

#include <gtest/gtest.h>

#include "backends/registry.hpp"
#include "support/backend_catalog.hpp"

namespace attnbench {
namespace {

TEST(AppBackendCatalog, FilledFromTheRegistryAndAgreesWithTheTestCatalog) {
  const BackendCatalog c = backend_catalog();
  const auto& reg = backend_registry();
  ASSERT_EQ(c.backends.size(), reg.size());
  for (std::size_t i = 0; i < reg.size(); ++i) {
    EXPECT_EQ(c.backends[i].name, reg[i].name);
    EXPECT_EQ(c.backends[i].models, reg[i].models);
  }
  const BackendCatalog t = test::standard_catalog();
  ASSERT_EQ(c.backends.size(), t.backends.size());
  for (std::size_t i = 0; i < t.backends.size(); ++i) {
    EXPECT_EQ(c.backends[i].name, t.backends[i].name);
    EXPECT_EQ(c.backends[i].library_twin, t.backends[i].library_twin);
    EXPECT_EQ(c.backends[i].library_what, t.backends[i].library_what);
    EXPECT_EQ(c.backends[i].sglang_twin, t.backends[i].sglang_twin);
  }
  EXPECT_EQ(c.change.baseline, t.change.baseline);
  EXPECT_EQ(c.change.candidate, t.change.candidate);
  EXPECT_EQ(c.library_versions, t.library_versions);
  // The change names registered backends.
  EXPECT_NE(c.find(c.change.baseline), nullptr);
  EXPECT_NE(c.find(c.change.candidate), nullptr);
}

}  // namespace
}  // namespace attnbench
