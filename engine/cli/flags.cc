#include "engine/cli/flags.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "engine/base/path_spelling.h"
#include "engine/base/size_suffix.h"
#include "engine/cli/messages.h"
#include "engine/cli/usage.h"
#include "engine/cli/version.h"
#include "engine/walk/glob.h"

namespace zsim::cli {
namespace {

// The slowest --max-rate accepted, bytes per second.
constexpr uint64_t kMinReadRate = 1 << 20;

// The least --ram taken: below it no machine runs ZFS (its ARC alone takes at least 32 MiB),
// and `--ram 64` is 64 bytes where a suffix was meant, which advised a special vdev because the
// table did not fit in a quarter of 64 B.
constexpr uint64_t kMinRam = uint64_t{64} << 20;

// What follows a size refused as too small where `text` was a bare number, which is bytes:
// ": a number without a suffix is bytes; give <example>", else nothing.
std::string BareNumberHint(std::string_view text, std::string_view example) {
  if (text.find_first_not_of("0123456789") != std::string_view::npos) return "";
  return ": a number without a suffix is bytes; give " + std::string(example);
}

Result<uint64_t> ParseRam(const std::string& text) {
  Result<uint64_t> r = ParseSize(text);
  if (!r.ok() || *r == 0) {
    return Status::InvalidArgument("--ram: give the target machine's memory, e.g. 64G");
  }
  if (*r < kMinRam) {
    return Status::InvalidArgument("--ram " + text + " is " + std::to_string(*r) +
                                   " bytes, below the least a machine running ZFS has (64M)" +
                                   BareNumberHint(text, "e.g. 64G"));
  }
  return r;
}

constexpr const char* kExamples = R"(
Examples:
  zsim scan /vmstore --volblocksize 16k            VM images as zvols: dedup and compression
  zsim scan /srv/share --recordsize 128k,1M         a file server at two recordsizes
  zsim scan /var/lib/postgresql --recordsize 8k,16k --compression lz4,zstd
  zsim scan /backup --compression all --vdev raidz2:6 --ashift 12 --json
  zsim scan /data --profile v23 --compression lzjb,gzip-9   as an old (pool v23) ZFS would

  zsim scan /srv --save srv.zstate                  keep the scan's state to report again later
  zsim scan /srv --since srv.zstate --save srv.zstate   next week: read only what changed
  zsim report srv.zstate --vdev raidz2:6 --copies 2 the same data on another pool, no rescan
  zsim report host1.zstate host2.zstate             one pool for both hosts: dedup across them
  zsim diff monday.zstate friday.zstate             what changed in between

Sizes take ZFS suffixes: 512, 4k, 128K, 1M. Exit codes: 0 done; 1 done, but some paths could
not be read or the report could not be written; 2 bad usage; 3 interrupted a second time (more
than a second after the first): stopped at once, no report or only part of one; 130
interrupted (the partial report was printed).
)";

// The comma-separated items of `text`, given as `typed` ("--recordsize 128k,,1M"). An empty item
// (`128k,,1M`, `,128k`, `128k,`) is refused: a value left out (an unset variable in a script)
// is a mistake, not a shorter list. `example` is a list spelled right.
Status SplitList(const std::string& typed, const std::string& text, const char* example,
                 std::vector<std::string>* out) {
  out->clear();
  for (size_t start = 0;;) {
    const size_t comma = text.find(',', start);
    out->push_back(text.substr(start, comma == std::string::npos ? comma : comma - start));
    if (out->back().empty()) {
      return Status::InvalidArgument(typed +
                                     ": an item of the list is empty (a value left out?): "
                                     "separate the values by single commas, e.g. " +
                                     example);
    }
    if (comma == std::string::npos) return Status::Ok();
    start = comma + 1;
  }
}

// `flag` names the option as given in messages ("--recordsize", "-o recordsize=16k"); `typed`
// is that with its value.
Status ParseSizeList(const std::string& flag, const std::string& typed, const std::string& text,
                     std::vector<uint64_t>* out) {
  std::vector<std::string> items;
  ZSIM_RETURN_IF_ERROR(SplitList(typed, text, "128k,1M", &items));
  out->clear();
  for (const std::string& item : items) {
    Result<uint64_t> v = ParseSize(item);
    if (!v.ok()) return Status::InvalidArgument(flag + ": " + v.status().message());
    // 128K,128k (or 128k,131072) is one size: one row, not the same row twice.
    if (std::find(out->begin(), out->end(), *v) == out->end()) out->push_back(*v);
  }
  if (out->empty()) return Status::InvalidArgument(flag + " needs at least one size, e.g. 128k");
  return Status::Ok();
}

// A whole number, or kInvalidArgument naming what is allowed. `typed` is the option with its
// value as the user gave it ("--ashift x", "-o ashift=x").
Status ParseWholeNumber(const std::string& typed, const std::string& text, const char* allowed,
                        int* out) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    return Status::InvalidArgument(typed + " is not a whole number: use " + allowed);
  }
  *out = value;
  return Status::Ok();
}

// --exclude's globs as the walk matches them (walk::Excluded: on each name and on the path, which
// begins with the scanned path as typed): a trailing '/' ("logs/", as rsync and .gitignore write a
// directory) dropped; an absolute glob under a scanned path also spelled from that path as typed
// ("/srv/data/tmp" scanning "data": "data/tmp"); a relative glob holding a '/' ("docs/*.txt")
// also spelled below each scanned path, at its top and deeper ("data/docs/*.txt",
// "data/*/docs/*.txt": fnmatch's '*' crosses '/'), never above it.
std::vector<std::string> ExcludeGlobs(const std::vector<std::string>& globs,
                                      const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (std::string glob : globs) {
    glob = WithoutTrailingSlashes(std::move(glob));
    out.push_back(glob);
    const bool absolute = glob.front() == '/';
    if (!absolute && glob.find('/') == std::string::npos) continue;  // a name: as it is
    for (const std::string& given : paths) {
      const std::string path = WithoutTrailingSlashes(given);  // as the walk joins it
      const std::string prefix = path == "/" ? "" : path;
      if (!absolute) {
        out.push_back(prefix + "/" + glob);
        out.push_back(prefix + "/*/" + glob);
        continue;
      }
      char* real = ::realpath(path.c_str(), nullptr);
      if (real == nullptr) continue;
      std::string root = real;
      std::free(real);
      if (root == "/") continue;
      if (glob.compare(0, root.size(), root) == 0 &&
          (glob.size() == root.size() || glob[root.size()] == '/')) {
        out.push_back(prefix + glob.substr(root.size()));
      }
    }
  }
  return out;
}

// An option that takes a value followed by a word that looks like an option: CLI11 takes the
// word as the value, so `--html --json` printed the text report and wrote the HTML one to a file
// named "--json", and `--exclude --no-progress` excluded nothing and left the progress on. The
// value must then be attached (--html=--json), which says the name is meant.
Status RefuseOptionAsValue(const CLI::App& command, int argc, const char* const* argv) {
  for (int i = 2; i + 1 < argc; ++i) {
    const std::string_view word = argv[i], next = argv[i + 1];
    if (word == "--") break;  // the paths follow
    // A word is an option when it starts with "--" or with "-" and a letter ("-1" is a value).
    const bool next_is_option =
        next.size() >= 2 && next[0] == '-' &&
        (next[1] == '-' || std::isalpha(static_cast<unsigned char>(next[1])) != 0);
    if (word.size() < 2 || word[0] != '-' || !next_is_option) continue;
    for (const CLI::Option* opt : command.get_options()) {
      if (opt->get_positional() || opt->get_expected_min() < 1) continue;  // flags take none
      if (opt->get_group().empty()) continue;  // caught only to be refused (usage.h NotTaken)
      std::string name;                        // the option as the word names it
      for (const std::string& l : opt->get_lnames()) {
        if (word == "--" + l) name = "--" + l;
      }
      // A short option, alone or last of a cluster of flags ("-o", "-qo").
      for (const std::string& c : opt->get_snames()) {
        if (word[1] != '-' && word.substr(word.size() - c.size()) == c) name = "-" + c;
      }
      if (name.empty()) continue;
      return Status::InvalidArgument(
          name + " takes a value, and the next word '" + std::string(next) +
          "' looks like an option: give " + name + " its value" +
          (name[1] == '-' ? ", or write " + name + "=" + std::string(next) + " if that is the value"
                          : ""));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<Command> ParseCommandLine(int argc, const char* const* argv) {
  // No command, or a word that is none (CLI11 would print the top-level help for `zsim merge
  // --help` and exit 0, as if it had been asked for): bad usage, saying what there is.
  if (argc < 2) {
    return Status::InvalidArgument(std::string("no command: give scan, report or diff") +
                                   kHintSeparator + "Run 'zsim --help' for the options.");
  }
  if (const std::string_view first = argv[1]; !first.empty() && first[0] != '-' &&
                                              first != "scan" && first != "report" &&
                                              first != "diff") {
    return Status::InvalidArgument(
        "unknown command '" + std::string(first) + "': the commands are scan, report and diff" +
        (first == "merge" ? "; zsim report A.zstate B.zstate --save M.zstate merges saved states"
                          : "") +
        kHintSeparator + "Run 'zsim --help' for the options.");
  }
  Command cmd;
  CLI::App app{"zsim: what ZFS would do with your data, before you put it on a pool", "zsim"};
  app.set_version_flag("--version", VersionText());
  app.require_subcommand(0, 1);
  app.footer(kExamples);
  app.formatter(std::make_shared<HelpFormatter>());  // the subcommands inherit it

  CLI::App* scan = app.add_subcommand("scan", "scan files, trees, images or block devices");
  std::vector<std::string> paths;
  std::string recordsize = "128k", volblocksize, compression, profile = "2.4", vdev = "disk";
  std::string checksum = "xxh128", ddt_format, ram, sample, max_memory, max_rate;
  // Whole numbers are read as text so a bad one gets a message naming the allowed values.
  std::string ashift_text = "12", copies_text = "1", threads_text = "0";
  bool exact = false, one_fs = false, follow = false, no_progress = false, progress = false;
  std::vector<std::string> excludes;
  scan->add_option("PATH", paths, "files, directories, disk images or block devices")->required();
  CLI::Option* recordsize_opt =
      Value(scan->add_option("--recordsize", recordsize,
                             "recordsize(s) to evaluate, comma separated (default 128k)"),
            "SIZE[,SIZE...]");
  CLI::Option* volblocksize_opt =
      Value(scan->add_option("--volblocksize", volblocksize,
                             "cut every input as a zvol with this volblocksize (images, devices)"),
            "SIZE");
  CLI::Option* compression_opt =
      Value(scan->add_option("--compression", compression,
                             "compressions to evaluate, comma separated, or 'all' (default: off, "
                             "lz4, zstd-3; v23: off, gzip-6, lzjb, zle)"),
            "NAME[,NAME...]|all");
  Value(scan->add_option("--profile", profile,
                         "ZFS version whose rules apply: v23, 2.1, 2.2, 2.3 or 2.4 (default 2.4)"),
        "VERSION");
  CLI::Option* ashift_opt = Value(
      scan->add_option("--ashift", ashift_text, "log2 of the sector size, 9 to 16 (default 12)"),
      "N");
  Value(scan->add_option("--vdev", vdev,
                         "vdev layout: disk (default), mirror:N, raidzP:C, draidP:D:C or "
                         "draidP:Dd:Cc:Ss"),
        "LAYOUT");
  CLI::Option* copies_opt =
      Value(scan->add_option("--copies", copies_text, "copies property, 1 to 3 (default 1)"), "N");
  Value(scan->add_option("--checksum", checksum,
                         "block fingerprint: xxh128 (fast, the default) or sha256 (ZFS's)"),
        "xxh128|sha256");
  Value(scan->add_option("--ddt-format", ddt_format,
                         "DDT format: legacy or fast (2.3+; default: fast for 2.3 and later)"),
        "legacy|fast");
  Value(scan->add_option("--ram", ram,
                         "RAM of the target machine for DDT advice (default: this one)"),
        "SIZE");
  std::vector<std::string> properties;
  Value(scan->add_option("-o", properties,
                         "a property as zfs/zpool create take it (repeatable): recordsize= "
                         "(recsize=), volblocksize= (volblock=), compression= (compress=), "
                         "copies=, ashift="),
        "PROPERTY=VALUE");
  scan->add_flag("--exact", exact,
                 "run every codec on every unique block (default: lz4 runs on all of them; "
                 "every other codec on those among 1 in 2^L of "
                 "the tree's blocks by fingerprint bits, L fixed from the tree's size before any "
                 "is coded: all of a tree under 8192 blocks per recordsize, 4096-8191 of a "
                 "larger one, 1 in 128 above 64 GiB at 128K; a long list shares a cap of about "
                 "28 CPU seconds, its costliest codecs on fewer; each with a 95% interval)");
  Value(scan->add_option("--sample", sample,
                         "dedup sampling: keep 1/M of the fingerprints and scale up, e.g. 1/64"),
        "1/M");
  Value(
      scan->add_option("--max-memory", max_memory,
                       "memory for the dedup tables (default: half of RAM); past it, sample more"),
      "SIZE");
  Value(scan->add_option("--max-rate", max_rate,
                         "read at most SIZE per second, all threads together, e.g. 200M/s"),
        "SIZE/s");
  Value(scan->add_option("--threads", threads_text,
                         "worker threads, 1 to 1024 (default 0: one per core the process may run "
                         "on)"),
        "N");
  scan->add_flag("--json", cmd.json, "print the JSON report on stdout");
  scan->add_flag("--wide", cmd.wide,
                 "text report: every column of the settings table, whatever the width");
  std::optional<std::string> html;
  Value(scan->add_option("--html", html,
                         "also write a self-contained HTML report with charts to FILE (no "
                         "network)"),
        "FILE");
  scan->add_flag("--one-file-system", one_fs, "do not cross file system boundaries");
  Value(scan->add_option("--exclude", excludes, "skip paths matching this glob (repeatable)"),
        "GLOB");
  scan->add_flag("--follow-symlinks", follow, "follow symbolic links inside trees");
  scan->add_flag("--quiet,-q", cmd.quiet, "no progress, no warnings on stderr");
  scan->add_flag("--progress", progress, "show progress even when stderr is not a terminal");
  scan->add_flag("--no-progress", no_progress, "never show progress");
  std::optional<std::string> save;
  Value(scan->add_option("--save", save,
                         "also write the scan's state to STATE, for zsim report (other pools, "
                         "merging hosts) without reading the data again"),
        "STATE");
  std::optional<std::string> since;
  Value(scan->add_option("--since", since,
                         "start from a state saved by an earlier scan of the same paths: read "
                         "only the files new or changed since (identity, size, mtime, ctime), "
                         "take out those gone; the figures are a full scan's"),
        "STATE");

  CLI::App* report = app.add_subcommand(
      "report",
      "report from state files written by zsim scan --save; several are merged first (one "
      "pool for all of them). May change: --vdev, --copies, --ram, --ddt-format, --ashift and "
      "--profile (a profile with the scan's codecs): the state keeps each codec's output, "
      "the least budget it fits and, for zstd-3 and up, the least budget its early abort lets "
      "a block through, so these answer any ashift, vdev, copies and profile. Refused (exit "
      "2, saying why) where the state cannot tell a block's fate: in an older state, zstd "
      "early abort (zstd-3 and up, blocks of 128K and more) under another budget or profile "
      "(format 9 and older) or a block compressed under another budget (zstd in format 8, "
      "any codec in format 7); zero blocks with "
      "compression=off (2.3.3 and 2.4 against older, where the tree holds any), a sampled table "
      "(--sample, --max-memory), a state of format 6 or older (profile and rounding unit "
      "fixed). Fixed by the scan: recordsizes, compressions, checksum, sampling");
  std::vector<std::string> state_paths;
  std::optional<std::string> r_vdev, r_ashift, r_copies, r_profile, r_ddt_format, r_ram;
  bool r_json = false, r_quiet = false, r_wide = false;
  std::optional<std::string> r_html, r_save;
  report->add_option("STATE", state_paths, "state files (zsim scan --save)")->required();
  Value(report->add_option("--vdev", r_vdev,
                           "vdev layout: disk, mirror:N, raidzP:C, draidP:D:C or draidP:Dd:Cc:Ss "
                           "(default: the scan's)"),
        "LAYOUT");
  Value(report->add_option("--ashift", r_ashift,
                           "log2 of the sector size, 9 to 16 (default: the scan's)"),
        "N");
  Value(report->add_option("--copies", r_copies, "copies property, 1 to 3 (default: the scan's)"),
        "N");
  Value(report->add_option("--profile", r_profile,
                           "ZFS release the report models: v23, 2.1, 2.2, 2.3 or 2.4 (default: "
                           "the scan's); see above for what the state can answer"),
        "VERSION");
  Value(report->add_option("--ddt-format", r_ddt_format,
                           "DDT format: legacy or fast (2.3+; default: the scan's)"),
        "legacy|fast");
  Value(report->add_option("--ram", r_ram,
                           "RAM of the target machine for DDT advice (default: the scan's)"),
        "SIZE");
  report->add_flag("--json", r_json, "print the JSON report on stdout");
  report->add_flag("--wide", r_wide,
                   "text report: every column of the settings table, whatever the width");
  Value(report->add_option("--html", r_html, "also write the HTML report to FILE"), "FILE");
  report->add_flag("--quiet,-q", r_quiet, "no warnings on stderr");
  Value(report->add_option("--save", r_save,
                           "also write the merged state to STATE (it may be one of the inputs), "
                           "to report or merge again without the parts"),
        "STATE");
  std::vector<std::string> not_taken;  // values of the options a command does not take
  CatchNotTaken(report, NotInReport(), &not_taken);

  CLI::App* diff = app.add_subcommand(
      "diff", "what changed between two saved scans: sizes, compression, dedup, DDT size, space");
  std::vector<std::string> diff_paths;
  bool d_json = false;
  // Any number taken, so that the count is said in zsim's words (CLI11: "OLD NEW: At Most 2
  // required but received 3").
  diff->add_option("OLD NEW", diff_paths, "two state files (zsim scan --save)");
  diff->add_flag("--json", d_json, "print the differences as JSON");
  CatchNotTaken(diff, NotInReport(), &not_taken);
  CatchNotTaken(diff, NotInDiff(), &not_taken);

  // Single-valued options keep every value given (see CheckGivenOnce).
  for (CLI::App* command : {scan, report}) {
    for (CLI::Option* opt : command->get_options()) {
      if (!opt->get_positional() && opt->get_type_size() != 0 && opt->get_expected_max() == 1) {
        opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
      }
    }
  }

  for (const CLI::App* command : {scan, report, diff}) {
    if (argv[1] == command->get_name())
      ZSIM_RETURN_IF_ERROR(RefuseOptionAsValue(*command, argc, argv));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    cmd.kind = Command::Kind::kHelp;
    cmd.help_text = (scan->parsed()     ? scan->help()
                     : report->parsed() ? report->help()
                     : diff->parsed()   ? diff->help()
                                        : app.help());
    return cmd;
  } catch (const CLI::CallForVersion&) {
    cmd.kind = Command::Kind::kVersion;
    cmd.help_text = VersionText();
    return cmd;
  } catch (const CLI::ParseError& e) {
    const CLI::App* sub = report->parsed() ? report
                          : diff->parsed() ? diff
                          : scan->parsed() ? scan
                                           : nullptr;
    const std::string command = sub ? sub->get_name() : "";
    // CLI11's words said in zsim's, where the error is known: what the user typed, and what
    // the command wants instead.
    std::string msg = e.what();
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      std::vector<std::string> extras = sub ? sub->remaining() : app.remaining();
      if (extras.empty()) extras = app.remaining();
      if (!extras.empty()) {
        const std::string first = extras.front().substr(0, extras.front().find('='));
        msg = first.size() > 1 && first[0] == '-'
                  ? "zsim " + (command.empty() ? "" : command + " ") + "has no option " + first
                  : "zsim " + (command.empty() ? "" : command + " ") +
                        "did not expect the argument '" + first + "'";
      }
    } else if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && sub == scan) {
      msg =
          "no path to scan: name at least one PATH (a file, directory, disk image or block "
          "device)";
    } else if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && sub == report) {
      msg = "no state to report: name at least one STATE file (written by zsim scan --save)";
    } else if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr && sub != nullptr) {
      // "--recordsize: 1 required SIZE[,SIZE...] missing": an option last on the line, its
      // value left out.
      const std::string name = msg.substr(0, msg.find(':'));
      const CLI::Option* opt = sub->get_option_no_throw(name);
      if (opt != nullptr && !opt->get_positional() && opt->get_type_size() != 0) {
        msg = name + " needs a value: " + name + " " + opt->get_option_text();
      }
    }
    msg += kHintSeparator + std::string("Run 'zsim ") + (command.empty() ? "" : command + " ") +
           "--help' for the options.";
    return Status::InvalidArgument(std::move(msg));
  }
  // An empty path (an unset shell variable, most likely) is refused: `zsim scan '' DIR` scanned
  // DIR and then listed "" as not found.
  const auto refuse_empty = [](const std::vector<std::string>& paths, const std::string& what) {
    for (const std::string& p : paths) {
      if (p.empty()) {
        return Status::InvalidArgument("an empty " + what +
                                       " was given ('', an unset shell variable?): name one");
      }
    }
    return Status::Ok();
  };
  if (diff->parsed()) {
    if (const NotTaken* t = FirstGiven(diff, NotInDiff())) {
      return RefuseNotTaken("diff", *t,
                            "it compares two saved scans, each as scanned, and takes only "
                            "--json; " +
                                std::string(t->why));
    }
    if (const NotTaken* t = FirstGiven(diff, NotInReport())) {
      return RefuseNotTaken("diff", *t,
                            "it compares two saved scans, each as scanned, and takes only --json");
    }
    if (diff_paths.size() != 2) {
      return Status::InvalidArgument(
          "zsim diff compares two saved scans, OLD and NEW: " + std::to_string(diff_paths.size()) +
          " state file" + (diff_paths.size() == 1 ? "" : "s") + " given" + kHintSeparator +
          "Run 'zsim diff --help' for the options.");
    }
    ZSIM_RETURN_IF_ERROR(refuse_empty(diff_paths, "state file path"));
    cmd.kind = Command::Kind::kDiff;
    cmd.json = d_json;
    cmd.progress = false;
    cmd.report.state_paths = diff_paths;
    return cmd;
  }
  if (report->parsed()) {
    if (const NotTaken* t = FirstGiven(report, NotInReport())) {
      return RefuseNotTaken("report", *t, t->why);
    }
    ZSIM_RETURN_IF_ERROR(CheckGivenOnce(report));
    ZSIM_RETURN_IF_ERROR(refuse_empty(state_paths, "state file path"));
    cmd.kind = Command::Kind::kReport;
    cmd.json = r_json;
    cmd.wide = r_wide;
    cmd.quiet = r_quiet;
    cmd.progress = false;
    ReportFlags& rf = cmd.report;
    rf.state_paths = state_paths;
    if (r_save) {
      if (r_save->empty())
        return Status::InvalidArgument("--save needs a file name, e.g. --save merged.zstate");
      cmd.save_path = *r_save;
    }
    if (r_vdev) {
      Result<VdevLayout> v = ParseVdev(*r_vdev);
      if (!v.ok()) return Status::InvalidArgument("--vdev: " + v.status().message());
      rf.vdev = *v;
    }
    if (r_ashift) {
      int a = 0;
      ZSIM_RETURN_IF_ERROR(ParseWholeNumber("--ashift " + *r_ashift, *r_ashift, "9 to 16", &a));
      rf.ashift = a;
    }
    if (r_copies) {
      int c = 0;
      ZSIM_RETURN_IF_ERROR(ParseWholeNumber("--copies " + *r_copies, *r_copies, "1, 2 or 3", &c));
      rf.copies = c;
    }
    if (r_profile) {
      rf.profile = ParseProfile(*r_profile);
      if (!rf.profile) {
        return Status::InvalidArgument("--profile " + *r_profile +
                                       " is unknown: use v23, 2.1, 2.2, 2.3 or 2.4");
      }
    }
    if (r_ddt_format) {
      if (*r_ddt_format != "legacy" && *r_ddt_format != "fast") {
        return Status::InvalidArgument("--ddt-format " + *r_ddt_format +
                                       " is unknown: use legacy or fast");
      }
      rf.ddt_format = *r_ddt_format == "fast" ? DdtFormat::kFast : DdtFormat::kLegacy;
    }
    if (r_ram) {
      Result<uint64_t> v = ParseRam(*r_ram);
      if (!v.ok()) return v.status();
      rf.ram_bytes = *v;
    }
    if (r_html) {
      if (r_html->empty()) {
        return Status::InvalidArgument("--html needs a file name, e.g. --html report.html");
      }
      cmd.html_path = *r_html;
    }
    return cmd;
  }
  if (!scan->parsed()) {
    cmd.kind = Command::Kind::kHelp;
    cmd.help_text = app.help();
    return cmd;
  }

  ZSIM_RETURN_IF_ERROR(CheckGivenOnce(scan));
  ZSIM_RETURN_IF_ERROR(refuse_empty(paths, "PATH"));
  // An option given an empty value ('') is a mistake (an unset shell variable, say), not a request
  // for the default.
  for (const char* name : {"--recordsize", "--volblocksize", "--compression", "--profile",
                           "--ashift", "--vdev", "--copies", "--checksum", "--ddt-format", "--ram",
                           "--sample", "--max-memory", "--threads"}) {
    const CLI::Option* opt = scan->get_option(name);
    if (opt->count() == 0) continue;
    bool empty = true;
    for (const std::string& v : opt->results()) empty = empty && v.empty();
    if (empty) {
      return Status::InvalidArgument(std::string(name) +
                                     " was given an empty value; give one (zsim scan --help) "
                                     "or leave the option out for the default");
    }
  }
  for (const std::string& glob : excludes) {
    if (Status s = walk::CheckGlob(glob); !s.ok()) {
      return Status::InvalidArgument("--exclude: " + s.message());
    }
  }

  // -o property=value, as zfs create / zpool create spell them, beside the long options. A
  // property may be named by its short column name too, as zfs accepts it (zprop_common.c
  // propname_match: "recsize", "volblock", "compress").
  std::vector<std::string> set_by_o;  // each property once: a second value is not a list
  // Each property set by -o, as typed ("-o compression=foo"): its messages name that, not the
  // long option it stands for.
  std::map<std::string, std::string> typed_o;
  for (const std::string& p : properties) {
    const size_t eq = p.find('=');
    std::string name = p.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : p.substr(eq + 1);
    struct Target {
      const char* name;
      const char* column;  // zfs's short name, or null
      CLI::Option* option;
      std::string* text;
    };
    const Target targets[] = {{"recordsize", "recsize", recordsize_opt, &recordsize},
                              {"volblocksize", "volblock", volblocksize_opt, &volblocksize},
                              {"compression", "compress", compression_opt, &compression},
                              {"copies", nullptr, copies_opt, &copies_text},
                              {"ashift", nullptr, ashift_opt, &ashift_text}};
    const Target* t = nullptr;
    for (const Target& candidate : targets) {
      if (name == candidate.name || (candidate.column && name == candidate.column)) t = &candidate;
    }
    // Properties a user may reach for that the report answers otherwise.
    if (t == nullptr && name == "dedup") {
      return Status::InvalidArgument(
          "-o " + p +
          ": nothing to set: every setting is evaluated with dedup off and on (the used and "
          "used+dedup columns), and the verdict says which to choose");
    }
    if (t == nullptr && name == "checksum") {
      return Status::InvalidArgument(
          "-o " + p +
          ": the figures do not depend on ZFS's checksum property; the blocks' fingerprint is "
          "--checksum xxh128 (fast) or sha256 (as dedup's)");
    }
    if (t == nullptr || eq == std::string::npos || value.empty()) {
      return Status::InvalidArgument(
          "-o " + p +
          ": give property=value with one of recordsize (recsize), volblocksize (volblock), "
          "compression (compress), copies, ashift, e.g. -o recordsize=1M");
    }
    name = t->name;
    if (t->option->count() > 0) {
      return Status::InvalidArgument("-o " + p + " and --" + name + " both set " + name +
                                     ": give it once");
    }
    if (std::find(set_by_o.begin(), set_by_o.end(), name) != set_by_o.end()) {
      const std::string list = name == "compression"  ? ", as a list: -o compression=lz4,zstd"
                               : name == "recordsize" ? ", as a list: -o recordsize=16k,128k"
                                                      : "";
      return Status::InvalidArgument("-o " + p + ": " + name + " was given twice: give it once" +
                                     list);
    }
    set_by_o.push_back(name);
    typed_o[name] = "-o " + p;
    *t->text = value;
  }
  // An option as given, for messages: "--recordsize" or "-o recsize=16k" (label), and with its
  // value, "--recordsize 16k" (typed).
  const auto label = [&](const std::string& name) {
    const auto it = typed_o.find(name);
    return it != typed_o.end() ? it->second : "--" + name;
  };
  const auto typed = [&](const std::string& name, const std::string& value) {
    const auto it = typed_o.find(name);
    return it != typed_o.end() ? it->second : "--" + name + " " + value;
  };
  // A zvol's volblocksize and a filesystem's recordsize cut the same inputs two ways: one scan
  // evaluates one of them, so asking for both is refused rather than one silently dropped.
  // Named as given: "-o recordsize and -o volblocksize", not options the user never typed.
  const auto given = [&](CLI::Option* opt, const char* name) -> std::string {
    if (opt->count() > 0) return std::string("--") + name;
    const auto it = typed_o.find(name);
    return it == typed_o.end() ? "" : it->second.substr(0, it->second.find('='));
  };
  cmd.recordsize_given = !given(recordsize_opt, "recordsize").empty();
  if (const std::string v = given(volblocksize_opt, "volblocksize"),
      r = given(recordsize_opt, "recordsize");
      !v.empty() && !r.empty()) {
    return Status::InvalidArgument(v + " and " + r + " both given: " + v +
                                   " cuts every input as a zvol, " + r +
                                   " as files of a filesystem; give one (a scan per layout)");
  }
  int ashift = 0, copies = 0, threads = 0;
  ZSIM_RETURN_IF_ERROR(ParseWholeNumber(typed("ashift", ashift_text), ashift_text,
                                        "9 to 16 (12 for 4K-sector disks)", &ashift));
  ZSIM_RETURN_IF_ERROR(
      ParseWholeNumber(typed("copies", copies_text), copies_text, "1, 2 or 3", &copies));
  ZSIM_RETURN_IF_ERROR(ParseWholeNumber("--threads " + threads_text, threads_text,
                                        "0 (all cores) or more, up to 1024", &threads));
  ScanOptions& o = cmd.options;
  o.paths = paths;
  std::optional<Profile> p = ParseProfile(profile);
  if (!p) {
    return Status::InvalidArgument("--profile " + profile +
                                   " is unknown: use v23, 2.1, 2.2, 2.3 or 2.4");
  }
  o.profile = *p;
  ZSIM_RETURN_IF_ERROR(ParseSizeList(label("recordsize"), typed("recordsize", recordsize),
                                     recordsize, &o.recordsizes));
  if (!volblocksize.empty()) {
    Result<uint64_t> v = ParseSize(volblocksize);
    if (!v.ok()) {
      return Status::InvalidArgument(label("volblocksize") + ": " + v.status().message());
    }
    o.volblocksize = *v;
  }
  if (!compression.empty()) {
    if (compression == "all") {
      o.compressions = AllCompressions(o.profile);
    } else {
      std::vector<std::string> names;
      ZSIM_RETURN_IF_ERROR(
          SplitList(typed("compression", compression), compression, "lz4,zstd", &names));
      for (const std::string& name : names) {
        Result<Compression> c = ParseCompression(name, o.profile);
        if (!c.ok()) {
          return Status::InvalidArgument(label("compression") + ": " + c.status().message());
        }
        if (std::find(o.compressions.begin(), o.compressions.end(), *c) == o.compressions.end()) {
          o.compressions.push_back(*c);
        }
      }
      if (o.compressions.empty()) {
        return Status::InvalidArgument("--compression needs at least one name, e.g. lz4");
      }
    }
  }
  o.ashift = ashift;
  Result<VdevLayout> v = ParseVdev(vdev);
  if (!v.ok()) return Status::InvalidArgument("--vdev: " + v.status().message());
  o.vdev = *v;
  o.copies = copies;
  if (checksum == "xxh128") {
    o.checksum = ChecksumKind::kXxh128;
  } else if (checksum == "sha256") {
    o.checksum = ChecksumKind::kSha256;
  } else {
    return Status::InvalidArgument("--checksum " + checksum + " is unknown: use xxh128 or sha256");
  }
  if (!ddt_format.empty()) {
    if (ddt_format == "legacy") {
      o.ddt_format = DdtFormat::kLegacy;
    } else if (ddt_format == "fast") {
      o.ddt_format = DdtFormat::kFast;
    } else {
      return Status::InvalidArgument("--ddt-format " + ddt_format +
                                     " is unknown: use legacy or fast");
    }
  }
  if (!ram.empty()) {
    Result<uint64_t> r = ParseRam(ram);
    if (!r.ok()) return r.status();
    o.ram_bytes = *r;
  }
  if (html) {
    if (html->empty()) {
      return Status::InvalidArgument("--html needs a file name, e.g. --html report.html");
    }
    cmd.html_path = *html;
  }
  o.exact = exact;
  if (!sample.empty()) {
    uint64_t m = 0;
    bool ok = sample.rfind("1/", 0) == 0 && sample.size() > 2 && sample.size() < 14;
    for (size_t i = 2; ok && i < sample.size(); ++i) {
      ok = std::isdigit(static_cast<unsigned char>(sample[i])) != 0;
      m = m * 10 + static_cast<uint64_t>(sample[i] - '0');
    }
    if (!ok || m == 0 || (m & (m - 1)) != 0) {
      return Status::InvalidArgument("--sample " + sample +
                                     " is not 1/M with M a power of two, e.g. 1/64");
    }
    o.sample_modulus = m;
  }
  if (!max_memory.empty()) {
    Result<uint64_t> r = ParseSize(max_memory);
    if (!r.ok() || *r < (1u << 20)) {
      return Status::InvalidArgument("--max-memory: give at least 1M, e.g. 4G");
    }
    o.max_memory_bytes = *r;
  }
  if (!max_rate.empty()) {
    std::string_view text = max_rate;
    if (text.size() > 2 && text.substr(text.size() - 2) == "/s") text.remove_suffix(2);
    Result<uint64_t> r = ParseSize(text);
    if (!r.ok() || *r == 0) {
      return Status::InvalidArgument("--max-rate " + max_rate +
                                     " is not a read rate: give SIZE/s, e.g. 200M/s or 1G");
    }
    // Below 1 MiB/s the cap cannot hold: the scan reads chunks of up to 8 MiB and may run 24 MiB
    // ahead of the rate (docs/zsim.1); and `--max-rate 200` is 200 bytes per second, a terabyte
    // in 158 years, where a suffix was meant.
    if (*r < kMinReadRate) {
      return Status::InvalidArgument("--max-rate " + max_rate + " is " + std::to_string(*r) +
                                     " bytes per second, below the least zsim holds a scan to " +
                                     "(1M/s)" + BareNumberHint(text, "SIZE/s, e.g. 200M/s"));
    }
    o.max_read_bytes_per_second = *r;
  }
  o.threads = threads;
  o.one_file_system = one_fs;
  o.follow_symlinks = follow;
  // Glob by glob, so that each typed one knows the globs it became.
  for (const std::string& glob : excludes) {
    const std::vector<std::string> spelled = ExcludeGlobs({glob}, paths);
    cmd.typed_excludes.emplace_back(glob, spelled.size());
    o.excludes.insert(o.excludes.end(), spelled.begin(), spelled.end());
  }
  if (progress && no_progress) {
    return Status::InvalidArgument("--progress and --no-progress contradict each other: pick one");
  }
  if (progress && cmd.quiet) {
    return Status::InvalidArgument(
        "-q (no progress, no warnings) and --progress contradict each other: pick one");
  }
  if (progress) cmd.progress = true;
  if (no_progress || cmd.quiet) cmd.progress = false;
  ZSIM_RETURN_IF_ERROR(ValidateScanOptions(o));
  if (save) {
    if (save->empty())
      return Status::InvalidArgument("--save needs a file name, e.g. --save scan.zstate");
    cmd.save_path = *save;
  }
  if (since) {
    if (since->empty())
      return Status::InvalidArgument("--since needs a state file, e.g. --since last.zstate");
    if (o.sample_modulus > 1) {
      return Status::InvalidArgument(
          "--since and --sample do not go together: --since takes changed files' blocks back "
          "out of an exact dedup table, which --sample does not keep");
    }
    cmd.since_path = *since;
  }
  return cmd;
}

}  // namespace zsim::cli
