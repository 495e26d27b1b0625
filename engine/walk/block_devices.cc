#include "engine/walk/block_devices.h"

#include <sys/sysmacros.h>

#include <algorithm>
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

std::vector<uint64_t> DevicesUnder(const std::string& sysfs_root, uint64_t rdev) {
  namespace fs = std::filesystem;
  const dev_t dev = static_cast<dev_t>(rdev);
  std::error_code ec;
  const fs::path top =
      fs::canonical(fs::path(sysfs_root) / "dev" / "block" /
                        (std::to_string(major(dev)) + ":" + std::to_string(minor(dev))),
                    ec);
  if (ec) return {};
  // Breadth first over the slaves' links (each to the directory of a device, holding `dev`); a
  // stack is a few levels deep, the bound only guards against a sysfs that loops.
  std::vector<uint64_t> under;
  const auto add = [&](uint64_t d) {
    if (std::find(under.begin(), under.end(), d) != under.end()) return false;
    under.push_back(d);
    return true;
  };
  std::vector<fs::path> todo = {top};
  for (size_t next = 0; next < todo.size() && next < 256; ++next) {
    for (const fs::directory_entry& slave : fs::directory_iterator(todo[next] / "slaves", ec)) {
      const fs::path dir = fs::canonical(slave.path(), ec);
      if (ec) continue;
      const std::optional<uint64_t> slave_dev = ParseDevFile(dir / "dev");
      if (!slave_dev || !add(*slave_dev)) continue;
      if (const std::optional<uint64_t> disk = DiskOfPartition(sysfs_root, *slave_dev)) add(*disk);
      todo.push_back(dir);
    }
  }
  return under;
}

std::vector<std::pair<size_t, size_t>> StackedDevices(const std::string& sysfs_root,
                                                      const std::vector<uint64_t>& rdevs) {
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t i = 0; i < rdevs.size(); ++i) {
    const std::vector<uint64_t> under = DevicesUnder(sysfs_root, rdevs[i]);
    for (size_t j = 0; j < rdevs.size(); ++j) {
      if (j != i && rdevs[j] != rdevs[i] &&
          std::find(under.begin(), under.end(), rdevs[j]) != under.end()) {
        pairs.emplace_back(i, j);
      }
    }
  }
  return pairs;
}

}  // namespace zsim::walk
