// engine/state/frame_stream.h
//
// The byte layer of a state file: a stream of values cut into checksummed frames.
//
//   frame = u32 payload length (1 .. kMaxFrameBytes) | payload | u64 XXH3-64 of the payload
//           seeded with the frame's index (a frame moved, dropped or repeated fails its check)
//   end   = u32 0 | u64 XXH3-64 of nothing seeded with the end frame's index
//
// FrameWriter buffers values and writes a frame whenever kMaxFrameBytes are pending, so a table
// of any size is written with one frame of memory (to a file descriptor, or appended to a
// string). FrameReader reads the frames back from a
// file descriptor or from bytes in memory, checks each, and hands the values out; a value read
// past the end, a bad checksum or a short read makes it fail (ok() false, error() says why) and
// every later read return zeros, so a parser reads on and checks ok() at its end.
// Integers are little-endian; doubles by their IEEE-754 bits; strings as u32 length + bytes.
//
// Thread safety: one thread per object.

#ifndef ZSIM_ENGINE_STATE_FRAME_STREAM_H_
#define ZSIM_ENGINE_STATE_FRAME_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "engine/base/byte_view.h"
#include "zsim/status.h"

namespace zsim::state {

inline constexpr size_t kMaxFrameBytes = size_t{1} << 20;

class FrameWriter {
 public:
  explicit FrameWriter(int fd) : fd_(fd) {}
  // Appends the frames to `*out` instead (a state sent to another process, engine/mpi).
  explicit FrameWriter(std::string* out) : out_(out) {}
  void U8(uint8_t v) { Raw(&v, 1); }
  void U16(uint16_t v) { Raw(&v, 2); }
  void U32(uint32_t v) { Raw(&v, 4); }
  void U64(uint64_t v) { Raw(&v, 8); }
  void I32(int32_t v) { Raw(&v, 4); }
  void F64(double v) { Raw(&v, 8); }
  void Str(const std::string& s);
  // Ends the current frame (when anything is pending): what follows starts a frame of its own
  // (the run section of a state file, state_file.h).
  void EndFrame() { Flush(); }
  // Writes what is pending and the end frame. The first write error, if any.
  Status Finish();
  // Bytes written so far (frames and their framing).
  uint64_t bytes_written() const { return written_; }

 private:
  void Raw(const void* p, size_t n);
  void Flush();
  void Write(const void* p, size_t n);
  int fd_ = -1;
  std::string* out_ = nullptr;
  std::vector<uint8_t> buffer_;
  uint64_t index_ = 0;
  uint64_t written_ = 0;
  Status status_;
};

class FrameReader {
 public:
  // Reads from `fd` (positioned at the first frame) or from `bytes` (which must outlive the
  // reader). `verify`: check checksums (false only to let a fuzzer reach the parser).
  explicit FrameReader(int fd, bool verify = true) : fd_(fd), verify_(verify) {}
  FrameReader(ByteView bytes, bool verify) : mem_(bytes), verify_(verify) {}

  uint8_t U8() { return Value<uint8_t>(); }
  uint16_t U16() { return Value<uint16_t>(); }
  uint32_t U32() { return Value<uint32_t>(); }
  uint64_t U64() { return Value<uint64_t>(); }
  int32_t I32() { return Value<int32_t>(); }
  double F64() { return Value<double>(); }
  // A string of at most `max_bytes` (longer: failure).
  std::string Str(size_t max_bytes = 1 << 16);
  // Ok after the last value when the end frame follows and nothing after it.
  Status End();

  // Bytes left to read (in the current frame and the source): an upper bound of what is left of
  // the stream, for sizing what the values announce.
  uint64_t remaining_hint() const;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  // Marks the stream bad (a value out of range found by the parser); the first reason stays.
  void Fail(const std::string& why);

 private:
  template <typename T>
  T Value() {
    T v{};
    // Inside the current frame (nearly always): no call, no loop. A table of 10M entries reads
    // about 60M values.
    if (frame_.size() - pos_ >= sizeof v) {
      std::memcpy(&v, frame_.data() + pos_, sizeof v);
      pos_ += sizeof v;
      return v;
    }
    Raw(&v, sizeof v);
    return v;
  }
  void Raw(void* p, size_t n);
  bool NextFrame();  // false at the end frame or on failure
  bool ReadSource(void* p, size_t n);
  int fd_ = -1;
  ByteView mem_;
  size_t mem_pos_ = 0;
  bool verify_;
  std::vector<uint8_t> frame_;
  size_t pos_ = 0;
  uint64_t index_ = 0;
  bool at_end_ = false;
  std::string error_;
};

}  // namespace zsim::state

#endif  // ZSIM_ENGINE_STATE_FRAME_STREAM_H_
