#include "engine/mpi/table_stream.h"

#include <malloc.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "engine/mpi/entry_wire.h"
#include "engine/mpi/messages.h"
#include "engine/mpi/partition.h"
#include "engine/mpi/tuning.h"
#include "engine/state/table_budget.h"

namespace zsim::mpi {
namespace {

// Entry bytes per message: whole entries, small beside the tables.
constexpr size_t kMessageBytes = size_t{1} << 20;
// The thread's longest wait while the scan runs and nothing of its own is on the way. It then
// only waits for other ranks' ships, and the scan's serial stage looks for those after each
// chunk (AfterChunk) and wakes it when one is waiting, as a ship of its own and the scan's end
// wake it: so it sleeps on its condition, and this bound only covers the stretches when no chunk
// ends (a rank waiting for work, rank 0 answering the last requests for work, a slow chunk). At
// the 5 ms poll it had, each rank's thread woke about 200 times a second, each wake taking a
// core from a scanning thread for a moment. While its sends are under way it polls within 1 ms,
// as a transfer moves only while both ends call into MPI.
constexpr auto kIdleLongest = std::chrono::milliseconds(50);
constexpr auto kBusyLongest = std::chrono::milliseconds(1);

std::string Header(int32_t row) {
  std::string h(sizeof row, '\0');
  std::memcpy(h.data(), &row, sizeof row);
  return h;
}

}  // namespace

struct TableStream::Send {
  int dest = 0;
  std::string bytes;
  MPI_Request request;
};

void TableStream::Post(std::unique_ptr<Send> send) {
  std::lock_guard<std::mutex> lock(MpiLock());
  MPI_Isend(send->bytes.data(), static_cast<int>(send->bytes.size()), MPI_BYTE, send->dest,
            kTagTableShip, MPI_COMM_WORLD, &send->request);
  sends_.push_back(std::move(send));
}

TableStream::TableStream(int rank, int size, uint64_t ship_bytes, uint64_t budget_bytes,
                         bool census, bool remember, bool origins)
    : rank_(rank),
      size_(size),
      ship_bytes_(ship_bytes),
      budget_bytes_(budget_bytes),
      census_(census),
      remember_(remember),
      origins_(origins) {
  if (const uint64_t n = EnvCount("ZSIM_MPI_SHIP_BYTES"); n > 0) ship_bytes_ = n;
}

TableStream::~TableStream() {
  scanning_.store(false);
  if (thread_.joinable()) thread_.join();
}

void TableStream::Start(const std::vector<ddt::DedupTable*>& tables) {
  tables_ = tables;
  if (origins_) {
    for (ddt::DedupTable* t : tables) t->KeepOrigins();
  }
  if (census_) {
    for (const ddt::DedupTable* t : tables) {
      received_.push_back(std::make_unique<ddt::DedupTable>(t->layout()));
      if (origins_) received_.back()->KeepOrigins();
      received_.back()->RaiseSampleShift(t->sample_shift());
    }
  }
  thread_ = std::thread([this] { Run(); });
}

void TableStream::Wake() {
  {
    std::lock_guard<std::mutex> lock(wake_mu_);
    woken_ = true;
  }
  wake_cv_.notify_one();
}

Status TableStream::Finish() {
  scanning_.store(false);
  Wake();
  if (thread_.joinable()) thread_.join();
  stats_.shipped_keys_bytes = shipped_.memory_bytes();
  return failure_;
}

uint64_t TableStream::ForeignBytes() const {
  uint64_t n = 0;
  for (const ddt::DedupTable* t : tables_) {
    uint64_t entries = 0;
    for (size_t k = 0; k < ddt::DedupTable::kShards; ++k) {
      if (OwnerOfShard(k, size_) != rank_) entries += t->shard_entries(k);
    }
    n += entries * EntryWireBytes(*t);
  }
  return n;
}

void TableStream::AfterChunk() {
  if (tables_.empty()) return;
  MergeInbox();
  uint64_t held = 0;
  for (const ddt::DedupTable* t : tables_) held += t->local_memory_bytes();
  for (const auto& t : received_) held += t->local_memory_bytes();
  stats_.peak_table_bytes = std::max(stats_.peak_table_bytes, held);
  // Another rank's ship waiting: the thread receives it (it does not poll for them).
  if (MessageWaiting(MPI_ANY_SOURCE, kTagTableShip)) Wake();
  // One ship in flight at a time: what waits to leave stays within ship_bytes plus one ship.
  if (in_flight_.load() || ForeignBytes() < ship_bytes_) return;
  // The entries read out of the scan's tables straight into messages of at most kMessageBytes per
  // owner and row: with the gate held, no chunk is between a first sighting's Insert and its
  // SetCodes, so every entry leaves with its codes.
  std::vector<std::unique_ptr<Send>> sends;
  uint64_t shipped = 0;
  {
    std::lock_guard<pipeline::TableGate> gate(gate_);
    for (size_t r = 0; r < tables_.size(); ++r) {
      const size_t each = EntryWireBytes(*tables_[r]);
      const bool origins = tables_[r]->keeps_origins();
      const size_t piece = sizeof(int32_t) + std::max(each, kMessageBytes / each * each);
      std::vector<Send*> open(size_, nullptr);  // per owner, this row's message being filled
      for (size_t k = 0; k < ddt::DedupTable::kShards; ++k) {
        const int owner = OwnerOfShard(k, size_);
        if (owner == rank_ || tables_[r]->shard_entries(k) == 0) continue;
        tables_[r]->ForEachInShard(k, [&](const ddt::EntryView& e) {
          if (open[owner] == nullptr || open[owner]->bytes.size() + each > piece) {
            sends.push_back(std::make_unique<Send>());
            open[owner] = sends.back().get();
            open[owner]->dest = owner;
            open[owner]->bytes = Header(static_cast<int32_t>(r));
            open[owner]->bytes.reserve(piece);
          }
          AppendEntry(e, &open[owner]->bytes, origins);
          if (remember_ && !e.is_zero) shipped_.Add(e.key);
          ++stats_.entries_sent;
          stats_.references_sent += e.refcount;
          stats_.bytes_sent += each;
          shipped += each;
        });
        tables_[r]->DropShard(k);
      }
    }
  }
  ++stats_.ships;
  {
    std::lock_guard<std::mutex> lock(outbox_mu_);
    for (auto& send : sends) outbox_.push_back(std::move(send));
    in_flight_.store(true);
    untrimmed_ += shipped;
  }
  Wake();
}

bool TableStream::ReceiveWaiting() {
  bool any = false;
  std::string bytes;
  while (TryReceiveSmall(MPI_ANY_SOURCE, kTagTableShip, &bytes, nullptr)) {
    any = true;
    int32_t row = -1;
    if (bytes.size() >= sizeof row) std::memcpy(&row, bytes.data(), sizeof row);
    if (row < 0) {
      ++done_from_;
      continue;
    }
    std::lock_guard<std::mutex> lock(inbox_mu_);
    inbox_.push_back(std::move(bytes));
  }
  return any;
}

void TableStream::MergeInbox() {
  std::lock_guard<std::mutex> merging(merge_mu_);
  std::vector<std::string> inbox;
  {
    std::lock_guard<std::mutex> lock(inbox_mu_);
    inbox.swap(inbox_);
  }
  // Each row's messages gathered into one table first, then merged once: Merge walks every shard
  // of the table merged into, and without a census it holds the scan's workers out meanwhile.
  std::vector<std::unique_ptr<ddt::DedupTable>> parts(tables_.size());
  for (std::string& bytes : inbox) {
    int32_t row = -1;
    std::memcpy(&row, bytes.data(), sizeof row);
    if (static_cast<size_t>(row) >= tables_.size()) {
      if (failure_.ok()) failure_ = Status::Internal("a shipped batch names no row of the tables");
      continue;
    }
    // Into the scan's own table (under the gate), or, when the scan runs a census on its own
    // references, into a table apart.
    const ddt::DedupTable& into = census_ ? *received_[row] : *tables_[row];
    std::unique_ptr<ddt::DedupTable>& part = parts[row];
    if (!part) {
      part = std::make_unique<ddt::DedupTable>(into.layout());
      if (into.keeps_origins()) part->KeepOrigins();
      part->RaiseSampleShift(into.sample_shift());
    }
    Status s = ForEachWireEntry(
        std::string_view(bytes).substr(sizeof row), into.settings(),
        [&](const ddt::EntryView& e) {
          part->LoadEntry(e);
          ++stats_.entries_received;
          if (!census_) stats_.references_merged += e.refcount;
        },
        into.keeps_origins());
    if (!s.ok() && failure_.ok()) failure_ = s;
    std::string().swap(bytes);
  }
  for (size_t row = 0; row < parts.size(); ++row) {
    if (!parts[row]) continue;
    if (census_) {
      received_[row]->Merge(*parts[row]);
      std::vector<ddt::DedupTable*> received;
      for (const auto& t : received_) received.push_back(t.get());
      Fit(received);
    } else {
      std::lock_guard<pipeline::TableGate> gate(gate_);
      tables_[row]->Merge(*parts[row]);
      Fit(tables_);
    }
    parts[row].reset();
  }
}

void TableStream::Fit(const std::vector<ddt::DedupTable*>& tables) const {
  state::FitTablesToShards(tables);
  if (budget_bytes_ == 0) return;
  for (;;) {
    const uint32_t shift = tables[0]->sample_shift();
    uint64_t bytes = 0;
    for (const ddt::DedupTable* t : tables) bytes += t->local_memory_bytes();
    if (shift >= 40 || bytes <= budget_bytes_) return;
    for (ddt::DedupTable* t : tables) t->RaiseSampleShift(shift + 1);
  }
}

void TableStream::Run() {
  // Nothing may leave this thread: an exception (a merge's allocation) would end the rank with
  // std::terminate and no word of why. Every rank waits on this one's messages, so the job ends
  // here, with a message naming the rank and no report.
  try {
    Loop();
  } catch (const std::exception& e) {
    Fail(e.what());
  } catch (...) {
    Fail("an unknown exception");
  }
}

void TableStream::Fail(const char* what) const {
  std::fprintf(stderr,
               "zsim: error: rank %d: the exchange of table entries during the scan failed (%s); "
               "the job ends without a report\n",
               rank_, what);
  std::fflush(nullptr);
  std::lock_guard<std::mutex> lock(MpiLock());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);  // not reached: MPI_Abort ends the process
}

void TableStream::Loop() {
  bool told = false;
  // Idle, it waits up to kIdleLongest while the scan runs (else kBusyLongest), and polls sooner
  // after a ship or a send.
  PollBackoff backoff(std::chrono::duration_cast<std::chrono::microseconds>(kIdleLongest));
  for (;;) {
    bool busy = ReceiveWaiting();
    // Once the scan is over its serial stage merges no more: this thread does.
    if (!scanning_.load()) MergeInbox();
    for (size_t i = 0; i < sends_.size();) {
      int done = 0;
      {
        std::lock_guard<std::mutex> lock(MpiLock());
        MPI_Test(&sends_[i]->request, &done, MPI_STATUS_IGNORE);
      }
      if (done) {
        sends_[i] = std::move(sends_.back());
        sends_.pop_back();
      } else {
        ++i;
      }
    }
    const bool scanning = scanning_.load();
    {
      std::vector<std::unique_ptr<Send>> posted;
      bool trim = false;
      {
        std::lock_guard<std::mutex> lock(outbox_mu_);
        posted.swap(outbox_);
        if (untrimmed_ >= kTrimBytes) {
          untrimmed_ = 0;
          trim = true;
        }
      }
      // The shipped shards were the scan threads' allocations, in their malloc arenas (and
      // large indexes freed raise glibc's mmap threshold, so later ones come from the arenas
      // too): freed pages go back to the system every kTrimBytes shipped, or the rank's resident
      // memory keeps what the table held before it shipped. A trim walks the heap (tens of ms
      // at 100 MB); here it holds up no scan thread.
      if (trim) malloc_trim(0);
      busy = busy || !posted.empty();
      for (auto& send : posted) Post(std::move(send));
    }
    if (sends_.empty()) {
      std::lock_guard<std::mutex> lock(outbox_mu_);
      if (outbox_.empty()) in_flight_.store(false);
    }
    if (!scanning && !told) {
      // After every batch to each rank (MPI keeps one sender's messages with one tag in order):
      // the scan has returned, so its last ship is in the outbox taken above.
      for (int d = 0; d < size_; ++d) {
        if (d == rank_) continue;
        auto send = std::make_unique<Send>();
        send->dest = d;
        send->bytes = Header(-1);
        Post(std::move(send));
      }
      told = true;
    }
    if (told && done_from_ == size_ - 1 && sends_.empty()) {
      MergeInbox();
      return;
    }
    if (busy) {
      backoff.Reset();
      continue;
    }
    std::chrono::microseconds pause = backoff.Advance();
    if (!scanning || !sends_.empty()) {
      pause = std::min<std::chrono::microseconds>(pause, kBusyLongest);
    }
    std::unique_lock<std::mutex> lock(wake_mu_);
    wake_cv_.wait_for(lock, pause, [this] { return woken_; });
    ++stats_.wakes;
    if (woken_) backoff.Reset();
    woken_ = false;
  }
}

}  // namespace zsim::mpi
