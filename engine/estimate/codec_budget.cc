#include "engine/estimate/codec_budget.h"

#include <algorithm>
#include <cmath>

#include "engine/estimate/anchor_class.h"
#include "engine/estimate/codec_cost.h"
#include "engine/zfs/write_rules.h"

namespace zsim::estimate {

namespace {

// A wish per sampled (row, setting): its budget's blocks as a real number (not the blocks at a
// level, which halve at each step: a sawtooth would let a level fall as the tree grows), each a
// whole block's bytes, but never more than the tree's bytes (small files' blocks are small).
// The codec time of a level: the tree's bytes at that level. Both only grow with the plan.
struct Cell {
  size_t index;
  double bytes;             // the planned bytes (every row's)
  double seconds_per_byte;  // nominal codec time of one byte
  double wish;              // seconds
  int floor_level;          // the highest level the cap may raise it to (kCapFloorBlocks)
};

// The highest level at which `blocks` planned blocks leave kCapFloorBlocks: 0 for fewer.
int FloorLevel(double blocks) {
  int level = 0;
  while (level < kMaxSampleLevel && std::ldexp(blocks, -(level + 1)) >= double(kCapFloorBlocks)) {
    ++level;
  }
  return level;
}

// `cap` shared out as water fills vessels (codec_budget.h BudgetLevels): raises `levels`, and
// returns the share.
double ShareTheCap(std::vector<Cell> cells, double cap, std::vector<int>* levels_out) {
  std::vector<int>& levels = *levels_out;
  // The share: the smallest wishes granted in full while the rest split what is left evenly.
  std::sort(cells.begin(), cells.end(),
            [](const Cell& a, const Cell& b) { return a.wish < b.wish; });
  double left = cap, share = 0;
  for (size_t k = 0; k < cells.size(); ++k) {
    share = left / double(cells.size() - k);
    if (cells[k].wish > share) break;
    left -= cells[k].wish;
  }
  for (const Cell& cell : cells) {
    if (cell.wish <= share) continue;
    int& level = levels[cell.index];
    while (level < cell.floor_level &&
           std::ldexp(cell.bytes, -level) * cell.seconds_per_byte > share) {
      ++level;
    }
  }
  return share;
}

}  // namespace

bool NearAnchorsLowerLevels(const ScanOptions& options) {
  return zfs::PsizeRoundingUnit(zfs::DedupPolicyOf(options.profile, options.vdev,
                                                   options.ashift)) <= zfs::kMinBlockBytes;
}

uint64_t PlannedBlocks(const Plan& plan, uint64_t block_bytes) {
  return block_bytes ? std::max(plan.bytes / block_bytes, plan.files) : 0;
}

int BudgetLevel(uint64_t planned_blocks) {
  int level = 0;
  while (level < kBudgetFractionLevel && (planned_blocks >> (level + 1)) >= kBudgetBlocks) ++level;
  return level;
}

namespace {

// The budget's blocks of a row of `block_bytes` for a tree of `plan`, as a real number (no
// sawtooth: see Cell), and the tree's blocks in that row.
struct RowBudget {
  double blocks;
  double budget;
};
RowBudget RowBudgetOf(const Plan& plan, uint64_t block_bytes) {
  // Blocks as a real number where the bytes make them, else the files.
  const double blocks =
      std::max(double(plan.bytes) / double(block_bytes), double(PlannedBlocks(plan, block_bytes)));
  const double budget =
      std::min(blocks, std::max(double(kBudgetBlocks), std::ldexp(blocks, -kBudgetFractionLevel)));
  return RowBudget{blocks, budget};
}

// The seconds a codec of `speed` wishes for in a row: the budget's blocks at a whole block's
// bytes each, at most the tree's bytes. An overestimate where small files make the blocks (their
// mean bytes, the true cost, can fall as small files come in, and with it a level; this cannot),
// and for a tree of large files what the blocks cost.
double WishSeconds(const Plan& plan, uint64_t block_bytes, double speed) {
  const RowBudget row = RowBudgetOf(plan, block_bytes);
  return std::min(double(plan.bytes), row.budget * double(block_bytes)) / speed;
}

// The cells of row r's sampled settings with a codec.
std::vector<Cell> RowCells(const ScanOptions& options, const std::vector<bool>& sampled,
                           const Plan& plan, size_t r, uint64_t block_bytes) {
  const size_t settings = options.compressions.size();
  const RowBudget row = RowBudgetOf(plan, block_bytes);
  std::vector<Cell> cells;
  for (size_t c = 0; c < settings && c < sampled.size(); ++c) {
    if (!sampled[c]) continue;
    const double speed = NominalCodecBytesPerSecond(options.compressions[c]);
    if (speed <= 0) continue;
    cells.push_back(Cell{r * settings + c, double(plan.bytes), 1.0 / speed,
                         WishSeconds(plan, block_bytes, speed), FloorLevel(row.blocks)});
  }
  return cells;
}

// BudgetLevels, and the share of the cap each costly setting got (kCapSeconds where the cap does
// not bind): it only shrinks as the plan grows (the wishes only grow).
std::vector<int> LevelsAndShare(const ScanOptions& options, const std::vector<bool>& sampled,
                                const Plan& plan, double* share) {
  const std::vector<uint64_t> rows = RowBlockSizes(options);
  const size_t settings = options.compressions.size();
  std::vector<int> levels(rows.size() * settings, 0);
  *share = kCapSeconds;
  std::vector<Cell> cells;
  double wishes = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r] == 0) continue;
    const int level = BudgetLevelOf(plan, rows[r]);
    for (size_t c = 0; c < settings && c < sampled.size(); ++c) {
      if (sampled[c]) levels[r * settings + c] = level;
    }
    for (const Cell& cell : RowCells(options, sampled, plan, r, rows[r])) {
      cells.push_back(cell);
      wishes += cell.wish;
    }
  }
  if (wishes > kCapSeconds) *share = ShareTheCap(cells, kCapSeconds, &levels);
  // A setting that follows a near anchor (sample_level.h NearAnchors) coded whole in its row
  // codes half the row's blocks, where the row plans enough of them for half to be a sample and
  // psize rounds to 512 bytes (NearAnchorsLowerLevels). Never a fall as the tree grows: the
  // anchor stops being coded whole only at a budget level of 1 or more, or when the cap raises
  // it, and then the follower, costlier per block by kNearAnchorSpeedup, is raised at least as
  // far.
  if (!NearAnchorsLowerLevels(options)) return levels;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r] == 0 || PlannedBlocks(plan, rows[r]) < kNearAnchorMinBlocks) continue;
    std::vector<bool> whole(settings, false);
    for (size_t c = 0; c < settings; ++c) whole[c] = levels[r * settings + c] == 0;
    const std::vector<int> near = NearAnchors(options.compressions, whole);
    for (size_t c = 0; c < settings && c < sampled.size(); ++c) {
      if (!sampled[c] || near[c] < 0) continue;
      int& level = levels[r * settings + c];
      level = std::max(level, kNearAnchorLevel);
    }
  }
  return levels;
}

}  // namespace

std::vector<int> BudgetLevels(const ScanOptions& options, const std::vector<bool>& sampled,
                              const Plan& plan) {
  double share = 0;
  return LevelsAndShare(options, sampled, plan, &share);
}

std::vector<bool> RareClassCensus(const ScanOptions& options, const std::vector<bool>& sampled,
                                  const Plan& plan) {
  double share = 0;
  LevelsAndShare(options, sampled, plan, &share);
  const std::vector<uint64_t> rows = RowBlockSizes(options);
  const std::vector<int> anchors = PlanSampling(options.compressions, options.exact).anchors;
  const size_t settings = options.compressions.size();
  std::vector<bool> out(rows.size() * settings, false);
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t c = 0; c < settings && c < sampled.size() && c < anchors.size(); ++c) {
      const double speed = NominalCodecBytesPerSecond(options.compressions[c]);
      if (!sampled[c] || anchors[c] < 0 || speed <= 0) continue;
      const double most = double(kAnchorClasses) * double(kRareClassBlocks) * double(rows[r]);
      out[r * settings + c] = most / speed <= kRareClassShareOfTheCap * share;
    }
  }
  return out;
}

const std::vector<Compression>& CostReferenceCompressions() {
  using A = CompressionAlgorithm;
  static const std::vector<Compression> list = {{A::kOff, 0},  {A::kLz4, 0},  {A::kZstd, 3},
                                                {A::kGzip, 6}, {A::kLzjb, 0}, {A::kZle, 0}};
  return list;
}

double ReferenceCodecWishSeconds(const Plan& plan, uint64_t block_bytes) {
  if (block_bytes == 0) return 0;
  double seconds = 0;
  for (const Compression& c : CostReferenceCompressions()) {
    const double speed = NominalCodecBytesPerSecond(c);
    if (speed > 0) seconds += WishSeconds(plan, block_bytes, speed);
  }
  return seconds;
}

void CapRowAtReferenceScans(const ScanOptions& options, const std::vector<bool>& sampled,
                            const Plan& plan, size_t r, std::vector<int>* levels) {
  const std::vector<uint64_t> rows = RowBlockSizes(options);
  if (r >= rows.size() || rows[r] == 0) return;
  // The reference codecs, whatever the profile (v23's are among them): the levels must not
  // change with the profile, which a report of a saved state may set otherwise than its scan
  // (finish/finish.cc CheckBudgetLevels, finish/known_codes.h).
  const std::vector<Compression>& defaults = CostReferenceCompressions();
  const double reference = ReferenceCodecWishSeconds(plan, rows[r]);
  // The reference codecs are not raised further here; their whole wishes (the reference scan's
  // cost, more than theirs where the constant cap raised them: a bound on the safe side) are taken
  // from the cap, and the rest share what is left.
  const size_t settings = options.compressions.size();
  double left = kListCostFactor * reference / double(rows.size());
  std::vector<Cell> others;
  double wishes = 0;
  for (const Cell& cell : RowCells(options, sampled, plan, r, rows[r])) {
    const Compression& c = options.compressions[cell.index % settings];
    if (std::find(defaults.begin(), defaults.end(), c) != defaults.end()) {
      left -= cell.wish;
    } else {
      others.push_back(cell);
      wishes += cell.wish;
    }
  }
  if (wishes > left) ShareTheCap(others, std::max(left, 0.0), levels);
}

}  // namespace zsim::estimate
