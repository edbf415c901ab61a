// CudaDevice: the Device of a CUDA GPU (interface and contracts in device.hpp).
//
// Memory: MemKind::device is cudaMalloc outside the "step" phase and stream-ordered cudaMallocAsync /
// cudaFreeAsync (from the device's own pool, on its stream) inside it. That models PyTorch's caching
// allocator in a timed step: no implicit device synchronisation, and the allocation is capturable in a CUDA
// graph. The pool keeps freed memory cached (release threshold = max), as PyTorch does; memory_info() trims
// it first so that the driver view counts live memory only. pinned = cudaMallocHost, host = aligned new.
// During a capture, synchronous allocations run in relaxed capture mode (as PyTorch's allocator does) and
// frees that cannot be recorded in the graph are deferred until the capture ends.
//
// Validated by tests/gpu/cuda_device_test.cpp (ctest -L gpu -R CudaDevice; scripts/gpu_check.sh on a GPU).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <vector>

#include "core/errors.hpp"
#include "core/units.hpp"
#include "kernels/cuda/cuda_check.cuh"
#include "device/cuda_device.hpp"
#include "kernels/cuda/kernels_cuda.cuh"
#include "kernels/kernel_table.hpp"

namespace attnbench {

namespace {

constexpr std::size_t kHostAlignment = 256;  // as cudaMalloc, so vectorised host code sees the same alignment

// Spins one thread for `cycles` SM clock cycles; timed with events it gives the SM clock.
__global__ void spin_cycles_kernel(long long cycles, long long* out) {
  const long long t0 = clock64();
  long long t = t0;
  while (t - t0 < cycles) t = clock64();
  if (threadIdx.x == 0) *out = t - t0;
}

// Temporarily switches this thread to relaxed capture mode, so that cudaMalloc / cudaMallocHost during a
// capture neither fail nor invalidate it (their memory is not part of the graph; it simply stays allocated).
class RelaxedCaptureMode {
 public:
  explicit RelaxedCaptureMode(bool active) : active_(active) {
    if (active_) (void)cudaThreadExchangeStreamCaptureMode(&mode_);
  }
  ~RelaxedCaptureMode() {
    if (active_) (void)cudaThreadExchangeStreamCaptureMode(&mode_);
  }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  bool active_;
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

class CudaTimer final : public Timer {
 public:
  explicit CudaTimer(cudaStream_t s) : stream_(s) {
    ATTNBENCH_CUDA_CHECK(cudaEventCreate(&start_));
    ATTNBENCH_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~CudaTimer() override {
    (void)cudaEventDestroy(start_);
    (void)cudaEventDestroy(stop_);
  }
  void start() override { ATTNBENCH_CUDA_CHECK(cudaEventRecord(start_, stream_)); }
  void stop() override { ATTNBENCH_CUDA_CHECK(cudaEventRecord(stop_, stream_)); }
  double elapsed_us() override {
    ATTNBENCH_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0.0f;
    ATTNBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return static_cast<double>(ms) * 1000.0;
  }

 private:
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

class CudaGraph final : public Graph {
 public:
  CudaGraph(cudaGraphExec_t exec, cudaStream_t s) : exec_(exec), stream_(s) {}
  ~CudaGraph() override { (void)cudaGraphExecDestroy(exec_); }
  void replay() override { ATTNBENCH_CUDA_CHECK(cudaGraphLaunch(exec_, stream_)); }

 private:
  cudaGraphExec_t exec_;
  cudaStream_t stream_;
};

std::string format_uuid(const cudaUUID_t& u) {
  // nvidia-smi's form: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
  char buf[64];
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  std::snprintf(buf, sizeof(buf), "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return buf;
}

std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

}  // namespace

class CudaDevice final : public Device {
 public:
  explicit CudaDevice(int ordinal);
  ~CudaDevice() override;

  DeviceType type() const override { return DeviceType::cuda; }
  std::string name() const override { return props_.name; }
  void copy(void* dst, const void* src, std::int64_t bytes) override;
  void memset(void* dst, int value, std::int64_t bytes) override;
  void synchronize() override { ATTNBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_)); }
  std::optional<MemoryInfo> memory_info() override;
  int sm_count() const override { return props_.multiProcessorCount; }
  int sm_version() const override { return props_.major * 10 + props_.minor; }
  std::unique_ptr<Timer> make_timer() override { return std::make_unique<CudaTimer>(stream_); }
  const KernelTable& kernels() const override { return cuda_kernel_table(); }
  void* stream() const override { return stream_; }
  bool supports_graphs() const override { return true; }
  std::unique_ptr<Graph> capture(const std::function<void()>& body) override;
  std::int64_t l2_bytes() const override { return props_.l2CacheSize; }
  void flush_l2() override;
  double measure_copy_bandwidth() override;
  double measure_read_bandwidth() override;  // kernels/cuda/read_probe.cu over 4 GiB, best of 4 grids x 10 runs
  std::vector<std::pair<std::string, std::string>> environment() const override;

 protected:
  void* raw_allocate(std::int64_t bytes, MemKind kind) override;
  void raw_free(void* p, MemKind kind) noexcept override;
  void raw_zero(void* p, std::int64_t bytes, MemKind kind) override;

 private:
  enum class Path : std::uint8_t { malloc, malloc_async, malloc_host, host_new };
  struct Allocation {
    std::int64_t bytes;
    Path path;
    bool graph_owned;  // allocated by an alloc node of the capture in progress
  };

  void free_now(void* p, Path path) noexcept;
  // The allocation of this device holding address p (also an interior pointer), if any.
  std::optional<Allocation> find_allocation(const void* p);
  void flush_deferred_frees() noexcept;
  double measure_sm_clock_mhz();

  int ordinal_;
  cudaDeviceProp props_{};
  cudaStream_t stream_ = nullptr;
  cudaMemPool_t pool_ = nullptr;  // stream-ordered allocations of the "step" phase

  std::mutex mutex_;  // guards allocations_ and deferred_
  std::map<std::uintptr_t, Allocation> allocations_;  // by start address
  std::vector<std::pair<void*, Path>> deferred_;  // frees postponed until the capture in progress ends
  bool capturing_ = false;

  Buffer l2_flush_;  // [2 * l2_bytes] bytes, written by flush_l2()
  int l2_flush_value_ = 0;
  mutable double sm_clock_measured_mhz_ = -1.0;  // measured once, on the first environment() call
};

CudaDevice::CudaDevice(int ordinal) : ordinal_(ordinal) {
  ATTNBENCH_CUDA_CHECK(cudaSetDevice(ordinal_));
  ATTNBENCH_CUDA_CHECK(cudaGetDeviceProperties(&props_, ordinal_));
  ATTNBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  cudaMemPoolProps pp{};
  pp.allocType = cudaMemAllocationTypePinned;
  pp.location.type = cudaMemLocationTypeDevice;
  pp.location.id = ordinal_;
  ATTNBENCH_CUDA_CHECK(cudaMemPoolCreate(&pool_, &pp));
  std::uint64_t keep = UINT64_MAX;  // keep freed blocks cached, as PyTorch's allocator does
  ATTNBENCH_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
}

CudaDevice::~CudaDevice() {
  drop_named_buffers();
  l2_flush_.reset();
  (void)cudaStreamSynchronize(stream_);
  flush_deferred_frees();
  {
    // Buffers that outlive their device (a caller's bug) are released here so the pool can go.
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [p, a] : allocations_) {
      if (a.path == Path::malloc_async) (void)cudaFreeAsync(reinterpret_cast<void*>(p), stream_);
    }
    allocations_.clear();
  }
  (void)cudaStreamSynchronize(stream_);
  (void)cudaMemPoolDestroy(pool_);
  (void)cudaStreamDestroy(stream_);
  (void)cudaGetLastError();
}

void* CudaDevice::raw_allocate(std::int64_t bytes, MemKind kind) {
  void* p = nullptr;
  cudaError_t e = cudaSuccess;
  Path path = Path::malloc;
  switch (kind) {
    case MemKind::device:
      // Inside a step, and inside a capture (a captured forward's temporaries, e.g. trtllm_mha's seq-len
      // split buffers, must live in the graph's own allocations, as they do in PyTorch's graph pool: an
      // allocation node and a free node per replay, not memory freed when the capture ends).
      if (ledger().phase() == "step" || capturing_) {
        path = Path::malloc_async;
        e = cudaMallocFromPoolAsync(&p, static_cast<std::size_t>(bytes), pool_, stream_);
      } else {
        RelaxedCaptureMode relaxed(capturing_);
        e = cudaMalloc(&p, static_cast<std::size_t>(bytes));
      }
      break;
    case MemKind::pinned: {
      path = Path::malloc_host;
      RelaxedCaptureMode relaxed(capturing_);
      e = cudaMallocHost(&p, static_cast<std::size_t>(bytes));
      break;
    }
    case MemKind::host: {
      path = Path::host_new;
      const std::size_t n = (static_cast<std::size_t>(bytes) + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
      p = ::operator new(n, std::align_val_t(kHostAlignment), std::nothrow);
      break;
    }
  }
  if (e != cudaSuccess) {
    // Out of memory becomes nullptr (the base class throws OutOfMemoryError naming the tag); anything else
    // is a device failure and must not be reported as OOM.
    if (e != cudaErrorMemoryAllocation) ATTNBENCH_CUDA_CHECK(e);
    (void)cudaGetLastError();
    return nullptr;
  }
  if (p == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  allocations_[reinterpret_cast<std::uintptr_t>(p)] = Allocation{bytes, path, capturing_ && path == Path::malloc_async};
  return p;
}

void CudaDevice::free_now(void* p, Path path) noexcept {
  switch (path) {
    case Path::malloc:
      (void)cudaFree(p);
      break;
    case Path::malloc_async:
      (void)cudaFreeAsync(p, stream_);
      break;
    case Path::malloc_host:
      (void)cudaFreeHost(p);
      break;
    case Path::host_new:
      ::operator delete(p, std::align_val_t(kHostAlignment));
      break;
  }
  const cudaError_t e = cudaGetLastError();  // a free cannot throw; clear what it left (sticky errors stay)
  (void)e;
}

void CudaDevice::raw_free(void* p, MemKind) noexcept {
  Allocation a{};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = allocations_.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == allocations_.end()) return;  // not ours (cannot happen through Buffer)
    a = it->second;
    allocations_.erase(it);
    if (capturing_ && !a.graph_owned && a.path != Path::host_new) {
      // cudaFree synchronises, and a graph cannot free memory it did not allocate: free after EndCapture.
      deferred_.emplace_back(p, a.path);
      return;
    }
  }
  free_now(p, a.path);  // a graph-owned block during capture: recorded as a free node of the graph
}

std::optional<CudaDevice::Allocation> CudaDevice::find_allocation(const void* p) {
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = allocations_.upper_bound(addr);
  if (it == allocations_.begin()) return std::nullopt;
  --it;
  if (addr >= it->first + static_cast<std::uintptr_t>(it->second.bytes)) return std::nullopt;
  return it->second;
}

void CudaDevice::flush_deferred_frees() noexcept {
  std::vector<std::pair<void*, Path>> pending;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending.swap(deferred_);
  }
  for (auto& [p, path] : pending) free_now(p, path);
}

void CudaDevice::raw_zero(void* p, std::int64_t bytes, MemKind kind) {
  if (kind == MemKind::device) {
    ATTNBENCH_CUDA_CHECK(cudaMemsetAsync(p, 0, static_cast<std::size_t>(bytes), stream_));
  } else {
    std::memset(p, 0, static_cast<std::size_t>(bytes));  // fresh host memory: nothing on the stream uses it yet
  }
}

void CudaDevice::copy(void* dst, const void* src, std::int64_t bytes) {
  if (bytes <= 0) return;
  ATTNBENCH_CUDA_CHECK(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(bytes), cudaMemcpyDefault, stream_));
}

void CudaDevice::memset(void* dst, int value, std::int64_t bytes) {
  if (bytes <= 0) return;
  // Our own allocations decide by how they were made (a block from a graph alloc node is not known to
  // cudaPointerGetAttributes during the capture); anything else by what the driver says.
  bool on_device;
  if (const std::optional<Allocation> a = find_allocation(dst)) {
    on_device = a->path == Path::malloc || a->path == Path::malloc_async;
  } else {
    cudaPointerAttributes attr{};
    ATTNBENCH_CUDA_CHECK(cudaPointerGetAttributes(&attr, dst));
    on_device = attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
  }
  if (on_device) {
    ATTNBENCH_CUDA_CHECK(cudaMemsetAsync(dst, value, static_cast<std::size_t>(bytes), stream_));
  } else {
    // Host memory (pinned or pageable): in stream order, i.e. after the work already issued that may use it.
    if (!capturing_) synchronize();
    std::memset(dst, value, static_cast<std::size_t>(bytes));
  }
}

std::optional<MemoryInfo> CudaDevice::memory_info() {
  if (!capturing_) {
    // Stream-ordered frees complete at the synchronisation; trimming then returns the cached blocks, so the
    // driver view counts live memory only (as after torch.cuda.empty_cache()).
    synchronize();
    ATTNBENCH_CUDA_CHECK(cudaMemPoolTrimTo(pool_, 0));
  }
  std::size_t free_b = 0, total_b = 0;
  ATTNBENCH_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return MemoryInfo{static_cast<std::int64_t>(free_b), static_cast<std::int64_t>(total_b)};
}

std::unique_ptr<Graph> CudaDevice::capture(const std::function<void()>& body) {
  if (capturing_) throw std::logic_error("CudaDevice::capture: a capture is already in progress");
  ATTNBENCH_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  capturing_ = true;
  cudaGraph_t graph = nullptr;
  try {
    body();
  } catch (...) {
    (void)cudaStreamEndCapture(stream_, &graph);
    capturing_ = false;
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    flush_deferred_frees();
    throw;
  }
  const cudaError_t end = cudaStreamEndCapture(stream_, &graph);
  capturing_ = false;
  flush_deferred_frees();
  ATTNBENCH_CUDA_CHECK(end);
  cudaGraphExec_t exec = nullptr;
  const cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
  (void)cudaGraphDestroy(graph);
  ATTNBENCH_CUDA_CHECK(inst);
  return std::make_unique<CudaGraph>(exec, stream_);
}

void CudaDevice::flush_l2() {
  if (!l2_flush_.allocated()) {
    PhaseScope phase(ledger(), "device");  // a plain cudaMalloc, whatever phase the caller is in
    l2_flush_ = allocate(2 * std::max<std::int64_t>(l2_bytes(), 1 * MiB), MemKind::device, "device.l2_flush");
  }
  l2_flush_value_ = (l2_flush_value_ + 1) & 0xff;
  ATTNBENCH_CUDA_CHECK(
      cudaMemsetAsync(l2_flush_.data(), l2_flush_value_, static_cast<std::size_t>(l2_flush_.bytes()), stream_));
}

double CudaDevice::measure_copy_bandwidth() {
  PhaseScope phase(ledger(), "device");
  std::int64_t bytes = 2 * GiB;
  Buffer src, dst;
  try {
    src = allocate(bytes, MemKind::device, "device.bandwidth_probe.src");
    dst = allocate(bytes, MemKind::device, "device.bandwidth_probe.dst");
  } catch (const OutOfMemoryError&) {
    src.reset();
    dst.reset();
    bytes = 256 * MiB;
    src = allocate(bytes, MemKind::device, "device.bandwidth_probe.src");
    dst = allocate(bytes, MemKind::device, "device.bandwidth_probe.dst");
  }
  ATTNBENCH_CUDA_CHECK(cudaMemsetAsync(src.data(), 1, static_cast<std::size_t>(bytes), stream_));
  ATTNBENCH_CUDA_CHECK(cudaMemsetAsync(dst.data(), 2, static_cast<std::size_t>(bytes), stream_));
  CudaTimer timer(stream_);
  double best_us = 0.0;
  for (int i = 0; i < 11; ++i) {  // the first is the warm-up
    timer.start();
    ATTNBENCH_CUDA_CHECK(
        cudaMemcpyAsync(dst.data(), src.data(), static_cast<std::size_t>(bytes), cudaMemcpyDeviceToDevice, stream_));
    timer.stop();
    const double us = timer.elapsed_us();
    if (i > 0 && (best_us == 0.0 || us < best_us)) best_us = us;
  }
  return best_us > 0.0 ? 2.0 * static_cast<double>(bytes) / (best_us * 1e-6) : 0.0;
}

double CudaDevice::measure_read_bandwidth() {
  PhaseScope phase(ledger(), "device");
  // 4 GiB, 70x the H200's L2 (performance.md: the read rate levels off from 4 GiB); smaller when memory is short.
  Buffer data;
  for (std::int64_t bytes : {4 * GiB, 1 * GiB, 256 * MiB}) {
    try {
      data = allocate(bytes, MemKind::device, "device.bandwidth_probe.read");
      break;
    } catch (const OutOfMemoryError&) {
      data.reset();
      if (bytes == 256 * MiB) throw;
    }
  }
  const int sms = props_.multiProcessorCount;
  constexpr int kMaxBlocksPerSm = 16;
  Buffer out = allocate(static_cast<std::int64_t>(sms) * kMaxBlocksPerSm * 8, MemKind::device, "device.bandwidth_probe.out");
  ATTNBENCH_CUDA_CHECK(cudaMemsetAsync(data.data(), 0x5a, static_cast<std::size_t>(data.bytes()), stream_));
  CudaTimer timer(stream_);
  double best_us = 0.0;
  for (int per_sm : {2, 4, 8, kMaxBlocksPerSm})  // the best grid differs between GPUs
    for (int i = 0; i < 11; ++i) {  // the first is the warm-up
      timer.start();
      launch_read_probe(data.data(), data.bytes(), sms * per_sm, out.data(), stream_);
      timer.stop();
      const double us = timer.elapsed_us();
      if (i > 0 && (best_us == 0.0 || us < best_us)) best_us = us;
    }
  return best_us > 0.0 ? static_cast<double>(data.bytes()) / (best_us * 1e-6) : 0.0;
}

double CudaDevice::measure_sm_clock_mhz() {
  PhaseScope phase(ledger(), "device");
  Buffer out = allocate(sizeof(long long), MemKind::device, "device.clock_probe");
  CudaTimer timer(stream_);
  const long long cycles = 20'000'000;  // ~10 ms at 2 GHz
  double best = 0.0;
  for (int i = 0; i < 4; ++i) {  // the first ones also ramp the clock up from idle
    timer.start();
    spin_cycles_kernel<<<1, 32, 0, stream_>>>(cycles, out.as<long long>());
    ATTNBENCH_CUDA_CHECK_LAUNCH();
    timer.stop();
    const double us = timer.elapsed_us();
    if (us > 0) best = std::max(best, static_cast<double>(cycles) / us);
  }
  return best;
}

std::vector<std::pair<std::string, std::string>> CudaDevice::environment() const {
  auto* self = const_cast<CudaDevice*>(this);
  if (sm_clock_measured_mhz_ < 0) sm_clock_measured_mhz_ = self->measure_sm_clock_mhz();
  int driver = 0, runtime = 0, clock_khz = 0, mem_clock_khz = 0, bus_bits = 0;
  ATTNBENCH_CUDA_CHECK(cudaDriverGetVersion(&driver));
  ATTNBENCH_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  ATTNBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, ordinal_));
  ATTNBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, ordinal_));
  ATTNBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, ordinal_));
  char clock_buf[32];
  std::snprintf(clock_buf, sizeof(clock_buf), "%.0f", sm_clock_measured_mhz_);
  return {{"device", "cuda"},
          {"device_ordinal", std::to_string(ordinal_)},
          {"gpu_name", props_.name},
          {"gpu_uuid", format_uuid(props_.uuid)},
          {"compute_capability", std::to_string(props_.major) + "." + std::to_string(props_.minor)},
          {"driver_version", version_string(driver)},
          {"runtime_version", version_string(runtime)},
          {"sm_count", std::to_string(props_.multiProcessorCount)},
          {"l2_bytes", std::to_string(props_.l2CacheSize)},
          {"memory_total_bytes", std::to_string(props_.totalGlobalMem)},
          {"memory_clock_max_mhz", std::to_string(mem_clock_khz / 1000)},
          {"memory_bus_width_bits", std::to_string(bus_bits)},
          {"sm_clock_max_mhz", std::to_string(clock_khz / 1000)},
          {"sm_clock_measured_mhz", clock_buf}};
}

CudaProbe cuda_probe() {
  static const CudaProbe cached = [] {
    CudaProbe r;
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      r.detail = cudaGetErrorString(e);
      (void)cudaGetLastError();
      return r;
    }
    if (n <= 0) {
      r.detail = "no CUDA device found";
      return r;
    }
    cudaDeviceProp props{};
    const cudaError_t pe = cudaGetDeviceProperties(&props, 0);
    if (pe != cudaSuccess) {
      r.detail = cudaGetErrorString(pe);
      (void)cudaGetLastError();
      return r;
    }
    r.usable = true;
    r.count = n;
    r.detail = std::string(props.name) + " (device 0 of " + std::to_string(n) + ")";
    return r;
  }();
  return cached;
}

std::unique_ptr<Device> make_cuda_device(int ordinal) { return std::make_unique<CudaDevice>(ordinal); }

}  // namespace attnbench
