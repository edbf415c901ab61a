// Enum <-> name tables: one constexpr table of {value, name} per enum, in the .cpp that owns the enum, and two
// lookups over it. The first entry of a value is its name; later entries of the same value are other
// spellings the parser accepts (e.g. "gpu" for cuda). A value with no entry is named "?".
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace attnbench {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

// The name of `v`: the first entry for it in `table`; "?" when it has none.
template <typename E, std::size_t N>
constexpr const char* enum_name(const EnumName<E> (&table)[N], E v) {
  for (const EnumName<E>& e : table)
    if (e.value == v) return e.name;
  return "?";
}

// The value spelled `s` (any entry of `table`); nullopt when no entry spells it.
template <typename E, std::size_t N>
constexpr std::optional<E> enum_from_name(const EnumName<E> (&table)[N], std::string_view s) {
  for (const EnumName<E>& e : table)
    if (s == e.name) return e.value;
  return std::nullopt;
}

}  // namespace attnbench
