#include "backends/attention_backend.hpp"

#include "kernels/kernel_table.hpp"

namespace attnbench {

void write_kv(const ModelRunner& mr, const AttentionIO& io, const Layer& layer, const ForwardBatch& fb) {
  const TokenToKVPool& pool = *mr.token_to_kv_pool;
  KvWriteParams p;
  p.k_new = io.k;                          // [num_tokens, num_kv_heads, head_dim]
  p.v_new = io.v;                          // [num_tokens, num_kv_heads, head_dim]
  p.out_cache_loc = fb.out_cache_loc;      // [num_tokens] pool slots
  p.k_cache = pool.k_buffer(layer.layer_id);  // [num_slots, num_kv_heads, head_dim]
  p.v_cache = pool.v_buffer(layer.layer_id);  // [num_slots, num_kv_heads, head_dim]
  p.num_tokens = fb.num_tokens;
  p.num_kv_heads = mr.model_config.num_kv_heads();
  p.head_dim = mr.model_config.head_dim;
  p.dtype = mr.model_config.dtype;
  p.cache_fp8 = mr.model_config.kv_dtype();  // fp8: quantized with the layer's scales
  p.k_scale = layer.k_scale;
  p.v_scale = layer.v_scale;
  mr.device.kernels().write_kv(p, mr.device.stream());
}

}  // namespace attnbench
