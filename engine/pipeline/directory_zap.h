// engine/pipeline/directory_zap.h
//
// What a scan measures of a directory listing for the metadata model: its micro-ZAP block as
// OpenZFS lays it out (zfs/microzap.h) compressed by ZFS's lz4, the metadata compressor from
// OpenZFS 0.7 on. The walk calls it once per directory (walk::WalkOptions::directory_zap_bytes).
//
// Thread safety: a pure function (it keeps its compressor on the stack).

#ifndef ZSIM_ENGINE_PIPELINE_DIRECTORY_ZAP_H_
#define ZSIM_ENGINE_PIPELINE_DIRECTORY_ZAP_H_

#include <cstdint>
#include <span>

#include "engine/io/file_system.h"

namespace zsim::pipeline {

// Bytes of the directory's micro-ZAP block after ZFS's lz4 (its 4-byte header included; the
// block's own size when lz4 gives up within it), or 0 when the listing makes a fat ZAP (a name
// of 50 bytes or more, a block past 128K), which the model does not build. Independent of the
// listing's order (the block is laid out in name order). Listings whose entries carry no type
// (DT_UNKNOWN) are taken as regular files.
uint64_t MicrozapLz4Bytes(std::span<const io::DirEntry> entries);

}  // namespace zsim::pipeline

#endif  // ZSIM_ENGINE_PIPELINE_DIRECTORY_ZAP_H_
