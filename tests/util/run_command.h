// tests/util/run_command.h
//
// Runs a program (no shell), feeding no stdin, and captures its stdout, stderr and exit code.
// For CLI tests of the built zsim binary.

#ifndef ZSIM_TESTS_UTIL_RUN_COMMAND_H_
#define ZSIM_TESTS_UTIL_RUN_COMMAND_H_

#include <string>
#include <vector>

namespace zsim::testing {

struct CommandResult {
  int exit_code = -1;  // 128 + signal when killed by a signal
  std::string out;
  std::string err;
};

// With `stdout_path`, the program's stdout is that file (opened for writing, e.g. /dev/full)
// instead of a pipe, and `out` stays empty.
CommandResult RunCommand(const std::vector<std::string>& argv, const std::string& stdout_path = "");

// RunCommand({ZSIM_BINARY, args...}).
CommandResult RunZsim(const std::vector<std::string>& args);

// RunZsim, but as nobody (setpriv) where the tests run as root, who reads anything: there a file
// of mode 000 is unreadable only to another user.
CommandResult RunZsimUnprivileged(const std::vector<std::string>& args);

}  // namespace zsim::testing

#endif  // ZSIM_TESTS_UTIL_RUN_COMMAND_H_
