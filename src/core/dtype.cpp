#include "core/dtype.hpp"

#include "core/enum_names.hpp"
#include "core/errors.hpp"

namespace attnbench {

namespace {
// The names dtype_name prints (parse_dtype below takes only the model dtypes, with their other spellings).
constexpr EnumName<DType> kDTypeNames[] = {{DType::bf16, "bf16"}, {DType::fp16, "fp16"}, {DType::fp32, "fp32"},
                                           {DType::fp8_e4m3, "fp8_e4m3"}, {DType::fp8_e5m2, "fp8_e5m2"}};
}  // namespace

std::string_view dtype_name(DType t) { return enum_name(kDTypeNames, t); }

DType parse_dtype(std::string_view s, std::string_view what) {
  if (s == "bf16" || s == "bfloat16") return DType::bf16;
  if (s == "fp16" || s == "float16" || s == "half") return DType::fp16;
  if (s == "fp32" || s == "float32" || s == "float") return DType::fp32;
  throw InputError(std::string(what) + ": unknown dtype '" + std::string(s) + "' (expected bf16, fp16 or fp32)");
}

bool is_kv_cache_dtype_name(std::string_view s) {
  return s == "auto" || s == "bf16" || s == "fp16" || s == "fp8_e4m3" || s == "fp8_e5m2";
}

// SGLang's choices for --kv-cache-dtype (server_args.py: "auto", "fp8_e5m2", "fp8_e4m3", "bf16"/"bfloat16",
// "fp16"/"float16"); attnbench takes the ones listed in the error below.
DType parse_kv_cache_dtype(std::string_view s, DType model_dtype) {
  if (s == "auto") return model_dtype;
  if (s == "fp8_e4m3") return DType::fp8_e4m3;
  if (s == "fp8_e5m2") return DType::fp8_e5m2;
  if (s == "bf16" || s == "fp16") {
    const DType t = s == "bf16" ? DType::bf16 : DType::fp16;
    if (t != model_dtype)
      throw InputError("--kv-cache-dtype: " + std::string(s) + " differs from the model dtype " +
                       std::string(dtype_name(model_dtype)) +
                       " (attnbench models a KV cache in the model dtype or in fp8; use auto, fp8_e4m3 or fp8_e5m2)");
    return t;
  }
  throw InputError("--kv-cache-dtype: unknown value '" + std::string(s) +
                   "' (expected auto, bf16, fp16, fp8_e4m3 or fp8_e5m2)");
}

}  // namespace attnbench
