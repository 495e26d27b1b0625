#include "engine/report/name_encoding.h"

#include <cstdint>

namespace zsim::report {
namespace {

constexpr uint32_t kByteBase = 0xEF00;  // byte 0xNN <-> U+EF00 + 0xNN (0x80 <= NN <= 0xFF)

uint8_t Byte(std::string_view s, size_t i) { return static_cast<uint8_t>(s[i]); }

// The code point of the valid sequence of `n` bytes at s[i].
uint32_t CodePoint(std::string_view s, size_t i, size_t n) {
  uint32_t cp = Byte(s, i) & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (Byte(s, i + k) & 0x3F);
  return cp;
}

// U+EF80..U+EFFF as UTF-8: EE BE 80..EE BF BF.
void AppendByteCode(uint8_t b, std::string& out) {
  const uint32_t cp = kByteBase + b;
  out += static_cast<char>(0xE0 | (cp >> 12));
  out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  out += static_cast<char>(0x80 | (cp & 0x3F));
}

}  // namespace

size_t ValidUtf8Length(std::string_view s, size_t i) {
  const auto cont = [&](size_t k) { return k < s.size() && (Byte(s, k) & 0xC0) == 0x80; };
  const uint8_t c = Byte(s, i);
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(i + 1) || !cont(i + 2)) return 0;
    if (c == 0xE0 && Byte(s, i + 1) < 0xA0) return 0;   // overlong
    if (c == 0xED && Byte(s, i + 1) >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    if (c == 0xF0 && Byte(s, i + 1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && Byte(s, i + 1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

std::string EncodeName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size();) {
    const uint8_t c = Byte(name, i);
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    const size_t n = ValidUtf8Length(name, i);
    if (n == 0) {
      AppendByteCode(c, out);
      ++i;
      continue;
    }
    const uint32_t cp = CodePoint(name, i, n);
    if (cp >= kByteBase + 0x80 && cp <= kByteBase + 0xFF) {
      for (size_t k = 0; k < n; ++k) AppendByteCode(Byte(name, i + k), out);
    } else {
      out.append(name, i, n);
    }
    i += n;
  }
  return out;
}

std::string DecodeName(std::string_view encoded) {
  std::string out;
  out.reserve(encoded.size());
  for (size_t i = 0; i < encoded.size();) {
    const size_t n = Byte(encoded, i) < 0x80 ? 1 : ValidUtf8Length(encoded, i);
    if (n == 3) {
      const uint32_t cp = CodePoint(encoded, i, 3);
      if (cp >= kByteBase + 0x80 && cp <= kByteBase + 0xFF) {
        out += static_cast<char>(cp - kByteBase);
        i += 3;
        continue;
      }
    }
    const size_t take = n == 0 ? 1 : n;  // not EncodeName's output: kept as it is
    out.append(encoded, i, take);
    i += take;
  }
  return out;
}

std::string TerminalName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size();) {
    const uint8_t c = Byte(name, i);
    if (c < 0x80) {
      out += c < 0x20 || c == 0x7F ? '?' : static_cast<char>(c);
      ++i;
      continue;
    }
    const size_t n = ValidUtf8Length(name, i);
    if (n == 0) {
      out += c <= 0x9F ? '?' : static_cast<char>(c);  // 0x80..0x9F: C1 to an 8-bit terminal
      ++i;
      continue;
    }
    const uint32_t cp = CodePoint(name, i, n);
    if (cp <= 0x9F) {
      out += '?';  // U+0080..U+009F: the C1 controls
    } else {
      out.append(name, i, n);
    }
    i += n;
  }
  return out;
}

}  // namespace zsim::report
