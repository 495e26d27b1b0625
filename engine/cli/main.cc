// The zsim command. Parses arguments, runs the scan, prints the report on stdout and messages on
// stderr, and exits with the documented code.

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/base/size_suffix.h"
#include "engine/base/temp_files.h"
#include "engine/cli/flags.h"
#include "engine/cli/messages.h"
#include "engine/cli/named_inputs.h"
#include "engine/cli/output_file.h"
#include "engine/ddt/fingerprint.h"
#include "engine/finish/finish.h"
#include "engine/io/file_system.h"
#include "engine/io/guarded_file_system.h"
#include "engine/pipeline/scan.h"
#include "engine/report/decision.h"
#include "engine/report/diff_report.h"
#include "engine/report/html_report.h"
#include "engine/report/json_report.h"
#include "engine/report/text_report.h"
#include "engine/state/merge.h"
#include "engine/state/state_file.h"
#include "engine/walk/block_devices.h"
#ifdef ZSIM_MPI
#include "engine/mpi/binding.h"
#include "engine/mpi/distributed_scan.h"
#endif

namespace {

std::atomic<bool> g_cancel{false};
// Under mpirun, SIGINT and SIGTERM end the rank at once, rank 0 saying why first (see main).
std::atomic<bool> g_abort_on_signal{false};
std::string g_abort_message;  // written before g_abort_on_signal is set; rank 0's only
// Set by a rank refusing the job (bad usage): a SIGTERM mpirun then sends it ends it without the
// "interrupted" message, which would blame a Ctrl-C (another rank's abort came first).
std::atomic<bool> g_refused{false};

// Monotonic nanoseconds (clock_gettime is async-signal-safe).
int64_t MonotonicNanos() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

std::atomic<int64_t> g_first_signal_ns{0};  // when the first interrupt came; 0: none yet
bool g_stderr_terminal = false;             // set once in main, before any signal handler

// Leaves at once, saying so on stderr, with no output file behind (the --html and --save
// targets are as they were: base/temp_files.h).
[[noreturn]] void AbortNow(const std::string_view message) {
  if (!message.empty()) (void)!::write(STDERR_FILENO, message.data(), message.size());
  zsim::RemoveTempFiles();
  _exit(zsim::cli::kExitAborted);
}

void OnSignal(int) {
  if (g_abort_on_signal.load()) AbortNow(g_refused.load() ? std::string_view() : g_abort_message);
  // First Ctrl-C: stop feeding, drain, print what was scanned. The same signal again within
  // kRepeatedSignalSeconds is that interrupt delivered twice (`timeout` signals the command,
  // then its process group); one later means "stop now".
  const int64_t now = MonotonicNanos();
  int64_t first = 0;
  if (g_first_signal_ns.compare_exchange_strong(first, now)) {
    g_cancel.store(true);
    return;
  }
  if (double(now - first) * 1e-9 < zsim::cli::kRepeatedSignalSeconds) return;
  // On a terminal the progress line may be showing: the message goes on a line of its own.
  if (g_stderr_terminal) (void)!::write(STDERR_FILENO, "\n", 1);
  AbortNow(
      "zsim: interrupted again: stopped at once; no report, or only part of one, was written "
      "(exit code 3)\n");
}

#ifdef ZSIM_MPI
// Under mpirun: stop feeding, drain, and report what every rank scanned (marked partial).
void OnStopSignal(int) { g_cancel.store(true); }
#endif

// Writes the whole report on stdout; 0 when done, else the errno of the failed write (EPIPE: the
// reader went away, which ends the program quietly; anything else, e.g. ENOSPC, is an error).
int WriteStdout(const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += static_cast<size_t>(n);
  }
  return 0;
}

// What a merged state saved with --save keeps of `flags` (the report options given to merge
// parts scanned for different pools): the RAM and DDT format given, but the first part's vdev,
// ashift and copies (a sampled table's estimates carry them). (The refusal said the state "then
// keeps them" of every flag, and a report of the saved state showed the first part's vdev.)
std::string SavedKeeps(const std::string& flags) {
  const bool layout = flags.find("--vdev") != std::string::npos ||
                      flags.find("--ashift") != std::string::npos ||
                      flags.find("--copies") != std::string::npos;
  return layout ? "; a state saved with --save keeps --ram and --ddt-format, but the first "
                  "part's vdev, ashift and copies: give those again when you report it"
                : "; a state saved with --save then keeps them";
}

// A merge reports one pool: where its parts were scanned for different ones (vdev, ashift,
// copies, DDT format, RAM) the report must be told which, or the first part's would decide the
// verdict silently (and the order of the files with it). Ok when they agree or the flags say.
zsim::Status CheckPartsPool(const std::vector<std::string>& paths,
                            const std::vector<zsim::ScanOptions>& parts,
                            const zsim::cli::ReportFlags& rf) {
  using namespace zsim;
  std::string differ, flags;
  const ScanOptions& a = parts[0];
  const auto format = [](const ScanOptions& o) {  // the format in force
    return std::string(report::DdtFormatInForce(o) == DdtFormat::kFast ? "fast" : "legacy");
  };
  // The parts share a profile (the merge refuses others): only another profile given, or the
  // format itself, settles the format.
  const bool format_given = rf.ddt_format || (rf.profile && *rf.profile != a.profile);
  for (size_t i = 1; i < parts.size(); ++i) {
    const ScanOptions& b = parts[i];
    const auto note = [&](bool given, bool same, const std::string& flag, const std::string& av,
                          const std::string& bv) {
      if (given || same || flags.find(flag) != std::string::npos) return;
      differ += (differ.empty() ? "" : "; ") + flag.substr(2) + " " + av + " in " + paths[0] +
                ", " + bv + " in " + paths[i];
      flags += (flags.empty() ? "" : " ") + flag;
    };
    note(rf.vdev.has_value(), a.vdev == b.vdev, "--vdev", VdevName(a.vdev), VdevName(b.vdev));
    note(rf.ashift.has_value(), a.ashift == b.ashift, "--ashift", std::to_string(a.ashift),
         std::to_string(b.ashift));
    note(rf.copies.has_value(), a.copies == b.copies, "--copies", std::to_string(a.copies),
         std::to_string(b.copies));
    note(format_given, format(a) == format(b), "--ddt-format", format(a), format(b));
    note(rf.ram_bytes.has_value(), a.ram_bytes == b.ram_bytes, "--ram", FormatBytes(a.ram_bytes),
         FormatBytes(b.ram_bytes));
  }
  if (differ.empty()) return Status::Ok();
  // RAM is the scanning machine's unless given: hosts differ in it as a rule.
  return Status::InvalidArgument("the states were scanned for different pools or machines (" +
                                 differ + "): give " + flags +
                                 " for the pool the merged report is for" +
                                 (flags.find("--ram") != std::string::npos
                                      ? " (--ram: the RAM of the machine that will hold the pool)"
                                      : "") +
                                 SavedKeeps(flags));
}

// zsim report: the state files merged in order, reported with the options given, and saved
// with --save. A file that cannot be read or merged, or options the state cannot answer: the
// message and nullopt (bad usage). A merged state that could not be saved: the message, and
// *save_failed set; the report is still returned, to be written as asked.
std::optional<zsim::ScanResult> ReportFromStates(const zsim::cli::Command& cmd, bool* save_failed) {
  using namespace zsim;
  const cli::ReportFlags& rf = cmd.report;
  // A state file named twice (or by two names: a hard link, a symlink) is one part, as a path
  // named twice is one input of a scan: merged with itself, every file read as its own
  // duplicate (dedup 1.51x read 3.00x).
  std::vector<std::string> paths;
  std::vector<std::optional<std::pair<dev_t, ino_t>>> seen;  // per path kept
  for (const std::string& path : rf.state_paths) {
    struct stat st;
    std::optional<std::pair<dev_t, ino_t>> id;  // none: LoadState says why it cannot be read
    if (::stat(path.c_str(), &st) == 0) id.emplace(st.st_dev, st.st_ino);
    if (const auto it = std::find(seen.begin(), seen.end(), id); id && it != seen.end()) {
      if (!cmd.quiet) {
        cli::PrintError(path + " is " + paths[size_t(it - seen.begin())] +
                        " again (the same file): read once");
      }
      continue;
    }
    seen.push_back(id);
    paths.push_back(path);
  }
  std::optional<state::ScanState> merged;
  std::vector<ScanOptions> pools;  // each part's, as it was scanned
  for (const std::string& path : paths) {
    Result<state::ScanState> s = state::LoadState(path);
    if (!s.ok()) {
      cli::PrintError(s.status().message());
      return std::nullopt;
    }
    pools.push_back(s->options);
    if (!merged) {
      merged = std::move(*s);
      continue;
    }
    const Status ok = state::CheckMergeable(*merged, *s);
    if (!ok.ok()) {
      cli::PrintError(path + " cannot be merged with " + paths[0] + ": " + ok.message());
      return std::nullopt;
    }
    const state::MergeCounts counts = state::Merge(*merged, *s);
    if (counts.shared != 0 && !cmd.quiet) {
      cli::PrintError("warning: " + std::to_string(counts.shared) + " file(s) of " + path +
                      " are also in an earlier state (overlapping inputs, or hard links of "
                      "scans made in another boot): counted in each, where one scan counts "
                      "them once");
    }
    if (counts.changed != 0 && !cmd.quiet) {
      cli::PrintError("warning: " + std::to_string(counts.changed) + " file(s) of " + path +
                      " with several names are also in an earlier state with another size "
                      "or time stamps (changed between the scans): counted in each");
    }
  }
  if (const Status same = CheckPartsPool(paths, pools, rf); !same.ok()) {
    cli::PrintError(same.message());
    return std::nullopt;
  }
  finish::ReportOptions r = finish::ReportOptionsOf(merged->options);
  if (rf.vdev) r.vdev = *rf.vdev;
  if (rf.ashift) r.ashift = *rf.ashift;
  if (rf.copies) r.copies = *rf.copies;
  if (rf.profile) {
    r.profile = *rf.profile;
    // Another profile's default DDT format, unless given (as a scan with it would resolve).
    if (r.profile != merged->options.profile) r.ddt_format.reset();
  }
  if (rf.ddt_format) r.ddt_format = rf.ddt_format;
  if (rf.ram_bytes) r.ram_bytes = *rf.ram_bytes;
  const Status answerable = finish::CheckReportOptions(*merged, r);
  if (!answerable.ok()) {
    cli::PrintError(answerable.message());
    return std::nullopt;
  }
  if (cmd.save_path) {
    // The RAM and DDT format the report is for are the report's alone (the tables do not
    // depend on them): the saved state keeps them, so that a report of it is this one. The pool's
    // layout stays the first part's (a sampled table's estimates carry it): said when another
    // was given.
    if (rf.ram_bytes) merged->options.ram_bytes = r.ram_bytes;
    if (rf.ddt_format || rf.profile) merged->options.ddt_format = r.ddt_format;
    // One state or several (a single state saved again kept them silently).
    if (!cmd.quiet && (rf.vdev || rf.ashift || rf.copies)) {
      cli::PrintError("note: " + *cmd.save_path + " keeps the vdev, ashift and copies of " +
                      rf.state_paths[0] + " (" + VdevName(merged->options.vdev) + ", ashift " +
                      std::to_string(merged->options.ashift) + ", copies " +
                      std::to_string(merged->options.copies) +
                      "): report it with --vdev, --ashift and --copies again for another pool");
    }
    const Status saved = state::SaveState(*merged, *cmd.save_path);
    if (!saved.ok()) {
      cli::PrintError("the merged state was not saved: " + saved.message() +
                      " (the report is written as asked)");
      *save_failed = true;
    }
  }
  return finish::Finish(*merged, r);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace zsim;
  // Started with stdin, stdout or stderr closed (`zsim ... >&-`): hold those numbers with
  // /dev/null, so no file opened later (a scanned file, the HTML report) takes fd 1 or 2 and
  // receives the report or the messages.
  bool stdout_closed = false;
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      if (::open("/dev/null", O_RDWR) != fd) _exit(cli::kExitUsage);
      stdout_closed = stdout_closed || fd == STDOUT_FILENO;
    }
  }
  ddt::InitFingerprinting();  // here, not on a scan thread (ddt/fingerprint.h)
  ::signal(SIGPIPE, SIG_IGN);
  g_stderr_terminal = ::isatty(STDERR_FILENO) == 1;
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);

#ifdef ZSIM_MPI
  // SIGUSR1, which mpirun passes on to every rank, stops the scan (see below); in place before
  // MPI_Init, which takes a while, so that a SIGUSR1 sent meanwhile does not kill the rank.
  if (mpi::Session::LaunchedByMpirun()) {
    struct sigaction stop {};
    stop.sa_handler = OnStopSignal;
    sigemptyset(&stop.sa_mask);
    ::sigaction(SIGUSR1, &stop, nullptr);
  }
  // Under mpirun: one scan across every rank, reported by rank 0 alone (engine/mpi/session.h).
  mpi::Session session(&argc, &argv);
  const bool quiet_rank = session.active() && session.rank() != 0;
  if (session.active()) {
    // Ctrl-C to mpirun is not passed on: mpirun aborts the job, sending every rank SIGCONT, then
    // SIGTERM, then SIGKILL, a second apart (Open MPI 4), and stops relaying their output. A
    // partial report could only come out cut short: each rank ends at the SIGTERM instead, and
    // rank 0 says so. SIGUSR1, which mpirun passes on to every rank, stops the scan as one
    // process's first Ctrl-C does: the ranks drain and rank 0 prints the partial report.
    if (!quiet_rank) {
      g_abort_message =
          "zsim: interrupted: mpirun stopped every rank (Ctrl-C or SIGTERM); no report is "
          "printed. For a partial report of what was scanned, stop the scan with SIGUSR1 to "
          "mpirun (kill -USR1 PID), which mpirun passes on to every rank\n";
    }
    g_abort_on_signal.store(true);
  }
#else
  const bool quiet_rank = false;
#endif
  Result<cli::Command> cmd = cli::ParseCommandLine(argc, argv);
  if (!cmd.ok()) {
    if (!quiet_rank) cli::PrintError(cmd.status().message());
    return cli::kExitUsage;
  }
  if (quiet_rank && cmd->kind != cli::Command::Kind::kScan) return cli::kExitOk;
  // An output path refused: bad usage. Under mpirun only rank 0 checks its outputs while the
  // others go on to scan, so the whole job is ended.
  auto refuse_output = [&] {
#ifdef ZSIM_MPI
    if (session.active()) {
      g_refused.store(true);
      session.Abort(cli::kExitUsage);
    }
#endif
    return cli::kExitUsage;
  };
  // With stdout closed, what every command prints there (the report: -q quiets stderr only; the
  // help, the version) would go to the /dev/null holding fd 1, and the run end as if it had
  // been delivered (exit code 0). Bad usage, said before any I/O.
  // (Under mpirun the other ranks print nothing.)
  if (stdout_closed && !quiet_rank) {
    cli::PrintError(std::string("standard output is closed: the ") +
                    (cmd->kind == cli::Command::Kind::kHelp      ? "help"
                     : cmd->kind == cli::Command::Kind::kVersion ? "version"
                                                                 : "report") +
                    " printed there would be lost; send it to a file or a pipe (> /dev/null to "
                    "discard it)");
    return refuse_output();
  }
  if (cmd->kind == cli::Command::Kind::kHelp || cmd->kind == cli::Command::Kind::kVersion) {
    // Help asked for and not delivered (a full disk, a failing device) is a failure, as
    // for any report; a reader that went away (EPIPE) saw what it wanted.
    const int err = WriteStdout(cmd->help_text);
    if (err != 0 && err != EPIPE) {
      cli::PrintError(std::string("cannot write to standard output: ") + std::strerror(err));
      return cli::kExitOutputFailed;
    }
    return cli::kExitOk;
  }
  // Two outputs on one file: the second written would replace the first (the state a user
  // asked to keep, overwritten by the HTML report), so the pair is refused before any I/O.
  if (cmd->save_path && cmd->html_path &&
      cli::OutputFile::SameTarget(*cmd->save_path, *cmd->html_path)) {
    if (!quiet_rank) {
      cli::PrintError("--html " + *cmd->html_path + " and --save " + *cmd->save_path +
                      " name the same file: give each its own");
    }
    return refuse_output();
  }
  if (cmd->save_path && !quiet_rank) {
    Status can_save =
        cli::OutputFile::CheckCreatable("--save", *cmd->save_path, cmd->options.paths);
    if (can_save.ok()) can_save = state::CheckSavePath(*cmd->save_path);
    if (!can_save.ok()) {
      cli::PrintError(can_save.message());
      return refuse_output();
    }
  }

  if (cmd->kind == cli::Command::Kind::kDiff) {
    // Each scan reported with its own options; the figures they share compared.
    std::vector<ScanResult> scans;
    for (const std::string& path : cmd->report.state_paths) {
      Result<state::ScanState> s = state::LoadState(path);
      if (!s.ok()) {
        cli::PrintError(s.status().message());
        return cli::kExitUsage;
      }
      scans.push_back(finish::Finish(*s, finish::ReportOptionsOf(s->options)));
    }
    const std::string& a = cmd->report.state_paths[0];
    const std::string& b = cmd->report.state_paths[1];
    const int err = WriteStdout(cmd->json ? report::DiffJson(scans[0], scans[1], a, b)
                                          : report::DiffText(scans[0], scans[1], a, b));
    if (err != 0 && err != EPIPE) {
      cli::PrintError(std::string("cannot write the report to standard output: ") +
                      std::strerror(err));
      return cli::kExitOutputFailed;
    }
    return cli::kExitOk;
  }

  // The HTML file is checked before any input is read (a bad path is bad usage, found now
  // rather than after the scan), and a temporary file created and removed beside it proves its
  // directory writable. The file itself is written at the end through a temporary file made
  // then: one made now stayed beside the target through an hours-long scan, and a process killed
  // outright (SIGKILL, the OOM killer) left it there.
  std::vector<std::string> html_inputs;
  const bool html = cmd->html_path && !quiet_rank;
  if (html) {
    // What is read: the scan's inputs, or the state files of `zsim report`.
    html_inputs =
        cmd->kind == cli::Command::Kind::kReport ? cmd->report.state_paths : cmd->options.paths;
    if (cmd->since_path) html_inputs.push_back(*cmd->since_path);  // --since's state is read too
    if (Status s = cli::OutputFile::CheckCreatable("--html", *cmd->html_path, html_inputs);
        !s.ok()) {
      cli::PrintError(s.message());
      return refuse_output();
    }
  }

  // Block devices named: a scan of nothing else is a scan of zvols (cli/named_inputs.h). On every
  // rank, whose options must agree.
  // What is said of the paths named before reading them, kept in the state too
  // (InputSummary::notes): rank 0's.
  std::vector<std::string> input_notes;
  if (Status s = cli::ResolveBlockInputs(&*cmd, &input_notes); !s.ok()) {
    if (!quiet_rank) cli::PrintError(s.message());
    return cli::kExitUsage;
  }

  // The scan's paths as named: when none can be scanned (none exists, a symlink loop, a
  // character device, a fifo, a socket) there is nothing to scan (a typo, most likely), which is
  // bad usage, said before anything is read; such a path among others is said at once, and the
  // others are scanned (a missing one is listed with the errors at the end, exit code 1).
  if (cmd->kind == cli::Command::Kind::kScan && !quiet_rank) {
    const std::string kReads = "zsim reads files, directories and block devices";
    size_t unscannable = 0;
    std::string notes, problems;  // each such path's message
    bool any_kind = false;        // one exists but is not a file, directory or block device
    std::vector<std::string> device_paths;  // the block devices named, and their st_rdev
    std::vector<uint64_t> rdevs;
    for (const std::string& path : cmd->options.paths) {
      struct stat st;
      std::string problem;
      const bool exists = ::stat(path.c_str(), &st) == 0;
      if (exists && S_ISBLK(st.st_mode)) {
        device_paths.push_back(path);
        rdevs.push_back(static_cast<uint64_t>(st.st_rdev));
      }
      if (!exists) {
        // Other errors (EACCES on a parent) are the scan's to list with the path.
        if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP) continue;
        problem = path + ": " + std::strerror(errno);
        notes += "zsim: " + cli::Shown(problem) + "; scanning the other paths\n";
      } else {
        const char* kind = S_ISCHR(st.st_mode)    ? "a character device"
                           : S_ISFIFO(st.st_mode) ? "a fifo"
                           : S_ISSOCK(st.st_mode) ? "a socket"
                                                  : nullptr;
        if (kind == nullptr) continue;
        problem = path + " is " + kind;
        notes += "zsim: " + cli::Shown(problem) + ": not scanned (" + kReads + ")\n";
      }
      problems += (unscannable++ == 0 ? "" : "; ") + problem;
      any_kind = any_kind || exists;
    }
    if (unscannable != 0 && unscannable == cmd->options.paths.size()) {
      cli::PrintError(problems + ": nothing to scan" + (any_kind ? " (" + kReads + ")" : ""));
      return refuse_output();
    }
    // A mapped device named with a device under it (an LVM volume and its physical volume, say):
    // both are read, and said so, as the figures may count the same data twice.
    for (const auto& [upper, lower] : zsim::walk::StackedDevices("/sys", rdevs)) {
      input_notes.push_back(
          cli::Shown(device_paths[upper]) + " lies on " + cli::Shown(device_paths[lower]) +
          ", also named: both are read, so their data counts twice where the mapping keeps the "
          "bytes (a linear LVM volume, multipath, a RAID 1 member) and differs where it does not "
          "(dm-crypt's ciphertext below); name the one a pool would hold");
    }
    for (std::string& note : cli::PseudoFileSystemNotes(cmd->options.paths)) {
      input_notes.push_back(std::move(note));
    }
    for (const std::string& note : input_notes) notes += "zsim: note: " + note + "\n";
    if (!cmd->quiet) std::fputs(notes.c_str(), stderr);
  }

  // The walk must not find its way to where the outputs go (a symlink it follows, a bind mount
  // inside a tree): the checks above see only the paths named. The first route found stops the
  // scan, and the outputs are refused below.
  std::vector<io::GuardedFileSystem::Place> written;
  for (const std::optional<std::string>* out : {&cmd->html_path, &cmd->save_path}) {
    if (!*out || quiet_rank) continue;
    const std::vector<io::GuardedFileSystem::Place> places = cli::OutputFile::WrittenPlaces(
        out == &cmd->html_path ? "--html" : "--save", **out, cmd->options.follow_symlinks);
    written.insert(written.end(), places.begin(), places.end());
  }
  // --one-file-system: a mount point of another file system is not entered, whatever it holds.
  std::vector<uint64_t> walked_devices;
  if (cmd->options.one_file_system) {
    for (const std::string& path : cmd->options.paths) {
      struct stat st;
      if (::stat(path.c_str(), &st) == 0) walked_devices.push_back(uint64_t(st.st_dev));
    }
  }
  // Static, as the command's file system is: an interrupted scan may leave reads under way on
  // its threads (pipeline/scan.h ScanControl), which must find it whole until the process ends.
  static const std::shared_ptr<io::FileSystem> posix = io::PosixFileSystem();
  static io::GuardedFileSystem& guarded = *new io::GuardedFileSystem(
      posix.get(), written, walked_devices, [] { g_cancel.store(true); });

  Result<ScanResult> result = Status::Internal("no result");
  // The --save state could not be written (a full disk, a target that changed during the scan):
  // said at once, and the run ends with exit code 1, but the report the scan cost is still
  // written on stdout and to --html (they went unwritten, and the scan was lost).
  bool save_failed = false;
  if (cmd->kind == cli::Command::Kind::kReport) {
    std::optional<ScanResult> r = ReportFromStates(*cmd, &save_failed);
    if (!r) return cli::kExitUsage;
    result = std::move(*r);
  } else {
    const bool terminal = ::isatty(STDERR_FILENO) == 1;
    const bool progress = cmd->progress.value_or(terminal);
    pipeline::ScanControl control;
    control.cancel = &g_cancel;
    // A saved state keeps its file records: the base of a later --since (under mpirun too: the
    // ranks' records keep their blocks' keys, mpi/distributed_scan.h).
    control.record_files = cmd->save_path.has_value();
    std::vector<uint64_t> exclude_matches;  // per walk glob (cmd->options.excludes)
    control.exclude_matches = &exclude_matches;
    bool distributed = false;  // each rank counted only its share of the excluded entries
    std::optional<state::ScanState> since;
    if (cmd->since_path) {
#ifdef ZSIM_MPI
      if (session.active()) {
        // Every rank sees it; rank 0 says so and ends the job, the others wait for that.
        if (quiet_rank) session.AwaitAbort(cli::kExitUsage);
        cli::PrintError("--since is not available under mpirun: run it alone");
        return refuse_output();
      }
#endif
      Result<state::ScanState> base = state::LoadState(*cmd->since_path);
      if (!base.ok()) {
        cli::PrintError("--since: " + base.status().message());
        return cli::kExitUsage;
      }
      // A scan of block devices alone cut them at recordsize rows before it became a scan of
      // zvols (cli/named_inputs.h): such a base cannot be matched (--recordsize is refused now).
      if (cmd->devices_as_zvols && !base->options.volblocksize) {
        cli::PrintError("--since: " + *cmd->since_path +
                        " was saved by a zsim that cut block devices named alone at recordsize "
                        "rows; this one scans them as zvols (volblocksize " +
                        std::to_string(*cmd->options.volblocksize >> 10) +
                        "K): scan them in full once, without --since (block devices are read "
                        "whole by a rescan anyway)");
        return cli::kExitUsage;
      }
      since = std::move(*base);
    }
    // The last progress seen, for a log's closing line, and whether a line of the finished
    // scan was written already.
    struct LastProgress {
      std::optional<pipeline::Progress> seen;
      bool done_written = false;
    };
    auto last_progress = std::make_shared<LastProgress>();
    if (progress) {
      // In a log, a line every kProgressLogSeconds, not five a second (messages.h).
      control.progress = [terminal, last_progress,
                          next = 0.0](const pipeline::Progress& p) mutable {
        last_progress->seen = p;
        if (!terminal) {
          if (p.seconds < next) return;
          next = p.seconds + cli::kProgressLogSeconds;
          last_progress->done_written =
              p.walk_finished && p.bytes_done >= p.bytes_discovered && !p.topping_up;
        }
        cli::DrawProgress(p, terminal);
      };
    }
    const auto scan_start = std::chrono::steady_clock::now();
    // The warning of a costly scan is for codec work asked for (a codec list, recordsizes,
    // --exact): the default scan's codecs are zsim's own choice, bounded by the codec budget,
    // and "fewer codecs or recordsizes" is no advice to a user who named none.
    const bool asked = !cmd->options.compressions.empty() || cmd->options.exact ||
                       cmd->options.recordsizes != ScanOptions().recordsizes;
    if (!cmd->quiet) {
      // Whether or not codec work was asked for: known only now, and the user waits for it.
      control.top_up_forecast = [progress, terminal](const pipeline::TopUpForecast& f) {
        const std::string warning = cli::FormatTopUpWarning(f);
        if (warning.empty()) return;
        if (progress) cli::ClearProgress(terminal);
        std::fprintf(stderr, "%s\n", warning.c_str());
      };
    }
    if (!cmd->quiet && asked) {
      control.forecast = [progress, terminal](const pipeline::CostForecast& f) {
        const std::string warning = cli::FormatCostWarning(f);
        if (warning.empty()) return;
        if (progress) cli::ClearProgress(terminal);
        std::fprintf(stderr, "%s\n", warning.c_str());
      };
    }

#ifdef ZSIM_MPI
    // Under mpirun every rank scans a share; rank 0 gets the merged state, the others nothing.
    Result<state::ScanState> scanned = Status::Internal("not scanned");
    if (session.active()) {
      distributed = true;
      // Collective: every rank surveys; rank 0 says where mpirun left cores unused.
      const mpi::Binding binding = mpi::SurveyBinding();
      if (!quiet_rank && !cmd->quiet) {
        const std::string warning = cli::FormatBindingWarning(
            binding.bound_hosts, binding.hosts, binding.ranks_on_host, binding.bound_cores,
            binding.launcher_cores, cmd->options.threads);
        if (!warning.empty()) std::fprintf(stderr, "%s\n", warning.c_str());
      }
      Result<std::optional<state::ScanState>> merged =
          mpi::RunDistributedScan(cmd->options, &guarded, control, session);
      if (merged.ok() && !merged->has_value()) {
        if (!g_cancel.load()) return cli::kExitOk;
        // Interrupted: abandoned reads may still hold threads (see the end of main).
        session.Finalize();
        RemoveTempFiles();  // any registered (no output's is made before the report)
        _exit(cli::kExitInterrupted);
      }
      if (merged.ok()) {
        scanned = std::move(**merged);
      } else {
        scanned = merged.status();
      }
    } else if (!since) {
      scanned = pipeline::ScanToState(cmd->options, &guarded, control);
    }
#else
    Result<state::ScanState> scanned = Status::Internal("not scanned");
#endif
    pipeline::SinceSummary since_summary;
    if (since) {
      scanned =
          pipeline::ScanSince(cmd->options, std::move(*since), &guarded, control, &since_summary);
    }
#ifndef ZSIM_MPI
    else {
      scanned = pipeline::ScanToState(cmd->options, &guarded, control);
    }
#endif
    if (progress) cli::ClearProgress(terminal);
    // A log's last line is the finished scan's (the paced lines stopped short of it: 93% on the
    // tiny sample, the only line): what the walk found, all read, in the scan's time.
    if (progress && !terminal && last_progress->seen && !last_progress->done_written &&
        scanned.ok() && !g_cancel.load()) {
      pipeline::Progress done = *last_progress->seen;
      done.walk_finished = true;
      done.files_done = done.files_discovered = std::max(done.files_done, done.files_discovered);
      done.bytes_done = done.bytes_discovered = std::max(done.bytes_done, done.bytes_discovered);
      done.seconds = done.expected_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - scan_start).count();
      done.topping_up = false;
      cli::DrawProgress(done, terminal);
    }
    if (const std::optional<io::GuardedFileSystem::Hit> hit = guarded.hit()) {
      cli::PrintError(hit->path + " leads to where zsim writes (" + hit->what +
                      "); zsim never writes inside what it scans: put the output elsewhere, or "
                      "--exclude that path; the scan was stopped and nothing was written");
#ifdef ZSIM_MPI
      if (session.active()) session.Abort(cli::kExitUsage);
#endif
      // The scan was cancelled: reads may still be under way on its threads. Leave without
      // running destructors (no output's temporary file is made before the report).
      RemoveTempFiles();
      std::fflush(nullptr);
      _exit(cli::kExitUsage);
    }
    if (!scanned.ok()) {
      if (!quiet_rank) cli::PrintError(scanned.status().message());
      return cli::kExitUsage;
    }
    if (cmd->since_path && !cmd->quiet) {
      std::fprintf(stderr, "%s\n", cli::FormatSinceSummary(since_summary).c_str());
    }
    scanned->input.notes = input_notes;  // this run's (a --since base's were of its own paths)
    // An --exclude that left everything in is most often a pattern spelled for another tool.
    if (!cmd->quiet && !cmd->options.excludes.empty() && !scanned->partial &&
        !scanned->input.skipped.contains("excluded")) {
      std::fprintf(stderr,
                   "zsim: --exclude matched nothing: a glob is tried on each name (\"*.iso\"), on "
                   "the path as the scan spells it (from the path typed: \"%s/...\"), and, "
                   "holding a '/', on the path below any directory (\"vm/old\"); a path named "
                   "on the command line is scanned whatever --exclude says\n",
                   cli::Shown(cmd->options.paths.empty() ? "." : cmd->options.paths[0]).c_str());
    } else if (!cmd->quiet && !scanned->partial && !distributed) {
      // Several globs, some matching: the one that matched nothing would go unseen.
      for (const std::string& glob : cli::UnmatchedExcludes(cmd->typed_excludes, exclude_matches)) {
        std::fprintf(stderr,
                     "zsim: --exclude '%s' matched nothing (the other --exclude globs did): a "
                     "glob is tried on each name and on the path as the scan spells it\n",
                     cli::Shown(glob).c_str());
      }
    }
    if (cmd->save_path) {
      // An interrupted scan's state never replaces a state already at the --save path: with
      // `--since base --save base` (the weekly rescan) that file is the baseline the next run
      // needs, and a partial state cannot serve as one. It goes beside it as PATH.partial.
      std::string save_path = *cmd->save_path;
      struct stat existing;
      if (scanned->partial && ::lstat(save_path.c_str(), &existing) == 0) {
        save_path += ".partial";
        Status can_save = cli::OutputFile::CheckCreatable("--save", save_path, cmd->options.paths);
        if (can_save.ok()) can_save = state::CheckSavePath(save_path);
        if (!can_save.ok()) {
          cli::PrintError("the scan was interrupted; its partial state was not saved, and " +
                          *cmd->save_path + " is kept as it was: " + can_save.message());
          save_path.clear();
        } else if (!cmd->quiet) {
          std::fprintf(stderr,
                       "zsim: the scan was interrupted: %s is kept as it was; the partial state "
                       "went to %s\n",
                       cli::Shown(*cmd->save_path).c_str(), cli::Shown(save_path).c_str());
        }
      }
      const Status saved = save_path.empty() ? Status::Ok() : state::SaveState(*scanned, save_path);
      if (!saved.ok()) {
        cli::PrintError("the state was not saved: " + saved.message() +
                        " (the report is written as asked)");
        save_failed = true;
      }
    }
    result = finish::Finish(*scanned, finish::ReportOptionsOf(scanned->options));
  }
  const report::Advice advice = report::ComputeAdvice(*result);
  // The text fits the terminal; 100 columns when stdout is not one (a file, a pipe, a mail).
  report::TextOptions text;
  text.wide = cmd->wide;
  winsize ws{};
  if (::isatty(STDOUT_FILENO) == 1 && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
      ws.ws_col >= 40) {
    text.width = ws.ws_col;
  }
  const std::string report =
      cmd->json ? report::ToJson(*result, advice) : report::ToText(*result, advice, text);
  const int stdout_error = WriteStdout(report);
  int code = 0;
  Status html_written = Status::Ok();
  if (html) {
    Result<cli::OutputFile> out = cli::OutputFile::Prepare("--html", *cmd->html_path, html_inputs);
    html_written = out.ok() ? out->Commit(report::ToHtml(*result, advice)) : out.status();
  }
  if (!html_written.ok()) {
    cli::PrintError(html_written.message());
    // The report on stdout was written: its end-of-run messages (the paths not read, an
    // interrupt) stand, as they do after a failed --save.
    cli::FinishMessages(*result, /*quiet=*/cmd->quiet || stdout_error != 0,
                        /*from_states=*/cmd->kind == cli::Command::Kind::kReport);
    code = cli::kExitOutputFailed;
  } else if (stdout_error != 0 && stdout_error != EPIPE) {
    cli::PrintError(std::string("cannot write the report to standard output: ") +
                    std::strerror(stdout_error));
    cli::FinishMessages(*result, /*quiet=*/true);
    code = cli::kExitOutputFailed;
  } else {
    code = cli::FinishMessages(*result, /*quiet=*/cmd->quiet || stdout_error == EPIPE,
                               /*from_states=*/cmd->kind == cli::Command::Kind::kReport);
  }
  // Like a report file not written, whatever else the run says.
  if (save_failed) code = cli::kExitOutputFailed;
  if (result->partial) {
    // Interrupted: reads that did not return may still be under way on the scan's threads
    // (pipeline/scan.h ScanControl). Everything is written; leave without running destructors.
    std::fflush(nullptr);
#ifdef ZSIM_MPI
    session.Finalize();  // the other ranks wait for this one
#endif
    _exit(code);
  }
  return code;
}
