// Fuzz target: the state file loader (engine/state/state_file.h) on arbitrary bytes. With the
// checksums checked, anything but a file zsim wrote is refused; with them skipped (so mutations
// reach the parser), the bytes must give an error or a state whose every part is usable, never
// a crash, a hang or an allocation the bytes do not pay for.

#include <cstddef>
#include <cstdint>

#include "engine/state/state_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const zsim::ByteView bytes(data, size);
  for (bool verify : {true, false}) {
    zsim::Result<zsim::state::ScanState> s = zsim::state::ParseState(bytes, verify);
    if (!s.ok()) {
      if (s.status().message().empty()) __builtin_trap();  // every refusal says why
      continue;
    }
    // A state that parses is whole: a table and sketches per row, the sizes its options say.
    const size_t settings = s->options.compressions.size();
    for (const zsim::state::RowState& r : s->rows) {
      if (!r.table || !r.distinct || r.files.size() != settings ||
          r.table->settings() != settings) {
        __builtin_trap();
      }
    }
    (void)zsim::state::StateMemory(*s);
  }
  return 0;
}
