#include "core/dtype.hpp"

#include "core/errors.hpp"

namespace attnbench {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::bf16:
      return "bf16";
    case DType::fp16:
      return "fp16";
    case DType::fp32:
      return "fp32";
  }
  return "?";
}

DType parse_dtype(std::string_view s, std::string_view what) {
  if (s == "bf16" || s == "bfloat16") return DType::bf16;
  if (s == "fp16" || s == "float16" || s == "half") return DType::fp16;
  if (s == "fp32" || s == "float32" || s == "float") return DType::fp32;
  throw InputError(std::string(what) + ": unknown dtype '" + std::string(s) + "' (expected bf16, fp16 or fp32)");
}

}  // namespace attnbench
