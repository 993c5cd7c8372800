/*
 * pool.c
 *	  Creating, validating and mapping the persistent-memory pool file.
 *
 * See pool.h for the layout and the creation order.  Every way a file can
 * fail to be this cluster's pool (missing header, other format, corrupt or
 * truncated header, another cluster's or another mode's pool, a file locked
 * by another server) is reported as an error code plus a message that names
 * the file; nothing here dereferences a byte of the file that validation
 * has not shown to exist.
 */
#include "pool.h"

#include "alloc.h"
#include "mcsi.h"
#include "persist.h"
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define NVM_DEFAULT_RING_WORDS	2048	/* 63,488 transactions per slot */
#define NVM_DEFAULT_MAX_TABLES	16384
#define NVM_CLOG_WORDS			32768	/* 1,048,576 transactions */
#define NVM_CHUNK_SIZE			(1u << 20)
#define NVM_PAGE				4096

char	   *nvm_pool_base = NULL;
NvmPoolHeader *nvm_pool_header = NULL;
uint32_t	nvm_pool_pending_mode = 0;

static int	pool_fd = -1;
static uint64_t pool_mapped_size = 0;

/*
 * nvm_pool_header_checksum computes FNV-1a over every header field before
 * the checksum itself.
 */
uint64_t
nvm_pool_header_checksum(const NvmPoolHeader *hdr)
{
	const unsigned char *p = (const unsigned char *) hdr;
	size_t		n = offsetof(NvmPoolHeader, checksum);
	uint64_t	h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < n; i++)
	{
		h ^= p[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

/*
 * compute_layout fills the region offsets of a new pool of the given size.
 * Returns false if the size is too small for the fixed regions and at least
 * a few chunks.
 */
static bool
compute_layout(NvmPoolHeader *hdr, uint64_t size, uint32_t max_slots,
			   uint32_t ring_words, uint32_t max_tables)
{
	uint64_t	off;
	uint64_t	remaining;
	uint64_t	nchunks;

	hdr->pool_size = size;
	hdr->max_slots = max_slots;
	hdr->ring_words = ring_words;
	hdr->max_tables = max_tables;
	hdr->chunk_size = NVM_CHUNK_SIZE;
	hdr->root_off = NVM_POOL_HEADER_SIZE;
	hdr->slots_off = hdr->root_off + NVM_PAGE;
	off = NVM_ALIGN_UP(hdr->slots_off + (uint64_t) max_slots * sizeof(NvmSlotPersist), NVM_PAGE);
	hdr->rings_off = off;
	off = NVM_ALIGN_UP(off + (uint64_t) max_slots * ring_words * sizeof(uint64_t), NVM_PAGE);
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
		hdr->chunk_size != NVM_CHUNK_SIZE || hdr->header_size != NVM_POOL_HEADER_SIZE)
		return false;
	memset(&expect, 0, sizeof(expect));
	if (!compute_layout(&expect, hdr->pool_size, hdr->max_slots, hdr->ring_words, hdr->max_tables))
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
	if (nvm_pool_base)
	{
		munmap(nvm_pool_base, pool_mapped_size);
		nvm_pool_base = NULL;
		nvm_pool_header = NULL;
	}
	if (pool_fd >= 0)
	{
		close(pool_fd);
		pool_fd = -1;
	}
	return code;
}

static bool map_prefault = false;

static NvmPoolOpenResult
map_file(uint64_t size, char *errbuf, size_t errbuf_size, const char *path)
{
	void	   *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
						 MAP_SHARED | (map_prefault ? MAP_POPULATE : 0), pool_fd, 0);

	if (p == MAP_FAILED)
		return fail(NVM_POOL_ERR_IO, errbuf, errbuf_size, "could not map pool file \"%s\"", path, errno);
	nvm_pool_base = p;
	pool_mapped_size = size;
	nvm_pool_header = (NvmPoolHeader *) p;
	return NVM_POOL_OK;
}

static NvmPoolOpenResult
create_pool(const NvmPoolOptions *opts, char *errbuf, size_t errbuf_size)
{
	NvmPoolHeader hdr;
	int			rc;

	memset(&hdr, 0, sizeof(hdr));
	if (!compute_layout(&hdr, opts->create_size, opts->max_slots,
						opts->ring_words ? opts->ring_words : NVM_DEFAULT_RING_WORDS,
						opts->max_tables ? opts->max_tables : NVM_DEFAULT_MAX_TABLES))
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
	if (map_file(opts->create_size, errbuf, errbuf_size, opts->path) != NVM_POOL_OK)
		return NVM_POOL_ERR_IO;

	initialise_regions(&hdr);

	/* last: the header, which makes the file a pool */
	hdr.magic = NVM_POOL_MAGIC;
	hdr.format_version = NVM_POOL_FORMAT_VERSION;
	hdr.header_size = NVM_POOL_HEADER_SIZE;
	hdr.system_identifier = opts->system_identifier;
	hdr.cc_mode = opts->cc_mode;
	hdr.checksum = nvm_pool_header_checksum(&hdr);
	memcpy(nvm_pool_base, &hdr, sizeof(hdr));
	nvm_persist(nvm_pool_base, sizeof(hdr));
	if (fsync(pool_fd) != 0)
		return fail(NVM_POOL_ERR_IO, errbuf, errbuf_size, "could not fsync pool file \"%s\"", opts->path, errno);
	return NVM_POOL_CREATED;
}

/*
 * nvm_pool_open opens the pool named in opts, creating it if the file does
 * not exist, validates its header and maps it.
 */
NvmPoolOpenResult
nvm_pool_open(const NvmPoolOptions *opts, char *errbuf, size_t errbuf_size)
{
	struct stat st;
	NvmPoolHeader hdr;
	ssize_t		n;
	NvmPoolOpenResult rc;

	errbuf[0] = '\0';
	map_prefault = opts->prefault;
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
	if (hdr.magic != NVM_POOL_MAGIC)
		return fail(NVM_POOL_ERR_BAD_MAGIC, errbuf, errbuf_size, "file \"%s\" is not an nvmam pool (bad magic number)", opts->path, 0);
	if (hdr.format_version != NVM_POOL_FORMAT_VERSION)
		return fail(NVM_POOL_ERR_BAD_VERSION, errbuf, errbuf_size, "pool file \"%s\" has an unsupported format version", opts->path, 0);
	if (hdr.checksum != nvm_pool_header_checksum(&hdr))
		return fail(NVM_POOL_ERR_BAD_CHECKSUM, errbuf, errbuf_size, "pool file \"%s\" has a corrupt header (checksum mismatch)", opts->path, 0);
	if (!layout_is_sane(&hdr))
		return fail(NVM_POOL_ERR_BAD_LAYOUT, errbuf, errbuf_size, "pool file \"%s\" has an inconsistent header", opts->path, 0);
	if ((uint64_t) st.st_size < hdr.pool_size)
		return fail(NVM_POOL_ERR_TRUNCATED, errbuf, errbuf_size, "pool file \"%s\" is truncated (shorter than the size in its header)", opts->path, 0);
	if (hdr.system_identifier != opts->system_identifier)
		return fail(NVM_POOL_ERR_FOREIGN, errbuf, errbuf_size, "pool file \"%s\" belongs to another database cluster (system identifier mismatch)", opts->path, 0);
	if (hdr.cc_mode != NVM_CC_MCSI && hdr.cc_mode != NVM_CC_N2DB)
		return fail(NVM_POOL_ERR_BAD_LAYOUT, errbuf, errbuf_size, "pool file \"%s\" has an unknown concurrency-control mode", opts->path, 0);
	nvm_pool_pending_mode = 0;
	if (hdr.cc_mode != opts->cc_mode && opts->allow_mode_switch)
		nvm_pool_pending_mode = opts->cc_mode;
	else if (hdr.cc_mode != opts->cc_mode)
		return fail(NVM_POOL_ERR_MODE, errbuf, errbuf_size, "pool file \"%s\" was created for another concurrency-control mode", opts->path, 0);
	if (hdr.max_slots < opts->max_slots)
		return fail(NVM_POOL_ERR_BAD_LAYOUT, errbuf, errbuf_size, "pool file \"%s\" has fewer clock slots than this server needs", opts->path, 0);

	rc = map_file(hdr.pool_size, errbuf, errbuf_size, opts->path);
	if (rc != NVM_POOL_OK)
		return rc;
	return NVM_POOL_OK;
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
						opts->max_tables ? opts->max_tables : NVM_DEFAULT_MAX_TABLES))
		return fail(NVM_POOL_ERR_BAD_LAYOUT, errbuf, errbuf_size,
					"pool size is too small for a scratch pool%s", "", 0);
	p = mmap(NULL, opts->create_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return fail(NVM_POOL_ERR_IO, errbuf, errbuf_size,
					"could not map a scratch pool%s", "", errno);
	nvm_pool_base = p;
	pool_mapped_size = opts->create_size;
	nvm_pool_header = (NvmPoolHeader *) p;
	initialise_regions(&hdr);
	hdr.magic = NVM_POOL_MAGIC;
	hdr.format_version = NVM_POOL_FORMAT_VERSION;
	hdr.header_size = NVM_POOL_HEADER_SIZE;
	hdr.system_identifier = opts->system_identifier;
	hdr.cc_mode = opts->cc_mode;
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
}

/*
 * nvm_pool_binding_claim records a claim of the pool by a data directory
 * (its id and new generation) and marks the pool in use; the words share
 * one cache line, persisted at once.
 */
void
nvm_pool_binding_claim(uint64_t id, uint64_t gen)
{
	NvmPoolBinding *b = &nvm_pool_root()->binding;

	b->id = id;
	b->gen = gen;
	b->clean_lsn = 0;
	nvm_persist(b, sizeof(*b));
}

/*
 * nvm_pool_binding_mark_clean records the shutdown checkpoint of a clean
 * stop of the claiming server.
 */
void
nvm_pool_binding_mark_clean(uint64_t lsn)
{
	NvmPoolBinding *b = &nvm_pool_root()->binding;

	b->clean_lsn = lsn;
	nvm_persist(&b->clean_lsn, sizeof(b->clean_lsn));
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
		munmap(nvm_pool_base, pool_mapped_size);
	nvm_pool_base = NULL;
	nvm_pool_header = NULL;
	if (pool_fd >= 0)
		close(pool_fd);
	pool_fd = -1;
}
