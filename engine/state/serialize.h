// engine/state/serialize.h
//
// A ScanState's content as bytes and back, for sending a state to another process (a distributed
// scan's ranks, engine/mpi) and as the body a state file can wrap. Everything a state holds is
// written (tables entry by entry, sketches register by register, sums bit for bit), except its
// options: the reader supplies them (the ranks of one scan all run the same command) and checks
// that the bytes fit them (rows, settings, table layout). Reading back gives a state that
// Finish and Merge treat exactly as the original.
//
// Format: little-endian, a 4-byte tag "ZSS1", then the fields in the order of scan_state.h.
// Not a stable file format: the writer and the reader must be the same build.
//
// Thread safety: pure functions; the state must not be filled meanwhile.

#ifndef ZSIM_ENGINE_STATE_SERIALIZE_H_
#define ZSIM_ENGINE_STATE_SERIALIZE_H_

#include <cstdint>
#include <string>

#include "engine/base/byte_view.h"
#include "engine/state/scan_state.h"
#include "zsim/status.h"

namespace zsim::state {

// The state's content (options left out) as bytes.
std::string SerializeState(const ScanState& state);

// The state `bytes` holds, with `options` as its options. kCorruption when the bytes are cut
// short, carry another tag, or do not fit `options` (another number of rows or settings).
Result<ScanState> DeserializeState(ByteView bytes, const ScanOptions& options);

}  // namespace zsim::state

#endif  // ZSIM_ENGINE_STATE_SERIALIZE_H_
