// Fuzz target: the state file loader (engine/state/state_file.h) on arbitrary bytes. With the
// checksums checked, anything but a file zsim wrote is refused; with them skipped (so mutations
// reach the parser), the bytes must give an error or a state whose every part is usable, never
// a crash, a hang or an allocation the bytes do not pay for. The corpus holds files of the
// current format (tests/fuzz/make_state_seeds writes them), one whose table gives a key twice
// (refused: tests/pipeline/state_file_test.cc writes it), and of format version 1 (refused).

#include <cstddef>
#include <cstdint>

#include "engine/ddt/written_key.h"
#include "engine/state/state_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const zsim::ByteView bytes(data, size);
  for (bool verify : {true, false}) {
    zsim::Result<zsim::state::ScanState> s = zsim::state::ParseState(bytes, verify);
    if (!s.ok()) {
      if (s.status().message().empty()) __builtin_trap();  // every refusal says why
      continue;
    }
    // A state that parses is whole: a table and sketches per row, the sizes its options say. The
    // table has a column per setting, then one per early-abort code (state::ProbeColumns), then
    // two per written key (state::KeyColumns).
    const size_t settings = s->options.compressions.size();
    size_t columns = settings;
    for (zsim::Compression c : s->options.compressions) {
      if (zsim::state::HasProbe(s->code_kind, c)) ++columns;
    }
    for (size_t k : zsim::state::KeyColumns(s->options, s->code_kind, s->written_keys)) {
      if (k != zsim::state::kNoKey) columns += zsim::ddt::kWrittenKeyColumns;
    }
    for (const zsim::state::RowState& r : s->rows) {
      if (!r.table || !r.distinct || r.files.size() != settings || r.table->settings() != columns) {
        __builtin_trap();
      }
    }
    // File records (--since) have a part per row, every reference naming an entry of it.
    for (const zsim::state::FileRecord& f : s->records) {
      if (f.refs.size() != s->rows.size() || f.zero_blocks.size() != s->rows.size()) {
        __builtin_trap();
      }
      for (size_t r = 0; r < f.refs.size(); ++r) {
        for (uint32_t ref : f.refs[r]) {
          if (!s->rows[r].table->HasRef(ref)) __builtin_trap();
          (void)s->rows[r].table->KeyOf(ref);
        }
      }
    }
    // Links (files with several names) too, and their breakdown rows and occurrence cells exist.
    for (const zsim::state::LinkedFile& f : s->links) {
      if (f.refs.size() != s->rows.size() || f.holes.size() != s->rows.size() ||
          f.occurrences.size() != s->rows.size() ||
          f.directory >= s->breakdown.directories.size() ||
          f.extension >= s->breakdown.extensions.size()) {
        __builtin_trap();
      }
      for (size_t r = 0; r < f.refs.size(); ++r) {
        for (uint32_t ref : f.refs[r]) {
          if (!s->rows[r].table->HasRef(ref)) __builtin_trap();
        }
        for (const auto& cell : f.occurrences[r]) {
          if (cell.first >= s->rows[r].occurrences.sums.size()) __builtin_trap();
        }
      }
    }
    (void)zsim::state::StateMemory(*s);
  }
  return 0;
}
