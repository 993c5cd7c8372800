/*
 * pool.h
 *	  The persistent-memory pool: file format, creation, validation, mapping.
 *
 * One pool per PostgreSQL cluster.  The pool is one file (normally on a DAX
 * or tmpfs file system), allocated for real with posix_fallocate (never
 * sparse: on tmpfs a sparse file that cannot be backed later shows up as
 * SIGBUS), mapped once in the postmaster before it forks so that every
 * backend sees it at the same address.  Inside the pool there are only
 * offsets, never pointers: across a restart the address changes.
 *
 * Layout (all offsets from the start of the file):
 *
 *	 0			NvmPoolHeader (immutable after creation, checksummed), 4 KiB
 *	 4096		NvmPoolRoot (mutable words, one per cache line), 4 KiB
 *	 slots_off	NvmSlotPersist[max_slots]: per clock slot, its clock
 *				reservation and the offset of its status ring
 *	 rings_off	status rings, ring_words uint64 words per slot (MCSI)
 *	 clog_off	the shared commit log, clog_words uint64 words (N2DB)
 *	 tables_off NvmTableDirEntry[max_tables]: the table directory
 *	 chunk_table_off  uint64[nchunks]: allocator chunk states
 *	 chunks_off nchunks chunks of chunk_size bytes: everything allocated
 *
 * Creation order: the file is allocated (zero-filled by the file system),
 * every region is initialised and persisted, and only then is the header,
 * with its magic and checksum, written and persisted.  A crash during
 * creation leaves a file without a valid header, which is refused at the
 * next start with a message saying so (delete it to start over: it cannot
 * hold data yet).
 */
#ifndef NVM_POOL_H
#define NVM_POOL_H

#include "nvm_types.h"

#define NVM_POOL_MAGIC			UINT64_C(0x4c4f4f504d4d564e)	/* "NVMMPOOL" */
#define NVM_POOL_FORMAT_VERSION 2	/* 2: free lists, retired records */
#define NVM_POOL_HEADER_SIZE	4096
#define NVM_POOL_MIN_SIZE		(UINT64_C(32) << 20)	/* 32 MiB */

/* Concurrency-control mode a pool was created for (see nvm.concurrency_control). */
#define NVM_CC_MCSI				1
#define NVM_CC_N2DB				2

typedef struct NvmPoolHeader
{
	uint64_t	magic;
	uint32_t	format_version;
	uint32_t	header_size;
	uint64_t	system_identifier;	/* PostgreSQL cluster this pool belongs to */
	uint64_t	pool_size;		/* bytes of the file covered by this layout */
	uint32_t	max_slots;		/* clock slots (<= NVM_MAX_SLOTS) */
	uint32_t	ring_words;		/* status-ring words per slot */
	uint32_t	max_tables;		/* table directory entries */
	uint32_t	chunk_size;		/* allocator chunk size in bytes */
	uint32_t	clog_words;		/* commit-log words (N2DB) */
	uint32_t	reserved0;
	uint64_t	root_off;
	uint64_t	slots_off;
	uint64_t	rings_off;
	uint64_t	clog_off;
	uint64_t	tables_off;
	uint64_t	chunk_table_off;
	uint64_t	chunks_off;
	uint64_t	nchunks;
	uint32_t	cc_mode;		/* NVM_CC_MCSI or NVM_CC_N2DB */
	uint32_t	reserved;
	uint64_t	checksum;		/* over every field above */
} NvmPoolHeader;

/* Mutable pool-wide words; each on its own cache line. */
typedef struct NvmPoolRoot
{
	_Alignas(NVM_CACHELINE) uint64_t clean_shutdown;	/* 1 after a clean stop */
	_Alignas(NVM_CACHELINE) uint64_t start_count;	/* starts since creation */
	_Alignas(NVM_CACHELINE) uint64_t n2db_reserved; /* N2DB: all handed-out txids are below this */
	_Alignas(NVM_CACHELINE) uint64_t index_repair_off;	/* index entries to repair (indexlog.h), 0 = none */
} NvmPoolRoot;

/* Persistent per-slot state: one cache line. */
typedef struct NvmSlotPersist
{
	_Alignas(NVM_CACHELINE) uint64_t clock_reserved;	/* all handed-out clock values are below this */
	uint64_t	ring_off;		/* offset of this slot's status ring */
	uint64_t	log_txid;		/* transaction the write log belongs to, 0 = none */
	nvm_off		log_head;		/* first block of the slot's write log, 0 = none yet */
	uint64_t	indoubt_xid;	/* external (PostgreSQL) xid the in-doubt txid follows */
	uint64_t	indoubt_txid;	/* transaction whose outcome is the external xid's, 0 = none */
	nvm_off		indexlog_off;	/* ring of index roots committed without a log flush (indexlog.h), 0 = none */
} NvmSlotPersist;

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
	NVM_POOL_ERR_MODE			/* created for another concurrency-control mode */
} NvmPoolOpenResult;

/*
 * A pool created in one concurrency-control mode is converted to the other
 * at start-up when allow_mode_switch is set: recovery runs in the old mode,
 * after which every version carries its final status inlined, so neither
 * the status rings nor the commit log are needed for old transactions; all
 * clocks and the global counter then restart above every txid handed out
 * so far, and the header is rewritten with the new mode.
 */

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
} NvmPoolOptions;

/* Mode the pool will be converted to by nvm_core_startup (0 = none). */
extern uint32_t nvm_pool_pending_mode;

/* The mapping of this process; set by nvm_pool_open. */
extern char *nvm_pool_base;
extern NvmPoolHeader *nvm_pool_header;

/*
 * nvm_pool_open opens (creating if missing) and maps the pool; on failure it
 * returns an error code and writes a one-line message (naming the file and
 * the problem) into errbuf.
 */
extern NvmPoolOpenResult nvm_pool_open(const NvmPoolOptions *opts,
									   char *errbuf, size_t errbuf_size);
extern void nvm_pool_close(void);

extern uint64_t nvm_pool_header_checksum(const NvmPoolHeader *hdr);

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
