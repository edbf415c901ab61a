#include "runner/workload.hpp"

#include <algorithm>
#include <cmath>

#include "core/units.hpp"
#include "device/cpu_device.hpp"
#include "engine/random_fill.hpp"

namespace attnbench {

WorkloadSeeds workload_seeds(std::uint64_t s) {
  return {seed_for(s, "pool", 0), seed_for(s, "q", 0), seed_for(s, "k_new", 0), seed_for(s, "v_new", 0),
          seed_for(s, "sinks", 0)};
}

namespace {

std::int64_t pool_capacity(const Case& c) {
  // Every request's pages, plus a quarter more so that shuffled pages land far apart.
  const int p = c.server.page_size;
  std::int64_t pages = 0;
  for (int i = 0; i < c.batch; ++i) pages += ceil_div(c.prefix_lens[i] + c.new_lens[i], p);
  return (pages + pages / 4 + 4) * p;
}

}  // namespace

HostBatch plan_host_batch(const Case& c, std::int64_t* pool_capacity_tokens) {
  // The slot map comes from the real page allocator (shuffled pages), run on a device-free scratch pool.
  CpuDevice scratch;
  const std::int64_t cap = pool_capacity(c);
  if (pool_capacity_tokens) *pool_capacity_tokens = cap;
  TokenToKVPool pool(scratch, cap, c.server.page_size, 0, 1, 1, DType::fp32, /*shuffle=*/true,
                     workload_seeds(c.seed).pool);
  HostBatch h;
  BatchSpec& s = h.spec;
  s.forward_mode = c.mode;
  s.num_draft_tokens = c.draft_tokens;
  int q_off = 0;
  for (int i = 0; i < c.batch; ++i) {
    const int pre = c.prefix_lens[i], n = c.new_lens[i];
    h.slots.push_back(pool.alloc_sequence(pre + n));
    h.q_offset.push_back(q_off);
    q_off += n;
    s.req_pool_indices.push_back(i + 1);  // row 0 is the padding row
    // seq_lens: decode/extend count this step's tokens; target_verify does not (SGLang).
    s.seq_lens.push_back(c.mode == ForwardMode::target_verify ? pre : pre + n);
    if (c.mode == ForwardMode::extend) {
      s.extend_prefix_lens.push_back(pre);
      s.extend_seq_lens.push_back(n);
    }
    for (int j = 0; j < n; ++j) s.out_cache_loc.push_back(h.slots.back()[pre + j]);
  }
  return h;
}

Workload::Workload(Device& device, const Case& c) : device_(device), case_(c), runner_(device, c.model, c.server) {
  PhaseScope phase(device.ledger(), "engine");
  const ModelConfig& m = c.model;
  std::int64_t cap = 0;
  host_ = plan_host_batch(c, &cap);
  const WorkloadSeeds seeds = workload_seeds(c.seed);
  const int width = static_cast<int>(std::max<std::int64_t>(1, c.kv_len_max()));
  req_to_token_pool_ = std::make_unique<ReqToTokenPool>(device, c.batch, width);
  token_to_kv_pool_ = std::make_unique<TokenToKVPool>(device, cap, c.server.page_size, m.num_layers, m.num_kv_heads(),
                                                      m.head_dim, m.kv_dtype(), /*shuffle=*/true, seeds.pool,
                                                      c.server.fused_kv_pool());
  // The device pool's allocator is the same as the plan's: check the slot maps agree.
  for (int i = 0; i < c.batch; ++i) {
    const auto slots = token_to_kv_pool_->alloc_sequence(static_cast<std::int64_t>(host_.slots[i].size()));
    if (slots != host_.slots[i]) throw std::logic_error("workload: slot map differs from the planned one");
    req_to_token_pool_->set_row(i + 1, slots);
  }
  token_to_kv_pool_->fill_random(seeds.pool);
  runner_.req_to_token_pool = req_to_token_pool_.get();
  runner_.token_to_kv_pool = token_to_kv_pool_.get();

  const int tokens = c.q_tokens();
  inputs_ = std::make_unique<BatchInputs>(device, c.batch, tokens);
  fb_ = inputs_->load(host_.spec);

  const std::int64_t q_elems = static_cast<std::int64_t>(tokens) * m.num_qo_heads() * m.head_dim;
  const std::int64_t kv_elems = static_cast<std::int64_t>(tokens) * m.num_kv_heads() * m.head_dim;
  const int es = dtype_size(m.dtype);
  q_ = device.allocate(q_elems * es, MemKind::device, "engine.inputs.q");
  k_ = device.allocate(kv_elems * es, MemKind::device, "engine.inputs.k");
  v_ = device.allocate(kv_elems * es, MemKind::device, "engine.inputs.v");
  o_ = device.allocate(q_elems * es, MemKind::device, "engine.outputs.o");
  fill_uniform(device, q_.data(), q_elems, m.dtype, seeds.q, -kQueryRange, kQueryRange);
  fill_uniform(device, k_.data(), kv_elems, m.dtype, seeds.k_new, -kKvRange, kKvRange);
  fill_uniform(device, v_.data(), kv_elems, m.dtype, seeds.v_new, -kKvRange, kKvRange);
  if (c.sinks) {
    sinks_ = device.allocate(4LL * m.num_qo_heads(), MemKind::device, "engine.inputs.sinks");
    fill_uniform(device, sinks_.data(), m.num_qo_heads(), DType::fp32, seeds.sinks, -1.0f, 3.0f);
  }
  for (int l = 0; l < m.num_layers; ++l) {
    Layer layer;
    layer.layer_id = l;
    layer.scaling = m.sm_scale();           // RadixAttention's scaling (Gemma-2/3: query_pre_attn_scalar**-0.5)
    layer.logit_cap = m.attn_logit_cap;     // RadixAttention's logit_cap (Gemma-2: attn_logit_softcapping)
    layer.sliding_window_size = m.layer_sliding_window_size(l);
    layer.k_scale = m.k_scale;
    layer.v_scale = m.v_scale;
    layer.sinks = c.sinks ? sinks_.as<const float>() : nullptr;
    layers_.push_back(layer);
  }
  device.synchronize();
}

void Workload::poison_output() { poison(device_, o_.data(), o_.bytes()); }

}  // namespace attnbench
