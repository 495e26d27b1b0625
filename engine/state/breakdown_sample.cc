#include "engine/state/breakdown_sample.h"

#include <algorithm>
#include <array>
#include <bit>

namespace zsim::state {

namespace {

// The smallest shift, not below `shift`, at which at most `cap` of the `items` that `sampled`
// says are sampled have `word(item)`'s `shift` low bits all zero; the sampled items that shift
// does not keep are dropped, and how many sampled ones are left goes to *kept when given. A
// function of the set of items only.
template <typename Items, typename Sampled, typename Word>
uint32_t Settle(Items& items, uint32_t shift, size_t cap, Sampled sampled, Word word,
                size_t* kept = nullptr) {
  std::array<uint64_t, 65> zeros{};  // sampled items by their word's low zero bits
  for (const auto& item : items) {
    if (sampled(item)) ++zeros[std::min<int>(std::countr_zero(word(item)), 64)];
  }
  std::array<uint64_t, 66> kept_at{};  // kept under shift s
  for (int s = 64; s >= 0; --s) kept_at[s] = kept_at[s + 1] + zeros[s];
  while (shift < 63 && kept_at[shift] > cap) ++shift;
  const uint64_t mask = (uint64_t{1} << shift) - 1;
  std::erase_if(items, [&](const auto& item) { return sampled(item) && (word(item) & mask) != 0; });
  if (kept) *kept = static_cast<size_t>(kept_at[shift]);
  return shift;
}

}  // namespace

void SettleBreakdownSample(BreakdownState* bd, size_t max_refs) {
  bd->shift = Settle(
      bd->references, bd->shift, max_refs, [](const BreakdownState::Reference&) { return true; },
      [](const BreakdownState::Reference& r) { return r.key.hi; });
}

uint32_t SettleContents(std::map<BreakdownState::Content, uint64_t>* contents, uint32_t shift,
                        size_t max_contents, size_t* sampled_kept) {
  return Settle(
      *contents, shift, max_contents,
      [](const auto& entry) { return !ContentIsWhole(entry.first); },
      [](const auto& entry) { return entry.first.lo; }, sampled_kept);
}

void SettleContentSample(BreakdownState* bd, size_t max_contents) {
  bd->content_shift = SettleContents(&bd->contents, bd->content_shift, max_contents);
}

}  // namespace zsim::state
