#include "engine/mpi/entry_wire.h"

#include <cstring>
#include <vector>

namespace zsim::mpi {
namespace {

constexpr uint16_t kZeroFlag = 0x8000;

}  // namespace

void AppendEntry(const ddt::EntryView& e, std::string* out, bool origins) {
  PutWire<uint64_t>(out, e.key.lo);
  PutWire<uint64_t>(out, e.key.hi);
  PutWire<uint32_t>(out, e.refcount);
  PutWire<uint16_t>(out, static_cast<uint16_t>((e.lsize / 512 - 1) | (e.is_zero ? kZeroFlag : 0)));
  for (ddt::PsizeCode c : e.codes) PutWire<uint16_t>(out, c);
  if (origins) PutWire<uint64_t>(out, e.origin);
}

Status ForEachWireEntry(std::string_view bytes, size_t settings,
                        const std::function<void(const ddt::EntryView&)>& fn, bool origins) {
  const size_t each = EntryWireBytes(settings, origins);
  if (bytes.size() % each != 0) {
    return Status::Internal("a batch of table entries is cut short (" +
                            std::to_string(bytes.size()) + " bytes)");
  }
  std::vector<ddt::PsizeCode> codes(settings);
  for (size_t off = 0; off < bytes.size(); off += each) {
    const char* p = bytes.data() + off;
    const uint16_t lsize_field = GetWire<uint16_t>(p + 20);
    for (size_t c = 0; c < settings; ++c) codes[c] = GetWire<uint16_t>(p + 22 + 2 * c);
    fn(ddt::EntryView{ddt::Fingerprint{GetWire<uint64_t>(p), GetWire<uint64_t>(p + 8)},
                      GetWire<uint32_t>(p + 16), (uint64_t{lsize_field & 0x7FFFu} + 1) * 512,
                      (lsize_field & kZeroFlag) != 0, codes,
                      origins ? GetWire<uint64_t>(p + 22 + 2 * settings) : 0});
  }
  return Status::Ok();
}

}  // namespace zsim::mpi
