#include "engine/base/temp_files.h"

#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstring>

namespace zsim {
namespace {

// A slot is free (0), being written or released (1), or holds a path (2): RemoveTempFiles
// reads only slots that hold one.
constexpr int kFree = 0, kBusy = 1, kHeld = 2;
std::atomic<int> g_state[kMaxTempFiles];
char g_paths[kMaxTempFiles][kMaxTempPathBytes];

}  // namespace

TempFileRegistration::TempFileRegistration(const std::string& path) {
  if (path.size() >= kMaxTempPathBytes) return;
  for (size_t i = 0; i < kMaxTempFiles; ++i) {
    int expected = kFree;
    if (!g_state[i].compare_exchange_strong(expected, kBusy)) continue;
    std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
    g_state[i].store(kHeld, std::memory_order_release);
    slot_ = static_cast<int>(i);
    return;
  }
}

TempFileRegistration& TempFileRegistration::operator=(TempFileRegistration&& other) noexcept {
  if (this != &other) {
    Release();
    slot_ = other.slot_;
    other.slot_ = -1;
  }
  return *this;
}

void TempFileRegistration::Release() {
  if (slot_ < 0) return;
  g_state[slot_].store(kBusy, std::memory_order_release);
  g_paths[slot_][0] = '\0';
  g_state[slot_].store(kFree, std::memory_order_release);
  slot_ = -1;
}

void RemoveTempFiles() {
  for (size_t i = 0; i < kMaxTempFiles; ++i) {
    if (g_state[i].load(std::memory_order_acquire) == kHeld) ::unlink(g_paths[i]);
  }
}

std::string TempPathBeside(const std::string& path, std::string_view suffix) {
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t room = NAME_MAX > 1 + suffix.size() ? NAME_MAX - 1 - suffix.size() : 0;
  if (base.size() > room) {
    base.resize(room);
    // Not in the middle of a UTF-8 character: a name valid as UTF-8 stays so (a dataset with
    // utf8only=on refuses the rest). Back to the lead byte of the last character, and that
    // character off if it no longer fits.
    size_t lead = base.size();
    while (lead > 0 && (static_cast<unsigned char>(base[lead - 1]) & 0xC0) == 0x80) --lead;
    if (lead > 0) {
      const unsigned char b = static_cast<unsigned char>(base[lead - 1]);
      const size_t length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
      if (lead - 1 + length > base.size()) base.resize(lead - 1);
    }
  }
  return dir + "." + base + std::string(suffix);
}

}  // namespace zsim
