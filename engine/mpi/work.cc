#include "engine/mpi/work.h"

#include <mpi.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>

#include "engine/base/mix.h"
#include "engine/mpi/messages.h"
#include "engine/state/frame_stream.h"

namespace zsim::mpi {
namespace {

// A queue of items refilled by `refill` (an empty batch ends it).
class BatchSource : public walk::WalkSource {
 public:
  explicit BatchSource(WorkWait wait) : wait_(std::move(wait)) {}
  std::optional<walk::WalkItem> Next() override {
    while (queue_.empty()) {
      if (done_) return std::nullopt;
      const auto asked = std::chrono::steady_clock::now();
      std::vector<walk::WalkItem> batch = Refill();
      if (wait_) {
        const auto waited = std::chrono::steady_clock::now() - asked;
        wait_->fetch_add(static_cast<uint64_t>(
                             std::chrono::duration_cast<std::chrono::nanoseconds>(waited).count()),
                         std::memory_order_relaxed);
      }
      if (batch.empty()) done_ = true;
      for (walk::WalkItem& item : batch) queue_.push_back(std::move(item));
    }
    walk::WalkItem item = std::move(queue_.front());
    queue_.pop_front();
    return item;
  }

 protected:
  virtual std::vector<walk::WalkItem> Refill() = 0;
  bool done_ = false;

 private:
  WorkWait wait_;
  std::deque<walk::WalkItem> queue_;
};

class Local : public BatchSource {
 public:
  Local(WorkPool* pool, WorkServer* server, WorkWait wait)
      : BatchSource(std::move(wait)), pool_(pool), server_(server) {}

 private:
  std::vector<walk::WalkItem> Refill() override {
    // The others first: a rank whose scan finds no data to read (directories, empty files)
    // calls no chunk's end, and would otherwise take every batch itself.
    if (server_) server_->Poll();
    std::vector<walk::WalkItem> batch = pool_->Take(0);
    if (batch.empty() && server_) server_->DrainInBackground();
    return batch;
  }
  WorkPool* pool_;
  WorkServer* server_;
};

class Remote : public BatchSource {
 public:
  // Its first batch comes unasked (work.h).
  explicit Remote(WorkWait wait) : BatchSource(std::move(wait)) {}
  ~Remote() override {
    if (!done_) {
      // Interrupted: take the answer on its way (its items go unscanned: the state is partial),
      // then say goodbye so rank 0 stops waiting for this rank.
      ReceiveSmall(0, kTagWorkBatch, nullptr);
      Ask(false);
    }
    EndAsk();
  }

 private:
  // A request goes out without waiting for its send to complete, which may wait for rank 0 to
  // call into MPI, and rank 0 does only between its chunks (WorkServer).
  void Ask(bool more) {
    EndAsk();  // the previous one, taken by rank 0 when it answered
    ask_ = std::string(1, more ? '\1' : '\0');
    std::lock_guard<std::mutex> lock(MpiLock());
    MPI_Isend(ask_.data(), 1, MPI_BYTE, 0, kTagWorkRequest, MPI_COMM_WORLD, &asking_);
  }
  void EndAsk() {
    PollBackoff backoff;
    for (;;) {
      int done = 0;
      {
        std::lock_guard<std::mutex> lock(MpiLock());
        MPI_Test(&asking_, &done, MPI_STATUS_IGNORE);  // at once for MPI_REQUEST_NULL
      }
      if (done) return;
      backoff.Pause();
    }
  }
  std::vector<walk::WalkItem> Refill() override {
    std::vector<walk::WalkItem> batch = DecodeItems(ReceiveSmall(0, kTagWorkBatch, nullptr));
    if (!batch.empty()) Ask(true);  // the next batch travels while this one is scanned
    return batch;
  }
  std::string ask_;
  MPI_Request asking_ = MPI_REQUEST_NULL;
};

uint64_t ItemBytes(const walk::WalkItem& item) {
  if (item.piece_end != 0) return item.piece_end - item.piece_begin;
  const bool data =
      item.kind == walk::WalkItem::Kind::kFile || item.kind == walk::WalkItem::Kind::kZvol;
  return data ? item.info.size : 0;
}

// The batch size rounded up to whole chunks (at least one).
uint64_t PieceBytes(uint64_t batch_bytes, uint64_t chunk_bytes) {
  const uint64_t chunk = std::max<uint64_t>(chunk_bytes, 1);
  return std::max<uint64_t>((batch_bytes + chunk - 1) / chunk, 1) * chunk;
}

}  // namespace

// Every field is sent: a field added to these structs must be added here too.
static_assert(sizeof(io::FileInfo) == 72 && sizeof(walk::WalkItem) == 192,
              "a walk item field is not sent to the other ranks (EncodeItems, DecodeItems)");

std::string EncodeItems(const std::vector<walk::WalkItem>& items) {
  std::string out;
  state::FrameWriter w(&out);
  w.U64(items.size());
  for (const walk::WalkItem& it : items) {
    w.U8(static_cast<uint8_t>(it.kind));
    w.Str(it.path);
    w.U64(it.root);
    w.U8(static_cast<uint8_t>(it.info.type));
    w.U64(it.info.dev);
    w.U64(it.info.ino);
    w.U64(it.info.size);
    w.U64(it.info.nlink);
    w.U64(it.info.allocated);
    w.U64(static_cast<uint64_t>(it.info.mtime_ns));
    w.U64(static_cast<uint64_t>(it.info.ctime_ns));
    w.U64(it.info.rdev);
    w.U8(static_cast<uint8_t>(it.skip_reason));
    w.I32(static_cast<int32_t>(it.error.code()));
    w.Str(it.error.ok() ? std::string() : it.error.message());
    w.U64(it.dir_entries);
    w.U64(it.dir_name_bytes);
    w.U64(it.dir_longest_name);
    w.U64(it.dir_zap_bytes);
    w.U64(it.piece_begin);
    w.U64(it.piece_end);
    w.U64(it.piece_file);
  }
  w.Finish();  // appending to a string does not fail
  return out;
}

std::vector<walk::WalkItem> DecodeItems(const std::string& bytes) {
  state::FrameReader r(ByteView(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
                       /*verify=*/true);
  constexpr size_t kMaxString = size_t{1} << 20;
  std::vector<walk::WalkItem> items(std::min<uint64_t>(r.U64(), kBatchItems * 2));
  for (walk::WalkItem& it : items) {
    it.kind = static_cast<walk::WalkItem::Kind>(r.U8());
    it.path = r.Str(kMaxString);
    it.root = r.U64();
    it.info.type = static_cast<io::FileType>(r.U8());
    it.info.dev = r.U64();
    it.info.ino = r.U64();
    it.info.size = r.U64();
    it.info.nlink = r.U64();
    it.info.allocated = r.U64();
    it.info.mtime_ns = static_cast<int64_t>(r.U64());
    it.info.ctime_ns = static_cast<int64_t>(r.U64());
    it.info.rdev = r.U64();
    it.skip_reason = static_cast<walk::SkipReason>(r.U8());
    const auto code = static_cast<StatusCode>(r.I32());
    std::string message = r.Str(kMaxString);
    if (code != StatusCode::kOk) it.error = Status(code, std::move(message));
    it.dir_entries = r.U64();
    it.dir_name_bytes = r.U64();
    it.dir_longest_name = r.U64();
    it.dir_zap_bytes = r.U64();
    it.piece_begin = r.U64();
    it.piece_end = r.U64();
    it.piece_file = r.U64();
  }
  // Rank 0 of the same build wrote them: a malformed batch is a bug, not an input problem.
  if (!r.End().ok()) {
    std::fprintf(stderr, "zsim: a batch of work from rank 0 does not read back\n");
    std::abort();
  }
  return items;
}

WorkPool::WorkPool(std::unique_ptr<walk::WalkSource> walk, uint64_t batch_bytes,
                   uint64_t chunk_bytes, int ranks)
    : walk_(std::move(walk)),
      batch_bytes_(batch_bytes ? batch_bytes : kBatchBytes),
      piece_bytes_(PieceBytes(batch_bytes_, chunk_bytes)),
      ranks_(std::max(ranks, 1)),
      parked_(static_cast<size_t>(ranks_)),
      park_items_(std::max<size_t>(kBatchItems, kParkedItems / static_cast<size_t>(ranks_))) {}

int WorkPool::PreferredRank(const walk::WalkItem& item) const {
  if (ranks_ == 1 || ItemBytes(item) == 0) return -1;
  // The same size and offset on every rank's walk alike: copies of a file, and clones of an
  // image at their common offsets, go to one rank.
  const uint64_t h = Mix64(item.info.size * kGoldenGamma + Mix64(item.piece_begin + 1));
  return static_cast<int>(h % static_cast<uint64_t>(ranks_));
}

bool WorkPool::ParkedFull(int rank) const {
  const Parked& p = parked_[static_cast<size_t>(rank)];
  return p.gone || p.bytes >= kParkedBatches * batch_bytes_ || p.items.size() >= park_items_;
}

std::optional<walk::WalkItem> WorkPool::NextItem() {
  for (;;) {
    if (!split_.empty() && next_piece_ < split_.back().info.size) {
      // The next piece of the file being split.
      walk::WalkItem piece = split_.back();
      piece.piece_begin = next_piece_;
      piece.piece_end = std::min(next_piece_ + piece_bytes_, piece.info.size);
      piece.piece_file = split_.size() - 1;
      next_piece_ = piece.piece_end;
      return piece;
    }
    if (done_) return std::nullopt;
    std::optional<walk::WalkItem> item = walk_->Next();
    if (!item) {
      done_ = true;
      walk_.reset();  // its threads end now
      return std::nullopt;
    }
    if (item->kind == walk::WalkItem::Kind::kFile && item->info.size > piece_bytes_) {
      split_.push_back(std::move(*item));  // handed out piece by piece from now on
      next_piece_ = 0;
      continue;
    }
    return item;
  }
}

std::vector<walk::WalkItem> WorkPool::Take(int rank) {
  std::lock_guard<std::mutex> lock(mu_);
  assert(rank >= 0 && rank < ranks_);
  const int me = std::clamp(rank, 0, ranks_ - 1);
  std::vector<walk::WalkItem> batch;
  uint64_t bytes = 0;
  const auto full = [&] { return bytes >= batch_bytes_ || batch.size() >= kBatchItems; };
  const auto take_parked = [&](Parked& p, bool front) {
    walk::WalkItem& item = front ? p.items.front() : p.items.back();
    bytes += ItemBytes(item);
    p.bytes -= ItemBytes(item);
    batch.push_back(std::move(item));
    if (front) {
      p.items.pop_front();
    } else {
      p.items.pop_back();
    }
  };
  // What the walk left for this rank first, then the walk: another rank's items wait for it
  // until its queue holds kParkedBatches' worth, then whoever asks takes them (the queues are
  // bounded, and a slow rank's work goes to the others).
  Parked& mine = parked_[static_cast<size_t>(me)];
  while (!full() && !mine.items.empty()) take_parked(mine, /*front=*/true);
  while (!full()) {
    std::optional<walk::WalkItem> item = NextItem();
    if (!item) break;
    const int to = PreferredRank(*item);
    if (to < 0 || to == me || ParkedFull(to)) {
      bytes += ItemBytes(*item);
      batch.push_back(std::move(*item));
      continue;
    }
    Parked& theirs = parked_[static_cast<size_t>(to)];
    theirs.bytes += ItemBytes(*item);
    theirs.items.push_back(std::move(*item));
  }
  // The walk is done: another rank's waiting items beyond its next batch, from the back of the
  // longest queue first (a rank that falls behind), and all of a rank's that left. The batch a
  // rank would take next stays its own: it asks until its batch comes back empty.
  while (!full()) {
    Parked* most = nullptr;
    for (Parked& p : parked_) {
      const bool spare =
          p.gone ? !p.items.empty() : p.bytes > batch_bytes_ || p.items.size() > kBatchItems;
      if (spare && (most == nullptr || p.bytes > most->bytes)) most = &p;
    }
    if (most == nullptr) break;
    take_parked(*most, /*front=*/false);
  }
  return batch;
}

void WorkPool::Forget(int rank) {
  std::lock_guard<std::mutex> lock(mu_);
  if (rank >= 0 && rank < ranks_) parked_[static_cast<size_t>(rank)].gone = true;
}

std::vector<walk::WalkItem> WorkPool::SplitFiles() {
  std::lock_guard<std::mutex> lock(mu_);
  return split_;
}

std::unique_ptr<walk::WalkSource> LocalShare(WorkPool* pool, WorkServer* server, WorkWait wait) {
  return std::make_unique<Local>(pool, server, std::move(wait));
}

std::unique_ptr<walk::WalkSource> RemoteShare(WorkWait wait) {
  return std::make_unique<Remote>(std::move(wait));
}

struct WorkServer::Answer {
  std::string bytes;
  MPI_Request request;
};

WorkServer::WorkServer(WorkPool* pool, int ranks, const std::atomic<bool>* cancel)
    : pool_(pool), cancel_(cancel), ranks_(ranks), active_(ranks - 1) {}

WorkServer::~WorkServer() {
  if (drainer_.joinable()) drainer_.join();
}

WorkTraffic WorkServer::traffic() const {
  std::lock_guard<std::mutex> lock(mu_);
  return traffic_;
}

void WorkServer::Progress() {
  for (size_t i = 0; i < sending_.size();) {
    int done = 0;
    {
      std::lock_guard<std::mutex> lock(MpiLock());
      MPI_Test(&sending_[i]->request, &done, MPI_STATUS_IGNORE);
    }
    if (done) {
      sending_[i] = std::move(sending_.back());
      sending_.pop_back();
    } else {
      ++i;
    }
  }
}

bool WorkServer::AnswerOne() {
  std::string request;
  int from = 0;
  if (active_ <= 0 || !TryReceiveSmall(MPI_ANY_SOURCE, kTagWorkRequest, &request, &from)) {
    return false;
  }
  if (request.empty() || request[0] == '\0') {
    --active_;  // left early: what waits for it goes to the others
    pool_->Forget(from);
    return true;
  }
  SendBatch(from);
  return true;
}

void WorkServer::SendBatch(int to) {
  const bool stop = cancel_ != nullptr && cancel_->load();
  const std::vector<walk::WalkItem> batch = stop ? std::vector<walk::WalkItem>() : pool_->Take(to);
  auto answer = std::make_unique<Answer>();
  answer->bytes = EncodeItems(batch);
  {
    std::lock_guard<std::mutex> lock(MpiLock());
    MPI_Isend(answer->bytes.data(), static_cast<int>(answer->bytes.size()), MPI_BYTE, to,
              kTagWorkBatch, MPI_COMM_WORLD, &answer->request);
  }
  traffic_.bytes += answer->bytes.size();
  sending_.push_back(std::move(answer));
  if (batch.empty()) {
    --active_;
  } else {
    ++traffic_.batches;
  }
}

void WorkServer::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  for (int to = 1; to < ranks_; ++to) SendBatch(to);
}

void WorkServer::Poll() {
  // Held by the draining thread from its start to its end: it answers meanwhile.
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_poll_ < kPollEvery) return;
  last_poll_ = now;
  Progress();
  while (AnswerOne()) {
  }
}

void WorkServer::DrainInBackground() {
  std::call_once(drain_once_, [this] { drainer_ = std::thread([this] { Drain(); }); });
}

void WorkServer::Finish() {
  DrainInBackground();  // no-op if started: then the thread drains
  drainer_.join();
}

void WorkServer::Drain() {
  std::lock_guard<std::mutex> lock(mu_);
  // Rank 0's scan is over; the others' may not be: their requests come a batch apart.
  PollBackoff backoff(std::chrono::milliseconds(1));
  for (;;) {
    Progress();
    if (AnswerOne()) {
      backoff.Reset();
      continue;
    }
    if (active_ <= 0 && sending_.empty()) return;
    // An answer on its way moves only while this end polls: the shortest pauses meanwhile.
    if (!sending_.empty()) backoff.Reset();
    backoff.Pause();
  }
}

}  // namespace zsim::mpi
