// Ledger accounting: alloc / free / peak / window peak / snapshots and diffs.
#include "device/ledger.hpp"

#include <gtest/gtest.h>

namespace attnbench {
namespace {

TEST(Ledger, CountsLiveAndPeakPerKind) {
  Ledger l;
  const auto a = l.on_alloc("a", MemKind::device, 100, false);
  const auto b = l.on_alloc("b", MemKind::pinned, 40, false);
  const auto c = l.on_alloc("c", MemKind::device, 50, false);
  EXPECT_EQ(l.live()[MemKind::device], 150);
  EXPECT_EQ(l.live()[MemKind::pinned], 40);
  l.on_free(a);
  EXPECT_EQ(l.live()[MemKind::device], 50);
  EXPECT_EQ(l.peak()[MemKind::device], 150);
  l.on_free(b);
  l.on_free(c);
  EXPECT_EQ(l.live()[MemKind::device], 0);
  EXPECT_EQ(l.live()[MemKind::pinned], 0);
  EXPECT_EQ(l.peak()[MemKind::pinned], 40);
  EXPECT_EQ(l.allocations(), 3);
}

TEST(Ledger, DoubleFreeIsALogicError) {
  Ledger l;
  const auto a = l.on_alloc("a", MemKind::device, 1, false);
  l.on_free(a);
  EXPECT_THROW(l.on_free(a), std::logic_error);
  EXPECT_THROW(l.on_free(99), std::logic_error);
}

TEST(Ledger, WindowPeakSeesTransientAllocations) {
  Ledger l;
  l.on_alloc("base", MemKind::device, 1000, false);
  l.reset_window_peak();
  const auto t = l.on_alloc("transient", MemKind::device, 300, false);
  l.on_free(t);
  EXPECT_EQ(l.live()[MemKind::device], 1000);
  EXPECT_EQ(l.window_peak()[MemKind::device] - l.live()[MemKind::device], 300);
  l.reset_window_peak();
  EXPECT_EQ(l.window_peak()[MemKind::device], 1000);
}

TEST(Ledger, SnapshotDiffGroupsByTagKindPhaseShared) {
  Ledger l;
  l.set_phase("construct");
  l.on_alloc("x.ws", MemKind::device, 8, false);
  const Ledger::Snapshot before = l.snapshot();
  l.set_phase("capture");
  l.on_alloc("x.w", MemKind::device, 16, false);
  l.on_alloc("x.w", MemKind::device, 16, false);
  l.on_alloc("x.w", MemKind::pinned, 16, false);
  l.on_alloc("shared", MemKind::device, 4, true);
  const Ledger::Snapshot after = l.snapshot();
  const auto d = Ledger::diff(before, after);
  ASSERT_EQ(d.size(), 3u);
  std::int64_t dev = 0;
  for (const auto& g : d) {
    EXPECT_EQ(g.phase, "capture");
    if (g.tag == "x.w" && g.kind == MemKind::device) {
      EXPECT_EQ(g.bytes, 32);
      EXPECT_EQ(g.count, 2);
    }
    if (g.tag == "shared") {
      EXPECT_TRUE(g.shared);
    }
    if (g.kind == MemKind::device) dev += g.bytes;
  }
  EXPECT_EQ(dev, 36);
  EXPECT_EQ(Ledger::diff_totals(before, after)[MemKind::device], 36);
  EXPECT_EQ(Ledger::diff_totals(before, after)[MemKind::pinned], 16);
}

TEST(Ledger, DiffReportsGroupsFreedInTheRegion) {
  Ledger l;
  const auto a = l.on_alloc("gone", MemKind::device, 64, false);
  const auto before = l.snapshot();
  l.on_free(a);
  const auto d = Ledger::diff(before, l.snapshot());
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].bytes, -64);
  EXPECT_EQ(d[0].count, -1);
}

TEST(PhaseScope, RestoresThePreviousPhase) {
  Ledger l;
  l.set_phase("engine");
  {
    PhaseScope s(l, "step");
    EXPECT_EQ(l.phase(), "step");
    l.on_alloc("t", MemKind::device, 1, false);
  }
  EXPECT_EQ(l.phase(), "engine");
  EXPECT_EQ(l.snapshot().groups.begin()->first, std::make_tuple(std::string("t"), MemKind::device, std::string("step"), false));
}

}  // namespace
}  // namespace attnbench
