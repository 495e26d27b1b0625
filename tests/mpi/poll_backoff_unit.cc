// PollBackoff (engine/mpi/messages.h), the pauses of a polling wait: short at first, so that
// messages following each other are taken at once, then doubling up to the longest, so that a
// long wait wakes rarely.

#include <gtest/gtest.h>

#include <chrono>

#include "engine/mpi/messages.h"

namespace zsim::mpi {
namespace {

using std::chrono::microseconds;

// By default never longer than the fixed 200 us pause the waits had: a transfer moves only while
// both ends poll.
TEST(PollBackoffTest, PausesDoubleFromTheFirstUpToTheLongestAndResetToTheFirst) {
  PollBackoff backoff;
  EXPECT_EQ(backoff.next(), microseconds(25));
  const microseconds want[] = {microseconds(50), microseconds(100), microseconds(200),
                               microseconds(200)};
  for (microseconds w : want) {
    backoff.Pause();
    EXPECT_EQ(backoff.next(), w);
  }
  backoff.Reset();
  EXPECT_EQ(backoff.next(), microseconds(25));
}

TEST(PollBackoffTest, ALongerLongestIsReachedAndKept) {
  PollBackoff backoff(std::chrono::milliseconds(1));  // the work server's
  for (int i = 0; i < 5; ++i) backoff.Pause();        // 25 us doubled five times
  EXPECT_EQ(backoff.next(), microseconds(800));
  backoff.Pause();
  EXPECT_EQ(backoff.next(), microseconds(1000));
  backoff.Pause();
  EXPECT_EQ(backoff.next(), microseconds(1000));
}

// A wait that sleeps on its own terms (the table stream waits on a condition variable, woken
// early by a ship or the scan's end) takes its pauses from Advance, which does not sleep.
TEST(PollBackoffTest, AdvanceHandsOutThePausesWithoutSleeping) {
  PollBackoff backoff(std::chrono::milliseconds(5));  // the table stream's while idle
  const microseconds want[] = {microseconds(25),   microseconds(50),   microseconds(100),
                               microseconds(200),  microseconds(400),  microseconds(800),
                               microseconds(1600), microseconds(3200), microseconds(5000),
                               microseconds(5000)};
  for (microseconds w : want) EXPECT_EQ(backoff.Advance(), w);
  EXPECT_EQ(backoff.next(), microseconds(5000));
  backoff.Reset();
  EXPECT_EQ(backoff.Advance(), microseconds(25));
}

}  // namespace
}  // namespace zsim::mpi
