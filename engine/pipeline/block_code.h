// engine/pipeline/block_code.h
//
// The codes a scan stores for one block under one compression setting (state format 10,
// state::CodeKind::kEarlyAbort: for every codec but off a least-budget ddt::PsizeCode, the output
// under the largest budget and the least budget it fits, and for zstd of level 3 and up a second
// code for early abort, ddt::EncodeProbe; format 9, kLeastBudgetZstd, kept zstd's raw output
// where early abort applied under the scan's profile, format 8, kLeastBudget, always), and the
// write policy it codes under.
// The scan's first sightings (scan_blocks.cc) and a distributed scan's census, which reads a block
// again after the table exchange (engine/mpi/heavy_census.h), code alike.
//
// Thread safety: pure functions (the compressor and scratch are the caller's).

#ifndef ZSIM_ENGINE_PIPELINE_BLOCK_CODE_H_
#define ZSIM_ENGINE_PIPELINE_BLOCK_CODE_H_

#include <cstdint>
#include <optional>

#include "engine/base/byte_view.h"
#include "engine/codec/codec.h"
#include "engine/codec/zfs_block.h"
#include "engine/ddt/dedup_table.h"
#include "engine/state/scan_state.h"
#include "engine/zfs/write_rules.h"
#include "zsim/scan_options.h"

namespace zsim::pipeline {

// The policy a scan with `options` (resolved) codes its blocks under.
zfs::WritePolicy ScanWritePolicy(const ScanOptions& options);

// The codes of `block` (lsize = block.size()) under `comp` in a table of least-budget codes
// (`kind`: kEarlyAbort, or kLeastBudgetZstd / kLeastBudget for a --since scan from a state of
// format 9 / 8): the setting's code, and its early-abort column's (state::ProbeColumns; only in
// a table of kind kEarlyAbort, for zstd of level 3 and up: ddt::EncodeProbe of
// codec::EarlyAbortLeastBudget for a block of 128K and more, 0 under 128K or for a hole).
// REQUIRES: scratch.size() >= block.size().
struct BlockCodes {
  ddt::PsizeCode code = ddt::kPendingCode;
  ddt::PsizeCode probe = ddt::kHoleCode;
  // The output under the largest budget, left in scratch's first bytes: its exact length and the
  // least budget it fits (lzjb, zle, lz4 and gzip in a least-budget table; nullopt otherwise, or
  // when it did not fit).
  std::optional<codec::Compressor::Fit> fit;
};
BlockCodes CodeBlock(const zfs::WritePolicy& policy, Compression comp, ByteView block, bool is_zero,
                     codec::Compressor& compressor, MutableByteView scratch,
                     state::CodeKind kind = state::CodeKind::kEarlyAbort, bool with_probe = true);

// The table code of `block` under `comp` in a table of codes of `kind` (a --since scan keeps its
// base's): CodeBlock's without the early-abort code (kEarlyAbort, and the least-budget kinds),
// the compressor's raw outcome under the policy's budget (kRaw, format 7), or psize rounded under
// the policy (kRounded, format 6 and older). The scan's first sightings and a block read again
// after the scan (block_recode.h) code alike.
BlockCodes CodeBlockOfKind(const zfs::WritePolicy& policy, Compression comp, ByteView block,
                           bool is_zero, codec::Compressor& compressor, MutableByteView scratch,
                           state::CodeKind kind);

// True when this build's codec for `c` writes OpenZFS's bytes, so that the keys WrittenKeyWord
// takes are ZFS's (gzip: codec::GzipWritesReferenceBytes, the linked zlib; lzjb, zle and lz4
// are zsim's own). A scan leaves the written-key columns of another pending: the report then
// keeps the model.
bool WritesZfsBytes(Compression c);

// The first word of the DDT key ZFS gives a block of `lsize` whose output CodeBlock left in
// `scratch` (`codes.fit`), written under `policy`'s rounding (zfs::RoundedPsize): the SHA-256
// of the output padded with zeros to its rounded psize (codec::WriteZfsBlock), read as ZFS reads
// it (ddt::ZfsChecksumWord0). Nullopt when there is no output, or it rounds up to lsize (stored
// as is: the key is the block's own). Pads scratch in place.
std::optional<uint64_t> WrittenKeyWord(const zfs::WritePolicy& policy, uint64_t lsize,
                                       const BlockCodes& codes, MutableByteView scratch);

// The early-abort code of `block` (a zstd setting of level 3 and up in a kEarlyAbort table)
// whose own code CodeBlock gave as `code`: 0 under 128K or for a hole. `with_probe` false above
// leaves `probe` to this (a scan times the two apart: the probe's runs are not zstd's speed).
// `probes`, where given, holds the block's probe runs for the next zstd setting of the same
// block (and lz4's own run of it: SeedLz4Probe).
ddt::PsizeCode EarlyAbortCode(ByteView block, ddt::PsizeCode code, codec::Compressor& compressor,
                              MutableByteView scratch, codec::EarlyAbortProbes* probes = nullptr);

// Hands the lz4 setting's run of a block (CodeBlock's answer under `comp`, `codes`) to its
// early-abort probes, where it is the run they would make: lz4's output under the largest budget
// (a least-budget table's `fit`).
void SeedLz4Probe(Compression comp, const BlockCodes& codes, codec::EarlyAbortProbes* probes);

}  // namespace zsim::pipeline

#endif  // ZSIM_ENGINE_PIPELINE_BLOCK_CODE_H_
