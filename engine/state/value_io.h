// engine/state/value_io.h
//
// Values both a state file and a distributed scan's messages carry (file pieces, engine/mpi),
// in one layout: blocks' keys (records and links that keep keys, pieces' keys) and an
// occurrence sample's sums (estimate::OccurrenceSums).
//
// Thread safety: pure functions of their arguments and the stream.

#ifndef ZSIM_ENGINE_STATE_VALUE_IO_H_
#define ZSIM_ENGINE_STATE_VALUE_IO_H_

#include <cstdint>
#include <vector>

#include "engine/ddt/fingerprint.h"
#include "engine/estimate/occurrence_sample.h"
#include "engine/state/frame_stream.h"

namespace zsim::state {

// Keys as u64 lo, u64 hi each, without their count (the caller writes and checks it).
void PutKeys(FrameWriter& w, const std::vector<ddt::Fingerprint>& keys);
// Appends `n` keys to `out` (reserving at most 64K ahead: a corrupt count fails at the data's
// end, it allocates nothing it does not hold).
void GetKeys(FrameReader& r, uint64_t n, std::vector<ddt::Fingerprint>& out);

// u64 ne, f64 lsize, lsize_ne, asize, emb_bytes, then the psize and dsize ratio moments (u64 n,
// f64 sx, sy, sxx, syy, sxy each).
void PutOccurrenceSums(FrameWriter& w, const estimate::OccurrenceSums& o);
estimate::OccurrenceSums GetOccurrenceSums(FrameReader& r);

}  // namespace zsim::state

#endif  // ZSIM_ENGINE_STATE_VALUE_IO_H_
