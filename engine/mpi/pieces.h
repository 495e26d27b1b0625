// engine/mpi/pieces.h
//
// The pieces of split files a rank read (pipeline/file_pieces.h), added up per file, and their
// form on the wire: they travel to rank 0 with the rank's state (reduce.h), adding up on the way.
//
// Thread safety: values; one thread per map.

#ifndef ZSIM_ENGINE_MPI_PIECES_H_
#define ZSIM_ENGINE_MPI_PIECES_H_

#include <cstdint>
#include <map>
#include <string>

#include "engine/base/byte_view.h"
#include "engine/pipeline/file_pieces.h"
#include "zsim/status.h"

namespace zsim::mpi {

// By walk::WalkItem::piece_file.
using PieceMap = std::map<uint64_t, pipeline::PieceSums>;

// Every file of `from` added into `into`'s (pipeline::AddPiece).
void AddPieces(PieceMap& into, const PieceMap& from);

std::string EncodePieces(const PieceMap& pieces);
// kInternal when the bytes are not EncodePieces's (another build, a broken message).
Result<PieceMap> DecodePieces(ByteView bytes);

}  // namespace zsim::mpi

#endif  // ZSIM_ENGINE_MPI_PIECES_H_
