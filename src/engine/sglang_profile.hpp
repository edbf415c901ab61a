// SGLang versions as data. attnbench models named SGLang releases; a profile holds what differs between them
// (and the FlashInfer each pins). Backends read the profile through ServerArgs and gate small branches on its
// facts, the way SGLang itself gates on platform and environment: there is one backend per SGLang class,
// never a copy per version. Every result row, JSON report and memory report names the profile it used.
//
// Facts and source lines: docs/sglang-facts.md (30cb848d4: SGLang main @30cb848d4 + FlashInfer 0.6.15.post1;
// 0.5.23: the SGLang 0.5.23 release wheel + FlashInfer 0.7.2).
#pragma once

#include <string>
#include <vector>

namespace attnbench {

struct SglangProfile {
  std::string version;             // as --sglang spells it: "0.5.23", "30cb848d4"
  std::string flashinfer_version;  // the FlashInfer it pins: "0.7.2", "0.6.15.post1"
  std::string description;         // one line for `attnbench list`

  // TRTLLMHAAttnBackend's zeroed workspace (T1) starts with XQA's 8 MiB of semaphores on SM90/SM120:
  // [semaphore_bytes + W] (0.5.23 trtllm_mha_backend.py L306-317, _XQA_SEMAPHORE_BYTES L83). Before, T1 was
  // W alone and XQA carved its semaphores out of W (30cb848d4 L158-167).
  bool xqa_semaphore_prefix = false;
  // trtllm_mha serves prefill on SM90/SM120 through trtllm_fmha_v2_prefill over paged KV (0.5.23
  // arg_groups/attention_hook.py L198-237, trtllm_mha_backend.py L1890-1921); before, SGLang accepted
  // trtllm_mha prefill only on SM100 (30cb848d4 server_args.py L5919-5928).
  bool fmha_v2_prefill = false;
  // MHATokenToKVPool allocates each layer's K and V as the two halves of one zeros((2, padded, Hkv, D))
  // when their shapes match, so V is a whole number of pages after K (0.5.23 mem_cache/memory_pool.py
  // L2630-2645); before, k_buffer and v_buffer were separate allocations.
  bool fused_kv_pool = false;
  // _xqa_spec_dec_mask [R+1, N, 2*ceil(N/32)] uint16 on SM90/SM120 with speculative decoding (0.5.23
  // trtllm_mha_backend.py L416-427).
  bool xqa_spec_dec_mask = false;
  // SGLANG_TRTLLM_MHA_DECODE_SEQ_LEN_SPLITS (0.5.23 environ.py L1267-1270, trtllm_mha_backend.py L1531-1561).
  bool decode_seq_len_splits = false;
  // TRTLLMHAAttnBackend's page-size-128 check (GQA, power-of-two head_dim == v_head_dim) runs only off XQA,
  // i.e. for trtllm-gen on SM100: XQA (SM90 / SM120) has native page 128 for every head layout (0.5.23
  // trtllm_mha_backend.py L374-390). At 30cb848d4 the check sat in the constructor (L220-243) and SGLang's
  // test expected an MHA model at page 128 to fail to construct: attnbench applies it on every architecture.
  bool page128_check_off_xqa_only = false;
  // FlashInfer has no fp32 attention kernels: SGLang accepts --dtype float32 (arg_groups/fields/model.py L173) and
  // checks nothing more, but FlashInfer's JIT dtype tables hold fp16 / bf16 / fp8 only (flashinfer/jit/utils.py
  // L69-80), so every FlashInfer wrapper's plan() fails (KeyError: torch.float32 building the module's name,
  // jit/attention/modules.py L222 decode, L421 prefill), XQA refuses an fp32 q (jit/xqa.py L64-71) and fmha_v2
  // builds fp16 / bf16 / e4m3 modules only (jit/attention/modules.py L2561-2566). Read in FlashInfer 0.7.2's
  // sources (0.5.23); 0.6.15.post1's (30cb848d4) were not read, so that profile keeps running fp32.
  bool flashinfer_rejects_fp32 = false;
  // SGLang's TRTLLM paths handle one fp8 format, e4m3: with --kv-cache-dtype fp8_e5m2 (which nothing rejects)
  // XQA's generator builds a 16-bit cache for any KV dtype but e4m3 / int8 / uint8 (flashinfer/jit/xqa.py L73-80,
  // data/csrc/xqa/defines.h L86-89) and fmha_v2 picks its module from q's dtype (prefill.py L7774-7778): on SM90 /
  // SM120 SGLang would read an e5m2 pool as bf16 / fp16. Read in the 0.5.23 wheel and FlashInfer 0.7.2 (README,
  // "fp8 KV cache"); SM100's trtllm-gen not established.
  bool trtllm_reads_e4m3_only = false;
};

// The modelled releases; the first is the default.
const std::vector<SglangProfile>& sglang_profiles();
const SglangProfile& default_sglang_profile();
// Throws InputError naming `option` and listing the profiles when `version` is unknown.
const SglangProfile& find_sglang_profile(const std::string& version, const std::string& option = "--sglang");

// The GPU architecture a backend takes its path for (SM90 = Hopper, e.g. the H200; SM100 = Blackwell), as
// SGLang's is_sm90_supported / is_sm100_supported decide. 0 in ServerArgs::arch means "the device's".
int parse_arch(const std::string& s, const std::string& option = "--arch");  // "sm90" -> 90, "sm100" -> 100, ...
std::string arch_name(int arch);                                           // 90 -> "sm90"
// SGLang's XQA path (is_xqa_impl = is_sm90 or is_sm120, trtllm_mha_backend.py L258).
inline bool is_xqa_arch(int arch) { return arch == 90 || arch == 120; }

}  // namespace attnbench
