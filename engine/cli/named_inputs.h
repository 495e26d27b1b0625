// engine/cli/named_inputs.h
//
// What the paths named to `zsim scan` are, looked at before the scan: block devices, and files
// of kernel pseudo file systems.
//
// Block devices named as a scan's inputs. ZFS holds a block device's data as a zvol, cut at its
// volblocksize (the profile's default where --volblocksize is not given: pipeline/scan.cc),
// never at a recordsize. So a scan whose every input is a block device is a scan of zvols and
// says so, as --volblocksize would: its one row is the volblocksize, the report names that
// property and gives the zvol advice. Before, such a scan printed its rows as recordsize 128K
// (or 1M, as asked) over figures of 16K blocks, and advised "recordsize=128K" for a zvol.
// --recordsize, which would cut none of its inputs, is refused there; a block device named
// beside files is said on stderr (its figures are of the default volblocksize in every row).
//
// Thread safety: a function of the command and the file system's answers to stat(2).

#ifndef ZSIM_ENGINE_CLI_NAMED_INPUTS_H_
#define ZSIM_ENGINE_CLI_NAMED_INPUTS_H_

#include <string>
#include <vector>

#include "engine/cli/flags.h"
#include "zsim/status.h"

namespace zsim::cli {

// For `zsim scan` without --volblocksize: sets cmd->options.volblocksize to the profile's default
// where every path named that exists is a block device (following symbolic links; then
// cmd->devices_as_zvols), or refuses
// --recordsize there (kInvalidArgument, the message to show); appends to `*notes` a sentence for
// each block device named among other paths (InputSummary::notes). Reads nothing but the paths'
// metadata.
Status ResolveBlockInputs(Command* cmd, std::vector<std::string>* notes);

// A sentence (InputSummary::notes) for each path named that lies on a kernel pseudo file system
// (/proc, /sys...: walk/walker.h IsKernelPseudoFileSystem). A tree's walk skips such mounts; named,
// they are read as asked, but their files are made up by the kernel as they are read and their
// sizes are not their contents (/proc/self/status: 0 bytes, read as an empty file; a sysfs file:
// 4096, and "shrank" when read), which a new user took for figures of what was named.
std::vector<std::string> PseudoFileSystemNotes(const std::vector<std::string>& paths);

}  // namespace zsim::cli

#endif  // ZSIM_ENGINE_CLI_NAMED_INPUTS_H_
