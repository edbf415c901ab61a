#include "backends/trtllm_mha_backend.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <vector>

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

// Whether SGLang's page-size-128 check (GQA only) applies on `arch` (0: not known yet). 0.5.23 runs it only
// off XQA, for trtllm-gen on SM100 (trtllm_mha_backend.py L374-390; XQA has native page 128); at 30cb848d4 it
// sat in the constructor (L220-243) and attnbench applies it on every architecture [uncertain there].
bool page128_check_applies(const ServerArgs& a, int arch) {
  if (!a.profile().page128_check_off_xqa_only) return true;
  return arch != 0 && !is_xqa_arch(arch);
}

std::string page128_check_where(const ServerArgs& a) {
  return a.profile().page128_check_off_xqa_only
             ? " (SGLang " + a.profile().version + " checks it for trtllm-gen on SM100: trtllm_mha_backend.py L374-390)"
             : " (SGLang " + a.profile().version + "'s constructor, trtllm_mha_backend.py L220-243)";
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
  if (p == 128 && m.num_qo_heads() == m.num_kv_heads() && page128_check_applies(a, a.arch))
    throw InputError("--page-size: trtllm_mha with page size 128 needs grouped-query attention, but " + m.name +
                     " has " + std::to_string(m.num_qo_heads()) + " query and KV heads per rank" +
                     page128_check_where(a));
}

TrtllmMhaImpl::TrtllmMhaImpl(ModelRunner& mr, std::int64_t workspace_bytes)
    : model_runner_(mr),
      device_(mr.device),
      num_qo_heads_(mr.model_config.num_qo_heads()),
      num_kv_heads_(mr.model_config.num_kv_heads()),
      head_dim_(mr.model_config.head_dim),
      page_size_(mr.server_args.page_size),
      dtype_(mr.model_config.dtype),
      kv_dtype_(mr.model_config.kv_dtype()),
      max_context_len_(mr.context_len()),
      max_num_pages_(static_cast<int>(ceil_div(mr.context_len(), mr.server_args.page_size))),
      num_draft_tokens_(mr.server_args.speculative_num_draft_tokens),
      arch_(mr.arch()) {
  validate(mr.model_config, mr.server_args);
  const SglangProfile& profile = mr.profile();
  use_fmha_v2_ = profile.fmha_v2_prefill && is_xqa_arch(arch_);  // 0.5.23 L367
  if (profile.decode_seq_len_splits) decode_seq_len_splits_ = mr.server_args.trtllm_decode_seq_len_splits;  // L410-415
  // T1 (30cb848d4 L158-167; 0.5.23 L306-317): zero-initialised (XQA's semaphores and trtllm-gen's counters live
  // in it), shared by name. 0.5.23 puts XQA's 8 MiB of semaphores before W on SM90/SM120 (semaphore_bytes,
  // L308), and fmha_v2 gets the view after them (fmha_v2_workspace_buffer = T1[semaphore_bytes:], L318).
  semaphore_bytes_ = profile.xqa_semaphore_prefix && is_xqa_arch(arch_) ? kXqaSemaphoreBytes : 0;
  workspace_buffer_ = device_.named_buffer("trtllm_mha_zero_workspace", semaphore_bytes_ + workspace_bytes,
                                           MemKind::device, /*zeroed=*/true, "trtllm_mha.workspace_buffer");
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
  // T4 (0.5.23 L416-427): on XQA with speculative decoding, the verify mask [R + 1, N, 2 * ceil(N / 32)]
  // uint16, built on the host and copied over. Chain drafts (topk 1): draft token i sees draft tokens 0..i;
  // bit j of a row's 32-bit words (little-endian pairs of uint16) marks key j.
  if (profile.xqa_spec_dec_mask && is_xqa_arch(arch_) && num_draft_tokens_ > 0) {
    const std::int64_t n = num_draft_tokens_, words = 2 * ceil_div(n, 32);
    const std::int64_t rows = static_cast<std::int64_t>(mr.server_args.max_running_requests) + 1;
    std::vector<std::uint16_t> one(static_cast<std::size_t>(n * words), 0);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j <= i; ++j) one[i * words + (j / 16)] |= static_cast<std::uint16_t>(1u << (j % 16));
    std::vector<std::uint16_t> mask;
    mask.reserve(static_cast<std::size_t>(rows * n * words));
    for (std::int64_t r = 0; r < rows; ++r) mask.insert(mask.end(), one.begin(), one.end());
    xqa_spec_dec_mask_ = device_.allocate(2 * rows * n * words, MemKind::device, "trtllm_mha.xqa_spec_dec_mask");
    device_.copy(xqa_spec_dec_mask_.data(), mask.data(), 2 * rows * n * words);
  }
}

namespace {
// The note every row of a capped model gets: SGLang's trtllm_mha ignores layer.logit_cap (kAppliesLogitCap).
Support with_cap_note(Support s, const ModelConfig& m) {
  if (!s.ok || m.attn_logit_cap <= 0.0f) return s;
  std::ostringstream os;
  os << "uncapped: SGLang's trtllm_mha passes no logit soft cap to its kernels (the model's " << m.attn_logit_cap
     << " is ignored)";
  s.reason = s.reason.empty() ? os.str() : s.reason + "; " + os.str();
  return s;
}
}  // namespace

Support TrtllmMhaImpl::supports(const StepKind& step) const {
  return with_cap_note(supports_mode(step), model_runner_.model_config);
}

Support TrtllmMhaImpl::supports_mode(const StepKind& step) const {
  const ForwardMode mode = step.mode;
  const bool cuda_graph = step.cuda_graph;
  // The architecture is known here (--arch or the device's), not always when the options were checked.
  const ModelConfig& m = model_runner_.model_config;
  if (page_size_ == 128 && m.num_qo_heads() == m.num_kv_heads() && page128_check_applies(model_runner_.server_args, arch_))
    return Support::no("SGLang refuses trtllm_mha at page size 128 without grouped-query attention on " +
                       arch_name(arch_) + page128_check_where(model_runner_.server_args));
  // --dtype float32 (FlashInfer 0.7.2, SglangProfile::flashinfer_rejects_fp32): on SM90 / SM120 decode and verify
  // run XQA (trtllm_batch_decode_with_kv_cache backend "auto", decode.py L4113-4116), whose module generator takes
  // fp16 / bf16 q only (jit/xqa.py L64-71: ValueError); extend runs fmha_v2, whose generator knows fp16 / bf16 / e4m3
  // only (jit/attention/modules.py L2561-2566: KeyError). SM100 (trtllm-gen) is not established: not ruled.
  if (dtype_ == DType::fp32 && model_runner_.profile().flashinfer_rejects_fp32 && is_xqa_arch(arch_)) {
    if (mode != ForwardMode::extend)
      return Support::no("SGLang 0.5.23's trtllm_mha cannot run --dtype float32 on " + arch_name(arch_) +
                         ": XQA takes fp16 / bf16 q only (FlashInfer 0.7.2 flashinfer/jit/xqa.py L64-71, "
                         "ValueError \"Invalid dtype: torch.float32 for XQA\")");
    if (use_fmha_v2_)
      return Support::no("SGLang 0.5.23's trtllm_mha cannot run --dtype float32 on " + arch_name(arch_) +
                         ": fmha_v2 prefill builds fp16 / bf16 / e4m3 modules only (FlashInfer 0.7.2 "
                         "flashinfer/jit/attention/modules.py L2561-2566, KeyError torch.float32)");
  }
  // --kv-cache-dtype fp8_e5m2 (SglangProfile::trtllm_reads_e4m3_only): accepted, but on SM90 / SM120 XQA and
  // fmha_v2 would read the e5m2 pool as 16-bit values (trtllm_mha_backend.py tests float8_e4m3fn only: L699, L1066,
  // L1638, L1758). attnbench does not model a misread cache: the row is skipped with that reason.
  if (kv_dtype_ == DType::fp8_e5m2 && model_runner_.profile().trtllm_reads_e4m3_only && is_xqa_arch(arch_))
    return Support::no("SGLang 0.5.23's trtllm_mha handles fp8_e4m3 only: on " + arch_name(arch_) +
                       " XQA / fmha_v2 would read an fp8_e5m2 pool as 16-bit values (FlashInfer 0.7.2 "
                       "flashinfer/jit/xqa.py L73-80, CACHE_ELEM_ENUM=0; prefill.py L7774-7778), not modelled");
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
      if (use_fmha_v2_ && arch_ == 120 && kv_dtype_ == DType::fp8_e4m3)  // attention_hook.py L207-221
        return Support::no("SGLang 0.5.23 rejects trtllm_mha prefill with --kv-cache-dtype fp8_e4m3 on SM120 "
                           "(arg_groups/attention_hook.py L207-221; FlashInfer's fmha_v2 rejects FP8 e4m3 on SM12x, "
                           "prefill.py L7761-7766)");
      if (use_fmha_v2_)  // 0.5.23 arg_groups/attention_hook.py L198-237; trtllm_mha_backend.py L1890-1921
        return Support::yes(std::string("fmha_v2 prefill (") + arch_name(arch_) + ", " +
                            (model_runner_.token_to_kv_pool && !model_runner_.token_to_kv_pool->fused_kv()
                                 ? "separate K/V pool: the batch's pages copied every layer"
                                 : "fused K/V pool: no copy") +
                            ")");
      if (arch_ == 100) return Support::yes("trtllm_batch_context_with_kv_cache (sm100)");
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

void TrtllmMhaImpl::build_page_table(const ForwardBatch& fb, const Metadata& md, std::int32_t* table,
                                     std::int64_t row_stride, std::int32_t add) const {
  // build_trtllm_mha_page_table: page_table[i, p] = req_to_token[req_i, p * P] // P for p < cdiv(cache_seqlen, P).
  PageTableParams pp;
  pp.req_to_token = model_runner_.req_to_token_pool->device_data();
  pp.req_to_token_stride = model_runner_.req_to_token_pool->width();
  pp.req_pool_indices = fb.req_pool_indices;
  pp.seq_lens = md.cache_seqlens_int32;
  pp.page_table = table ? table : md.page_table;
  pp.row_stride = row_stride;
  pp.add = add;
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
  if (fb.forward_mode == ForwardMode::extend && use_fmha_v2_) init_fmha_v2_batch_pages(fb, md);  // 0.5.23 L1338-1339
  if (fb.forward_mode != ForwardMode::extend) set_split_order(fb, md);
  eager_metadata_ = std::move(md);
  forward_metadata_ = &eager_metadata_;
}

void TrtllmMhaImpl::init_fmha_v2_batch_pages(const ForwardBatch& fb, Metadata& md) const {
  // _init_fmha_v2_batch_pages (0.5.23 L1400-1436): runs every EXTEND forward on SM90/SM120, even when the
  // no-copy fast path later leaves its tensors unused. Host: pages per request from seq_lens_cpu, TP = their
  // sum, Mb = their max. Device: num_pages, first = cumsum - num_pages, copy_rows = repeat_interleave,
  // copy_cols = arange(TP) - first[rows], block_table = clamp(first[:, None] + arange(Mb), max=TP-1), each
  // with the temporaries its torch ops make. SGLang computes them with torch ops on the device; attnbench
  // computes them on the host and copies them over (a few KiB), allocating the same tensors and temporaries.
  const int bs = fb.batch_size;
  std::vector<std::int64_t> num_pages(static_cast<std::size_t>(bs)), first(static_cast<std::size_t>(bs));
  std::int64_t total = 0, most = 0;
  for (int i = 0; i < bs; ++i) {
    num_pages[i] = ceil_div(fb.seq_lens_cpu[i], page_size_);
    first[i] = total;
    total += num_pages[i];
    most = std::max(most, num_pages[i]);
  }
  if (total == 0) return;  // L1409-1419: nothing allocated
  std::vector<std::int64_t> rows, cols;
  rows.reserve(static_cast<std::size_t>(total));
  cols.reserve(static_cast<std::size_t>(total));
  for (int i = 0; i < bs; ++i)
    for (std::int64_t c = 0; c < num_pages[i]; ++c) {
      rows.push_back(i);
      cols.push_back(c);
    }
  // The block table in the kernel's units: block b of the copied [TP, 2, P, Hkv, D] tensor starts 2 * b
  // pages in (K), its V one page later; SGLang's values are b (its kernel reads [pages, 2, ...] blocks).
  std::vector<std::int32_t> table(static_cast<std::size_t>(bs * most));
  for (int i = 0; i < bs; ++i)
    for (std::int64_t j = 0; j < most; ++j)
      table[i * most + j] = static_cast<std::int32_t>(2 * std::min(first[i] + j, total - 1));
  const std::string t = "trtllm_mha.forward_metadata.fmha_v2_";
  {
    Buffer tmp = device_.allocate(4LL * bs, MemKind::device, t + "num_pages_int32_tmp");  // ceil(...) in int32
    md.fmha_v2_num_pages = device_.allocate(8LL * bs, MemKind::device, t + "num_pages");
  }
  {
    Buffer tmp = device_.allocate(8LL * bs, MemKind::device, t + "cumsum_tmp");
    md.fmha_v2_first = device_.allocate(8LL * bs, MemKind::device, t + "first");
  }
  md.fmha_v2_copy_rows = device_.allocate(8 * total, MemKind::device, t + "copy_rows");
  {
    Buffer tmp1 = device_.allocate(8 * total, MemKind::device, t + "arange_tmp");
    Buffer tmp2 = device_.allocate(8 * total, MemKind::device, t + "gather_tmp");
    md.fmha_v2_copy_cols = device_.allocate(8 * total, MemKind::device, t + "copy_cols");
  }
  {
    Buffer tmp = device_.allocate(8LL * bs * most, MemKind::device, t + "block_table_int64_tmp");
    md.fmha_v2_block_table = device_.allocate(4LL * bs * most, MemKind::device, t + "block_table");
  }
  device_.copy(md.fmha_v2_num_pages.data(), num_pages.data(), 8LL * bs);
  device_.copy(md.fmha_v2_first.data(), first.data(), 8LL * bs);
  device_.copy(md.fmha_v2_copy_rows.data(), rows.data(), 8 * total);
  device_.copy(md.fmha_v2_copy_cols.data(), cols.data(), 8 * total);
  device_.copy(md.fmha_v2_block_table.data(), table.data(), 4LL * bs * most);
  md.fmha_v2_total_pages = total;
  md.fmha_v2_max_pages = static_cast<int>(most);
  const TokenToKVPool* pool = model_runner_.token_to_kv_pool;
  if (pool && !pool->fused_kv()) {
    // The slow path gathers page_table[rows, cols]; torch builds this flat index internally.
    std::vector<std::int32_t> flat(static_cast<std::size_t>(total));
    for (std::int64_t k = 0; k < total; ++k) flat[k] = static_cast<std::int32_t>(rows[k] * max_num_pages_ + cols[k]);
    md.fmha_v2_page_index = device_.allocate(4 * total, MemKind::device, t + "page_index");
    device_.copy(md.fmha_v2_page_index.data(), flat.data(), 4 * total);
  }
}

void TrtllmMhaImpl::set_split_order(const ForwardBatch& fb, Metadata& md) const {
  // SGLANG_TRTLLM_MHA_DECODE_SEQ_LEN_SPLITS (0.5.23 L1531-1561): order = argsort(seq_lens). SGLang sorts on the
  // device every layer; attnbench sorts the host copy once per step (stable, so runs repeat) and copies it
  // over; the per-layer gathers and scatters run on the device as SGLang's do.
  const int bs = fb.batch_size;
  if (decode_seq_len_splits_ <= 1 || std::min(decode_seq_len_splits_, bs) <= 1) return;
  std::vector<std::int32_t> order(static_cast<std::size_t>(bs));
  for (int i = 0; i < bs; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int32_t a, std::int32_t b) { return fb.seq_lens_cpu[a] < fb.seq_lens_cpu[b]; });
  if (!md.split_order.allocated() || md.split_order.bytes() < 4LL * bs)
    md.split_order = device_.allocate(4LL * bs, MemKind::device, "trtllm_mha.forward_decode.seq_len_order");
  device_.copy(md.split_order.data(), order.data(), 4LL * bs);
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
    set_split_order(fb, decode_cuda_graph_metadata_.at(bs));
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
    set_split_order(fb, target_verify_metadata_.at(bs));
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

void TrtllmMhaImpl::copy_rows(void* dst, const void* src, const std::int32_t* dst_index, const std::int32_t* src_index,
                              std::int64_t rows, std::int64_t row_bytes, std::int64_t dst_row_stride) const {
  CopyRowsParams c;
  c.dst = dst;
  c.src = src;
  c.dst_index = dst_index;
  c.src_index = src_index;
  c.rows = rows;
  c.row_bytes = row_bytes;
  c.dst_row_stride = dst_row_stride;
  device_.kernels().copy_rows(c, device_.stream());
}

AttentionParams TrtllmMhaImpl::attention_params(const AttentionIO& io, const Layer& layer, const Metadata& md,
                                                int total_q) const {
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
  // The one place this backend decides the cap: none, as SGLang passes none to these kernels (kAppliesLogitCap,
  // trtllm_mha_backend.hpp, which cites the lines). Every kernel call of this backend starts from these params.
  p.logits_soft_cap = kAppliesLogitCap ? layer.logit_cap : 0.0f;
  p.sinks = layer.sinks;
  // fp8 KV (_get_bmm_scales L425-440): bmm1_scale = q_scale * k_scale * scaling, bmm2_scale = v_scale, q_scale
  // 1.0; the kernels fold k_scale / v_scale the same way (kernels/params.hpp).
  p.kv_fp8 = kv_dtype_;
  p.k_scale = layer.k_scale;
  p.v_scale = layer.v_scale;
  return p;
}

Buffer TrtllmMhaImpl::cast_q(const AttentionIO& io, int total_q, bool decode_kernel, AttentionParams& p) const {
  // q is cast to the fp8 KV dtype iff KV is fp8 and (not XQA or not a decode-kernel mode) (0.5.23 L1757-1762;
  // decode L1134-1138): on SM90 the fmha_v2 extend takes fp8 q, XQA's decode / verify take q in the model dtype.
  // q.to(dtype) allocates [T, Hq, D] fp8 per layer; q_scale is 1.0.
  if (!is_fp8(kv_dtype_) || (is_xqa_arch(arch_) && decode_kernel)) return Buffer();
  Buffer q8 = device_.allocate(static_cast<std::int64_t>(total_q) * num_qo_heads_ * head_dim_, MemKind::device,
                               "trtllm_mha.forward.q_fp8");
  KvWriteParams w;
  w.k_new = io.q;
  w.k_cache = q8.data();
  w.num_tokens = total_q;
  w.num_kv_heads = num_qo_heads_;
  w.head_dim = head_dim_;
  w.dtype = dtype_;
  w.cache_fp8 = kv_dtype_;
  device_.kernels().write_kv(w, device_.stream());
  p.q = q8.data();
  p.q_fp8 = true;
  return q8;
}

void TrtllmMhaImpl::attend(const AttentionIO& io, const Layer& layer, const Metadata& md, bool decode_kernel,
                           int q_len_per_req, int total_q) const {
  AttentionParams p = attention_params(io, layer, md, total_q);
  const Buffer q8 = cast_q(io, total_q, decode_kernel, p);
  if (decode_kernel) {
    p.qo_indptr = nullptr;
    p.q_len_per_req = q_len_per_req;
    const int splits = std::min(decode_seq_len_splits_, md.batch_size);
    if (splits <= 1 || !md.split_order.allocated()) {
      attend_decode(p, q_len_per_req);
      return;
    }
    // Seq-len splits (0.5.23 L1535-1561), per layer: the batch sorted by length runs in `splits` groups; each
    // group's q rows, block-table rows and lengths are index_select-ed, FlashInfer allocates the group's
    // output, which index_copy_ puts back in place. Groups as torch.tensor_split cuts [bs] in `splits`
    // [unverified: SGLang's exact grouping of the sorted order].
    const int bs = md.batch_size;
    const std::int64_t qrow = static_cast<std::int64_t>(q_len_per_req) * num_qo_heads_ * head_dim_ * dtype_size(dtype_);
    if (p.q_fp8) throw Unsupported("trtllm_mha: seq-len splits with an fp8 q (trtllm-gen) are not modelled");
    const std::int64_t trow = 4LL * p.page_table_stride;
    const auto* order = md.split_order.as<std::int32_t>();
    const std::string t = "trtllm_mha.forward_decode.split_";
    for (int g = 0, start = 0; g < splits; ++g) {
      const int n = bs / splits + (g < bs % splits ? 1 : 0);
      const std::int32_t* idx = order + start;
      start += n;
      Buffer q = device_.allocate(n * qrow, MemKind::device, t + "q");
      Buffer table = device_.allocate(n * trow, MemKind::device, t + "block_tables");
      Buffer lens = device_.allocate(4LL * n, MemKind::device, t + "seq_lens");
      copy_rows(q.data(), io.q, nullptr, idx, n, qrow);
      copy_rows(table.data(), md.page_table, nullptr, idx, n, trow);
      copy_rows(lens.data(), md.cache_seqlens_int32, nullptr, idx, n, 4);
      Buffer out = device_.allocate(n * qrow, MemKind::device, t + "out");  // FlashInfer's empty_like(query)
      AttentionParams gp = p;
      gp.q = q.data();
      gp.o = out.data();
      gp.page_table = table.as<std::int32_t>();
      gp.kv_lens = lens.as<std::int32_t>();
      gp.batch_size = n;
      gp.total_q = n * q_len_per_req;
      attend_decode(gp, q_len_per_req);
      copy_rows(io.o, out.data(), idx, nullptr, n, qrow);
    }
  } else {
    p.qo_indptr = md.cu_seqlens_q;
    device_.kernels().attention_prefill(p, device_.stream());
  }
}

void TrtllmMhaImpl::attend_decode(const AttentionParams& base, int q_len_per_req) const {
  // Multi-CTA mode: few (request, KV head) units split each request evenly over the idle SMs; decided from
  // the batch shape only, so it holds for every replay of a graph. Scratch after XQA's 8 MiB of semaphores
  // (the semaphores are T1's prefix in 0.5.23 on SM90, carved from W before: the scratch starts 8 MiB in
  // either way, xqa_batch_decode_with_kv_cache L4719-4721).
  AttentionParams p = base;
  const std::int64_t units = static_cast<std::int64_t>(p.batch_size) * num_kv_heads_;
  const std::int64_t max_grid = 2LL * device_.sm_count();
  p.max_num_chunks = static_cast<int>(std::max<std::int64_t>(1, max_grid / std::max<std::int64_t>(1, units)));
  p.kv_chunk_size = p.max_num_chunks > 1 ? kSplitKvEven : 0;
  p.workspace = static_cast<char*>(workspace_buffer_->data()) + kXqaSemaphoreBytes;
  p.workspace_bytes = split_kv_workspace_bytes(p.total_q, p.max_num_chunks, num_qo_heads_, head_dim_);
  if (p.workspace_bytes > workspace_buffer_->bytes() - kXqaSemaphoreBytes)
    throw std::runtime_error("trtllm_mha: multi-CTA scratch exceeds the workspace");
  // The partial states are merged in the decode kernel, as XQA's multi-block mode does: through the semaphores
  // at the start of the (zero-initialised) workspace on SM90 / SM120, trtllm-gen's multi-CTA counters elsewhere
  // (kernels/params.hpp merge_semaphores).
  if (semaphore_bytes_ > 0) {
    p.merge_semaphores = workspace_buffer_->as<std::int32_t>();
    p.merge_semaphore_count = semaphore_bytes_ / 4;
  } else {
    p.merge_semaphores = multi_ctas_kv_counter_buffer_.as<std::int32_t>();
    p.merge_semaphore_count = multi_ctas_kv_counter_buffer_.bytes() / 4;
  }
  (void)q_len_per_req;
  device_.kernels().attention_decode(p, device_.stream());
}

void TrtllmMhaImpl::forward_extend_fmha_v2(const AttentionIO& io, const Layer& layer, const ForwardBatch& fb) {
  // Plain EXTEND on SM90/SM120 in 0.5.23 (L1890-1921): trtllm_fmha_v2_prefill over the paged cache.
  Metadata& md = eager_metadata_;  // extend runs eagerly only
  const TokenToKVPool& pool = *model_runner_.token_to_kv_pool;
  const std::int64_t es = dtype_size(dtype_);
  const std::int64_t page_bytes = static_cast<std::int64_t>(page_size_) * num_kv_heads_ * head_dim_ * dtype_size(kv_dtype_);
  // FlashInfer allocates the output per call (out = torch.empty((T, Hq, D)), prefill.py L7749-7756; SGLang
  // passes out=None outside piecewise graphs): counted here; the kernel writes the runner's output tensor.
  Buffer out = device_.allocate(static_cast<std::int64_t>(fb.num_tokens) * num_qo_heads_ * head_dim_ * es, MemKind::device,
                                "trtllm_mha.forward_extend.fmha_v2_out");
  // The fast path reads the pool (attention_params' K / V and block table are replaced below); the slow path
  // reads its copy.
  AttentionParams p = attention_params(io, layer, md, fb.num_tokens);
  const Buffer q8 = cast_q(io, fb.num_tokens, /*decode_kernel=*/false, p);
  p.qo_indptr = md.cu_seqlens_q;
  Buffer pages, paged_kv;  // the slow path's per-layer copy
  if (pool.fused_kv()) {
    // Fast path (_fmha_v2_paged_inputs L429-468): V is a whole number of pages after K in one allocation, so
    // the stacked table [bs, 2, max_num_pages] = stack([page_table, page_table + delta]) addresses both with
    // no KV copy; built once per forward (memoized) by the first layer. attnbench builds the two halves from
    // req_to_token (the same entries; SGLang stacks the page table and a `page_table + delta` temporary,
    // allocated here too). The kernel reads K at table[:, 0] pages of the layer's K buffer and V at the same
    // page index of its V buffer, which is exactly the address table[:, 1] names (V = K + delta pages).
    if (!md.fmha_v2_block_tables.allocated()) {
      const std::int64_t pages_row = max_num_pages_;
      Buffer tmp = device_.allocate(4LL * md.batch_size * pages_row, MemKind::device,
                                    "trtllm_mha.forward_metadata.fmha_v2_page_table_plus_delta_tmp");
      md.fmha_v2_block_tables = device_.allocate(8LL * md.batch_size * pages_row, MemKind::device,
                                                 "trtllm_mha.forward_metadata.fmha_v2_block_tables");
      std::int32_t* stacked = md.fmha_v2_block_tables.as<std::int32_t>();
      build_page_table(fb, md, stacked, 2 * pages_row, 0);                        // [:, 0]: K pages
      build_page_table(fb, md, stacked + pages_row, 2 * pages_row,
                       static_cast<std::int32_t>(pool.v_page_offset()));          // [:, 1]: V = K + delta
    }
    p.page_table = md.fmha_v2_block_tables.as<std::int32_t>();  // K and V buffers: attention_params'

    p.page_table_stride = 2 * max_num_pages_;
  } else {
    // Slow path (_fmha_v2_paged_kv L1438-1455), every layer: pages = page_table[rows, cols] [TP] int32, then
    // paged_kv = new_empty((TP, 2, P, Hkv, D)) filled by two index_selects (K, V); the block table is
    // fmha_v2_block_table [bs, Mb]. (SGLang's full-pool torch.stack branch, taken when TP >= the pool's
    // pages or without host lengths, cannot occur here: attnbench sizes its pool with spare pages.)
    const std::int64_t tp = md.fmha_v2_total_pages;
    if (tp <= 0 || !md.fmha_v2_page_index.allocated())
      throw std::logic_error("trtllm_mha: fmha_v2 slow path without batch pages");
    if (tp >= pool.num_slots() / page_size_)
      throw Unsupported("fmha_v2's full-pool torch.stack branch (TP >= pool pages) is not modelled");
    pages = device_.allocate(4 * tp, MemKind::device, "trtllm_mha.forward_extend.fmha_v2_pages");
    paged_kv = device_.allocate(2 * tp * page_bytes, MemKind::device, "trtllm_mha.forward_extend.fmha_v2_paged_kv");
    copy_rows(pages.data(), md.page_table, nullptr, md.fmha_v2_page_index.as<std::int32_t>(), tp, 4);
    for (int half = 0; half < 2; ++half)  // K pages to the even halves, V pages to the odd ones
      copy_rows(static_cast<char*>(paged_kv.data()) + half * page_bytes,
                half == 0 ? pool.k_buffer(layer.layer_id) : pool.v_buffer(layer.layer_id), nullptr,
                pages.as<std::int32_t>(), tp, page_bytes, 2 * page_bytes);
    p.k = paged_kv.data();
    p.v = static_cast<char*>(paged_kv.data()) + page_bytes;
    p.page_table = md.fmha_v2_block_table.as<std::int32_t>();
    p.page_table_stride = md.fmha_v2_max_pages;
  }
  device_.kernels().attention_prefill(p, device_.stream());
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
  if (use_fmha_v2_) {
    forward_extend_fmha_v2(io, layer, fb);
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
