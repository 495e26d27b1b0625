#include "engine/pipeline/breakdown.h"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace zsim::pipeline {
namespace {

constexpr size_t kMaxRows = 50;
constexpr size_t kCountBatch = 64;  // see Sample
constexpr int kDirectoryDepth = 2;  // levels below the input path that name a row

std::string DirectoryKey(const std::string& root, const std::string& path) {
  // The file's directory, cut to kDirectoryDepth levels below the input path.
  std::string base = root == "/" ? std::string() : root;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
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

BreakdownCollector::BreakdownCollector(size_t rows, size_t settings, size_t content_setting,
                                       size_t max_sampled_refs)
    : rows_(rows),
      settings_(settings),
      content_setting_(content_setting),
      max_sampled_refs_(max_sampled_refs) {}

FileGroups BreakdownCollector::Groups(const std::string& root, const std::string& path) {
  FileGroups g;
  g.directory = Intern(DirectoryKey(root, path), &directory_ids_, &directory_names_);
  g.extension = Intern(ExtensionKey(path), &extension_ids_, &extension_names_);
  const Row empty{0, 0, std::vector<uint64_t>(rows_ * settings_, 0)};
  if (directories_.size() < directory_names_.size()) {
    directories_.resize(directory_names_.size(), empty);
  }
  if (extensions_.size() < extension_names_.size()) {
    extensions_.resize(extension_names_.size(), empty);
  }
  return g;
}

void BreakdownCollector::Sample(const ddt::Fingerprint& key, FileGroups groups, uint32_t row,
                                std::vector<Sampled>* local) {
  const uint32_t shift = shift_.load(std::memory_order_relaxed);
  if (!Kept(key, shift)) return;
  // Drop what a raised M no longer keeps before adding (the list stays within its space).
  if (!local->empty() && !Kept(local->back().key, shift)) {
    const size_t before = local->size();
    std::erase_if(*local, [&](const Sampled& s) { return !Kept(s.key, shift); });
    // What this list had counted (whole batches) less what it still counts.
    kept_.fetch_sub(before / kCountBatch * kCountBatch - local->size() / kCountBatch * kCountBatch,
                    std::memory_order_relaxed);
  }
  local->push_back(Sampled{key, groups, row});
  // The shared count moves once per kCountBatch references of a list, not per block: every
  // thread adding 1 to one cache line for every block was the hot path's only shared write.
  if (local->size() % kCountBatch != 0) return;
  if (kept_.fetch_add(kCountBatch, std::memory_order_relaxed) + kCountBatch > max_sampled_refs_) {
    uint32_t expected = shift;
    if (shift_.compare_exchange_strong(expected, shift + 1)) {
      // About half the kept references leave the space; each list drops them when next used.
      kept_.store(kept_.load() / 2, std::memory_order_relaxed);
    }
  }
}

void BreakdownCollector::AddFile(FileGroups groups, uint64_t bytes,
                                 const std::vector<uint64_t>& lsize, ddt::Fingerprint content,
                                 bool has_data) {
  for (Row* row : {&directories_[groups.directory], &extensions_[groups.extension]}) {
    ++row->files;
    row->bytes += bytes;
    for (size_t i = 0; i < row->lsize.size() && i < lsize.size(); ++i) row->lsize[i] += lsize[i];
  }
  // The first row's lsize in the first compressing setting (zero records are holes there): what
  // a whole-file copy adds.
  const uint64_t copy_lsize = content_setting_ < lsize.size() ? lsize[content_setting_] : 0;
  if (copy_lsize > 0 && has_data) ++contents_[ContentKey{content.lo, content.hi, copy_lsize}];
}

void BreakdownCollector::AddZeroBlocks(uint64_t blocks, uint64_t bytes) {
  zero_blocks_ += blocks;
  zero_bytes_ += bytes;
}

void BreakdownCollector::Finish(const std::vector<const ddt::DedupTable*>& tables,
                                const std::vector<uint64_t>& block_bytes,
                                const std::vector<Compression>& compressions,
                                const std::vector<const std::vector<Sampled>*>& locals,
                                ScanResult* result) const {
  // Keys a table dropped (dedup sampling) cannot be looked up: sample at least as coarsely.
  uint32_t shift = shift_.load();
  for (const ddt::DedupTable* t : tables) shift = std::max(shift, t->sample_shift());
  const uint64_t m = uint64_t{1} << shift;
  result->breakdowns.clear();
  for (size_t r = 0; r < rows_; ++r) {
    // Refcount, lsize and codes of every sampled key of row r, sorted by key.lo (a few MB at the
    // cap; hash maps of the same keys cost several times that).
    struct Info {
      uint64_t lo;
      uint64_t lsize;
      uint32_t refcount;
      size_t codes;  // offset in `codes`
    };
    std::vector<Info> info;
    for (const auto* list : locals) {
      for (const Sampled& s : *list) {
        if (s.row == r && Kept(s.key, shift)) info.push_back(Info{s.key.lo, 0, 0, 0});
      }
    }
    auto by_lo = [](const Info& a, const Info& b) { return a.lo < b.lo; };
    std::sort(info.begin(), info.end(), by_lo);
    info.erase(std::unique(info.begin(), info.end(),
                           [](const Info& a, const Info& b) { return a.lo == b.lo; }),
               info.end());
    std::vector<ddt::PsizeCode> codes;
    codes.reserve(info.size() * settings_);
    if (!info.empty()) {
      tables[r]->ForEach([&](const ddt::EntryView& e) {
        if (!Kept(e.key, shift)) return;
        auto it = std::lower_bound(info.begin(), info.end(), Info{e.key.lo, 0, 0, 0}, by_lo);
        if (it == info.end() || it->lo != e.key.lo) return;
        it->lsize = e.lsize;
        it->refcount = e.refcount;
        it->codes = codes.size();
        for (size_t c = 0; c < settings_; ++c) {
          codes.push_back(c < e.codes.size() ? e.codes[c] : ddt::kPendingCode);
        }
      });
    }
    for (size_t c = 0; c < settings_; ++c) {
      std::vector<BreakdownRow> dirs(directory_names_.size()), exts(extension_names_.size());
      const size_t key = r * settings_ + c;
      for (size_t i = 0; i < dirs.size(); ++i) {
        dirs[i] = BreakdownRow{directory_names_[i],
                               directories_[i].files,
                               directories_[i].bytes,
                               directories_[i].lsize[key],
                               0,
                               0};
      }
      for (size_t i = 0; i < exts.size(); ++i) {
        exts[i] = BreakdownRow{extension_names_[i],
                               extensions_[i].files,
                               extensions_[i].bytes,
                               extensions_[i].lsize[key],
                               0,
                               0};
      }
      // Per group: psize of the references with a code, their lsize, and every reference's
      // lsize (a sampled codec's missing codes are made up in proportion).
      struct Known {
        uint64_t psize = 0, lsize = 0, all_lsize = 0;
      };
      std::vector<Known> known_dirs(dirs.size()), known_exts(exts.size());
      for (const auto* list : locals) {
        for (const Sampled& s : *list) {
          if (s.row != r || !Kept(s.key, shift)) continue;
          const auto it =
              std::lower_bound(info.begin(), info.end(), Info{s.key.lo, 0, 0, 0}, by_lo);
          if (it == info.end() || it->lo != s.key.lo || it->refcount == 0) continue;
          const Info& in = *it;
          const ddt::PsizeCode code = codes[in.codes + c];
          // Holes and embedded blocks never enter the DDT: no psize, nothing for dedup to remove.
          const bool stored = !ddt::IsHoleCode(code) && !ddt::IsEmbeddedCode(code);
          const uint64_t dup = stored ? in.lsize * (in.refcount - 1) / in.refcount : 0;
          for (auto [row, k] :
               {std::pair{&dirs[s.groups.directory], &known_dirs[s.groups.directory]},
                std::pair{&exts[s.groups.extension], &known_exts[s.groups.extension]}}) {
            row->duplicate_bytes += dup * m;
            k->all_lsize += in.lsize;
            if (code == ddt::kPendingCode) continue;
            k->lsize += in.lsize;
            k->psize += stored ? ddt::AllocatedPsize(code) : 0;
          }
        }
      }
      auto scale = [m](std::vector<BreakdownRow>* rows, const std::vector<Known>& known) {
        for (size_t i = 0; i < rows->size(); ++i) {
          const Known& k = known[i];
          (*rows)[i].psize = k.lsize == 0
                                 ? 0
                                 : static_cast<uint64_t>(double(k.psize) * double(m) *
                                                         (double(k.all_lsize) / double(k.lsize)));
        }
      };
      scale(&dirs, known_dirs);
      scale(&exts, known_exts);
      auto finish = [](std::vector<BreakdownRow>* rows) {
        std::sort(rows->begin(), rows->end(), [](const BreakdownRow& a, const BreakdownRow& b) {
          return std::tie(b.duplicate_bytes, b.lsize, a.name) <
                 std::tie(a.duplicate_bytes, a.lsize, b.name);
        });
        if (rows->size() > kMaxRows) rows->resize(kMaxRows);
      };
      finish(&dirs);
      finish(&exts);
      Breakdowns b;
      b.recordsize = block_bytes[r];
      b.compression = compressions[c];
      b.directories = std::move(dirs);
      b.extensions = std::move(exts);
      b.sample_modulus = m;
      result->breakdowns.push_back(std::move(b));
    }
  }

  DedupSources& src = result->dedup_sources;
  for (const auto& [content, copies] : contents_) {
    if (copies < 2) continue;
    src.duplicate_files += copies - 1;
    src.duplicate_file_bytes += (copies - 1) * content.lsize;
  }
  src.zero_blocks = zero_blocks_;
  src.zero_block_bytes = zero_bytes_;
}

}  // namespace zsim::pipeline
