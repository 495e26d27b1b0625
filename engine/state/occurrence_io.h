// engine/state/occurrence_io.h
//
// An occurrence sample's sums (estimate::OccurrenceSums) in a frame stream, as the state file
// keeps them per row and setting and a distributed scan's file pieces carry them to rank 0: one
// layout for both, so a piece's sums read back as a saved state's do.
//
// Thread safety: pure functions of their arguments and the stream.

#ifndef ZSIM_ENGINE_STATE_OCCURRENCE_IO_H_
#define ZSIM_ENGINE_STATE_OCCURRENCE_IO_H_

#include "engine/estimate/occurrence_sample.h"
#include "engine/state/frame_stream.h"

namespace zsim::state {

// u64 ne, f64 lsize, lsize_ne, asize, emb_bytes, then the psize and dsize ratio moments (u64 n,
// f64 sx, sy, sxx, syy, sxy each).
void PutOccurrenceSums(FrameWriter& w, const estimate::OccurrenceSums& o);
estimate::OccurrenceSums GetOccurrenceSums(FrameReader& r);

}  // namespace zsim::state

#endif  // ZSIM_ENGINE_STATE_OCCURRENCE_IO_H_
