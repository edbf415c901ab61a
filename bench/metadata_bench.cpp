// Host-side cost of init_forward_metadata per backend (Google Benchmark), decode batches of 1 to 256
// requests at contexts of 1k to 128k tokens:
//   BM_Metadata          on the CPU device: host work plus the metadata kernels run on the CPU;
//   BM_MetadataHostOnly  with the O(tokens) kernels (kv_indices, page table) replaced by no-ops: about what the
//                        host does per step on a GPU (FlashInfer: indptr read-back, plan scheduling, pinned
//                        copy; TRTLLM: its allocations). The O(batch) lengths kernel still runs on the CPU.
// Arguments: bs = requests in the batch, ctx = tokens per request, e.g. BM_MetadataHostOnly/flashinfer/bs:64/ctx:8192.
// Run: build/attnbench_host_bench --benchmark_filter=HostOnly
// CI (ctest -L cpu, test host_bench_short) runs the small shapes with a minimal time, so the file cannot rot.
#include <benchmark/benchmark.h>

#include <memory>

#include "backends/registry.hpp"
#include "device/cpu_device.hpp"
#include "engine/forward_batch.hpp"
#include "engine/memory_pool.hpp"
#include "engine/model_runner.hpp"
#include "kernels/cpu/kernels_cpu.hpp"

namespace attnbench {
namespace {

class HostOnlyDevice : public CpuDevice {
 public:
  const KernelTable& kernels() const override {
    static const KernelTable t = [] {
      KernelTable k = cpu_kernel_table();
      k.build_kv_indices = [](const KvIndicesParams&, void*) {};
      k.build_page_table = [](const PageTableParams&, void*) {};
      return k;
    }();
    return t;
  }
};

template <class DeviceT>
void metadata(benchmark::State& state, const std::string& backend) {
  const int bs = static_cast<int>(state.range(0));
  const int ctx = static_cast<int>(state.range(1));
  DeviceT dev;
  ModelConfig model = find_model_preset("llama-3.1-8b");
  ServerArgs server;
  ModelRunner mr(dev, model, server);
  ReqToTokenPool pool(dev, bs, ctx + 1);
  std::vector<std::int32_t> row(static_cast<std::size_t>(ctx) + 1);
  BatchSpec spec;
  for (int i = 0; i < bs; ++i) {
    for (int t = 0; t <= ctx; ++t) row[t] = i * (ctx + 1) + t + 64;
    pool.set_row(i + 1, row);
    spec.req_pool_indices.push_back(i + 1);
    spec.seq_lens.push_back(ctx + 1);
    spec.out_cache_loc.push_back(row[ctx]);
  }
  mr.req_to_token_pool = &pool;
  BatchInputs inputs(dev, bs, bs);
  const ForwardBatch fb = inputs.load(spec);
  auto b = find_backend(backend).create(mr);
  for (auto _ : state) b->init_forward_metadata(fb);
  state.SetLabel(backend);
}

void args(benchmark::internal::Benchmark* b) {
  for (int bs : {1, 16, 64, 256})
    for (int ctx : {1024, 8192, 32768, 131072})
      if (static_cast<long>(bs) * ctx <= 256L * 32768) b->Args({bs, ctx});
  b->ArgNames({"bs", "ctx"});  // names read BM_Metadata/flashinfer/bs:64/ctx:8192
  b->Unit(benchmark::kMicrosecond);
}

}  // namespace
}  // namespace attnbench

int main(int argc, char** argv) {
  using namespace attnbench;
  for (const std::string b : {"flashinfer", "trtllm_mha"}) {
    benchmark::RegisterBenchmark(("BM_Metadata/" + b).c_str(), [b](benchmark::State& s) { metadata<CpuDevice>(s, b); })
        ->Apply(args);
    benchmark::RegisterBenchmark(("BM_MetadataHostOnly/" + b).c_str(),
                                 [b](benchmark::State& s) { metadata<HostOnlyDevice>(s, b); })
        ->Apply(args);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
