// engine/mpi/heavy_census.h
//
// The census of a distributed scan where a rank's own count cannot find the heavy keys (census.h:
// from N = 8 ranks on, ceil(8/N) own references would be every block; from N = 2 on for costly
// codecs, where that count codes too much). One process runs the sampled codecs on every key
// referenced ddt::kHeavyRefcount (8) times; across N ranks a key may be referenced 8 times in
// all and fewer than 8 times on each rank. So:
//  - during the scan each entry keeps its origin (ddt::DedupTable::KeepOrigins), where one of its
//    blocks lies: the rank that read it, the item (file or piece) of that rank's scan, the offset
//    in it. Shipped entries carry it (entry_wire.h); a merge keeps the first, so only the owner
//    holds it. 8 bytes per entry, and about 60 bytes plus the path per item a rank read;
//  - after the exchange (partition.h) each owner knows every key's whole refcount: for each key
//    of its shards referenced 8 times or more that lacks a sampled codec's code, it asks the rank
//    the origin names to read that block again (every rank sees the data), in all-to-all rounds;
//    that rank checks that the block still has the key's fingerprint, runs the sampled codecs on
//    it (pipeline/block_code.h, as the scan would), and answers with the codes, which the owner
//    stores. Every key one process codes in its census then has its codes.
// Reads again at most one block per heavy key not coded during the scan: bounded by the heavy
// keys' unique bytes. A block whose fingerprint differs on the second read (the file changed
// after it was read), or that cannot be read again, is never coded from other data: its file is
// listed among the errors (the report's exit code 1), and the key stays without those codes.
//
// Origins: 1 bit set (0 is "none"), 15 bits of rank, 28 of segment, 20 of 512-byte unit. An
// item takes ceil(length / 512 MiB) consecutive segments, so that the item's first origin plus a
// block's offset in it / 512 is the block's origin whatever the item's length (a zvol is one item).
//
// Thread safety: BlockOrigins::Add from one thread at a time (the scan's serial stage);
// CodeHeavyKeys is collective, from every rank's main thread, after PartitionTables.

#ifndef ZSIM_ENGINE_MPI_HEAVY_CENSUS_H_
#define ZSIM_ENGINE_MPI_HEAVY_CENSUS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/io/file_system.h"
#include "zsim/scan_options.h"
#include "zsim/scan_result.h"
#include "zsim/status.h"

namespace zsim::mpi {

// The items a rank's scan read, and the origins of their blocks.
class BlockOrigins {
 public:
  explicit BlockOrigins(int rank) : rank_(rank) {}
  // The origin of the first 512 bytes of an item: the bytes [begin, begin + length) of `path`
  // (opened following symlinks when `follow`), or 0 when this rank's segments are used up
  // (overflowed()). ScanControl::origin_of_item.
  uint64_t Add(const std::string& path, uint64_t begin, uint64_t length, bool follow);
  bool overflowed() const { return overflowed_; }
  // The rank an origin (not 0) names.
  static int RankOf(uint64_t origin);
  // Where an origin of this rank lies: false when it names no item of it.
  struct Place {
    const std::string* path = nullptr;
    uint64_t offset = 0;
    bool follow = false;
  };
  bool Locate(uint64_t origin, Place* place) const;
  // Bytes the items' list takes.
  uint64_t memory_bytes() const;

 private:
  struct Item {
    std::string path;
    uint64_t begin = 0;
    uint64_t first_segment = 0;
    bool follow = false;
  };
  int rank_;
  uint64_t next_segment_ = 0;
  bool overflowed_ = false;
  std::vector<Item> items_;  // by first_segment
};

struct HeavyCensusStats {
  uint64_t asked = 0;         // heavy keys without codes this rank owns, asked of their origin
  uint64_t reread = 0;        // blocks this rank read again for other ranks (and itself)
  uint64_t reread_bytes = 0;  // and their bytes
  uint64_t changed = 0;       // of them, with another fingerprint or unreadable
  uint64_t rounds = 0;
  uint64_t origin_bytes = 0;  // the tables' origins and the items' list, at the end of the scan
};

// Why entries of a job of `ranks` ranks can lack an origin: origins name ranks below 2^15 and, per
// rank, 2^28 segments (an item takes one per 512 MiB). For CodeHeavyKeys' error.
std::string OriginsShortBecause(int ranks);

// See the top of the file. `tables`: this rank's shards, one per row, after PartitionTables;
// `options`: the scan's, resolved; `errors`: this rank's state's input errors, which a block that
// changed adds its file to. Fails when an entry to code has no origin (the segments overflowed)
// or an answer does not read back.
Status CodeHeavyKeys(const std::vector<ddt::DedupTable*>& tables, const BlockOrigins& origins,
                     const ScanOptions& options, io::FileSystem* fs, int rank, int size,
                     std::vector<PathError>* errors, HeavyCensusStats* stats);

}  // namespace zsim::mpi

#endif  // ZSIM_ENGINE_MPI_HEAVY_CENSUS_H_
