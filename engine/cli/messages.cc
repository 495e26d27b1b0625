#include "engine/cli/messages.h"

#include <algorithm>
#include <cstdio>

#include "engine/base/size_suffix.h"
#include "engine/report/advice.h"
#include "engine/report/name_encoding.h"
#include "engine/zfs/nicenum.h"

namespace zsim::cli {
namespace {

// A path or message as it may be shown on a terminal: control characters (escape sequences,
// carriage returns, newlines) and bytes that are not UTF-8 are written as \n, \xNN,
// and a backslash as \\, so a file name can neither forge lines nor drive the terminal.
std::string TerminalSafe(const std::string& text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c >= 0x80) {
      // A valid sequence is kept unless it is a C1 control (U+0080..U+009F: C2 80..C2 9F),
      // which goes out as \xc2\xNN like the other control bytes.
      if (const size_t n = report::ValidUtf8Length(text, i);
          n > 0 && !(c == 0xC2 && static_cast<unsigned char>(text[i + 1]) <= 0x9F)) {
        out.append(text, i, n);
        i += n;
        continue;
      }
    }
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 15];
    }
    ++i;
  }
  return out;
}

}  // namespace

std::string Shown(const std::string& text) { return TerminalSafe(text); }

void PrintError(const std::string& message) {
  // One line, always: a message quotes paths, and a name holding a newline must not make a line
  // of its own. A usage error's hint to the command's --help follows kHintSeparator (a NUL,
  // which no name or argument can hold) and goes on a line of its own.
  const size_t hint = message.find(kHintSeparator);
  if (hint != std::string::npos) {
    std::fprintf(stderr, "zsim: %s\n%s\n", TerminalSafe(message.substr(0, hint)).c_str(),
                 TerminalSafe(message.substr(hint + 1)).c_str());
    return;
  }
  std::fprintf(stderr, "zsim: %s\n", TerminalSafe(message).c_str());
}

namespace {

// Seconds for the progress line, to two significant digits: hundredths under 1 s (the small
// samples scan in 0.13-0.25 s, which tenths would show as 0.1 or 0.2: up to 40% off), tenths
// under 10 s, whole seconds above.
std::string FormatSeconds(double seconds) {
  if (seconds < 9.95) {
    char buf[16];
    std::snprintf(buf, sizeof buf, seconds < 0.995 ? "%.2f" : "%.1f", seconds);
    return buf;
  }
  return std::to_string(static_cast<uint64_t>(seconds + 0.5));
}

}  // namespace

std::string FormatProgress(const pipeline::Progress& p) {
  std::string line = "scanned " + FormatBytes(p.bytes_done);
  if (p.walk_finished) {
    line += " of " + FormatBytes(p.bytes_discovered);
  } else {
    line += " of " + FormatBytes(p.bytes_discovered) + "+ (still walking)";
  }
  line += ", " + std::to_string(p.files_done);
  if (p.walk_finished) line += " of " + std::to_string(p.files_discovered);
  line += " files";
  if (p.walk_finished && p.bytes_discovered > 0) {
    const double done = std::min(1.0, double(p.bytes_done) / double(p.bytes_discovered));
    line += " (" + std::to_string(static_cast<int>(done * 100)) + "%)";
  }
  if (p.topping_up) {
    // After the reading: blocks of rows of few unique blocks read again and coded, a tail the
    // scan's expected time does not hold; its own time left follows its pace so far.
    const uint64_t shown = p.top_up_total ? p.top_up_total : p.top_up_blocks;
    line += ", top-up: " + std::to_string(p.top_up_blocks);
    if (p.top_up_total) line += " of " + std::to_string(p.top_up_total);
    line += std::string(" block") + (shown == 1 ? "" : "s") +
            " read again for the sampled codecs, " + FormatSeconds(p.seconds) + " s";
    if (p.top_up_total > p.top_up_blocks && p.top_up_blocks > 0 && p.top_up_seconds > 0.5) {
      const double left =
          p.top_up_seconds * double(p.top_up_total - p.top_up_blocks) / double(p.top_up_blocks);
      line += ", ETA " + FormatSeconds(left) + " s";
    }
    return line;
  }
  if (p.expected_seconds > 0) {
    line += ", expected " + FormatSeconds(p.expected_seconds) + " s, codecs " +
            std::to_string(static_cast<int>(p.codec_share * 100 + 0.5)) + "%";
  }
  if (p.seconds > 0.5) {
    const double rate = static_cast<double>(p.bytes_done) / p.seconds;
    line += ", " + FormatBytes(static_cast<uint64_t>(rate)) + "/s";
    // The time left: the expected time's (it follows the bytes read, not the logical bytes,
    // which run ahead over a sparse file's holes), else the logical pace's.
    if (p.walk_finished && p.expected_seconds > 0 && p.bytes_discovered > p.bytes_done) {
      line += ", ETA " + FormatSeconds(std::max(0.0, p.expected_seconds - p.seconds)) + " s";
    } else if (p.walk_finished && rate > 0 && p.bytes_discovered > p.bytes_done) {
      const double eta = static_cast<double>(p.bytes_discovered - p.bytes_done) / rate;
      line += ", ETA " + FormatSeconds(eta) + " s";
    }
  }
  return line;
}

void DrawProgress(const pipeline::Progress& p, bool terminal) {
  if (terminal) {
    // \r and erase-to-end-of-line: one line redrawn in place.
    std::fprintf(stderr, "\r%s\x1b[K", FormatProgress(p).c_str());
  } else {
    std::fprintf(stderr, "zsim: progress: %s\n", FormatProgress(p).c_str());
  }
  std::fflush(stderr);
}

std::string FormatSinceSummary(const pipeline::SinceSummary& s) {
  if (s.full_rescan) {
    return "zsim: --since: the saved state could not give a full scan's figures (the tree shrank "
           "below the sample its codecs ran on, or the tables outgrew --max-memory): read all " +
           std::to_string(s.read) + (s.read == 1 ? " file" : " files") + " again";
  }
  const auto files = [](uint64_t n) { return std::to_string(n) + (n == 1 ? " file" : " files"); };
  return "zsim: --since: " + files(s.kept) + " unchanged (not read), " + std::to_string(s.read) +
         " read, " + std::to_string(s.dropped) + " taken out (changed or gone)" +
         (s.not_reached ? ", " + std::to_string(s.not_reached) +
                              " not listed before the interrupt (gone, or not reached: left out "
                              "of the partial state)"
                        : "");
}

std::string FormatCostWarning(const pipeline::CostForecast& f) {
  if (!pipeline::IsCostly(f)) return "";
  const double wall = f.Seconds();
  return "zsim: the codecs asked for are expected to take " +
         std::to_string(static_cast<uint64_t>(f.codec_cpu_seconds + 0.5)) + " CPU s, " +
         std::to_string(static_cast<uint64_t>(f.codec_cpu_seconds / f.read_cpu_seconds + 0.5)) +
         " times the reading (this scan: about " +
         std::to_string(static_cast<uint64_t>(wall + 0.5)) + " s on " + std::to_string(f.threads) +
         (f.threads == 1 ? " core" : " cores") +
         "); fewer codecs or recordsizes cost less, Ctrl-C stops with what was read";
}

std::string FormatBindingWarning(int bound_hosts, int hosts, int ranks, int cores, int usable,
                                 int threads) {
  if (bound_hosts <= 0 || cores <= 0 || cores >= usable) return "";
  if (threads > 0 && int64_t{threads} * ranks <= cores) return "";  // they fit what was bound
  const auto count = [](int n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  const std::string where = hosts <= 1 ? "on this host"
                            : bound_hosts == 1
                                ? "on 1 of the " + std::to_string(hosts) + " hosts"
                                : "on the first of " + std::to_string(bound_hosts) +
                                      " hosts so bound (of " + std::to_string(hosts) + ")";
  const std::string who = threads > 0 ? count(ranks, "rank", "ranks") + " of " +
                                            count(threads, "thread", "threads") +
                                            (ranks == 1 ? "" : " each")
                                      : count(ranks, "rank", "ranks");
  const std::string effect = threads > 0 ? "so the threads share them"
                                         : "and each rank runs one thread per core it may use";
  std::string advice = "`mpirun --bind-to none` lets the scan use them all";
  if (ranks > 1) advice += " (with --threads " + std::to_string(std::max(1, usable / ranks)) + ")";
  return "zsim: mpirun bound " + who + " to " + std::to_string(cores) + " of the " +
         std::to_string(usable) + " cores the job may use " + where + ", " + effect +
         " (Open MPI binds each rank to a core where the job has 2 ranks or fewer, to a socket "
         "beyond that): " +
         advice;
}

std::string FormatTopUpWarning(const pipeline::TopUpForecast& f) {
  if (f.seconds <= pipeline::kCostlyCodecSeconds) return "";
  std::string sizes;
  for (uint64_t b : f.block_sizes) {
    sizes += (sizes.empty() ? "" : ", ") + zfs::NiceBytes(b);
  }
  return std::string("zsim: ") + (f.volblocksize ? "volblocksize " : "recordsize ") + sizes +
         ": the sampled codecs code " + std::to_string(f.blocks) + " blocks they skipped (" +
         FormatBytes(f.bytes) + ") after the reading, about " +
         std::to_string(static_cast<uint64_t>(f.seconds + 0.5)) + " s more (" +
         std::to_string(static_cast<uint64_t>(f.codec_cpu_seconds + 0.5)) +
         " CPU s); Ctrl-C stops with the figures read";
}

void ClearProgress(bool terminal) {
  if (!terminal) return;
  std::fprintf(stderr, "\r\x1b[K");
  std::fflush(stderr);
}

int FinishMessages(const ScanResult& result, bool quiet, bool from_states) {
  const size_t errors = result.input.errors.size();
  if (!quiet && errors > 0) {
    std::fprintf(stderr, "zsim: %zu path%s could not be read%s; listed in the report:\n", errors,
                 errors == 1 ? "" : "s",
                 FilesInPart(result.input.errors) ? ", or only in part" : "");
    size_t shown = 0;
    for (const PathError& e : result.input.errors) {
      if (++shown > 10) {
        std::fprintf(stderr, "  ... and %zu more\n", errors - 10);
        break;
      }
      std::fprintf(stderr, "  %s: %s%s\n", TerminalSafe(e.path).c_str(),
                   TerminalSafe(e.error).c_str(), report::PathErrorExtent(e).c_str());
    }
  }
  // --max-memory raised the dedup sampling past what --sample asked (issue 8: say so).
  uint64_t kept = result.options.sample_modulus;
  for (const SettingResult& s : result.results) kept = std::max(kept, s.dedup.sample_modulus);
  if (!quiet && kept > result.options.sample_modulus) {
    std::fprintf(stderr,
                 "zsim: the dedup tables outgrew --max-memory %s: they kept 1/%llu of the "
                 "fingerprints, so the dedup figures are estimates (intervals in the report)\n",
                 FormatBytes(result.options.max_memory_bytes).c_str(),
                 static_cast<unsigned long long>(kept));
  }
  if (result.partial) {
    if (!quiet) {
      std::fputs(from_states ? "zsim: the state comes from an interrupted scan: the report "
                               "covers what that scan read\n"
                             : "zsim: interrupted: the report covers what was scanned\n",
                 stderr);
    }
    return kExitInterrupted;
  }
  return errors > 0 ? kExitUnreadable : kExitOk;
}

std::vector<std::string> UnmatchedExcludes(const std::vector<std::pair<std::string, size_t>>& typed,
                                           const std::vector<uint64_t>& matches) {
  std::vector<std::string> out;
  size_t next = 0, total = 0;
  for (const auto& [glob, spelled] : typed) total += spelled;
  if (total != matches.size()) return out;
  for (const auto& [glob, spelled] : typed) {
    uint64_t hits = 0;
    for (size_t i = 0; i < spelled; ++i) hits += matches[next + i];
    next += spelled;
    if (hits == 0) out.push_back(glob);
  }
  // Every glob excluding nothing is the other warning's case (main.cc): one line says it.
  if (out.size() == typed.size()) out.clear();
  return out;
}

}  // namespace zsim::cli
