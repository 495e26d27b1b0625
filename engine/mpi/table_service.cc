#include "engine/mpi/table_service.h"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "engine/mpi/entry_wire.h"
#include "engine/mpi/messages.h"
#include "engine/mpi/peak_rss.h"

namespace zsim::mpi {
namespace {

constexpr size_t kBatchBytes = size_t{1} << 20;
constexpr int32_t kDone = -1;

std::string Command(int32_t row) {
  std::string c(sizeof row, '\0');
  std::memcpy(c.data(), &row, sizeof row);
  return c;
}

// Rank 0's end of the streams, shared by every row's remote part; releases the peers when the
// last part goes.
class Peers {
 public:
  explicit Peers(int size) : size_(size) {}
  ~Peers() {
    for (int p = 1; p < size_; ++p) SendSmall(p, kTagTableCommand, Command(kDone));
    // ZSIM_MPI_STATS=1: what reading the other ranks' shards cost rank 0 (the report and --save
    // are made by now), for bench/e2e/mpi_scaling.py.
    if (std::getenv("ZSIM_MPI_STATS") != nullptr) {
      std::fprintf(stderr,
                   "zsim-mpi-report rank=0 streams=%llu streamed_bytes=%llu peak_rss_bytes=%llu\n",
                   static_cast<unsigned long long>(streams_),
                   static_cast<unsigned long long>(streamed_bytes_),
                   static_cast<unsigned long long>(PeakRssBytes()));
    }
  }
  Peers(const Peers&) = delete;
  Peers& operator=(const Peers&) = delete;

  // Calls fn for every peer's entries of `row`. Should fn throw (Finish's tally may run out of
  // memory), every peer's remaining batches are still taken, so that each peer ends its stream
  // and waits for the next request, and the first exception is then rethrown: a later stream, or
  // the release of the peers, meets no leftover batch.
  void Stream(int32_t row, size_t settings,
              const std::function<void(const ddt::EntryView&)>& fn) const {
    std::lock_guard<std::mutex> lock(mu_);
    ++streams_;
    std::exception_ptr thrown;
    for (int p = 1; p < size_; ++p) SendSmall(p, kTagTableCommand, Command(row));
    for (int p = 1; p < size_; ++p) {
      for (bool last = false; !last;) {
        const std::string batch = ReceiveSmall(p, kTagTableBatch, nullptr);
        streamed_bytes_ += batch.size();
        last = batch.empty() || batch[0] != 0;
        if (thrown) continue;  // drained only
        Status s;
        try {
          s = ForEachWireEntry(std::string_view(batch).substr(batch.empty() ? 0 : 1), settings, fn);
        } catch (...) {
          thrown = std::current_exception();
          continue;
        }
        if (!s.ok()) {
          // Ranks of different builds: no report can be right, and every rank waits on this one.
          std::fprintf(stderr, "zsim: rank %d's table entries: %s\n", p, s.message().c_str());
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
      }
    }
    if (thrown) std::rethrow_exception(thrown);
  }

 private:
  int size_;
  mutable std::mutex mu_;  // one stream at a time: its request and every batch
  mutable uint64_t streams_ = 0, streamed_bytes_ = 0;  // Guarded by mu_.
};

class RowPart : public ddt::RemotePart {
 public:
  RowPart(std::shared_ptr<const Peers> peers, int32_t row, size_t settings, uint64_t entries,
          uint64_t bytes)
      : peers_(std::move(peers)),
        row_(row),
        settings_(settings),
        entries_(entries),
        bytes_(bytes) {}
  void ForEach(const std::function<void(const ddt::EntryView&)>& fn) const override {
    peers_->Stream(row_, settings_, fn);
  }
  uint64_t entries() const override { return entries_; }
  uint64_t memory_bytes() const override { return bytes_; }

 private:
  std::shared_ptr<const Peers> peers_;
  int32_t row_;
  size_t settings_;
  uint64_t entries_, bytes_;
};

// Per row, this rank's entries and bytes: what the gather sends.
std::vector<uint64_t> Sizes(const std::vector<const ddt::DedupTable*>& tables) {
  std::vector<uint64_t> v;
  for (const ddt::DedupTable* t : tables) {
    v.push_back(t->local_entries());
    v.push_back(t->local_memory_bytes());
  }
  return v;
}

}  // namespace

void AttachPeerTables(const std::vector<ddt::DedupTable*>& tables, int size) {
  const std::vector<uint64_t> mine =
      Sizes(std::vector<const ddt::DedupTable*>(tables.begin(), tables.end()));
  std::vector<uint64_t> all(mine.size() * static_cast<size_t>(size));
  MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_UINT64_T, all.data(),
             static_cast<int>(mine.size()), MPI_UINT64_T, 0, MPI_COMM_WORLD);
  auto peers = std::make_shared<const Peers>(size);
  for (size_t r = 0; r < tables.size(); ++r) {
    uint64_t entries = 0, bytes = 0;
    for (int p = 1; p < size; ++p) {
      entries += all[static_cast<size_t>(p) * mine.size() + 2 * r];
      bytes += all[static_cast<size_t>(p) * mine.size() + 2 * r + 1];
    }
    tables[r]->AttachRemote(std::make_shared<RowPart>(peers, static_cast<int32_t>(r),
                                                      tables[r]->settings(), entries, bytes));
  }
}

void ServeTables(const std::vector<const ddt::DedupTable*>& tables) {
  const std::vector<uint64_t> mine = Sizes(tables);
  MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_UINT64_T, nullptr, 0, MPI_UINT64_T, 0,
             MPI_COMM_WORLD);
  for (;;) {
    const std::string command = ReceiveSmall(0, kTagTableCommand, nullptr);
    int32_t row = kDone;
    if (command.size() == sizeof row) std::memcpy(&row, command.data(), sizeof row);
    if (row < 0 || static_cast<size_t>(row) >= tables.size()) return;
    std::string batch(1, '\0');
    tables[static_cast<size_t>(row)]->ForEach([&](const ddt::EntryView& e) {
      AppendEntry(e, &batch);
      if (batch.size() >= kBatchBytes) {
        SendSmall(0, kTagTableBatch, batch);
        batch.assign(1, '\0');
      }
    });
    batch[0] = 1;
    SendSmall(0, kTagTableBatch, batch);
  }
}

}  // namespace zsim::mpi
