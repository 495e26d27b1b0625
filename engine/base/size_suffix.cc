#include "engine/base/size_suffix.h"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace zsim {
namespace {

Status BadSize(std::string_view text, std::string_view why) {
  std::string msg = "invalid size '";
  msg += text;
  msg += "': ";
  msg += why;
  msg +=
      " (use a number of bytes with an optional suffix K, M, G, T, P, E, e.g. 512, 4k, 128K, 1M)";
  return Status::InvalidArgument(std::move(msg));
}

}  // namespace

Result<uint64_t> ParseSize(std::string_view text) {
  size_t i = 0;
  uint64_t whole = 0;
  bool any_digit = false;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (whole > (UINT64_MAX - digit) / 10) return BadSize(text, "too large");
    whole = whole * 10 + digit;
    any_digit = true;
    ++i;
  }
  // Fraction digits, kept as numerator/denominator to stay exact.
  uint64_t frac_num = 0, frac_den = 1;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (frac_den >= 1000000000000ull) return BadSize(text, "too many decimals");
      frac_num = frac_num * 10 + static_cast<uint64_t>(text[i] - '0');
      frac_den *= 10;
      any_digit = true;
      ++i;
    }
  }
  if (!any_digit) return BadSize(text, "no number");
  int shift = 0;
  if (i < text.size()) {
    switch (std::toupper(static_cast<unsigned char>(text[i]))) {
      case 'B':
        shift = 0;
        break;
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      case 'P':
        shift = 50;
        break;
      case 'E':
        shift = 60;
        break;
      default:
        return BadSize(text, "unknown suffix");
    }
    const bool was_b = std::toupper(static_cast<unsigned char>(text[i])) == 'B';
    ++i;
    std::string_view rest = text.substr(i);
    auto upper_eq = [](std::string_view a, std::string_view b) {
      if (a.size() != b.size()) return false;
      for (size_t k = 0; k < a.size(); ++k) {
        if (std::toupper(static_cast<unsigned char>(a[k])) != b[k]) return false;
      }
      return true;
    };
    if (!rest.empty() && (was_b || !(upper_eq(rest, "B") || upper_eq(rest, "IB")))) {
      return BadSize(text, "unknown suffix");
    }
  }
  if (shift > 0 && whole > (UINT64_MAX >> shift)) return BadSize(text, "too large");
  const uint64_t base = whole << shift;
  // frac_num / frac_den * 2^shift must be a whole number of bytes.
  const unsigned __int128 frac_bytes_num = static_cast<unsigned __int128>(frac_num) << shift;
  if (frac_bytes_num % frac_den != 0) return BadSize(text, "not a whole number of bytes");
  const unsigned __int128 total = static_cast<unsigned __int128>(base) + frac_bytes_num / frac_den;
  if (total > UINT64_MAX) return BadSize(text, "too large");
  return static_cast<uint64_t>(total);
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  if (v >= 100) {
    std::snprintf(buf, sizeof buf, "%.0f %s", v, kUnits[u]);
  } else if (v >= 10) {
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f %s", v, kUnits[u]);
  }
  return buf;
}

}  // namespace zsim
