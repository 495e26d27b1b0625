#include "engine/walk/block_devices.h"

#include <sys/sysmacros.h>

#include <filesystem>
#include <fstream>
#include <system_error>

namespace zsim::walk {

namespace {

// "MAJOR:MINOR\n", as a sysfs `dev` file reads, in st_rdev's encoding.
std::optional<uint64_t> ParseDevFile(const std::filesystem::path& file) {
  std::ifstream in(file);
  unsigned long major_number = 0, minor_number = 0;
  char colon = 0;
  if (!(in >> major_number >> colon >> minor_number) || colon != ':') return std::nullopt;
  return static_cast<uint64_t>(makedev(major_number, minor_number));
}

}  // namespace

std::optional<uint64_t> DiskOfPartition(const std::string& sysfs_root, uint64_t rdev) {
  namespace fs = std::filesystem;
  const dev_t dev = static_cast<dev_t>(rdev);
  const fs::path link = fs::path(sysfs_root) / "dev" / "block" /
                        (std::to_string(major(dev)) + ":" + std::to_string(minor(dev)));
  std::error_code ec;
  if (!fs::is_regular_file(link / "partition", ec)) return std::nullopt;
  const fs::path dir = fs::canonical(link, ec);  // the partition's directory, in its disk's
  if (ec) return std::nullopt;
  return ParseDevFile(dir.parent_path() / "dev");
}

}  // namespace zsim::walk
