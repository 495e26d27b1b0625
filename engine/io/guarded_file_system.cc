#include "engine/io/guarded_file_system.h"

#include <algorithm>

namespace zsim::io {

GuardedFileSystem::GuardedFileSystem(FileSystem* base, const std::vector<Place>& places,
                                     const std::vector<uint64_t>& devices,
                                     std::function<void()> on_hit)
    : base_(base), on_hit_(std::move(on_hit)) {
  for (const Place& p : places) {
    if (devices.empty() || std::find(devices.begin(), devices.end(), p.dev) != devices.end()) {
      places_.emplace(std::make_pair(p.dev, p.ino), p.what);
    }
  }
}

Result<FileInfo> GuardedFileSystem::Stat(const std::string& path, bool follow) {
  Result<FileInfo> info = base_->Stat(path, follow);
  if (!info.ok() || places_.empty()) return info;
  const auto place = places_.find({info->dev, info->ino});
  if (place == places_.end()) return info;
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!hit_) {
      hit_ = Hit{path, place->second};
      first = true;
    }
  }
  if (first && on_hit_) on_hit_();
  return Status(StatusCode::kInvalidArgument,
                "leads to where zsim writes (" + place->second + "): not scanned");
}

Result<std::vector<DirEntry>> GuardedFileSystem::ListDirectory(const std::string& path,
                                                               bool follow) {
  return base_->ListDirectory(path, follow);
}

Result<std::unique_ptr<File>> GuardedFileSystem::Open(const std::string& path, bool follow) {
  return base_->Open(path, follow);
}

std::optional<GuardedFileSystem::Hit> GuardedFileSystem::hit() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hit_;
}

}  // namespace zsim::io
