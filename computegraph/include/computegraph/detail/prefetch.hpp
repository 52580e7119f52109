#pragma once
// Cache hints for walks over graphs much larger than the cache. They never change results; a
// hint for an address that is not used soon only costs the hint.
#include <cstddef>

namespace computegraph::detail {

inline void prefetch(const void* address) { __builtin_prefetch(address, 0); }
inline void prefetch_for_write(const void* address) { __builtin_prefetch(address, 1); }

/// Prefetches every cache line of `*object`.
template <class T>
void prefetch_object(const T* object) {
  constexpr std::size_t kLine = 64;
  const char* p = reinterpret_cast<const char*>(object);
  for (std::size_t offset = 0; offset < sizeof(T); offset += kLine) prefetch(p + offset);
  prefetch(p + sizeof(T) - 1);
}

}  // namespace computegraph::detail
