#include "engine/finish/breakdown_report.h"

#include <algorithm>
#include <tuple>

#include "engine/base/mix.h"
#include "engine/finish/known_codes.h"

namespace zsim::finish {
namespace {

constexpr size_t kMaxRows = 50;

bool Kept(const ddt::Fingerprint& key, uint32_t shift) {
  return (key.hi & ((uint64_t{1} << shift) - 1)) == 0;
}

}  // namespace

// Rows are taken in the order of their names, not the order they come in (a hash map's, which
// differs between a scan and the merge of its parts, and with the names of the paths): the sums and
// the roundings, and so each row's byte, are then the same for the same rows. They were not, and a
// merge of two parts differed from one scan of both by a byte in some rows, in 4 runs of 5 of
// MergeTest.MergedPartsEqualOneScanUnderKeySampling where the temporary directory's name happened
// to order them so.
void CalibratePsize(uint64_t total, std::vector<BreakdownRow>* rows) {
  std::vector<size_t> order;
  double sum = 0, known_lsize = 0, unknown_lsize = 0;
  for (size_t i = 0; i < rows->size(); ++i) {
    const BreakdownRow& row = (*rows)[i];
    if (row.psize_known) {
      order.push_back(i);
      sum += double(row.psize);
      known_lsize += double(row.lsize);
    } else {
      unknown_lsize += double(row.lsize);
    }
  }
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return (*rows)[a].name < (*rows)[b].name; });
  if (order.empty() || sum <= 0 || total == 0) return;
  // The rows without a psize keep their share of the total at the rest's ratio.
  const uint64_t target =
      unknown_lsize <= 0 || known_lsize <= 0
          ? total
          : static_cast<uint64_t>(double(total) * known_lsize / (known_lsize + unknown_lsize) +
                                  0.5);
  // Each row's share, but no row above its lsize (ZFS stores a block that does not compress as
  // is: a row's psize is at most its lsize; scaled up, a 512-byte row showed 557, 0.92x): what
  // a capped row cannot take goes to the others, in proportion.
  std::vector<double> share(order.size());
  std::vector<bool> capped(order.size(), false);
  for (bool again = true; again;) {
    again = false;
    double left = double(target), free_psize = 0;
    for (size_t k = 0; k < order.size(); ++k) {
      const BreakdownRow& row = (*rows)[order[k]];
      if (capped[k]) {
        left -= double(row.lsize);
      } else {
        free_psize += double(row.psize);
      }
    }
    const double factor = free_psize > 0 ? std::max(0.0, left) / free_psize : 0.0;
    for (size_t k = 0; k < order.size(); ++k) {
      const BreakdownRow& row = (*rows)[order[k]];
      if (capped[k]) {
        share[k] = double(row.lsize);
      } else if (double(row.psize) * factor > double(row.lsize)) {
        capped[k] = again = true;
      } else {
        share[k] = double(row.psize) * factor;
      }
    }
  }
  double running = 0;
  uint64_t given = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    BreakdownRow& row = (*rows)[order[k]];
    running += share[k];
    // The last row takes what is left: a double's rounding over many rows cannot lose a byte.
    const uint64_t upto =
        k + 1 == order.size() ? target : std::min(target, static_cast<uint64_t>(running + 0.5));
    row.psize = upto - std::min(upto, given);
    given = std::max(given, upto);
  }
}

void FinishBreakdowns(const state::BreakdownState& bd,
                      const std::vector<const ddt::DedupTable*>& tables,
                      const std::vector<CodeSettler>& settlers,
                      const std::vector<std::vector<int>>& known_levels,
                      const std::vector<uint64_t>& block_bytes,
                      const std::vector<Compression>& compressions, size_t featured,
                      ScanResult* result) {
  // Keys a table dropped (dedup sampling) cannot be looked up: sample at least as coarsely.
  uint32_t shift = bd.shift;
  for (const ddt::DedupTable* t : tables) shift = std::max(shift, t->sample_shift());
  const uint64_t m = uint64_t{1} << shift;
  const size_t settings = compressions.size();
  const bool zeros_known = state::ZeroLsizeKept(bd);
  result->breakdowns.clear();
  for (size_t r = 0; r < tables.size(); ++r) {
    // Refcount, lsize and codes of every sampled key of row r, sorted by key.lo (a few MB at the
    // cap; hash maps of the same keys cost several times that).
    struct Info {
      uint64_t lo;
      uint64_t lsize;
      uint32_t refcount;
      size_t codes;  // offset in `codes`
    };
    std::vector<Info> info;
    for (const state::BreakdownState::Reference& s : bd.references) {
      if (s.row == r && Kept(s.key, shift)) info.push_back(Info{s.key.lo, 0, 0, 0});
    }
    auto by_lo = [](const Info& a, const Info& b) { return a.lo < b.lo; };
    std::sort(info.begin(), info.end(), by_lo);
    info.erase(std::unique(info.begin(), info.end(),
                           [](const Info& a, const Info& b) { return a.lo == b.lo; }),
               info.end());
    // Per setting, as dedup=on stores the block (the DDT: what dedup removes) and, where that
    // differs (CodeSettler::differs_without_dedup: 2.1, 2.2), as dedup=off does (the dataset's
    // psize); else `bare_codes` stays empty and `codes` serves both.
    const bool differs = settlers[r].differs_without_dedup();
    std::vector<ddt::PsizeCode> codes, bare_codes;
    if (!info.empty()) {
      tables[r]->ForEach([&](const ddt::EntryView& e) {
        if (!Kept(e.key, shift)) return;
        auto it = std::lower_bound(info.begin(), info.end(), Info{e.key.lo, 0, 0, 0}, by_lo);
        if (it == info.end() || it->lo != e.key.lo) return;
        it->lsize = e.lsize;
        it->refcount = e.refcount;
        it->codes = codes.size();
        for (size_t c = 0; c < settings; ++c) {
          const int level = c < known_levels[r].size() ? known_levels[r][c] : -1;
          const ddt::PsizeCode known = KnownCode(e, c, level, tables[r]->sample_shift());
          codes.push_back(settlers[r].Settle(e, known, c));
          if (differs) bare_codes.push_back(settlers[r].SettleWithoutDedup(e, known, c));
        }
      });
    }
    for (size_t c = 0; c < settings; ++c) {
      const size_t key = r * settings + c;
      // A state without per-setting sizes (none written yet) falls back to the featured lsize.
      auto rows_of = [&](const std::vector<std::string>& names,
                         const std::vector<state::BreakdownRowSums>& sums) {
        std::vector<BreakdownRow> rows(names.size());
        for (size_t i = 0; i < rows.size(); ++i) {
          rows[i].name = names[i];
          rows[i].files = sums[i].files;
          rows[i].bytes = sums[i].bytes;
          rows[i].lsize = key < sums[i].setting_lsize.size() ? sums[i].setting_lsize[key]
                          : key == featured                  ? sums[i].lsize
                                                             : 0;
          if (zeros_known && key < sums[i].setting_zero_lsize.size()) {
            rows[i].zero_lsize = sums[i].setting_zero_lsize[key];
          }
        }
        return rows;
      };
      std::vector<BreakdownRow> dirs = rows_of(bd.directory_names, bd.directories);
      std::vector<BreakdownRow> exts = rows_of(bd.extension_names, bd.extensions);
      // Per row: psize of the references with a code, their lsize, and every reference's lsize
      // (a sampled codec's missing codes are made up in proportion).
      struct Known {
        uint64_t psize = 0, lsize = 0, all_lsize = 0;
      };
      std::vector<Known> known_dirs(dirs.size()), known_exts(exts.size());
      for (const state::BreakdownState::Reference& s : bd.references) {
        if (s.row != r || !Kept(s.key, shift)) continue;
        const auto it = std::lower_bound(info.begin(), info.end(), Info{s.key.lo, 0, 0, 0}, by_lo);
        if (it == info.end() || it->lo != s.key.lo || it->refcount == 0) continue;
        const Info& in = *it;
        const ddt::PsizeCode code = codes[in.codes + c];
        const ddt::PsizeCode bare = differs ? bare_codes[in.codes + c] : code;
        // Holes and embedded blocks never enter the DDT: no psize, nothing for dedup to remove.
        const bool stored = !ddt::IsHoleCode(code) && !ddt::IsEmbeddedCode(code);
        const bool allocated = !ddt::IsHoleCode(bare) && !ddt::IsEmbeddedCode(bare);
        const uint64_t dup = stored ? in.lsize * (in.refcount - 1) / in.refcount : 0;
        // An all-zero record the setting makes a hole is the row's zero_lsize, not its lsize:
        // it says nothing of the psize of the row's data. (Counted in, a row whose only kept
        // references were such records, an image's zero blocks, showed its data stored in 0
        // bytes, "all of it saved".)
        if (ddt::IsHoleCode(code)) continue;
        for (auto [row, k] : {std::pair{&dirs[s.directory], &known_dirs[s.directory]},
                              std::pair{&exts[s.extension], &known_exts[s.extension]}}) {
          row->duplicate_bytes += dup * m;
          k->all_lsize += in.lsize;
          if (code == ddt::kPendingCode) continue;
          k->lsize += in.lsize;
          k->psize += allocated ? ddt::AllocatedPsize(bare) : 0;
        }
      }
      auto scale = [m](std::vector<BreakdownRow>* rows, const std::vector<Known>& known) {
        for (size_t i = 0; i < rows->size(); ++i) {
          const Known& k = known[i];
          (*rows)[i].psize = k.lsize == 0
                                 ? 0
                                 : static_cast<uint64_t>(double(k.psize) * double(m) *
                                                         (double(k.all_lsize) / double(k.lsize)));
          (*rows)[i].psize_known = k.lsize > 0 || (*rows)[i].lsize == 0;
        }
      };
      scale(&dirs, known_dirs);
      scale(&exts, known_exts);
      const size_t index = r * settings + c;
      if (index < result->results.size()) {
        CalibratePsize(result->results[index].psize, &dirs);
        CalibratePsize(result->results[index].psize, &exts);
      }
      auto finish = [](std::vector<BreakdownRow>* rows) {
        // A row with nothing in it: its files failed, or a merge took its only file out (a
        // file with several names, counted under another: state/linked_files.h).
        std::erase_if(*rows, [](const BreakdownRow& b) {
          return b.files == 0 && b.bytes == 0 && b.lsize == 0 && b.zero_lsize == 0 &&
                 b.psize == 0 && b.duplicate_bytes == 0;
        });
        std::sort(rows->begin(), rows->end(), [](const BreakdownRow& a, const BreakdownRow& b) {
          const uint64_t a_data = a.lsize + a.zero_lsize, b_data = b.lsize + b.zero_lsize;
          return std::tie(b.duplicate_bytes, b_data, a.name) <
                 std::tie(a.duplicate_bytes, a_data, b.name);
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
      b.zero_lsize_known = zeros_known;
      result->breakdowns.push_back(std::move(b));
    }
  }

  // Per block size: a copy's lsize and the all-zero blocks are the row's (a state of format < 14,
  // or a merge with one, has the first row's only, which then stands for every row, as it did).
  result->dedup_sources.assign(block_bytes.size(), DedupSources{});
  for (size_t r = 0; r < block_bytes.size(); ++r) {
    DedupSources& src = result->dedup_sources[r];
    src.recordsize = block_bytes[r];
    // Contents under kWholeContentBytes are kept 1 in 2^content_shift by hash: each stands for
    // as many; larger ones are all kept and stand for themselves.
    src.sample_modulus = uint64_t{1} << bd.content_shift;
    // A file of one block is its block: where the table stores that block embedded in its block
    // pointer (2.3 and later: 112 bytes or less compressed, a tiny file's), its copies take no
    // allocation and no DDT entry, so dedup removes nothing of them and cloning or a hard link
    // saves nothing either. Such copies are left out (a new user's tree of 3,000 copies of a
    // 28-byte file was told "Whole-file duplicates (3000 files, 4.34 MiB) cover all of what
    // dedup removes (2.88 MiB)"). Told from the table: the content hash of a file whose one
    // record is record 0 is Mix64 of its block's key.lo (pipeline/scan_blocks.cc), and in every
    // row that one record is the same block. The codes read are `featured`'s, the setting whose
    // lsize the contents carry; a code the table does not know (a sampled codec's) is not
    // embedded, and the copy counts.
    auto single_block = [&](const state::BreakdownState::Content& content) {
      return state::ContentLsize(content, 0) <= block_bytes[0] &&
             state::ContentLsize(content, r) <= block_bytes[r];
    };
    // The single-block duplicated contents' hashes, sorted; those whose block is embedded are
    // marked while the table is read. Not under dedup sampling (--sample 1/M): its table keeps a
    // key 1 time in M, so a content would be told apart only where its key happened to be kept.
    std::vector<uint64_t> singles;
    for (const auto& [content, copies] : bd.contents) {
      if (copies >= 2 && single_block(content)) singles.push_back(content.lo);
    }
    std::sort(singles.begin(), singles.end());
    singles.erase(std::unique(singles.begin(), singles.end()), singles.end());
    std::vector<bool> embedded(singles.size(), false);
    if (!singles.empty() && featured < settings && r < tables.size() &&
        tables[r]->sample_shift() == 0) {
      const int level = featured < known_levels[r].size() ? known_levels[r][featured] : -1;
      tables[r]->ForEach([&](const ddt::EntryView& e) {
        if (e.is_zero) return;
        const auto it = std::lower_bound(singles.begin(), singles.end(), Mix64(e.key.lo));
        if (it == singles.end() || *it != Mix64(e.key.lo)) return;
        const ddt::PsizeCode known = KnownCode(e, featured, level, 0);
        if (ddt::IsEmbeddedCode(settlers[r].Settle(e, known, featured))) {
          embedded[static_cast<size_t>(it - singles.begin())] = true;
        }
      });
    }
    for (const auto& [content, copies] : bd.contents) {
      if (copies < 2) continue;
      if (single_block(content)) {
        const auto it = std::lower_bound(singles.begin(), singles.end(), content.lo);
        if (it != singles.end() && *it == content.lo &&
            embedded[static_cast<size_t>(it - singles.begin())]) {
          continue;
        }
      }
      const uint64_t weight = state::ContentIsWhole(content) ? 1 : src.sample_modulus;
      src.duplicate_files += (copies - 1) * weight;
      src.duplicate_file_bytes += (copies - 1) * state::ContentLsize(content, r) * weight;
    }
    src.zero_blocks = state::RowCount(bd.zero_blocks, r);
    src.zero_block_bytes = state::RowCount(bd.zero_bytes, r);
  }
}

}  // namespace zsim::finish
