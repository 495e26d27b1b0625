#include "engine/mpi/work.h"

#include <mpi.h>

#include <cstdlib>
#include <deque>

#include "engine/base/byte_wire.h"
#include "engine/mpi/messages.h"

namespace zsim::mpi {
namespace {

// A queue of items refilled by `refill` (an empty batch ends it).
class BatchSource : public walk::WalkSource {
 public:
  std::optional<walk::WalkItem> Next() override {
    while (queue_.empty()) {
      if (done_) return std::nullopt;
      std::vector<walk::WalkItem> batch = Refill();
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
  std::deque<walk::WalkItem> queue_;
};

class Local : public BatchSource {
 public:
  explicit Local(WorkPool* pool) : pool_(pool) {}

 private:
  std::vector<walk::WalkItem> Refill() override { return pool_->Take(); }
  WorkPool* pool_;
};

class Remote : public BatchSource {
 public:
  Remote() { Ask(true); }
  ~Remote() override {
    if (done_) return;
    // Interrupted: take the answer on its way (its items go unscanned: the state is partial),
    // then say goodbye so rank 0 stops waiting for this rank.
    ReceiveSmall(0, kTagWorkBatch, nullptr);
    Ask(false);
  }

 private:
  void Ask(bool more) { SendSmall(0, kTagWorkRequest, std::string(1, more ? '\1' : '\0')); }
  std::vector<walk::WalkItem> Refill() override {
    std::vector<walk::WalkItem> batch = DecodeItems(ReceiveSmall(0, kTagWorkBatch, nullptr));
    if (!batch.empty()) Ask(true);  // the next batch travels while this one is scanned
    return batch;
  }
};

uint64_t ItemBytes(const walk::WalkItem& item) {
  const bool data =
      item.kind == walk::WalkItem::Kind::kFile || item.kind == walk::WalkItem::Kind::kZvol;
  return data ? item.info.size : 0;
}

}  // namespace

std::string EncodeItems(const std::vector<walk::WalkItem>& items) {
  ByteWriter w;
  w.Put<uint64_t>(items.size());
  for (const walk::WalkItem& it : items) {
    w.Put<uint8_t>(static_cast<uint8_t>(it.kind));
    w.PutString(it.path);
    w.Put<uint64_t>(it.root);
    w.Put<uint8_t>(static_cast<uint8_t>(it.info.type));
    w.Put(it.info.dev);
    w.Put(it.info.ino);
    w.Put(it.info.size);
    w.Put(it.info.nlink);
    w.Put(it.info.allocated);
    w.Put<uint8_t>(static_cast<uint8_t>(it.skip_reason));
    w.Put<int32_t>(static_cast<int32_t>(it.error.code()));
    w.PutString(it.error.ok() ? std::string() : it.error.message());
    w.Put(it.dir_entries);
    w.Put(it.dir_name_bytes);
    w.Put(it.dir_longest_name);
  }
  return std::move(w.out);
}

std::vector<walk::WalkItem> DecodeItems(const std::string& bytes) {
  ByteReader r(ByteView(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  std::vector<walk::WalkItem> items(r.GetCount(60));
  for (walk::WalkItem& it : items) {
    it.kind = static_cast<walk::WalkItem::Kind>(r.Get<uint8_t>());
    it.path = r.GetString();
    it.root = r.Get<uint64_t>();
    it.info.type = static_cast<io::FileType>(r.Get<uint8_t>());
    it.info.dev = r.Get<uint64_t>();
    it.info.ino = r.Get<uint64_t>();
    it.info.size = r.Get<uint64_t>();
    it.info.nlink = r.Get<uint64_t>();
    it.info.allocated = r.Get<uint64_t>();
    it.skip_reason = static_cast<walk::SkipReason>(r.Get<uint8_t>());
    const auto code = static_cast<StatusCode>(r.Get<int32_t>());
    std::string message = r.GetString();
    if (code != StatusCode::kOk) it.error = Status(code, std::move(message));
    it.dir_entries = r.Get<uint64_t>();
    it.dir_name_bytes = r.Get<uint64_t>();
    it.dir_longest_name = r.Get<uint64_t>();
  }
  // Rank 0 of the same build wrote them: a malformed batch is a bug, not an input problem.
  if (!r.ok() || !r.done()) std::abort();
  return items;
}

std::vector<walk::WalkItem> WorkPool::Take() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<walk::WalkItem> batch;
  uint64_t bytes = 0;
  while (!done_ && bytes < batch_bytes_ && batch.size() < kBatchItems) {
    std::optional<walk::WalkItem> item = walk_->Next();
    if (!item) {
      done_ = true;
      walk_.reset();  // its threads end now
      break;
    }
    bytes += ItemBytes(*item);
    batch.push_back(std::move(*item));
  }
  return batch;
}

std::unique_ptr<walk::WalkSource> LocalShare(WorkPool* pool) {
  return std::make_unique<Local>(pool);
}

std::unique_ptr<walk::WalkSource> RemoteShare() { return std::make_unique<Remote>(); }

WorkTraffic ServeWork(WorkPool* pool, int ranks) {
  int active = ranks - 1;
  WorkTraffic traffic;
  while (active > 0) {
    std::string request;
    int from = 0;
    if (!TryReceiveSmall(MPI_ANY_SOURCE, kTagWorkRequest, &request, &from)) {
      PollPause();
      continue;
    }
    if (request.empty() || request[0] == '\0') {
      --active;  // left early
      continue;
    }
    const std::vector<walk::WalkItem> batch = pool->Take();
    const std::string bytes = EncodeItems(batch);
    SendSmall(from, kTagWorkBatch, bytes);
    traffic.bytes += bytes.size();
    if (batch.empty()) {
      --active;
    } else {
      ++traffic.batches;
    }
  }
  return traffic;
}

}  // namespace zsim::mpi
