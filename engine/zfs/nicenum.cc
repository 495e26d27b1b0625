#include "engine/zfs/nicenum.h"

#include <cstdio>

namespace zsim::zfs {
namespace {

// zfs_nicenum_format for the 1024-based formats; `unit0` is the suffix of index 0 ("" or "B").
std::string Format(uint64_t num, const char* unit0) {
  static constexpr const char* kUnits[] = {"", "K", "M", "G", "T", "P", "E"};
  uint64_t n = num;
  int index = 0;
  while (n >= 1024 && index < 6) {
    n /= 1024;
    ++index;
  }
  const char* unit = index == 0 ? unit0 : kUnits[index];
  char buf[32];
  const uint64_t divisor = uint64_t{1} << (10 * index);
  if (index == 0 || num % divisor == 0) {
    std::snprintf(buf, sizeof buf, "%llu%s", static_cast<unsigned long long>(n), unit);
    return buf;
  }
  const double value = static_cast<double>(num) / static_cast<double>(divisor);
  // Try 2, 1, 0 decimals; keep the first that fits in 5 characters (ZFS prints into a 6-byte
  // buffer; with 0 decimals it keeps the result whatever its length).
  for (int decimals = 2; decimals >= 0; --decimals) {
    const int len = std::snprintf(buf, sizeof buf, "%.*f%s", decimals, value, unit);
    if (len <= 5) break;
  }
  std::string out(buf);
  if (out.size() > 5) out.resize(5);  // what snprintf into char[6] leaves
  return out;
}

}  // namespace

std::string NiceNumber(uint64_t n) { return Format(n, ""); }

std::string NiceBytes(uint64_t n) { return Format(n, "B"); }

std::string NiceSize(uint64_t n, Profile profile) {
  return profile == Profile::kV23 ? NiceNumber(n) : NiceBytes(n);
}

}  // namespace zsim::zfs
