// engine/base/byte_wire.h
//
// ByteWriter and ByteReader: values as little-endian bytes and back, for what crosses a process
// boundary (a serialized scan state, walk items sent between ranks). Strings and byte arrays are
// length-prefixed. The reader never reads past its bytes: after the first short read every value
// reads as zero and ok() turns false, so a caller checks once at the end.
//
// Thread safety: one thread per object.

#ifndef ZSIM_ENGINE_BASE_BYTE_WIRE_H_
#define ZSIM_ENGINE_BASE_BYTE_WIRE_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/base/byte_view.h"

namespace zsim {

class ByteWriter {
 public:
  std::string out;

  template <typename T>
  void Put(T v) {
    static_assert(std::is_arithmetic_v<T> && std::endian::native == std::endian::little);
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.append(b, sizeof(T));
  }
  void PutBool(bool v) { Put<uint8_t>(v ? 1 : 0); }
  void PutString(const std::string& s) {
    Put<uint64_t>(s.size());
    out.append(s);
  }
  void PutBytes(const std::vector<uint8_t>& b) {
    Put<uint64_t>(b.size());
    out.append(reinterpret_cast<const char*>(b.data()), b.size());
  }
};

// Reads what ByteWriter wrote; after the first short read every value reads as zero and ok() is
// false.
class ByteReader {
 public:
  explicit ByteReader(ByteView bytes) : bytes_(bytes) {}
  bool ok() const { return ok_; }
  bool done() const { return pos_ == bytes_.size(); }

  template <typename T>
  T Get() {
    T v{};
    if (!Need(sizeof(T))) return v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  bool GetBool() { return Get<uint8_t>() != 0; }
  // A count of items of at least `min_item_bytes` each: refused when the rest cannot hold them.
  uint64_t GetCount(uint64_t min_item_bytes) {
    const uint64_t n = Get<uint64_t>();
    if (ok_ && min_item_bytes > 0 && n > (bytes_.size() - pos_) / min_item_bytes) ok_ = false;
    return ok_ ? n : 0;
  }
  std::string GetString() {
    const uint64_t n = GetCount(1);
    if (!Need(n)) return {};
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  ByteView GetBytes() {
    const uint64_t n = GetCount(1);
    if (!Need(n)) return {};
    ByteView b = bytes_.subspan(pos_, n);
    pos_ += n;
    return b;
  }
  void Fail() { ok_ = false; }

 private:
  bool Need(uint64_t n) {
    if (ok_ && n > bytes_.size() - pos_) ok_ = false;
    return ok_;
  }
  ByteView bytes_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace zsim

#endif  // ZSIM_ENGINE_BASE_BYTE_WIRE_H_
