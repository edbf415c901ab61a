#include "engine/sglang_profile.hpp"

#include "core/errors.hpp"

namespace attnbench {

const std::vector<SglangProfile>& sglang_profiles() {
  static const std::vector<SglangProfile> profiles = [] {
    std::vector<SglangProfile> v;
    SglangProfile p0523;
    p0523.version = "0.5.23";
    p0523.flashinfer_version = "0.7.2";
    p0523.description = "SGLang 0.5.23 (October 2026 release): trtllm_mha prefill on SM90 through fmha_v2, XQA semaphores before the workspace";
    p0523.xqa_semaphore_prefix = true;
    p0523.fmha_v2_prefill = true;
    p0523.fused_kv_pool = true;
    p0523.xqa_spec_dec_mask = true;
    p0523.decode_seq_len_splits = true;
    p0523.page128_check_off_xqa_only = true;
    p0523.flashinfer_rejects_fp32 = true;
    p0523.trtllm_reads_e4m3_only = true;
    v.push_back(p0523);
    SglangProfile main;
    main.version = "30cb848d4";
    main.flashinfer_version = "0.6.15.post1";
    main.description = "SGLang main @30cb848d4 (July 2026): trtllm_mha prefill on SM100 only (the model of results before 0.5.23)";
    v.push_back(main);
    return v;
  }();
  return profiles;
}

const SglangProfile& default_sglang_profile() { return sglang_profiles().front(); }

const SglangProfile& find_sglang_profile(const std::string& version, const std::string& option) {
  for (const auto& p : sglang_profiles())
    if (p.version == version) return p;
  std::string names;
  for (const auto& p : sglang_profiles()) names += (names.empty() ? "" : ", ") + p.version;
  throw InputError(option + ": unknown SGLang version '" + version + "' (modelled: " + names + ")");
}

int parse_arch(const std::string& s, const std::string& option) {
  if (s == "sm90") return 90;
  if (s == "sm100") return 100;
  if (s == "sm120") return 120;
  throw InputError(option + ": unknown architecture '" + s + "' (expected sm90, sm100 or sm120)");
}

std::string arch_name(int arch) { return "sm" + std::to_string(arch); }

}  // namespace attnbench
