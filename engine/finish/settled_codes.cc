#include "engine/finish/settled_codes.h"

namespace zsim::finish {

CodeSettler::CodeSettler(state::CodeKind kind, const ScanOptions& scanned,
                         const ScanOptions& options, uint64_t block_bytes)
    : CodeSettler(kind, scanned, options, block_bytes, /*dedup=*/true) {
  if (!raw_ || !zfs::EmbedsOnlyWithoutDedup(options.profile)) return;
  const bool any_on = std::any_of(off_.begin(), off_.end(), [](bool off) { return !off; });
  if (any_on) {
    without_dedup_.reset(new CodeSettler(kind, scanned, options, block_bytes, /*dedup=*/false));
  }
}

CodeSettler::CodeSettler(state::CodeKind kind, const ScanOptions& scanned,
                         const ScanOptions& options, uint64_t block_bytes, bool dedup)
    : raw_(kind != state::CodeKind::kRounded),
      block_bytes_(block_bytes),
      scanned_(zfs::DedupPolicyOf(scanned.profile, scanned.vdev, scanned.ashift)),
      policy_(zfs::DedupPolicyOf(options.profile, options.vdev, options.ashift)),
      compressions_(options.compressions),
      kind_(kind) {
  policy_.dedup = dedup;
  probe_ = state::ProbeColumns(kind, compressions_);
  for (size_t i = 0; i < compressions_.size(); ++i) {
    abort_.push_back(probe_[i] != state::kNoProbe &&
                     zfs::ZstdEarlyAbortApplies(policy_, compressions_[i], zfs::kMaxBlockBytes));
  }
  for (const Compression& c : compressions_) {
    off_.push_back(c.algorithm == CompressionAlgorithm::kOff);
    // Least-budget codes at some lsize (zstd's only where early abort does not apply).
    least_.push_back(state::KeepsLeastBudget(kind, scanned_, c, zfs::kMinBlockBytes) ||
                     state::KeepsLeastBudget(kind, scanned_, c, zfs::kMaxBlockBytes));
  }
  if (!raw_) return;
  // Raw codes are known under the scan's budget only; least-budget codes under every budget
  // that is 112 bytes, a multiple of 512 or the largest (zfs::ReplayLeastBudget).
  for (size_t c = 0; c < compressions_.size() && !may_be_unknown_; ++c) {
    if (off_[c]) continue;
    for (uint64_t lsize = zfs::kMinBlockBytes; lsize <= zfs::kMaxBlockBytes;
         lsize += zfs::kMinBlockBytes) {
      const uint64_t budget = zfs::CompressionBudget(policy_, compressions_[c], lsize);
      const bool known = LeastAt(c, lsize)
                             ? budget == zfs::kEmbeddedPayloadBytes ||
                                   budget % zfs::kMinBlockBytes == 0 ||
                                   budget == zfs::LargestCompressionBudget(lsize)
                             : budget == zfs::CompressionBudget(scanned_, compressions_[c], lsize);
      if (!known) {
        may_be_unknown_ = true;
        break;
      }
    }
  }
  lookup_.assign(compressions_.size() * kLookupCodes, ddt::kHoleCode);
  next_.assign(compressions_.size() * kNextCodes, ddt::kHoleCode);
  for (size_t c = 0; c < compressions_.size(); ++c) {
    if (off_[c]) continue;
    for (size_t code = 1; code < kLookupCodes; ++code) {
      lookup_[c * kLookupCodes + code] = Derive(static_cast<ddt::PsizeCode>(code), c, block_bytes);
    }
    if (!least_[c]) continue;
    for (size_t i = 0; i < kNextCodes; ++i) {
      next_[c * kNextCodes + i] =
          Derive(static_cast<ddt::PsizeCode>(kLookupCodes + i), c, block_bytes);
    }
  }
}

ddt::PsizeCode CodeSettler::Derive(ddt::PsizeCode code, size_t c, uint64_t lsize) const {
  std::optional<zfs::BlockWrite> known;
  if (LeastAt(c, lsize)) {
    const ddt::LeastBudget b = ddt::LeastBudgetOf(code);
    known = zfs::ReplayLeastBudget(policy_, compressions_[c], lsize, b.length, b.above, b.at_most);
  } else if (code > ddt::kEmbeddedBase + zfs::kEmbeddedPayloadBytes && code != ddt::kNoFitCode) {
    return kUnknownCode;  // no raw code (a lookup slot of a setting with least-budget codes)
  } else {
    known =
        zfs::ReplayCompressed(scanned_, policy_, compressions_[c], lsize, ddt::RawLengthOf(code));
  }
  return known ? SettledCodeOf(*known) : kUnknownCode;
}

ddt::PsizeCode CodeSettler::SettleEarlyAbort(ddt::PsizeCode code, ddt::PsizeCode probe, size_t c,
                                             uint64_t lsize) const {
  if (code == ddt::kPendingCode || code == ddt::kHoleCode) return code;
  // A block of 128K or more has an early-abort code with its own (the loader checks it).
  if (probe == ddt::kPendingCode || probe == ddt::kHoleCode) return kUnknownCode;
  const ddt::LeastBudget through = ddt::ProbeOf(probe);
  const std::optional<uint64_t> length = code == ddt::kNoFitCode || probe == ddt::kNoFitCode
                                             ? std::nullopt
                                             : ddt::LeastBudgetOf(code).length;
  const std::optional<zfs::BlockWrite> known = zfs::ReplayLeastBudget(
      policy_, compressions_[c], lsize, length, through.above, through.at_most);
  return known ? SettledCodeOf(*known) : kUnknownCode;
}

ddt::PsizeCode SettledCodeOf(const zfs::BlockWrite& w) {
  switch (w.kind) {
    case zfs::BlockKind::kHole:
      return ddt::kHoleCode;
    case zfs::BlockKind::kEmbedded:
      return ddt::EncodeEmbedded(w.psize);
    case zfs::BlockKind::kCompressed:
    case zfs::BlockKind::kUncompressed:
      break;
  }
  return ddt::EncodeAllocated(w.psize);
}

std::vector<uint64_t> CodeSettler::CountUnknown(const ddt::DedupTable& table) const {
  std::vector<uint64_t> out(compressions_.size(), 0);
  if (!raw_ || !may_be_unknown_) return out;
  table.ForEach([&](const ddt::EntryView& e) {
    for (size_t c = 0; c < e.codes.size() && c < out.size(); ++c) {
      out[c] += Settle(e, e.codes[c], c) == kUnknownCode;
    }
  });
  return out;
}

}  // namespace zsim::finish
