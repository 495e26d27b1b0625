#include "engine/cli/block_inputs.h"

#include <sys/stat.h>

#include <vector>

#include "engine/cli/messages.h"
#include "engine/zfs/profile.h"

namespace zsim::cli {

Status ResolveBlockInputs(Command* cmd, std::string* notes) {
  ScanOptions& o = cmd->options;
  if (cmd->kind != Command::Kind::kScan || o.volblocksize || o.paths.empty()) return Status::Ok();
  std::vector<std::string> devices;
  for (const std::string& path : o.paths) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && S_ISBLK(st.st_mode)) devices.push_back(path);
  }
  if (devices.empty()) return Status::Ok();
  const uint64_t block = zfs::RulesFor(o.profile).default_volblocksize;
  const std::string size = std::to_string(block >> 10) + "K";
  const std::string profile(ProfileName(o.profile));
  if (devices.size() == o.paths.size()) {
    if (cmd->recordsize_given) {
      return Status::InvalidArgument(
          Shown(devices[0]) +
          (devices.size() == 1 ? " is a block device"
                               : " and the others are "
                                 "block devices") +
          ", which ZFS holds as a zvol: --recordsize cuts the files of a filesystem, not a zvol; "
          "give --volblocksize (" +
          size + " is the default under profile " + profile + "), or name files");
    }
    o.volblocksize = block;
    return Status::Ok();
  }
  for (const std::string& device : devices) {
    *notes += "zsim: note: " + Shown(device) +
              " is a block device: read as a zvol of volblocksize " + size + " (profile " +
              profile +
              "'s default) in every recordsize row; --volblocksize cuts every input as a zvol\n";
  }
  return Status::Ok();
}

}  // namespace zsim::cli
