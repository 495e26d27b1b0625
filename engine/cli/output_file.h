// engine/cli/output_file.h
//
// A report file named on the command line (--html FILE), made safe before the scan starts:
// nothing zsim scans may be replaced by it, a symlink at its path is never followed, and a path
// it could not write is refused before any input is read, not after hours of scanning
// (CheckCreatable before the scan; Prepare and Commit when the report is written, so that a
// process killed outright during the scan leaves nothing beside the target).
//
// Prepare() refuses a path that is a symlink, a directory or anything
// but a regular file, a path whose directory is missing or not writable, and a path that is one
// of the inputs or lies inside an input tree (compared by (device, inode) of the path and of
// every directory above it, so `D`, `D/.`, `../x/D`, a symlinked root and a bind mount of D are
// all the same D), and a target the rename at the end could not replace: an immutable or
// append-only file or directory (chattr +i, +a), or another user's file in a sticky directory
// (/tmp) where this process neither owns the directory nor holds CAP_FOWNER. It then creates a
// temporary file beside the target (O_CREAT | O_EXCL, mode 0666 less the umask), which proves the
// directory writable. Commit() writes the report there, syncs it and renames it over the target:
// the target is replaced whole or not at all, and an existing file's contents (or another name of
// its inode) are never written through. Destroying an OutputFile that was not committed removes the
// temporary file, and so does an abrupt exit on a second Ctrl-C (base/temp_files.h).
//
// Thread safety: one thread.

#ifndef ZSIM_ENGINE_CLI_OUTPUT_FILE_H_
#define ZSIM_ENGINE_CLI_OUTPUT_FILE_H_

#include <string>
#include <string_view>
#include <vector>

#include "engine/base/temp_files.h"
#include "engine/io/guarded_file_system.h"
#include "zsim/status.h"

namespace zsim::cli {

class OutputFile {
 public:
  // kInvalidArgument with a message naming the path and what is wrong with it (exit code 2).
  // `flag` names the option in messages ("--html"); `inputs` are the scan's paths.
  static Result<OutputFile> Prepare(std::string_view flag, const std::string& path,
                                    const std::vector<std::string>& inputs);
  // Prepare's checks of the path alone, creating nothing: for an output another module writes
  // (--save: state/state_file.h writes it by temporary file and rename too).
  static Status CheckTarget(std::string_view flag, const std::string& path,
                            const std::vector<std::string>& inputs);
  // CheckTarget, then Prepare's temporary file created and removed again: the proof, before
  // any input is read, that an output written at the end (--save, --html) can be created there.
  static Status CheckCreatable(std::string_view flag, const std::string& path,
                               const std::vector<std::string>& inputs);

  // The places a walk must not reach for `path` to stay outside what is scanned: its real
  // directory and every directory above it, and with `follow_symlinks` the file itself if it
  // exists (a symlink to it would be read and then point at the new file; a hard link keeps the
  // old inode, which the rename never touches), for io::GuardedFileSystem.
  // Prepare and CheckTarget see the inputs named; a followed symlink or a bind mount met on the
  // way is seen only by the walk. Empty when the directory cannot be resolved (CheckTarget
  // refuses such a path).
  static std::vector<io::GuardedFileSystem::Place> WrittenPlaces(std::string_view flag,
                                                                 const std::string& path,
                                                                 bool follow_symlinks);

  // True when the two paths name one file: the same (device, inode) where both exist, else the
  // same last component in the same real directory (`x`, `./x` and `D/../x` are one file).
  static bool SameTarget(const std::string& a, const std::string& b);

  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  OutputFile(const OutputFile&) = delete;
  ~OutputFile();

  // Writes `contents`, fsyncs, renames over the target. kIoError (with errno's text) if any step
  // fails; the target is then untouched and the temporary file removed.
  Status Commit(std::string_view contents);

  const std::string& path() const { return path_; }

 private:
  OutputFile(std::string path, std::string temp_path, int fd)
      : path_(std::move(path)),
        temp_path_(std::move(temp_path)),
        fd_(fd),
        registered_(temp_path_) {}

  std::string path_;
  std::string temp_path_;
  int fd_ = -1;                      // -1 once committed (or moved from)
  TempFileRegistration registered_;  // while the temporary file exists
};

}  // namespace zsim::cli

#endif  // ZSIM_ENGINE_CLI_OUTPUT_FILE_H_
