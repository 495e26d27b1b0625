// engine/cli/messages.h
//
// Everything zsim writes to stderr, and the exit code. Progress is one line redrawn in place
// when stderr is a terminal.

#ifndef ZSIM_ENGINE_CLI_MESSAGES_H_
#define ZSIM_ENGINE_CLI_MESSAGES_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/pipeline/scan.h"
#include "zsim/scan_result.h"

namespace zsim::cli {

// Exit codes (DESIGN.md): values are part of the command's contract.
inline constexpr int kExitOk = 0;
inline constexpr int kExitUnreadable = 1;
// The report could not be written (stdout full or failing, the --html file): also 1, "done, but".
inline constexpr int kExitOutputFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInterrupted = 130;
// Stopped at once, without a report or with one cut short: a second interrupt a while after the
// first (one within kRepeatedSignalSeconds is the same interrupt), or mpirun's abort of a
// distributed scan. Not 130, which promises the partial report.
inline constexpr int kExitAborted = 3;
// A SIGINT or SIGTERM this soon after the first is taken as the same one: `timeout` sends its
// signal to the command and then to its whole process group, and a terminal's Ctrl-C reaches
// every process of the foreground group, so one interrupt can arrive twice.
inline constexpr double kRepeatedSignalSeconds = 1.0;

// Between a usage error's message and its hint to --help ("Run 'zsim scan --help' ..."): a NUL,
// which no file name or argument can hold, so no text a user gave can pass for the hint.
inline constexpr char kHintSeparator = '\0';

// "zsim: <message>" on stderr, on one line: control characters (newlines too), bytes that are
// not UTF-8 and backslashes written as \n, \xNN, \\ (docs/names.md), so that a file name
// quoted in it can neither forge a line nor drive the terminal. What follows kHintSeparator (a
// usage error's hint) goes on a line of its own.
void PrintError(const std::string& message);

// A name or text as PrintError writes it, for a message printed another way.
std::string Shown(const std::string& text);

// The progress line: "scanned 12.3 GiB of 40.1 GiB, 5123 files, 812 MiB/s, ETA 35 s".
std::string FormatProgress(const pipeline::Progress& p);
// On a terminal the line is redrawn in place (\r, erase to the end of the line) and cleared
// before other messages; in a log (--progress, stderr not a terminal) it is a plain line of its
// own, "zsim: progress: ...", with no control characters, every kProgressLogSeconds (the caller
// paces it), and there is nothing to clear.
inline constexpr double kProgressLogSeconds = 10;
void DrawProgress(const pipeline::Progress& p, bool terminal);
void ClearProgress(bool terminal);
// The forecast of a costly scan (pipeline::IsCostly) as one warning line; empty for others.
std::string FormatCostWarning(const pipeline::CostForecast& f);
// The top-up's cost, once known after the reading, as one line where it is expected to take
// more than pipeline::kCostlyCodecSeconds; empty for others.
std::string FormatTopUpWarning(const pipeline::TopUpForecast& f);

// Under mpirun, where the launcher bound the ranks of `bound_hosts` of the job's `hosts` to fewer
// cores than the job may use there (mpi::SurveyBinding; the first such host: `ranks` ranks on
// `cores` of its `usable` cores), and the ranks' threads (`threads`: --threads, 0 for one per
// core a rank may use) are then held to fewer cores than they would use: one warning line saying
// how to lift it. Empty where none is, or where the threads asked for fit the cores bound.
std::string FormatBindingWarning(int bound_hosts, int hosts, int ranks, int cores, int usable,
                                 int threads);

// After `zsim scan --since`: how many files were reused, read and taken out, or that the base
// could not serve and everything was read.
std::string FormatSinceSummary(const pipeline::SinceSummary& s);

// The --exclude globs as typed (each with how many walk globs it became, in order) that excluded
// nothing while `matches` (per walk glob, pipeline::ScanControl::exclude_matches) shows that
// another did: a glob most likely spelled for another tool or with a typo. Empty when the counts
// do not line up with the globs.
std::vector<std::string> UnmatchedExcludes(const std::vector<std::pair<std::string, size_t>>& typed,
                                           const std::vector<uint64_t>& matches);

// After the report: warnings about unreadable paths / partial results (unless quiet), and the
// exit code the run ends with. `from_states`: the result is `zsim report`'s of saved states
// (a partial one was interrupted when it was scanned, not now).
int FinishMessages(const ScanResult& result, bool quiet, bool from_states = false);

}  // namespace zsim::cli

#endif  // ZSIM_ENGINE_CLI_MESSAGES_H_
