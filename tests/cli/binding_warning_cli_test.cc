// The warning of ranks bound to fewer cores than the job may use (cli/messages.h
// FormatBindingWarning, from mpi::SurveyBinding's figures).

#include <gtest/gtest.h>

#include <string>

#include "engine/cli/messages.h"

namespace zsim::cli {
namespace {

const std::string kCause =
    " (Open MPI binds each rank to a core where the job has 2 ranks or fewer, to a socket beyond "
    "that): `mpirun --bind-to none` lets the scan use them all";

TEST(BindingWarningTest, OneRankOnOneCoreOfItsHost) {
  EXPECT_EQ(FormatBindingWarning(1, 1, 1, 1, 64, 0),
            "zsim: mpirun bound 1 rank to 1 of the 64 cores the job may use on this host, and "
            "each rank runs one thread per core it may use" +
                kCause);
}

// 64 nodes, one rank each, bound to one socket of 32 cores: the first bound host is named, with
// how many are; several ranks on a host are told how many threads each should take.
TEST(BindingWarningTest, ManyHostsAndRanksSayTheFirstAndTheThreadsEach) {
  EXPECT_EQ(FormatBindingWarning(64, 64, 1, 32, 64, 0),
            "zsim: mpirun bound 1 rank to 32 of the 64 cores the job may use on the first of 64 "
            "hosts so bound (of 64), and each rank runs one thread per core it may use" +
                kCause);
  EXPECT_EQ(FormatBindingWarning(1, 2, 4, 4, 64, 0),
            "zsim: mpirun bound 4 ranks to 4 of the 64 cores the job may use on 1 of the 2 hosts, "
            "and each rank runs one thread per core it may use" +
                kCause + " (with --threads 16)");
}

// --threads: only where the threads asked for are more than the cores bound.
TEST(BindingWarningTest, ThreadsAskedForThatFitTheBoundCoresAreLeftAlone) {
  EXPECT_EQ(FormatBindingWarning(1, 1, 2, 2, 8, 1), "");
  EXPECT_EQ(FormatBindingWarning(1, 1, 1, 4, 8, 4), "");
  EXPECT_EQ(FormatBindingWarning(1, 1, 2, 2, 8, 4),
            "zsim: mpirun bound 2 ranks of 4 threads each to 2 of the 8 cores the job may use on "
            "this host, so the threads share them" +
                kCause + " (with --threads 4)");
}

TEST(BindingWarningTest, NothingBoundNothingSaid) {
  EXPECT_EQ(FormatBindingWarning(0, 3, 0, 0, 0, 0), "");
  EXPECT_EQ(FormatBindingWarning(1, 1, 1, 8, 8, 0), "");  // bound to every core it may use
  EXPECT_EQ(FormatBindingWarning(1, 1, 1, 0, 8, 0), "");  // no affinity read
}

}  // namespace
}  // namespace zsim::cli
