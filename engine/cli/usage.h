// engine/cli/usage.h
//
// The command line in zsim's words where CLI11 would use its own (flags.h parses with CLI11):
// --help as the manual page (docs/zsim.1) spells it, and the refusals of an option another
// command takes or a single-valued option given twice, each saying what the user typed.
//
// Thread safety: stateless; one thread parses.

#ifndef ZSIM_ENGINE_CLI_USAGE_H_
#define ZSIM_ENGINE_CLI_USAGE_H_

#include <CLI/CLI.hpp>
#include <span>
#include <string>
#include <vector>

#include "zsim/status.h"

namespace zsim::cli {

// --help as the manual page spells it: its synopsis for the usage lines, and each positional by
// its name alone (CLI11 writes "PATH PATH... ... REQUIRED", "OLD NEW(2x)"). Set on the top app;
// its subcommands inherit it.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override;
  std::string make_option_opts(const CLI::Option* opt) const override;
};

// `opt` with its value named as the help and the manual page name it ("SIZE", "LAYOUT"): in the
// help, and in CLI11's own messages. Returns `opt`.
CLI::Option* Value(CLI::Option* opt, const std::string& name);

// An option of one command that another does not take, with why, in the user's terms.
struct NotTaken {
  const char* name;  // as CLI11 names it: "--recordsize", "-q,--quiet"
  bool takes_value;
  const char* why;
};

// What zsim report cannot take of zsim scan's options, and zsim diff of zsim report's (nor of
// zsim scan's).
std::span<const NotTaken> NotInReport();
std::span<const NotTaken> NotInDiff();

// Adds the options of `table` to `app`, hidden from its help, their values (unused) in *sink,
// which must outlive the parse: given, they are found by FirstGiven rather than refused by
// CLI11 ("The following argument was not expected").
void CatchNotTaken(CLI::App* app, std::span<const NotTaken> table, std::vector<std::string>* sink);

// After the parse: the first option of `table` that was given, or null.
const NotTaken* FirstGiven(const CLI::App* app, std::span<const NotTaken> table);

// kInvalidArgument: "zsim diff takes no --vdev option: <why>", and the hint to the command's
// help.
Status RefuseNotTaken(const std::string& command, const NotTaken& t, const std::string& why);

// After the parse: kInvalidArgument for a single-valued option given more than once ("--copies
// was given 2 times (2, then 3): give it once"), where one value would win silently; else Ok.
// REQUIRES: such options were given MultiOptionPolicy::TakeLast before the parse, which keeps
// every value in results() (CLI11's own policy says "At Most 1 required but received 2").
Status CheckGivenOnce(const CLI::App* app);

}  // namespace zsim::cli

#endif  // ZSIM_ENGINE_CLI_USAGE_H_
