#include "engine/mpi/distributed_top_up.h"

#include <mpi.h>

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <unordered_set>

#include "engine/estimate/codec_budget.h"
#include "engine/estimate/interval_top_up.h"
#include "engine/estimate/sample_level.h"
#include "engine/estimate/top_up.h"
#include "engine/mpi/entry_wire.h"
#include "engine/mpi/partition.h"
#include "engine/pipeline/scan.h"

namespace zsim::mpi {
namespace {

// A wanted key on the wire: key (16 bytes) and lsize (8).
constexpr size_t kWantedBytes = 24;

// Every rank's `mine`, one after the other, on every rank.
std::string AllGather(const std::string& mine, int size) {
  const int n = static_cast<int>(mine.size());
  const size_t ranks = static_cast<size_t>(size);
  std::vector<int> counts(ranks), at(ranks);
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (int d = 0; d < size; ++d) {
    at[size_t(d)] = total;
    total += counts[size_t(d)];
  }
  std::string all(size_t(total), '\0');
  MPI_Allgatherv(mine.data(), n, MPI_BYTE, all.data(), counts.data(), at.data(), MPI_BYTE,
                 MPI_COMM_WORLD);
  return all;
}

// out[d] to rank d, for every d; returns what every rank sent this one, one after the other.
std::string AllToAll(const std::vector<std::string>& out, int size) {
  const size_t ranks = static_cast<size_t>(size);
  std::vector<int> send(ranks), send_at(ranks), recv(ranks), recv_at(ranks);
  std::string flat;
  for (int d = 0; d < size; ++d) {
    send_at[size_t(d)] = static_cast<int>(flat.size());
    send[size_t(d)] = static_cast<int>(out[size_t(d)].size());
    flat += out[size_t(d)];
  }
  MPI_Alltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (int d = 0; d < size; ++d) {
    recv_at[size_t(d)] = total;
    total += recv[size_t(d)];
  }
  std::string got(size_t(total), '\0');
  MPI_Alltoallv(flat.data(), send.data(), send_at.data(), MPI_BYTE, got.data(), recv.data(),
                recv_at.data(), MPI_BYTE, MPI_COMM_WORLD);
  return got;
}

// pipeline::IntervalCells of row r over every rank's shard of the table (each entry has one
// owner: the sums are one process's).
std::vector<estimate::IntervalCell> SummedIntervalCells(const ScanOptions& options,
                                                        const state::SamplingState& merged,
                                                        size_t r, const ddt::DedupTable& table) {
  std::vector<estimate::IntervalCell> cells = pipeline::IntervalCells(options, merged, r, table);
  if (cells.empty()) return cells;  // no candidate: alike on every rank (the merged levels)
  // Per setting: the moments of each level's sample, then the units and the bytes not coded.
  constexpr size_t kMoments = 6;
  constexpr size_t kFields = (estimate::kMaxSampleLevel + 1) * kMoments + 2;
  std::vector<double> wire(cells.size() * kFields);
  for (size_t c = 0; c < cells.size(); ++c) {
    double* f = wire.data() + c * kFields;
    for (const estimate::RatioEstimator& r : cells[c].per_level) {
      const estimate::RatioEstimator::Moments m = r.moments();
      const double moments[kMoments] = {double(m.n), m.sx, m.sy, m.sxx, m.syy, m.sxy};
      f = std::copy(moments, moments + kMoments, f);
    }
    f[0] = cells[c].units;
    f[1] = cells[c].below_bytes;
  }
  MPI_Allreduce(MPI_IN_PLACE, wire.data(), static_cast<int>(wire.size()), MPI_DOUBLE, MPI_SUM,
                MPI_COMM_WORLD);
  for (size_t c = 0; c < cells.size(); ++c) {
    const double* f = wire.data() + c * kFields;
    for (estimate::RatioEstimator& r : cells[c].per_level) {
      r = estimate::RatioEstimator::FromMoments(
          {static_cast<uint64_t>(f[0]), f[1], f[2], f[3], f[4], f[5]});
      f += kMoments;
    }
    cells[c].units = f[0];
    cells[c].below_bytes = f[1];
  }
  return cells;
}

}  // namespace

std::vector<RowTopUp> TopUpDistributed(const std::vector<ddt::DedupTable*>& tables,
                                       const pipeline::SkippedBlocks& skipped,
                                       const state::SamplingState& sampling, bool complete,
                                       const ScanOptions& options, bool written_keys,
                                       io::FileSystem* fs, int size,
                                       const std::atomic<bool>* cancel, const TopUpTelling& telling,
                                       pipeline::TopUpStats* stats) {
  std::vector<RowTopUp> out(tables.size());
  const size_t settings = options.compressions.size();
  // Alike on every rank (the same options), so that every rank enters the collectives below.
  if (sampling.setting_levels.size() != tables.size() * settings) return out;
  int all_complete = complete;
  MPI_Allreduce(MPI_IN_PLACE, &all_complete, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (!all_complete) return out;
  // The levels the merge of the ranks' states takes, and the plan (each rank sized the whole).
  state::SamplingState merged = sampling;
  MPI_Allreduce(MPI_IN_PLACE, merged.setting_levels.data(),
                static_cast<int>(merged.setting_levels.size()), MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &merged.planned_bytes, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &merged.planned_files, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  const std::vector<int> planned = estimate::BudgetLevels(options, merged.sampled, merged.plan());
  pipeline::RecodeSpec spec{state::CodeKind::kEarlyAbort,
                            state::ProbeColumns(state::CodeKind::kEarlyAbort, options.compressions),
                            state::KeyColumns(options, state::CodeKind::kEarlyAbort, written_keys),
                            0};
  // --max-rate: this rank's reads again, as its scan's.
  std::unique_ptr<pipeline::ReadThrottle> throttle;
  if (options.max_read_bytes_per_second) {
    throttle = std::make_unique<pipeline::ReadThrottle>(options.max_read_bytes_per_second,
                                                        pipeline::ChunkBytes(options));
  }
  // Every row's plan first, as one process plans them (the tables do not change until they are
  // coded), so that the cost can be told before anything is read again: what each rank's owned
  // entries ask for, summed (each entry has one owner).
  struct RowPlan {
    size_t r;
    std::vector<int> to;
    std::vector<pipeline::TopUpBlock> owned;
    uint64_t unique_bytes;
  };
  std::vector<RowPlan> plans;
  pipeline::TopUpPlanned told;
  told.codec_bytes.assign(tables.size() * settings, 0);
  for (size_t r = 0; r < tables.size(); ++r) {
    const ddt::DedupTable& table = *tables[r];
    // Entries, unique bytes, and the reasons a process would not top the row up.
    const ddt::UniqueBlocks unique = ddt::UniqueBlocksOf(table);
    uint64_t sums[3] = {table.entries(), unique.blocks, unique.bytes};
    int against = table.sample_shift() != 0 || table.overflowed() || skipped.overflowed(r);
    MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &against, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (against || sums[0] > estimate::kTopUpMaxBlocks) continue;
    std::vector<int> to =
        pipeline::RowTopUpLevels(options, merged, planned, r, ddt::UniqueBlocks{sums[1], sums[2]},
                                 SummedIntervalCells(options, merged, r, table));
    if (std::all_of(to.begin(), to.end(), [](int level) { return level < 0; })) continue;
    std::vector<pipeline::TopUpBlock> owned = pipeline::WantedBlocks(table, to);
    for (const pipeline::TopUpBlock& b : owned) {
      told.blocks += 1;
      told.bytes += b.lsize;
      const int level = estimate::SampleLevel(b.key.lo);
      for (size_t c = 0; c < settings; ++c) {
        if (pipeline::TopUpCodes(to, c, level)) told.codec_bytes[r * settings + c] += b.lsize;
      }
    }
    plans.push_back(RowPlan{r, std::move(to), std::move(owned), sums[2]});
  }
  // An interrupt on any rank before anything is read again: nothing read, nor told (as one
  // process), the rows left on every rank.
  int interrupted = cancel && cancel->load();
  MPI_Allreduce(MPI_IN_PLACE, &interrupted, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  if (interrupted) return out;
  // Alike on every rank: `plans` follows the sums, which every rank has.
  if (!plans.empty()) {
    uint64_t counts[2] = {told.blocks, told.bytes};
    MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    told.blocks = counts[0];
    told.bytes = counts[1];
    MPI_Allreduce(MPI_IN_PLACE, told.codec_bytes.data(), static_cast<int>(told.codec_bytes.size()),
                  MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    // The codecs' speeds over every rank's scan.
    std::vector<double> seconds = telling.codec_seconds;
    std::vector<uint64_t> bytes = telling.codec_bytes;
    seconds.resize(settings, 0);
    bytes.resize(settings, 0);
    MPI_Allreduce(MPI_IN_PLACE, seconds.data(), static_cast<int>(settings), MPI_DOUBLE, MPI_SUM,
                  MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, bytes.data(), static_cast<int>(settings), MPI_UINT64_T, MPI_SUM,
                  MPI_COMM_WORLD);
    if (telling.told) {
      telling.told(pipeline::ForecastTopUpOf(options, told, seconds, bytes,
                                             estimate::RowBlockSizes(options),
                                             std::max(1, telling.threads)));
    }
  }
  for (RowPlan& plan : plans) {
    const size_t r = plan.r;
    const ddt::DedupTable& table = *tables[r];
    const std::vector<int>& to = plan.to;
    const std::vector<pipeline::TopUpBlock>& owned = plan.owned;

    // This rank's entries to code, to every rank.
    std::string mine;
    for (const pipeline::TopUpBlock& b : owned) {
      PutWire<uint64_t>(&mine, b.key.lo);
      PutWire<uint64_t>(&mine, b.key.hi);
      PutWire<uint64_t>(&mine, b.lsize);
    }
    const std::string wanted = AllGather(mine, size);
    std::vector<pipeline::TopUpBlock> blocks(wanted.size() / kWantedBytes);
    for (size_t i = 0; i < blocks.size(); ++i) {
      const char* p = wanted.data() + i * kWantedBytes;
      blocks[i].key = ddt::Fingerprint{GetWire<uint64_t>(p), GetWire<uint64_t>(p + 8)};
      blocks[i].lsize = GetWire<uint64_t>(p + 16);
    }
    // Those this rank listed, read again and coded, to their owners.
    pipeline::PlaceBlocks(skipped.row(r), &blocks);
    spec.columns = table.settings();
    const size_t columns = spec.columns;
    std::vector<ddt::PsizeCode> codes;
    std::vector<uint64_t> codec_ns(settings, 0), codec_bytes(settings, 0);
    state::TopUpRecord& record = out[r].record;
    const double start = MPI_Wtime();
    int failed = !pipeline::RecodeBlocks(options, fs, skipped.items(), blocks, to, spec,
                                         pipeline::RecodeControl{throttle.get(), cancel, nullptr},
                                         &codes, codec_ns, codec_bytes, &record);
    std::vector<std::string> answers(static_cast<size_t>(size));
    for (size_t i = 0; i < blocks.size() && !failed; ++i) {
      if (blocks[i].item == pipeline::SkippedBlocks::kNoItem) continue;
      std::string& a = answers[size_t(OwnerOfShard(ddt::DedupTable::ShardOf(blocks[i].key), size))];
      PutWire<uint64_t>(&a, blocks[i].key.lo);
      PutWire<uint64_t>(&a, blocks[i].key.hi);
      for (size_t c = 0; c < columns; ++c) PutWire<uint16_t>(&a, codes[i * columns + c]);
    }
    const std::string got = AllToAll(answers, size);
    // The owner's codes (a key several ranks listed comes from each: the same codes).
    std::unordered_set<ddt::TableKey, ddt::TableKeyHash> answered;
    std::vector<ddt::PsizeCode> entry(columns);
    const size_t answer_bytes = 16 + 2 * columns;
    for (size_t at = 0; at + answer_bytes <= got.size(); at += answer_bytes) {
      const char* p = got.data() + at;
      const ddt::Fingerprint key{GetWire<uint64_t>(p), GetWire<uint64_t>(p + 8)};
      for (size_t c = 0; c < columns; ++c) entry[c] = GetWire<uint16_t>(p + 16 + 2 * c);
      tables[r]->SetCodes(key, entry);
      answered.insert(ddt::TableKey(key));
    }
    for (const pipeline::TopUpBlock& b : owned) {
      if (!answered.contains(ddt::TableKey(b.key))) failed = 1;
    }
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    int stopped = cancel && cancel->load();
    MPI_Allreduce(MPI_IN_PLACE, &stopped, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    // The blocks coded: each wanted one, as one process reads each once (a key several ranks
    // listed was read by each); where the row failed, what the ranks read before. The row's wall
    // time (the slowest rank's), and where it failed the first rank's reason.
    uint64_t read_again[2] = {record.blocks, record.bytes};
    MPI_Allreduce(MPI_IN_PLACE, read_again, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    record.blocks = read_again[0];
    record.bytes = read_again[1];
    if (!failed) {
      record.blocks = blocks.size();
      record.bytes = 0;
      for (const pipeline::TopUpBlock& b : blocks) record.bytes += b.lsize;
    }
    record.seconds = MPI_Wtime() - start;
    MPI_Allreduce(MPI_IN_PLACE, &record.seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    stats->reread += record.blocks;
    stats->reread_bytes += record.bytes;
    if (failed) {
      std::string reason = record.left;
      reason.push_back('\0');
      const std::string reasons = AllGather(reason, size);  // each ends in a NUL
      record.left.clear();
      for (size_t at = 0; record.left.empty() && at < reasons.size();) {
        const size_t end = reasons.find('\0', at);
        record.left = reasons.substr(at, end - at);
        at = end + 1;
      }
      if (record.left.empty()) record.left = "a block to code was read again by no rank";
    }
    // The codecs' work of every rank, for the report's speeds (as one process counts its own).
    MPI_Allreduce(MPI_IN_PLACE, codec_ns.data(), static_cast<int>(settings), MPI_UINT64_T, MPI_SUM,
                  MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, codec_bytes.data(), static_cast<int>(settings), MPI_UINT64_T,
                  MPI_SUM, MPI_COMM_WORLD);
    out[r].codec_ns = std::move(codec_ns);
    out[r].codec_bytes = std::move(codec_bytes);
    if (failed) {
      ++stats->failed_rows;
    } else {
      out[r].to = to;
      out[r].unique_bytes = plan.unique_bytes;
      ++stats->rows;
    }
    // An interrupt on any rank: the rows after this one are not taken up, on every rank (as one
    // process leaves them).
    if (stopped) break;
  }
  return out;
}

void ApplyTopUp(const std::vector<RowTopUp>& rows, state::ScanState* state) {
  for (size_t r = 0; r < rows.size() && r < state->rows.size(); ++r) {
    state::RowState& row = state->rows[r];
    for (size_t c = 0; c < rows[r].codec_ns.size() && c < row.codec_seconds.size(); ++c) {
      row.codec_seconds[c] += static_cast<double>(rows[r].codec_ns[c]) * 1e-9;
      row.codec_bytes[c] += rows[r].codec_bytes[c];
    }
    row.top_up = rows[r].record;
    if (!rows[r].to.empty()) {
      pipeline::SetToppedRow(&state->sampling, rows.size(), r, rows[r].to, rows[r].unique_bytes);
    }
  }
}

}  // namespace zsim::mpi
