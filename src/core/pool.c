/*
 * pool.c
 *	  Creating, validating and mapping the persistent-memory pool file.
 *
 * See pool.h for the layout, the creation order and the header rewrite.
 * Every way a file can fail to be this cluster's pool (missing header,
 * other format, corrupt or truncated header or growth segment, another
 * cluster's or another mode's pool, a file locked by another server) is
 * reported as an error code plus a message that names the file; nothing
 * here dereferences a byte of the file that validation has not shown to
 * exist.  The file is mapped with the length of the largest size the pool
 * may grow to; growing it (grow.h) only extends the file.
 */
#include "pool.h"

#include "persist.h"
#include "tabledir.h"

#include <errno.h>
#include <fcntl.h>
#include <libpmem.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

#define NVM_DEFAULT_RING_WORDS	2048	/* 63,488 transactions per slot */
#define NVM_DEFAULT_MAX_TABLES	16384
#define NVM_CLOG_WORDS			32768	/* 1,048,576 transactions */
#define NVM_CHUNK_SIZE			(1u << 20)
#define NVM_PAGE				4096

char	   *nvm_pool_base = NULL;
NvmPoolHeader *nvm_pool_header = NULL;
uint32_t	nvm_pool_pending_mode = 0;
uint32_t	nvm_pool_opened_mode = 0;
uint32_t	nvm_pool_upgraded_from = 0;
uint64_t	nvm_pool_reserved_size = 0;
uint64_t	nvm_pool_grow_step = NVM_POOL_DEFAULT_GROW_STEP;
NvmStorageClass nvm_pool_storage = NVM_STORAGE_UNKNOWN;
char		nvm_pool_storage_how[64] = "";

static int	pool_fd = -1;
static int	map_sync_flags = 0;	/* MAP_SYNC when the pool is mapped with it */

/*
 * nvm_pool_header_checksum computes FNV-1a over every header field before
 * the checksum itself.
 */
static uint64_t
fnv1a(const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t	h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < n; i++)
	{
		h ^= p[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

uint64_t
nvm_pool_header_checksum(const NvmPoolHeader *hdr)
{
	return fnv1a(hdr, offsetof(NvmPoolHeader, checksum));
}

/*
 * nvm_pool_segment_checksum computes FNV-1a over every field of a growth
 * segment's header before the checksum.
 */
uint64_t
nvm_pool_segment_checksum(const NvmSegmentHeader *seg)
{
	return fnv1a(seg, offsetof(NvmSegmentHeader, checksum));
}

/*
 * compute_layout fills the region offsets of a new pool of the given size.
 * Returns false if the size is too small for the fixed regions and at least
 * a few chunks.  With NVM_POOL_LAZY_RINGS in flags the ring region is empty.
 */
static bool
compute_layout(NvmPoolHeader *hdr, uint64_t size, uint32_t max_slots,
			   uint32_t ring_words, uint32_t max_tables, uint32_t flags)
{
	uint64_t	off;
	uint64_t	remaining;
	uint64_t	nchunks;
	uint64_t	ring_bytes = (flags & NVM_POOL_LAZY_RINGS) ? 0 :
		(uint64_t) max_slots * ring_words * sizeof(uint64_t);

	hdr->pool_size = size;
	hdr->max_slots = max_slots;
	hdr->ring_words = ring_words;
	hdr->max_tables = max_tables;
	hdr->flags = flags;
	hdr->chunk_size = NVM_CHUNK_SIZE;
	hdr->root_off = NVM_POOL_HEADER_SIZE;
	hdr->slots_off = hdr->root_off + NVM_PAGE;
	off = NVM_ALIGN_UP(hdr->slots_off + (uint64_t) max_slots * sizeof(NvmSlotPersist), NVM_PAGE);
	hdr->rings_off = off;
	off = NVM_ALIGN_UP(off + ring_bytes, NVM_PAGE);
	hdr->clog_words = NVM_CLOG_WORDS;
	hdr->clog_off = off;
	off = NVM_ALIGN_UP(off + (uint64_t) NVM_CLOG_WORDS * sizeof(uint64_t), NVM_PAGE);
	hdr->tables_off = off;
	off = NVM_ALIGN_UP(off + (uint64_t) max_tables * sizeof(NvmTableDirEntry), NVM_PAGE);
	hdr->chunk_table_off = off;
	if (off >= size)
		return false;
	remaining = size - off;
	nchunks = remaining / (NVM_CHUNK_SIZE + sizeof(uint64_t));
	while (nchunks > 0 &&
		   NVM_ALIGN_UP(off + nchunks * sizeof(uint64_t), NVM_PAGE) + nchunks * NVM_CHUNK_SIZE > size)
		nchunks--;
	if (nchunks < 4)
		return false;
	hdr->nchunks = nchunks;
	hdr->chunks_off = NVM_ALIGN_UP(off + nchunks * sizeof(uint64_t), NVM_PAGE);
	return true;
}

/*
 * layout_is_sane checks that the header's regions are in order and inside
 * the file, so that nothing later reads outside the mapping.
 */
static bool
layout_is_sane(const NvmPoolHeader *hdr)
{
	NvmPoolHeader expect;

	if (hdr->max_slots == 0 || hdr->max_slots > NVM_MAX_SLOTS ||
		hdr->ring_words == 0 || hdr->max_tables == 0 ||
		hdr->chunk_size != NVM_CHUNK_SIZE || hdr->header_size != NVM_POOL_HEADER_SIZE ||
		(hdr->flags & ~NVM_POOL_KNOWN_FLAGS) != 0 ||
		(hdr->format_version == NVM_POOL_FORMAT_V2 && hdr->flags != 0))
		return false;
	memset(&expect, 0, sizeof(expect));
	if (!compute_layout(&expect, hdr->pool_size, hdr->max_slots, hdr->ring_words,
						hdr->max_tables, hdr->flags))
		return false;
	return expect.root_off == hdr->root_off &&
		expect.slots_off == hdr->slots_off &&
		expect.rings_off == hdr->rings_off &&
		expect.clog_off == hdr->clog_off &&
		expect.clog_words == hdr->clog_words &&
		expect.tables_off == hdr->tables_off &&
		expect.chunk_table_off == hdr->chunk_table_off &&
		expect.chunks_off == hdr->chunks_off &&
		expect.nchunks == hdr->nchunks;
}

/*
 * initialise_regions writes the initial contents of a new pool (whose file
 * is zero-filled) and persists them; the header comes afterwards.
 */
static void
initialise_regions(const NvmPoolHeader *hdr)
{
	NvmPoolRoot *root = (NvmPoolRoot *) (nvm_pool_base + hdr->root_off);

	root->clean_shutdown = 0;
	root->start_count = 0;
	root->n2db_reserved = 1;
	nvm_flush(root, sizeof(*root));
	for (uint32_t i = 0; i < hdr->max_slots; i++)
	{
		NvmSlotPersist *sp = ((NvmSlotPersist *) (nvm_pool_base + hdr->slots_off)) + i;

		sp->clock_reserved = 1;
		/* lazy rings: none yet (nvm_txn_begin_write allocates it) */
		if (!(hdr->flags & NVM_POOL_LAZY_RINGS))
			sp->ring_off = hdr->rings_off + (uint64_t) i * hdr->ring_words * sizeof(uint64_t);
		nvm_flush(sp, sizeof(*sp));
	}
	/* status rings, table directory and chunk table are all zero: nothing to write */
	nvm_drain();
}

static NvmPoolOpenResult
fail(NvmPoolOpenResult code, char *errbuf, size_t errbuf_size, const char *fmt, const char *path, int err)
{
	char		msg[256];

	snprintf(msg, sizeof(msg), fmt, path);
	if (err)
		snprintf(errbuf, errbuf_size, "%s: %s", msg, strerror(err));
	else
		snprintf(errbuf, errbuf_size, "%s", msg);
	nvm_pool_close();
	return code;
}

static bool map_prefault = false;

/*
 * nvm_storage_class_name: see pool.h.
 */
const char *
nvm_storage_class_name(NvmStorageClass storage)
{
	switch (storage)
	{
		case NVM_STORAGE_PMEM:
			return "persistent memory";
		case NVM_STORAGE_PAGE_CACHE:
			return "page-cache file";
		case NVM_STORAGE_VOLATILE:
			return "volatile";
		case NVM_STORAGE_UNKNOWN:
			break;
	}
	return "unknown";
}

/*
 * file_system_name names the file system of the pool file from its
 * statfs type, or writes its number.
 */
static void
file_system_name(const struct statfs *sfs, char *out, size_t outlen)
{
	static const struct
	{
		unsigned long type;
		const char *name;
	}			known[] = {
		{EXT4_SUPER_MAGIC, "ext4"},
		{XFS_SUPER_MAGIC, "xfs"},
		{BTRFS_SUPER_MAGIC, "btrfs"},
		{TMPFS_MAGIC, "tmpfs"},
		{RAMFS_MAGIC, "ramfs"},
		{HUGETLBFS_MAGIC, "hugetlbfs"},
		{OVERLAYFS_SUPER_MAGIC, "overlayfs"},
		{NFS_SUPER_MAGIC, "nfs"},
		{F2FS_SUPER_MAGIC, "f2fs"},
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
	{
		if ((unsigned long) sfs->f_type == known[i].type)
		{
			snprintf(out, outlen, "%s", known[i].name);
			return;
		}
	}
	snprintf(out, outlen, "file system type 0x%lx", (unsigned long) sfs->f_type);
}

#define HUGE_PAGE		(UINT64_C(2) << 20)
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif

bool		nvm_pool_huge_pages = false;
static uint32_t huge_mode = NVM_HUGE_PAGES_TRY;

/*
 * aligned_space reserves reserve bytes of address space at a 2 MiB
 * boundary (inaccessible, to be mapped over with MAP_FIXED) and returns
 * its start, or NULL.
 */
static void *
aligned_space(uint64_t reserve)
{
	char	   *r,
			   *a;

	r = mmap(NULL, reserve + HUGE_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return NULL;
	a = (char *) (((uintptr_t) r + HUGE_PAGE - 1) & ~(uintptr_t) (HUGE_PAGE - 1));
	if (a > r)
		munmap(r, (size_t) (a - r));
	munmap(a + reserve, (size_t) (r + HUGE_PAGE - a));
	return a;
}

/*
 * collapse_range puts the pool's pages in [start, end) (offsets, rounded
 * out to whole 2 MiB pages inside the file) into huge pages; false if the
 * kernel refused.  The pages are the file's, so every process that maps the
 * pool at the same 2 MiB-aligned address finds them.
 */
static bool
collapse_range(uint64_t start, uint64_t end)
{
	start &= ~(HUGE_PAGE - 1);
	end &= ~(HUGE_PAGE - 1);
	if (end <= start)
		return true;
	return madvise(nvm_pool_base + start, (size_t) (end - start), MADV_COLLAPSE) == 0;
}

/*
 * map_file maps reserve bytes of the pool file, of which the first
 * file_size exist: the rest is address space the pool may grow into (a
 * touch there before the file is extended would be SIGBUS).  With prefault
 * the existing part is faulted in at once.
 *
 * It also finds the storage class (pool.h).  A file on tmpfs, ramfs or
 * hugetlbfs is volatile.  Any other file is first mapped with MAP_SYNC,
 * which only a DAX file system grants: it is then persistent memory.
 * Otherwise it is mapped plainly, and libpmem's pmem_is_pmem decides
 * between persistent memory and the page cache (it answers yes for a
 * range libpmem knows to be persistent memory, or when PMEM_IS_PMEM_FORCE
 * says so).  libpmem's pmem_map_file, which does the same, maps only the
 * file's present length; the pool maps the most it may grow to, so that
 * growing never moves it.  The mapping starts at a 2 MiB boundary and gets
 * huge pages as NvmHugePages says (pool.h).
 */
static NvmPoolOpenResult
map_file(uint64_t reserve, uint64_t file_size, char *errbuf, size_t errbuf_size,
		 const char *path)
{
	struct statfs sfs;
	bool		is_volatile = false;
	void	   *p = MAP_FAILED;
	void	   *hint;

	if (fstatfs(pool_fd, &sfs) != 0)
		return fail(NVM_POOL_ERR_IO, errbuf, errbuf_size, "could not stat the file system of pool file \"%s\"", path, errno);
	file_system_name(&sfs, nvm_pool_storage_how, sizeof(nvm_pool_storage_how));
	is_volatile = sfs.f_type == TMPFS_MAGIC || sfs.f_type == RAMFS_MAGIC ||
		sfs.f_type == HUGETLBFS_MAGIC;
	map_sync_flags = 0;
	hint = aligned_space(reserve);
	if (!is_volatile)
	{
		p = mmap(hint, reserve, PROT_READ | PROT_WRITE,
				 MAP_SHARED_VALIDATE | MAP_SYNC | MAP_NORESERVE | (hint ? MAP_FIXED : 0), pool_fd, 0);
		if (p != MAP_FAILED)
			map_sync_flags = MAP_SYNC;
	}
	if (p == MAP_FAILED)
		p = mmap(hint, reserve, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_NORESERVE | (hint ? MAP_FIXED : 0), pool_fd, 0);
	if (p == MAP_FAILED)
	{
		if (hint)
			munmap(hint, reserve);
		return fail(NVM_POOL_ERR_IO, errbuf, errbuf_size, "could not map pool file \"%s\"", path, errno);
	}
	nvm_pool_base = p;
	nvm_pool_reserved_size = reserve;
	nvm_pool_header = (NvmPoolHeader *) p;

	if (is_volatile)
		nvm_pool_storage = NVM_STORAGE_VOLATILE;
	else if (map_sync_flags != 0)
	{
		nvm_pool_storage = NVM_STORAGE_PMEM;
		snprintf(nvm_pool_storage_how, sizeof(nvm_pool_storage_how), "DAX, mapped with MAP_SYNC");
	}
	else if (pmem_is_pmem(p, file_size))
	{
		nvm_pool_storage = NVM_STORAGE_PMEM;
		snprintf(nvm_pool_storage_how, sizeof(nvm_pool_storage_how), "pmem_is_pmem");
	}
	else
		nvm_pool_storage = NVM_STORAGE_PAGE_CACHE;

	if (map_prefault &&
		mmap(p, file_size, PROT_READ | PROT_WRITE,
			 (map_sync_flags ? MAP_SHARED_VALIDATE | map_sync_flags : MAP_SHARED) |
			 MAP_FIXED | MAP_POPULATE, pool_fd, 0) == MAP_FAILED)
		return fail(NVM_POOL_ERR_IO, errbuf, errbuf_size, "could not map pool file \"%s\"", path, errno);

	/*
	 * Huge pages (pool.h, NvmHugePages): a DAX mapping at a 2 MiB boundary
	 * gets them from the file system; other files are advised and their
	 * pages collapsed now (and each growth segment's when it is added).
	 */
	nvm_pool_huge_pages = false;
	if (huge_mode != NVM_HUGE_PAGES_OFF && hint != NULL)
	{
		if (map_sync_flags != 0)
			nvm_pool_huge_pages = true;
		else
		{
			(void) madvise(p, reserve, MADV_HUGEPAGE);
			nvm_pool_huge_pages = collapse_range(0, file_size);
		}
	}
	if (huge_mode == NVM_HUGE_PAGES_ON && !nvm_pool_huge_pages)
		return fail(NVM_POOL_ERR_HUGE_PAGES, errbuf, errbuf_size,
					"could not map pool file \"%s\" with huge pages", path, hint ? errno : ENOMEM);
	return NVM_POOL_OK;
}

/*
 * nvm_pool_sync: see pool.h.
 */
int
nvm_pool_sync(void)
{
	if (nvm_pool_storage != NVM_STORAGE_PAGE_CACHE || pool_fd < 0)
		return 0;
	if (fsync(pool_fd) != 0)
		return errno;
	return 0;
}

/*
 * nvm_pool_sync_range: see pool.h.  libpmem's pmem_msync widens the range
 * to whole pages.
 */
int
nvm_pool_sync_range(const void *addr, size_t len)
{
	if (nvm_pool_storage != NVM_STORAGE_PAGE_CACHE || pool_fd < 0)
		return 0;
	if (pmem_msync(addr, len) != 0)
		return errno;
	return 0;
}

/*
 * reserve_size returns the bytes of address space to map: the largest size
 * the pool may grow to, at least what exists already, in whole pages.
 */
static uint64_t
reserve_size(const NvmPoolOptions *opts, uint64_t existing)
{
	uint64_t	r = opts->max_size > existing ? opts->max_size : existing;

	return NVM_ALIGN_UP(r, NVM_PAGE);
}

static NvmPoolOpenResult
create_pool(const NvmPoolOptions *opts, char *errbuf, size_t errbuf_size)
{
	NvmPoolHeader hdr;
	int			rc;

	uint32_t	format = opts->create_format ? opts->create_format : NVM_POOL_FORMAT_VERSION;

	memset(&hdr, 0, sizeof(hdr));
	if (!compute_layout(&hdr, opts->create_size, opts->max_slots,
						opts->ring_words ? opts->ring_words : NVM_DEFAULT_RING_WORDS,
						opts->max_tables ? opts->max_tables : NVM_DEFAULT_MAX_TABLES,
						format == NVM_POOL_FORMAT_V2 ? 0 : NVM_POOL_LAZY_RINGS))
		return fail(NVM_POOL_ERR_BAD_LAYOUT, errbuf, errbuf_size,
					"pool size is too small for a new pool file \"%s\"", opts->path, 0);

	pool_fd = open(opts->path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (pool_fd < 0)
		return fail(NVM_POOL_ERR_IO, errbuf, errbuf_size, "could not create pool file \"%s\"", opts->path, errno);
	if (flock(pool_fd, LOCK_EX | LOCK_NB) != 0)
		return fail(NVM_POOL_ERR_LOCKED, errbuf, errbuf_size, "pool file \"%s\" is in use by another server", opts->path, 0);
	/* allocate for real: a sparse file on tmpfs turns "no space" into SIGBUS */
	rc = posix_fallocate(pool_fd, 0, (off_t) opts->create_size);
	if (rc != 0)
	{
		unlink(opts->path);
		return fail(NVM_POOL_ERR_IO, errbuf, errbuf_size, "could not allocate pool file \"%s\"", opts->path, rc);
	}
	rc = map_file(reserve_size(opts, opts->create_size), opts->create_size,
				  errbuf, errbuf_size, opts->path);
	if (rc != NVM_POOL_OK)
	{
		unlink(opts->path);		/* not a pool yet: no header */
		return (NvmPoolOpenResult) rc;
	}

	initialise_regions(&hdr);

	/* last: the header, which makes the file a pool */
	hdr.magic = NVM_POOL_MAGIC;
	hdr.format_version = format;
	hdr.header_size = NVM_POOL_HEADER_SIZE;
	hdr.system_identifier = opts->system_identifier;
	hdr.cc_mode = opts->cc_mode;
	nvm_pool_opened_mode = opts->cc_mode;
	hdr.checksum = nvm_pool_header_checksum(&hdr);
	memcpy(nvm_pool_base, &hdr, sizeof(hdr));
	nvm_persist(nvm_pool_base, sizeof(hdr));
	if (fsync(pool_fd) != 0)
		return fail(NVM_POOL_ERR_IO, errbuf, errbuf_size, "could not fsync pool file \"%s\"", opts->path, errno);
	return NVM_POOL_CREATED;
}

/*
 * header_is_whole says whether hdr carries the magic and a matching
 * checksum (what the shadow copy must have to be used).
 */
static bool
header_is_whole(const NvmPoolHeader *hdr)
{
	return hdr->magic == NVM_POOL_MAGIC && hdr->checksum == nvm_pool_header_checksum(hdr);
}

/*
 * nvm_pool_open opens the pool named in opts, creating it if the file does
 * not exist, validates its header and growth segments and maps it; a
 * header rewrite that a crash interrupted is finished, and a pool of
 * format 2 is upgraded (see pool.h).
 */
NvmPoolOpenResult
nvm_pool_open(const NvmPoolOptions *opts, char *errbuf, size_t errbuf_size)
{
	struct stat st;
	NvmPoolHeader hdr;
	NvmPoolHeader shadow;
	bool		from_shadow = false;
	ssize_t		n;
	NvmPoolOpenResult rc;
	char		msg[256];

	errbuf[0] = '\0';
	map_prefault = opts->prefault;
	huge_mode = opts->huge_pages;
	nvm_pool_upgraded_from = 0;
	nvm_pool_grow_step = opts->grow_step ? opts->grow_step : NVM_POOL_DEFAULT_GROW_STEP;
	if (stat(opts->path, &st) != 0)
	{
		if (errno == ENOENT)
			return create_pool(opts, errbuf, errbuf_size);
		return fail(NVM_POOL_ERR_IO, errbuf, errbuf_size, "could not stat pool file \"%s\"", opts->path, errno);
	}

	pool_fd = open(opts->path, O_RDWR);
	if (pool_fd < 0)
		return fail(NVM_POOL_ERR_IO, errbuf, errbuf_size, "could not open pool file \"%s\"", opts->path, errno);
	if (flock(pool_fd, LOCK_EX | LOCK_NB) != 0)
		return fail(NVM_POOL_ERR_LOCKED, errbuf, errbuf_size, "pool file \"%s\" is in use by another server", opts->path, 0);
	if (fstat(pool_fd, &st) != 0)
		return fail(NVM_POOL_ERR_IO, errbuf, errbuf_size, "could not stat pool file \"%s\"", opts->path, errno);
	/* the pool holds the table data of the cluster: only its owner may read it */
	if ((st.st_mode & 077) != 0 && fchmod(pool_fd, 0600) != 0)
		return fail(NVM_POOL_ERR_IO, errbuf, errbuf_size, "could not restrict permissions of pool file \"%s\"", opts->path, errno);
	if ((uint64_t) st.st_size < sizeof(hdr))
		return fail(NVM_POOL_ERR_TRUNCATED, errbuf, errbuf_size, "pool file \"%s\" is truncated (shorter than its header)", opts->path, 0);

	n = pread(pool_fd, &hdr, sizeof(hdr), 0);
	if (n != (ssize_t) sizeof(hdr))
		return fail(NVM_POOL_ERR_IO, errbuf, errbuf_size, "could not read header of pool file \"%s\"", opts->path, n < 0 ? errno : EIO);
	/* a valid shadow copy is a rewrite a crash interrupted: it wins */
	if (pread(pool_fd, &shadow, sizeof(shadow), NVM_POOL_SHADOW_OFF) == (ssize_t) sizeof(shadow) &&
		header_is_whole(&shadow))
	{
		hdr = shadow;
		from_shadow = true;
	}
	if (hdr.magic != NVM_POOL_MAGIC)
		return fail(NVM_POOL_ERR_BAD_MAGIC, errbuf, errbuf_size, "file \"%s\" is not an nvmam pool (bad magic number)", opts->path, 0);
	if (hdr.format_version != NVM_POOL_FORMAT_VERSION && hdr.format_version != NVM_POOL_FORMAT_V2)
		return fail(NVM_POOL_ERR_BAD_VERSION, errbuf, errbuf_size, "pool file \"%s\" has an unsupported format version", opts->path, 0);
	if (hdr.checksum != nvm_pool_header_checksum(&hdr))
		return fail(NVM_POOL_ERR_BAD_CHECKSUM, errbuf, errbuf_size, "pool file \"%s\" has a corrupt header (checksum mismatch)", opts->path, 0);
	if (!layout_is_sane(&hdr))
		return fail(NVM_POOL_ERR_BAD_LAYOUT, errbuf, errbuf_size, "pool file \"%s\" has an inconsistent header", opts->path, 0);
	if ((uint64_t) st.st_size < hdr.pool_size)
		return fail(NVM_POOL_ERR_TRUNCATED, errbuf, errbuf_size, "pool file \"%s\" is truncated (shorter than the size in its header)", opts->path, 0);
	if (hdr.system_identifier != opts->system_identifier)
		return fail(NVM_POOL_ERR_FOREIGN, errbuf, errbuf_size, "pool file \"%s\" belongs to another database cluster (system identifier mismatch)", opts->path, 0);
	if (!nvm_cc_mode_known(hdr.cc_mode))
		return fail(NVM_POOL_ERR_BAD_LAYOUT, errbuf, errbuf_size, "pool file \"%s\" has an unknown concurrency-control mode", opts->path, 0);
	nvm_pool_pending_mode = 0;
	nvm_pool_opened_mode = hdr.cc_mode;
	if (hdr.cc_mode != opts->cc_mode && opts->allow_mode_switch)
		nvm_pool_pending_mode = opts->cc_mode;
	else if (hdr.cc_mode != opts->cc_mode)
		return fail(NVM_POOL_ERR_MODE, errbuf, errbuf_size, "pool file \"%s\" was created for another concurrency-control mode", opts->path, 0);
	if (hdr.max_slots < opts->max_slots)
		return fail(NVM_POOL_ERR_BAD_LAYOUT, errbuf, errbuf_size, "pool file \"%s\" has fewer clock slots than this server needs", opts->path, 0);

	rc = map_file(reserve_size(opts, (uint64_t) st.st_size), (uint64_t) st.st_size,
				  errbuf, errbuf_size, opts->path);
	if (rc != NVM_POOL_OK)
		return rc;
	if (from_shadow)
		nvm_pool_header_rewrite(&hdr);
	rc = nvm_pool_check_segments((uint64_t) st.st_size, msg, sizeof(msg));
	if (rc != NVM_POOL_OK)
	{
		nvm_pool_close();
		snprintf(errbuf, errbuf_size, "pool file \"%s\" %s", opts->path, msg);
		return rc;
	}
	if (hdr.format_version == NVM_POOL_FORMAT_V2)
	{
		/* same layout, now allowed to grow: earlier versions refuse it */
		hdr.format_version = NVM_POOL_FORMAT_VERSION;
		nvm_pool_header_rewrite(&hdr);
		nvm_pool_upgraded_from = NVM_POOL_FORMAT_V2;
	}
	return NVM_POOL_OK;
}

/*
 * nvm_pool_header_rewrite: see pool.h.  Persist order: shadow copy
 * persisted → header persisted → shadow's magic cleared and persisted.
 */
void
nvm_pool_header_rewrite(const NvmPoolHeader *in)
{
	NvmPoolHeader hdr = *in;
	NvmPoolHeader *shadow = (NvmPoolHeader *) (nvm_pool_base + NVM_POOL_SHADOW_OFF);

	hdr.checksum = nvm_pool_header_checksum(&hdr);
	memcpy(shadow, &hdr, sizeof(hdr));
	nvm_persist(shadow, sizeof(hdr));
	memcpy(nvm_pool_header, &hdr, sizeof(hdr));
	nvm_persist(nvm_pool_header, sizeof(hdr));
	shadow->magic = 0;
	nvm_persist(&shadow->magic, sizeof(uint64_t));
}

/*
 * nvm_pool_segment_at: see pool.h.  The caller knows the segment's first
 * chunk to lie inside the file.
 */
NvmSegmentHeader *
nvm_pool_segment_at(uint64_t chunk, uint64_t seq)
{
	uint64_t	off = nvm_pool_chunk_offset(chunk);
	uint64_t	max_chunks = (nvm_pool_header->chunk_size - NVM_SEGMENT_TABLE_OFF) / sizeof(uint64_t);
	NvmSegmentHeader *seg;

	if (off + nvm_pool_header->chunk_size > nvm_pool_reserved_size)
		return NULL;
	seg = (NvmSegmentHeader *) (nvm_pool_base + off);
	if (seg->magic != NVM_SEGMENT_MAGIC ||
		seg->checksum != nvm_pool_segment_checksum(seg) ||
		seg->seq != seq || seg->offset != off || seg->first_chunk != chunk ||
		seg->nchunks < 2 || seg->nchunks > max_chunks)
		return NULL;
	return seg;
}

/*
 * nvm_pool_check_segments: see pool.h.  errbuf gets the message's
 * predicate ("is truncated ..."), for the caller to put after the file's
 * name.
 */
NvmPoolOpenResult
nvm_pool_check_segments(uint64_t file_size, char *errbuf, size_t errbuf_size)
{
	uint64_t	end = nvm_pool_root()->pool_end;
	uint64_t	chunk = nvm_pool_header->nchunks;
	uint64_t	seq = 1;

	if (end == 0)
		return NVM_POOL_OK;
	if (end > file_size || end > nvm_pool_reserved_size)
	{
		snprintf(errbuf, errbuf_size, "is truncated (shorter than its growth segments)");
		return NVM_POOL_ERR_TRUNCATED;
	}
	while (nvm_pool_chunk_offset(chunk) < end)
	{
		NvmSegmentHeader *seg = nvm_pool_segment_at(chunk, seq);

		if (seg == NULL || nvm_pool_chunk_offset(chunk + seg->nchunks) > end)
		{
			snprintf(errbuf, errbuf_size, "has a corrupt growth segment at offset %llu",
					 (unsigned long long) nvm_pool_chunk_offset(chunk));
			return NVM_POOL_ERR_BAD_LAYOUT;
		}
		chunk += seg->nchunks;
		seq++;
	}
	if (nvm_pool_chunk_offset(chunk) != end)
	{
		snprintf(errbuf, errbuf_size, "has an inconsistent end of its growth segments");
		return NVM_POOL_ERR_BAD_LAYOUT;
	}
	return NVM_POOL_OK;
}

uint64_t
nvm_pool_file_size(void)
{
	struct stat st;

	if (pool_fd < 0 || fstat(pool_fd, &st) != 0)
		return 0;
	return (uint64_t) st.st_size;
}

uint64_t
nvm_pool_end(void)
{
	uint64_t	end = nvm_pool_root()->pool_end;

	return end != 0 ? end : nvm_pool_header->pool_size;
}

uint64_t
nvm_pool_max_chunks(void)
{
	if (nvm_pool_reserved_size <= nvm_pool_header->chunks_off)
		return 0;
	return (nvm_pool_reserved_size - nvm_pool_header->chunks_off) / nvm_pool_header->chunk_size;
}

/*
 * nvm_pool_extend_file: see pool.h.  [start, end) is allocated even where
 * the file already reaches (a growth a crash interrupted may have extended
 * it already; allocating again costs nothing).
 */
int
nvm_pool_extend_file(uint64_t start, uint64_t end)
{
	int			rc;

	if (pool_fd < 0)
		return EBADF;
	if (end > nvm_pool_reserved_size)
		return EFBIG;
	rc = posix_fallocate(pool_fd, (off_t) start, (off_t) (end - start));
	if (rc != 0)
		return rc;
	if (fsync(pool_fd) != 0)
		return errno;
	/* the new pages as the pool's others: in huge pages if those are (try) */
	if (nvm_pool_huge_pages && map_sync_flags == 0)
		(void) collapse_range(start, end);
	return 0;
}

/*
 * nvm_pool_open_scratch maps a new, empty pool of opts->create_size bytes
 * in anonymous shared memory (inherited by the processes forked later).
 * Nothing in it survives the process tree; persisting it costs what it
 * costs on any memory.
 */
NvmPoolOpenResult
nvm_pool_open_scratch(const NvmPoolOptions *opts, char *errbuf, size_t errbuf_size)
{
	NvmPoolHeader hdr;
	void	   *p;

	errbuf[0] = '\0';
	nvm_pool_pending_mode = 0;
	memset(&hdr, 0, sizeof(hdr));
	if (!compute_layout(&hdr, opts->create_size, opts->max_slots,
						opts->ring_words ? opts->ring_words : NVM_DEFAULT_RING_WORDS,
						opts->max_tables ? opts->max_tables : NVM_DEFAULT_MAX_TABLES,
						NVM_POOL_LAZY_RINGS))
		return fail(NVM_POOL_ERR_BAD_LAYOUT, errbuf, errbuf_size,
					"pool size is too small for a scratch pool%s", "", 0);
	p = mmap(NULL, opts->create_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return fail(NVM_POOL_ERR_IO, errbuf, errbuf_size,
					"could not map a scratch pool%s", "", errno);
	nvm_pool_base = p;
	nvm_pool_reserved_size = opts->create_size;	/* it never grows */
	nvm_pool_storage = NVM_STORAGE_VOLATILE;
	snprintf(nvm_pool_storage_how, sizeof(nvm_pool_storage_how), "anonymous memory");
	nvm_pool_header = (NvmPoolHeader *) p;
	initialise_regions(&hdr);
	hdr.magic = NVM_POOL_MAGIC;
	hdr.format_version = NVM_POOL_FORMAT_VERSION;
	hdr.header_size = NVM_POOL_HEADER_SIZE;
	hdr.system_identifier = opts->system_identifier;
	hdr.cc_mode = opts->cc_mode;
	nvm_pool_opened_mode = opts->cc_mode;
	hdr.checksum = nvm_pool_header_checksum(&hdr);
	memcpy(nvm_pool_base, &hdr, sizeof(hdr));
	return NVM_POOL_CREATED;
}

/*
 * nvm_pool_binding_read copies the binding words.
 */
void
nvm_pool_binding_read(NvmPoolBinding *out)
{
	NvmPoolBinding *b = &nvm_pool_root()->binding;

	out->id = b->id;
	out->gen = b->gen;
	out->clean_lsn = b->clean_lsn;
	atomic_store(&out->wal_lsn, atomic_load(&b->wal_lsn));
	out->boot = b->boot;
	out->storage = b->storage;
}

/*
 * nvm_pool_binding_claim records a claim of the pool by a data directory
 * (its id and new generation, the boot of the operating system it is made
 * in and the storage class) and marks the pool in use.  Persist order: the
 * words share one cache line, persisted, then on page-cache storage the
 * page is synced, all before anything else in the pool changes; so the
 * file on disk says "in use in this boot" whenever it holds a change made
 * since.  A failed sync is ignored here: the claim stays in the page cache,
 * and the pool is never marked clean without a whole sync
 * (nvm_pool_binding_mark_clean), so the file on disk says "in use" or
 * "clean" of an older stop, and an older stop's clean mark on disk is
 * caught by the data directory's state (nvm_claim.c).
 */
void
nvm_pool_binding_claim(uint64_t id, uint64_t gen, uint64_t boot)
{
	NvmPoolBinding *b = &nvm_pool_root()->binding;

	b->id = id;
	b->gen = gen;
	b->clean_lsn = 0;
	b->boot = boot;
	b->storage = (uint64_t) nvm_pool_storage;
	nvm_persist(b, sizeof(*b));
	(void) nvm_pool_sync_range(b, sizeof(*b));
}

/*
 * nvm_pool_binding_mark_clean records the shutdown checkpoint of a clean
 * stop of the claiming server.  Persist order: the whole pool is synced
 * (page-cache storage), then the mark is persisted and its page synced; a
 * failed sync leaves the pool marked in use.
 */
int
nvm_pool_binding_mark_clean(uint64_t lsn)
{
	NvmPoolBinding *b = &nvm_pool_root()->binding;
	int			rc = nvm_pool_sync();

	if (rc != 0)
		return rc;
	b->clean_lsn = lsn;
	nvm_persist(&b->clean_lsn, sizeof(b->clean_lsn));
	return nvm_pool_sync_range(&b->clean_lsn, sizeof(b->clean_lsn));
}

/* raise_to raises *word to at least value (atomic maximum). */
static bool
raise_to(_Atomic uint64_t *word, uint64_t value)
{
	uint64_t	cur = atomic_load(word);

	while (cur < value)
	{
		if (atomic_compare_exchange_weak(word, &cur, value))
			return true;
	}
	return false;
}

/*
 * nvm_pool_note_wal raises the pool-wide WAL position to lsn and persists
 * it: a change made after this call may depend on WAL up to lsn.
 */
void
nvm_pool_note_wal(uint64_t lsn)
{
	NvmPoolBinding *b = &nvm_pool_root()->binding;

	if (raise_to(&b->wal_lsn, lsn))
		nvm_persist(&b->wal_lsn, sizeof(uint64_t));
}

void
nvm_pool_note_replayed(uint64_t lsn)
{
	NvmPoolBinding *b = &nvm_pool_root()->binding;

	atomic_store(&b->replayed_lsn, lsn);
	nvm_persist(&b->replayed_lsn, sizeof(uint64_t));
}

uint64_t
nvm_pool_replayed_lsn(void)
{
	return atomic_load(&nvm_pool_root()->binding.replayed_lsn);
}

/*
 * nvm_slot_note_wal raises slot's WAL position to lsn and flushes it; the
 * caller drains before the change that depends on it becomes durable (a
 * commit's first drain).  Only the slot's owner writes it.
 */
void
nvm_slot_note_wal(uint32_t slot, uint64_t lsn)
{
	NvmSlotPersist *sp = nvm_pool_slot(slot);

	if (atomic_load_explicit(&sp->wal_lsn, memory_order_relaxed) < lsn)
	{
		atomic_store_explicit(&sp->wal_lsn, lsn, memory_order_relaxed);
		nvm_flush(&sp->wal_lsn, sizeof(uint64_t));
	}
}

/*
 * nvm_pool_required_wal returns the highest WAL position any change in the
 * pool depends on: the pool-wide one and every slot's.
 */
uint64_t
nvm_pool_required_wal(void)
{
	uint64_t	req = atomic_load(&nvm_pool_root()->binding.wal_lsn);

	for (uint32_t i = 0; i < nvm_pool_header->max_slots; i++)
	{
		uint64_t	v = atomic_load(&nvm_pool_slot(i)->wal_lsn);

		if (v > req)
			req = v;
	}
	return req;
}

/*
 * nvm_pool_close unmaps the pool and releases its lock.
 */
void
nvm_pool_close(void)
{
	if (nvm_pool_base)
		munmap(nvm_pool_base, nvm_pool_reserved_size);
	nvm_pool_base = NULL;
	nvm_pool_header = NULL;
	nvm_pool_reserved_size = 0;
	if (pool_fd >= 0)
		close(pool_fd);
	pool_fd = -1;
	nvm_pool_storage = NVM_STORAGE_UNKNOWN;
}
