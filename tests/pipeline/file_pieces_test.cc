// Files read in pieces (pipeline/file_pieces.h), as a distributed scan reads a large file: the
// pieces handed to separate scans in any order, their states merged and the pieced files counted
// once (StateOfPiecedFiles) give the figures of one scan of the whole tree, for every recordsize
// (the last partial record, a hole over a whole chunk, a whole-file copy) and as a zvol; the
// pieces read each byte once. A piece that finds the file changed since it was listed, or
// cannot open it, makes the file one error; a file whose pieces were not all read is listed
// with what was read of it in the figures, as one scan lists a file it was reading when
// interrupted.

#include "engine/pipeline/file_pieces.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <map>

#include "engine/finish/finish.h"
#include "engine/io/file_system.h"
#include "engine/pipeline/scan.h"
#include "engine/state/merge.h"
#include "engine/state/state_file.h"
#include "tests/util/result_compare.h"
#include "tests/util/test_util.h"

namespace zsim::pipeline {
namespace {

// `bytes` written at `offset` of `path`, the file then cut to `size` (what is not written is a
// hole).
void WriteSparse(const std::filesystem::path& path, uint64_t size,
                 const std::vector<std::pair<uint64_t, std::vector<uint8_t>>>& extents) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  for (const auto& [offset, bytes] : extents) {
    ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)),
              static_cast<ssize_t>(bytes.size()));
  }
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);
  ::close(fd);
}

// A tree with two 3-piece images (one a copy of the other), whose second chunk is a hole and
// whose size ends inside a record, and small files sharing some of their records.
void BuildTree(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir / "sub");
  const uint64_t size = 17 * M + 777;
  const std::vector<uint8_t> head = testing::GenerateBlock(8 * M, 0.6, 1);
  const std::vector<uint8_t> tail = testing::GenerateBlock(size - 16 * M, 0.5, 2);
  WriteSparse(dir / "image.raw", size, {{0, head}, {16 * M, tail}});
  WriteSparse(dir / "sub" / "image.copy", size, {{0, head}, {16 * M, tail}});
  std::vector<uint8_t> small(head.begin(), head.begin() + 300000);
  const int fd = ::open((dir / "sub" / "small.bin").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, small.data(), small.size()), static_cast<ssize_t>(small.size()));
  ::close(fd);
}

class ListSource : public walk::WalkSource {
 public:
  explicit ListSource(std::vector<walk::WalkItem> items) : items_(items.begin(), items.end()) {}
  std::optional<walk::WalkItem> Next() override {
    if (items_.empty()) return std::nullopt;
    walk::WalkItem it = std::move(items_.front());
    items_.pop_front();
    return it;
  }

 private:
  std::deque<walk::WalkItem> items_;
};

struct Split {
  std::vector<std::vector<walk::WalkItem>> shares;  // per "rank"
  std::vector<walk::WalkItem> files;                // the files split, by number
};

// The walk of `o`'s paths over `ranks` shares: files larger than `piece` in pieces, dealt out
// from the last piece backwards; everything else to share 0.
Split SplitWalk(const ScanOptions& o, io::FileSystem* fs, uint64_t piece, size_t ranks) {
  Split s;
  s.shares.resize(ranks);
  std::vector<walk::WalkItem> pieces;
  std::unique_ptr<walk::WalkSource> walk = MakeWalk(ResolveOptions(o), fs);
  while (std::optional<walk::WalkItem> it = walk->Next()) {
    if (it->kind != walk::WalkItem::Kind::kFile || it->info.size <= piece) {
      s.shares[0].push_back(std::move(*it));
      continue;
    }
    for (uint64_t b = 0; b < it->info.size; b += piece) {
      walk::WalkItem p = *it;
      p.piece_begin = b;
      p.piece_end = std::min(b + piece, it->info.size);
      p.piece_file = s.files.size();
      pieces.push_back(std::move(p));
    }
    s.files.push_back(std::move(*it));
  }
  for (size_t i = 0; i < pieces.size(); ++i) {
    s.shares[i % ranks].push_back(pieces[pieces.size() - 1 - i]);
  }
  return s;
}

// Each share scanned alone, the states merged, the pieced files counted from the pieces' sums.
struct Pieced {
  state::ScanState state;
  uint64_t pieces = 0;
};
// `records`: as a distributed scan saving a state, every scan keeps its records and links by
// their blocks' keys (ScanControl::record_files, record_keys), and the pieced files get theirs.
Pieced ScanInPieces(const ScanOptions& o, io::FileSystem* fs, const Split& split,
                    bool records = false) {
  std::map<uint64_t, PieceSums> sums;
  std::optional<state::ScanState> merged;
  Pieced out;
  for (const std::vector<walk::WalkItem>& share : split.shares) {
    ScanControl control;
    control.source = [share] { return std::make_unique<ListSource>(share); };
    control.record_files = control.record_keys = records;
    control.piece_done = [&](const PieceSums& p) {
      AddPiece(sums[p.file], p);
      ++out.pieces;
    };
    Result<state::ScanState> s = ScanToState(o, fs, control);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (!merged) {
      merged = std::move(*s);
      continue;
    }
    s->options.paths.clear();
    s->input.paths.clear();
    EXPECT_TRUE(state::CheckMergeable(*merged, *s).ok());
    state::Merge(*merged, *s);
  }
  std::vector<PiecedFile> files;
  for (size_t i = 0; i < split.files.size(); ++i) files.push_back({split.files[i], sums[i]});
  state::ScanState whole = StateOfPiecedFiles(merged->options, files, records);
  whole.options.paths.clear();
  whole.input.paths.clear();
  EXPECT_TRUE(state::CheckMergeable(*merged, whole).ok());
  state::Merge(*merged, whole);
  out.state = std::move(*merged);
  return out;
}

ScanResult Report(const state::ScanState& s) {
  return finish::Finish(s, finish::ReportOptionsOf(s.options));
}

void ExpectPiecesEqualOneScan(ScanOptions o, size_t ranks) {
  testing::TempDir dir;
  BuildTree(dir.path());
  auto fs = io::PosixFileSystem();
  o.paths = {dir.path().string()};
  o.threads = 2;
  const uint64_t chunk = ChunkBytes(ResolveOptions(o));
  const Split split = SplitWalk(o, fs.get(), chunk, ranks);
  ASSERT_EQ(split.files.size(), 2u);
  Result<ScanResult> whole = RunScan(o, fs.get());
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  const Pieced pieced = ScanInPieces(o, fs.get(), split);
  EXPECT_EQ(pieced.pieces, 6u);  // 3 per image: [0, 8M), [8M, 16M) (a hole), [16M, end)
  const ScanResult got = Report(pieced.state);
  testing::ExpectSameFigures(got, *whole);
  // Every byte read once, by one of the pieces.
  EXPECT_EQ(got.input.bytes_read, whole->input.bytes_read);
  EXPECT_EQ(got.input.files, 3u);
  EXPECT_EQ(got.dedup_sources[0].duplicate_files, whole->dedup_sources[0].duplicate_files);
  EXPECT_EQ(whole->dedup_sources[0].duplicate_files, 1u);  // the image's copy, found from pieces
}

TEST(FilePiecesTest, PiecesInAnyOrderGiveOneScanAtEveryRecordsize) {
  ScanOptions o;
  o.recordsizes = {512, 4096, 128 * 1024, 1 * M};
  o.compressions = {Compression{CompressionAlgorithm::kLz4, 0},
                    Compression{CompressionAlgorithm::kZstd, 3}};
  ExpectPiecesEqualOneScan(o, 3);
}

TEST(FilePiecesTest, PiecesGiveOneScanExactAndAsAZvol) {
  ScanOptions o;
  o.exact = true;
  o.recordsizes = {16 * 1024, 128 * 1024};
  ExpectPiecesEqualOneScan(o, 2);
  ScanOptions zvol;
  zvol.volblocksize = 16 * 1024;
  ExpectPiecesEqualOneScan(zvol, 2);
}

TEST(FilePiecesTest, ALargerRecordThanTheChunkKeepsPiecesAtRecordBoundaries) {
  ScanOptions o;
  o.recordsizes = {16 * M};
  o.compressions = {Compression{CompressionAlgorithm::kOff, 0}};
  EXPECT_EQ(ChunkBytes(ResolveOptions(o)), 16 * M);
  testing::TempDir dir;
  BuildTree(dir.path());
  auto fs = io::PosixFileSystem();
  o.paths = {dir.path().string()};
  const Split split = SplitWalk(o, fs.get(), 16 * M, 2);
  Result<ScanResult> whole = RunScan(o, fs.get());
  ASSERT_TRUE(whole.ok());
  const Pieced pieced = ScanInPieces(o, fs.get(), split);
  EXPECT_EQ(pieced.pieces, 4u);  // [0, 16M) and a last piece of one partial record, twice
  testing::ExpectSameFigures(Report(pieced.state), *whole);
}

// A distributed save's pieces (ScanInPieces with records): each file read in pieces gets the
// record one scan of the whole file keeps (its blocks, holes, zero blocks, stamps), and the
// image, which has a second name, its link: the state's bytes are one scan's (its run section
// aside), at two recordsizes, exact and under --sample 1/4 (the link's sampled occurrences).
TEST(FilePiecesTest, PiecesGiveTheWholeFilesRecordsAndLinks) {
  testing::TempDir dir;
  BuildTree(dir.path());
  std::filesystem::create_hard_link(dir.path() / "image.raw", dir.path() / "sub" / "image.link");
  auto fs = io::PosixFileSystem();
  for (const uint32_t modulus : {1u, 4u}) {
    ScanOptions o;
    o.paths = {dir.path().string()};
    o.recordsizes = {4096, 128 * 1024};
    o.compressions = {Compression{CompressionAlgorithm::kLz4, 0}};
    o.sample_modulus = modulus;
    o.threads = 2;
    ScanControl control;
    control.record_files = true;
    Result<state::ScanState> one = ScanToState(o, fs.get(), control);
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    ASSERT_EQ(one->links.size(), 1u);
    ASSERT_EQ(one->has_records, modulus == 1);
    const Split split = SplitWalk(o, fs.get(), ChunkBytes(ResolveOptions(o)), 3);
    ASSERT_EQ(split.files.size(), 2u);
    state::ScanState pieced = ScanInPieces(o, fs.get(), split, /*records=*/true).state;
    ASSERT_EQ(pieced.links.size(), 1u);
    ASSERT_EQ(pieced.records.size(), one->records.size());
    // What the run section holds, and the stamps a scan may not trust (as recent as its start).
    pieced.seconds = one->seconds;
    pieced.input.bytes_read = one->input.bytes_read;
    pieced.links[0].bytes_read = one->links[0].bytes_read;
    for (size_t r = 0; r < pieced.rows.size(); ++r) {
      pieced.rows[r].codec_seconds = one->rows[r].codec_seconds;
      pieced.rows[r].codec_bytes = one->rows[r].codec_bytes;
    }
    std::map<std::string, int64_t> ctimes;
    for (const state::FileRecord& f : one->records) ctimes[f.path] = f.ctime_ns;
    for (state::FileRecord& f : pieced.records) f.ctime_ns = ctimes.at(f.path);
    EXPECT_TRUE(state::EncodeState(pieced) == state::EncodeState(*one)) << "1/" << modulus;
  }
}

// The tree's images handed out in pieces whose items were changed by `edit`, in one scan.
ScanResult ScanEditedPieces(const std::filesystem::path& dir, void (*edit)(walk::WalkItem&),
                            size_t keep_pieces = SIZE_MAX) {
  auto fs = io::PosixFileSystem();
  ScanOptions o;
  o.paths = {dir.string()};
  o.exact = true;
  Split split = SplitWalk(o, fs.get(), ChunkBytes(ResolveOptions(o)), 1);
  size_t image = 0;
  while (image < split.files.size() && split.files[image].path != (dir / "image.raw").string()) {
    ++image;
  }
  if (image == split.files.size()) {
    ADD_FAILURE() << "image.raw was not split";
    return {};
  }
  size_t kept = 0;
  std::vector<walk::WalkItem> share;
  // image.raw's pieces in order (SplitWalk deals them from the last one).
  std::sort(split.shares[0].begin(), split.shares[0].end(),
            [](const walk::WalkItem& a, const walk::WalkItem& b) {
              return a.piece_begin < b.piece_begin;
            });
  for (walk::WalkItem& it : split.shares[0]) {
    if (it.piece_end != 0) {
      if (it.piece_file != image) continue;  // image.raw only
      it.piece_file = 0;
      if (kept++ >= keep_pieces) continue;
      edit(it);
    } else if (it.kind == walk::WalkItem::Kind::kFile) {
      continue;
    }
    share.push_back(it);
  }
  split.shares[0] = share;
  split.files = {split.files[image]};
  return Report(ScanInPieces(o, fs.get(), split).state);
}

TEST(FilePiecesTest, AFileChangedSinceItWasListedIsOneError) {
  testing::TempDir dir;
  BuildTree(dir.path());
  // The second piece alone sees another version (its listed mtime is not the file's).
  const ScanResult r = ScanEditedPieces(dir.path(), [](walk::WalkItem& it) {
    if (it.piece_begin == 8 * M) it.info.mtime_ns += 1;
  });
  ASSERT_EQ(r.input.errors.size(), 1u);
  EXPECT_NE(r.input.errors[0].error.find("modified since it was listed"), std::string::npos)
      << r.input.errors[0].error;
  EXPECT_EQ(r.input.errors[0].path, (dir.path() / "image.raw").string());
  EXPECT_EQ(r.input.files, 0u);  // not counted, as a file one scan found changed
  // Its first and last pieces are in the figures, as the chunks one scan reads around a failing
  // one; the second (8 MiB, a hole) is what was not read.
  EXPECT_EQ(r.input.bytes_logical, 9 * M + 777);
  EXPECT_EQ(r.input.errors[0].bytes, 8 * M);
  EXPECT_EQ(r.input.errors[0].bytes_in_figures, 9 * M + 777);
}

TEST(FilePiecesTest, AFileNoPieceCanOpenIsOneError) {
  testing::TempDir dir;
  BuildTree(dir.path());
  const ScanResult r = ScanEditedPieces(dir.path(), [](walk::WalkItem& it) {
    it.path += ".gone";  // as if removed after it was listed
  });
  ASSERT_EQ(r.input.errors.size(), 1u);
  EXPECT_EQ(r.input.errors[0].path, (dir.path() / "image.raw").string());  // the file's name
  EXPECT_EQ(r.input.files, 0u);
}

TEST(FilePiecesTest, AFileWhosePiecesWereNotAllReadIsCountedForWhatWas) {
  // An interrupted distributed scan read two of the three pieces: as one scan interrupted while
  // reading the file, what was read is in every figure and the rest is listed as not read.
  testing::TempDir dir;
  BuildTree(dir.path());
  const ScanResult r = ScanEditedPieces(
      dir.path(), [](walk::WalkItem&) {}, /*keep_pieces=*/2);
  ASSERT_EQ(r.input.errors.size(), 1u);
  EXPECT_EQ(r.input.errors[0].error.rfind("cancelled: interrupted", 0), 0u)
      << r.input.errors[0].error;
  EXPECT_EQ(r.input.errors[0].bytes, 1 * M + 777);  // the last piece
  EXPECT_EQ(r.input.errors[0].bytes_in_figures, 16 * M);
  EXPECT_EQ(r.input.files, 0u);
  EXPECT_EQ(r.input.bytes_logical, 16 * M);  // 8 MiB of data, then 8 MiB of hole
  EXPECT_EQ(r.input.bytes_read, 8 * M);
  ASSERT_FALSE(r.breakdowns.empty());
  uint64_t files = 0, bytes = 0, lsize = 0;
  for (const BreakdownRow& row : r.breakdowns[0].extensions) {
    files += row.files;
    bytes += row.bytes;
    lsize += row.lsize;
  }
  EXPECT_EQ(files, 0u);
  EXPECT_EQ(bytes, r.input.bytes_logical);
  // The breakdown holds the blocks the tables hold.
  bool matched = false;
  for (const SettingResult& s : r.results) {
    if (s.recordsize == r.breakdowns[0].recordsize &&
        s.compression == r.breakdowns[0].compression) {
      EXPECT_EQ(lsize, s.lsize);
      matched = true;
    }
  }
  EXPECT_TRUE(matched) << "the breakdown's setting is among the results";
}

TEST(FilePiecesTest, AFileNoPieceWasReadIsNotCounted) {
  // An interrupted distributed scan may never hand out a split file's pieces: as one scan that
  // never opened the file, the partial report does not count it.
  testing::TempDir dir;
  BuildTree(dir.path());
  const ScanResult r = ScanEditedPieces(
      dir.path(), [](walk::WalkItem&) {}, /*keep_pieces=*/0);
  EXPECT_TRUE(r.input.errors.empty());
  EXPECT_EQ(r.input.files, 0u);
  EXPECT_EQ(r.input.bytes_read, 0u);
}

}  // namespace
}  // namespace zsim::pipeline
