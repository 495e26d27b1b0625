#include "engine/mpi/reduce.h"

#include <chrono>
#include <cstring>

#include "engine/mpi/messages.h"
#include "engine/state/merge.h"
#include "engine/state/state_file.h"
#include "engine/state/table_budget.h"

namespace zsim::mpi {
namespace {

// A part on the wire: 'S', the pieces' length (u64), the pieces, the state; or '!' and a
// failure met on the way, which the receiver turns into its own.
std::string EncodePart(const state::ScanState& state, const PieceMap& pieces) {
  const std::string p = EncodePieces(pieces);
  const uint64_t n = p.size();
  std::string out = "S";
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out += p;
  // File records and linked files keep their keys: the tables they name are partitioned among
  // the ranks.
  out += state::EncodeState(state, /*keep_keys=*/true);
  return out;
}

Status Reduce(state::ScanState& state, PieceMap& pieces, int rank, int size, ReduceStats* stats) {
  Status failure;
  for (int step = 1; step < size; step *= 2) {
    if (rank % (2 * step) == step) {
      // This rank's turn to hand its (merged) state down; a failure met on the way is sent as a
      // marker that the receiver turns into its own failure.
      SendLarge(rank - step, failure.ok() ? EncodePart(state, pieces) : "!" + failure.message());
      return Status::Ok();
    }
    if (rank + step >= size) continue;
    const std::string bytes = ReceiveLarge(rank + step);
    if (stats) stats->bytes_received += bytes.size();
    if (!failure.ok()) continue;
    if (!bytes.empty() && bytes[0] == '!') {
      failure = Status::Internal(bytes.substr(1));
      continue;
    }
    const std::string from = "rank " + std::to_string(rank + step);
    uint64_t n = 0;
    if (bytes.size() < 1 + sizeof n || bytes[0] != 'S') {
      failure = Status::Internal(from + "'s part is not a scan state");
      continue;
    }
    std::memcpy(&n, bytes.data() + 1, sizeof n);
    const auto* data = reinterpret_cast<const uint8_t*>(bytes.data()) + 1 + sizeof n;
    const size_t left = bytes.size() - 1 - sizeof n;
    if (n > left) {
      failure = Status::Internal(from + "'s part is cut short");
      continue;
    }
    Result<PieceMap> part_pieces = DecodePieces(ByteView(data, n));
    if (!part_pieces.ok()) {
      failure = Status::Internal(from + ": " + part_pieces.status().message());
      continue;
    }
    AddPieces(pieces, *part_pieces);
    Result<state::ScanState> part =
        state::ParseState(ByteView(data + n, left - n), true, /*keep_keys=*/true);
    if (!part.ok()) {
      failure =
          Status::Internal(from + "'s scan state does not read back: " + part.status().message());
      continue;
    }
    part->options.paths.clear();
    part->input.paths.clear();
    Status s = state::CheckMergeable(state, *part);
    if (!s.ok()) {
      failure = Status::Internal(from + "'s scan does not merge: " + s.message());
      continue;
    }
    state::Merge(state, *part);
    // Keeps the merged tables within the budget as they grow up the tree; never coarser than
    // one process's (a subset's tables outgrow a budget only if the whole's do).
    state::FitTablesToBudget(state.rows, state.options.max_memory_bytes);
  }
  return failure;
}

}  // namespace

Status ReduceToRoot(state::ScanState& state, PieceMap& pieces, int rank, int size,
                    ReduceStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  Status s = Reduce(state, pieces, rank, size, stats);
  if (stats) {
    stats->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return s;
}

}  // namespace zsim::mpi
