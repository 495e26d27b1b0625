// engine/pipeline/block_code.h
//
// The code a scan stores for one block under one compression setting (state format 9,
// state::CodeKind::kLeastBudgetZstd: for lzjb, zle, lz4, gzip and zstd without early abort a
// least-budget ddt::PsizeCode, the output under the largest budget and the least budget it fits;
// for zstd with early abort a raw one, its output under the scan's budget; format 8,
// kLeastBudget, kept zstd's raw always), and the write policy it codes under.
// The scan's first sightings (scan.cc) and a distributed scan's census, which reads a block again
// after the table exchange (engine/mpi/heavy_census.h), code alike.
//
// Thread safety: pure functions (the compressor and scratch are the caller's).

#ifndef ZSIM_ENGINE_PIPELINE_BLOCK_CODE_H_
#define ZSIM_ENGINE_PIPELINE_BLOCK_CODE_H_

#include "engine/base/byte_view.h"
#include "engine/codec/codec.h"
#include "engine/ddt/dedup_table.h"
#include "engine/state/scan_state.h"
#include "engine/zfs/write_rules.h"
#include "zsim/scan_options.h"

namespace zsim::pipeline {

// The policy a scan with `options` (resolved) codes its blocks under.
zfs::WritePolicy ScanWritePolicy(const ScanOptions& options);

// The code of `block` (lsize = block.size()) under `comp` in a table of least-budget codes
// (`kind`: kLeastBudgetZstd, or kLeastBudget for a --since scan from a state of format 8).
// REQUIRES: scratch.size() >= block.size().
ddt::PsizeCode RawBlockCode(const zfs::WritePolicy& policy, Compression comp, ByteView block,
                            bool is_zero, codec::Compressor& compressor, MutableByteView scratch,
                            state::CodeKind kind = state::CodeKind::kLeastBudgetZstd);

}  // namespace zsim::pipeline

#endif  // ZSIM_ENGINE_PIPELINE_BLOCK_CODE_H_
