// engine/pipeline/cost_probe.h
//
// A read-ahead sample for the expected time (expected_time.h): what the work per byte of the
// whole tree will be, seen before the scan gets there. The work per byte changes along a tree
// (bench/results/2026-12-02-eta2): a VM store's template image is unique and coded, its clones
// and zeros later cost a read; a file server's directories differ 30x in codec cost per byte.
// The pace of the first tenth cannot see what comes later; the probe reads a little of all of it.
//
// Which blocks: the sizing walk's file sample (walk/file_sample.h), and in each long file the
// records at offsets that are multiples of a stride (a multiple of the block size, so a clone's
// probed records meet their twins'). A file shorter than the stride is probed, at offset 0, with
// probability size/short_stride (1 from that size on), by the hash of its name (the path's last
// component) and size: a copy of a short file keeps both (a copied tree, a database's template
// copies: bench/results/2026-12-03-s29-cost), so its twin is probed with it and found a
// duplicate, where by the whole path a copy was mostly probed alone and taken for unique (the
// database sample's unique bytes came out 24% high). By name and size, not by size alone: a
// database's thousands of 8 KiB files would be in or out together. Each probed record then
// stands for the bytes it was drawn for (a long file's record for its share of the file, a
// short file's for its size over its probability), times 2^level of the file sample (which
// cancels in the unique share, UniqueBytes, but keeps the records' weights true). So a copy of
// a long file meets its twin, and so does a copy of a short one under the same name (one
// renamed is taken for unique).
// What it measures: the bytes of the tree in distinct non-zero blocks (the blocks the codecs run
// on), and the codecs' CPU time per byte of them, each codec weighted by the share of blocks the
// scan codes with it (cost_forecast.h CostForecast::coded_shares), timed as the scan codes
// (pipeline/block_code.h CodeBlock). The codecs' cost per byte differs several times between
// blocks of one tree (6-41 ns per byte on the database sample), and only a few records
// (ProbeTimedRecords) can be timed under every codec: lz4, a few percent of the reference list's
// cost and rising and falling with it, is timed on every distinct record, and the few records' cost
// is taken relative to it (CodecCpuPerByte). Timing moves only the expected time, never a figure.
//
// The pilot (estimate/pilot_level.h): where PilotPlan asks, the probe also codes the
// kPilotRecords distinct records of lowest key with each sampled codec it names and with its
// anchor, and gives each codec the level PilotLevel finds at the unique blocks it estimates. In
// the first row the records themselves; in a row of larger blocks the block that holds each
// record, read again in that size (a block met twice counted once), with the unique bytes over
// that block size for the row's unique blocks. Those levels move figures, so they depend on
// the tree only: the records are a function of the file sample and the sizes, the points are
// taken in key order, and a probe that stops, fails or cannot read a record again gives none
// (the scan then keeps the budget's levels: pipeline/scan_levels.cc). They are published as soon as
// the pilot has run, before the codecs' timing below, which is at the pilot's shares (a database
// whose gzip-6 the pilot takes from 6,000 blocks to 1,500 would else be expected to take 2.6
// times its time at 10% of the scan).
//
// Cost: about 1/kProbeShare of the data read again (from the page cache, as the scan reads it
// just after), lz4 on the distinct records read, the codecs on ProbeTimedRecords records,
// about 1.5% of the forecast's codec time, and with a pilot its codecs on up to kPilotRecords
// blocks per piloted row (32 per codec on data that settles at once), read again. Under
// --max-rate every read of the probe's is paid from the scan's cap, up to two bursts ahead of
// the workers' queue (read_throttle.h AcquireAhead): behind it, the pilot answered only at the
// reading's end.
//
// Thread safety: the pure functions are. CostProbe runs on a thread of its own; figures() may
// be called from any thread.

#ifndef ZSIM_ENGINE_PIPELINE_COST_PROBE_H_
#define ZSIM_ENGINE_PIPELINE_COST_PROBE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "engine/base/byte_view.h"
#include "engine/codec/codec.h"
#include "engine/estimate/pilot_level.h"
#include "engine/io/file_system.h"
#include "engine/pipeline/expected_time.h"
#include "engine/pipeline/read_throttle.h"
#include "engine/walk/file_sample.h"
#include "engine/zfs/write_rules.h"
#include "zsim/scan_options.h"

namespace zsim::pipeline {

// The probe reads about 1/kProbeShare of the data bytes: at least kProbeMinRecords blocks' worth
// or kProbeMinBytes, the more; at most kProbeMaxRecords blocks' worth or that floor, the more;
// and at most 1/kProbeMostShare of the data or kProbeMinRecords blocks' worth, the more (a tree
// smaller than that is read whole); in at most kProbeMaxReads records. kProbeMinBytes: on
// /usr/include (121 MB of small files) 8 MiB drew unique shares of 0.49-0.80 over 40 draws,
// truth 0.615, 16 MiB 0.53-0.73 (bench/results/2026-12-04-s37-probe); lz4 on 16 MiB is some
// 30 ms of a core. kProbeMostShare: the probe shares the cores with the scan's first tenth, whose
// pace the expected time measures.
inline constexpr uint64_t kProbeShare = 64;
inline constexpr uint64_t kProbeMinRecords = 64;
inline constexpr uint64_t kProbeMinBytes = 16 << 20;
inline constexpr uint64_t kProbeMaxRecords = 512;
inline constexpr uint64_t kProbeMaxReads = 4096;
inline constexpr uint64_t kProbeMostShare = 8;

// The strides of a probe: a long file's records are read every `stride` bytes (a multiple of the
// block size); a file shorter than `stride` is read at offset 0 with probability
// size/short_stride (short_stride <= stride), or always when it is that long.
struct ProbeStrides {
  uint64_t stride = 0;
  uint64_t short_stride = 0;
};

// The strides for a tree of `data_bytes` read in blocks of `block_bytes`, whose files are `files`
// (the sizing walk's sample at `file_level`: apparent sizes), set by the bytes and records the
// probe reads of them (the bounds above; the sample's expected reads times the share of its
// apparent bytes that holds data, data_bytes over its bytes times 2^level): first the shortest
// stride, in whole blocks, with short files drawn at size/stride; then the shortest
// short_stride that the bytes and records left allow. By the bytes read, not a count of records:
// a record of a tree of small files reads a file, a few KiB, and 64 records, a stride of 14
// blocks, drew 74 files of /usr/include (8,392 files, 121 MB, groups of up to 59 copies), 3.9 MB;
// by bytes, 15 MB (bench/results/2026-12-04-s37-probe). With no sample, the data is taken as
// one long file.
ProbeStrides ProbeStridesFor(const std::vector<walk::SampledFile>& files, int file_level,
                             uint64_t data_bytes, uint64_t block_bytes);

// The records probed in a file of `size` bytes: `count` of them (0: not probed), record k at
// offset k * stride, and the bytes of the tree each of them stands for (before the file sample's
// 2^level). A count, not a list: a sparse file's apparent size may be petabytes.
struct ProbedRecords {
  uint64_t count = 0;
  uint64_t stride = 0;
  double bytes_each = 0;
  bool short_file = false;  // shorter than the stride: drawn by chance (ProbeStrides)
};
ProbedRecords ProbedRecordsOf(std::string_view path, uint64_t size, const ProbeStrides& strides);

// The first record k' >= k of `p` that holds data in `file` (of `size` bytes, records of
// `block_bytes`), stepping over holes with SEEK_DATA: nullopt when none is left. A record wholly
// in a hole has no data and costs the scan nothing: skipping it changes no figure (UniqueBytes
// leaves holes out). So the records visited are bounded by the file's data, not its apparent
// size. A file system without hole support: every record holds data.
std::optional<uint64_t> NextProbedRecord(io::File& file, uint64_t size, const ProbedRecords& p,
                                         uint64_t k, uint64_t block_bytes);

// How many of the distinct records the codecs are timed on, taken in the order of `lsizes`
// (their block sizes, as the scan codes them): the fewest whose nominal cost for the whole codec
// list (`nominal_seconds_per_byte` times their bytes) reaches 1.5% of the forecast's codec CPU
// seconds, within [kProbeMinTimed, kProbeMaxTimed] (all of them when fewer). By each record's
// own size, not the block size: a tree of small files has small records, and counting each as a
// whole block timed a tenth of the budget's bytes. On the source sample (4,508 files of 12 KiB
// on average) that was 8 records, whose cost per byte came out 0.97-1.32 times the scan's
// (median 1.16); with 64, 1.01-1.11 (bench/results/2026-12-03-s31-cost).
inline constexpr size_t kProbeMinTimed = 8;
inline constexpr size_t kProbeMaxTimed = 64;
size_t ProbeTimedRecords(double forecast_codec_cpu_seconds, double nominal_seconds_per_byte,
                         const std::vector<uint64_t>& lsizes);

// One probed record, as the probe measured it.
struct ProbedRecord {
  uint64_t key = 0;  // the record's hash (xxh3-64 of its bytes)
  bool is_zero = false;
  double stands_for = 0;    // bytes of the tree it stands for
  bool short_file = false;  // a short file's, drawn by chance (ProbedRecordsOf)
};

// A distinct non-zero record as the probe timed it: what it stands for, its data bytes, lz4's
// thread CPU nanoseconds on it, and the scan's codecs' (each weighted by its coded share), or a
// negative value when the codecs were not timed on it.
struct TimedRecord {
  double stands_for = 0;
  uint64_t bytes = 0;
  double lz4_ns = 0;
  double codecs_ns = -1;
};

// The codecs' CPU seconds per unique byte of the tree, a regression estimator (Cochran,
// "Sampling Techniques", 7.1): the timed records' mean cost per byte, corrected by the slope of
// their cost on lz4's times how far lz4's mean over every record is from its mean over the timed
// ones. Means weighted by the bytes each record stands for (each stands for as many bytes of the
// tree, whatever its size: a tiny file's fixed cost per call counts as often as the tree holds
// such files). The slope is never negative, and lz4's cost per byte of a record outside the
// timed records' range is held to it (the line is not extended past them). With fewer than 3
// timed records, or no spread in lz4's cost among them, their mean alone; 0 when none was timed.
// On the database sample the plain mean of 10 timed records was 1.3-1.4 times the scan's codec
// cost per byte, the regression within 8% (bench/results/2026-12-03-s29-cost).
double CodecCpuPerByte(const std::vector<TimedRecord>& records);

// The tree's bytes in distinct non-zero blocks, from the probed records: the bytes of the
// distinct non-zero keys (each key counted once, with what its first record stands for) as a
// share of the data the probe covered, times the tree's `data_bytes` (the sizing walk's). The
// data covered is what the long files' records stand for (every record of a long file is
// probed, holes aside) plus `short_bytes`, the short files' bytes, drawn or not: known, so not
// estimated from the draw. From the draw (the sum of what the records stand for), a group of
// copies of a short file (59 copies of each of node's OpenSSL headers in /usr/include) added 59
// strides of data to one of unique bytes when drawn and nothing when not, and the unique share
// of /usr/include came out 0.27-1.00 over 40 draws, truth 0.615; with the bytes known, 0.46-0.77
// at the same strides (bench/results/2026-12-04-s37-probe).
double UniqueBytes(const std::vector<ProbedRecord>& records, double short_bytes,
                   uint64_t data_bytes);

// What the pilot raises: per (row, setting), row-major as estimate::BudgetLevels, the budget's
// level of a sampled codec the pilot may raise (estimate/pilot_level.h PilotBudgetLevels), or -1
// for one it leaves alone; per setting the setting it codes its anchor with (-1: lsize); and per
// row its planned blocks (estimate::PlannedBlocks: at least its unique ones), on which the pilot
// foresees the interval top-up (0: not known, nothing foreseen), and per (row, setting) whether
// that top-up could take the setting at the end (the scan runs it; no plan anchor; the plain
// budget's level, not one the cap raised), the only ones it foresees. Empty: no pilot.
struct PilotPlan {
  std::vector<int> budget_levels;
  std::vector<int> anchors;
  std::vector<uint64_t> planned_blocks;
  std::vector<bool> foreseeable;
};

// One block the pilot codes: its bytes as the scan codes them, the blocks of the tree it stands
// for, and whether the row met the same block before (then skipped).
struct PilotBlock {
  ByteView bytes;
  double weight = 0;
  bool repeat = false;
};

class CostProbe {
 public:
  // Starts reading at once, on its own thread. `shares`: cost_forecast.h
  // CostForecast::coded_shares. `throttle`: the scan's --max-rate (null: none); every read of
  // the probe's, the pilot's second reads too, waits on it as the scan's own reads do, so the
  // cap holds for all the bytes the scan asks of the disks.
  CostProbe(io::FileSystem* fs, std::vector<walk::SampledFile> files, int file_level,
            uint64_t data_bytes, const ScanOptions& options, const zfs::WritePolicy& policy,
            std::vector<double> shares, double forecast_codec_cpu_seconds, PilotPlan pilot = {},
            std::shared_ptr<ReadThrottle> throttle = nullptr);
  // Stops the reading (at the next record) and joins its thread.
  ~CostProbe();
  CostProbe(const CostProbe&) = delete;
  CostProbe& operator=(const CostProbe&) = delete;

  // Asks the probe to stop without waiting: it starts no I/O after the one under way, if any
  // (an abandoned scan's, whose reads may hang: the destructor joins later).
  void Stop();

  // The pilot's levels once it has given them (per (row, setting), row-major: PilotLevel for
  // those PilotPlan names, or 0 for those it foresees the interval top-up coding whole
  // (estimate/interval_top_up.h ForeseenWhole), -1 for the others; empty when it could not read
  // its records again);
  // nullopt before, and for good where no pilot runs or the probe stopped or failed first
  // (finished()).
  std::optional<std::vector<int>> pilot_levels() const;
  // The probe's thread has ended, whatever its outcome.
  bool finished() const;

  // The figures once the probe has finished (nullopt before, after a read error, and after a
  // failure).
  std::optional<ProbeFigures> figures() const;
  // The probe ended on an exception (an allocation, a codec): it gives no figures, and the
  // expected time goes on without them. The scan's figures never depend on the probe.
  bool failed() const;

 private:
  void Run(std::vector<walk::SampledFile> files, int file_level, uint64_t data_bytes,
           double forecast_codec_cpu_seconds);
  // The pilot of one row over the distinct records of lowest key: `block_of(i)` gives the row's
  // block holding the i-th of `records` (nullopt: it cannot be read again), `budget_levels` the
  // row's slice of PilotPlan::budget_levels, `unique_blocks` the row's. The row's levels (per
  // setting, -1 for those left alone); empty when a block cannot be read again, or on Stop.
  std::vector<int> RunPilot(const int* budget_levels, size_t records,
                            const std::function<std::optional<PilotBlock>(size_t)>& block_of,
                            uint64_t block_bytes, double unique_bytes, uint64_t planned_blocks,
                            const std::vector<bool>& foreseeable, codec::Compressor& compressor,
                            uint8_t* scratch);
  // Whether `path` is opened through a symlink, as the scan opens it.
  bool Follow(const std::string& path) const;
  // Reads `dst.size()` bytes at `offset` of `file` whole, after waiting on the throttle if any;
  // false on an error or on Stop during the wait.
  bool Read(io::File& file, uint64_t offset, MutableByteView dst);

  io::FileSystem* fs_;
  ScanOptions options_;
  zfs::WritePolicy policy_;
  std::vector<double> shares_;
  PilotPlan pilot_;
  std::shared_ptr<ReadThrottle> throttle_;  // shared: an abandoned scan's probe may outlive it
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  std::atomic<bool> failed_{false};
  std::atomic<bool> finished_{false};
  std::atomic<bool> pilot_done_{false};
  ProbeFigures figures_;           // written before done_ (release), read after it (acquire)
  std::vector<int> pilot_levels_;  // written before pilot_done_ (release)
  std::thread thread_;
};

}  // namespace zsim::pipeline

#endif  // ZSIM_ENGINE_PIPELINE_COST_PROBE_H_
