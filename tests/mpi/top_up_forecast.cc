// tests/mpi/top_up_forecast.cc
//
// Run under mpirun -n 2 (tests/mpi/CMakeLists.txt): the distributed top-up tells its cost before
// it reads anything again, as one process's does (engine/mpi/distributed_top_up.h,
// TopUpTelling). Each rank writes a file of 20 unique 4K blocks and lists them as skipped; each
// rank's table holds the keys of both files it owns; the plan (16,800 blocks) leaves both sampled
// codecs at level 2, the 40 unique blocks bring them to 0. Rank 0's callback must be called once,
// before any block is read again, with every rank's blocks and the codecs' time at the speeds the
// ranks measured (summed) over every rank's threads; the other rank's never; and not at all when
// a rank was interrupted before the top-up. Exit 0 when all holds.

#include <mpi.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/ddt/fingerprint.h"
#include "engine/estimate/codec_budget.h"
#include "engine/io/file_system.h"
#include "engine/mpi/distributed_top_up.h"
#include "engine/mpi/partition.h"
#include "engine/pipeline/scan.h"
#include "engine/pipeline/skipped_blocks.h"
#include "engine/state/scan_state.h"
#include "tests/mpi/mpirun_check.h"

namespace {

using zsim::testing::Check;

constexpr int kBlocks = 20;
constexpr uint64_t kBlock = 4096;

std::vector<uint8_t> Block(int rank, int i) {
  std::vector<uint8_t> b(kBlock, 0);
  for (size_t k = 0; k < 200 + size_t(i) * 40; ++k) {
    b[k] = static_cast<uint8_t>((rank * 131 + i * 17 + k * 7) ^ (k >> 3));
  }
  return b;
}

// Counts the reads of the files, to see that nothing was read before the forecast was told.
class CountingFs : public zsim::io::FileSystem {
 public:
  explicit CountingFs(std::shared_ptr<zsim::io::FileSystem> real) : real_(std::move(real)) {}
  zsim::Result<zsim::io::FileInfo> Stat(const std::string& path, bool follow) override {
    return real_->Stat(path, follow);
  }
  zsim::Result<std::vector<zsim::io::DirEntry>> ListDirectory(const std::string& path,
                                                              bool follow) override {
    return real_->ListDirectory(path, follow);
  }
  zsim::Result<std::unique_ptr<zsim::io::File>> Open(const std::string& path,
                                                     bool follow) override {
    opens.fetch_add(1);
    return real_->Open(path, follow);
  }
  std::atomic<int> opens{0};

 private:
  std::shared_ptr<zsim::io::FileSystem> real_;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace zsim;
  int rank = 0, size = 0;
  zsim::testing::StartRanks(&argc, &argv, &rank, &size);
  {
    ScanOptions options;
    options.paths = {"/"};
    options.recordsizes = {kBlock};
    options.compressions = {*ParseCompression("lzjb", options.profile),
                            *ParseCompression("zle", options.profile)};
    options.ashift = 9;
    options.threads = 1;
    options = pipeline::ResolveOptions(options);
    const std::string path = "/tmp/zsim_top_up_forecast_" + std::to_string(getpid()) + ".bin";
    {
      FILE* f = std::fopen(path.c_str(), "wb");
      for (int i = 0; i < kBlocks; ++i) {
        const std::vector<uint8_t> b = Block(rank, i);
        std::fwrite(b.data(), 1, b.size(), f);
      }
      std::fclose(f);
    }
    state::SamplingState sampling;
    sampling.sampled = {true, true};
    sampling.anchors = {-1, -1};
    sampling.adaptive = true;
    sampling.planned_bytes = 16800 * kBlock;
    sampling.setting_levels = estimate::BudgetLevels(options, sampling.sampled, sampling.plan());
    Check(sampling.setting_levels == std::vector<int>({2, 2}), "the plan's levels are not 2");
    sampling.complete_level = 2;
    ddt::DedupTable table(
        state::TableLayout(options, sampling.sampled, state::CodeKind::kEarlyAbort, false));
    pipeline::SkippedBlocks skipped(1);
    std::atomic<uint32_t> item{pipeline::SkippedBlocks::kNoItem};
    std::vector<pipeline::SkippedBlock> listed;
    for (int r = 0; r < size; ++r) {
      for (int i = 0; i < kBlocks; ++i) {
        const ddt::Fingerprint key = ddt::ComputeFingerprint(options.checksum, Block(r, i));
        if (mpi::OwnerOfShard(ddt::DedupTable::ShardOf(key), size) == rank) {
          table.Insert(key, kBlock);
        }
        if (r != rank) continue;
        Check(skipped.Claim(0), "the list is full");
        listed.push_back(
            pipeline::SkippedBlock{key, uint64_t(i) * kBlock, skipped.ItemOf(&item, path, false)});
      }
    }
    skipped.Add(0, listed);
    const auto fs = std::make_shared<CountingFs>(io::PosixFileSystem());
    mpi::TopUpTelling telling;
    // Rank 0's scan measured lzjb at 1 us per byte, rank 1's at 3 (together: 2), zle at 0.5;
    // two threads in all.
    telling.codec_seconds = {rank == 0 ? 1.0 : 3.0, 0.5};
    telling.codec_bytes = {1000000, 1000000};
    telling.threads = 2;
    int told = 0, opens_before = -1;
    pipeline::TopUpForecast forecast;
    telling.told = [&](const pipeline::TopUpForecast& f) {
      ++told;
      opens_before = fs->opens.load();
      forecast = f;
    };
    if (rank != 0) telling.told = nullptr;  // as the distributed scan passes it
    pipeline::TopUpStats stats;
    // An interrupt on one rank before the top-up: nothing read again, nothing told, on any rank.
    {
      const std::atomic<bool> cancel{rank == size - 1};
      const std::vector<mpi::RowTopUp> left =
          mpi::TopUpDistributed({&table}, skipped, sampling, true, options, false, fs.get(), size,
                                &cancel, telling, &stats);
      Check(left.size() == 1 && left[0].to.empty(), "interrupted, the row was topped up");
      Check(told == 0 && fs->opens.load() == 0, "interrupted, it was told or read again");
    }
    const std::vector<mpi::RowTopUp> rows =
        mpi::TopUpDistributed({&table}, skipped, sampling, true, options, false, fs.get(), size,
                              nullptr, telling, &stats);
    Check(rows.size() == 1 && rows[0].to == std::vector<int>({0, 0}), "the row was not topped up");
    Check(fs->opens.load() > 0, "nothing was read again");
    if (rank == 0) {
      Check(told == 1, "told " + std::to_string(told) + " times, not once");
      Check(opens_before == 0, "a file was opened before the forecast was told");
      const uint64_t blocks = uint64_t(kBlocks) * uint64_t(size);
      Check(forecast.blocks == blocks, "blocks " + std::to_string(forecast.blocks));
      Check(forecast.bytes == blocks * kBlock, "bytes " + std::to_string(forecast.bytes));
      Check(forecast.rows == 1 && forecast.block_sizes == std::vector<uint64_t>({kBlock}),
            "not the one 4K row");
      // Both codecs on every block, at the ranks' speeds together, over the threads.
      const double cpu = double(blocks * kBlock) * (2e-6 + 0.5e-6);
      Check(std::abs(forecast.codec_cpu_seconds - cpu) < 1e-9,
            "CPU s " + std::to_string(forecast.codec_cpu_seconds) + ", not " + std::to_string(cpu));
      Check(std::abs(forecast.seconds - cpu / 2) < 1e-9,
            "seconds " + std::to_string(forecast.seconds));
    } else {
      Check(told == 0, "a rank but 0 was told");
    }
    std::remove(path.c_str());
  }
  return zsim::testing::FinishRanks(rank);
}
