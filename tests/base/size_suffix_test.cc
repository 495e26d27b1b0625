#include "engine/base/size_suffix.h"

#include <gtest/gtest.h>

#include "engine/base/byte_view.h"

namespace zsim {
namespace {

TEST(SizeSuffixTest, ParsesZfsSpellings) {
  EXPECT_EQ(*ParseSize("512"), 512u);
  EXPECT_EQ(*ParseSize("4k"), 4096u);
  EXPECT_EQ(*ParseSize("128K"), 131072u);
  EXPECT_EQ(*ParseSize("1M"), 1048576u);
  EXPECT_EQ(*ParseSize("1m"), 1048576u);
  EXPECT_EQ(*ParseSize("16MiB"), 16u << 20);
  EXPECT_EQ(*ParseSize("2GB"), 2ull << 30);
  EXPECT_EQ(*ParseSize("1.5K"), 1536u);
  EXPECT_EQ(*ParseSize("0.5M"), 524288u);
  EXPECT_EQ(*ParseSize("7B"), 7u);
  EXPECT_EQ(*ParseSize("1T"), 1ull << 40);
}

TEST(SizeSuffixTest, RefusesWhatIsNotASize) {
  for (const char* bad : {"", "k", "12Q", "1.3", "1.0001K", "4kk", "4kx", "-1", "1BB",
                          "99999999999999999999", "20E"}) {
    Result<uint64_t> r = ParseSize(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(r.status().message().find("128K"), std::string::npos) << r.status().message();
    }
  }
}

TEST(SizeSuffixTest, FormatsBytesForPeople) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1024), "1.00 KiB");
  EXPECT_EQ(FormatBytes(1536), "1.50 KiB");
  EXPECT_EQ(FormatBytes(131072), "128 KiB");
  EXPECT_EQ(FormatBytes(10u << 20), "10.0 MiB");
}

TEST(ByteViewTest, IsAllZeroAtEveryAlignmentAndLength) {
  std::vector<uint8_t> buf(300, 0);
  for (size_t start = 0; start < 9; ++start) {
    for (size_t len = 0; len + start <= buf.size(); len += 7) {
      const ByteView v(buf.data() + start, len);
      EXPECT_TRUE(IsAllZero(v));
      if (len > 0) {
        buf[start + len - 1] = 1;
        EXPECT_FALSE(IsAllZero(v)) << start << " " << len;
        buf[start + len - 1] = 0;
        buf[start] = 1;
        EXPECT_FALSE(IsAllZero(v)) << start << " " << len;
        buf[start] = 0;
      }
    }
  }
}

TEST(StatusTest, MapsErrnoToCodes) {
  EXPECT_EQ(Status::FromErrno("open", ENOENT).code(), StatusCode::kNotFound);
  EXPECT_EQ(Status::FromErrno("open", EACCES).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(Status::FromErrno("open", EPERM).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(Status::FromErrno("read", EIO).code(), StatusCode::kIoError);
  EXPECT_EQ(Status::FromErrno("read", EIO).ToString(), "io_error: read: Input/output error");
  EXPECT_EQ(StatusCodeName(StatusCode::kLoop), "symlink_loop");
  EXPECT_TRUE(Status().ok());
  EXPECT_EQ(Status().ToString(), "ok");
  Status copy = Status::Corruption("x");
  Status other = copy;
  EXPECT_EQ(other.message(), "x");
}

}  // namespace
}  // namespace zsim
