#include "engine/pipeline/expected_time.h"

#include <gtest/gtest.h>

#include "tests/util/test_util.h"

namespace zsim::pipeline {
namespace {

CostForecast Nominal(double read_cpu, double codec_cpu, int threads) {
  CostForecast f;
  f.read_cpu_seconds = read_cpu;
  f.codec_cpu_seconds = codec_cpu;
  f.threads = threads;
  return f;
}

// `read_done` of `read_total` bytes read at `seconds`; the first chunk was done at
// `first_seconds` with `first_read_done` read.
PaceState Read(uint64_t read_total, double first_seconds, uint64_t first_read_done, double seconds,
               uint64_t read_done) {
  PaceState s;
  s.read_total = read_total;
  s.first_seconds = first_seconds;
  s.first_read_done = first_read_done;
  s.seconds = seconds;
  s.read_done = read_done;
  return s;
}

// A probe that expects `unique_bytes` of unique data, coded at `cpu_per_byte` CPU seconds.
ProbeFigures Probe(uint64_t unique_bytes, double cpu_per_byte) {
  ProbeFigures p;
  p.unique_bytes = unique_bytes;
  p.codec_cpu_per_byte = cpu_per_byte;
  return p;
}

// Codecs measured 2.5x faster than their nominal speeds: the forecast's codec seconds shrink by
// 2.5, the reading's stay.
TEST(ExpectedTimeTest, CalibrationScalesTheCodecsOnly) {
  PaceState s;
  s.codec_cpu_seconds = 0.4;
  s.codec_nominal_seconds = 1.0;
  const CostForecast f = CalibratedForecast(Nominal(2, 26, 2), s);
  EXPECT_DOUBLE_EQ(f.read_cpu_seconds, 2);
  EXPECT_DOUBLE_EQ(f.codec_cpu_seconds, 26 * 0.4);
  EXPECT_EQ(f.threads, 2);
}

// Too little codec work measured (a few blocks' clock readings are noise): the nominal speeds.
TEST(ExpectedTimeTest, NoCalibrationFromTooLittleCodecWork) {
  PaceState s;
  s.codec_cpu_seconds = 0.001;
  s.codec_nominal_seconds = kCalibrationNominalSeconds / 2;
  EXPECT_DOUBLE_EQ(CalibratedForecast(Nominal(2, 26, 2), s).codec_cpu_seconds, 26);
}

// Before the pace holds: the elapsed seconds plus the calibrated forecast's share of the bytes
// left. 14 CPU s nominal (2 reading, 12 codecs at half their nominal cost: 6) on 2 threads is
// 4 s for the whole; with a quarter read, 3 s are left.
TEST(ExpectedTimeTest, BeforeThePaceTheCalibratedForecast) {
  PaceState s;
  s.seconds = 1.5;
  s.read_total = 400 * M;
  s.read_done = 100 * M;
  s.codec_cpu_seconds = 0.5;
  s.codec_nominal_seconds = 1.0;
  // No chunk done yet: the pace cannot be measured whatever has been read.
  EXPECT_DOUBLE_EQ(ExpectedSeconds(Nominal(2, 12, 2), s), 1.5 + 4 * 0.75);
}

// Once a twentieth of the bytes to read has been read since the first chunk was done, the pace
// since then: the seconds before it (the wait for the sizing walk, the pipeline filling) are
// not taken as a cost per byte. 1 s before the first chunk (8 MiB), then 40 MiB in 2 s: the
// 352 MiB left take 17.6 s more.
TEST(ExpectedTimeTest, PaceFromTheFirstChunkDone) {
  const PaceState s = Read(400 * M, 1.0, 8 * M, 3.0, 48 * M);
  EXPECT_DOUBLE_EQ(ExpectedSeconds(Nominal(100, 100, 1), s), 3.0 + 352.0 / 20);
  // The whole elapsed time over the bytes read would say 3 s per 48 MiB: 25 s.
  EXPECT_LT(ExpectedSeconds(Nominal(100, 100, 1), s), 400.0 / 48 * 3 - 1);
}

// The pace counts bytes read: a sparse file's holes are neither read nor in the total, so a
// file of 160 MiB logical with 40 MiB of data, 20 read in 2 s since the first chunk, is half done.
TEST(ExpectedTimeTest, HolesAreNotInThePace) {
  const PaceState s = Read(40 * M, 0, 0, 2.0, 20 * M);
  EXPECT_DOUBLE_EQ(ExpectedSeconds(Nominal(100, 100, 1), s), 4.0);
}

// Under a twentieth read since the first chunk: still the forecast, not a pace from one chunk.
TEST(ExpectedTimeTest, PaceWaitsForATwentieth) {
  PaceState s = Read(400 * M, 1.0, 8 * M, 1.1, 8 * M + 400 * M / kPaceShare - 1);
  const double forecast_left = 10.0 * double(s.read_total - s.read_done) / double(s.read_total);
  EXPECT_DOUBLE_EQ(ExpectedSeconds(Nominal(4, 16, 2), s), 1.1 + forecast_left);
  s.read_done += 1;  // exactly a twentieth: the pace
  const double pace = 0.1 / double(400 * M / kPaceShare);
  EXPECT_DOUBLE_EQ(ExpectedSeconds(Nominal(4, 16, 2), s),
                   1.1 + pace * double(s.read_total - s.read_done));
}

// All read (or more than the sizing walk found: a file grew): the elapsed seconds, never less.
TEST(ExpectedTimeTest, NeverBelowTheElapsedSeconds) {
  const PaceState s = Read(10 * M, 0.5, 8 * M, 2.0, 12 * M);
  EXPECT_DOUBLE_EQ(ExpectedSeconds(Nominal(1, 1, 1), s), 2.0);
  PaceState empty;
  empty.seconds = 0.3;
  EXPECT_DOUBLE_EQ(ExpectedSeconds(Nominal(1, 1, 1), empty), 0.3 + 2.0);
}

// With the probe: a VM store whose first 100 MiB are unique and coded at 0.1 CPU s per MiB, the
// other 300 MiB clones and zeros. 10 s of wall since the first chunk for 10 CPU s of codecs and
// 100 MiB read: the 300 MiB left are reading only, about 0.1 s, where the pace of bytes says
// 30 s more.
TEST(ExpectedTimeTest, ProbeSeesThatTheRestIsClones) {
  PaceState s = Read(400 * M, 1.0, 0, 11.0, 100 * M);
  s.codec_cpu_seconds = 10;
  s.unique_done = 100 * M;
  const ProbeFigures probe = Probe(100 * M, 0.1 / M);
  const double work_done = 100.0 * M * kReadWorkPerByte + 10;
  const double read_left = 300.0 * M * kReadWorkPerByte;
  EXPECT_DOUBLE_EQ(WorkLeft(s, probe), read_left);
  EXPECT_DOUBLE_EQ(ExpectedSeconds(s, probe, 2), 11.0 + 10.0 / work_done * read_left);
  EXPECT_LT(ExpectedSeconds(s, probe, 2), 11.2);
  EXPECT_DOUBLE_EQ(ExpectedSeconds(Nominal(1, 1, 2), s), 11.0 + 30.0);
  // The codecs' share: 10 CPU s of about 10.1 in all.
  EXPECT_DOUBLE_EQ(CodecShare(s, probe), 10 / (400.0 * M * kReadWorkPerByte + 10));
  EXPECT_GT(CodecShare(s, probe), 0.98);
}

// The costly part comes last: 100 MiB of 400 read, 20 MiB of it unique (2 CPU s of codecs), and
// the probe expects 220 MiB unique at 0.1 CPU s per MiB: 20 CPU s of codecs are still to come,
// at the pace of the work so far (1 s for about 2 CPU s).
TEST(ExpectedTimeTest, ProbeSeesTheCodecWorkAhead) {
  PaceState s = Read(400 * M, 0.0, 0, 1.0, 100 * M);
  s.codec_cpu_seconds = 2.0;
  s.unique_done = 20 * M;
  const ProbeFigures probe = Probe(220 * M, 0.1 / M);
  const double left = 300.0 * M * kReadWorkPerByte + 20;
  EXPECT_DOUBLE_EQ(WorkLeft(s, probe), left);
  const double done = 100.0 * M * kReadWorkPerByte + 2.0;
  EXPECT_DOUBLE_EQ(ExpectedSeconds(s, probe, 2), 1.0 + 1.0 / done * left);
  EXPECT_GT(ExpectedSeconds(s, probe, 2), 10.0);  // the pace of bytes says 4 s
  // More unique bytes coded than the probe expected: its unique share is proven low, and what is
  // left is taken as unique as what was read (all of it here), not as nothing.
  s.unique_done = 300 * M;
  EXPECT_DOUBLE_EQ(WorkLeft(s, probe), 300.0 * M * kReadWorkPerByte + 30.0);
  // The probe expected more unique bytes than are left to read: at most those, at no more than
  // kCodecLeftBound times the probe's cost per byte.
  s.unique_done = 0;
  s.read_done = 390 * M;
  EXPECT_DOUBLE_EQ(WorkLeft(s, probe), 10.0 * M * (kReadWorkPerByte + kCodecLeftBound * 0.1 / M));
}

// The costly part first: the probe expects 220 MiB unique at 0.1 CPU s per MiB, 22 CPU s in all;
// the first 20 MiB unique took 6 CPU s (small files: 0.3 per MiB). What is left is 16 CPU s, not
// the probe's cost per byte on the 200 MiB left (20 CPU s), which counted the costly part again.
// Within kCodecLeftBound of that either way.
TEST(ExpectedTimeTest, TheCodecWorkLeftIsTheProbesWholeLessTheWorkDone) {
  PaceState s = Read(400 * M, 0.0, 0, 1.0, 100 * M);
  s.codec_cpu_seconds = 6.0;
  s.unique_done = 20 * M;
  const ProbeFigures probe = Probe(220 * M, 0.1 / M);
  EXPECT_NEAR(CodecWorkLeft(s, probe), 16.0, 1e-9);
  EXPECT_NEAR(WorkLeft(s, probe), 300.0 * M * kReadWorkPerByte + 16.0, 1e-9);
  const double done = 100.0 * M * kReadWorkPerByte + 6.0;
  EXPECT_NEAR(ExpectedSeconds(s, probe, 2), 1.0 + 1.0 / done * WorkLeft(s, probe), 1e-9);
  // Far more done than the probe's whole: at least half its cost per byte on what is left.
  s.codec_cpu_seconds = 21.5;
  EXPECT_NEAR(CodecWorkLeft(s, probe), 20.0 / kCodecLeftBound, 1e-9);
  // Far cheaper so far than the probe's cost per byte: at most twice it on what is left.
  s.codec_cpu_seconds = 0;
  s.unique_done = 200 * M;
  EXPECT_NEAR(CodecWorkLeft(s, probe), 2.0 * kCodecLeftBound, 1e-9);
}

// More unique bytes coded than the probe expected in the whole tree: its unique share is proven
// low, and the bytes left are taken to be unique at the share read so far, at its cost per byte
// (before, the work left was the bound's half of nothing: an ETA of 0.01 s for half the scan).
TEST(ExpectedTimeTest, AProbeProvenLowGivesWayToTheUniqueShareReadSoFar) {
  PaceState s = Read(400 * M, 0.0, 0, 1.0, 100 * M);
  s.unique_done = 70 * M;  // the probe expected 50 MiB in all
  s.codec_cpu_seconds = 7.0;
  const ProbeFigures probe = Probe(50 * M, 0.1 / M);
  // 300 MiB left, 70% unique: 210 MiB at 0.1 CPU s per MiB.
  EXPECT_NEAR(CodecWorkLeft(s, probe), 21.0, 1e-9);
  // Below the probe's whole, its figures hold as before.
  s.unique_done = 40 * M;
  s.codec_cpu_seconds = 4.0;
  EXPECT_NEAR(CodecWorkLeft(s, probe), 1.0, 1e-9);
}

// The pace of work waits for a fortieth of the whole work since the first chunk; before, the
// work left on the threads; never below the elapsed seconds.
TEST(ExpectedTimeTest, ProbePaceWaitsForAFortiethOfTheWork) {
  PaceState s = Read(400 * M, 0.5, 0, 1.0, 0);
  const ProbeFigures probe = Probe(400 * M, 0.1 / M);  // 40 CPU s of codecs in all
  s.codec_cpu_seconds = 0.9;                           // under 1: not yet a fortieth
  s.read_done = s.unique_done = 9 * M;
  EXPECT_DOUBLE_EQ(ExpectedSeconds(s, probe, 2), 1.0 + WorkLeft(s, probe) / 2);
  s.codec_cpu_seconds = 1.1;
  s.read_done = s.unique_done = 11 * M;
  const double done = 11.0 * M * kReadWorkPerByte + 1.1;
  EXPECT_DOUBLE_EQ(ExpectedSeconds(s, probe, 2), 1.0 + 0.5 / done * WorkLeft(s, probe));
  s.read_done = s.unique_done = 400 * M;
  EXPECT_DOUBLE_EQ(ExpectedSeconds(s, probe, 2), 1.0);
}

// Once the probe is known, the pace is measured from the first chunk done after it (the sizing
// walk and the probe shared the cores before): 4 s for the work since then, not 6 s for all of
// it. Too little work since then: the pace from the first chunk.
TEST(ExpectedTimeTest, ProbePaceFromTheProbedChunk) {
  PaceState s = Read(400 * M, 0.0, 0, 6.0, 200 * M);
  s.codec_cpu_seconds = 10;
  s.unique_done = 100 * M;
  const ProbeFigures probe = Probe(200 * M, 0.1 / M);
  const double left = WorkLeft(s, probe);
  EXPECT_DOUBLE_EQ(left, 200.0 * M * kReadWorkPerByte + 10);
  const double all = 200.0 * M * kReadWorkPerByte + 10;
  EXPECT_DOUBLE_EQ(ExpectedSeconds(s, probe, 2), 6.0 + 6.0 / all * left);
  s.probed_seconds = 2.0;
  s.probed_read_done = 50 * M;
  s.probed_codec_cpu_seconds = 2.5;
  const double since = 150.0 * M * kReadWorkPerByte + 7.5;
  EXPECT_DOUBLE_EQ(ExpectedSeconds(s, probe, 2), 6.0 + 4.0 / since * left);
  s.probed_seconds = 5.9;  // probed just now: under a fortieth since
  s.probed_read_done = 199 * M;
  s.probed_codec_cpu_seconds = 9.9;
  EXPECT_DOUBLE_EQ(ExpectedSeconds(s, probe, 2), 6.0 + 6.0 / all * left);
}

// The probe's CPU seconds after the first chunk count as work done on the scan's cores: a probe
// that took one of two cores for most of the time since left the scan's work alone at half the
// machine's pace. Here it ran from 0.5 s to 5.5 s (5 CPU s); the first chunk was done at 1 s.
TEST(ExpectedTimeTest, ThePaceSinceTheFirstChunkCountsTheProbesCores) {
  PaceState s = Read(400 * M, 1.0, 0, 6.0, 200 * M);
  s.codec_cpu_seconds = 6;
  s.unique_done = 100 * M;
  ProbeFigures probe = Probe(200 * M, 0.05 / M);
  probe.cpu_seconds = 5;
  probe.run_seconds = 5;
  s.probe_started_seconds = 0.5;
  EXPECT_DOUBLE_EQ(ProbeCpuAfter(s, probe, 1.0), 4.5);  // 4.5 of its 5 s after 1 s
  EXPECT_DOUBLE_EQ(ProbeCpuAfter(s, probe, 5.5), 0);
  EXPECT_DOUBLE_EQ(ProbeCpuAfter(s, probe, 0.0), 5);
  const double left = WorkLeft(s, probe);
  const double all = 200.0 * M * kReadWorkPerByte + 6;
  // 2 cores for 5 s: the scan's work (6 CPU s) filled the 5.5 the probe left: all of it counts.
  ASSERT_GE(all, 2 * 5.0 - 4.5);
  EXPECT_DOUBLE_EQ(ExpectedSeconds(s, probe, 2), 6.0 + 5.0 / (all + 4.5) * left);
  // No start (no probe, or one on a core the scan left idle): the scan's work alone.
  s.probe_started_seconds = -1;
  EXPECT_DOUBLE_EQ(ExpectedSeconds(s, probe, 2), 6.0 + 5.0 / all * left);
  // A scan that filled a fifth of the room the probe left (held back by --max-rate, or by its
  // disk) lost little to it: a fifth of the probe's seconds count.
  s.probe_started_seconds = 0.5;
  const double read_work = 200.0 * M * kReadWorkPerByte;
  s.codec_cpu_seconds = 0.2 * (2 * 5.0 - 4.5) - read_work;  // since = 1.1, room = 5.5
  const double since = read_work + s.codec_cpu_seconds;
  EXPECT_DOUBLE_EQ(ExpectedSeconds(s, probe, 2),
                   6.0 + 5.0 / (since + 4.5 * 0.2) * WorkLeft(s, probe));
}

// The progress line's expected time: the probe's once it has measured; nothing while it
// measures (the file server's first sixth, cheap images, read at a pace that put the whole scan
// at 0.45 of its time); the calibrated forecast only without a probe.
TEST(ExpectedTimeTest, NothingShownWhileTheProbeMeasures) {
  PaceState s = Read(400 * M, 0.0, 0, 0.3, 60 * M);
  s.codec_cpu_seconds = 0.01;
  s.unique_done = 1 * M;
  const CostForecast nominal = Nominal(0.1, 4, 2);
  const ShownExpected measuring = ExpectedToShow(nominal, s, s, std::nullopt, true, 2);
  EXPECT_EQ(measuring.seconds, 0);
  EXPECT_EQ(measuring.codec_share, 0);
  const ProbeFigures probe = Probe(200 * M, 0.1 / M);
  const ShownExpected probed = ExpectedToShow(nominal, s, s, probe, false, 2);
  EXPECT_DOUBLE_EQ(probed.seconds, ExpectedSeconds(s, probe, 2));
  EXPECT_DOUBLE_EQ(probed.codec_share, CodecShare(s, probe));
  EXPECT_GT(probed.seconds, 5);  // 20 CPU s of codecs ahead
  const ShownExpected failed = ExpectedToShow(nominal, s, s, std::nullopt, false, 2);
  EXPECT_DOUBLE_EQ(failed.seconds, ExpectedSeconds(nominal, s));
  EXPECT_GT(failed.seconds, 0);
}

// The warning of a costly scan weighs the codecs as the probe measured them. The default list on
// a tree like database-large (3.2 GB, nominally 29 CPU s of codecs on every allocated byte, 32
// times the reading): the probe finds 2.5 GB unique at 2.9 ns per byte, 7 CPU s, 8 times the
// reading: not costly. Every codec at three recordsizes on a small compressible tree: 0.13 CPU s of
// reading, the probe's 120 MB unique at 120 ns per byte, 14 CPU s: costly, as nominally.
TEST(ExpectedTimeTest, TheCostWarningWeighsTheCodecsAsMeasured) {
  const CostForecast nominal_default = Nominal(0.91, 29, 2);
  ASSERT_TRUE(IsCostly(nominal_default));
  const CostForecast measured = MeasuredForecast(nominal_default, Probe(2500000000, 2.9e-9));
  EXPECT_DOUBLE_EQ(measured.codec_cpu_seconds, 2.5e9 * 2.9e-9);
  EXPECT_DOUBLE_EQ(measured.read_cpu_seconds, 0.91);
  EXPECT_EQ(measured.threads, 2);
  EXPECT_FALSE(IsCostly(measured));
  const CostForecast nominal_all = Nominal(0.13, 40, 2);
  ASSERT_TRUE(IsCostly(nominal_all));
  EXPECT_TRUE(IsCostly(MeasuredForecast(nominal_all, Probe(120000000, 120e-9))));
  // Nothing to code (zeros, or an empty tree): nothing costly.
  EXPECT_FALSE(IsCostly(MeasuredForecast(nominal_all, Probe(0, 0))));
}

}  // namespace
}  // namespace zsim::pipeline
