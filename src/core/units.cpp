#include "core/units.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

namespace attnbench {

std::string format_bytes(std::int64_t bytes) {
  const std::int64_t mag = std::llabs(bytes);
  char buf[64];
  if (mag < KiB) {
    std::snprintf(buf, sizeof buf, "%" PRId64 " B", bytes);
  } else if (mag < MiB) {
    std::snprintf(buf, sizeof buf, "%.2f KiB", static_cast<double>(bytes) / KiB);
  } else if (mag < GiB) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / MiB);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / GiB);
  }
  return buf;
}

}  // namespace attnbench
