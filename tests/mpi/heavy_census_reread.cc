// tests/mpi/heavy_census_reread.cc
//
// Run under mpirun -n 2 (tests/mpi/CMakeLists.txt): the census after the exchange
// (engine/mpi/heavy_census.h). Each rank writes a file of three 4K blocks; the other rank's table
// holds their keys, with origins naming this rank's blocks: block 0 referenced 8 times, block 1
// 7 times, block 2 9 times; then each rank overwrites its block 2. CodeHeavyKeys must code block
// 0 with the sampled codec as the scan codes it, leave block 1 (not heavy) alone, and never code
// block 2 from the changed data: its file must be this rank's one error, said to have changed.
// Exit 0 when all holds.

#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/codec/codec.h"
#include "engine/ddt/dedup_table.h"
#include "engine/ddt/fingerprint.h"
#include "engine/io/file_system.h"
#include "engine/mpi/heavy_census.h"
#include "engine/pipeline/block_code.h"
#include "engine/pipeline/scan.h"
#include "tests/mpi/mpirun_check.h"

namespace {

using zsim::testing::Check;

std::vector<uint8_t> Block(int rank, int i, uint8_t fill) {
  std::vector<uint8_t> b(4096, fill);
  for (size_t k = 0; k < 300; ++k) b[k * 7] = static_cast<uint8_t>(rank * 31 + i * 17 + k);
  return b;
}

void Write(const std::string& path, const std::vector<std::vector<uint8_t>>& blocks) {
  FILE* f = std::fopen(path.c_str(), "wb");
  for (const auto& b : blocks) std::fwrite(b.data(), 1, b.size(), f);
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace zsim;
  int rank = 0, size = 0;
  zsim::testing::StartRanks(&argc, &argv, &rank, &size);
  {
    ScanOptions options;
    options.paths = {"/"};
    options.recordsizes = {4096};
    options.compressions = {*ParseCompression("lz4", options.profile),
                            *ParseCompression("zstd-3", options.profile)};
    options = pipeline::ResolveOptions(options);
    const int peer = (rank + 1) % size;
    const std::string path = "/tmp/zsim_heavy_census_" + std::to_string(getpid()) + ".bin";
    std::vector<std::vector<uint8_t>> blocks = {Block(rank, 0, 'a'), Block(rank, 1, 'b'),
                                                Block(rank, 2, 'c')};
    Write(path, blocks);
    mpi::BlockOrigins origins(rank);
    const uint64_t base = origins.Add(path, 0, 3 * 4096, false);
    Check(base != 0 && mpi::BlockOrigins::RankOf(base) == rank, "the origin names its rank");
    // The peer's keys and first origin.
    std::vector<ddt::Fingerprint> mine, theirs(3);
    for (const auto& b : blocks) mine.push_back(ddt::ComputeFingerprint(options.checksum, b));
    uint64_t peer_base = 0;
    MPI_Sendrecv(mine.data(), 3 * sizeof(ddt::Fingerprint), MPI_BYTE, peer, 1, theirs.data(),
                 3 * sizeof(ddt::Fingerprint), MPI_BYTE, peer, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(&base, 1, MPI_UINT64_T, peer, 2, &peer_base, 1, MPI_UINT64_T, peer, 2,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ddt::DedupTable table(std::vector<ddt::SettingStorage>{
        {ddt::SettingStorage::Kind::kInline, true}, {ddt::SettingStorage::Kind::kSide, true}});
    table.KeepOrigins();
    const uint32_t refs[3] = {8, 7, 9};
    for (int i = 0; i < 3; ++i) {
      for (uint32_t k = 0; k < refs[i]; ++k) {
        table.Insert(theirs[i], 4096, false, nullptr, peer_base + uint64_t(i) * 8);
      }
      const ddt::PsizeCode lz4_only[2] = {100, ddt::kPendingCode};
      table.SetCodes(theirs[i], lz4_only);
    }
    // This rank's block 2 changes after it was read.
    blocks[2] = Block(rank, 2, 'z');
    Write(path, blocks);
    MPI_Barrier(MPI_COMM_WORLD);
    std::shared_ptr<io::FileSystem> fs = io::PosixFileSystem();
    std::vector<PathError> errors;
    mpi::HeavyCensusStats stats;
    const Status s =
        mpi::CodeHeavyKeys({&table}, origins, options, fs.get(), rank, size, &errors, &stats);
    Check(s.ok(), "CodeHeavyKeys failed: " + s.ToString());
    Check(stats.asked == 2, "asked " + std::to_string(stats.asked) + " keys, not 2");
    Check(stats.reread == 1 && stats.changed == 1,
          "read again " + std::to_string(stats.reread) + ", changed " +
              std::to_string(stats.changed) + ": not 1 and 1");
    // The peer's original block 0, as the scan would code it.
    const std::vector<uint8_t> peer_block0 = Block(peer, 0, 'a');
    codec::Compressor compressor;
    std::vector<uint8_t> scratch(4096);
    const ddt::PsizeCode want =
        pipeline::CodeBlock(pipeline::ScanWritePolicy(options), options.compressions[1],
                            peer_block0, false, compressor, scratch)
            .code;
    int seen = 0;
    table.ForEach([&](const ddt::EntryView& e) {
      for (int i = 0; i < 3; ++i) {
        if (e.key.lo != theirs[i].lo) continue;
        ++seen;
        if (i == 0) {
          Check(e.codes[1] == want && want != ddt::kPendingCode,
                "block 0's zstd code " + std::to_string(e.codes[1]) + ", the scan's " +
                    std::to_string(want));
        } else {
          Check(e.codes[1] == ddt::kPendingCode,
                "block " + std::to_string(i) + " was coded: " + std::to_string(e.codes[1]));
        }
        Check(e.codes[0] == 100, "the inline code changed");
      }
    });
    Check(seen == 3, "the table lost an entry");
    Check(errors.size() == 1 && errors[0].path == path &&
              errors[0].error.find("changed") != std::string::npos,
          "the changed file is not this rank's one error");
    std::remove(path.c_str());
  }
  return zsim::testing::FinishRanks(rank);
}
