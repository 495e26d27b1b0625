#include "engine/state/breakdown_sample.h"

#include <algorithm>
#include <array>
#include <bit>

namespace zsim::state {

void SettleBreakdownSample(BreakdownState* bd, size_t max_refs) {
  // kept_at[s]: references whose key has at least s low zero bits of `hi` (kept under shift s).
  std::array<uint64_t, 65> zeros{};
  for (const BreakdownState::Reference& r : bd->references) {
    ++zeros[std::min<int>(std::countr_zero(r.key.hi), 64)];
  }
  std::array<uint64_t, 66> kept_at{};
  for (int s = 64; s >= 0; --s) kept_at[s] = kept_at[s + 1] + zeros[s];
  uint32_t shift = bd->shift;
  while (shift < 63 && kept_at[shift] > max_refs) ++shift;
  bd->shift = shift;
  const uint64_t mask = (uint64_t{1} << shift) - 1;
  std::erase_if(bd->references,
                [&](const BreakdownState::Reference& r) { return (r.key.hi & mask) != 0; });
}

void SettleContentSample(BreakdownState* bd, size_t max_contents) {
  std::array<uint64_t, 65> zeros{};
  for (const auto& [content, copies] : bd->contents) {
    ++zeros[std::min<int>(std::countr_zero(content.lo), 64)];
  }
  std::array<uint64_t, 66> kept_at{};
  for (int s = 64; s >= 0; --s) kept_at[s] = kept_at[s + 1] + zeros[s];
  uint32_t shift = bd->content_shift;
  while (shift < 63 && kept_at[shift] > max_contents) ++shift;
  bd->content_shift = shift;
  std::erase_if(bd->contents, [&](const auto& entry) { return !ContentKept(entry.first, shift); });
}

}  // namespace zsim::state
