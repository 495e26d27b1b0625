// engine/pipeline/input_file.h
//
// One input file as the scan reads it: opened once, the descriptor shared by all its chunks (a
// rename over the path during the scan cannot mix two files), and checked twice. At the open,
// the file must be the one the walk listed (same device and inode: not a file renamed over it,
// not a symlink put in its place, which is never followed unless the path is an input or
// --follow-symlinks is given) and of the size the walk saw. After the last chunk, its size,
// mtime and ctime must be those it had when opened: otherwise it changed while read, and the
// file is reported (kChanged), never modelled as a silent mix of two versions.
//
// Thread safety: Open and CheckUnchanged may be called from any thread; the File returned is
// shared (positional reads, io/file_system.h).

#ifndef ZSIM_ENGINE_PIPELINE_INPUT_FILE_H_
#define ZSIM_ENGINE_PIPELINE_INPUT_FILE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "engine/io/file_system.h"
#include "zsim/status.h"

namespace zsim::pipeline {

// kChanged unless `opened` is the file `listed` describes (device, inode).
Status CheckSameFile(const io::FileInfo& listed, const io::FileInfo& opened);
// kChanged if size, mtime or ctime differ between the two stats of one open file.
Status CheckUnchangedSince(const io::FileInfo& at_open, const io::FileInfo& now);

class InputFile {
 public:
  // `listed`: the walk's stat of `path`; `size`: the bytes the layout follows (the device's size
  // for a zvol); `follow`: may a symlink at `path` be followed; `as_listed`: the open file must
  // also have the listed mtime and ctime (a piece of a file, pipeline/file_pieces.h: the pieces,
  // read apart in time, must all read one version).
  InputFile(std::string path, const io::FileInfo& listed, uint64_t size, bool follow,
            bool as_listed = false)
      : path_(std::move(path)),
        listed_(listed),
        size_(size),
        follow_(follow),
        as_listed_(as_listed) {}

  // The open file, opened and checked by the first caller; later callers get the same file, or
  // the same error, without opening again.
  Result<io::File*> Open(io::FileSystem* fs);
  // After every chunk was read: kChanged if the file changed since it was opened. Ok if it was
  // never opened.
  Status CheckUnchanged();

 private:
  const std::string path_;
  const io::FileInfo listed_;
  const uint64_t size_;
  const bool follow_;
  const bool as_listed_;
  std::mutex mu_;
  bool tried_ = false;  // Guarded by mu_, as are the three below.
  Status status_;
  std::unique_ptr<io::File> file_;
  io::FileInfo at_open_;
};

}  // namespace zsim::pipeline

#endif  // ZSIM_ENGINE_PIPELINE_INPUT_FILE_H_
