// Names of the `compression` property values as ZFS spells them (module/zcommon/zfs_prop.c,
// compress_table) and of the zsim profiles (docs/zfs_model.md version legend).

#include <array>
#include <charconv>
#include <string>

#include "engine/zfs/profile.h"
#include "zsim/scan_options.h"

namespace zsim {
namespace {

using A = CompressionAlgorithm;

constexpr std::array<std::string_view, 5> kProfileNames = {"v23", "2.1", "2.2", "2.3", "2.4"};

// zstd-fast-N levels ZFS has (include/sys/zio_compress.h, ZIO_ZSTD_LEVEL_FAST_*).
constexpr std::array<int, 21> kZstdFastLevels = {1,  2,  3,  4,  5,  6,  7,  8,   9,   10,  20,
                                                 30, 40, 50, 60, 70, 80, 90, 100, 500, 1000};

bool IsZstdFastLevel(int n) {
  for (int level : kZstdFastLevels) {
    if (level == n) return true;
  }
  return false;
}

// Parses a whole decimal number (no sign, no leading '+', at most 4 digits).
std::optional<int> ParseNumber(std::string_view text) {
  if (text.empty() || text.size() > 4) return std::nullopt;
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string AcceptedNames(Profile profile) {
  const zfs::ProfileRules& rules = zfs::RulesFor(profile);
  std::string names = "off, on, lzjb, zle";
  if (rules.has_lz4) names += ", lz4";
  names += ", gzip, gzip-1 .. gzip-9";
  if (rules.has_zstd) {
    names +=
        ", zstd, zstd-1 .. zstd-19, zstd-fast, zstd-fast-1 .. zstd-fast-10, "
        "zstd-fast-20 .. zstd-fast-100 (step 10), zstd-fast-500, zstd-fast-1000";
  }
  return names;
}

Status Refuse(std::string_view name, Profile profile, std::string_view why) {
  return Status::InvalidArgument("compression '" + std::string(name) + "' " + std::string(why) +
                                 " (profile " + std::string(ProfileName(profile)) +
                                 "); accepted: " + AcceptedNames(profile));
}

// Parses without looking at what the profile supports.
std::optional<Compression> ParseAnyCompression(std::string_view name, Profile profile) {
  if (name == "off") return Compression{A::kOff, 0};
  // zio_compress_select: on = lzjb in v23 (and ZoL <= 0.6.4), lz4 once lz4_compress is active.
  if (name == "on") return Compression{zfs::RulesFor(profile).on_means, 0};
  if (name == "lzjb") return Compression{A::kLzjb, 0};
  if (name == "zle") return Compression{A::kZle, 0};
  if (name == "lz4") return Compression{A::kLz4, 0};
  if (name == "gzip") return Compression{A::kGzip, 6};        // gzip = gzip-6
  if (name == "zstd") return Compression{A::kZstd, 3};        // ZIO_ZSTD_LEVEL_DEFAULT
  if (name == "zstd-fast") return Compression{A::kZstd, -1};  // zstd-fast = zstd-fast-1
  constexpr std::string_view kGzip = "gzip-", kZstdFast = "zstd-fast-", kZstd = "zstd-";
  if (name.starts_with(kGzip)) {
    const std::optional<int> n = ParseNumber(name.substr(kGzip.size()));
    if (n && *n >= 1 && *n <= 9) return Compression{A::kGzip, *n};
    return std::nullopt;
  }
  if (name.starts_with(kZstdFast)) {
    const std::optional<int> n = ParseNumber(name.substr(kZstdFast.size()));
    if (n && IsZstdFastLevel(*n)) return Compression{A::kZstd, -*n};
    return std::nullopt;
  }
  if (name.starts_with(kZstd)) {
    const std::optional<int> n = ParseNumber(name.substr(kZstd.size()));
    if (n && *n >= 1 && *n <= 19) return Compression{A::kZstd, *n};
    return std::nullopt;
  }
  return std::nullopt;
}

bool Supported(Compression c, Profile profile) {
  const zfs::ProfileRules& rules = zfs::RulesFor(profile);
  if (c.algorithm == A::kLz4) return rules.has_lz4;
  if (c.algorithm == A::kZstd) return rules.has_zstd;
  return true;
}

}  // namespace

std::string_view ProfileName(Profile profile) {
  return kProfileNames[static_cast<size_t>(profile)];
}

std::optional<Profile> ParseProfile(std::string_view name) {
  for (size_t i = 0; i < kProfileNames.size(); ++i) {
    if (kProfileNames[i] == name) return static_cast<Profile>(i);
  }
  return std::nullopt;
}

std::string CompressionName(Compression c) {
  switch (c.algorithm) {
    case A::kOff:
      return "off";
    case A::kLzjb:
      return "lzjb";
    case A::kZle:
      return "zle";
    case A::kLz4:
      return "lz4";
    case A::kGzip:
      return "gzip-" + std::to_string(c.level);
    case A::kZstd:
      return c.level < 0 ? "zstd-fast-" + std::to_string(-c.level)
                         : "zstd-" + std::to_string(c.level);
  }
  return "unknown";
}

Result<Compression> ParseCompression(std::string_view name, Profile profile) {
  const std::optional<Compression> c = ParseAnyCompression(name, profile);
  if (!c) return Refuse(name, profile, "is not a ZFS compression value");
  if (!Supported(*c, profile)) return Refuse(name, profile, "does not exist in this ZFS version");
  return *c;
}

std::vector<Compression> AllCompressions(Profile profile) {
  std::vector<Compression> all = {{A::kOff, 0}, {A::kLzjb, 0}, {A::kZle, 0}};
  if (zfs::RulesFor(profile).has_lz4) all.push_back({A::kLz4, 0});
  for (int level = 1; level <= 9; ++level) all.push_back({A::kGzip, level});
  if (zfs::RulesFor(profile).has_zstd) {
    for (int level = 1; level <= 19; ++level) all.push_back({A::kZstd, level});
    for (int n : kZstdFastLevels) all.push_back({A::kZstd, -n});
  }
  return all;
}

std::vector<Compression> DefaultCompressions(Profile profile) {
  if (zfs::RulesFor(profile).has_lz4 && zfs::RulesFor(profile).has_zstd) {
    return {{A::kOff, 0}, {A::kLz4, 0}, {A::kZstd, 3}};
  }
  std::vector<Compression> list = {{A::kOff, 0}};
  if (zfs::RulesFor(profile).has_lz4) list.push_back({A::kLz4, 0});
  list.push_back({A::kGzip, 6});
  list.push_back({A::kLzjb, 0});
  list.push_back({A::kZle, 0});
  return list;
}

}  // namespace zsim
