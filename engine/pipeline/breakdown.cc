#include "engine/pipeline/breakdown.h"

#include <algorithm>
#include <cctype>

#include "engine/base/path_spelling.h"

namespace zsim::pipeline {
namespace {

constexpr size_t kCountBatch = 64;  // see Sample
constexpr int kDirectoryDepth = 2;  // levels below the input path that name a row

std::string DirectoryKey(const std::string& root, const std::string& path) {
  // The file's directory, cut to kDirectoryDepth levels below the input path.
  const std::string base = root == "/" ? std::string() : WithoutTrailingSlashes(root);
  if (path.size() <= base.size() + 1 || path.compare(0, base.size(), base) != 0 ||
      path[base.size()] != '/') {
    return root;  // the input itself is a file: its row is the input path
  }
  const size_t last_slash = path.find_last_of('/');
  size_t pos = base.size();
  for (int level = 0; level < kDirectoryDepth; ++level) {
    const size_t next = path.find('/', pos + 1);
    if (next == std::string::npos || next > last_slash) break;
    pos = next;
  }
  return pos == 0 ? std::string("/") : path.substr(0, pos);
}

std::string ExtensionKey(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = name.find_last_of('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == name.size() || name.size() - dot > 11) {
    return "(none)";
  }
  std::string ext = name.substr(dot);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

uint32_t Intern(const std::string& key, std::unordered_map<std::string, uint32_t>* ids,
                std::vector<std::string>* names) {
  auto [it, inserted] = ids->emplace(key, static_cast<uint32_t>(names->size()));
  if (inserted) names->push_back(key);
  return it->second;
}

}  // namespace

BreakdownCollector::BreakdownCollector(size_t max_sampled_refs, size_t max_contents)
    : max_sampled_refs_(max_sampled_refs), max_contents_(max_contents) {}

FileGroups BreakdownCollector::Groups(const std::string& root, const std::string& path) {
  FileGroups g;
  g.directory = Intern(DirectoryKey(root, path), &directory_ids_, &directory_names_);
  g.extension = Intern(ExtensionKey(path), &extension_ids_, &extension_names_);
  // The input stage grows the rows while the tally stage of an earlier file adds to them: a
  // resize moves the vectors, so both hold rows_mu_ (once per file, not per block).
  std::lock_guard<std::mutex> lock(rows_mu_);
  if (directories_.size() < directory_names_.size()) directories_.resize(directory_names_.size());
  if (extensions_.size() < extension_names_.size()) extensions_.resize(extension_names_.size());
  return g;
}

void BreakdownCollector::Sample(const ddt::Fingerprint& key, FileGroups groups, uint32_t row,
                                Local* local) {
  uint64_t word = shift_and_count_.load(std::memory_order_relaxed);
  const auto shift = static_cast<uint32_t>(word >> kShiftBits);
  if (local->shift != shift) {  // M was raised: drop what it no longer keeps, count afresh
    std::erase_if(local->refs, [&](const Sampled& s) { return !Kept(s.key, shift); });
    local->shift = shift;
    local->counted = 0;
  }
  if (!Kept(key, shift)) return;
  local->refs.push_back(Sampled{key, groups, row});
  // The shared count moves once per kCountBatch references of a list, not per block: every
  // thread adding 1 to one cache line for every block was the hot path's only shared write.
  const size_t add = local->refs.size() - local->counted;
  if (add < kCountBatch) return;
  // Every reference counted is one this list holds under `shift`, so the count never exceeds
  // the references of the input that `shift` keeps, and M is raised only once they are more
  // than the cap: never past the M the whole input settles on (state/breakdown_sample.h).
  for (;;) {
    if (static_cast<uint32_t>(word >> kShiftBits) != shift) return;  // recounted on next call
    const bool over = (word & kCountMask) + add > max_sampled_refs_ && shift < 63;
    const uint64_t next = over ? uint64_t{shift + 1} << kShiftBits : word + add;
    if (shift_and_count_.compare_exchange_weak(word, next, std::memory_order_relaxed)) break;
  }
  local->counted = local->refs.size();
}

void BreakdownCollector::AddFile(FileGroups groups, uint64_t bytes,
                                 const std::vector<uint64_t>& lsize,
                                 const std::vector<uint64_t>& setting_lsize,
                                 const std::vector<uint64_t>& setting_zero_lsize,
                                 ddt::Fingerprint content, bool has_data, bool whole) {
  const uint64_t first = lsize.empty() ? 0 : lsize[0];
  std::lock_guard<std::mutex> lock(rows_mu_);
  for (Row* row : {&directories_[groups.directory], &extensions_[groups.extension]}) {
    row->files += whole;
    row->bytes += bytes;
    row->lsize += first;
    state::AddSums(&row->setting_lsize, setting_lsize);
    state::AddSums(&row->setting_zero_lsize, setting_zero_lsize);
  }
  state::BreakdownState::Content c{content.lo, content.hi, lsize};
  if (first > 0 && has_data && state::ContentKept(c, content_shift_)) {
    const bool sampled = !state::ContentIsWhole(c);
    const auto [it, inserted] = contents_.try_emplace(std::move(c), 0);
    ++it->second;
    if (inserted && sampled) ++sampled_contents_;
    // More sampled contents kept than the cap: the whole tree holds more too, so its settled
    // shift is above this one (state/breakdown_sample.h).
    if (sampled_contents_ > max_contents_) {
      content_shift_ =
          state::SettleContents(&contents_, content_shift_, max_contents_, &sampled_contents_);
    }
  }
}

void BreakdownCollector::AddZeroBlocks(size_t row, uint64_t blocks, uint64_t bytes) {
  if (zero_blocks_.size() <= row) {
    zero_blocks_.resize(row + 1, 0);
    zero_bytes_.resize(row + 1, 0);
  }
  zero_blocks_[row] += blocks;
  zero_bytes_[row] += bytes;
}

void BreakdownCollector::MoveInto(const std::vector<const Local*>& locals,
                                  state::BreakdownState* out) {
  out->directory_names = std::move(directory_names_);
  out->extension_names = std::move(extension_names_);
  auto sums = [](const std::vector<Row>& rows) {
    std::vector<state::BreakdownRowSums> v;
    for (const Row& r : rows) {
      v.push_back(state::BreakdownRowSums{r.files, r.bytes, r.lsize, r.setting_lsize,
                                          r.setting_zero_lsize});
    }
    return v;
  };
  out->directories = sums(directories_);
  out->extensions = sums(extensions_);
  out->shift = static_cast<uint32_t>(shift_and_count_.load() >> kShiftBits);
  for (const Local* local : locals) {
    for (const Sampled& s : local->refs) {
      if (!Kept(s.key, out->shift)) continue;
      out->references.push_back(
          state::BreakdownState::Reference{s.key, s.groups.directory, s.groups.extension, s.row});
    }
  }
  out->contents = std::move(contents_);
  out->content_shift = content_shift_;
  out->zero_blocks = zero_blocks_;
  out->zero_bytes = zero_bytes_;
  state::SettleBreakdownSample(out, max_sampled_refs_);
  state::SettleContentSample(out, max_contents_);
}

}  // namespace zsim::pipeline
