// engine/base/temp_files.h
//
// The temporary files an abrupt exit must not leave behind. An output written by temporary file
// and rename (cli/output_file.h: --html, created before the scan starts; state/state_file.h:
// --save) registers its temporary path while the file exists; a signal handler that ends the
// process at once (a second Ctrl-C, SIGTERM under mpirun: cli/main.cc) removes them first with
// RemoveTempFiles. Without it a second Ctrl-C left `.NAME.zsim-XXXXXX` beside the --html target
// and a half-written `.STATE.tmp.PID` beside the --save one.
//
// Thread safety: TempFileRegistration may be made and destroyed on any thread; RemoveTempFiles
// is async-signal-safe (unlink(2) of paths copied into static storage beforehand).

#ifndef ZSIM_ENGINE_BASE_TEMP_FILES_H_
#define ZSIM_ENGINE_BASE_TEMP_FILES_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace zsim {

// At most this many temporary files are registered at once (a scan has two: --html, --save);
// a path of this many bytes or more is not registered. Either is left behind by an abrupt exit.
inline constexpr size_t kMaxTempFiles = 8;
inline constexpr size_t kMaxTempPathBytes = 4096;

// Registers `path` for RemoveTempFiles until destroyed (or released). Made once the file
// exists, destroyed once it is renamed or removed.
class TempFileRegistration {
 public:
  TempFileRegistration() = default;
  explicit TempFileRegistration(const std::string& path);
  ~TempFileRegistration() { Release(); }
  TempFileRegistration(TempFileRegistration&& other) noexcept : slot_(other.slot_) {
    other.slot_ = -1;
  }
  TempFileRegistration& operator=(TempFileRegistration&& other) noexcept;
  TempFileRegistration(const TempFileRegistration&) = delete;
  TempFileRegistration& operator=(const TempFileRegistration&) = delete;

  // Unregisters now (the file was renamed or removed).
  void Release();
  bool registered() const { return slot_ >= 0; }

 private:
  int slot_ = -1;
};

// Removes every registered temporary file. Async-signal-safe: for a handler about to _exit.
void RemoveTempFiles();

// The path of a temporary file beside `path`, in its directory: "." + its name + `suffix`, the
// name cut so that the whole fits NAME_MAX. A target named near the limit is a legal name; its
// temporary file must not be refused as "File name too long" (a --save to such a name failed
// after the whole scan). `suffix` ends the name as given (mkostemp's XXXXXX stays last).
std::string TempPathBeside(const std::string& path, std::string_view suffix);

}  // namespace zsim

#endif  // ZSIM_ENGINE_BASE_TEMP_FILES_H_
