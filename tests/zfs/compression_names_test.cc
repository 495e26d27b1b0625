#include <gtest/gtest.h>

#include <set>
#include <string>

#include "zsim/scan_options.h"

namespace zsim {
namespace {

using A = CompressionAlgorithm;

TEST(CompressionNamesTest, EveryValueOfAllRoundTripsThroughItsName) {
  for (Profile p : {Profile::kV23, Profile::kZfs21, Profile::kZfs24}) {
    std::set<std::string> seen;
    for (const Compression& c : AllCompressions(p)) {
      const std::string name = CompressionName(c);
      EXPECT_TRUE(seen.insert(name).second) << name;
      const Result<Compression> back = ParseCompression(name, p);
      ASSERT_TRUE(back.ok()) << name << ": " << back.status().ToString();
      EXPECT_EQ(*back, c) << name;
    }
    // off lzjb zle gzip-1..9 (+ lz4) (+ zstd-1..19, 21 zstd-fast levels)
    EXPECT_EQ(seen.size(), p == Profile::kV23 ? 12u : 13u + 19u + 21u) << ProfileName(p);
  }
}

TEST(CompressionNamesTest, AliasesResolveAsZfsDoes) {
  auto parse = [](std::string_view name, Profile p) {
    Result<Compression> c = ParseCompression(name, p);
    EXPECT_TRUE(c.ok()) << name;
    return c.ok() ? *c : Compression{};
  };
  EXPECT_EQ(parse("on", Profile::kV23), (Compression{A::kLzjb, 0}));
  EXPECT_EQ(parse("on", Profile::kZfs21), (Compression{A::kLz4, 0}));
  EXPECT_EQ(parse("gzip", Profile::kZfs24), (Compression{A::kGzip, 6}));
  EXPECT_EQ(parse("zstd", Profile::kZfs24), (Compression{A::kZstd, 3}));
  EXPECT_EQ(parse("zstd-fast", Profile::kZfs24), (Compression{A::kZstd, -1}));
  EXPECT_EQ(parse("zstd-fast-500", Profile::kZfs24), (Compression{A::kZstd, -500}));
  EXPECT_EQ(CompressionName(parse("zstd-fast-1000", Profile::kZfs24)), "zstd-fast-1000");
}

TEST(CompressionNamesTest, UnknownNamesAreRefusedWithTheList) {
  for (std::string_view bad :
       {"", "lz5", "gzip-0", "gzip-10", "zstd-20", "zstd-0", "zstd-fast-11", "zstd-fast-25",
        "zstd-fast-0", "ZSTD", "gzip-+6", "zstd--3", "zstd-fast-01000", "lz4 "}) {
    const Result<Compression> c = ParseCompression(bad, Profile::kZfs24);
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(c.status().message().find("zstd-fast-1000"), std::string::npos) << bad;
    EXPECT_NE(c.status().message().find("gzip-1 .. gzip-9"), std::string::npos) << bad;
  }
  // lz4 and zstd do not exist in v23 pools; the list then omits them.
  for (std::string_view missing : {"lz4", "zstd", "zstd-fast-10"}) {
    const Result<Compression> c = ParseCompression(missing, Profile::kV23);
    ASSERT_FALSE(c.ok()) << missing;
    EXPECT_NE(c.status().message().find("v23"), std::string::npos);
    EXPECT_EQ(c.status().message().find("zstd-1 .. zstd-19"), std::string::npos);
    EXPECT_EQ(c.status().message().find(", lz4"), std::string::npos);
  }
}

TEST(CompressionNamesTest, DefaultListAndProfiles) {
  std::vector<std::string> names;
  for (const Compression& c : DefaultCompressions(Profile::kZfs24))
    names.push_back(CompressionName(c));
  EXPECT_EQ(names, (std::vector<std::string>{"off", "lz4", "zstd-3"}));
  // From 2.1 on, the first release the profiles model after v23.
  EXPECT_EQ(DefaultCompressions(Profile::kZfs21), DefaultCompressions(Profile::kZfs24));
  names.clear();
  for (const Compression& c : DefaultCompressions(Profile::kV23))
    names.push_back(CompressionName(c));
  EXPECT_EQ(names, (std::vector<std::string>{"off", "gzip-6", "lzjb", "zle"}));

  for (Profile p :
       {Profile::kV23, Profile::kZfs21, Profile::kZfs22, Profile::kZfs23, Profile::kZfs24}) {
    EXPECT_EQ(ParseProfile(ProfileName(p)), p);
  }
  EXPECT_EQ(ProfileName(Profile::kZfs24), "2.4");
  EXPECT_FALSE(ParseProfile("2.5").has_value());
  EXPECT_FALSE(ParseProfile("v28").has_value());
}

}  // namespace
}  // namespace zsim
