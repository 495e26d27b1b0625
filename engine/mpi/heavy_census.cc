#include "engine/mpi/heavy_census.h"

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>

#include "engine/ddt/fingerprint.h"
#include "engine/estimate/sample_level.h"
#include "engine/mpi/entry_wire.h"
#include "engine/pipeline/block_recode.h"
#include "engine/state/scan_state.h"

namespace zsim::mpi {
namespace {

constexpr int kUnitBits = 20;     // 512-byte units per segment: 512 MiB
constexpr int kSegmentBits = 28;  // segments per rank
constexpr int kRankBits = 15;
constexpr uint64_t kSet = uint64_t{1} << 63;

// Requests one rank sends per round, to every rank together: 32 bytes each, 512 KiB.
constexpr size_t kRoundRequests = 16384;

// A request: row, lsize, key, origin.
constexpr size_t kRequestBytes = 4 + 4 + 8 + 8 + 8;

struct Request {
  uint32_t row;
  uint32_t lsize;
  ddt::Fingerprint key;  // as ForEach gives it
  uint64_t origin;
};

// Reads the requested blocks again and codes them with the sampled codecs
// (pipeline/block_recode.h); the answers, each an ok flag (uint16) and a code per setting, in the
// order of `requests`.
class Rereader {
 public:
  // `columns`: the tables' (ddt::DedupTable::settings: the settings' codes, then their
  // early-abort codes, state::ProbeColumns).
  Rereader(const BlockOrigins& origins, const ScanOptions& options, io::FileSystem* fs,
           std::vector<PathError>* errors, HeavyCensusStats* stats, size_t columns)
      : origins_(origins),
        errors_(errors),
        stats_(stats),
        sampled_(estimate::PlanSampling(options.compressions, options.exact).sampled),
        columns_(columns),
        recoder_(options, fs,
                 pipeline::RecodeSpec{
                     state::CodeKind::kEarlyAbort,
                     state::ProbeColumns(state::CodeKind::kEarlyAbort, options.compressions),
                     state::KeyColumns(options, state::CodeKind::kEarlyAbort, true), columns}) {
    for (const PathError& e : *errors) listed_.insert(e.path);
  }

  void Answer(const Request& q, std::string* out) {
    std::vector<ddt::PsizeCode> codes(columns_, ddt::kPendingCode);
    BlockOrigins::Place place;
    bool ok = origins_.Locate(q.origin, &place);
    if (!ok) {
      // Never expected (an origin names an item this rank read): said, so that the key's
      // missing codes never pass unnoticed.
      Changed("(census)", "an origin named no file or piece this rank read (origin " +
                              std::to_string(q.origin) +
                              "): a heavy block's sampled codes are missing");
    }
    if (ok) {
      const Status s = recoder_.Recode(*place.path, place.follow, place.offset, q.lsize, q.key,
                                       sampled_, std::span<ddt::PsizeCode>(codes), {});
      if (!s.ok()) Changed(*place.path, s.message() + " (the census)");
      ok = s.ok();
    }
    if (ok) {
      ++stats_->reread;
      stats_->reread_bytes += q.lsize;
    } else {
      ++stats_->changed;
    }
    PutWire<uint16_t>(out, ok ? 1 : 0);
    for (ddt::PsizeCode c : codes) PutWire<uint16_t>(out, c);
  }

 private:
  void Changed(const std::string& path, const std::string& why) {
    if (listed_.insert(path).second) errors_->push_back(PathError{path, why});
  }

  const BlockOrigins& origins_;
  std::vector<PathError>* errors_;
  HeavyCensusStats* stats_;
  const std::vector<bool> sampled_;
  const size_t columns_;
  std::set<std::string> listed_;    // paths among the errors already
  pipeline::BlockRecoder recoder_;  // its codecs' time not reported: the census's reads are few
};

}  // namespace

uint64_t BlockOrigins::Add(const std::string& path, uint64_t begin, uint64_t length, bool follow) {
  const uint64_t units = (length + 511) / 512;
  const uint64_t segments =
      std::max<uint64_t>(1, (units + (uint64_t{1} << kUnitBits) - 1) >> kUnitBits);
  if (overflowed_ || next_segment_ + segments > (uint64_t{1} << kSegmentBits) ||
      rank_ >= (1 << kRankBits)) {
    overflowed_ = true;
    return 0;
  }
  items_.push_back(Item{path, begin, next_segment_, follow});
  const uint64_t origin =
      kSet | (uint64_t(rank_) << (kSegmentBits + kUnitBits)) | (next_segment_ << kUnitBits);
  next_segment_ += segments;
  return origin;
}

std::string OriginsShortBecause(int ranks) {
  if (ranks > (1 << kRankBits)) {
    return "origins name ranks 0 to " + std::to_string((1 << kRankBits) - 1) +
           " only, and this job has " + std::to_string(ranks) +
           " ranks: run fewer, or give --sample";
  }
  return "a rank read more than " + std::to_string(uint64_t{1} << kSegmentBits) +
         " items, or 512 MiB segments of items, which is more than its origins can name";
}

int BlockOrigins::RankOf(uint64_t origin) {
  return static_cast<int>((origin >> (kSegmentBits + kUnitBits)) & ((1u << kRankBits) - 1));
}

bool BlockOrigins::Locate(uint64_t origin, Place* place) const {
  if ((origin & kSet) == 0 || RankOf(origin) != rank_) return false;
  const uint64_t position = origin & ((uint64_t{1} << (kSegmentBits + kUnitBits)) - 1);
  const uint64_t segment = position >> kUnitBits;
  // The last item beginning at or before the segment.
  auto it = std::upper_bound(items_.begin(), items_.end(), segment,
                             [](uint64_t s, const Item& item) { return s < item.first_segment; });
  if (it == items_.begin()) return false;
  --it;
  place->path = &it->path;
  place->offset = it->begin + (position - (it->first_segment << kUnitBits)) * 512;
  place->follow = it->follow;
  return true;
}

uint64_t BlockOrigins::memory_bytes() const {
  uint64_t n = items_.capacity() * sizeof(Item);
  for (const Item& item : items_) {
    if (item.path.capacity() > 15) n += item.path.capacity() + 1;  // past the inline buffer
  }
  return n;
}

Status CodeHeavyKeys(const std::vector<ddt::DedupTable*>& tables, const BlockOrigins& origins,
                     const ScanOptions& options, io::FileSystem* fs, int rank, int size,
                     std::vector<PathError>* errors, HeavyCensusStats* stats) {
  const size_t settings = options.compressions.size();
  const std::vector<bool> sampled =
      estimate::PlanSampling(options.compressions, options.exact).sampled;
  // What this rank asks, by the rank the origin names.
  std::vector<std::vector<Request>> asks(size);
  uint64_t unlocated = 0;
  for (size_t r = 0; r < tables.size(); ++r) {
    tables[r]->ForEach([&](const ddt::EntryView& e) {
      if (e.refcount < ddt::kHeavyRefcount || e.is_zero) return;
      bool lacking = false;
      for (size_t c = 0; c < settings; ++c) {
        lacking = lacking || (sampled[c] && e.codes[c] == ddt::kPendingCode);
      }
      if (!lacking) return;
      if (e.origin == 0 || BlockOrigins::RankOf(e.origin) >= size) {
        ++unlocated;
        return;
      }
      asks[BlockOrigins::RankOf(e.origin)].push_back(
          Request{static_cast<uint32_t>(r), static_cast<uint32_t>(e.lsize), e.key, e.origin});
      ++stats->asked;
    });
  }
  // Every column of the tables: the settings' codes and their early-abort codes.
  const size_t columns = tables.empty() ? settings : tables.front()->settings();
  Rereader rereader(origins, options, fs, errors, stats, columns);
  const size_t answer_bytes = 2 + 2 * columns;
  std::vector<size_t> next(size, 0);
  std::vector<int> send_counts(size), recv_counts(size), send_at(size), recv_at(size);
  std::vector<int> answer_counts(size), answer_recv(size), answer_at(size), answer_recv_at(size);
  Status failure;
  for (;;) {
    // This round: up to kRoundRequests, taken from each destination in turn.
    std::string send;
    std::vector<std::vector<const Request*>> sent(size);
    size_t taken = 0;
    for (int d = 0; d < size; ++d) {
      send_at[d] = static_cast<int>(send.size());
      while (next[d] < asks[d].size() && taken < kRoundRequests) {
        const Request& q = asks[d][next[d]++];
        PutWire<uint32_t>(&send, q.row);
        PutWire<uint32_t>(&send, q.lsize);
        PutWire<uint64_t>(&send, q.key.lo);
        PutWire<uint64_t>(&send, q.key.hi);
        PutWire<uint64_t>(&send, q.origin);
        sent[d].push_back(&q);
        ++taken;
      }
      send_counts[d] = static_cast<int>(send.size()) - send_at[d];
    }
    MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    size_t total = 0;
    for (int d = 0; d < size; ++d) {
      recv_at[d] = static_cast<int>(total);
      total += static_cast<size_t>(recv_counts[d]);
    }
    std::string received(total, '\0');
    MPI_Alltoallv(send.data(), send_counts.data(), send_at.data(), MPI_BYTE, received.data(),
                  recv_counts.data(), recv_at.data(), MPI_BYTE, MPI_COMM_WORLD);
    // Answers, in the order asked, per asking rank.
    std::string answers;
    for (int d = 0; d < size; ++d) {
      answer_at[d] = static_cast<int>(answers.size());
      for (int at = recv_at[d]; at + static_cast<int>(kRequestBytes) <= recv_at[d] + recv_counts[d];
           at += static_cast<int>(kRequestBytes)) {
        const char* p = received.data() + at;
        const Request q{GetWire<uint32_t>(p), GetWire<uint32_t>(p + 4),
                        ddt::Fingerprint{GetWire<uint64_t>(p + 8), GetWire<uint64_t>(p + 16)},
                        GetWire<uint64_t>(p + 24)};
        rereader.Answer(q, &answers);
      }
      answer_counts[d] = static_cast<int>(answers.size()) - answer_at[d];
    }
    for (int d = 0, at = 0; d < size; ++d) {
      answer_recv[d] = static_cast<int>(sent[d].size() * answer_bytes);
      answer_recv_at[d] = at;
      at += answer_recv[d];
    }
    std::string got(taken * answer_bytes, '\0');
    MPI_Alltoallv(answers.data(), answer_counts.data(), answer_at.data(), MPI_BYTE, got.data(),
                  answer_recv.data(), answer_recv_at.data(), MPI_BYTE, MPI_COMM_WORLD);
    std::vector<ddt::PsizeCode> codes(columns);
    for (int d = 0; d < size; ++d) {
      for (size_t i = 0; i < sent[d].size(); ++i) {
        const char* p = got.data() + answer_recv_at[d] + i * answer_bytes;
        if (GetWire<uint16_t>(p) != 1) continue;  // not coded: its file is among the errors
        for (size_t c = 0; c < columns; ++c) codes[c] = GetWire<uint16_t>(p + 2 + 2 * c);
        const Request& q = *sent[d][i];
        tables[q.row]->SetCodes(q.key, codes);
      }
    }
    ++stats->rounds;
    int more = 0, any = 0;
    for (int d = 0; d < size; ++d) more = more || next[d] < asks[d].size();
    MPI_Allreduce(&more, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (!any) break;
  }
  if (unlocated != 0) {
    failure = Status::Internal(
        "rank " + std::to_string(rank) + ": " + std::to_string(unlocated) +
        " keys referenced 8 times or more have no recorded origin, so the census cannot code "
        "them (" +
        OriginsShortBecause(size) + ")");
  }
  return failure;
}

}  // namespace zsim::mpi
