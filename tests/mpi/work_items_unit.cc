// EncodeItems / DecodeItems (engine/mpi/work.h): rank 0 sends the walk's items to the other
// ranks; every field must come back as it went, a directory's micro-ZAP size included (the
// metadata model of a distributed scan charges what rank 0's walk measured).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/mpi/work.h"

namespace zsim::mpi {
namespace {

TEST(WorkItemsTest, EveryFieldComesBack) {
  walk::WalkItem dir;
  dir.kind = walk::WalkItem::Kind::kDirectory;
  dir.path = "/data/base/16384";
  dir.root = 2;
  dir.info.type = io::FileType::kDirectory;
  dir.info.dev = 64769;
  dir.info.ino = 1234567;
  dir.info.size = 20480;
  dir.info.nlink = 2;
  dir.info.allocated = 24576;
  dir.info.mtime_ns = 1700000000123456789;
  dir.info.ctime_ns = 1700000001987654321;
  dir.dir_entries = 312;
  dir.dir_name_bytes = 1581;
  dir.dir_longest_name = 9;
  dir.dir_zap_bytes = 2735;
  walk::WalkItem piece;
  piece.kind = walk::WalkItem::Kind::kFile;
  piece.path = "/data/image.raw";
  piece.info.type = io::FileType::kRegular;
  piece.info.size = uint64_t{1} << 40;
  piece.piece_begin = uint64_t{1} << 30;
  piece.piece_end = uint64_t{2} << 30;
  piece.piece_file = 7;
  walk::WalkItem failed;
  failed.kind = walk::WalkItem::Kind::kError;
  failed.path = "/data/locked";
  failed.error = Status(StatusCode::kIoError, "Permission denied");
  walk::WalkItem skipped;
  skipped.kind = walk::WalkItem::Kind::kSkipped;
  skipped.path = "/data/sock";
  skipped.skip_reason = walk::SkipReason::kExcluded;

  const std::vector<walk::WalkItem> items = {dir, piece, failed, skipped};
  const std::vector<walk::WalkItem> back = DecodeItems(EncodeItems(items));
  ASSERT_EQ(back.size(), items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    const walk::WalkItem& a = items[i];
    const walk::WalkItem& b = back[i];
    SCOPED_TRACE(a.path);
    EXPECT_EQ(b.kind, a.kind);
    EXPECT_EQ(b.path, a.path);
    EXPECT_EQ(b.root, a.root);
    EXPECT_EQ(b.info.type, a.info.type);
    EXPECT_EQ(b.info.dev, a.info.dev);
    EXPECT_EQ(b.info.ino, a.info.ino);
    EXPECT_EQ(b.info.size, a.info.size);
    EXPECT_EQ(b.info.nlink, a.info.nlink);
    EXPECT_EQ(b.info.allocated, a.info.allocated);
    EXPECT_EQ(b.info.mtime_ns, a.info.mtime_ns);
    EXPECT_EQ(b.info.ctime_ns, a.info.ctime_ns);
    EXPECT_EQ(b.skip_reason, a.skip_reason);
    EXPECT_EQ(b.error.code(), a.error.code());
    EXPECT_EQ(b.error.message(), a.error.message());
    EXPECT_EQ(b.dir_entries, a.dir_entries);
    EXPECT_EQ(b.dir_name_bytes, a.dir_name_bytes);
    EXPECT_EQ(b.dir_longest_name, a.dir_longest_name);
    EXPECT_EQ(b.dir_zap_bytes, a.dir_zap_bytes);
    EXPECT_EQ(b.piece_begin, a.piece_begin);
    EXPECT_EQ(b.piece_end, a.piece_end);
    EXPECT_EQ(b.piece_file, a.piece_file);
  }
}

}  // namespace
}  // namespace zsim::mpi
