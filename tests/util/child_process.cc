#include "tests/util/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

namespace zsim::testing {

namespace {

// Spawn's; with `filler`, the stderr pipe filled first, its byte count there.
Child SpawnChild(const std::vector<std::string>& args, size_t* filler) {
  Child c;
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) return c;
  if (filler != nullptr) {
    // Whole pages until the pipe takes no more: a message of any size then waits for room.
    // O_NONBLOCK only while filling it: the child shares the flag, and its write must wait.
    *filler = 0;
    const std::string page(4096, '.');
    if (fcntl(err[1], F_SETFL, O_NONBLOCK) != 0) return c;
    for (ssize_t n; (n = write(err[1], page.data(), page.size())) > 0;) {
      *filler += static_cast<size_t>(n);
    }
    if (fcntl(err[1], F_SETFL, 0) != 0) return c;
  }
  c.pid = fork();
  if (c.pid == 0) {
    const int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    std::vector<char*> argv = {const_cast<char*>(ZSIM_BINARY)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  c.out = out[0];
  c.err = err[0];
  return c;
}

}  // namespace

Child Spawn(const std::vector<std::string>& args) { return SpawnChild(args, nullptr); }

Child SpawnWithStderrFull(const std::vector<std::string>& args, size_t* filler) {
  return SpawnChild(args, filler);
}

bool ReadUntil(int fd, const std::string& needle, std::string* got) {
  char buf[4096];
  while (got->find(needle) == std::string::npos) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return false;
    got->append(buf, static_cast<size_t>(n));
  }
  return true;
}

void ReadAll(int fd, std::string* got) {
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return;
    got->append(buf, static_cast<size_t>(n));
  }
}

int WaitExit(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int Collect(const Child& c, std::chrono::seconds limit, std::string* out, std::string* err) {
  ReadAll(c.out, out);
  ReadAll(c.err, err);
  close(c.out);
  close(c.err);
  return WaitExit(c.pid, limit);
}

}  // namespace zsim::testing
