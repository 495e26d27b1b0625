// engine/state/state_frames.h
//
// What the writer (state_write.cc) and the reader (state_read.cc) of a state's frames agree on
// beyond state_file.h's layout: the flags of entries, records and links, and the two halves.
// Internal to engine/state.
//
// Thread safety: pure functions of their arguments.

#ifndef ZSIM_ENGINE_STATE_STATE_FRAMES_H_
#define ZSIM_ENGINE_STATE_STATE_FRAMES_H_

#include <cstdint>

#include "engine/state/frame_stream.h"
#include "engine/state/scan_state.h"

namespace zsim::state::internal {

// A table entry's flags: all zero, and codes of sampled settings kept beside the inline ones.
inline constexpr uint8_t kZeroFlag = 1, kSideFlag = 2;
// File records (format version 3), after the tables their references name.
inline constexpr uint8_t kZvolRecord = 1, kFailedRecord = 2, kDataRecord = 4;
// A record that keeps keys (FileRecord::keys): in the parts a distributed scan's ranks send
// each other only (EncodeState with keyed records kept), never in a file.
inline constexpr uint8_t kKeyedRecord = 8;
// A linked file's flags (format version 5): its data, and, as kKeyedRecord, its keys kept
// (LinkedFile::keys).
inline constexpr uint8_t kDataLink = 1, kKeyedLink = 2;

// Every frame of `s` from the options to the run section (state_file.h's layout), the end frame
// excepted. `resolve_keys`: records that keep keys (FileRecord::keys) are written with the
// references of their entries (a file), else with their keys (a distributed scan's part, whose
// tables are elsewhere).
void PutState(FrameWriter& w, const ScanState& s, bool resolve_keys);

// PutState's frames read back into `s`, of format `version`, each value checked; `keyed`: records
// and links may keep keys (EncodeState's parts). A failure fails `r` with what is wrong.
void GetState(FrameReader& r, ScanState& s, uint32_t version, bool keyed);

}  // namespace zsim::state::internal

#endif  // ZSIM_ENGINE_STATE_STATE_FRAMES_H_
