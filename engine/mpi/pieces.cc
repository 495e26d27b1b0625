#include "engine/mpi/pieces.h"

#include <algorithm>
#include <vector>

#include "engine/state/frame_stream.h"
#include "engine/state/value_io.h"

namespace zsim::mpi {
namespace {

void PutList(state::FrameWriter& w, const std::vector<uint64_t>& v) {
  w.U64(v.size());
  for (uint64_t x : v) w.U64(x);
}

std::vector<uint64_t> GetList(state::FrameReader& r) {
  const uint64_t n = r.U64();
  if (n > r.remaining_hint() / 8) {
    r.Fail("a list longer than the message");
    return {};
  }
  std::vector<uint64_t> v(n);
  for (uint64_t& x : v) x = r.U64();
  return v;
}

}  // namespace

void AddPieces(PieceMap& into, const PieceMap& from) {
  for (const auto& [file, sums] : from) pipeline::AddPiece(into[file], sums);
}

std::string EncodePieces(const PieceMap& pieces) {
  std::string out;
  state::FrameWriter w(&out);
  w.U64(pieces.size());
  for (const auto& [file, p] : pieces) {
    w.U64(file);
    w.U64(p.bytes);
    w.U64(p.pieces);
    PutList(w, p.non_hole);
    PutList(w, p.zero_blocks);
    PutList(w, p.holes);
    w.U64(p.ranges.size());
    for (const zfs::IndirectRanges& ranges : p.ranges) {
      PutList(w, ranges.inside());
      PutList(w, ranges.edges());
    }
    w.U64(p.bytes_read);
    w.U64(p.content_lo);
    w.U64(p.content_hi);
    w.U8(p.has_data ? 1 : 0);
    w.U64(p.failed_at);
    w.I32(static_cast<int32_t>(p.failure.code()));
    w.Str(p.failure.ok() ? std::string() : p.failure.message());
    w.U64(static_cast<uint64_t>(p.stamp_floor_ns));
    w.U64(p.keys.size());
    for (const std::vector<ddt::Fingerprint>& row : p.keys) {
      w.U64(row.size());
      state::PutKeys(w, row);
    }
    w.U64(p.occurrences.size());
    for (const auto& cells : p.occurrences) {
      w.U64(cells.size());
      for (const auto& [index, o] : cells) {
        w.U32(index);
        state::PutOccurrenceSums(w, o);
      }
    }
  }
  w.Finish();  // appending to a string does not fail
  return out;
}

Result<PieceMap> DecodePieces(ByteView bytes) {
  state::FrameReader r(bytes, /*verify=*/true);
  PieceMap out;
  const uint64_t n = r.U64();
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    pipeline::PieceSums p;
    p.file = r.U64();
    p.bytes = r.U64();
    p.pieces = r.U64();
    p.non_hole = GetList(r);
    p.zero_blocks = GetList(r);
    p.holes = GetList(r);
    const uint64_t ranges = r.U64();
    if (ranges > r.remaining_hint() / 16) {
      r.Fail("more indirect ranges than the message holds");
      break;
    }
    p.ranges.resize(ranges);
    for (zfs::IndirectRanges& into : p.ranges) {
      std::vector<uint64_t> inside = GetList(r);
      std::vector<uint64_t> edges = GetList(r);
      if (!into.Assign(std::move(inside), std::move(edges))) r.Fail("corrupt indirect ranges");
    }
    p.bytes_read = r.U64();
    p.content_lo = r.U64();
    p.content_hi = r.U64();
    p.has_data = r.U8() != 0;
    p.failed_at = r.U64();
    const auto code = static_cast<StatusCode>(r.I32());
    std::string message = r.Str(size_t{1} << 20);
    if (code != StatusCode::kOk) p.failure = Status(code, std::move(message));
    p.stamp_floor_ns = static_cast<int64_t>(r.U64());
    const uint64_t rows = r.U64();
    if (rows > r.remaining_hint() / 8) {
      r.Fail("more rows of keys than the message holds");
      break;
    }
    p.keys.resize(rows);
    for (std::vector<ddt::Fingerprint>& row : p.keys) {
      const uint64_t keys = r.U64();
      if (keys > r.remaining_hint() / 16) {
        r.Fail("more keys than the message holds");
        break;
      }
      state::GetKeys(r, keys, row);
    }
    const uint64_t occurrence_rows = r.U64();
    if (occurrence_rows > r.remaining_hint() / 8) {
      r.Fail("more rows of occurrences than the message holds");
      break;
    }
    p.occurrences.resize(occurrence_rows);
    for (auto& cells : p.occurrences) {
      const uint64_t n_cells = r.U64();
      if (n_cells > r.remaining_hint() / 140) {
        r.Fail("more occurrence cells than the message holds");
        break;
      }
      cells.resize(n_cells);
      for (auto& [index, o] : cells) {
        index = r.U32();
        o = state::GetOccurrenceSums(r);
      }
    }
    const uint64_t file = p.file;
    out[file] = std::move(p);
  }
  if (Status end = r.End(); !end.ok()) {
    return Status::Internal("the pieces of split files do not read back: " + end.message());
  }
  return out;
}

}  // namespace zsim::mpi
