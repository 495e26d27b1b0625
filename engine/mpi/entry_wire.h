// engine/mpi/entry_wire.h
//
// Dedup table entries on the wire between ranks (partition.h, table_service.h): per entry the key
// (16 bytes), its refcount (4), lsize / 512 - 1 with the top bit the zero flag (2), then one
// 16-bit code per setting, as the table's ForEach gives them: 22 + 2 x settings bytes. Both ends
// run the same binary, so the byte order is the host's.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_MPI_ENTRY_WIRE_H_
#define ZSIM_ENGINE_MPI_ENTRY_WIRE_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "engine/ddt/dedup_table.h"
#include "zsim/status.h"

namespace zsim::mpi {

// Bytes one entry of a table with `settings` settings takes.
inline size_t EntryWireBytes(size_t settings) { return 22 + 2 * settings; }

// Appends `e` to `out`.
void AppendEntry(const ddt::EntryView& e, std::string* out);

// Calls fn for each entry of `bytes` (entries of `settings` settings, as AppendEntry wrote them).
// Fails when the bytes are not a whole number of entries.
Status ForEachWireEntry(std::string_view bytes, size_t settings,
                        const std::function<void(const ddt::EntryView&)>& fn);

}  // namespace zsim::mpi

#endif  // ZSIM_ENGINE_MPI_ENTRY_WIRE_H_
