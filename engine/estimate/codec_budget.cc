#include "engine/estimate/codec_budget.h"

namespace zsim::estimate {

int BudgetLevel(uint64_t planned_blocks) {
  int level = 0;
  while (level < kBudgetFractionLevel && (planned_blocks >> (level + 1)) >= kBudgetBlocks) ++level;
  return level;
}

}  // namespace zsim::estimate
