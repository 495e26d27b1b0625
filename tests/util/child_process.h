// tests/util/child_process.h
//
// The built zsim started as a child whose stdout and stderr the test reads while it runs: for
// tests that signal a scan under way (Ctrl-C, SIGTERM) or leave its output unread.

#ifndef ZSIM_TESTS_UTIL_CHILD_PROCESS_H_
#define ZSIM_TESTS_UTIL_CHILD_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace zsim::testing {

// A zsim started with stdout and stderr on pipes the test reads (or leaves unread) itself.
struct Child {
  pid_t pid = -1;
  int out = -1;
  int err = -1;
};

// ZSIM_BINARY with `args`, stdin /dev/null. pid -1 when it could not be started.
Child Spawn(const std::vector<std::string>& args);

// Spawn's, with the child's stderr a pipe already full of `*filler` bytes: its first message
// waits until the test has read them, which holds the child at that point of its run for as
// long as the test needs (to change what the child will meet next).
Child SpawnWithStderrFull(const std::vector<std::string>& args, size_t* filler);

// Reads fd until `needle` shows up (true) or the fd closes (false), appending what it read.
bool ReadUntil(int fd, const std::string& needle, std::string* got);

// Reads fd to its end, appending what it read.
void ReadAll(int fd, std::string* got);

// The exit code (128 + the signal if killed by one); -1 if still alive after `limit` (then
// killed): a guard against a hang, not a speed assertion.
int WaitExit(pid_t pid, std::chrono::seconds limit);

// Reads the child's stdout and the rest of its stderr (appended to `err`, what was read of it so
// far) to their ends, closes them and waits for it (WaitExit). Returns the exit code.
int Collect(const Child& c, std::chrono::seconds limit, std::string* out, std::string* err);

}  // namespace zsim::testing

#endif  // ZSIM_TESTS_UTIL_CHILD_PROCESS_H_
