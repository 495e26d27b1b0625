// The output size a stored code records (ddt::OutputUnitsOf), from which the rare-class census
// reads its classes (estimate/anchor_class.h): the same for every kind of code.

#include <gtest/gtest.h>

#include "engine/ddt/dedup_table.h"

namespace zsim::ddt {
namespace {

TEST(OutputUnitsTest, RawLeastBudgetAndRoundedCodesReadTheSameOutputSize) {
  // An output of 5,000 bytes: 10 units in every kind.
  EXPECT_EQ(OutputUnitsOf(EncodeRawLength(5000)), 10u);
  EXPECT_EQ(OutputUnitsOf(EncodeLeastBudget(5000, 5100)), 10u);
  EXPECT_EQ(OutputUnitsOf(EncodeLeastBudget(5000, 5200)), 10u);  // least in the next unit
  EXPECT_EQ(OutputUnitsOf(EncodeAllocated(5120)), 10u);
  // Small outputs: 0 units, whatever the least budget.
  EXPECT_EQ(OutputUnitsOf(EncodeRawLength(100)), 0u);
  EXPECT_EQ(OutputUnitsOf(EncodeLeastBudget(100, 100)), 0u);
  EXPECT_EQ(OutputUnitsOf(EncodeLeastBudget(100, 400)), 0u);
  EXPECT_EQ(OutputUnitsOf(EncodeEmbedded(100)), 0u);
  // Did not fit.
  EXPECT_EQ(OutputUnitsOf(EncodeRawLength(std::nullopt)), kNoFitUnits);
  EXPECT_EQ(OutputUnitsOf(EncodeLeastBudget(std::nullopt, 0)), kNoFitUnits);
  // The largest outputs a least-budget code holds.
  EXPECT_EQ(OutputUnitsOf(EncodeLeastBudget(uint64_t{kLeastLastUnit} * 512 - 100,
                                            uint64_t{kLeastLastUnit} * 512 + 200)),
            uint64_t{kLeastLastUnit});
}

}  // namespace
}  // namespace zsim::ddt
