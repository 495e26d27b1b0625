// Fuzz target: the whole command line. The input is split at NUL bytes into arguments (at most
// 32) after "zsim". ParseCommandLine must return without crashing or touching a file; a scan
// it accepts must have options ValidateScanOptions accepts too, a report at least one state
// file, a diff exactly two, and help or version a text to print.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/cli/flags.h"
#include "zsim/scan_options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args = {"zsim"};
  std::string current;
  for (size_t i = 0; i < size && args.size() < 33; ++i) {
    if (data[i] == 0) {
      args.push_back(current);
      current.clear();
    } else {
      current += static_cast<char>(data[i]);
    }
  }
  if (args.size() < 33) args.push_back(current);
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);

  zsim::Result<zsim::cli::Command> cmd =
      zsim::cli::ParseCommandLine(static_cast<int>(args.size()), argv.data());
  if (!cmd.ok()) {
    if (cmd.status().message().empty()) __builtin_trap();  // every refusal says why
    return 0;
  }
  using Kind = zsim::cli::Command::Kind;
  switch (cmd->kind) {
    case Kind::kScan:
      if (cmd->options.paths.empty()) __builtin_trap();
      if (!zsim::ValidateScanOptions(cmd->options).ok()) __builtin_trap();
      break;
    case Kind::kReport:  // one state file or more, merged
      if (cmd->report.state_paths.empty()) __builtin_trap();
      break;
    case Kind::kDiff:  // exactly the old and the new state
      if (cmd->report.state_paths.size() != 2) __builtin_trap();
      break;
    case Kind::kHelp:
    case Kind::kVersion:
      if (cmd->help_text.empty()) __builtin_trap();
      break;
  }
  return 0;
}
