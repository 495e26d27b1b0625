#include "engine/cli/messages.h"

#include <algorithm>
#include <cstdio>

#include "engine/base/size_suffix.h"

namespace zsim::cli {
namespace {

// Length of the valid UTF-8 sequence at s[i] (2..4), or 0 if there is none.
size_t Utf8Length(const std::string& s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const auto cont = [&](size_t k) { return k < s.size() && (b(k) & 0xC0) == 0x80; };
  const unsigned char c = b(i);
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(i + 1) || !cont(i + 2)) return 0;
    if (c == 0xE0 && b(i + 1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(i + 1) >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    if (c == 0xF0 && b(i + 1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(i + 1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

// A path or message as it may be shown on a terminal: control characters (escape sequences,
// carriage returns, newlines unless kept) and bytes that are not UTF-8 are written as \n, \xNN,
// and a backslash as \\, so a file name can neither forge lines nor drive the terminal.
std::string TerminalSafe(const std::string& text, bool keep_newlines = false) {
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
      if (const size_t n = Utf8Length(text, i); n > 0) {
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
        out += keep_newlines ? "\n" : "\\n";
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

void PrintError(const std::string& message) {
  std::fprintf(stderr, "zsim: %s\n", TerminalSafe(message, /*keep_newlines=*/true).c_str());
}

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
  if (p.expected_seconds > 0) {
    line += ", expected " + std::to_string(static_cast<uint64_t>(p.expected_seconds + 0.5)) +
            " s at most, codecs " + std::to_string(static_cast<int>(p.codec_share * 100 + 0.5)) +
            "%";
  }
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

std::string FormatCostWarning(const pipeline::CostForecast& f) {
  if (!pipeline::IsCostly(f)) return "";
  const double wall = f.Seconds();
  return "zsim: the codecs asked for may take up to " +
         std::to_string(static_cast<uint64_t>(f.codec_cpu_seconds + 0.5)) + " CPU s, " +
         std::to_string(static_cast<uint64_t>(f.codec_cpu_seconds / f.read_cpu_seconds + 0.5)) +
         " times the reading (this scan: up to " +
         std::to_string(static_cast<uint64_t>(wall + 0.5)) + " s on " + std::to_string(f.threads) +
         " threads); fewer codecs or recordsizes cost less, Ctrl-C stops with what was read";
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
      std::fprintf(stderr, "  %s: %s\n", TerminalSafe(e.path).c_str(),
                   TerminalSafe(e.error).c_str());
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
    if (!quiet) std::fprintf(stderr, "zsim: interrupted: the report covers what was scanned\n");
    return kExitInterrupted;
  }
  return errors > 0 ? kExitUnreadable : kExitOk;
}

}  // namespace zsim::cli
