// ATTNBENCH_CUDA_CHECK(call): every CUDA runtime call goes through it. A failure throws attnbench::DeviceError
// naming the file, the line, the call text and cudaGetErrorString. `sticky` is set for errors that poison the
// context (an illegal address inside a kernel, a hardware exception, ...): every later call fails too, so the
// runner marks the remaining GPU cases skipped instead of producing garbage.
// ATTNBENCH_CUDA_CHECK_LAUNCH(): after every kernel launch (configuration errors surface here).
// Only src/device/cuda_* and kernels/cuda/ include this header (it includes the CUDA runtime). It lives in
// kernels/cuda/ because the kernels need it and src/device/ sits above kernels/ (no include goes back up).
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "core/errors.hpp"

namespace attnbench::cuda_detail {

// Errors after which the CUDA context is unusable (the process must restart to use the GPU again).
inline bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorHardwareStackError:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorContained:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  const bool sticky = is_sticky(e);
  if (!sticky) (void)cudaGetLastError();  // clear a non-sticky error so that later calls do not report it
  std::string what = std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                     cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  if (sticky) what += " [sticky: the CUDA context is unusable]";
  throw DeviceError(what, sticky);
}

}  // namespace attnbench::cuda_detail

#define ATTNBENCH_CUDA_CHECK(call)                                                        \
  do {                                                                                    \
    const cudaError_t attnbench_cuda_err_ = (call);                                       \
    if (attnbench_cuda_err_ != cudaSuccess)                                               \
      ::attnbench::cuda_detail::throw_cuda_error(attnbench_cuda_err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a <<<...>>> launch: configuration errors (too many threads, too much shared memory) are reported by
// cudaGetLastError; errors of the kernel's execution surface at the next synchronising call.
#define ATTNBENCH_CUDA_CHECK_LAUNCH() ATTNBENCH_CUDA_CHECK(cudaGetLastError())
