#include "engine/state/linked_files.h"

#include <sys/statfs.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "engine/base/mix.h"
#include "engine/state/since.h"
#include "engine/zfs/record_layout.h"
#include "engine/zfs/write_rules.h"

namespace zsim::state {
namespace {

std::string FirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The machine and this boot of it, hashed; 0 when either is unknown.
uint64_t MachineBoot() {
  static const uint64_t scope = [] {
    std::string machine = FirstLine("/etc/machine-id");
    if (machine.empty()) machine = FirstLine("/var/lib/dbus/machine-id");
    const std::string boot = FirstLine("/proc/sys/kernel/random/boot_id");
    if (machine.empty() || boot.empty()) return uint64_t{0};
    uint64_t h = 0;
    for (char c : machine + "/" + boot) h = Mix64(h ^ static_cast<uint8_t>(c));
    return h | 1;
  }();
  return scope;
}

// How one scan counts the same file once (walk/parallel_walker.h): the smallest name.
bool Wins(const LinkedFile& a, const LinkedFile& b) { return a.path < b.path; }

// A breakdown reference to take out: its key (as the table gives it), row and breakdown rows.
// A table keeps the top 8 and low 32 bits of hi (ddt::EntryView).
constexpr uint64_t kTableHiBits = 0xFF000000FFFFFFFFull;
using RefKey = std::tuple<uint64_t, uint64_t, uint32_t, uint32_t, uint32_t>;
RefKey KeyOfRef(const ddt::Fingerprint& k, uint32_t row, uint32_t dir, uint32_t ext) {
  return {k.lo, k.hi & kTableHiBits, row, dir, ext};
}

void Subtract(estimate::OccurrenceSums& s, const estimate::OccurrenceSums& o) {
  s.ne -= o.ne;
  s.lsize -= o.lsize;
  s.lsize_ne -= o.lsize_ne;
  s.asize -= o.asize;
  s.emb_bytes -= o.emb_bytes;
  for (auto [sum, part] :
       {std::pair{&s.psize_per_u, &o.psize_per_u}, std::pair{&s.dsize_per_u, &o.dsize_per_u}}) {
    estimate::RatioEstimator::Moments m = sum->moments();
    const estimate::RatioEstimator::Moments p = part->moments();
    m.n -= p.n;
    m.sx -= p.sx;
    m.sy -= p.sy;
    m.sxx -= p.sxx;
    m.syy -= p.syy;
    m.sxy -= p.sxy;
    *sum = estimate::RatioEstimator::FromMoments(m);
  }
}

// Whether `key` was there.
template <typename Map, typename Key>
bool Decrement(Map& map, const Key& key) {
  auto it = map.find(key);
  if (it == map.end()) return false;
  if (--it->second == 0) map.erase(it);
  return true;
}

class TakeOut {
 public:
  explicit TakeOut(ScanState& s) : s_(s) {
    zfs::WritePolicy policy;
    policy.profile = s.options.profile;
    policy.geometry = zfs::GeometryFor(s.options.vdev, s.options.ashift);
    policy.dedup = true;
    for (const Compression& c : s.options.compressions) {
      zero_is_hole_.push_back(zfs::ZeroBlockIsHole(policy, c));
      zero_written_.push_back(zfs::ZeroBlockWrittenOnlyWithoutDedup(policy, c));
    }
  }

  // What the scan that counted `f` added for it (pipeline/scan_files.cc FinishFile and the
  // workers), taken back out; its blocks' keys `keys` (per row).
  void File(const LinkedFile& f, const std::vector<std::vector<ddt::Fingerprint>>& keys,
            bool plan_added) {
    losers_.emplace(f.path, f.dev, f.ino);
    InputSummary& in = s_.input;
    --in.files;
    in.bytes_logical -= f.size;
    in.bytes_data -= std::min(in.bytes_data, f.data_bytes);
    in.bytes_read -= std::min(in.bytes_read, f.bytes_read);
    ++in.skipped[kHardLinkSkip];
    const uint64_t id = FileIdentity(f.dev, f.ino);
    const auto it = std::lower_bound(s_.file_ids.begin(), s_.file_ids.end(), id);
    if (it != s_.file_ids.end() && *it == id) s_.file_ids.erase(it);
    if (plan_added && s_.sampling.adaptive) {
      s_.sampling.planned_bytes -= std::min(s_.sampling.planned_bytes, f.allocated);
      if (f.allocated > 0 && s_.sampling.planned_files > 0) --s_.sampling.planned_files;
    }

    const size_t settings = s_.options.compressions.size();
    std::vector<uint64_t> setting_lsize(s_.rows.size() * settings, 0);
    std::vector<uint64_t> setting_zero_lsize(s_.rows.size() * settings, 0);
    std::vector<uint64_t> row_block_bytes(s_.rows.size(), 0);  // the file's block size per row
    for (size_t r = 0; r < s_.rows.size(); ++r) {
      RowState& row = s_.rows[r];
      const zfs::RecordLayout layout = s_.options.volblocksize
                                           ? zfs::ZvolLayout(f.size, *s_.options.volblocksize)
                                           : zfs::FileLayout(f.size, row.block_bytes);
      row_block_bytes[r] = layout.block_bytes;
      const uint64_t read = layout.blocks - std::min(layout.blocks, f.holes[r]);
      row.sparse_holes -= std::min(row.sparse_holes, f.holes[r]);
      for (size_t c = 0; c < settings; ++c) {
        const uint64_t non_hole = read - (zero_is_hole_[c] ? f.zero_blocks[r] : 0);
        FileShape shape =
            ShapeOf(layout.block_bytes, layout.blocks, non_hole,
                    zero_written_[c] ? f.zero_blocks[r] : 0, f.indirects, r, zero_is_hole_[c]);
        // A state of format 22 or older keeps no written_indirects: its shape has none.
        if (!Decrement(row.files[c], shape) && !shape.written_indirects.empty()) {
          shape.written_indirects.clear();
          Decrement(row.files[c], shape);
        }
        setting_lsize[r * settings + c] = non_hole * layout.block_bytes;
        if (zero_is_hole_[c])
          setting_zero_lsize[r * settings + c] = f.zero_blocks[r] * layout.block_bytes;
      }
      for (const ddt::Fingerprint& key : keys[r]) {
        const uint32_t ref = row.table->Find(key);
        if (ref == ddt::DedupTable::kDroppedRef) continue;  // sampled out by the merge
        if (row.table->Release(ref) == 0) unreferenced_ = true;
        if ((key.hi & ((uint64_t{1} << s_.breakdown.shift) - 1)) == 0) {
          ++references_[KeyOfRef(key, static_cast<uint32_t>(r), f.directory, f.extension)];
        }
      }
      if (r < f.occurrences.size()) {
        for (const auto& [index, sums] : f.occurrences[r]) {
          if (index < row.occurrences.sums.size()) Subtract(row.occurrences.sums[index], sums);
        }
      }
    }

    BreakdownState& b = s_.breakdown;
    const uint64_t featured_lsize = setting_lsize.empty() ? 0 : setting_lsize[s_.featured];
    for (BreakdownRowSums* row : {&b.directories[f.directory], &b.extensions[f.extension]}) {
      --row->files;
      row->bytes -= f.size;
      row->lsize -= featured_lsize;
      for (size_t i = 0; i < setting_lsize.size() && i < row->setting_lsize.size(); ++i) {
        row->setting_lsize[i] -= setting_lsize[i];
      }
      for (size_t i = 0; i < setting_zero_lsize.size() && i < row->setting_zero_lsize.size(); ++i) {
        row->setting_zero_lsize[i] -= std::min(row->setting_zero_lsize[i], setting_zero_lsize[i]);
      }
    }
    if (featured_lsize > 0 && f.has_data) {
      BreakdownState::Content content{f.content_lo, f.content_hi, {}};
      for (size_t r = 0; r < s_.rows.size(); ++r) {
        content.lsize.push_back(setting_lsize[r * settings + s_.featured]);
      }
      if (b.first_row_only) KeepFirst(&content.lsize);
      Decrement(b.contents, content);
    }
    for (size_t r = 0; r < s_.rows.size() && r < f.zero_blocks.size(); ++r) {
      if (r < b.zero_blocks.size())
        b.zero_blocks[r] -= std::min(b.zero_blocks[r], f.zero_blocks[r]);
      if (r < b.zero_bytes.size()) {
        b.zero_bytes[r] -= std::min(b.zero_bytes[r], f.zero_blocks[r] * row_block_bytes[r]);
      }
    }
  }

  // The breakdown references and file records of every file taken out, then the entries left
  // without references.
  void Finish() {
    if (!losers_.empty()) {
      std::erase_if(s_.records, [&](const FileRecord& f) {
        return losers_.count(std::tie(f.path, f.dev, f.ino)) != 0;
      });
    }
    if (!references_.empty()) {
      std::erase_if(s_.breakdown.references, [&](const BreakdownState::Reference& ref) {
        const auto it = references_.find(KeyOfRef(ref.key, ref.row, ref.directory, ref.extension));
        if (it == references_.end()) return false;
        if (--it->second == 0) references_.erase(it);
        return true;
      });
    }
    // Only when the parts' copies differed (the file changed between the scans) does an entry
    // lose its last reference; the keys of the links are what names entries meanwhile.
    // (The links' references are remapped too, then set again from their keys: SetLinkRefs.)
    if (unreferenced_) DropUnreferenced(s_.rows, s_.records, s_.links);
  }

 private:
  ScanState& s_;
  std::vector<bool> zero_is_hole_, zero_written_;
  std::map<RefKey, uint64_t> references_;
  // path, dev, ino; looked up without copying a record's path (std::less<>)
  std::set<std::tuple<std::string, uint64_t, uint64_t>, std::less<>> losers_;
  bool unreferenced_ = false;
};

}  // namespace

uint64_t LinkedFileSystem(uint64_t dev, const std::string& path) {
  const uint64_t scope = MachineBoot();
  if (scope == 0) return 0;
  uint64_t fsid = 0;
  struct statfs st {};
  if (::statfs(path.c_str(), &st) == 0) {
    uint32_t words[2];
    static_assert(sizeof st.f_fsid == sizeof words);
    std::memcpy(words, &st.f_fsid, sizeof words);
    fsid = (uint64_t{words[0]} << 32) | words[1];
  }
  return Mix64(Mix64(scope ^ dev) ^ (fsid * kGoldenGamma)) | 1;
}

LinkKeys KeysOfLinks(const ScanState& s) {
  LinkKeys keys(s.links.size());
  for (size_t i = 0; i < s.links.size(); ++i) {
    const LinkedFile& f = s.links[i];
    keys[i].resize(s.rows.size());
    if (!f.keys.empty()) {
      // Keys kept (a distributed scan's: its tables are partitioned among the ranks).
      for (size_t r = 0; r < s.rows.size() && r < f.keys.size(); ++r) keys[i][r] = f.keys[r];
      continue;
    }
    for (size_t r = 0; r < s.rows.size() && r < f.refs.size(); ++r) {
      keys[i][r].reserve(f.refs[r].size());
      for (uint32_t ref : f.refs[r]) keys[i][r].push_back(s.rows[r].table->KeyOf(ref));
    }
  }
  return keys;
}

void SetLinkRefs(ScanState& s, const LinkKeys& keys) {
  for (size_t i = 0; i < s.links.size(); ++i) {
    LinkedFile& f = s.links[i];
    if (!f.keys.empty()) {
      // It keeps its keys: the state's tables are elsewhere (a distributed scan's rank).
      f.keys = keys[i];
      continue;
    }
    f.refs.assign(s.rows.size(), {});
    for (size_t r = 0; r < s.rows.size(); ++r) {
      f.refs[r].reserve(keys[i][r].size());
      for (const ddt::Fingerprint& key : keys[i][r]) {
        const uint32_t ref = s.rows[r].table->Find(key);
        if (ref != ddt::DedupTable::kDroppedRef) f.refs[r].push_back(ref);
      }
    }
  }
}

LinkMerge ResolveLinks(ScanState& s, size_t first_other, LinkKeys keys, bool plan_added) {
  LinkMerge out;
  std::unordered_map<uint64_t, std::vector<size_t>> by_inode;  // ino -> links of the first part
  for (size_t i = 0; i < first_other && i < s.links.size(); ++i) {
    if (s.links[i].fs != 0) by_inode[s.links[i].ino].push_back(i);
  }
  TakeOut take_out(s);
  std::vector<bool> dropped(s.links.size(), false);
  for (size_t j = first_other; j < s.links.size(); ++j) {
    LinkedFile& other = s.links[j];
    if (other.fs == 0) continue;
    const auto it = by_inode.find(other.ino);
    if (it == by_inode.end()) continue;
    for (size_t i : it->second) {
      LinkedFile& first = s.links[i];
      if (dropped[i] || first.fs != other.fs) continue;
      if (first.size != other.size || first.mtime_ns != other.mtime_ns ||
          first.ctime_ns != other.ctime_ns) {
        ++out.changed;
        break;
      }
      ++out.resolved;
      if (Wins(other, first)) {
        take_out.File(first, keys[i], plan_added);
        // The winner takes the loser's place among the first part's links.
        first = std::move(other);
        keys[i] = std::move(keys[j]);
      } else {
        take_out.File(other, keys[j], plan_added);
      }
      dropped[j] = true;
      break;
    }
  }
  take_out.Finish();
  size_t kept = 0;
  for (size_t i = 0; i < s.links.size(); ++i) {
    if (dropped[i]) continue;
    if (kept != i) {
      s.links[kept] = std::move(s.links[i]);
      keys[kept] = std::move(keys[i]);
    }
    ++kept;
  }
  s.links.resize(kept);
  keys.resize(kept);
  SetLinkRefs(s, keys);
  return out;
}

}  // namespace zsim::state
