// engine/pipeline/block_recode.h
//
// One block read again after the scan and coded as the scan's first sightings code it: the
// top-up (estimate/top_up.h, scan_top_up.cc) and a distributed scan's census
// (engine/mpi/heavy_census.h) both code, once the scan is over, blocks whose data it no longer
// holds.
//
// The block is read where the scan found it (zeros past the end of the file, as the scan reads a
// last record), and must have the fingerprint the table keeps for it: a file that changed since
// is never coded from other data.
//
// Thread safety: one BlockRecoder per thread (it keeps its compressor, buffers and open file).

#ifndef ZSIM_ENGINE_PIPELINE_BLOCK_RECODE_H_
#define ZSIM_ENGINE_PIPELINE_BLOCK_RECODE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/codec/codec.h"
#include "engine/ddt/dedup_table.h"
#include "engine/io/file_system.h"
#include "engine/state/scan_state.h"
#include "engine/zfs/write_rules.h"
#include "zsim/scan_options.h"
#include "zsim/status.h"

namespace zsim::pipeline {

// How the scan's tables code a block: their code kind (a --since scan keeps its base's) and
// columns (state::ProbeColumns, state::KeyColumns; `columns` in all).
struct RecodeSpec {
  state::CodeKind kind = state::CodeKind::kEarlyAbort;
  std::vector<size_t> probe_columns;
  std::vector<size_t> key_columns;
  size_t columns = 0;
};

class BlockRecoder {
 public:
  // `options`: the scan's, resolved.
  BlockRecoder(const ScanOptions& options, io::FileSystem* fs, RecodeSpec spec);

  // Reads `lsize` bytes of `path` (opened following symlinks when `follow`) at `offset`, checks
  // that they are the block of `key` (ddt::TableKey of their fingerprint), and codes them with
  // each setting c where code[c] is set, as the scan codes its first sightings: into `codes` (the
  // table's columns; the others left as they are) the setting's code (CodeBlockOfKind), its
  // written key and its early-abort code, where the table has those columns. Adds the codecs' CPU
  // nanoseconds per setting to `codec_ns` (not the written keys' or early abort's, which the scan
  // times apart too). Fails, coding nothing, when the file cannot be opened or read (the open's
  // or read's status code) or the bytes differ (kChanged); the message says which, without the
  // path.
  Status Recode(const std::string& path, bool follow, uint64_t offset, uint64_t lsize,
                const ddt::Fingerprint& key, const std::vector<bool>& code,
                std::span<ddt::PsizeCode> codes, std::span<uint64_t> codec_ns);

 private:
  Status Read(const std::string& path, bool follow, uint64_t offset);

  const ScanOptions& options_;
  io::FileSystem* fs_;
  const zfs::WritePolicy policy_;
  const RecodeSpec spec_;
  codec::Compressor compressor_;
  std::vector<uint8_t> block_, scratch_;
  std::string open_path_;
  std::unique_ptr<io::File> file_;
};

}  // namespace zsim::pipeline

#endif  // ZSIM_ENGINE_PIPELINE_BLOCK_RECODE_H_
