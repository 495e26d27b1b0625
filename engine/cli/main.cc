// The zsim command. Parses arguments, runs the scan, prints the report on stdout and messages on
// stderr, and exits with the documented code.

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "engine/cli/flags.h"
#include "engine/cli/messages.h"
#include "engine/io/file_system.h"
#include "engine/pipeline/scan.h"
#include "engine/report/html_report.h"
#include "engine/report/json_report.h"
#include "engine/report/text_report.h"
#ifdef ZSIM_MPI
#include "engine/mpi/distributed_scan.h"
#endif

namespace {

std::atomic<bool> g_cancel{false};
std::atomic<int> g_signals{0};  // lock-free on Linux: safe in a signal handler

void OnSignal(int) {
  // First Ctrl-C: stop feeding, drain, print what was scanned. Second: leave at once.
  if (g_signals++ > 0) _exit(zsim::cli::kExitInterrupted);
  g_cancel.store(true);
}

// Writes the whole report; false if stdout is closed (EPIPE), which ends the program quietly.
bool WriteStdout(const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

// Writes the HTML report to `path`; false (with errno's text in *error) when it cannot.
bool WriteHtml(const std::string& path, const std::string& html, std::string* error) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (file) file.write(html.data(), static_cast<std::streamsize>(html.size()));
  if (file) file.close();
  if (!file) {
    *error = "cannot write the HTML report to " + path + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace zsim;
  // Started with stdin, stdout or stderr closed (`zsim ... >&-`): hold those numbers with
  // /dev/null, so no file opened later (a scanned file, the HTML report) takes fd 1 or 2 and
  // receives the report or the messages.
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      if (::open("/dev/null", O_RDWR) != fd) _exit(cli::kExitUsage);
    }
  }
  ::signal(SIGPIPE, SIG_IGN);
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);

#ifdef ZSIM_MPI
  // Under mpirun: one scan across every rank, reported by rank 0 alone (engine/mpi/session.h).
  mpi::Session session(&argc, &argv);
  const bool quiet_rank = session.active() && session.rank() != 0;
#else
  const bool quiet_rank = false;
#endif
  Result<cli::Command> cmd = cli::ParseCommandLine(argc, argv);
  if (!cmd.ok()) {
    if (!quiet_rank) cli::PrintError(cmd.status().message());
    return cli::kExitUsage;
  }
  if (quiet_rank && cmd->kind != cli::Command::Kind::kScan) return cli::kExitOk;
  if (cmd->kind != cli::Command::Kind::kScan) {
    WriteStdout(cmd->help_text);
    return cli::kExitOk;
  }

  const bool progress = cmd->progress.value_or(::isatty(STDERR_FILENO) == 1);
  pipeline::ScanControl control;
  control.cancel = &g_cancel;
  if (progress) control.progress = [](const pipeline::Progress& p) { cli::DrawProgress(p); };

#ifdef ZSIM_MPI
  Result<ScanResult> result = Status::Internal("not scanned");
  if (session.active()) {
    Result<std::optional<ScanResult>> part =
        mpi::RunDistributedScan(cmd->options, io::PosixFileSystem().get(), control, session);
    if (!part.ok()) {
      result = part.status();
    } else if (!part->has_value()) {
      return cli::kExitOk;  // a rank other than 0: its share is in rank 0's report
    } else {
      result = std::move(**part);
    }
  } else {
    result = pipeline::RunScan(cmd->options, io::PosixFileSystem().get(), control);
  }
#else
  Result<ScanResult> result = pipeline::RunScan(cmd->options, io::PosixFileSystem().get(), control);
#endif
  if (progress) cli::ClearProgress();
  if (!result.ok()) {
    if (!quiet_rank) cli::PrintError(result.status().message());
    return cli::kExitUsage;
  }
  const report::Advice advice = report::ComputeAdvice(*result);
  const std::string report =
      cmd->json ? report::ToJson(*result, advice) : report::ToText(*result, advice);
  const bool stdout_open = WriteStdout(report);
  if (cmd->html_path) {
    std::string error;
    if (!WriteHtml(*cmd->html_path, report::ToHtml(*result, advice), &error)) {
      cli::PrintError(error);
      cli::FinishMessages(*result, /*quiet=*/true);
      return cli::kExitUnreadable;
    }
  }
  if (!stdout_open) return cli::FinishMessages(*result, /*quiet=*/true);
  return cli::FinishMessages(*result, cmd->quiet);
}
