// Error types shared by every layer. The app maps them to exit codes and one line on stderr:
//   InputError -> 2 (usage / bad input), anything else -> 1. The runner maps a failing case to a row:
//   OutOfMemoryError -> status=oom, other exceptions -> status=failed.
#pragma once

#include <stdexcept>
#include <string>

namespace attnbench {

// Bad input: an option value out of range, an unknown name, an unreadable or malformed file.
// The message names the option, key or file at fault.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A case the backend or the configuration cannot run; becomes a `skipped` row with this reason.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The device refused an allocation. `bytes` is the request that failed.
class OutOfMemoryError : public std::runtime_error {
 public:
  OutOfMemoryError(const std::string& what, std::size_t bytes) : std::runtime_error(what), bytes_(bytes) {}
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_;
};

// A device API failure. `sticky` means the device context is unusable (e.g. an illegal address):
// the remaining GPU cases are reported as skipped instead of producing garbage.
class DeviceError : public std::runtime_error {
 public:
  DeviceError(const std::string& what, bool sticky) : std::runtime_error(what), sticky_(sticky) {}
  bool sticky() const { return sticky_; }

 private:
  bool sticky_;
};

}  // namespace attnbench
