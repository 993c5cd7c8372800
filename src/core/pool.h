/*
 * pool.h
 *	  The persistent-memory pool: file format, creation, validation, mapping
 *	  and growth of the file.
 *
 * One pool per PostgreSQL cluster.  The pool is one file (normally on a DAX
 * or tmpfs file system), allocated for real with posix_fallocate (never
 * sparse: on tmpfs a sparse file that cannot be backed later shows up as
 * SIGBUS), mapped once in the postmaster before it forks so that every
 * backend sees it at the same address.  Inside the pool there are only
 * offsets, never pointers: across a restart the address changes.
 *
 * The mapping covers the largest size the pool may grow to (a reserved
 * range of address space, NvmPoolOptions.max_size), not only the file: when
 * a backend extends the file, the new pages become valid in every process's
 * existing mapping, so offsets stay valid everywhere and nobody remaps.  No
 * process touches a byte beyond the end the allocator has published (see
 * grow.h), and the file always reaches that far: a touch beyond the file's
 * end would be SIGBUS.
 *
 * Layout (all offsets from the start of the file):
 *
 *	 0			NvmPoolHeader (immutable but for its rewrites, checksummed),
 *				and at 2048 its shadow copy, used while it is rewritten; 4 KiB
 *	 4096		NvmPoolRoot (mutable words, one per cache line), 4 KiB
 *	 slots_off	NvmSlotPersist[max_slots]: per clock slot, its clock
 *				reservation and the offset of its status ring
 *	 rings_off	status rings, ring_words uint64 words per slot (MCSI); in a
 *				pool with NVM_POOL_LAZY_RINGS this region is empty, and a
 *				slot's ring is allocated from the chunks at its first write
 *	 clog_off	the shared commit log, clog_words uint64 words (N2DB)
 *	 tables_off NvmTableDirEntry[max_tables]: the table directory
 *	 chunk_table_off  uint64[nchunks]: allocator chunk states of the first
 *				nchunks chunks
 *	 chunks_off nchunks chunks of chunk_size bytes: everything allocated
 *	 (growth)	growth segments, each a whole number of chunks following the
 *				previous ones on the same grid of chunks (chunk i is at
 *				chunks_off + i * chunk_size wherever it lies): the first
 *				chunk of a segment holds its NvmSegmentHeader and its chunk
 *				table, the others are allocated like the first nchunks.
 *				NvmPoolRoot.pool_end says where the last one ends.
 *
 * The first pool_size bytes (the header's pool_size: the size the pool was
 * created with) hold everything up to the first nchunks chunks; the first
 * growth segment starts right after the last of those chunks, which may lie
 * a little before pool_size.
 *
 * Creation order: the file is allocated (zero-filled by the file system),
 * every region is initialised and persisted, and only then is the header,
 * with its magic and checksum, written and persisted.  A crash during
 * creation leaves a file without a valid header, which is refused at the
 * next start with a message saying so (delete it to start over: it cannot
 * hold data yet).
 *
 * Rewriting the header (converting the concurrency-control mode, upgrading
 * a pool of format 2): the new header is written to the shadow copy and
 * persisted, then over the header and persisted, then the shadow's magic is
 * cleared and persisted.  Opening a pool whose shadow copy is valid finishes
 * the rewrite from it; so a crash leaves the old header or the new one,
 * never a torn one.
 *
 * Formats: 3 (current) adds growth segments and rings allocated at first
 * use.  A pool of format 2 (one fixed size, every ring preallocated) is
 * upgraded in place when it is opened: its header is rewritten as format 3
 * with the same layout (without NVM_POOL_LAZY_RINGS), after which it grows
 * like a new one and earlier versions of nvmam refuse it.
 */
#ifndef NVM_POOL_H
#define NVM_POOL_H

#include "ccmode.h"
#include "nvm_types.h"

#define NVM_POOL_MAGIC			UINT64_C(0x4c4f4f504d4d564e)	/* "NVMMPOOL" */
#define NVM_POOL_FORMAT_VERSION 3	/* 3: growth segments, rings allocated at first use */
#define NVM_POOL_FORMAT_V2		2	/* 2: free lists, retired records; upgraded at open */
#define NVM_POOL_HEADER_SIZE	4096
#define NVM_POOL_SHADOW_OFF		2048	/* the header's shadow copy */
#define NVM_POOL_MIN_SIZE		(UINT64_C(32) << 20)	/* 32 MiB */
#define NVM_POOL_DEFAULT_GROW_STEP (UINT64_C(128) << 20)	/* 128 MiB */

/* NvmPoolHeader.flags */
#define NVM_POOL_LAZY_RINGS		0x1 /* no ring region: rings allocated at first use */
#define NVM_POOL_KNOWN_FLAGS	NVM_POOL_LAZY_RINGS


typedef struct NvmPoolHeader
{
	uint64_t	magic;
	uint32_t	format_version;
	uint32_t	header_size;
	uint64_t	system_identifier;	/* PostgreSQL cluster this pool belongs to */
	uint64_t	pool_size;		/* bytes the pool was created with */
	uint32_t	max_slots;		/* clock slots (<= NVM_MAX_SLOTS) */
	uint32_t	ring_words;		/* status-ring words per slot */
	uint32_t	max_tables;		/* table directory entries */
	uint32_t	chunk_size;		/* allocator chunk size in bytes */
	uint32_t	clog_words;		/* commit-log words (N2DB) */
	uint32_t	flags;			/* NVM_POOL_LAZY_RINGS; 0 in format 2 */
	uint64_t	root_off;
	uint64_t	slots_off;
	uint64_t	rings_off;
	uint64_t	clog_off;
	uint64_t	tables_off;
	uint64_t	chunk_table_off;
	uint64_t	chunks_off;
	uint64_t	nchunks;
	uint32_t	cc_mode;		/* NvmCcMode (ccmode.h) the pool is in */
	uint32_t	reserved;
	uint64_t	checksum;		/* over every field above */
} NvmPoolHeader;

/*
 * The pool's binding to the data directory that uses it: which data
 * directory may open the pool, and at which point of its history.  The core
 * only keeps these words; what they mean, and the argument that no copy of
 * a data directory is ever served a pool that does not match it, is with
 * the code that checks them (src/pg/claim/nvm_claim.c).  A pool
 * written before the binding existed has zeros here: never bound.
 */
typedef struct NvmPoolBinding
{
	uint64_t	id;				/* random, chosen when first bound; 0 = never */
	uint64_t	gen;			/* claims since the pool was first bound */
	uint64_t	clean_lsn;		/* shutdown checkpoint of the claimer's last
								 * clean stop; 0 while a server uses the pool */
	_Atomic uint64_t wal_lsn;	/* WAL position that pool-wide changes (table
								 * drops, freed numbers) depend on */
	uint64_t	boot;			/* the operating system's boot the claim was
								 * made in (a hash of its identity); 0 = a
								 * claim by a version that did not record it */
	uint64_t	storage;		/* NvmStorageClass at the claim */
	_Atomic uint64_t replayed_lsn;	/* a standby's pool: end of the last nvm redo
									 * record applied (the PG layer's replay) */
} NvmPoolBinding;

_Static_assert(sizeof(NvmPoolBinding) <= NVM_CACHELINE,
			   "the binding words share one cache line");

/*
 * What holds the pool, and so what a flush and a drain promise
 * (nvm_pool_open finds it; the table "What your storage guarantees" of
 * doc/storage.md states it for users):
 *	 - NVM_STORAGE_PMEM: persistent memory.  The file is on a DAX file
 *	   system and mapped with MAP_SYNC (page faults persist the file
 *	   system's metadata before they return), or libpmem's pmem_is_pmem
 *	   says the mapping is persistent memory.  A drained flush is durable
 *	   against a crash of the process, of the operating system and a
 *	   power loss.
 *	 - NVM_STORAGE_PAGE_CACHE: a file on any other file system, or on a DAX
 *	   file system that refuses MAP_SYNC (the first write into a newly
 *	   allocated extent could be lost).  Flushes reach the kernel's page
 *	   cache only, which survives a crash of the server's processes; the
 *	   kernel writes pages back in any order, so after a crash of the
 *	   operating system or a power loss the file is torn unless it was
 *	   synced (nvm_pool_sync) and not changed since.
 *	 - NVM_STORAGE_VOLATILE: tmpfs, ramfs, hugetlbfs, or anonymous memory
 *	   (a scratch pool): like the page cache while the operating system
 *	   runs, and gone when it restarts.
 */
typedef enum NvmStorageClass
{
	NVM_STORAGE_UNKNOWN = 0,	/* no pool mapped, or a claim that predates it */
	NVM_STORAGE_PMEM = 1,
	NVM_STORAGE_PAGE_CACHE = 2,
	NVM_STORAGE_VOLATILE = 3
} NvmStorageClass;

/* Mutable pool-wide words; each on its own cache line. */
typedef struct NvmPoolRoot
{
	_Alignas(NVM_CACHELINE) uint64_t clean_shutdown;	/* 1 after a clean stop */
	_Alignas(NVM_CACHELINE) uint64_t start_count;	/* starts since creation */
	_Alignas(NVM_CACHELINE) uint64_t n2db_reserved; /* N2DB: all handed-out txids are below this */
	_Alignas(NVM_CACHELINE) NvmPoolBinding binding;
	_Alignas(NVM_CACHELINE) uint64_t pool_end;	/* end of the last growth segment; 0 = none */
	_Alignas(NVM_CACHELINE) uint64_t index_repair_off;	/* index entries to repair (indexlog.h), 0 = none */
	_Alignas(NVM_CACHELINE) uint64_t external_off;	/* external entries kept after a crash (indexlog.h), 0 = none */
	_Alignas(NVM_CACHELINE) _Atomic uint64_t ckpt_epoch;	/* checkpoint epoch (ckptmark.h) */
	_Alignas(NVM_CACHELINE) _Atomic uint64_t durable_off;	/* per-slot durable watermarks (ckptmark.h), 0 = none */
} NvmPoolRoot;

/*
 * ckpt_epoch and durable_off come after the fields of pools written before
 * they existed, inside the root's page, which those pools have zeroed:
 * they read as epoch 0 and no watermarks (no format change).
 */
_Static_assert(sizeof(NvmPoolRoot) <= 4096, "the root stays inside its page");

/*
 * The header of a growth segment: the first 64 bytes of its first chunk,
 * followed by the segment's chunk table (uint64[nchunks], the first entry
 * for the segment's own first chunk).  A segment exists once
 * NvmPoolRoot.pool_end reaches past it (grow.h has the persist order); its
 * header is then checked against where it must be.
 */
#define NVM_SEGMENT_MAGIC		UINT64_C(0x544d47455353564e)	/* "NVSSEGMT" */
#define NVM_SEGMENT_TABLE_OFF	64	/* chunk table, from the segment's start */

typedef struct NvmSegmentHeader
{
	uint64_t	magic;
	uint64_t	seq;			/* 1 for the first growth segment */
	uint64_t	offset;			/* of this header: where the segment starts */
	uint64_t	first_chunk;	/* number of the segment's first chunk */
	uint64_t	nchunks;		/* chunks in the segment, its first included */
	uint64_t	reserved[2];
	uint64_t	checksum;		/* FNV-1a over the fields above */
} NvmSegmentHeader;

/* Persistent per-slot state: one cache line. */
typedef struct NvmSlotPersist
{
	_Alignas(NVM_CACHELINE) uint64_t clock_reserved;	/* all handed-out clock values are below this */
	uint64_t	ring_off;		/* offset of this slot's status ring */
	uint64_t	log_txid;		/* transaction the write log belongs to, 0 = none */
	nvm_off		log_head;		/* first block of the slot's write log, 0 = none yet */
	uint64_t	indoubt_xid;	/* external (PostgreSQL) xid the in-doubt txid follows */
	uint64_t	indoubt_txid;	/* transaction whose outcome is the external xid's, 0 = none */
	_Atomic uint64_t wal_lsn;	/* WAL position the slot's commits depend on (NvmPoolBinding) */
	nvm_off		indexlog_off;	/* ring of index roots committed without a log flush (indexlog.h), 0 = none */
} NvmSlotPersist;

_Static_assert(sizeof(NvmSlotPersist) == NVM_CACHELINE,
			   "a slot's persistent state is one cache line");

/*
 * A block of a slot's persistent write log: for every version written by
 * the slot's latest writing transaction, in order, the offsets of its
 * table's descriptor and of the version.  Blocks are chained and kept for
 * reuse; an entry counts only if the version it names is an allocated block
 * carrying the log's txid (stale entries of older transactions stop a scan).
 */
#define NVM_WRITE_LOG_ENTRIES	511
typedef struct NvmWriteLogEntryPair
{
	nvm_off		table;			/* the table descriptor */
	nvm_off		version;
} NvmWriteLogEntryPair;

typedef struct NvmWriteLogBlock
{
	nvm_off		next;
	NvmWriteLogEntryPair entries[NVM_WRITE_LOG_ENTRIES];
} NvmWriteLogBlock;

/* Result of opening a pool. */
typedef enum NvmPoolOpenResult
{
	NVM_POOL_OK = 0,
	NVM_POOL_CREATED,			/* did not exist: created */
	NVM_POOL_ERR_IO,			/* open/stat/fallocate/mmap failed (errno in message) */
	NVM_POOL_ERR_LOCKED,		/* another process holds the pool's lock */
	NVM_POOL_ERR_TRUNCATED,		/* file shorter than its header says, or than a header */
	NVM_POOL_ERR_BAD_MAGIC,		/* not an nvmam pool (or creation never finished) */
	NVM_POOL_ERR_BAD_VERSION,	/* another format version */
	NVM_POOL_ERR_BAD_CHECKSUM,	/* header corrupted */
	NVM_POOL_ERR_BAD_LAYOUT,	/* header fields inconsistent */
	NVM_POOL_ERR_FOREIGN,		/* belongs to another cluster */
	NVM_POOL_ERR_MODE,			/* created for another concurrency-control mode */
	NVM_POOL_ERR_HUGE_PAGES		/* huge pages asked for (ON) and not granted */
} NvmPoolOpenResult;


/*
 * A pool created in one concurrency-control mode is converted to the other
 * at start-up when allow_mode_switch is set: recovery runs in the old mode,
 * after which every version carries its final status inlined, so neither
 * the status rings nor the commit log are needed for old transactions; all
 * clocks and the global counter then restart above every txid handed out
 * so far, and the header is rewritten with the new mode.
 */

/*
 * Huge pages for the pool's mapping (pool.c, map_file), as PostgreSQL's
 * huge_pages: the mapping always starts at a 2 MiB boundary (on DAX that
 * alone lets the file system map 2 MiB pages); for any other file, TRY and
 * ON advise the kernel to use huge pages (MADV_HUGEPAGE) and collapse the
 * file's existing pages into them (MADV_COLLAPSE, Linux 6.1, which works
 * whatever /sys/kernel/mm/transparent_hugepage/shmem_enabled says but
 * "deny"), again for each growth segment.  TRY goes on with small pages
 * where that fails; ON fails to open the pool (NVM_POOL_ERR_HUGE_PAGES).
 */
typedef enum NvmHugePages
{
	NVM_HUGE_PAGES_TRY = 0,
	NVM_HUGE_PAGES_OFF,
	NVM_HUGE_PAGES_ON
} NvmHugePages;

typedef struct NvmPoolOptions
{
	const char *path;
	uint64_t	create_size;	/* size for a new pool */
	uint64_t	system_identifier;
	uint32_t	cc_mode;
	uint32_t	max_slots;		/* for a new pool */
	uint32_t	ring_words;		/* for a new pool; 0 = default */
	uint32_t	max_tables;		/* for a new pool; 0 = default */
	bool		allow_mode_switch;	/* convert a pool of the other mode */
	bool		prefault;		/* fault every page in at open (MAP_POPULATE) */
	uint32_t	huge_pages;		/* NvmHugePages; 0 = try */
	uint64_t	max_size;		/* grow up to this many bytes; 0 = never grow */
	uint64_t	grow_step;		/* bytes each growth adds; 0 = default */
	uint32_t	create_format;	/* tests: NVM_POOL_FORMAT_V2 creates a pool of format 2 */
} NvmPoolOptions;

/* Mode the pool will be converted to by nvm_core_startup (0 = none). */
extern uint32_t nvm_pool_pending_mode;

/* Mode the pool was in when it was opened (a conversion does not change it). */
extern uint32_t nvm_pool_opened_mode;

/* Format a pool was upgraded from by nvm_pool_open (0 = none), for the log. */
extern uint32_t nvm_pool_upgraded_from;

/*
 * The storage class of the mapped pool, and in a few words how it was
 * found ("DAX, mapped with MAP_SYNC", "ext4", "tmpfs", ...); set by
 * nvm_pool_open and nvm_pool_open_scratch.
 */
extern NvmStorageClass nvm_pool_storage;
extern char nvm_pool_storage_how[64];

/*
 * Whether the pool's existing pages were put in huge pages at open (a DAX
 * mapping counts, as 2 MiB-aligned; set by nvm_pool_open).
 */
extern bool nvm_pool_huge_pages;

/* The name of a storage class, for messages and nvm_pool_stats(). */
extern const char *nvm_storage_class_name(NvmStorageClass storage);

/*
 * nvm_pool_sync makes the whole pool file durable on page-cache storage
 * (fsync: every page written back, and the file's size); on persistent
 * memory a drained flush is durable already, and volatile storage has
 * nothing to write to, so it does nothing there.  nvm_pool_sync_range does
 * the same for the pages that hold [addr, addr + len).  Both return 0 or
 * an errno value.
 */
extern int	nvm_pool_sync(void);
extern int	nvm_pool_sync_range(const void *addr, size_t len);

/* The mapping of this process; set by nvm_pool_open. */
extern char *nvm_pool_base;
extern NvmPoolHeader *nvm_pool_header;

/*
 * Bytes of address space mapped for the pool (the most it can grow to) and
 * the bytes each growth adds; set by nvm_pool_open.
 */
extern uint64_t nvm_pool_reserved_size;
extern uint64_t nvm_pool_grow_step;

/*
 * nvm_pool_open opens (creating if missing) and maps the pool; on failure it
 * returns an error code and writes a one-line message (naming the file and
 * the problem) into errbuf.
 */
extern NvmPoolOpenResult nvm_pool_open(const NvmPoolOptions *opts,
									   char *errbuf, size_t errbuf_size);
extern void nvm_pool_close(void);

/*
 * nvm_pool_open_scratch maps an empty pool in anonymous shared memory, for a
 * server that must not open its pool file (a data directory detached from
 * its pool): every table is then missing, and nothing survives a restart.
 */
extern NvmPoolOpenResult nvm_pool_open_scratch(const NvmPoolOptions *opts,
											   char *errbuf, size_t errbuf_size);

/*
 * The binding words (NvmPoolBinding).  nvm_pool_binding_claim persists a
 * new claim (id, gen, the boot it is made in) and marks the pool in use,
 * durably on every storage class before it returns (so that a pool changed
 * after the claim never looks clean after an operating-system crash);
 * nvm_pool_binding_mark_clean syncs the whole pool (nvm_pool_sync), then
 * persists the shutdown checkpoint of a clean stop, and returns 0 or the
 * errno value of a failed sync, when the pool stays marked in use.
 * nvm_pool_note_wal
 * raises the pool-wide WAL position and persists it; nvm_slot_note_wal
 * raises a slot's and flushes it (the caller's next drain makes it
 * durable).  nvm_pool_required_wal returns the highest of them all: every
 * change in the pool depends on WAL at most up to there.
 */
extern void nvm_pool_binding_read(NvmPoolBinding *out);
extern void nvm_pool_binding_claim(uint64_t id, uint64_t gen, uint64_t boot);
extern int	nvm_pool_binding_mark_clean(uint64_t lsn);
extern void nvm_pool_note_wal(uint64_t lsn);

/*
 * nvm_pool_note_replayed persists lsn as the end of the last redo record a
 * standby applied to this pool; nvm_pool_replayed_lsn reads it (0 if none:
 * a pool that was never a standby's, or a copy of a primary's pool).
 */
extern void nvm_pool_note_replayed(uint64_t lsn);
extern uint64_t nvm_pool_replayed_lsn(void);
extern void nvm_slot_note_wal(uint32_t slot, uint64_t lsn);
extern uint64_t nvm_pool_required_wal(void);

extern uint64_t nvm_pool_header_checksum(const NvmPoolHeader *hdr);
extern uint64_t nvm_pool_segment_checksum(const NvmSegmentHeader *seg);

/*
 * nvm_pool_header_rewrite replaces the header by hdr (whose checksum it
 * sets) through the shadow copy, so that a crash leaves one of the two.
 */
extern void nvm_pool_header_rewrite(const NvmPoolHeader *hdr);

/*
 * nvm_pool_check_segments walks the growth segments of the mapped pool up
 * to NvmPoolRoot.pool_end and checks each header and that the file, of
 * file_size bytes, holds them all; on failure it returns the error code and
 * a message.  nvm_pool_open runs it; the crash simulator runs it on its
 * images.
 */
extern NvmPoolOpenResult nvm_pool_check_segments(uint64_t file_size,
												 char *errbuf, size_t errbuf_size);

/*
 * nvm_pool_segment_at returns the header of the growth segment that starts
 * at chunk number chunk, if one whose header is valid for sequence number
 * seq starts there, else NULL.
 */
extern NvmSegmentHeader *nvm_pool_segment_at(uint64_t chunk, uint64_t seq);

/* Bytes in the pool's file now (fstat). */
extern uint64_t nvm_pool_file_size(void);

/* End of the pool in use: of the last growth segment, or pool_size. */
extern uint64_t nvm_pool_end(void);

/* Number of chunks on the grid that fit in the reserved address space. */
extern uint64_t nvm_pool_max_chunks(void);

/* Offset of chunk number chunk on the grid. */
static inline uint64_t
nvm_pool_chunk_offset(uint64_t chunk)
{
	return nvm_pool_header->chunks_off + chunk * nvm_pool_header->chunk_size;
}

/*
 * nvm_pool_extend_file allocates [start, end) of the file for real,
 * extending the file to end if it is shorter, and makes its new size
 * durable (fsync); 0 or an errno value.
 */
extern int	nvm_pool_extend_file(uint64_t start, uint64_t end);

static inline void *
nvm_ptr(nvm_off off)
{
	return off ? (void *) (nvm_pool_base + off) : NULL;
}

static inline nvm_off
nvm_off_of(const void *ptr)
{
	return ptr ? (nvm_off) ((const char *) ptr - nvm_pool_base) : 0;
}

static inline NvmPoolRoot *
nvm_pool_root(void)
{
	return (NvmPoolRoot *) (nvm_pool_base + nvm_pool_header->root_off);
}

static inline NvmSlotPersist *
nvm_pool_slot(uint32_t slot)
{
	return ((NvmSlotPersist *) (nvm_pool_base + nvm_pool_header->slots_off)) + slot;
}

#endif							/* NVM_POOL_H */
