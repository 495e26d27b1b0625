/*
 * tests/accuracy/openzfs23/zpool_harness.c
 *
 * Writes a directory tree into a fresh file-backed pool with OpenZFS's own pool code (libzpool
 * 2.3.2, user space, the library zdb and ztest run on) and prints what ZFS then reports, as JSON:
 * the DDT per class (entries, on-disk and in-core bytes as zdb -DD prints them) right after the
 * write and after the dedup log is flushed (as an idle pool has it), the DDT histogram, DEDUP,
 * the dataset's used / compressratio and the pool's ALLOC. The pool is exported at the end, so
 * that the packaged zdb (`zdb -e -p DIR -DD POOL`) can check the same figures.
 *
 * How the tree is written (the DMU level of a ZFS filesystem, not the ZPL itself: libzpool has no
 * ZPL): the dataset is a DMU_OST_ZFS objset with a master node (VERSION, ROOT, DELETE_QUEUE,
 * SA_ATTRS) as zfs_create_fs makes it; each directory a ZAP of DMU_OT_DIRECTORY_CONTENTS whose
 * entries are name -> object | type << 60 (zfs_dirent); each file, symlink and directory a dnode
 * of 512 bytes allocated with the largest bonus, as zfs_mknode does (so one block pointer: a
 * file of two blocks has an indirect block); a hard link a second directory entry for the same
 * object. A file of up to recordsize bytes is one block of its size rounded up to 512, a larger
 * one records of recordsize; every data extent of the source (SEEK_DATA/SEEK_HOLE) is written
 * with its exact bytes, holes are not written (the accuracy suite's copy model,
 * tests/accuracy/zfs_oracle.py: COPY_MODEL).
 * The znode: with --layout zpl, the ZPL's own system attributes through libzpool's SA layer
 * (sa_setup with zfs_attr_table: the registry and layouts ZAPs), written as zfs_mknode writes
 * them (with a trivial 3-entry ACL and the project id; a symlink's target in the SA), the shares
 * directory, and the user/group/project space accounting objects kept by the DMU through a
 * callback like zpl_get_file_info; an empty dataset then uses 88K at ashift 12, as a real
 * `zfs create` (the ZPL itself is not in libzpool). With --layout dmu (the default, what the
 * CI tolerances are set on): a 168-byte bonus that is not a parseable SA, none of those
 * objects; an empty dataset uses 56K. Not written either way: xattrs, non-trivial ACLs.
 *
 *   zpool_harness --tree DIR --pool-dir DIR [--pool NAME] [--vdev disk|mirror:N|raidzP:N]
 *       [--ashift N] [--vdev-size BYTES] [--recordsize BYTES] [--compression NAME]
 *       [--checksum NAME] [--dedup on|off] [--fast-dedup on|off] [--exclude-prefix P]
 *       [--flush natural|forced] [--layout dmu|zpl]
 *
 * Exit 0 success (JSON on stdout), 2 bad arguments, 1 a ZFS call failed (message on stderr).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sys/zfs_context.h>
#include <sys/spa.h>
#include <sys/spa_impl.h>
#include <sys/dmu.h>
#include <sys/dmu_objset.h>
#include <sys/dmu_tx.h>
#include <sys/dsl_dataset.h>
#include <sys/dsl_dir.h>
#include <sys/dsl_pool.h>
#include <sys/dsl_prop.h>
#include <sys/ddt.h>
#include <sys/ddt_impl.h>
#include <sys/zap.h>
#include <sys/zfs_znode.h>
#include <sys/sa.h>
#include <sys/sa_impl.h>
#include <sys/zfs_sa.h>
#include <sys/zfs_acl.h>
#include <sys/zfs_quota.h>
#include <sys/zfeature.h>
#include <sys/zio_checksum.h>
#include <sys/metaslab.h>
#include <sys/arc_impl.h>
#include <sys/fs/zfs.h>
#include <zfeature_common.h>
#include <zfs_prop.h>
#include <libnvpair.h>

/*
 * zfs_mknode allocates the dnode with the largest bonus (DN_BONUS_SIZE), which
 * leaves it one block pointer, then the SA shrinks the bonus to what it uses.
 */
#define	ALLOC_BONUS_LEN	DN_BONUS_SIZE(DNODE_BYTES)
#define	DNODE_BYTES	512	/* dnodesize=legacy */
/*
 * --layout dmu: a 168-byte bonus (the size of a ZPL znode's SA) that is not a
 * parseable SA, typed as plain uint64 metadata, no SA registry, no space
 * accounting objects, no shares directory, no symlink targets.
 */
#define	DMU_BONUS_LEN	168
#define	DMU_BONUS_TYPE	DMU_OTN_UINT64_METADATA
/* a trivial ACL: owner@, group@, everyone@ (zfs_acl_chmod), 8 bytes each */
#define	TRIVIAL_ACES	3
#define	WRITE_CHUNK	(1 << 20)

typedef struct options {
	const char *tree;
	const char *pool_dir;
	const char *pool;
	const char *vdev;
	int ashift;
	uint64_t vdev_size;
	uint64_t recordsize;
	const char *compression;
	const char *checksum;
	const char *dedup;
	int fast_dedup;
	const char *exclude_prefix;
	int forced_flush;
	int zpl;	/* --layout zpl: SA, space accounting, shares dir */
} options_t;

typedef struct link_entry {
	dev_t dev;
	ino_t ino;
	uint64_t obj;
} link_entry_t;

static options_t opt;
static sa_attr_type_t *sa_tbl;	/* the ZPL's SA attributes (zfs_attr_table) */
static link_entry_t *links;
static size_t nlinks, links_cap;
static uint64_t files_written, bytes_written;
static char *iobuf;

static void
die(const char *what, int err)
{
	(void) fprintf(stderr, "zpool_harness: %s: %s (%d)\n", what,
	    strerror(err), err);
	exit(1);
}

static void
usage(const char *msg)
{
	(void) fprintf(stderr, "zpool_harness: %s\n", msg);
	exit(2);
}

/* --- the pool ---------------------------------------------------------- */

static nvlist_t *
make_file_vdev(int i)
{
	char path[MAXPATHLEN];
	(void) snprintf(path, sizeof (path), "%s/%s-vdev%d.img", opt.pool_dir,
	    opt.pool, i);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die(path, errno);
	if (ftruncate(fd, opt.vdev_size) != 0)
		die(path, errno);
	(void) close(fd);
	nvlist_t *file = fnvlist_alloc();
	fnvlist_add_string(file, ZPOOL_CONFIG_TYPE, VDEV_TYPE_FILE);
	fnvlist_add_string(file, ZPOOL_CONFIG_PATH, path);
	fnvlist_add_uint64(file, ZPOOL_CONFIG_ASHIFT, opt.ashift);
	return (file);
}

/* disk | mirror:N | raidz:N | raidzP:N (P = 1..3) */
static nvlist_t *
make_root(void)
{
	nvlist_t *top;
	int width = 1, parity = 0;
	const char *type = VDEV_TYPE_FILE;
	if (strcmp(opt.vdev, "disk") == 0) {
		width = 1;
	} else if (sscanf(opt.vdev, "mirror:%d", &width) == 1 && width >= 2) {
		type = VDEV_TYPE_MIRROR;
	} else if (sscanf(opt.vdev, "raidz%d:%d", &parity, &width) == 2 &&
	    parity >= 1 && parity <= 3 && width > parity) {
		type = VDEV_TYPE_RAIDZ;
	} else if (sscanf(opt.vdev, "raidz:%d", &width) == 1 && width >= 2) {
		type = VDEV_TYPE_RAIDZ;
		parity = 1;
	} else {
		usage("--vdev must be disk, mirror:N, raidz:N or raidzP:N");
	}
	if (width == 1) {
		top = make_file_vdev(0);
	} else {
		nvlist_t **child = calloc(width, sizeof (nvlist_t *));
		for (int c = 0; c < width; c++)
			child[c] = make_file_vdev(c);
		top = fnvlist_alloc();
		fnvlist_add_string(top, ZPOOL_CONFIG_TYPE, type);
		if (parity > 0)
			fnvlist_add_uint64(top, ZPOOL_CONFIG_NPARITY, parity);
		fnvlist_add_nvlist_array(top, ZPOOL_CONFIG_CHILDREN,
		    (const nvlist_t **)child, width);
		for (int c = 0; c < width; c++)
			fnvlist_free(child[c]);
		free(child);
	}
	fnvlist_add_uint64(top, ZPOOL_CONFIG_IS_LOG, 0);
	nvlist_t *root = fnvlist_alloc();
	fnvlist_add_string(root, ZPOOL_CONFIG_TYPE, VDEV_TYPE_ROOT);
	fnvlist_add_nvlist_array(root, ZPOOL_CONFIG_CHILDREN,
	    (const nvlist_t **)&top, 1);
	fnvlist_free(top);
	return (root);
}

/* Every feature enabled, as `zpool create` does, fast_dedup only when asked. */
static nvlist_t *
make_pool_props(void)
{
	nvlist_t *props = fnvlist_alloc();
	for (int i = 0; i < SPA_FEATURES; i++) {
		if (!spa_feature_table[i].fi_zfs_mod_supported)
			continue;
		if (i == SPA_FEATURE_FAST_DEDUP && !opt.fast_dedup)
			continue;
		char name[256];
		(void) snprintf(name, sizeof (name), "feature@%s",
		    spa_feature_table[i].fi_uname);
		fnvlist_add_uint64(props, name, 0);
	}
	return (props);
}

static void
set_dataset_props(const char *dsname)
{
	nvlist_t *props = fnvlist_alloc();
	uint64_t v;
	if (zprop_string_to_index(ZFS_PROP_COMPRESSION, opt.compression, &v,
	    ZFS_TYPE_FILESYSTEM) != 0)
		usage("unknown --compression");
	fnvlist_add_uint64(props, zfs_prop_to_name(ZFS_PROP_COMPRESSION), v);
	if (zprop_string_to_index(ZFS_PROP_CHECKSUM, opt.checksum, &v,
	    ZFS_TYPE_FILESYSTEM) != 0)
		usage("unknown --checksum");
	fnvlist_add_uint64(props, zfs_prop_to_name(ZFS_PROP_CHECKSUM), v);
	if (zprop_string_to_index(ZFS_PROP_DEDUP, opt.dedup, &v,
	    ZFS_TYPE_FILESYSTEM) != 0)
		usage("unknown --dedup");
	fnvlist_add_uint64(props, zfs_prop_to_name(ZFS_PROP_DEDUP), v);
	fnvlist_add_uint64(props, zfs_prop_to_name(ZFS_PROP_RECORDSIZE),
	    opt.recordsize);
	fnvlist_add_uint64(props, zfs_prop_to_name(ZFS_PROP_ATIME), 0);
	int err = dsl_props_set(dsname, ZPROP_SRC_LOCAL, props);
	if (err != 0)
		die("dsl_props_set", err);
	fnvlist_free(props);
}

/* --- the filesystem layout ------------------------------------------- */

/* --layout dmu: the bonus filled with the znode's attributes, no SA layer */
static void
fill_sa_bonus(objset_t *os, uint64_t obj, const struct stat *st,
    uint64_t parent, dmu_tx_t *tx)
{
	dmu_buf_t *db;
	VERIFY0(dmu_bonus_hold(os, obj, FTAG, &db));
	VERIFY0(dmu_set_bonus(db, DMU_BONUS_LEN, tx));
	dmu_buf_will_dirty(db, tx);
	uint64_t *w = db->db_data;
	memset(w, 0, DMU_BONUS_LEN);
	/* an SA header and the znode's attributes, values as the source has them */
	w[0] = 0x2F505AULL | (1ULL << 32);
	w[1] = st->st_mode;
	w[2] = st->st_size;
	w[3] = 1;
	w[4] = st->st_uid;
	w[5] = st->st_gid;
	w[6] = parent;
	w[7] = 0x00000000800000000ULL;
	w[8] = st->st_atim.tv_sec;
	w[9] = st->st_atim.tv_nsec;
	w[10] = st->st_mtim.tv_sec;
	w[11] = st->st_mtim.tv_nsec;
	w[12] = st->st_ctim.tv_sec;
	w[13] = st->st_ctim.tv_nsec;
	w[14] = st->st_mtim.tv_sec;
	w[15] = st->st_mtim.tv_nsec;
	w[16] = st->st_nlink;
	w[17] = 0;
	w[18] = 0;
	w[19] = 0;
	w[20] = 0;
	dmu_buf_rele(db, FTAG);
}

/*
 * The znode's system attributes as zfs_mknode writes them for a new file, in
 * its order (module/os/linux/zfs/zfs_znode_os.c): mode, size, gen, uid, gid,
 * parent, flags, the four times, links, the project id (project quota is on),
 * the ACL's count and entries; a symlink's target as zfs_sa_symlink adds it.
 */
static void
write_sa(objset_t *os, uint64_t obj, const struct stat *st, uint64_t parent,
    const char *target, dmu_tx_t *tx)
{
	sa_handle_t *hdl;
	VERIFY0(sa_handle_get(os, obj, NULL, SA_HDL_PRIVATE, &hdl));
	uint64_t mode = st->st_mode, size = S_ISDIR(st->st_mode) ? 0 :
	    (uint64_t)st->st_size, gen = dmu_tx_get_txg(tx);
	uint64_t uid = st->st_uid, gid = st->st_gid, links = st->st_nlink;
	uint64_t flags = ZFS_ACL_TRIVIAL | ZFS_AV_MODIFIED | ZFS_ARCHIVE |
	    ZFS_PROJID, projid = ZFS_DEFAULT_PROJID, acl_count = TRIVIAL_ACES;
	uint64_t atime[2] = { st->st_atim.tv_sec, st->st_atim.tv_nsec };
	uint64_t mtime[2] = { st->st_mtim.tv_sec, st->st_mtim.tv_nsec };
	uint64_t ctime[2] = { st->st_ctim.tv_sec, st->st_ctim.tv_nsec };
	uint8_t aces[TRIVIAL_ACES * 8];
	memset(aces, 0, sizeof (aces));
	for (int i = 0; i < TRIVIAL_ACES; i++) {
		uint16_t who[] = { ACE_OWNER, ACE_GROUP, ACE_EVERYONE };
		uint32_t mask = 0x1f0086 | (i == 0 ? 0x10079 : 0);
		memcpy(aces + 8 * i, &(uint16_t){ ACE_ACCESS_ALLOWED_ACE_TYPE }, 2);
		memcpy(aces + 8 * i + 2, &who[i], 2);
		memcpy(aces + 8 * i + 4, &mask, 4);
	}
	sa_bulk_attr_t attrs[16];
	int n = 0;
	SA_ADD_BULK_ATTR(attrs, n, sa_tbl[ZPL_MODE], NULL, &mode, 8);
	SA_ADD_BULK_ATTR(attrs, n, sa_tbl[ZPL_SIZE], NULL, &size, 8);
	SA_ADD_BULK_ATTR(attrs, n, sa_tbl[ZPL_GEN], NULL, &gen, 8);
	SA_ADD_BULK_ATTR(attrs, n, sa_tbl[ZPL_UID], NULL, &uid, 8);
	SA_ADD_BULK_ATTR(attrs, n, sa_tbl[ZPL_GID], NULL, &gid, 8);
	SA_ADD_BULK_ATTR(attrs, n, sa_tbl[ZPL_PARENT], NULL, &parent, 8);
	SA_ADD_BULK_ATTR(attrs, n, sa_tbl[ZPL_FLAGS], NULL, &flags, 8);
	SA_ADD_BULK_ATTR(attrs, n, sa_tbl[ZPL_ATIME], NULL, atime, 16);
	SA_ADD_BULK_ATTR(attrs, n, sa_tbl[ZPL_MTIME], NULL, mtime, 16);
	SA_ADD_BULK_ATTR(attrs, n, sa_tbl[ZPL_CTIME], NULL, ctime, 16);
	SA_ADD_BULK_ATTR(attrs, n, sa_tbl[ZPL_CRTIME], NULL, ctime, 16);
	SA_ADD_BULK_ATTR(attrs, n, sa_tbl[ZPL_LINKS], NULL, &links, 8);
	SA_ADD_BULK_ATTR(attrs, n, sa_tbl[ZPL_PROJID], NULL, &projid, 8);
	SA_ADD_BULK_ATTR(attrs, n, sa_tbl[ZPL_DACL_COUNT], NULL, &acl_count,
	    8);
	SA_ADD_BULK_ATTR(attrs, n, sa_tbl[ZPL_DACL_ACES], NULL, aces,
	    sizeof (aces));
	if (target != NULL) {
		SA_ADD_BULK_ATTR(attrs, n, sa_tbl[ZPL_SYMLINK], NULL,
		    (void *)target, strlen(target));
	}
	VERIFY0(sa_replace_all_by_template(hdl, attrs, n, tx));
	sa_handle_destroy(hdl);
}

/*
 * The user/group/project space accounting of the ZPL (zpl_get_file_info in
 * module/zfs/zfs_quota.c): the DMU keeps the userused, groupused and
 * projectused objects with it. Ids at the SA's fixed offsets (zfs_sa.h).
 */
static int
file_info(dmu_object_type_t bonustype, const void *data, zfs_file_info_t *zoi)
{
	if (bonustype != DMU_OT_SA)
		return (SET_ERROR(ENOENT));
	zoi->zfi_project = ZFS_DEFAULT_PROJID;
	if (data == NULL)
		return (SET_ERROR(EEXIST));
	const sa_hdr_phys_t *hdr = data;
	if (hdr->sa_magic == 0) {
		zoi->zfi_user = zoi->zfi_group = zoi->zfi_generation = 0;
		return (0);
	}
	const uint8_t *attrs = (const uint8_t *)data + SA_HDR_SIZE(hdr);
	memcpy(&zoi->zfi_user, attrs + SA_UID_OFFSET, 8);
	memcpy(&zoi->zfi_group, attrs + SA_GID_OFFSET, 8);
	memcpy(&zoi->zfi_generation, attrs + SA_GEN_OFFSET, 8);
	return (0);
}

static uint64_t
create_object(objset_t *os, dmu_object_type_t type, const struct stat *st,
    uint64_t parent, uint64_t blksz, const char *target)
{
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_bonus(tx, DMU_NEW_OBJECT);
	if (opt.zpl)
		dmu_tx_hold_sa_create(tx, ALLOC_BONUS_LEN);
	dmu_object_type_t bonus = opt.zpl ? DMU_OT_SA : DMU_BONUS_TYPE;
	if (type == DMU_OT_DIRECTORY_CONTENTS)
		dmu_tx_hold_zap(tx, DMU_NEW_OBJECT, B_TRUE, NULL);
	int err = dmu_tx_assign(tx, DMU_TX_WAIT);
	if (err != 0)
		die("dmu_tx_assign (create)", err);
	uint64_t obj;
	if (type == DMU_OT_DIRECTORY_CONTENTS) {
		obj = zap_create_dnsize(os, type, bonus, ALLOC_BONUS_LEN,
		    DNODE_BYTES, tx);
	} else {
		obj = dmu_object_alloc_dnsize(os, type, 0, bonus,
		    ALLOC_BONUS_LEN, DNODE_BYTES, tx);
		if (blksz > SPA_MINBLOCKSIZE) {
			err = dmu_object_set_blocksize(os, obj, blksz, 0, tx);
			if (err != 0)
				die("dmu_object_set_blocksize", err);
		}
	}
	if (opt.zpl)
		write_sa(os, obj, st, parent, target, tx);
	else
		fill_sa_bonus(os, obj, st, parent, tx);
	dmu_tx_commit(tx);
	return (obj);
}

static void
add_entry(objset_t *os, uint64_t dir, const char *name, uint64_t obj,
    mode_t mode)
{
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_zap(tx, dir, B_TRUE, name);
	int err = dmu_tx_assign(tx, DMU_TX_WAIT);
	if (err != 0)
		die("dmu_tx_assign (entry)", err);
	uint64_t value = obj | ((uint64_t)IFTODT(mode) << 60);
	err = zap_add(os, dir, name, 8, 1, &value, tx);
	if (err != 0)
		die(name, err);
	dmu_tx_commit(tx);
}

/* The file's data extents, in pieces of at most WRITE_CHUNK, one tx each. */
static void
write_file(objset_t *os, uint64_t obj, int fd, uint64_t size)
{
	off_t pos = 0;
	while ((uint64_t)pos < size) {
		off_t data = lseek(fd, pos, SEEK_DATA);
		if (data < 0) {
			if (errno == ENXIO)
				break;
			die("lseek SEEK_DATA", errno);
		}
		off_t hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0)
			die("lseek SEEK_HOLE", errno);
		for (off_t off = data; off < hole; ) {
			size_t len = MIN(WRITE_CHUNK, hole - off);
			ssize_t got = pread(fd, iobuf, len, off);
			if (got <= 0)
				die("pread", got < 0 ? errno : EIO);
			dmu_tx_t *tx = dmu_tx_create(os);
			dmu_tx_hold_write(tx, obj, off, got);
			int err = dmu_tx_assign(tx, DMU_TX_WAIT);
			if (err != 0)
				die("dmu_tx_assign (write)", err);
			dmu_write(os, obj, off, got, iobuf, tx);
			dmu_tx_commit(tx);
			off += got;
			bytes_written += got;
		}
		pos = hole;
	}
	files_written++;
}

static uint64_t
find_link(const struct stat *st)
{
	for (size_t i = 0; i < nlinks; i++) {
		if (links[i].dev == st->st_dev && links[i].ino == st->st_ino)
			return (links[i].obj);
	}
	return (0);
}

static void
remember_link(const struct stat *st, uint64_t obj)
{
	if (nlinks == links_cap) {
		links_cap = links_cap ? 2 * links_cap : 256;
		links = realloc(links, links_cap * sizeof (link_entry_t));
	}
	links[nlinks++] = (link_entry_t){ st->st_dev, st->st_ino, obj };
}

static int
name_cmp(const void *a, const void *b)
{
	return (strcmp(*(char *const *)a, *(char *const *)b));
}

static void
copy_dir(objset_t *os, const char *path, uint64_t dirobj)
{
	DIR *d = opendir(path);
	if (d == NULL)
		die(path, errno);
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (opt.exclude_prefix != NULL && strncmp(de->d_name,
		    opt.exclude_prefix, strlen(opt.exclude_prefix)) == 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			names = realloc(names, cap * sizeof (char *));
		}
		names[n++] = strdup(de->d_name);
	}
	(void) closedir(d);
	qsort(names, n, sizeof (char *), name_cmp);
	for (size_t i = 0; i < n; i++) {
		char full[MAXPATHLEN];
		(void) snprintf(full, sizeof (full), "%s/%s", path, names[i]);
		struct stat st;
		if (lstat(full, &st) != 0)
			die(full, errno);
		uint64_t obj;
		if (S_ISDIR(st.st_mode)) {
			obj = create_object(os, DMU_OT_DIRECTORY_CONTENTS, &st,
			    dirobj, 0, NULL);
			add_entry(os, dirobj, names[i], obj, st.st_mode);
			copy_dir(os, full, obj);
		} else if (S_ISREG(st.st_mode)) {
			if (st.st_nlink > 1 && (obj = find_link(&st)) != 0) {
				add_entry(os, dirobj, names[i], obj,
				    st.st_mode);
				free(names[i]);
				continue;
			}
			uint64_t blksz = (uint64_t)st.st_size > opt.recordsize ?
			    opt.recordsize :
			    P2ROUNDUP((uint64_t)st.st_size, SPA_MINBLOCKSIZE);
			obj = create_object(os, DMU_OT_PLAIN_FILE_CONTENTS,
			    &st, dirobj, blksz, NULL);
			add_entry(os, dirobj, names[i], obj, st.st_mode);
			if (st.st_nlink > 1)
				remember_link(&st, obj);
			int fd = open(full, O_RDONLY);
			if (fd < 0)
				die(full, errno);
			write_file(os, obj, fd, st.st_size);
			(void) close(fd);
		} else {
			/* symlinks (the target in the SA), special files */
			char target[MAXPATHLEN];
			ssize_t tl = S_ISLNK(st.st_mode) ?
			    readlink(full, target, sizeof (target) - 1) : -1;
			if (tl >= 0)
				target[tl] = '\0';
			obj = create_object(os, DMU_OT_PLAIN_FILE_CONTENTS,
			    &st, dirobj, 0, tl >= 0 ? target : NULL);
			add_entry(os, dirobj, names[i], obj, st.st_mode);
		}
		free(names[i]);
	}
	free(names);
}

/* The master node and root directory, as zfs_create_fs lays them out. */
static uint64_t
create_master_node(objset_t *os, const char *tree)
{
	struct stat st;
	if (stat(tree, &st) != 0)
		die(tree, errno);
	dmu_tx_t *tx = dmu_tx_create(os);
	for (int i = 0; i < 3; i++)	/* master node, SA and unlinked set */
		dmu_tx_hold_zap(tx, DMU_NEW_OBJECT, B_TRUE, NULL);
	int err = dmu_tx_assign(tx, DMU_TX_WAIT);
	if (err != 0)
		die("dmu_tx_assign (master node)", err);
	VERIFY0(zap_create_claim(os, MASTER_NODE_OBJ, DMU_OT_MASTER_NODE,
	    DMU_OT_NONE, 0, tx));
	uint64_t version = ZPL_VERSION;
	VERIFY0(zap_update(os, MASTER_NODE_OBJ, ZPL_VERSION_STR, 8, 1,
	    &version, tx));
	uint64_t sa = zap_create(os, DMU_OT_SA_MASTER_NODE, DMU_OT_NONE, 0,
	    tx);
	VERIFY0(zap_add(os, MASTER_NODE_OBJ, ZFS_SA_ATTRS, 8, 1, &sa, tx));
	uint64_t unlinked = zap_create(os, DMU_OT_UNLINKED_SET, DMU_OT_NONE, 0,
	    tx);
	VERIFY0(zap_add(os, MASTER_NODE_OBJ, ZFS_UNLINKED_SET, 8, 1,
	    &unlinked, tx));
	dmu_tx_commit(tx);
	uint64_t shares = 0;
	if (opt.zpl) {
		/* the ZPL's attribute table: registry and layouts ZAPs */
		VERIFY0(sa_setup(os, sa, zfs_attr_table, ZPL_END, &sa_tbl));
		/* the shares directory (zfs_create_share_dir) */
		shares = create_object(os, DMU_OT_DIRECTORY_CONTENTS, &st, 0,
		    0, NULL);
	}
	uint64_t root = create_object(os, DMU_OT_DIRECTORY_CONTENTS, &st, 0,
	    0, NULL);
	tx = dmu_tx_create(os);
	dmu_tx_hold_zap(tx, MASTER_NODE_OBJ, B_TRUE, NULL);
	VERIFY0(dmu_tx_assign(tx, DMU_TX_WAIT));
	if (shares != 0) {
		VERIFY0(zap_add(os, MASTER_NODE_OBJ, ZFS_SHARES_DIR, 8, 1,
		    &shares, tx));
	}
	VERIFY0(zap_add(os, MASTER_NODE_OBJ, ZFS_ROOT_OBJ, 8, 1, &root, tx));
	dmu_tx_commit(tx);
	return (root);
}

/* --- what ZFS reports ------------------------------------------------- */

static void
print_ddt_objects(spa_t *spa, const char *label)
{
	ddt_object_t total;
	ddt_get_dedup_object_stats(spa, &total);
	(void) printf("  \"%s\": {\n", label);
	(void) printf("    \"total\": {\"entries\": %llu, \"dspace\": %llu, "
	    "\"mspace\": %llu},\n", (u_longlong_t)total.ddo_count,
	    (u_longlong_t)total.ddo_dspace, (u_longlong_t)total.ddo_mspace);
	(void) printf("    \"objects\": [");
	int first = 1;
	uint64_t log_entries = 0, log_dspace = 0, log_mspace = 0;
	for (enum zio_checksum c = 0; c < ZIO_CHECKSUM_FUNCTIONS; c++) {
		ddt_t *ddt = spa->spa_ddt[c];
		if (ddt == NULL)
			continue;
		for (ddt_type_t type = 0; type < DDT_TYPES; type++) {
			for (ddt_class_t class = 0; class < DDT_CLASSES;
			    class++) {
				dmu_object_info_t doi;
				uint64_t count;
				if (ddt_object_info(ddt, type, class, &doi) != 0)
					continue;
				if (ddt_object_count(ddt, type, class,
				    &count) != 0)
					continue;
				char name[DDT_NAMELEN];
				ddt_object_name(ddt, type, class, name);
				(void) printf("%s\n      {\"name\": \"%s\", "
				    "\"class\": \"%s\", \"entries\": %llu, "
				    "\"dspace\": %llu, \"mspace\": %llu, "
				    "\"blocks_512\": %llu, \"fill\": %llu, "
				    "\"block_size\": %llu, \"max_offset\": %llu, "
				    "\"levels\": %u}",
				    first ? "" : ",", name,
				    class == DDT_CLASS_UNIQUE ? "unique" :
				    class == DDT_CLASS_DUPLICATE ? "duplicate" :
				    "ditto", (u_longlong_t)count,
				    (u_longlong_t)(doi.doi_physical_blocks_512
				    << 9),
				    (u_longlong_t)(doi.doi_fill_count *
				    doi.doi_data_block_size),
				    (u_longlong_t)doi.doi_physical_blocks_512,
				    (u_longlong_t)doi.doi_fill_count,
				    (u_longlong_t)doi.doi_data_block_size,
				    (u_longlong_t)doi.doi_max_offset,
				    doi.doi_indirection);
				first = 0;
			}
		}
		log_entries += ddt->ddt_log_stats.ddo_count;
		log_dspace += ddt->ddt_log_stats.ddo_dspace;
		log_mspace += ddt->ddt_log_stats.ddo_mspace;
	}
	(void) printf("\n    ],\n    \"log\": {\"entries\": %llu, "
	    "\"dspace\": %llu, \"mspace\": %llu}\n  },\n",
	    (u_longlong_t)log_entries, (u_longlong_t)log_dspace,
	    (u_longlong_t)log_mspace);
}

static void
print_stat(const char *label, const ddt_stat_t *s, int last)
{
	(void) printf("\"%s\": {\"blocks\": %llu, \"lsize\": %llu, "
	    "\"psize\": %llu, \"dsize\": %llu}%s", label,
	    (u_longlong_t)s->dds_blocks, (u_longlong_t)s->dds_lsize,
	    (u_longlong_t)s->dds_psize, (u_longlong_t)s->dds_dsize,
	    last ? "" : ", ");
}

static void
print_histogram(spa_t *spa)
{
	ddt_histogram_t ddh;
	memset(&ddh, 0, sizeof (ddh));
	ddt_get_dedup_histogram(spa, &ddh);
	(void) printf("  \"histogram\": {");
	int first = 1;
	for (int h = 0; h < 64; h++) {
		ddt_stat_t ref = ddh.ddh_stat[h];
		if (ref.dds_blocks == 0)
			continue;
		ddt_stat_t alloc = ref;
		alloc.dds_blocks = ref.dds_blocks;
		/* ddh_stat holds the allocated side with ref_* for referenced */
		ddt_stat_t r = {
			.dds_blocks = ref.dds_ref_blocks,
			.dds_lsize = ref.dds_ref_lsize,
			.dds_psize = ref.dds_ref_psize,
			.dds_dsize = ref.dds_ref_dsize,
		};
		(void) printf("%s\n    \"%d\": {", first ? "" : ",", h);
		print_stat("allocated", &alloc, 0);
		print_stat("referenced", &r, 1);
		(void) printf("}");
		first = 0;
	}
	(void) printf("\n  },\n");
	ddt_stat_t total;
	ddt_get_dedup_stats(spa, &total);
	(void) printf("  \"ddt_total\": {\"blocks\": %llu, \"dsize\": %llu, "
	    "\"ref_blocks\": %llu, \"ref_lsize\": %llu, \"ref_psize\": %llu, "
	    "\"ref_dsize\": %llu},\n", (u_longlong_t)total.dds_blocks,
	    (u_longlong_t)total.dds_dsize, (u_longlong_t)total.dds_ref_blocks,
	    (u_longlong_t)total.dds_ref_lsize, (u_longlong_t)total.dds_ref_psize,
	    (u_longlong_t)total.dds_ref_dsize);
}

static uint64_t
pool_alloc(spa_t *spa)
{
	/* as spa_prop_get_config sums it for `zpool list` ALLOC */
	return (metaslab_class_get_alloc(spa_normal_class(spa)) +
	    metaslab_class_get_alloc(spa_special_class(spa)) +
	    metaslab_class_get_alloc(spa_dedup_class(spa)) +
	    metaslab_class_get_alloc(spa_embedded_log_class(spa)));
}

/* the MOS's space (dsize), as the $MOS directory accounts it */
static uint64_t
mos_used(spa_t *spa)
{
	return (dsl_dir_phys(spa_get_dsl(spa)->dp_mos_dir)->dd_used_bytes);
}

static void
print_dataset(objset_t *os)
{
	dsl_dir_t *dd = dmu_objset_ds(os)->ds_dir;
	dsl_dir_phys_t *ddp = dsl_dir_phys(dd);
	dsl_dataset_phys_t *dsp = dsl_dataset_phys(dmu_objset_ds(os));
	uint64_t ratio = ddp->dd_compressed_bytes == 0 ? 100 :
	    ddp->dd_uncompressed_bytes * 100 / ddp->dd_compressed_bytes;
	(void) printf("  \"dataset\": {\"used\": %llu, \"referenced\": %llu, "
	    "\"compressed\": %llu, \"uncompressed\": %llu, "
	    "\"compressratio\": \"%llu.%02llu\", \"objects\": %llu},\n",
	    (u_longlong_t)ddp->dd_used_bytes,
	    (u_longlong_t)dsp->ds_referenced_bytes,
	    (u_longlong_t)ddp->dd_compressed_bytes,
	    (u_longlong_t)ddp->dd_uncompressed_bytes,
	    (u_longlong_t)(ratio / 100), (u_longlong_t)(ratio % 100),
	    (u_longlong_t)(files_written));
}

static void
sync_pool(spa_t *spa, int txgs)
{
	for (int i = 0; i < txgs; i++)
		txg_wait_synced(spa_get_dsl(spa), 0);
}

static int
ddt_log_empty(spa_t *spa)
{
	for (enum zio_checksum c = 0; c < ZIO_CHECKSUM_FUNCTIONS; c++) {
		ddt_t *ddt = spa->spa_ddt[c];
		if (ddt != NULL && ddt->ddt_log_stats.ddo_count)
			return (0);
	}
	return (1);
}

/*
 * Drains the dedup log into the ZAPs. "natural": txgs with nothing else to
 * do, each flushing what ddt_sync_flush_log_incremental gives it (at least
 * zfs_dedup_log_flush_entries_min entries, smeared over the sync passes), as
 * an idle pool drains it; "forced": ddt_walk_init, everything at once (as
 * before a scrub).
 */
static void
flush_ddt_log(spa_t *spa, int forced)
{
	for (int i = 0; i < 100000 && !ddt_log_empty(spa); i++) {
		if (forced)
			ddt_walk_init(spa, 0);
		sync_pool(spa, 1);
	}
	if (!ddt_log_empty(spa))
		(void) fprintf(stderr,
		    "zpool_harness: the dedup log did not empty\n");
}

static uint64_t
parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 10);
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end != '\0' || v == 0)
		usage("bad size");
	return (v);
}

int
main(int argc, char **argv)
{
	opt = (options_t){ .pool = "zh23", .vdev = "disk", .ashift = 12,
	    .vdev_size = 8ULL << 30, .recordsize = 128 << 10,
	    .compression = "lz4", .checksum = "sha256", .dedup = "on",
	    .fast_dedup = 1 };
	static const struct option lo[] = {
		{ "tree", required_argument, NULL, 't' },
		{ "pool-dir", required_argument, NULL, 'd' },
		{ "pool", required_argument, NULL, 'p' },
		{ "vdev", required_argument, NULL, 'v' },
		{ "ashift", required_argument, NULL, 'a' },
		{ "vdev-size", required_argument, NULL, 's' },
		{ "recordsize", required_argument, NULL, 'r' },
		{ "compression", required_argument, NULL, 'c' },
		{ "checksum", required_argument, NULL, 'k' },
		{ "dedup", required_argument, NULL, 'D' },
		{ "fast-dedup", required_argument, NULL, 'f' },
		{ "exclude-prefix", required_argument, NULL, 'x' },
		{ "flush", required_argument, NULL, 'F' },
		{ "layout", required_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 't': opt.tree = optarg; break;
		case 'd': opt.pool_dir = optarg; break;
		case 'p': opt.pool = optarg; break;
		case 'v': opt.vdev = optarg; break;
		case 'a': opt.ashift = atoi(optarg); break;
		case 's': opt.vdev_size = parse_size(optarg); break;
		case 'r': opt.recordsize = parse_size(optarg); break;
		case 'c': opt.compression = optarg; break;
		case 'k': opt.checksum = optarg; break;
		case 'D': opt.dedup = optarg; break;
		case 'f':
			if (strcmp(optarg, "on") != 0 &&
			    strcmp(optarg, "off") != 0)
				usage("--fast-dedup must be on or off");
			opt.fast_dedup = strcmp(optarg, "on") == 0;
			break;
		case 'x': opt.exclude_prefix = optarg; break;
		case 'F':
			if (strcmp(optarg, "natural") != 0 &&
			    strcmp(optarg, "forced") != 0)
				usage("--flush must be natural or forced");
			opt.forced_flush = strcmp(optarg, "forced") == 0;
			break;
		case 'L':
			if (strcmp(optarg, "zpl") != 0 &&
			    strcmp(optarg, "dmu") != 0)
				usage("--layout must be zpl or dmu");
			opt.zpl = strcmp(optarg, "zpl") == 0;
			break;
		default: usage("unknown option");
		}
	}
	if (opt.tree == NULL || opt.pool_dir == NULL)
		usage("--tree and --pool-dir are required");
	if (opt.ashift < 9 || opt.ashift > 16)
		usage("--ashift must be 9..16");
	if (opt.recordsize < 512 || (opt.recordsize & (opt.recordsize - 1)))
		usage("--recordsize must be a power of two >= 512");
	struct stat st;
	if (stat(opt.tree, &st) != 0 || !S_ISDIR(st.st_mode))
		usage("--tree is not a directory");
	if (stat(opt.pool_dir, &st) != 0 || !S_ISDIR(st.st_mode))
		usage("--pool-dir is not a directory");
	/* vdev paths must be absolute */
	static char pool_dir[MAXPATHLEN];
	if (realpath(opt.pool_dir, pool_dir) == NULL)
		usage("--pool-dir cannot be resolved");
	opt.pool_dir = pool_dir;
	iobuf = malloc(WRITE_CHUNK);

	/*
	 * The pool's config cache goes beside its vdevs, never to the system's
	 * /etc/zfs/zpool.cache (zfs-fuse and the host's ZFS read that one).
	 */
	char cachefile[MAXPATHLEN];
	(void) snprintf(cachefile, sizeof (cachefile), "%s/%s.cache",
	    opt.pool_dir, opt.pool);
	spa_config_path = cachefile;
	/* a small ARC: the harness runs beside other work */
	zfs_arc_min = 64ULL << 20;
	zfs_arc_max = 512ULL << 20;
	kernel_init(SPA_MODE_READ | SPA_MODE_WRITE);
	spa_config_path = cachefile;

	nvlist_t *root = make_root();
	nvlist_t *props = make_pool_props();
	int err = spa_create(opt.pool, root, props, NULL, NULL);
	if (err != 0)
		die("spa_create", err);
	fnvlist_free(root);
	fnvlist_free(props);

	char dsname[ZFS_MAX_DATASET_NAME_LEN];
	(void) snprintf(dsname, sizeof (dsname), "%s/fs", opt.pool);
	/* the ZPL's space accounting callback, before the dataset exists */
	if (opt.zpl)
		dmu_objset_register_type(DMU_OST_ZFS, file_info);
	err = dmu_objset_create(dsname, DMU_OST_ZFS, 0, NULL, NULL, NULL);
	if (err != 0)
		die("dmu_objset_create", err);
	set_dataset_props(dsname);

	objset_t *os;
	err = dmu_objset_own(dsname, DMU_OST_ZFS, B_FALSE, B_TRUE, FTAG, &os);
	if (err != 0)
		die("dmu_objset_own", err);
	spa_t *spa = dmu_objset_spa(os);

	uint64_t rootobj = create_master_node(os, opt.tree);
	copy_dir(os, opt.tree, rootobj);
	/* the write reaches disk; the dataset's and pool's space settles */
	sync_pool(spa, 3);

	(void) printf("{\n  \"openzfs\": \"%s\",\n", ZFS_META_VERSION);
	(void) printf("  \"settings\": {\"vdev\": \"%s\", \"ashift\": %d, "
	    "\"recordsize\": %llu, \"compression\": \"%s\", "
	    "\"checksum\": \"%s\", \"dedup\": \"%s\", \"fast_dedup\": %s, "
	    "\"vdev_size\": %llu},\n", opt.vdev, opt.ashift,
	    (u_longlong_t)opt.recordsize, opt.compression, opt.checksum,
	    opt.dedup, opt.fast_dedup ? "true" : "false",
	    (u_longlong_t)opt.vdev_size);
	(void) printf("  \"written\": {\"files\": %llu, \"bytes\": %llu},\n",
	    (u_longlong_t)files_written, (u_longlong_t)bytes_written);
	print_ddt_objects(spa, "ddt_after_write");
	flush_ddt_log(spa, opt.forced_flush);
	sync_pool(spa, 2);
	print_ddt_objects(spa, "ddt_flushed");
	print_histogram(spa);
	print_dataset(os);
	uint64_t dedup = ddt_get_pool_dedup_ratio(spa);
	uint64_t alloc_live = pool_alloc(spa);
	uint64_t mos_live = mos_used(spa);
	dmu_objset_disown(os, B_TRUE, FTAG);

	/*
	 * The settled ALLOC: export, import again and let a few txgs pass. On
	 * the live pool, after a fast-dedup log flush spread over sync passes,
	 * the in-core metaslab accounting (what `zpool list` shows) keeps up
	 * to a few hundred KiB per MiB of table that the log space maps record
	 * as freed: the import replays them (spa_ld_log_spacemaps), and the
	 * figure then equals the sum of the live blocks (zdb -b's "bp
	 * allocated" - "bp deduped", plus the space maps zdb does not walk).
	 */
	nvlist_t *config = NULL;
	err = spa_export(opt.pool, &config, B_FALSE, B_FALSE);
	if (err != 0)
		die("spa_export", err);
	char pool_name[ZFS_MAX_DATASET_NAME_LEN];
	(void) strlcpy(pool_name, opt.pool, sizeof (pool_name));
	err = spa_import(pool_name, config, NULL, 0);
	if (err != 0)
		die("spa_import", err);
	fnvlist_free(config);
	VERIFY0(spa_open(opt.pool, &spa, FTAG));
	sync_pool(spa, 3);
	(void) printf("  \"pool\": {\"alloc\": %llu, \"alloc_live\": %llu, "
	    "\"mos_used\": %llu, \"mos_used_live\": %llu, "
	    "\"dedupratio\": \"%llu.%02llu\"}\n}\n",
	    (u_longlong_t)pool_alloc(spa), (u_longlong_t)alloc_live,
	    (u_longlong_t)mos_used(spa), (u_longlong_t)mos_live,
	    (u_longlong_t)(dedup / 100), (u_longlong_t)(dedup % 100));
	(void) fflush(stdout);
	spa_close(spa, FTAG);
	err = spa_export(opt.pool, NULL, B_FALSE, B_FALSE);
	if (err != 0)
		die("spa_export", err);
	kernel_fini();
	free(iobuf);
	return (0);
}
