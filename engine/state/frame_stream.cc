#include "engine/state/frame_stream.h"

#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>

namespace zsim::state {

void FrameWriter::Str(const std::string& s) {
  U32(static_cast<uint32_t>(s.size()));
  Raw(s.data(), s.size());
}

void FrameWriter::Raw(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  while (n > 0) {
    const size_t take = std::min(n, kMaxFrameBytes - buffer_.size());
    buffer_.insert(buffer_.end(), b, b + take);
    b += take;
    n -= take;
    if (buffer_.size() == kMaxFrameBytes) Flush();
  }
}

void FrameWriter::Write(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  if (out_) {
    out_->append(reinterpret_cast<const char*>(b), n);
    written_ += n;
    return;
  }
  while (n > 0 && status_.ok()) {
    const ssize_t w = ::write(fd_, b, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      status_ = Status::FromErrno("cannot write the state file", errno);
      return;
    }
    b += w;
    n -= static_cast<size_t>(w);
    written_ += static_cast<uint64_t>(w);
  }
}

void FrameWriter::Flush() {
  if (buffer_.empty()) return;
  const uint32_t len = static_cast<uint32_t>(buffer_.size());
  const uint64_t sum = XXH3_64bits_withSeed(buffer_.data(), buffer_.size(), index_++);
  Write(&len, 4);
  Write(buffer_.data(), buffer_.size());
  Write(&sum, 8);
  buffer_.clear();
}

Status FrameWriter::Finish() {
  Flush();
  const uint32_t zero = 0;
  const uint64_t sum = XXH3_64bits_withSeed(nullptr, 0, index_++);
  Write(&zero, 4);
  Write(&sum, 8);
  return status_;
}

uint64_t FrameReader::remaining_hint() const {
  uint64_t left = frame_.size() - pos_;
  if (fd_ < 0) return left + (mem_.size() - mem_pos_);
  struct stat st {};
  const off_t at = ::lseek(fd_, 0, SEEK_CUR);
  if (::fstat(fd_, &st) == 0 && at >= 0 && st.st_size >= at) left += uint64_t(st.st_size - at);
  return left;
}

void FrameReader::Fail(const std::string& why) {
  if (error_.empty()) error_ = why;
}

bool FrameReader::ReadSource(void* p, size_t n) {
  auto* b = static_cast<uint8_t*>(p);
  if (fd_ < 0) {
    if (mem_.size() - mem_pos_ < n) return false;
    std::memcpy(b, mem_.data() + mem_pos_, n);
    mem_pos_ += n;
    return true;
  }
  while (n > 0) {
    const ssize_t r = ::read(fd_, b, n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      Fail(std::string("cannot read: ") + std::strerror(errno));
      return false;
    }
    if (r == 0) return false;
    b += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool FrameReader::NextFrame() {
  if (!ok() || at_end_) return false;
  uint32_t len = 0;
  uint64_t sum = 0;
  if (!ReadSource(&len, 4)) {
    Fail("truncated: the file ends before its end mark");
    return false;
  }
  if (len > kMaxFrameBytes) {
    Fail("corrupt: frame " + std::to_string(index_) + " claims " + std::to_string(len) + " bytes");
    return false;
  }
  frame_.resize(len);
  pos_ = 0;
  if ((len > 0 && !ReadSource(frame_.data(), len)) || !ReadSource(&sum, 8)) {
    Fail("truncated: the file ends inside frame " + std::to_string(index_));
    return false;
  }
  if (verify_ && XXH3_64bits_withSeed(frame_.data(), len, index_) != sum) {
    Fail("corrupt: frame " + std::to_string(index_) + " fails its checksum");
    return false;
  }
  ++index_;
  if (len == 0) {
    at_end_ = true;
    return false;
  }
  return true;
}

void FrameReader::Raw(void* p, size_t n) {
  auto* b = static_cast<uint8_t*>(p);
  while (n > 0) {
    if (pos_ == frame_.size() && !NextFrame()) {
      Fail("corrupt: the data ends before the state does");
      std::memset(b, 0, n);
      return;
    }
    const size_t take = std::min(n, frame_.size() - pos_);
    std::memcpy(b, frame_.data() + pos_, take);
    pos_ += take;
    b += take;
    n -= take;
  }
}

std::string FrameReader::Str(size_t max_bytes) {
  const uint32_t n = U32();
  if (n > max_bytes) {
    Fail("corrupt: a string of " + std::to_string(n) + " bytes");
    return {};
  }
  std::string s(n, '\0');
  Raw(s.data(), n);
  return s;
}

Status FrameReader::End() {
  if (ok() && pos_ != frame_.size()) Fail("corrupt: data after the state");
  if (ok() && !at_end_ && NextFrame()) Fail("corrupt: data after the state");
  if (ok() && !at_end_) Fail("truncated: the file ends before its end mark");
  if (ok()) {
    uint8_t extra = 0;
    if (ReadSource(&extra, 1)) Fail("corrupt: bytes after the end mark");
  }
  return ok() ? Status::Ok() : Status::Corruption(error_);
}

}  // namespace zsim::state
