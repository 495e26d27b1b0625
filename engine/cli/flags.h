// engine/cli/flags.h
//
// The cli module, overview. The zsim command: flags.h turns argv into ScanOptions (refusing bad
// arguments before any I/O, with a message that says what would be right), main.cc runs the scan
// (or `zsim report` from saved states) and prints the report, messages.h owns everything written to
// stderr and the exit code. The only code in zsim that prints or exits.

#ifndef ZSIM_ENGINE_CLI_FLAGS_H_
#define ZSIM_ENGINE_CLI_FLAGS_H_

#include <optional>
#include <string>
#include <vector>

#include "zsim/scan_options.h"

namespace zsim::cli {

// `zsim report`: the report options given (unset: the state's own).
struct ReportFlags {
  std::vector<std::string> state_paths;  // merged in this order
  std::optional<VdevLayout> vdev;
  std::optional<int> ashift, copies;
  std::optional<Profile> profile;
  std::optional<DdtFormat> ddt_format;
  std::optional<uint64_t> ram_bytes;
};

struct Command {
  enum class Kind { kScan, kReport, kDiff, kHelp, kVersion };
  Kind kind = Kind::kScan;
  std::string help_text;  // kHelp: what to print on stdout
  ScanOptions options;
  // scan: --recordsize (or -o recordsize=) was given, not taken by default.
  bool recordsize_given = false;
  // scan: every input is a block device, and options.volblocksize is the profile's default for
  // want of --volblocksize (cli/named_inputs.h ResolveBlockInputs).
  bool devices_as_zvols = false;
  bool json = false;
  bool wide = false;  // --wide: the text report's every column, whatever the width
  std::optional<std::string> html_path;  // --html FILE: also write the HTML report there
  bool quiet = false;
  // scan --save FILE: also keep the scan's state there; report --save FILE: the merged state.
  std::optional<std::string> save_path;
  std::optional<std::string> since_path;  // scan --since FILE: read only what changed since
  ReportFlags report;                     // kReport; kDiff: state_paths = {old, new}
  std::optional<bool> progress;           // unset: when stderr is a terminal
  // scan: each --exclude as typed, with how many globs of options.excludes it became (they
  // follow in the same order): which of them matched nothing.
  std::vector<std::pair<std::string, size_t>> typed_excludes;
};

// Parses the command line. On bad usage returns kInvalidArgument whose message is the whole text
// to show the user (what was wrong and what would be right). Touches no file.
Result<Command> ParseCommandLine(int argc, const char* const* argv);

}  // namespace zsim::cli

#endif  // ZSIM_ENGINE_CLI_FLAGS_H_
