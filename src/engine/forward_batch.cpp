#include "engine/forward_batch.hpp"

#include <numeric>
#include <stdexcept>
#include <string>

#include "core/enum_names.hpp"

namespace attnbench {

namespace {
constexpr EnumName<ForwardMode> kForwardModeNames[] = {
    {ForwardMode::decode, "decode"}, {ForwardMode::extend, "extend"}, {ForwardMode::target_verify, "verify"}};
}  // namespace

std::string_view forward_mode_name(ForwardMode m) { return enum_name(kForwardModeNames, m); }

std::int64_t ForwardBatch::seq_lens_sum() const {
  return std::accumulate(seq_lens_cpu.begin(), seq_lens_cpu.end(), std::int64_t{0});
}

bool ForwardBatch::extend_no_prefix() const {
  for (std::int32_t p : extend_prefix_lens_cpu)
    if (p != 0) return false;
  return true;
}

BatchSpec pad_batch(const BatchSpec& real, int bs, int fill_value, int width) {
  BatchSpec s = real;
  for (int i = static_cast<int>(real.req_pool_indices.size()); i < bs; ++i) {
    s.req_pool_indices.push_back(0);
    s.seq_lens.push_back(fill_value);
    for (int j = 0; j < width; ++j) s.out_cache_loc.push_back(0);
  }
  return s;
}

BatchInputs::BatchInputs(Device& device, int max_bs, int max_tokens)
    : device_(device),
      max_bs_(max_bs),
      max_tokens_(max_tokens),
      req_pool_indices_(device.allocate_zeroed(4LL * max_bs, MemKind::device, "engine.inputs.req_pool_indices")),
      seq_lens_(device.allocate_zeroed(4LL * max_bs, MemKind::device, "engine.inputs.seq_lens")),
      extend_prefix_lens_(device.allocate_zeroed(4LL * max_bs, MemKind::device, "engine.inputs.extend_prefix_lens")),
      extend_seq_lens_(device.allocate_zeroed(4LL * max_bs, MemKind::device, "engine.inputs.extend_seq_lens")),
      out_cache_loc_(device.allocate_zeroed(8LL * max_tokens, MemKind::device, "engine.inputs.out_cache_loc")) {}

ForwardBatch BatchInputs::load(const BatchSpec& s) {
  const int bs = static_cast<int>(s.req_pool_indices.size());
  const int tokens = static_cast<int>(s.out_cache_loc.size());
  if (bs > max_bs_ || tokens > max_tokens_ || s.seq_lens.size() != static_cast<std::size_t>(bs))
    throw std::logic_error("BatchInputs: batch of " + std::to_string(bs) + " requests / " + std::to_string(tokens) +
                           " tokens does not fit " + std::to_string(max_bs_) + " / " + std::to_string(max_tokens_));
  ForwardBatch fb;
  fb.forward_mode = s.forward_mode;
  fb.batch_size = bs;
  fb.num_tokens = tokens;
  fb.num_draft_tokens = s.num_draft_tokens;
  fb.req_pool_indices_cpu = s.req_pool_indices;
  fb.seq_lens_cpu = s.seq_lens;
  fb.extend_prefix_lens_cpu = s.extend_prefix_lens;
  fb.extend_seq_lens_cpu = s.extend_seq_lens;
  fb.out_cache_loc_cpu = s.out_cache_loc;
  device_.copy(req_pool_indices_.data(), s.req_pool_indices.data(), 4LL * bs);
  device_.copy(seq_lens_.data(), s.seq_lens.data(), 4LL * bs);
  device_.copy(out_cache_loc_.data(), s.out_cache_loc.data(), 8LL * tokens);
  fb.req_pool_indices = req_pool_indices_.as<std::int32_t>();
  fb.seq_lens = seq_lens_.as<std::int32_t>();
  fb.out_cache_loc = out_cache_loc_.as<std::int64_t>();
  if (s.forward_mode == ForwardMode::extend) {
    if (s.extend_prefix_lens.size() != static_cast<std::size_t>(bs) || s.extend_seq_lens.size() != static_cast<std::size_t>(bs))
      throw std::logic_error("BatchInputs: extend batch without prefix / extend lengths");
    device_.copy(extend_prefix_lens_.data(), s.extend_prefix_lens.data(), 4LL * bs);
    device_.copy(extend_seq_lens_.data(), s.extend_seq_lens.data(), 4LL * bs);
    fb.extend_prefix_lens = extend_prefix_lens_.as<std::int32_t>();
    fb.extend_seq_lens = extend_seq_lens_.as<std::int32_t>();
  }
  return fb;
}

}  // namespace attnbench
