// engine/walk/block_devices.h
//
// What Linux says of a block device in sysfs that decides whether two inputs hold the same bytes:
// a partition is a byte range of the disk that holds it, so a disk and one of its partitions both
// named would count the partition's data twice; and a mapped device (device-mapper, md) lies on
// the devices under it, which, named too, are read twice.
//
// The facts (linux Documentation/ABI/stable/sysfs-block, testing/sysfs-dev): every block device
// has <sysfs>/dev/block/MAJOR:MINOR, a link to its directory under <sysfs>/devices; a partition's
// directory holds a file `partition` (its number) and sits in its disk's directory, whose file
// `dev` reads "MAJOR:MINOR". Device-mapper and md devices are not partitions: their data is
// mapped (striped, mirrored, encrypted) onto the devices under them, not a range of them.
//
// Thread safety: pure functions of the file system they read.

#ifndef ZSIM_ENGINE_WALK_BLOCK_DEVICES_H_
#define ZSIM_ENGINE_WALK_BLOCK_DEVICES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace zsim::walk {

// The device (st_rdev encoding) of the disk holding the block device `rdev` when that is a
// partition, as sysfs under `sysfs_root` says; nullopt when it is not a partition, or sysfs does
// not know it (no sysfs mounted: a container, another kernel).
std::optional<uint64_t> DiskOfPartition(const std::string& sysfs_root, uint64_t rdev);

// The devices (st_rdev encoding) the block device `rdev` lies on, as sysfs under `sysfs_root`
// says: the devices a device-mapper (LVM, dm-crypt, multipath) or md device maps its data onto
// (<its directory>/slaves), theirs in turn, and the disk of each that is a partition. Empty for a
// plain disk or partition, or where sysfs does not know the device.
std::vector<uint64_t> DevicesUnder(const std::string& sysfs_root, uint64_t rdev);

// Named block devices of which one lies on another (DevicesUnder): pairs (upper, lower) of
// indexes into `rdevs`. Both are read: what they hold is counted twice where the mapping keeps
// the bytes (a linear LVM volume, multipath, a RAID 1 member) and differs where it does not
// (dm-crypt's ciphertext below, the plain data above). Not a partition and its disk, which the
// walk already counts once (walk_common.h RootsCoveredByOthers).
std::vector<std::pair<size_t, size_t>> StackedDevices(const std::string& sysfs_root,
                                                      const std::vector<uint64_t>& rdevs);

}  // namespace zsim::walk

#endif  // ZSIM_ENGINE_WALK_BLOCK_DEVICES_H_
