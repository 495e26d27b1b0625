#include "engine/cli/messages.h"

#include <cstdio>

#include "engine/base/size_suffix.h"

namespace zsim::cli {

void PrintError(const std::string& message) { std::fprintf(stderr, "zsim: %s\n", message.c_str()); }

std::string FormatProgress(const pipeline::Progress& p) {
  std::string line = "scanned " + FormatBytes(p.bytes_done);
  if (p.walk_finished) {
    line += " of " + FormatBytes(p.bytes_discovered);
  } else {
    line += " of " + FormatBytes(p.bytes_discovered) + "+ (still walking)";
  }
  line += ", " + std::to_string(p.files_done) + " files";
  if (p.seconds > 0.5) {
    const double rate = static_cast<double>(p.bytes_done) / p.seconds;
    line += ", " + FormatBytes(static_cast<uint64_t>(rate)) + "/s";
    if (p.walk_finished && rate > 0 && p.bytes_discovered > p.bytes_done) {
      const double eta = static_cast<double>(p.bytes_discovered - p.bytes_done) / rate;
      line += ", ETA " + std::to_string(static_cast<uint64_t>(eta + 0.5)) + " s";
    }
  }
  return line;
}

void DrawProgress(const pipeline::Progress& p) {
  // \r and erase-to-end-of-line: one line redrawn in place.
  std::fprintf(stderr, "\r%s\x1b[K", FormatProgress(p).c_str());
  std::fflush(stderr);
}

void ClearProgress() {
  std::fprintf(stderr, "\r\x1b[K");
  std::fflush(stderr);
}

int FinishMessages(const ScanResult& result, bool quiet) {
  const size_t errors = result.input.errors.size();
  if (!quiet && errors > 0) {
    std::fprintf(stderr, "zsim: %zu path%s could not be read; listed in the report:\n", errors,
                 errors == 1 ? "" : "s");
    size_t shown = 0;
    for (const PathError& e : result.input.errors) {
      if (++shown > 10) {
        std::fprintf(stderr, "  ... and %zu more\n", errors - 10);
        break;
      }
      std::fprintf(stderr, "  %s: %s\n", e.path.c_str(), e.error.c_str());
    }
  }
  if (result.partial) {
    if (!quiet) std::fprintf(stderr, "zsim: interrupted: the report covers what was scanned\n");
    return kExitInterrupted;
  }
  return errors > 0 ? kExitUnreadable : kExitOk;
}

}  // namespace zsim::cli
