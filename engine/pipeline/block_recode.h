// engine/pipeline/block_recode.h
//
// One block read again after the scan and coded as the scan's first sightings code it: the
// top-up (estimate/top_up.h, scan.cc) and a distributed scan's census (engine/mpi/heavy_census.h)
// both code, once the scan is over, blocks whose data it no longer holds.
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
#include "engine/zfs/write_rules.h"
#include "zsim/scan_options.h"
#include "zsim/status.h"

namespace zsim::pipeline {

// The fingerprint of a block equals an entry's key as a table keeps it (its top 8 and low 32
// bits of hi; ddt::EntryView).
bool SameKey(const ddt::Fingerprint& block, const ddt::Fingerprint& entry);

class BlockRecoder {
 public:
  // `options`: the scan's, resolved; `probe_columns` and `key_columns`: the table's
  // (state::ProbeColumns, state::KeyColumns), of `columns` columns in all.
  BlockRecoder(const ScanOptions& options, io::FileSystem* fs, std::vector<size_t> probe_columns,
               std::vector<size_t> key_columns, size_t columns);

  // Reads `lsize` bytes of `path` (opened following symlinks when `follow`) at `offset`, checks
  // that they have the fingerprint `key`, and codes them with each setting c where code[c] is
  // set: into `codes` (the table's columns; the others left as they are): the setting's code,
  // its early-abort code and its written key, where the table has those columns. Adds the
  // codecs' CPU nanoseconds per setting to `codec_ns` (settings entries). Fails, coding nothing,
  // when the file cannot be opened or read (kIoError) or the bytes differ (kFailedPrecondition);
  // the message says which, without the path.
  Status Recode(const std::string& path, bool follow, uint64_t offset, uint64_t lsize,
                const ddt::Fingerprint& key, const std::vector<bool>& code,
                std::span<ddt::PsizeCode> codes, std::span<uint64_t> codec_ns);

 private:
  Status Read(const std::string& path, bool follow, uint64_t offset);

  const ScanOptions& options_;
  io::FileSystem* fs_;
  const zfs::WritePolicy policy_;
  const std::vector<size_t> probe_columns_;
  const std::vector<size_t> key_columns_;
  const size_t columns_;
  codec::Compressor compressor_;
  std::vector<uint8_t> block_, scratch_;
  std::string open_path_;
  std::unique_ptr<io::File> file_;
};

}  // namespace zsim::pipeline

#endif  // ZSIM_ENGINE_PIPELINE_BLOCK_RECODE_H_
