// ParseVdev and VdevName (declared in include/zsim/scan_options.h): the --vdev spellings.

#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include "engine/zfs/allocation.h"
#include "zsim/scan_options.h"

namespace zsim {
namespace {

constexpr std::string_view kForms =
    "accepted forms: disk, mirror:N (N ways), raidzP:C (P parity 1..3, C disks; raidz = raidz1), "
    "draidP:D:C (P parity, D data disks per group, C disks) or zpool's draidP:Dd:Cc:Ss (S "
    "distributed spares; D defaults to 8)";

Status Bad(std::string_view text, std::string_view why) {
  return Status::InvalidArgument("bad vdev '" + std::string(text) + "': " + std::string(why) +
                                 "; " + std::string(kForms));
}

std::vector<std::string_view> SplitColons(std::string_view s) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t colon = s.find(':', start);
    parts.push_back(s.substr(start, colon == std::string_view::npos ? colon : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  return parts;
}

bool ParseInt(std::string_view s, int* out) {
  if (s.empty() || s.size() > 4) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// "raidz2" -> 2, "raidz" -> 1 (also for "draid").
bool ParseParityWord(std::string_view word, std::string_view prefix, int* parity) {
  if (word.substr(0, prefix.size()) != prefix) return false;
  const std::string_view digits = word.substr(prefix.size());
  if (digits.empty()) {
    *parity = 1;
    return true;
  }
  return ParseInt(digits, parity);
}

}  // namespace

std::string VdevName(const VdevLayout& v) {
  switch (v.kind) {
    case VdevKind::kDisk:
      return "disk";
    case VdevKind::kMirror:
      return "mirror:" + std::to_string(v.children);
    case VdevKind::kRaidz:
      return "raidz" + std::to_string(v.parity) + ":" + std::to_string(v.children);
    case VdevKind::kDraid:
      return "draid" + std::to_string(v.parity) + ":" + std::to_string(v.data) + ":" +
             std::to_string(v.children);
  }
  return "unknown";
}

Result<VdevLayout> ParseVdev(std::string_view text) {
  const std::vector<std::string_view> parts = SplitColons(text);
  const std::string_view word = parts[0];
  VdevLayout v;
  if (word == "disk") {
    if (parts.size() != 1) return Bad(text, "disk takes no count");
    v.kind = VdevKind::kDisk;
  } else if (word == "mirror") {
    if (parts.size() != 2 || !ParseInt(parts[1], &v.children)) {
      return Bad(text, "mirror needs its number of ways, e.g. mirror:2");
    }
    v.kind = VdevKind::kMirror;
  } else if (word.substr(0, 5) == "raidz") {
    if (!ParseParityWord(word, "raidz", &v.parity)) return Bad(text, "raidz parity is 1, 2 or 3");
    if (parts.size() != 2 || !ParseInt(parts[1], &v.children)) {
      return Bad(text, "raidz needs its number of disks, e.g. raidz2:6");
    }
    v.kind = VdevKind::kRaidz;
  } else if (word.substr(0, 5) == "draid" && parts.size() > 1 && !parts[1].empty() &&
             std::string_view("dcs").find(parts[1].back()) != std::string_view::npos) {
    // zpool create's spelling (zpool(8), "draid[parity][:datad][:childrenc][:sparess]"; parsed
    // in cmd/zpool/zpool_vdev.c: draid_config_by_type): data defaults to 8, at most children -
    // parity - spares. Spares take no part in a block's allocation.
    if (!ParseParityWord(word, "draid", &v.parity)) return Bad(text, "draid parity is 1, 2 or 3");
    int data = -1, children = -1, spares = 0;
    for (size_t i = 1; i < parts.size(); ++i) {
      const std::string_view p = parts[i];
      int* into = p.empty()         ? nullptr
                  : p.back() == 'd' ? &data
                  : p.back() == 'c' ? &children
                  : p.back() == 's' ? &spares
                                    : nullptr;
      if (into == nullptr || !ParseInt(p.substr(0, p.size() - 1), into)) {
        return Bad(text, "each draid field is a number with d (data), c (children) or s (spares)");
      }
    }
    if (children < 0) return Bad(text, "give the number of disks, e.g. draid2:4d:11c:1s");
    if (spares < 0 || spares >= children) return Bad(text, "spares must be fewer than the disks");
    if (data < 0) data = std::min(8, children - spares - v.parity);
    if (data + v.parity > children - spares) {
      return Bad(text, "data + parity disks exceed the disks left beside the spares");
    }
    v.data = data;
    v.children = children;
    v.kind = VdevKind::kDraid;
  } else if (word.substr(0, 5) == "draid") {
    if (!ParseParityWord(word, "draid", &v.parity)) return Bad(text, "draid parity is 1, 2 or 3");
    if (parts.size() != 3 || !ParseInt(parts[1], &v.data) || !ParseInt(parts[2], &v.children)) {
      return Bad(text,
                 "draid takes data disks per group and disks (draid2:8:11), or each field with its "
                 "letter (draid2:4d:11c:1s)");
    }
    v.kind = VdevKind::kDraid;
  } else {
    return Bad(text, "unknown layout");
  }
  if (Status s = zfs::ValidateVdev(v); !s.ok()) {
    return Status::InvalidArgument("bad vdev '" + std::string(text) + "': " + s.message());
  }
  return v;
}

}  // namespace zsim
