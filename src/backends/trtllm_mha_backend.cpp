#include "backends/trtllm_mha_backend.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/errors.hpp"
#include "core/units.hpp"
#include "kernels/kernel_table.hpp"

namespace attnbench {

namespace {

constexpr std::int64_t kDefaultWorkspaceBytes = 512 * MiB;   // DEFAULT_WORKSPACE_SIZE_MB (L63)
constexpr std::int64_t kXqaSemaphoreBytes = 8 * MiB;         // XQA: the workspace's first 8 MiB (decode.py L3519-3522)

// arange(0, n * step + 1, step) into a new device buffer.
Buffer arange_buffer(Device& device, int n, int step, const std::string& tag) {
  Buffer b = device.allocate(4LL * (n + 1), MemKind::device, tag);
  LengthsParams lp;
  lp.add = step;
  lp.indptr_out = b.as<std::int32_t>();
  lp.batch_size = n;
  device.kernels().lengths(lp, device.stream());
  return b;
}

}  // namespace

std::int64_t TrtllmMhaImpl::workspace_bytes_at_entry(const ProcessEnv& env) {
  return env.is_set("SGLANG_FLASHINFER_WORKSPACE_SIZE") ? env.get_int("SGLANG_FLASHINFER_WORKSPACE_SIZE", 0)
                                                        : kDefaultWorkspaceBytes;
}

DerivedFacts TrtllmMhaImpl::derived_facts(const ModelConfig&, const ServerArgs& args) {
  return {{"trtllm_workspace_bytes", std::to_string(workspace_bytes_at_entry(ProcessEnv(args)))}};
}

void TrtllmMhaImpl::validate(const ModelConfig& m, const ServerArgs& a) {
  const int p = a.page_size;
  if (p != 16 && p != 32 && p != 64 && p != 128)
    throw InputError("--page-size: trtllm_mha supports 16, 32, 64 or 128, got " + std::to_string(p) +
                     " (SGLang forces other values to 64: arg_groups/overrides.py L2173-2186)");
  // L220-243: page 128 needs GQA and a power-of-two head_dim equal to v_head_dim [uncertain: SGLang may check
  // this only for trtllm-gen (SM100); attnbench applies it everywhere].
  if (p == 128 && m.num_qo_heads() == m.num_kv_heads())
    throw InputError("--page-size: trtllm_mha with page size 128 needs grouped-query attention, but " + m.name +
                     " has " + std::to_string(m.num_qo_heads()) + " query and KV heads per rank");
}

TrtllmMhaImpl::TrtllmMhaImpl(ModelRunner& mr, std::int64_t workspace_bytes)
    : model_runner_(mr),
      device_(mr.device),
      num_qo_heads_(mr.model_config.num_qo_heads()),
      num_kv_heads_(mr.model_config.num_kv_heads()),
      head_dim_(mr.model_config.head_dim),
      page_size_(mr.server_args.page_size),
      dtype_(mr.model_config.dtype),
      max_context_len_(mr.context_len()),
      max_num_pages_(static_cast<int>(ceil_div(mr.context_len(), mr.server_args.page_size))),
      num_draft_tokens_(mr.server_args.speculative_num_draft_tokens) {
  validate(mr.model_config, mr.server_args);
  // T1 (L158-167): zero-initialised (XQA's semaphores and trtllm-gen's counters live in it), shared by name.
  workspace_buffer_ = device_.named_buffer("trtllm_mha_zero_workspace", workspace_bytes, MemKind::device,
                                           /*zeroed=*/true, "trtllm_mha.workspace_buffer");
  // T2 (L246-256 -> trtllm_mla_backend.py L92-107): B = max(8192, (R + 1) * max(1, N)); heads from the config
  // (not divided by TP); bytes = round_up(max(B * Hq, sm_count), 8) * 4.
  const std::int64_t b = std::max<std::int64_t>(
      8192, static_cast<std::int64_t>(mr.server_args.max_running_requests + 1) * std::max(1, num_draft_tokens_));
  const std::int64_t counters = round_up(std::max<std::int64_t>(b * mr.model_config.num_attention_heads, device_.sm_count()), 8);
  multi_ctas_kv_counter_buffer_ =
      device_.allocate_zeroed(counters * 4, MemKind::device, "trtllm_mha.multi_ctas_kv_counter_buffer");
  // T3 (L257-263): float32 ones [1], shared by name.
  const bool existed = device_.has_named_buffer("trtllm_mha_default_kv_scale");
  default_kv_scale_ = device_.named_buffer("trtllm_mha_default_kv_scale", 4, MemKind::device, false, "trtllm_mha.default_kv_scale");
  if (!existed) {
    const float one = 1.0f;
    device_.copy(default_kv_scale_->data(), &one, 4);
  }
}

Support TrtllmMhaImpl::supports(ForwardMode mode, bool cuda_graph, bool) const {
  // Sinks are passed to both TRTLLM kernels (L1163-1178, L1347-1405).
  switch (mode) {
    case ForwardMode::decode:
      return Support::yes();
    case ForwardMode::target_verify:
      if (cuda_graph && num_draft_tokens_ == 0)
        return Support::no("verify graphs need --speculative-num-draft-tokens (TRTLLM allocates verify graph state only then)");
      return Support::yes();
    case ForwardMode::extend:
      if (cuda_graph) return Support::no("SGLang captures decode and verify only; extend runs eagerly");
      return Support::yes("SGLang runs trtllm_mha extend only on SM100; on Hopper it serves decode only (server_args.py L5919-5928)");
  }
  return Support::no("unknown mode");
}

void TrtllmMhaImpl::init_cuda_graph_state(int max_bs, int max_num_tokens) {
  // L442-546; does not call super(): none of FlashInfer's graph buffers.
  (void)max_num_tokens;
  const std::int64_t table = 4LL * max_bs * max_num_pages_;
  decode_graph_.cache_seqlens = device_.allocate_zeroed(4LL * max_bs, MemKind::device, "trtllm_mha.decode_cuda_graph_metadata.cache_seqlens");
  decode_graph_.page_table = device_.allocate_zeroed(table, MemKind::device, "trtllm_mha.decode_cuda_graph_metadata.page_table");
  if (num_draft_tokens_ > 0) {
    const int n = num_draft_tokens_;
    decode_graph_.cu_seqlens_q = arange_buffer(device_, max_bs, 1, "trtllm_mha.decode_cuda_graph_metadata.cu_seqlens_q");
    decode_graph_.cu_seqlens_k = device_.allocate_zeroed(4LL * (max_bs + 1), MemKind::device, "trtllm_mha.decode_cuda_graph_metadata.cu_seqlens_k");
    page_table_draft_decode_ = device_.allocate_zeroed(table, MemKind::device, "trtllm_mha.decode_cuda_graph_metadata.page_table_draft_decode");
    target_verify_graph_.cache_seqlens = device_.allocate_zeroed(4LL * max_bs, MemKind::device, "trtllm_mha.target_verify_metadata.cache_seqlens");
    target_verify_graph_.cu_seqlens_q = arange_buffer(device_, max_bs, n, "trtllm_mha.target_verify_metadata.cu_seqlens_q");
    target_verify_graph_.cu_seqlens_k = device_.allocate_zeroed(4LL * (max_bs + 1), MemKind::device, "trtllm_mha.target_verify_metadata.cu_seqlens_k");
    target_verify_graph_.page_table = device_.allocate_zeroed(table, MemKind::device, "trtllm_mha.target_verify_metadata.page_table");
    draft_extend_graph_.cache_seqlens = device_.allocate_zeroed(4LL * max_bs, MemKind::device, "trtllm_mha.draft_extend_metadata.cache_seqlens");
    draft_extend_graph_.cu_seqlens_q = device_.allocate_zeroed(4LL * (max_bs + 1), MemKind::device, "trtllm_mha.draft_extend_metadata.cu_seqlens_q");
    draft_extend_graph_.cu_seqlens_k = device_.allocate_zeroed(4LL * (max_bs + 1), MemKind::device, "trtllm_mha.draft_extend_metadata.cu_seqlens_k");
    draft_extend_graph_.page_table = device_.allocate_zeroed(table, MemKind::device, "trtllm_mha.draft_extend_metadata.page_table");
  }
}

void TrtllmMhaImpl::build_page_table(const ForwardBatch& fb, const Metadata& md) const {
  // build_trtllm_mha_page_table: page_table[i, p] = req_to_token[req_i, p * P] // P for p < cdiv(cache_seqlen, P).
  PageTableParams pp;
  pp.req_to_token = model_runner_.req_to_token_pool->device_data();
  pp.req_to_token_stride = model_runner_.req_to_token_pool->width();
  pp.req_pool_indices = fb.req_pool_indices;
  pp.seq_lens = md.cache_seqlens_int32;
  pp.page_table = md.page_table;
  pp.max_num_pages = max_num_pages_;
  pp.page_size = page_size_;
  pp.batch_size = fb.batch_size;
  device_.kernels().build_page_table(pp, device_.stream());
}

void TrtllmMhaImpl::init_forward_metadata(const ForwardBatch& fb) {
  // Eager (L929-1052): every tensor of TRTLLMMHAMetadata is new this step.
  const int bs = fb.batch_size;
  Metadata md;
  md.batch_size = bs;
  md.cache_seqlens_buf = device_.allocate(4LL * bs, MemKind::device, "trtllm_mha.forward_metadata.cache_seqlens_int32");
  md.cu_seqlens_k_buf = device_.allocate(4LL * (bs + 1), MemKind::device, "trtllm_mha.forward_metadata.cu_seqlens_k");
  md.cache_seqlens_int32 = md.cache_seqlens_buf.as<std::int32_t>();
  md.cu_seqlens_k = md.cu_seqlens_k_buf.as<std::int32_t>();
  LengthsParams lp;  // cache_seqlens = seq_lens (+ t for verify); cu_seqlens_k = pad(cumsum(cache_seqlens))
  lp.seq_lens = fb.seq_lens;
  lp.lens_out = md.cache_seqlens_int32;
  lp.indptr_out = md.cu_seqlens_k;
  lp.batch_size = bs;
  switch (fb.forward_mode) {
    case ForwardMode::decode:
      device_.kernels().lengths(lp, device_.stream());
      md.cu_seqlens_q_buf = arange_buffer(device_, bs, 1, "trtllm_mha.forward_metadata.cu_seqlens_q");
      md.cu_seqlens_q = md.cu_seqlens_q_buf.as<std::int32_t>();
      md.max_seq_len_q = 1;
      break;
    case ForwardMode::target_verify:
      lp.add = fb.num_draft_tokens;
      device_.kernels().lengths(lp, device_.stream());
      md.cu_seqlens_q_buf = arange_buffer(device_, bs, fb.num_draft_tokens, "trtllm_mha.forward_metadata.cu_seqlens_q");
      md.cu_seqlens_q = md.cu_seqlens_q_buf.as<std::int32_t>();
      md.max_seq_len_q = fb.num_draft_tokens;
      break;
    case ForwardMode::extend: {
      device_.kernels().lengths(lp, device_.stream());
      if (fb.extend_no_prefix()) {
        md.cu_seqlens_q = md.cu_seqlens_k;  // the same tensor
      } else {
        md.cu_seqlens_q_buf = device_.allocate(4LL * (bs + 1), MemKind::device, "trtllm_mha.forward_metadata.cu_seqlens_q");
        md.cu_seqlens_q = md.cu_seqlens_q_buf.as<std::int32_t>();
        LengthsParams qp;
        qp.seq_lens = fb.extend_seq_lens;
        qp.indptr_out = md.cu_seqlens_q;
        qp.batch_size = bs;
        device_.kernels().lengths(qp, device_.stream());
      }
      md.max_seq_len_q = *std::max_element(fb.extend_seq_lens_cpu.begin(), fb.extend_seq_lens_cpu.end());
      break;
    }
  }
  // L1019-1029: page_table = torch.empty((bs, max_num_pages)): new every step; its tail stays unwritten.
  md.page_table_buf = device_.allocate(4LL * bs * max_num_pages_, MemKind::device, "trtllm_mha.forward_metadata.page_table");
  md.page_table = md.page_table_buf.as<std::int32_t>();
  build_page_table(fb, md);
  eager_metadata_ = std::move(md);
  forward_metadata_ = &eager_metadata_;
}

void TrtllmMhaImpl::init_forward_metadata_out_graph(const ForwardBatch& fb, bool in_capture) {
  // L835-866 -> _build_cuda_graph_metadata (L548-665): slices of the static buffers; new tensors only for
  // decode's cu_seqlens_q / cu_seqlens_k. At replay: forward_metadata = dict[bs].
  const int bs = fb.batch_size;
  if (fb.forward_mode == ForwardMode::decode) {
    if (!decode_graph_.page_table.allocated()) throw std::logic_error("trtllm_mha: init_cuda_graph_state was not called");
    if (in_capture) {
      Metadata md;
      md.batch_size = bs;
      md.cu_seqlens_q_buf = arange_buffer(device_, bs, 1, "trtllm_mha.decode_cuda_graph_metadata[bs].cu_seqlens_q");
      md.cu_seqlens_k_buf = device_.allocate_zeroed(4LL * (bs + 1), MemKind::device, "trtllm_mha.decode_cuda_graph_metadata[bs].cu_seqlens_k");
      md.cu_seqlens_q = md.cu_seqlens_q_buf.as<std::int32_t>();
      md.cu_seqlens_k = md.cu_seqlens_k_buf.as<std::int32_t>();
      md.cache_seqlens_int32 = decode_graph_.cache_seqlens.as<std::int32_t>();
      md.page_table = decode_graph_.page_table.as<std::int32_t>();
      md.max_seq_len_q = 1;
      decode_cuda_graph_metadata_[bs] = std::move(md);
    }
    forward_metadata_ = &decode_cuda_graph_metadata_.at(bs);
  } else if (fb.forward_mode == ForwardMode::target_verify) {
    if (!target_verify_graph_.page_table.allocated())
      throw Unsupported("trtllm_mha: verify graphs need --speculative-num-draft-tokens");
    if (in_capture) {
      Metadata md;
      md.batch_size = bs;
      md.cache_seqlens_int32 = target_verify_graph_.cache_seqlens.as<std::int32_t>();
      md.cu_seqlens_q = target_verify_graph_.cu_seqlens_q.as<std::int32_t>();
      md.cu_seqlens_k = target_verify_graph_.cu_seqlens_k.as<std::int32_t>();
      md.page_table = target_verify_graph_.page_table.as<std::int32_t>();
      md.max_seq_len_q = num_draft_tokens_;
      target_verify_metadata_[bs] = std::move(md);
    }
    forward_metadata_ = &target_verify_metadata_.at(bs);
  } else {
    throw Unsupported("trtllm_mha: extend is not captured in CUDA graphs");
  }
}

void TrtllmMhaImpl::init_forward_metadata_in_graph(const ForwardBatch& fb) {
  // L919-927 -> _apply_cuda_graph_metadata (L677-781): recorded in the graph, so every replay refreshes
  // cache_seqlens (+ offset), cu_seqlens_k and the page-table rows on the device.
  const Metadata& md = *forward_metadata_;
  LengthsParams lp;
  lp.seq_lens = fb.seq_lens;
  lp.add = fb.forward_mode == ForwardMode::target_verify ? num_draft_tokens_ : 0;
  lp.lens_out = md.cache_seqlens_int32;
  lp.indptr_out = md.cu_seqlens_k;
  lp.batch_size = fb.batch_size;
  device_.kernels().lengths(lp, device_.stream());
  build_page_table(fb, md);
}

void TrtllmMhaImpl::attend(const AttentionIO& io, const Layer& layer, const Metadata& md, bool decode_kernel,
                           int q_len_per_req, int total_q) const {
  const TokenToKVPool& pool = *model_runner_.token_to_kv_pool;
  AttentionParams p;
  p.q = io.q;
  p.o = io.o;
  p.addressing = KvAddressing::block_table;  // the pool viewed as HND pages of NHD storage (L1054-1068)
  p.k = pool.k_buffer(layer.layer_id);
  p.v = pool.v_buffer(layer.layer_id);
  p.kv_lens = md.cache_seqlens_int32;
  p.page_table = md.page_table;
  p.page_table_stride = max_num_pages_;
  p.page_size = page_size_;
  p.batch_size = md.batch_size;
  p.total_q = total_q;
  p.max_q_len = md.max_seq_len_q;
  p.max_kv_len = max_context_len_;  // max_seq_len = self.max_context_len, not the batch max (L1163-1178)
  p.num_qo_heads = num_qo_heads_;
  p.num_kv_heads = num_kv_heads_;
  p.head_dim = head_dim_;
  p.dtype = dtype_;
  p.causal = true;
  p.window_left = layer.sliding_window_size;  // the kernel applies the window (no trimming)
  p.sm_scale = layer.scaling;                 // bmm1_scale for bf16 KV; bmm2_scale = 1
  p.sinks = layer.sinks;
  if (decode_kernel) {
    p.qo_indptr = nullptr;
    p.q_len_per_req = q_len_per_req;
    // Multi-CTA mode: few (request, KV head) units split each request evenly over the idle SMs; decided from
    // the batch shape only, so it holds for every replay of a graph. Scratch after XQA's 8 MiB of semaphores.
    const std::int64_t units = static_cast<std::int64_t>(md.batch_size) * num_kv_heads_;
    const std::int64_t max_grid = 2LL * device_.sm_count();
    p.max_num_chunks = static_cast<int>(std::max<std::int64_t>(1, max_grid / std::max<std::int64_t>(1, units)));
    p.kv_chunk_size = p.max_num_chunks > 1 ? kSplitKvEven : 0;
    p.workspace = static_cast<char*>(workspace_buffer_->data()) + kXqaSemaphoreBytes;
    p.workspace_bytes = split_kv_workspace_bytes(total_q, p.max_num_chunks, num_qo_heads_, head_dim_);
    if (p.workspace_bytes > workspace_buffer_->bytes() - kXqaSemaphoreBytes)
      throw std::runtime_error("trtllm_mha: multi-CTA scratch exceeds the workspace");
    device_.kernels().attention_decode(p, device_.stream());
  } else {
    p.qo_indptr = md.cu_seqlens_q;
    device_.kernels().attention_prefill(p, device_.stream());
  }
}

void TrtllmMhaImpl::forward_decode(const AttentionIO& io, const Layer& layer, const ForwardBatch& fb, bool save_kv_cache) {
  // L1093-1182: KV write, then trtllm_batch_decode_with_kv_cache (XQA on SM90).
  if (save_kv_cache) write_kv(model_runner_, io, layer, fb);
  attend(io, layer, *forward_metadata_, /*decode_kernel=*/true, 1, fb.batch_size);
}

void TrtllmMhaImpl::forward_extend(const AttentionIO& io, const Layer& layer, const ForwardBatch& fb, bool save_kv_cache) {
  // L1184-1408: KV write first. TARGET_VERIFY goes through the decode kernel with q_len_per_req = N;
  // plain EXTEND through trtllm_batch_context_with_kv_cache.
  if (save_kv_cache) write_kv(model_runner_, io, layer, fb);
  if (fb.forward_mode == ForwardMode::target_verify) {
    attend(io, layer, *forward_metadata_, /*decode_kernel=*/true, fb.num_draft_tokens, fb.num_tokens);
    return;
  }
  // multi_ctas_kv_counter_buffer is not passed to the context call, so FlashInfer allocates a zeroed counter
  // buffer per call (per layer): round_up(max(bs * Hq, sm_count), 8) * 4 bytes (prefill.py ~L4718-4738).
  const std::int64_t counters =
      round_up(std::max<std::int64_t>(static_cast<std::int64_t>(fb.batch_size) * num_qo_heads_, device_.sm_count()), 8);
  Buffer scratch = device_.allocate_zeroed(counters * 4, MemKind::device, "trtllm_mha.forward_extend.multi_ctas_kv_counter");
  attend(io, layer, *forward_metadata_, /*decode_kernel=*/false, 0, fb.num_tokens);
}

// ---------------------------------------------------------------------------------------------------------

TrtllmMhaBackend::TrtllmMhaBackend(ModelRunner& mr) : TrtllmMhaMethods(mr, TrtllmMhaImpl::workspace_bytes_at_entry(mr)) {
  if (mr.server_args.trtllm_keep_indptr) {
    const int max_bs = mr.server_args.max_running_requests;
    kv_indptr_ = mr.device.allocate_zeroed(4LL * (max_bs + 1), MemKind::device, "trtllm_mha.kv_indptr");
    kv_last_page_len_ = mr.device.allocate(4LL * max_bs, MemKind::device, "trtllm_mha.kv_last_page_len");
    const std::vector<std::int32_t> ones(static_cast<std::size_t>(max_bs), 1);
    mr.device.copy(kv_last_page_len_.data(), ones.data(), 4LL * max_bs);
  }
}

}  // namespace attnbench
