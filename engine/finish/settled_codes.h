// engine/finish/settled_codes.h
//
// A dedup table's codes as the report's pool stores them. A table of least-budget codes
// (state::CodeKind kLeastBudgetZstd, kLeastBudget) or raw codes (kRaw, ddt/dedup_table.h) keeps
// what each codec produced, whatever the pool; the figures need psize, embedding and holes under
// the report's profile and geometry, which zfs::ReplayLeastBudget (where
// state::KeepsLeastBudget: lzjb, zle, lz4, gzip, and from format 9 zstd without early abort) or
// zfs::ReplayCompressed (zstd's other blocks, and every codec of a kRaw table) derives. CodeSettler
// gives every entry of a table with its codes turned into rounded ones (hole, EncodeEmbedded,
// EncodeAllocated, kPendingCode), so the figures read one kind of code whatever the state's. A
// code whose outcome under the report's budget is not known reads kUnknownCode: CountUnknown
// finds them before a report, which is refused when there are any. A table of rounded codes
// (state format 6 and older) passes unchanged.
//
// Speed: a report reads every code of every entry three or four times (tally passes, histograms,
// breakdowns). Codes of the row's block size, nearly every entry, are looked up in a table built
// once per setting (64K codes); other lsizes (files smaller than the block) are derived per code.
//
// Thread safety: const after construction; ForEach may run on several threads at once.

#ifndef ZSIM_ENGINE_FINISH_SETTLED_CODES_H_
#define ZSIM_ENGINE_FINISH_SETTLED_CODES_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/state/scan_state.h"
#include "engine/zfs/write_rules.h"
#include "zsim/scan_options.h"

namespace zsim::finish {

// A settled code whose outcome is not known (never in a report that passed CountUnknown).
inline constexpr ddt::PsizeCode kUnknownCode = ddt::kNoFitCode;

// The rounded code of one block write: a hole, EncodeEmbedded(payload) or EncodeAllocated(psize).
ddt::PsizeCode SettledCodeOf(const zfs::BlockWrite& w);

class CodeSettler {
 public:
  // `kind`: what the table's codes hold; `scanned`: the scan's options (the budget the codes were
  // made under); `options`: the report's (effective) options, whose profile, vdev and ashift
  // decide; `block_bytes`: the row's block size.
  CodeSettler(state::CodeKind kind, const ScanOptions& scanned, const ScanOptions& options,
              uint64_t block_bytes);
  // A report under a policy whose budget differs from the scan's for some codec and lsize: only
  // then may a code be unknown.
  bool may_be_unknown() const { return may_be_unknown_; }

  // Setting `c`'s rounded code for a block of `lsize` whose table code is `code`.
  ddt::PsizeCode Settle(ddt::PsizeCode code, size_t c, uint64_t lsize) const {
    if (!raw_ || code == ddt::kPendingCode || code == ddt::kHoleCode || off_[c]) return code;
    if (code >= kLookupCodes && least_[c] && code != ddt::kNoFitCode) {
      if (lsize == block_bytes_) return next_[c * kNextCodes + (code - kLookupCodes)];
      return Derive(code, c, lsize);
    }
    if (lsize == block_bytes_ && code < kLookupCodes) return lookup_[c * kLookupCodes + code];
    return Derive(code, c, lsize);
  }

  // Setting `c`'s rounded code for entry `e` whose code (e.codes[c], or what the caller made of
  // it: finish/known_codes.h) is `code`: as Settle, and where the report's profile applies zstd
  // early abort to the block, from its early-abort code too (state::ProbeColumns).
  ddt::PsizeCode Settle(const ddt::EntryView& e, ddt::PsizeCode code, size_t c) const {
    if (abort_[c] && e.lsize >= zfs::kZstdEarlyAbortBytes) {
      return SettleEarlyAbort(code, e.codes[probe_[c]], c, e.lsize);
    }
    return Settle(code, c, e.lsize);
  }

  // Whether a dataset with dedup=off may store some block of the table otherwise than dedup=on
  // does: under a profile that embeds small blocks only without dedup
  // (zfs::EmbedsOnlyWithoutDedup: 2.1, 2.2), some codec on, and codes that keep what the
  // compressor produced (a table of rounded codes, format 6 and older, keeps only the dedup=on
  // outcome). SettleWithoutDedup then says how.
  bool differs_without_dedup() const { return without_dedup_ != nullptr; }
  // The settler of the same table for a dataset with dedup=off: this one where
  // !differs_without_dedup().
  const CodeSettler& WithoutDedup() const { return without_dedup_ ? *without_dedup_ : *this; }
  // As Settle(e, code, c), for a dataset with dedup=off: `e` holds the table's own codes,
  // `code` is e.codes[c] or what the caller made of it.
  ddt::PsizeCode SettleWithoutDedup(const ddt::EntryView& e, ddt::PsizeCode code, size_t c) const {
    return WithoutDedup().Settle(e, code, c);
  }

  // Per setting, the entries of `table` whose code is unknown under the report's options.
  std::vector<uint64_t> CountUnknown(const ddt::DedupTable& table) const;

  // Calls fn(entry) for every entry of `table`, its codes settled (table.ForEach's order): one
  // per setting, then the table's other columns as they are (early-abort codes, written keys).
  template <class Fn>
  void ForEach(const ddt::DedupTable& table, Fn&& fn) const {
    if (!raw_) {
      table.ForEach(fn);
      return;
    }
    std::vector<ddt::PsizeCode> codes;
    table.ForEach([&](const ddt::EntryView& e) {
      const size_t n = std::min(e.codes.size(), compressions_.size());
      codes.assign(e.codes.begin(), e.codes.end());
      for (size_t c = 0; c < n; ++c) codes[c] = Settle(e, e.codes[c], c);
      ddt::EntryView settled = e;
      settled.codes = codes;
      fn(settled);
    });
  }

 private:
  ddt::PsizeCode Derive(ddt::PsizeCode code, size_t c, uint64_t lsize) const;
  // A zstd block of 128K or more under a profile with early abort: its least-budget code and its
  // early-abort code (ddt::EncodeProbe) give the outcome under every budget ZFS computes.
  ddt::PsizeCode SettleEarlyAbort(ddt::PsizeCode code, ddt::PsizeCode probe, size_t c,
                                  uint64_t lsize) const;
  // Setting c's code of a block of lsize is a least-budget one (else raw).
  bool LeastAt(size_t c, uint64_t lsize) const {
    return least_[c] && state::KeepsLeastBudget(kind_, scanned_, compressions_[c], lsize);
  }
  // The settler of the same table under the report's options with dedup=off (no further
  // one of its own).
  CodeSettler(state::CodeKind kind, const ScanOptions& scanned, const ScanOptions& options,
              uint64_t block_bytes, bool dedup);

  bool raw_;
  bool may_be_unknown_ = false;
  uint64_t block_bytes_;
  zfs::WritePolicy scanned_, policy_;
  std::vector<Compression> compressions_;
  state::CodeKind kind_;
  std::vector<bool> off_;    // per setting: compression=off (derived code)
  std::vector<bool> least_;  // per setting: least-budget codes at some lsize (else raw)
  // Per setting: the table column of its early-abort code (state::ProbeColumns), and whether
  // the report reads it (the report's profile applies early abort to the setting).
  std::vector<size_t> probe_;
  std::vector<bool> abort_;
  // Per setting, kLookupCodes codes: settled code of each raw or least-budget one (hole to the
  // largest exact length) for a block of block_bytes_; and for least-budget settings, the
  // kNextCodes codes above (kLeastSmallBase + 1 to kLeastLastCode).
  static constexpr size_t kLookupCodes = size_t{ddt::kEmbeddedBase} + 113;
  static constexpr size_t kNextCodes = size_t{ddt::kLeastLastCode} + 1 - kLookupCodes;
  std::vector<ddt::PsizeCode> lookup_;
  std::vector<ddt::PsizeCode> next_;
  std::shared_ptr<const CodeSettler> without_dedup_;  // where differs_without_dedup()
};

}  // namespace zsim::finish

#endif  // ZSIM_ENGINE_FINISH_SETTLED_CODES_H_
