// engine/mpi/entry_wire.h
//
// Dedup table entries on the wire between ranks (partition.h, table_service.h): per entry the key
// (16 bytes), its refcount (4), lsize / 512 - 1 with the top bit the zero flag (2), then one
// 16-bit code per setting, as the table's ForEach gives them: 22 + 2 x settings bytes; and, between
// tables that keep origins (ddt::DedupTable::KeepOrigins, the census of heavy_census.h), the
// entry's origin (8 more). Both ends run the same binary, so the byte order is the host's.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_MPI_ENTRY_WIRE_H_
#define ZSIM_ENGINE_MPI_ENTRY_WIRE_H_

#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

#include "engine/ddt/dedup_table.h"
#include "zsim/status.h"

namespace zsim::mpi {

// A value in the host's byte order, appended to or read from a message (both ends run the same
// binary).
template <typename T>
void PutWire(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}
template <typename T>
T GetWire(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Bytes one entry of a table with `settings` settings takes, with its origin or not.
inline size_t EntryWireBytes(size_t settings, bool origins = false) {
  return 22 + 2 * settings + (origins ? 8 : 0);
}
// The same for entries of `table` (with origins when it keeps them).
inline size_t EntryWireBytes(const ddt::DedupTable& table) {
  return EntryWireBytes(table.settings(), table.keeps_origins());
}

// Appends `e` to `out`, with its origin when `origins`.
void AppendEntry(const ddt::EntryView& e, std::string* out, bool origins = false);

// Calls fn for each entry of `bytes` (entries of `settings` settings, as AppendEntry wrote them
// with `origins`). Fails when the bytes are not a whole number of entries.
Status ForEachWireEntry(std::string_view bytes, size_t settings,
                        const std::function<void(const ddt::EntryView&)>& fn, bool origins = false);

}  // namespace zsim::mpi

#endif  // ZSIM_ENGINE_MPI_ENTRY_WIRE_H_
