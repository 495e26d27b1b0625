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
 * file of two blocks has an indirect block), then a 168-byte bonus (the size of a ZPL znode's
 * SA); a hard link a
 * second directory entry for the same object. A file of up to recordsize bytes is one block of
 * its size rounded up to 512, a larger one records of recordsize; every data extent of the source
 * (SEEK_DATA/SEEK_HOLE) is written with its exact bytes, holes are not written (the accuracy
 * suite's copy model, tests/accuracy/zfs_oracle.py: COPY_MODEL). Not modelled: the SA layout
 * registry objects, ACLs, xattrs, user/group used accounting (no ZPL callback in user space).
 *
 *   zpool_harness --tree DIR --pool-dir DIR [--pool NAME] [--vdev disk|mirror:N|raidzP:N]
 *       [--ashift N] [--vdev-size BYTES] [--recordsize BYTES] [--compression NAME]
 *       [--checksum NAME] [--dedup on|off] [--fast-dedup on|off] [--exclude-prefix P]
 *       [--flush natural|forced]
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
#include <sys/zfeature.h>
#include <sys/zio_checksum.h>
#include <sys/metaslab.h>
#include <sys/arc_impl.h>
#include <sys/fs/zfs.h>
#include <zfeature_common.h>
#include <zfs_prop.h>
#include <libnvpair.h>

#define	SA_BONUS_LEN	168	/* bonus of a ZPL znode's dnode (SA) */
/*
 * zfs_mknode allocates the dnode with the largest bonus (DN_BONUS_SIZE), which
 * leaves it one block pointer, then the SA shrinks the bonus to what it uses.
 */
#define	ALLOC_BONUS_LEN	DN_BONUS_SIZE(DNODE_BYTES)
#define	DNODE_BYTES	512	/* dnodesize=legacy */
/*
 * The bonus is not a parseable SA (no layout registry is written), so it is
 * typed as plain uint64 metadata, which zdb dumps without interpreting.
 */
#define	BONUS_TYPE	DMU_OTN_UINT64_METADATA
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
} options_t;

typedef struct link_entry {
	dev_t dev;
	ino_t ino;
	uint64_t obj;
} link_entry_t;

static options_t opt;
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

static void
fill_sa_bonus(objset_t *os, uint64_t obj, const struct stat *st,
    uint64_t parent, dmu_tx_t *tx)
{
	dmu_buf_t *db;
	VERIFY0(dmu_bonus_hold(os, obj, FTAG, &db));
	VERIFY0(dmu_set_bonus(db, SA_BONUS_LEN, tx));
	dmu_buf_will_dirty(db, tx);
	uint64_t *w = db->db_data;
	memset(w, 0, SA_BONUS_LEN);
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

static uint64_t
create_object(objset_t *os, dmu_object_type_t type, const struct stat *st,
    uint64_t parent, uint64_t blksz)
{
	dmu_tx_t *tx = dmu_tx_create(os);
	dmu_tx_hold_bonus(tx, DMU_NEW_OBJECT);
	if (type == DMU_OT_DIRECTORY_CONTENTS)
		dmu_tx_hold_zap(tx, DMU_NEW_OBJECT, B_TRUE, NULL);
	int err = dmu_tx_assign(tx, DMU_TX_WAIT);
	if (err != 0)
		die("dmu_tx_assign (create)", err);
	uint64_t obj;
	if (type == DMU_OT_DIRECTORY_CONTENTS) {
		obj = zap_create_dnsize(os, type, BONUS_TYPE, ALLOC_BONUS_LEN,
		    DNODE_BYTES, tx);
	} else {
		obj = dmu_object_alloc_dnsize(os, type, 0, BONUS_TYPE,
		    ALLOC_BONUS_LEN, DNODE_BYTES, tx);
		if (blksz > SPA_MINBLOCKSIZE) {
			err = dmu_object_set_blocksize(os, obj, blksz, 0, tx);
			if (err != 0)
				die("dmu_object_set_blocksize", err);
		}
	}
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
			    dirobj, 0);
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
			    &st, dirobj, blksz);
			add_entry(os, dirobj, names[i], obj, st.st_mode);
			if (st.st_nlink > 1)
				remember_link(&st, obj);
			int fd = open(full, O_RDONLY);
			if (fd < 0)
				die(full, errno);
			write_file(os, obj, fd, st.st_size);
			(void) close(fd);
		} else {
			/* symlinks and special files: a znode, no data */
			obj = create_object(os, DMU_OT_PLAIN_FILE_CONTENTS,
			    &st, dirobj, 0);
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
	uint64_t root = create_object(os, DMU_OT_DIRECTORY_CONTENTS, &st, 0,
	    0);
	tx = dmu_tx_create(os);
	dmu_tx_hold_zap(tx, MASTER_NODE_OBJ, B_TRUE, NULL);
	VERIFY0(dmu_tx_assign(tx, DMU_TX_WAIT));
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
	(void) printf("  \"pool\": {\"alloc\": %llu, \"dedupratio\": "
	    "\"%llu.%02llu\"}\n}\n", (u_longlong_t)pool_alloc(spa),
	    (u_longlong_t)(dedup / 100), (u_longlong_t)(dedup % 100));
	(void) fflush(stdout);

	dmu_objset_disown(os, B_TRUE, FTAG);
	err = spa_export(opt.pool, NULL, B_FALSE, B_FALSE);
	if (err != 0)
		die("spa_export", err);
	kernel_fini();
	free(iobuf);
	return (0);
}
