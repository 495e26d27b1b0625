// engine/pipeline/scan_blocks.cc: a chunk's blocks (scan_internal.h): records cut, fingerprinted
// and put in the dedup tables, and the codecs run on the blocks seen for the first time.

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <exception>
#include <mutex>
#include <new>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

#include "engine/base/mix.h"
#include "engine/base/thread_cpu.h"
#include "engine/codec/zfs_block.h"
#include "engine/ddt/dedup_table.h"
#include "engine/ddt/fingerprint.h"
#include "engine/ddt/written_key.h"
#include "engine/estimate/anchor_class.h"
#include "engine/estimate/occurrence_sample.h"
#include "engine/estimate/sample_level.h"
#include "engine/finish/tally.h"
#include "engine/pipeline/scan_internal.h"
#include "engine/state/scan_state.h"
#include "engine/zfs/allocation.h"
#include "engine/zfs/write_rules.h"

namespace zsim::pipeline::internal {

using estimate::OccurrenceSums;
using finish::AuxiliarySize;

namespace {

// The level of a block occurrence in the --sample occurrence sample (estimate/occurrence_sample.h):
// trailing zero bits of a hash of (path below its input, block index, block size), so an
// occurrence has level >= L with probability 2^-L, whatever its content.
int OccurrenceLevel(uint64_t path_hash, uint64_t block_index, uint64_t block_bytes) {
  const uint64_t x = Mix64(path_hash ^ (block_index * kGoldenGamma) ^ (block_bytes << 40));
  return std::countr_zero(x | (uint64_t{1} << estimate::kMaxSampleLevel));
}

}  // namespace

void Scan::ProcessRows(Chunk& chunk, Worker& w) {
  const size_t settings = options_.compressions.size();
  FileJob& job = *chunk.file;
  // Per-file figures are summed here and added to the file's atomics once per chunk: threads
  // working on chunks of one big file would otherwise share those cache lines per block.
  std::fill(w.non_hole.begin(), w.non_hole.end(), 0);
  uint64_t content_lo = 0, content_hi = 0;
  bool chunk_has_data = false;  // a featured-row record that is not all zero
  for (size_t r = 0; r < rows_.size(); ++r) {
    w.first_seen.clear();
    w.occurrence_blocks.clear();
    const int occurrence_min_level = level_.load(std::memory_order_relaxed);
    // The codec levels, read before this chunk inserts any key (skip_bound_).
    for (size_t c = 0; c < settings; ++c) {
      w.levels[c] = occurrences_ ? EntryLevel(occurrence_min_level)
                                 : SettingLevel(r, c).load(std::memory_order_acquire);
    }
    const zfs::RecordLayout& layout = job.layouts[r];
    const uint64_t bs = layout.block_bytes;
    const uint64_t aux_units = AuxiliarySize(alloc_, bs, options_.copies) / 512;
    const uint64_t first = chunk.offset / bs;
    const uint64_t last = std::min(layout.blocks, (chunk.offset + chunk.length + bs - 1) / bs);
    size_t ext = 0;
    uint64_t row_zero_blocks = 0, row_holes = 0;
    w.refs.clear();
    w.keys.clear();
    // What is kept of each block read, for a record or a linked file: its key where the table
    // entries move to other ranks (record_keys), else its entry's reference.
    const bool keep_key = (record_ || job.linked) && control_.record_keys;
    const bool keep_ref = (record_ || job.linked) && !control_.record_keys;
    zfs::IndirectRanges& read_ranges = w.ranges[2 * r];
    zfs::IndirectRanges& nonzero_ranges = w.ranges[2 * r + 1];
    read_ranges.Clear();
    nonzero_ranges.Clear();
    read_ranges.StartPart(first, last, layout.blocks, bp_shift_);
    nonzero_ranges.StartPart(first, last, layout.blocks, bp_shift_);
    for (uint64_t b = first; b < last; ++b) {
      const uint64_t rec_begin = b * bs;
      const uint64_t rec_data_end = std::min(rec_begin + bs, job.size);
      while (ext < w.extents.size() && w.extents[ext].second <= rec_begin) ++ext;
      const bool has_data = ext < w.extents.size() && w.extents[ext].first < rec_data_end;
      if (!has_data) {
        ++w.sparse_holes[r];  // never written: no block pointer, in every setting
        ++row_holes;
        continue;
      }
      const ByteView block(w.buffer.get() + (rec_begin - chunk.offset), bs);
      const bool is_zero = IsAllZero(block);
      row_zero_blocks += is_zero;
      read_ranges.Add(b);
      if (!is_zero) nonzero_ranges.Add(b);
      const ddt::Fingerprint fp = ddt::ComputeFingerprint(options_.checksum, block);
      breakdown_.Sample(fp, job.groups, static_cast<uint32_t>(r), &w.sampled);
      if (r == 0) {
        content_lo += Mix64(fp.lo ^ (b * kGoldenGamma));
        content_hi += Mix64(fp.hi + b);
        if (!is_zero) chunk_has_data = true;
      }
      rows_[r].distinct->Add(fp.lo, bs, aux_units, is_zero);
      if (occurrences_ && !is_zero) {
        // Chosen by position, whatever the table keeps; every level at or above the final one
        // is complete (the level only rises).
        const int ol = OccurrenceLevel(job.path_hash, b, bs);
        if (ol >= occurrence_min_level)
          w.occurrence_blocks.emplace_back(rec_begin - chunk.offset, ol);
      }
      uint32_t ref = 0;
      const ddt::InsertOutcome outcome =
          rows_[r].table->Insert(fp, bs, is_zero, keep_ref ? &ref : nullptr,
                                 job.origin != 0 ? job.origin + (rec_begin - job.begin) / 512 : 0);
      if (keep_ref && outcome != ddt::InsertOutcome::kSampledOut) w.refs.push_back(ref);
      if (keep_key && outcome != ddt::InsertOutcome::kSampledOut) w.keys.push_back(fp);
      if (outcome == ddt::InsertOutcome::kFirst) {
        // Read here before and shipped to its owner since: the census's repeated sighting.
        const bool again =
            control_.shipped_before && control_.shipped_repeats && any_sampled_ && !occurrences_ &&
            !is_zero &&
            estimate::SampleLevel(fp.lo) < skip_bound_[r].load(std::memory_order_acquire) &&
            control_.shipped_before(fp);
        w.first_seen.push_back(FirstSeen{rec_begin - chunk.offset, fp, is_zero, false, again});
        if (r == 0 && !is_zero) chunk.unique += rec_data_end - rec_begin;
      } else if (outcome == ddt::InsertOutcome::kBecameHeavy && any_sampled_ && !occurrences_ &&
                 !is_zero &&
                 estimate::SampleLevel(fp.lo) < skip_bound_[r].load(std::memory_order_acquire)) {
        // Perhaps skipped at its first sighting: run the sampled codecs on it now (running them
        // again gives the same codes). Every heavy entry has its codes, whatever the timing
        // (not under --sample, whose sampled table does not use them).
        w.first_seen.push_back(FirstSeen{rec_begin - chunk.offset, fp, is_zero, true});
      }
      // Non-hole blocks per setting, for the metadata model: a zero block is a hole exactly
      // where the write rules say so, whatever else the block's codes say.
      uint64_t* non_hole = &w.non_hole[r * settings];
      for (size_t c = 0; c < settings; ++c) non_hole[c] += !(is_zero && zero_is_hole_[c]);
    }
    CompressFirstSightings(r, bs, w);
    if (skipped_) ListSkipped(r, job, chunk.offset, w);
    CompressOccurrences(r, bs, w, job);
    if (row_zero_blocks != 0) {
      job.zero_blocks[r].fetch_add(row_zero_blocks);
      w.zero_blocks[r] += row_zero_blocks;
      w.zero_bytes[r] += row_zero_blocks * bs;  // the file's block size: a small file's is its own
    }
    if (row_holes != 0) job.holes[r].fetch_add(row_holes, std::memory_order_relaxed);
    if (!w.refs.empty() || !w.keys.empty() || !read_ranges.empty()) {
      std::lock_guard<std::mutex> lock(job.mu);
      if (!w.refs.empty()) job.refs[r].insert(job.refs[r].end(), w.refs.begin(), w.refs.end());
      if (!w.keys.empty()) job.keys[r].insert(job.keys[r].end(), w.keys.begin(), w.keys.end());
      job.ranges[2 * r].Merge(read_ranges);
      job.ranges[2 * r + 1].Merge(nonzero_ranges);
    }
  }
  for (size_t i = 0; i < w.non_hole.size(); ++i) {
    if (w.non_hole[i] != 0) job.non_hole[i].fetch_add(w.non_hole[i], std::memory_order_relaxed);
  }
  job.content_lo.fetch_add(content_lo, std::memory_order_relaxed);
  job.content_hi.fetch_add(content_hi, std::memory_order_relaxed);
  if (chunk_has_data) job.has_data.store(true, std::memory_order_relaxed);
}

// Runs every setting over the chunk's first sightings of row `r` (and its keys that just became
// heavy), one setting at a time: the codec's state stays hot, and one pair of thread-CPU clock
// reads per (chunk, setting) gives its speed without charging it other processes' time or the
// clock's own cost per block.
BlockCodes Scan::CodeOf(Compression comp, ByteView block, bool is_zero, Worker& w) const {
  return CodeBlockOfKind(policy_, comp, block, is_zero, w.compressor,
                         MutableByteView(w.scratch.get(), block.size()), state_.code_kind);
}

void Scan::CompressFirstSightings(size_t r, uint64_t bs, Worker& w) {
  const size_t settings = options_.compressions.size();
  const size_t columns = rows_[r].table->settings();  // the settings' codes, then early abort's
  const size_t n = w.first_seen.size();
  if (n == 0) return;
  w.first_codes.assign(n * columns, ddt::kPendingCode);
  w.rare.assign(n, 0);
  w.skipped.assign(n, 0);
  // A few settings per chunk, not per block: whether some setting has an early-abort column.
  const bool any_probe = std::any_of(probe_columns_.begin(), probe_columns_.end(),
                                     [](size_t p) { return p != state::kNoProbe; });
  if (any_probe) w.probes.assign(n, codec::EarlyAbortProbes());
  for (const size_t c : order_) {
    const Compression comp = options_.compressions[c];
    const uint64_t t0 = ThreadCpuNanos();
    uint64_t bytes = 0;
    // Left out of the codec's time: early abort's runs (counted as work: Worker::aside_ns) and
    // the written keys' checksums.
    uint64_t abort_ns = 0, keys_ns = 0;
    // lz4's runs seed the block's early-abort probes (codec::EarlyAbortProbes).
    const bool seeds = any_probe && comp.algorithm == CompressionAlgorithm::kLz4;
    uint64_t live_t = t0, live_bytes = 0;  // published to live_ every kLiveCodecBytes
    // The written keys, where this build's codec writes OpenZFS's bytes (else left pending).
    const bool keyed = key_columns_[c] != state::kNoKey && WritesZfsBytes(comp);
    for (size_t i = 0; i < n; ++i) {
      const FirstSeen& f = w.first_seen[i];
      ddt::PsizeCode& code = w.first_codes[i * columns + c];
      const size_t probe = probe_columns_[c];
      const int lv = estimate::SampleLevel(f.key.lo);
      const bool rare = w.rare[i] && sampling_.anchors[c] >= 0 &&
                        census_on_[r * settings + c].load(std::memory_order_relaxed);
      if (f.census ? !sampling_.sampled[c]
                   : sampling_.sampled[c] && lv < w.levels[c] && !f.every_codec && !rare) {
        // A census entry keeps the exact settings' codes of its first sighting (kPendingCode
        // leaves them). Outside the sample: a zero block's fate is known without compressing it.
        code = f.census ? ddt::kPendingCode : state::UnsampledCode(f.is_zero, zero_is_hole_[c]);
        if (!f.census && !f.is_zero) w.skipped[i] = 1;
        if (probe != state::kNoProbe) w.first_codes[i * columns + probe] = code;
        continue;
      }
      const ByteView block(w.buffer.get() + f.offset, bs);
      const BlockCodes got = CodeOf(comp, block, f.is_zero, w);
      code = got.code;
      if (seeds) SeedLz4Probe(comp, got, &w.probes[i]);
      if (static_cast<int>(c) == class_anchor_ && !f.census && !ddt::IsHoleCode(code)) {
        // Counted before the sampled codecs run (exact settings come first in order_), and only
        // while the class may still be rare: a common class's counter is then only read, not
        // written by every core for every block. A key this rank met before and shipped to its
        // owner (a distributed scan's Bloom filter, asked only here) is coded but not counted
        // again: the counter counts the distinct keys a rank met, at most its class's in all,
        // and a false positive of the filter (a new key) is still coded.
        const int k = estimate::AnchorClass(ddt::OutputUnitsOf(code), bs);
        std::atomic<uint64_t>& seen =
            class_seen_[r * estimate::kAnchorClasses + static_cast<size_t>(k)];
        w.rare[i] = seen.load(std::memory_order_relaxed) < estimate::kRareClassBlocks &&
                    (ShippedBefore(f) ||
                     seen.fetch_add(1, std::memory_order_relaxed) < estimate::kRareClassBlocks);
      }
      if (keyed) {
        // The key ZFS would give it, from the output still in scratch (ddt/written_key.h); a
        // checksum, not the codec's work: timed apart, left out.
        const uint64_t k0 = ThreadCpuNanos();
        ddt::EncodeWrittenKey(
            WrittenKeyWord(policy_, bs, got, MutableByteView(w.scratch.get(), bs)),
            std::span<ddt::PsizeCode>(&w.first_codes[i * columns + key_columns_[c]],
                                      ddt::kWrittenKeyColumns));
        keys_ns += ThreadCpuNanos() - k0;
      }
      if (probe != state::kNoProbe) {
        // zstd early abort's runs (lz4, zstd-1) are not zstd's speed: timed apart, left out.
        const uint64_t p0 = ThreadCpuNanos();
        w.first_codes[i * columns + probe] =
            EarlyAbortCode(block, code, w.compressor,
                           MutableByteView(w.scratch.get(), block.size()), &w.probes[i]);
        abort_ns += ThreadCpuNanos() - p0;
      }
      bytes += bs;
      live_bytes += bs;
      if (live_bytes >= kLiveCodecBytes) {
        const uint64_t now = ThreadCpuNanos();
        live_.codec_ns.fetch_add(now - live_t, std::memory_order_relaxed);
        w.live_ns += now - live_t;
        live_t = now;
        live_bytes = 0;
      }
    }
    w.codec_ns[r * settings + c] += ThreadCpuNanos() - t0 - abort_ns - keys_ns;
    w.aside_ns += abort_ns;
    w.codec_bytes[r * settings + c] += bytes;
  }
  for (size_t i = 0; i < n; ++i) {
    const std::span<const ddt::PsizeCode> codes(w.first_codes.data() + i * columns, columns);
    rows_[r].table->SetCodes(w.first_seen[i].key, codes);
  }
}

void Scan::ListSkipped(size_t r, FileJob& job, uint64_t chunk_offset, Worker& w) {
  w.skipped_blocks.clear();
  if (!skipped_->Claim(r)) return;         // the row skipped more keys than a top-up takes
  uint32_t item = SkippedBlocks::kNoItem;  // the file's, once it lists a block
  for (size_t i = 0; i < w.first_seen.size(); ++i) {
    if (!w.skipped[i]) continue;
    if (item == SkippedBlocks::kNoItem) {
      const bool follow = options_.follow_symlinks || job.path == options_.paths[job.root];
      item = skipped_->ItemOf(&job.skipped_item, job.path, follow);
    }
    w.skipped_blocks.push_back(
        SkippedBlock{w.first_seen[i].key, chunk_offset + w.first_seen[i].offset, item});
  }
  if (!w.skipped_blocks.empty()) skipped_->Add(r, w.skipped_blocks);
}

// --sample 1/M: every setting over the chunk's sampled occurrences of row `r` (non-zero blocks),
// into the worker's sums per occurrence level.
void Scan::CompressOccurrences(size_t r, uint64_t bs, Worker& w, FileJob& job) {
  if (w.occurrence_blocks.empty()) return;
  // A linked file's own sums too, so a merge can take them back out (state::LinkedFile), and
  // those of a piece of one (MakeJob: its occurrences sized then, read-only since).
  OccurrenceSample* linked = !job.occurrences.empty() ? &w.linked_occurrences : nullptr;
  const size_t settings = options_.compressions.size();
  const double u = double(AuxiliarySize(alloc_, bs, options_.copies));
  OccurrenceSample& sample = w.occurrences[r];
  const int stratum = bs >= rows_[r].block_bytes ? 0 : 1;
  for (size_t c = 0; c < settings; ++c) {
    const Compression comp = options_.compressions[c];
    const uint64_t t0 = ThreadCpuNanos();
    for (const auto& [offset, level] : w.occurrence_blocks) {
      const ByteView block(w.buffer.get() + offset, bs);
      const zfs::BlockWrite bw = codec::CompressZfsBlock(policy_, comp, block, false, w.compressor,
                                                         MutableByteView(w.scratch.get(), bs));
      auto add = [&](OccurrenceSums& o) {
        if (bw.kind == zfs::BlockKind::kEmbedded) {
          o.AddEmbedded(double(bs), u, double(bw.psize));
        } else {
          const zfs::BlockSpace space = alloc_.Block(bw.psize, options_.copies);
          o.AddStored(double(bs), u, double(bw.psize), double(space.dsize), double(space.asize));
        }
      };
      add(sample.At(c, stratum, level));
      if (linked != nullptr) {
        OccurrenceSums& l = linked->At(c, stratum, level);
        w.linked_cells.push_back(static_cast<uint32_t>(&l - linked->sums.data()));
        add(l);
      }
    }
    w.codec_ns[r * settings + c] += ThreadCpuNanos() - t0;
    w.codec_bytes[r * settings + c] += bs * w.occurrence_blocks.size();
  }
  if (linked == nullptr) return;
  std::sort(w.linked_cells.begin(), w.linked_cells.end());
  w.linked_cells.erase(std::unique(w.linked_cells.begin(), w.linked_cells.end()),
                       w.linked_cells.end());
  {
    std::lock_guard<std::mutex> lock(job.mu);
    for (uint32_t i : w.linked_cells) job.occurrences[r].sums[i].Merge(linked->sums[i]);
  }
  for (uint32_t i : w.linked_cells) linked->sums[i] = OccurrenceSums();
  w.linked_cells.clear();
}

void Scan::Process(Chunk& chunk, Worker& w) {
  FileJob& job = *chunk.file;
  if (chunk.length == 0) return;
  // A chunk is read and counted even when another chunk of the file has failed: what a file
  // that fails part-way leaves in the tables is every chunk that could be read, the same set
  // whatever order the threads reach them in (docs/inputs.md).
  if (abandoned_.load()) return;
  const uint64_t at = chunk.offset;
  try {
    std::optional<Reading> reading(std::in_place, this, job.path);  // until the I/O is done
    Result<io::File*> file = job.input->Open(fs_);
    if (!file.ok()) return job.Fail(at, file.status());
    // The chunk's records end at most at the next multiple of the largest block size.
    uint64_t fill_end = chunk.offset + chunk.length;
    for (const zfs::RecordLayout& l : job.layouts) {
      const uint64_t end = std::min(chunk.offset + chunk_bytes_,
                                    (fill_end + l.block_bytes - 1) / l.block_bytes * l.block_bytes);
      fill_end = std::max(fill_end, end);
    }
    Status s = ReadChunk(chunk, w, **file, fill_end);
    if (!s.ok()) return job.Fail(at, std::move(s));
    if (abandoned_.load()) return;  // no more I/O for a result already built
    if (chunk.offset + chunk.length == job.size) {
      // The last chunk: a byte past the size seen by the walk means the file grew while read.
      uint8_t probe = 0;
      Result<size_t> more = (*file)->ReadAt(job.size, MutableByteView(&probe, 1));
      if (more.ok() && *more > 0) {
        return job.Fail(at, Status::Changed("file grew while read: more than the " +
                                            std::to_string(job.size) + " bytes listed"));
      }
    }
    if (chunk.offset == 0 && chunk.length == job.size) {
      // The whole file in this chunk: one that changed while read never reaches the tables.
      // (A file of several chunks is checked once all are done: FinishFile.)
      if (Status same = job.input->CheckUnchanged(); !same.ok())
        return job.Fail(at, std::move(same));
    }
    reading.reset();
    WorkScope scope(this);
    if (!scope) return;  // abandoned while this chunk was read: the result is built already
    live_.read.fetch_add(chunk.read, std::memory_order_relaxed);
    MaybeApplyPlan();
    const CodecWork before = CodecWorkOf(w);
    w.live_ns = 0;
    {
      std::shared_lock<TableGate> gate = ShareTables();
      ProcessRows(chunk, w);
    }
    job.modelled.fetch_add(chunk.length, std::memory_order_relaxed);
    job.modelled_read.fetch_add(chunk.read, std::memory_order_relaxed);
    const CodecWork after = CodecWorkOf(w);
    chunk.codec_ns = after.ns - before.ns;
    chunk.codec_nominal_seconds = after.nominal_seconds - before.nominal_seconds;
    live_.codec_ns.fetch_add(chunk.codec_ns - w.live_ns, std::memory_order_relaxed);
    live_.unique.fetch_add(chunk.unique, std::memory_order_relaxed);
  } catch (const std::bad_alloc&) {
    job.Fail(at, Status::OutOfMemory("out of memory while processing this file"));
  } catch (const std::exception& e) {
    job.Fail(at, Status::Internal(e.what()));
  }
}

}  // namespace zsim::pipeline::internal
