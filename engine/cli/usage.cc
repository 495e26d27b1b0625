#include "engine/cli/usage.h"

#include "engine/cli/messages.h"

namespace zsim::cli {

std::string HelpFormatter::make_usage(const CLI::App* app, std::string) const {
  const std::string& name = app->get_name();
  if (name == "scan") return "Usage: zsim scan PATH... [OPTIONS]\n";
  if (name == "report") return "Usage: zsim report STATE... [OPTIONS]\n";
  if (name == "diff") return "Usage: zsim diff OLD NEW [--json]\n";
  return "Usage: zsim scan PATH... [OPTIONS]\n"
         "       zsim report STATE... [OPTIONS]\n"
         "       zsim diff OLD NEW [--json]\n"
         "       zsim --help | --version\n";
}

std::string HelpFormatter::make_option_opts(const CLI::Option* opt) const {
  return opt->get_positional() ? "" : CLI::Formatter::make_option_opts(opt);
}

CLI::Option* Value(CLI::Option* opt, const std::string& name) {
  return opt->type_name(name)->option_text(name);
}

namespace {

constexpr NotTaken kNotInReport[] = {
    {"--recordsize", true,
     "a report cannot change the recordsize: the state holds the recordsizes scanned; rescan "
     "with zsim scan --recordsize"},
    {"--volblocksize", true,
     "a report cannot change the volblocksize: the state holds the blocks as the scan cut "
     "them; rescan with zsim scan --volblocksize"},
    {"--compression", true,
     "a report cannot change the compressions: the state holds what the codecs scanned made of "
     "the blocks; rescan with zsim scan --compression"},
    {"-o", true,
     "a report sets no property: recordsize, volblocksize and compression are the scan's "
     "(rescan with zsim scan -o); for copies and ashift give --copies and --ashift"},
    {"--checksum", true,
     "the state holds the fingerprints the scan took; rescan with zsim scan --checksum"},
    {"--sample", true,
     "the state holds the dedup tables as the scan sampled them; rescan with zsim scan --sample"},
    {"--max-memory", true,
     "the state holds the dedup tables as the scan kept them; rescan with zsim scan "
     "--max-memory"},
    {"--exact", false,
     "the state holds the codecs' figures as the scan sampled them; rescan with zsim scan "
     "--exact"},
    {"--max-rate", true, "it says how a scan reads the data, and a report reads none"},
    {"--threads", true, "it says how a scan reads the data, and a report reads none"},
    {"--one-file-system", false, "it says what a scan reads, and a report reads no data"},
    {"--exclude", true, "it says what a scan reads, and a report reads no data"},
    {"--follow-symlinks", false, "it says what a scan reads, and a report reads no data"},
    {"--since", true, "a report reads no data; zsim scan --since rescans what changed"},
    {"--progress", false, "a report reads no data: it has no progress to show"},
    {"--no-progress", false, "a report reads no data: it has no progress to show"},
};

constexpr NotTaken kNotInDiff[] = {
    {"--vdev", true, "zsim report STATE --vdev LAYOUT reports a scan for another pool"},
    {"--ashift", true, "zsim report STATE --ashift N reports a scan for another pool"},
    {"--copies", true, "zsim report STATE --copies N reports a scan for another pool"},
    {"--profile", true, "zsim report STATE --profile VERSION reports a scan for another ZFS"},
    {"--ram", true, "zsim report STATE --ram SIZE reports a scan for another machine"},
    {"--ddt-format", true, "zsim report STATE --ddt-format reports a scan for another format"},
    {"--html", true, "zsim report STATE --html FILE writes a scan's HTML report"},
    {"--save", true, "zsim report STATE --save STATE saves a state again"},
    {"--wide", false, "its text has no settings table to widen"},
    {"-q,--quiet", false, "it prints no warnings to silence"},
};

}  // namespace

std::span<const NotTaken> NotInReport() { return kNotInReport; }
std::span<const NotTaken> NotInDiff() { return kNotInDiff; }

void CatchNotTaken(CLI::App* app, std::span<const NotTaken> table, std::vector<std::string>* sink) {
  for (const NotTaken& t : table) {
    CLI::Option* opt = t.takes_value ? app->add_option(t.name, *sink)->allow_extra_args(false)
                                     : app->add_flag(t.name);
    opt->group("");
  }
}
const NotTaken* FirstGiven(const CLI::App* app, std::span<const NotTaken> table) {
  for (const NotTaken& t : table) {
    const std::string name(t.name);
    if (app->get_option(name.substr(0, name.find(',')))->count() > 0) return &t;
  }
  return nullptr;
}

Status RefuseNotTaken(const std::string& command, const NotTaken& t, const std::string& why) {
  std::string name(t.name);  // "-q,--quiet": "-q or --quiet"
  if (const size_t comma = name.find(','); comma != std::string::npos) {
    name.replace(comma, 1, " or ");
  }
  return Status::InvalidArgument("zsim " + command + " takes no " + name + " option: " + why +
                                 kHintSeparator + "Run 'zsim " + command +
                                 " --help' for the options.");
}

Status CheckGivenOnce(const CLI::App* app) {
  for (const CLI::Option* opt : app->get_options()) {
    if (opt->get_positional() || opt->get_type_size() == 0 || opt->get_expected_max() != 1 ||
        opt->count() < 2) {
      continue;
    }
    std::string values;
    for (const std::string& v : opt->results()) values += (values.empty() ? "" : ", then ") + v;
    // The list options take their values as one list, as -o does.
    const std::string name = opt->get_name();
    const std::string list = name == "--recordsize"    ? ", as a list: --recordsize 16k,128k"
                             : name == "--compression" ? ", as a list: --compression lz4,zstd"
                                                       : "";
    return Status::InvalidArgument(name + " was given " + std::to_string(opt->count()) +
                                   " times (" + values + "): give it once" + list);
  }
  return Status::Ok();
}

}  // namespace zsim::cli
