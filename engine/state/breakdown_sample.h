// engine/state/breakdown_sample.h
//
// Which block references a breakdown keeps. A reference is kept when the low `shift` bits of
// its key's `hi` are zero: 1/2^shift of the key space, a choice made by the key alone. The
// shift a state settles on is the smallest at which at most kBreakdownMaxRefs references of the
// whole input are kept. That rule depends only on the multiset of references, so one scan (any
// thread count, any order), a merge of parts, a distributed scan and a --since rescan of the
// same input keep the same references.
//
// A collector may raise its shift during the scan (to bound its memory) as long as it never
// passes the settled shift: it may do so only once it has seen more than kBreakdownMaxRefs
// references kept under its current shift (pipeline/breakdown.h). Each part of a merge then
// holds every reference the union keeps, since a part keeps no more than the whole.

#ifndef ZSIM_ENGINE_STATE_BREAKDOWN_SAMPLE_H_
#define ZSIM_ENGINE_STATE_BREAKDOWN_SAMPLE_H_

#include <cstddef>
#include <cstdint>
#include <map>

#include "engine/state/scan_state.h"

namespace zsim::state {

// 262,144 references (4 MiB of lists; 32 GiB of data at 128K records) are kept at most.
inline constexpr size_t kBreakdownMaxRefs = size_t{1} << 18;

// 1,048,576 distinct whole-file contents under kWholeContentBytes are kept at most (some 92 MB
// as StateMemory counts them, about 130 MB of heap); a tree of more keeps 1 in 2^content_shift
// of them, by their hash (BreakdownState::content_shift), and those files' duplicates are
// estimated. Contents of kWholeContentBytes and more are all kept and counted exactly.
inline constexpr size_t kBreakdownMaxContents = size_t{1} << 20;

// Raises `bd->shift` to the smallest shift, not below the current one, at which at most
// `max_refs` of `bd->references` are kept, and drops the references that shift does not keep.
// REQUIRES: `bd->references` are all kept under `bd->shift` or are dropped by this call.
void SettleBreakdownSample(BreakdownState* bd, size_t max_refs = kBreakdownMaxRefs);

// The same for the whole-file contents under kWholeContentBytes: raises `bd->content_shift` to
// the smallest shift, not below the current one, at which at most `max_contents` of them are
// kept, and drops the others (never a content of kWholeContentBytes or more). The rule depends only
// on the set of distinct contents, so a scan (any order), a merge of parts and a --since rescan of
// the same tree keep the same ones: a part holds no more distinct contents than the whole, so it
// never settles above the whole's shift, and a collector may raise its shift whenever it holds more
// than `max_contents` (pipeline/breakdown.h).
void SettleContentSample(BreakdownState* bd, size_t max_contents = kBreakdownMaxContents);

// The same on a contents map at `shift` (a collector's, pipeline/breakdown.h): returns the settled
// shift, and how many contents under kWholeContentBytes it keeps in *sampled_kept when given.
uint32_t SettleContents(std::map<BreakdownState::Content, uint64_t>* contents, uint32_t shift,
                        size_t max_contents, size_t* sampled_kept = nullptr);

}  // namespace zsim::state

#endif  // ZSIM_ENGINE_STATE_BREAKDOWN_SAMPLE_H_
