#include "engine/cli/named_inputs.h"

#include <sys/stat.h>
#include <sys/vfs.h>

#include <vector>

#include "engine/cli/messages.h"
#include "engine/walk/walker.h"
#include "engine/zfs/profile.h"

namespace zsim::cli {

Status ResolveBlockInputs(Command* cmd, std::vector<std::string>* notes) {
  ScanOptions& o = cmd->options;
  if (cmd->kind != Command::Kind::kScan || o.volblocksize || o.paths.empty()) return Status::Ok();
  // Of the paths that exist: one missing (a typo) is listed as an error and read by no row.
  std::vector<std::string> devices;
  size_t existing = 0;
  for (const std::string& path : o.paths) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) continue;
    ++existing;
    if (S_ISBLK(st.st_mode)) devices.push_back(path);
  }
  if (devices.empty()) return Status::Ok();
  const uint64_t block = zfs::RulesFor(o.profile).default_volblocksize;
  const std::string size = std::to_string(block >> 10) + "K";
  const std::string profile(ProfileName(o.profile));
  if (devices.size() == existing) {
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
    cmd->devices_as_zvols = true;
    return Status::Ok();
  }
  for (const std::string& device : devices) {
    notes->push_back(Shown(device) + " is a block device: read as a zvol of volblocksize " + size +
                     " (profile " + profile +
                     "'s default) in every recordsize row; --volblocksize cuts every input as a "
                     "zvol");
  }
  return Status::Ok();
}

std::vector<std::string> PseudoFileSystemNotes(const std::vector<std::string>& paths) {
  std::vector<std::string> notes;
  for (const std::string& path : paths) {
    struct statfs fs;
    if (::statfs(path.c_str(), &fs) != 0) continue;  // the checks that follow say why
    if (!walk::IsKernelPseudoFileSystem(static_cast<uint64_t>(fs.f_type))) continue;
    notes.push_back(Shown(path) +
                    " lies on a kernel pseudo file system: its files are made up by the kernel as "
                    "they are read and their sizes are not their contents (read as their size "
                    "says: empty, or short of it); a pool would be given what a copy of them "
                    "holds");
  }
  return notes;
}

}  // namespace zsim::cli
