// CpuDevice: RAII buffers and the ledger, zeroed allocations, named (shared) buffers, failures.
#include "device/cpu_device.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "core/errors.hpp"

namespace attnbench {
namespace {

TEST(CpuDevice, BuffersUpdateTheLedgerOnAllocationAndFree) {
  CpuDevice d;
  {
    Buffer a = d.allocate(1000, MemKind::device, "t.a");
    Buffer b = d.allocate(24, MemKind::pinned, "t.b");
    EXPECT_EQ(d.ledger().live()[MemKind::device], 1000);
    EXPECT_EQ(d.ledger().live()[MemKind::pinned], 24);
    Buffer moved = std::move(a);
    EXPECT_FALSE(a.allocated());
    EXPECT_EQ(d.ledger().live()[MemKind::device], 1000);
    moved.reset();
    EXPECT_EQ(d.ledger().live()[MemKind::device], 0);
  }
  EXPECT_EQ(d.ledger().live()[MemKind::pinned], 0);
  EXPECT_EQ(d.ledger().peak()[MemKind::device], 1000);
}

TEST(CpuDevice, ZeroedAllocationIsZeroAndPlainAllocationIsDistinct) {
  CpuDevice d;
  Buffer z = d.allocate_zeroed(4096, MemKind::device, "z");
  for (int i = 0; i < 4096; ++i) ASSERT_EQ(z.as<unsigned char>()[i], 0);
  Buffer e = d.allocate(0, MemKind::device, "empty");
  EXPECT_EQ(e.data(), nullptr);
  EXPECT_EQ(d.ledger().allocations(), 2);
}

TEST(CpuDevice, NamedBufferIsAllocatedOnceAndSharedAcrossCallers) {
  CpuDevice d;
  auto a = d.named_buffer("ws", 1 << 20, MemKind::device, true, "x.workspace");
  auto b = d.named_buffer("ws", 1 << 10, MemKind::device, true, "y.workspace");  // size of the first creator
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(b->bytes(), 1 << 20);
  EXPECT_EQ(d.ledger().live()[MemKind::device], 1 << 20);
  const auto groups = d.ledger().live_groups();
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_TRUE(groups[0].shared);
  EXPECT_EQ(groups[0].tag, "x.workspace");
  a.reset();
  b.reset();
  EXPECT_EQ(d.ledger().live()[MemKind::device], 1 << 20) << "the registry keeps named buffers alive";
}

TEST(CpuDevice, RefusedAllocationThrowsOutOfMemoryNamingTheTag) {
  CpuDevice d;
  try {
    Buffer b = d.allocate(std::int64_t{1} << 62, MemKind::device, "huge.thing");
    FAIL() << "allocation of 4 EiB succeeded";
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("huge.thing"), std::string::npos);
  }
  EXPECT_EQ(d.ledger().live()[MemKind::device], 0);
}

TEST(CpuDevice, CopyMemsetAndTimer) {
  CpuDevice d;
  Buffer a = d.allocate(64, MemKind::device, "a");
  Buffer b = d.allocate(64, MemKind::host, "b");
  d.memset(a.data(), 0x5a, 64);
  d.copy(b.data(), a.data(), 64);
  EXPECT_EQ(b.as<unsigned char>()[63], 0x5a);
  auto t = d.make_timer();
  t->start();
  t->stop();
  EXPECT_GE(t->elapsed_us(), 0.0);
  EXPECT_FALSE(d.memory_info().has_value());
  EXPECT_FALSE(d.supports_graphs());
  EXPECT_THROW(d.capture([] {}), Unsupported);
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

// The two bandwidth probes: positive, finite rates, and their buffers gone from the ledger afterwards (the read
// probe returns 0 when its sum shows it did not read what it timed, so a positive figure is a checked one).
TEST(CpuDevice, ReadAndCopyProbesMeasureAndFreeTheirBuffers) {
  CpuDevice d;
  const double read = d.measure_read_bandwidth(), copy = d.measure_copy_bandwidth();
  EXPECT_GT(read, 1e8);
  EXPECT_LT(read, 1e13);
  EXPECT_GT(copy, 1e8);
  EXPECT_EQ(d.ledger().live()[MemKind::host], 0);
}

}  // namespace
}  // namespace attnbench
