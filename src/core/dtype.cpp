#include "core/dtype.hpp"

#include "core/enum_names.hpp"
#include "core/errors.hpp"

namespace attnbench {

namespace {
// The names dtype_name prints (parse_dtype below takes only the model dtypes, with their other spellings).
constexpr EnumName<DType> kDTypeNames[] = {{DType::bf16, "bf16"}, {DType::fp16, "fp16"}, {DType::fp32, "fp32"}};
}  // namespace

std::string_view dtype_name(DType t) { return enum_name(kDTypeNames, t); }

DType parse_dtype(std::string_view s, std::string_view what) {
  if (s == "bf16" || s == "bfloat16") return DType::bf16;
  if (s == "fp16" || s == "float16" || s == "half") return DType::fp16;
  if (s == "fp32" || s == "float32" || s == "float") return DType::fp32;
  throw InputError(std::string(what) + ": unknown dtype '" + std::string(s) + "' (expected bf16, fp16 or fp32)");
}

}  // namespace attnbench
