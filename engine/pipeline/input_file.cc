#include "engine/pipeline/input_file.h"

namespace zsim::pipeline {

Status CheckSameFile(const io::FileInfo& listed, const io::FileInfo& opened) {
  if (listed.dev == opened.dev && listed.ino == opened.ino) return Status::Ok();
  return Status::Changed("replaced after it was listed: another file (device " +
                         std::to_string(opened.dev) + ", inode " + std::to_string(opened.ino) +
                         ") is at this path now");
}

Status CheckUnchangedSince(const io::FileInfo& at_open, const io::FileInfo& now) {
  if (now.size != at_open.size) {
    return Status::Changed("size changed while read: " + std::to_string(at_open.size) +
                           " bytes when opened, " + std::to_string(now.size) + " after");
  }
  if (now.mtime_ns != at_open.mtime_ns || now.ctime_ns != at_open.ctime_ns) {
    return Status::Changed(
        "changed while read (modified, or renamed, linked or removed: its change time moved): "
        "the figures would mix two versions");
  }
  return Status::Ok();
}

Result<io::File*> InputFile::Open(io::FileSystem* fs) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!tried_) {
    tried_ = true;
    Result<std::unique_ptr<io::File>> f = fs->Open(path_, follow_);
    if (!f.ok()) {
      status_ = f.status();
    } else if (Result<io::FileInfo> st = (*f)->Stat(); !st.ok()) {
      status_ = st.status();
    } else if (Status same = CheckSameFile(listed_, *st); !same.ok()) {
      status_ = std::move(same);
    } else if ((*f)->size() != size_) {
      status_ =
          Status::Changed("size changed during the scan: " + std::to_string(size_) +
                          " bytes when listed, " + std::to_string((*f)->size()) + " when read");
    } else if (as_listed_ &&
               (st->mtime_ns != listed_.mtime_ns || st->ctime_ns != listed_.ctime_ns)) {
      status_ = Status::Changed(
          "modified since it was listed (its change time moved): its pieces would mix two "
          "versions");
    } else {
      at_open_ = *st;
      file_ = std::move(*f);
    }
  }
  if (!status_.ok()) return status_;
  return file_.get();
}

Status InputFile::CheckUnchanged() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!file_) return Status::Ok();
  Result<io::FileInfo> now = file_->Stat();
  if (!now.ok()) return now.status();
  return CheckUnchangedSince(at_open_, *now);
}

}  // namespace zsim::pipeline
