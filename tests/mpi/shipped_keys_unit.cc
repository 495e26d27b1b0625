// ShippedKeys (engine/mpi/shipped_keys.h), the census's memory of the keys a rank shipped: no key
// added is ever missed (the census's exactness rests on it), whether asked with the whole key or
// with the bits a table entry keeps of it, across segments; and few keys never added are found.

#include <gtest/gtest.h>

#include <random>

#include "engine/mpi/shipped_keys.h"

namespace zsim::mpi {
namespace {

ddt::Fingerprint Key(std::mt19937_64& rng) { return ddt::Fingerprint{rng(), rng()}; }

// As ddt::EntryView gives a key: hi's top 8 and low 32 bits.
ddt::Fingerprint AsEntry(ddt::Fingerprint k) {
  k.hi &= 0xFF000000FFFFFFFFull;
  return k;
}

TEST(ShippedKeysTest, EveryKeyAddedIsFoundAndFewOthersAre) {
  ShippedKeys shipped;
  std::mt19937_64 rng(16);
  std::vector<ddt::Fingerprint> added;
  // 300,000 keys: four segments (2^16, 2^17, 2^18 keys...).
  for (int i = 0; i < 300000; ++i) {
    added.push_back(Key(rng));
    shipped.Add(AsEntry(added.back()));  // shipped from a table's entry
  }
  for (const ddt::Fingerprint& k : added) {
    ASSERT_TRUE(shipped.Contains(k));  // met again by the scan: the whole key
    ASSERT_TRUE(shipped.Contains(AsEntry(k)));
  }
  int false_positives = 0;
  for (int i = 0; i < 100000; ++i) false_positives += shipped.Contains(Key(rng));
  EXPECT_LT(false_positives, 400);  // 0.4%: four segments under 0.1% each
  // 2 bytes per key, rounded up to the segments' sizes.
  EXPECT_LE(shipped.memory_bytes(), 2u * (65536 + 131072 + 262144 + 524288));
}

TEST(ShippedKeysTest, EmptyFindsNothing) {
  ShippedKeys shipped;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(shipped.Contains(Key(rng)));
  EXPECT_EQ(shipped.memory_bytes(), 0u);
}

}  // namespace
}  // namespace zsim::mpi
