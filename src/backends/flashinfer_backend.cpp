#include "backends/flashinfer_backend.hpp"

#include <algorithm>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/errors.hpp"
#include "core/units.hpp"
#include "kernels/kernel_table.hpp"

namespace attnbench {

namespace {

std::string indexed(const std::string& base, int i) { return base + "[" + std::to_string(i) + "]"; }

}  // namespace

std::int64_t FlashInferBackend::float_workspace_bytes(const ModelConfig& model, const ServerArgs& args, ProcessEnv& env) {
  // L389-399 (0.5.23: L421-431): these architectures raise the workspace (the ctor .set()s the environment
  // variable). Exactly these: Qwen3's MoE class (Qwen3MoeForCausalLM: Qwen3-30B-A3B, Qwen3-235B-A22B) and Qwen2's
  // (Qwen2MoeForCausalLM) are not in the list and keep the 384 MiB default.
  static const std::set<std::string> kLargeWorkspaceArchs = {
      "Qwen2ForCausalLM", "Qwen3ForCausalLM", "MiMoForCausalLM", "Qwen3VLForConditionalGeneration",
      "Qwen3VLMoeForConditionalGeneration"};
  if (kLargeWorkspaceArchs.count(model.architecture))
    env.set_int("SGLANG_FLASHINFER_WORKSPACE_SIZE", 512 * MiB);
  if (args.enable_deterministic_inference)  // L419
    env.set_int("SGLANG_FLASHINFER_WORKSPACE_SIZE", 2048 * MiB);
  return env.get_int("SGLANG_FLASHINFER_WORKSPACE_SIZE", 384 * MiB);  // environ.py L702
}

namespace {
// Every wrapper plans with data_type = the KV cache dtype (flashinfer_backend.py L1476-1489, L1747-1770).
template <class W>
std::unique_ptr<W> with_kv_data_type(std::unique_ptr<W> w, DType kv_dtype) {
  w->kv_data_type = kv_dtype;
  return w;
}
}  // namespace

bool FlashInferBackend::extend_takes_ragged(const ModelConfig& model, const ServerArgs& args, const ProcessEnv& env) {
  // L1048-1062 (0.5.23): paged for a multimodal model (is_multimodal, ModelConfig::is_multimodal), else ragged unless
  // deterministic or SGLANG_FLASHINFER_USE_PAGED.
  return !model.is_multimodal && !args.enable_deterministic_inference &&
         !env.get_bool("SGLANG_FLASHINFER_USE_PAGED").value_or(false);
}

bool FlashInferBackend::extend_uses_ragged() const {
  return extend_takes_ragged(model_runner_.model_config, model_runner_.server_args, model_runner_.env);
}

Fp8ReadView FlashInferBackend::fp8_read_view(ForwardMode mode) const {
  Fp8ReadView v;
  v.new_kv = !(mode == ForwardMode::extend && extend_uses_ragged());
  return v;
}

bool FlashInferBackend::use_tensor_cores(const ModelConfig& model, const ProcessEnv& env) {
  // should_use_tensor_core (L2383-2429): the environment wins; fp8 KV -> true; else Hq / Hkv >= 4.
  if (auto forced = env.get_bool("SGLANG_FLASHINFER_USE_TENSOR_CORE")) return *forced;
  if (is_fp8(model.kv_dtype())) return true;  // 0.5.23: flashinfer_backend.py L2670-2716 (sglang-0.5.23.md §2.1)
  return model.num_qo_heads() / model.num_kv_heads() >= 4;
}

DerivedFacts FlashInferBackend::derived_facts(const ModelConfig& model, const ServerArgs& args) {
  ProcessEnv env(args);
  const std::int64_t workspace = float_workspace_bytes(model, args, env);
  return {{"flashinfer_workspace_bytes", std::to_string(workspace)},
          {"flashinfer_use_tensor_cores", use_tensor_cores(model, env) ? "1" : "0"},
          {"flashinfer_extend_ragged", extend_takes_ragged(model, args, env) ? "1" : "0"}};
}

FlashInferBackend::FlashInferBackend(ModelRunner& mr, bool skip_prefill)
    : model_runner_(mr),
      device_(mr.device),
      num_qo_heads_(mr.model_config.num_qo_heads()),
      num_kv_heads_(mr.model_config.num_kv_heads()),
      head_dim_(mr.model_config.head_dim),
      dtype_(mr.model_config.dtype),
      dtype_kv_(mr.model_config.kv_dtype()),
      num_wrappers_(mr.model_config.has_sliding_window() && mr.model_config.runner_sliding_window ? 2 : 1),
      max_bs_(mr.server_args.max_running_requests),
      max_context_len_(mr.context_len()),
      skip_prefill_(skip_prefill),
      use_tensor_cores_(use_tensor_cores(mr)) {
  // F1 (L423-431): shared by name, torch.empty.
  workspace_buffer_ = device_.named_buffer("flashinfer_workspace", float_workspace_bytes(mr), MemKind::device,
                                           /*zeroed=*/false, "flashinfer.workspace_buffer");
  // F2 (L441-450): kv_indptr per wrapper, zeros.
  for (int i = 0; i < num_wrappers_; ++i)
    kv_indptr_.push_back(device_.allocate_zeroed(4LL * (max_bs_ + 1), MemKind::device, indexed("flashinfer.kv_indptr", i)));
  // F3 (L455-458): kv_last_page_len, ones (FlashInfer's page size is always 1 here).
  kv_last_page_len_ = device_.allocate(4LL * max_bs_, MemKind::device, "flashinfer.kv_last_page_len");
  {
    const std::vector<std::int32_t> ones(static_cast<std::size_t>(max_bs_), 1);
    device_.copy(kv_last_page_len_.data(), ones.data(), 4LL * max_bs_);
  }
  // F4 (L463-469): qo_indptr per wrapper, zeros, unless skip_prefill.
  if (!skip_prefill_)
    for (int i = 0; i < num_wrappers_; ++i)
      qo_indptr_.push_back(device_.allocate_zeroed(4LL * (max_bs_ + 1), MemKind::device, indexed("flashinfer.qo_indptr", i)));
  // F5 (L471-479): the ragged wrapper, created even with skip_prefill.
  prefill_wrapper_ragged_ =
      with_kv_data_type(std::make_unique<RaggedPrefillWrapper>(device_, workspace_buffer_, "flashinfer.prefill_wrapper_ragged"), dtype_kv_);
  // F6, F7 (L487-500): paged and verify prefill wrappers per wrapper slot.
  if (!skip_prefill_)
    for (int i = 0; i < num_wrappers_; ++i) {
      prefill_wrappers_paged_.push_back(
          with_kv_data_type(std::make_unique<PagedPrefillWrapper>(device_, workspace_buffer_, indexed("flashinfer.prefill_wrappers_paged", i)), dtype_kv_));
      prefill_wrappers_verify_.push_back(
          with_kv_data_type(std::make_unique<PagedPrefillWrapper>(device_, workspace_buffer_, indexed("flashinfer.prefill_wrappers_verify", i)), dtype_kv_));
    }
  // F8 (L501-508): decode wrappers.
  for (int i = 0; i < num_wrappers_; ++i)
    decode_wrappers_.push_back(with_kv_data_type(std::make_unique<DecodeWrapper>(device_, workspace_buffer_,
                                                               indexed("flashinfer.decode_wrappers", i), use_tensor_cores_), dtype_kv_));
  // F9 (L512-516): the indices updaters hold references only: nothing to allocate.
  kv_indices_.resize(static_cast<std::size_t>(num_wrappers_));
  kv_start_.resize(static_cast<std::size_t>(num_wrappers_));
  verify_kv_indptr_.resize(static_cast<std::size_t>(num_wrappers_));
}

Support FlashInferBackend::supports(const StepKind& step) const {
  const auto [mode, cuda_graph, sinks, any_prefix] = step;
  // --dtype float32: SGLang plans with q_data_type = the model dtype and data_type = the KV cache dtype (fp32 under
  // "auto") (flashinfer_backend.py L1604-1605, L1894-1895), and FlashInfer 0.7.2 has no fp32 module to plan: the
  // module's name indexes filename_safe_dtype_map (jit/utils.py L69-80, no torch.float32) in get_batch_decode_uri
  // (jit/attention/modules.py L222) and get_batch_prefill_uri (L421), so plan() raises KeyError in every mode.
  if (model_runner_.model_config.dtype == DType::fp32 && model_runner_.profile().flashinfer_rejects_fp32)
    return Support::no("SGLang 0.5.23's FlashInfer backend cannot run --dtype float32: FlashInfer 0.7.2 has no fp32 "
                       "attention module, plan() fails with KeyError torch.float32 (flashinfer/jit/attention/"
                       "modules.py L222 decode, L421 prefill; jit/utils.py L69-80)");
  if (sinks) return Support::no("SGLang's FlashInfer backend does not pass attention sinks to its kernels");
  if (skip_prefill_ && mode != ForwardMode::decode) return Support::no("skip_prefill backend runs decode only");
  if (mode == ForwardMode::extend && cuda_graph)
    return Support::no("SGLang captures decode and verify only; extend runs eagerly");
  // Verify on a windowed model: update_sliding_window trims wrapper 0's keys to the last min(seq_len, window) of
  // each request (kv_start_idx = seq_lens - paged_kernel_lens, L2046-2058, window_left -1 with a spec_info), but
  // the EAGLE branch of call_begin_forward does not pass kv_start_idx on (only DFLASH does, L2271-2293), and
  // EagleVerifyInput.generate_attn_arg_prefill gathers each row from slot 0 (eagle_info.py L90-133) with a tree
  // mask sized for the untrimmed lengths. Past the window that reads the wrong keys; within it, it equals the
  // causal verify. attnbench does not model either: the row is skipped with this reading.
  if (mode == ForwardMode::target_verify && num_wrappers_ == 2)
    return Support::no("SGLang's FlashInfer EAGLE verify on a windowed layer reads each request's first min(seq_len, window) + N cache slots, not its last window (no kv_start_idx; 0.5.23: flashinfer_backend.py L2284-2293, eagle_info.py L90-133): not modelled");
  // Layers with windows the model runner does not know (Cohere2): one wrapper set planned without a window. Decode
  // (forward_decode passes no window_left, L1566-1572) and an extend with no prefix (the ragged forward without
  // window_left, L1460-1471) run full attention: modelled. An extend with a prefix (ragged + paged, L1472-1500), a
  // paged extend (L1416-1438) and verify pass window_left = layer.sliding_window_size to forward() of wrappers
  // planned without one, and FlashInfer 0.7.2's prefill kernel then skips the keys before the window of each q
  // tile's first row (kv_start_idx, include/flashinfer/attention/prefill.cuh L3037-3039, whatever the variant) but
  // masks none inside it (the window mask is compiled only into use_sliding_window modules, variants.cuh L88-90),
  // the paged half placing the queries at the end of the prefix: a window that depends on FlashInfer's tile shape.
  // SGLang's own class on the H200 (results/h200/sglang-cohere2-2026-12-04/) matched the unwindowed reference in
  // decode and missed it in extend with a prefix (rel. L2 0.38) and verify (0.94): those rows are not modelled.
  if (model_runner_.model_config.has_sliding_window() && !model_runner_.model_config.runner_sliding_window) {
    const bool window_reaches_kernel = mode == ForwardMode::target_verify ||
                                       (mode == ForwardMode::extend && (any_prefix || !extend_uses_ragged()));
    if (window_reaches_kernel)
      return Support::no("SGLang's FlashInfer backend passes the layers' windows (" +
                         model_runner_.model_config.architecture +
                         ": none known to the model runner) to forward() of prefill wrappers planned without one; "
                         "FlashInfer 0.7.2 then skips the keys before each q tile's first row's window but masks none "
                         "within it (prefill.cuh kv_start_idx; variants.cuh): a tile-shaped window, not modelled "
                         "(SGLang's own class misses both the windowed and the unwindowed result: "
                         "results/h200/sglang-cohere2-2026-12-04/)");
    return Support::yes("unwindowed: SGLang's " + model_runner_.model_config.architecture +
                        " reports no window to the model runner (no get_attention_sliding_window_size), so its "
                        "FlashInfer backend plans one wrapper set without a window, and this step passes the "
                        "layers' windows to no kernel: every layer runs full attention here (SGLang's own class "
                        "agrees on the H200), while trtllm_mha windows the sliding layers");
  }
  std::ostringstream os;
  if (model_runner_.model_config.has_sliding_window() && layer_windows(mode) == LayerWindows::cached_only)
    os << "new tokens unwindowed: SGLang's FlashInfer ragged extend wrapper is planned without a window "
          "(flashinfer_backend.py L2297-2304; FA3 on Hopper reads window_left only in a windowed module), so the "
          "sliding layers window the cached prefix only and this step's tokens see each other causally";
  const float cap = model_runner_.model_config.attn_logit_cap;
  if (cap > 0.0f && !applies_logit_cap())
    os << (os.tellp() > 0 ? "; " : "")
       << "uncapped: SGLang's FlashInfer backend passes logits_soft_cap to forward() only, not to plan(), where "
          "FlashInfer fixes it (the model's "
       << cap << " is dropped; sglang#33915)";
  return os.tellp() > 0 ? Support::yes(os.str()) : Support::yes();
}

int FlashInferBackend::wrapper_index(const Layer& layer) const {
  if (num_wrappers_ == 1) return 0;
  return layer.sliding_window_size == -1 ? 1 : 0;
}

void FlashInferBackend::init_cuda_graph_state(int max_bs, int max_num_tokens) {
  // L1003-1043.
  (void)max_bs;
  const std::int64_t n = static_cast<std::int64_t>(max_num_tokens) * max_context_len_;
  cuda_graph_kv_indices_.push_back(
      device_.allocate_zeroed(4 * n, MemKind::device, "flashinfer.cuda_graph_kv_indices[0]"));
  for (int i = 1; i < num_wrappers_; ++i) {  // L1018-1020: .clone() of the first
    cuda_graph_kv_indices_.push_back(device_.allocate(4 * n, MemKind::device, indexed("flashinfer.cuda_graph_kv_indices", i)));
    device_.copy(cuda_graph_kv_indices_[i].data(), cuda_graph_kv_indices_[0].data(), 4 * n);
  }
  if (!skip_prefill_)  // L1036-1041
    cuda_graph_custom_mask_ = device_.allocate_zeroed(n, MemKind::device, "flashinfer.cuda_graph_custom_mask");
  for (int i = 0; i < num_wrappers_; ++i) {  // L1042-1043: clones of kv_indptr[i]
    cuda_graph_qk_indptr_.push_back(device_.allocate(kv_indptr_[i].bytes(), MemKind::device, indexed("flashinfer.cuda_graph_qk_indptr", i)));
    device_.copy(cuda_graph_qk_indptr_[i].data(), kv_indptr_[i].data(), kv_indptr_[i].bytes());
    cuda_graph_qo_indptr_.push_back(device_.allocate(kv_indptr_[i].bytes(), MemKind::device, indexed("flashinfer.cuda_graph_qo_indptr", i)));
    device_.copy(cuda_graph_qo_indptr_[i].data(), kv_indptr_[i].data(), kv_indptr_[i].bytes());
  }
}

std::vector<std::int32_t> FlashInferBackend::build_indptr(int w, const std::int32_t* lens_dev,
                                                          const std::vector<std::int32_t>& lens_host, int clamp,
                                                          int batch_size, std::int32_t* indptr_dev) {
  LengthsParams lp;
  lp.seq_lens = lens_dev;
  lp.clamp_max = clamp;
  lp.indptr_out = indptr_dev;
  lp.batch_size = batch_size;
  if (clamp > 0) {
    kv_start_[w] = device_.allocate(4LL * batch_size, MemKind::device, indexed("flashinfer.kv_start_idx", w));
    lp.start_out = kv_start_[w].as<std::int32_t>();
  }
  device_.kernels().lengths(lp, device_.stream());
  std::vector<std::int32_t> out(lens_host.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = clamp > 0 ? std::min(lens_host[i], clamp) : lens_host[i];
  return out;
}

void FlashInferBackend::update_decode(const ForwardBatch& fb, const std::vector<DecodeWrapper*>& wrappers, bool graph,
                                      bool fast_plan) {
  // indices_updater_decode.update -> call_begin_forward (L1640-1743), once per wrapper slot.
  const int bs = fb.batch_size;
  if (bs > max_bs_) throw std::runtime_error("flashinfer: batch " + std::to_string(bs) + " exceeds max_bs " + std::to_string(max_bs_));
  for (int w = 0; w < num_wrappers_; ++w) {
    // Sliding-window wrapper: len = min(seq_len, window + 1), kv_start = seq_len - len (L1562-1575).
    const int window = model_runner_.model_config.sliding_window - 1;
    const int clamp = (num_wrappers_ == 2 && w == 0) ? window + 1 : 0;
    auto* indptr = kv_indptr_[w].as<std::int32_t>();
    const auto lens = build_indptr(w, fb.seq_lens, fb.seq_lens_cpu, clamp, bs, indptr);
    std::vector<std::int32_t> indptr_host(static_cast<std::size_t>(bs) + 1, 0);
    std::partial_sum(lens.begin(), lens.end(), indptr_host.begin() + 1);
    std::int32_t* indices = nullptr;
    if (graph) {
      indices = cuda_graph_kv_indices_[w].as<std::int32_t>();  // written in place (L1659-1661)
    } else {
      // L1663: kv_indices = torch.empty(sum(seq_lens)): a new allocation every step.
      kv_indices_[w] = device_.allocate(4LL * indptr_host[bs], MemKind::device, indexed("flashinfer.kv_indices", w));
      indices = kv_indices_[w].as<std::int32_t>();
    }
    KvIndicesParams kp;
    kp.req_to_token = model_runner_.req_to_token_pool->device_data();
    kp.req_to_token_stride = model_runner_.req_to_token_pool->width();
    kp.req_pool_indices = fb.req_pool_indices;
    kp.kv_indptr = indptr;
    kp.kv_start = clamp > 0 ? kv_start_[w].as<std::int32_t>() : nullptr;
    kp.kv_indices = indices;
    kp.batch_size = bs;
    device_.kernels().build_kv_indices(kp, device_.stream());
    kv_start_[w].reset();  // kv_start_idx is a temporary of the indices kernel
    if (fast_plan)
      wrappers[w]->fast_plan(indptr_host, indptr, indices, num_qo_heads_, num_kv_heads_, head_dim_);
    else
      wrappers[w]->plan(indptr, indices, kv_last_page_len_.as<std::int32_t>(), bs, num_qo_heads_, num_kv_heads_, head_dim_);
  }
  forward_metadata_ = ForwardMetadata{};
  forward_metadata_.mode = ForwardMode::decode;
  forward_metadata_.decode_wrappers = wrappers;
}

void FlashInferBackend::update_extend(const ForwardBatch& fb, bool use_ragged) {
  // indices_updater_prefill.update (L1801-1847, L2036-2215), once per wrapper slot.
  const int bs = fb.batch_size;
  if (bs > max_bs_) throw std::runtime_error("flashinfer: batch " + std::to_string(bs) + " exceeds max_bs " + std::to_string(max_bs_));
  const int window = model_runner_.model_config.sliding_window - 1;
  for (int w = 0; w < num_wrappers_; ++w) {
    const bool swa = num_wrappers_ == 2 && w == 0;
    // qo_indptr[1:bs+1] = cumsum(seq_lens - prefix_lens)
    LengthsParams qp;
    qp.seq_lens = fb.seq_lens;
    qp.sub = fb.extend_prefix_lens;
    qp.indptr_out = qo_indptr_[w].as<std::int32_t>();
    qp.batch_size = bs;
    device_.kernels().lengths(qp, device_.stream());
    // Paged lengths: the prefix (ragged path) or the whole sequence (paged only); windowed layers keep the
    // prefix's last `window` tokens (L1891-1900, L1942-1981).
    auto* indptr = kv_indptr_[w].as<std::int32_t>();
    std::vector<std::int32_t> lens(static_cast<std::size_t>(bs));
    if (use_ragged) {
      lens = build_indptr(w, fb.extend_prefix_lens, fb.extend_prefix_lens_cpu, swa ? window : 0, bs, indptr);
    } else if (swa) {
      // len = min(seq_len, window + extend_len) = seq_len - max(0, prefix - window).
      LengthsParams sp;
      kv_start_[w] = device_.allocate(4LL * bs, MemKind::device, indexed("flashinfer.kv_start_idx", w));
      sp.seq_lens = fb.extend_prefix_lens;
      sp.clamp_max = window;
      sp.start_out = kv_start_[w].as<std::int32_t>();
      sp.batch_size = bs;
      device_.kernels().lengths(sp, device_.stream());
      LengthsParams lp;
      lp.seq_lens = fb.seq_lens;
      lp.sub = kv_start_[w].as<std::int32_t>();
      lp.indptr_out = indptr;
      lp.batch_size = bs;
      device_.kernels().lengths(lp, device_.stream());
      for (int i = 0; i < bs; ++i)
        lens[i] = fb.seq_lens_cpu[i] - std::max(0, fb.extend_prefix_lens_cpu[i] - window);
    } else {
      lens = build_indptr(w, fb.seq_lens, fb.seq_lens_cpu, 0, bs, indptr);
    }
    const std::int64_t sum = std::accumulate(lens.begin(), lens.end(), std::int64_t{0});
    // L2079: kv_indices = torch.empty(sum + 256), new each step.
    kv_indices_[w] = device_.allocate(4LL * (sum + 256), MemKind::device, indexed("flashinfer.kv_indices", w));
    KvIndicesParams kp;
    kp.req_to_token = model_runner_.req_to_token_pool->device_data();
    kp.req_to_token_stride = model_runner_.req_to_token_pool->width();
    kp.req_pool_indices = fb.req_pool_indices;
    kp.kv_indptr = indptr;
    kp.kv_start = swa ? kv_start_[w].as<std::int32_t>() : nullptr;
    kp.kv_indices = kv_indices_[w].as<std::int32_t>();
    kp.batch_size = bs;
    device_.kernels().build_kv_indices(kp, device_.stream());
    prefill_wrappers_paged_[w]->plan(qo_indptr_[w].as<std::int32_t>(), indptr, kv_indices_[w].as<std::int32_t>(),
                                     kv_last_page_len_.as<std::int32_t>(), bs, num_qo_heads_, num_kv_heads_, head_dim_);
  }
  if (use_ragged)  // L2121-2128: ragged.begin_forward(qo_indptr, qo_indptr, ...)
    prefill_wrapper_ragged_->plan(qo_indptr_[0].as<std::int32_t>(), qo_indptr_[0].as<std::int32_t>(), bs, num_qo_heads_,
                                  num_kv_heads_, head_dim_);
  forward_metadata_ = ForwardMetadata{};
  forward_metadata_.mode = ForwardMode::extend;
  for (auto& w : prefill_wrappers_paged_) forward_metadata_.prefill_wrappers.push_back(w.get());
  forward_metadata_.use_ragged = use_ragged;
  forward_metadata_.extend_no_prefix = fb.extend_no_prefix();
}

void FlashInferBackend::update_verify(const ForwardBatch& fb, const std::vector<PagedPrefillWrapper*>& wrappers,
                                      bool graph) {
  // TARGET_VERIFY: spec_info.generate_attn_arg_prefill (L2097-2114) gives qo_indptr = arange(0, bs*N+1, N),
  // kv_indptr over seq_lens + N and a fresh kv_indices; then the verify wrappers plan with the tree mask.
  // attnbench models chain speculation (topk = 1), whose tree mask is the causal mask: the kernel is run
  // causal and the per-step mask tensor is not built.
  const int bs = fb.batch_size;
  const int n = fb.num_draft_tokens;
  if (bs > max_bs_) throw std::runtime_error("flashinfer: batch " + std::to_string(bs) + " exceeds max_bs " + std::to_string(max_bs_));
  // Eager: one qo_indptr for every wrapper (allocated once: a second allocation would free the buffer the first
  // wrapper planned with, which two wrapper sets, a windowed model's, then read after free).
  if (!graph) verify_qo_indptr_ = device_.allocate(4LL * (bs + 1), MemKind::device, "flashinfer.verify.qo_indptr");
  for (int w = 0; w < num_wrappers_; ++w) {
    std::int32_t *qo = nullptr, *kvp = nullptr, *indices = nullptr;
    std::int64_t sum = 0;
    for (int i = 0; i < bs; ++i) sum += fb.seq_lens_cpu[i] + n;
    if (graph) {
      qo = cuda_graph_qo_indptr_[w].as<std::int32_t>();
      kvp = kv_indptr_[w].as<std::int32_t>();
      indices = cuda_graph_kv_indices_[w].as<std::int32_t>();
    } else {
      verify_kv_indptr_[w] = device_.allocate(4LL * (bs + 1), MemKind::device, indexed("flashinfer.verify.kv_indptr", w));
      kv_indices_[w] = device_.allocate(4LL * sum, MemKind::device, indexed("flashinfer.verify.kv_indices", w));
      qo = verify_qo_indptr_.as<std::int32_t>();
      kvp = verify_kv_indptr_[w].as<std::int32_t>();
      indices = kv_indices_[w].as<std::int32_t>();
    }
    LengthsParams qp;  // arange(0, bs*N+1, N)
    qp.add = n;
    qp.indptr_out = qo;
    qp.batch_size = bs;
    device_.kernels().lengths(qp, device_.stream());
    LengthsParams kp;
    kp.seq_lens = fb.seq_lens;
    kp.add = n;
    kp.indptr_out = kvp;
    kp.batch_size = bs;
    device_.kernels().lengths(kp, device_.stream());
    KvIndicesParams ip;
    ip.req_to_token = model_runner_.req_to_token_pool->device_data();
    ip.req_to_token_stride = model_runner_.req_to_token_pool->width();
    ip.req_pool_indices = fb.req_pool_indices;
    ip.kv_indptr = kvp;
    ip.kv_indices = indices;
    ip.batch_size = bs;
    device_.kernels().build_kv_indices(ip, device_.stream());
    wrappers[w]->plan(qo, kvp, indices, kv_last_page_len_.as<std::int32_t>(), bs, num_qo_heads_, num_kv_heads_, head_dim_);
  }
  forward_metadata_ = ForwardMetadata{};
  forward_metadata_.mode = ForwardMode::target_verify;
  forward_metadata_.prefill_wrappers = wrappers;
}

void FlashInferBackend::init_forward_metadata(const ForwardBatch& fb) {
  // Eager (L907-1001).
  switch (fb.forward_mode) {
    case ForwardMode::decode: {
      std::vector<DecodeWrapper*> ws;
      for (auto& w : decode_wrappers_) ws.push_back(w.get());
      update_decode(fb, ws, /*graph=*/false, /*fast_plan=*/false);
      break;
    }
    case ForwardMode::extend: {
      update_extend(fb, extend_uses_ragged());
      break;
    }
    case ForwardMode::target_verify: {
      std::vector<PagedPrefillWrapper*> ws;
      for (auto& w : prefill_wrappers_verify_) ws.push_back(w.get());
      update_verify(fb, ws, /*graph=*/false);
      break;
    }
  }
}

void FlashInferBackend::init_forward_metadata_out_graph(const ForwardBatch& fb, bool in_capture) {
  // L694-825 -> _prepare_cuda_graph_metadata (L1201-1237): at capture, new wrappers per batch size.
  const int bs = fb.batch_size;
  if (cuda_graph_kv_indices_.empty()) throw std::logic_error("flashinfer: init_cuda_graph_state was not called");
  if (fb.forward_mode == ForwardMode::decode) {
    if (in_capture) {  // _create_decode_wrappers (L1045-1058)
      auto& ws = decode_cuda_graph_metadata_[bs];
      ws.clear();
      for (int i = 0; i < num_wrappers_; ++i)
        ws.push_back(with_kv_data_type(std::make_unique<DecodeWrapper>(device_, workspace_buffer_, indexed("flashinfer.cuda_graph_decode_wrappers", i),
                                                     use_tensor_cores_, /*use_cuda_graph=*/true, bs), dtype_kv_));
    }
    auto it = decode_cuda_graph_metadata_.find(bs);
    if (it == decode_cuda_graph_metadata_.end()) throw std::logic_error("flashinfer: no decode graph captured for bs " + std::to_string(bs));
    std::vector<DecodeWrapper*> ws;
    for (auto& w : it->second) ws.push_back(w.get());
    // At capture the real plan() runs; afterwards begin_forward is fast_decode_plan (L790-795).
    update_decode(fb, ws, /*graph=*/true, /*fast_plan=*/!in_capture);
  } else if (fb.forward_mode == ForwardMode::target_verify) {
    if (in_capture) {  // _create_prefill_wrappers (L1060-1090)
      auto& ws = prefill_cuda_graph_metadata_[bs];
      ws.clear();
      for (int i = 0; i < num_wrappers_; ++i)
        ws.push_back(with_kv_data_type(std::make_unique<PagedPrefillWrapper>(device_, workspace_buffer_, indexed("flashinfer.cuda_graph_prefill_wrappers", i)), dtype_kv_));
    }
    auto it = prefill_cuda_graph_metadata_.find(bs);
    if (it == prefill_cuda_graph_metadata_.end()) throw std::logic_error("flashinfer: no verify graph captured for bs " + std::to_string(bs));
    std::vector<PagedPrefillWrapper*> ws;
    for (auto& w : it->second) ws.push_back(w.get());
    update_verify(fb, ws, /*graph=*/true);
  } else {
    throw Unsupported("flashinfer: extend is not captured in CUDA graphs");
  }
}

void FlashInferBackend::forward_decode(const AttentionIO& io, const Layer& model_layer, const ForwardBatch& fb,
                                       bool save_kv_cache) {
  const Layer layer = planned_layer(model_layer);
  // L1404-1460: the KV write comes first, then the decode wrapper.
  if (save_kv_cache) write_kv(model_runner_, io, layer, fb);
  const TokenToKVPool& pool = *model_runner_.token_to_kv_pool;
  forward_metadata_.decode_wrappers.at(wrapper_index(layer))
      ->run(io, pool.k_buffer(layer.layer_id), pool.v_buffer(layer.layer_id), layer, num_qo_heads_, num_kv_heads_,
            head_dim_, dtype_);
}

void FlashInferBackend::forward_extend(const AttentionIO& io, const Layer& model_layer, const ForwardBatch& fb,
                                       bool save_kv_cache) {
  const Layer layer = planned_layer(model_layer);
  // L1243-1402.
  const TokenToKVPool& pool = *model_runner_.token_to_kv_pool;
  const int w = wrapper_index(layer);
  const void* kc = pool.k_buffer(layer.layer_id);
  const void* vc = pool.v_buffer(layer.layer_id);
  PagedPrefillWrapper* paged = forward_metadata_.prefill_wrappers.at(w);
  if (fb.forward_mode == ForwardMode::target_verify || !forward_metadata_.use_ragged) {
    // Paged path: write KV first, then causal attention over the whole (trimmed) sequence.
    if (save_kv_cache) write_kv(model_runner_, io, layer, fb);
    const int window = fb.forward_mode == ForwardMode::target_verify ? -1 : layer.sliding_window_size;
    paged->run(io, nullptr, kc, vc, layer, /*causal=*/true, window, nullptr, nullptr, num_qo_heads_, num_kv_heads_,
               head_dim_, dtype_);
    return;
  }
  // The ragged half applies no window (layer_windows: the ragged wrapper is planned without one, and forward()
  // gets none without a prefix, L1460-1471, or one its FA3 module ignores with a prefix, L1482-1490).
  constexpr int kRaggedWindow = -1;
  if (forward_metadata_.extend_no_prefix) {
    // Ragged only: new tokens against themselves, then the KV write.
    prefill_wrapper_ragged_->run(io, nullptr, layer, /*causal=*/true, kRaggedWindow, num_qo_heads_, num_kv_heads_,
                                 head_dim_, dtype_);
    if (save_kv_cache) write_kv(model_runner_, io, layer, fb);
    return;
  }
  // Ragged + paged + merge: o1, s1 = new vs new (causal); o2, s2 = new vs cached prefix (not causal);
  // o = merge_state(o1, s1, o2, s2); then the KV write (L1392-1400). FlashInfer allocates o2 and both lse
  // tensors per call.
  const std::int64_t rows = fb.num_tokens;
  Buffer lse1 = device_.allocate(4 * rows * num_qo_heads_, MemKind::device, "flashinfer.forward_extend.lse_ragged");
  Buffer o2 = device_.allocate(rows * num_qo_heads_ * head_dim_ * dtype_size(dtype_), MemKind::device,
                               "flashinfer.forward_extend.o_paged");
  Buffer lse2 = device_.allocate(4 * rows * num_qo_heads_, MemKind::device, "flashinfer.forward_extend.lse_paged");
  prefill_wrapper_ragged_->run(io, lse1.as<float>(), layer, /*causal=*/true, kRaggedWindow, num_qo_heads_,
                               num_kv_heads_, head_dim_, dtype_);
  AttentionIO io2 = io;
  io2.o = o2.data();
  const bool windowed = layer.sliding_window_size >= 0;
  paged->run(io2, lse2.as<float>(), kc, vc, layer, /*causal=*/false, layer.sliding_window_size,
             windowed ? fb.extend_prefix_lens : nullptr, windowed ? kv_start_[w].as<std::int32_t>() : nullptr,
             num_qo_heads_, num_kv_heads_, head_dim_, dtype_);
  MergeStateParams mp;
  mp.o1 = io.o;
  mp.lse1 = lse1.as<float>();
  mp.o2 = o2.data();
  mp.lse2 = lse2.as<float>();
  mp.o = io.o;
  mp.rows = static_cast<int>(rows);
  mp.num_heads = num_qo_heads_;
  mp.head_dim = head_dim_;
  mp.dtype = dtype_;
  device_.kernels().merge_state(mp, device_.stream());
  if (save_kv_cache) write_kv(model_runner_, io, layer, fb);
}

}  // namespace attnbench
