/*
 * tables.c
 *	  The store's tables (tables.h): the table directory, and a table's life
 *	  cycle: created, opened, given new storage, dropped, cloned under a new
 *	  key, and swept at start-up.  The rows of a table, their numbers and
 *	  their writes are store.c's.  The persist orders are stated at each
 *	  step below.
 */
#include "tables.h"

#include "alloc.h"
#include "ckptmark.h"
#include "indoubt.h"
#include "persist.h"
#include "pool.h"
#include "segarray.h"
#include "txn.h"

#include <stdlib.h>
#include <string.h>

typedef struct NvmTablesShared
{
	NvmSpinLock dir_lock;		/* serialises changes to the table directory */
	_Atomic bool numbers_moved; /* see nvm_store_note_numbers_moved (store.h) */
} NvmTablesShared;

static NvmTablesShared *tables_shared = NULL;

size_t
nvm_tables_shmem_size(void)
{
	return sizeof(NvmTablesShared);
}

void
nvm_tables_startup(void *shmem)
{
	tables_shared = shmem;
	nvm_spin_init(&tables_shared->dir_lock);
	atomic_store(&tables_shared->numbers_moved, false);
}

void
nvm_tables_attach(void *shmem)
{
	tables_shared = shmem;
}

/*
 * The flag of moved version numbers (store.h) lives in the tables' shared
 * memory, the store's only shared area.
 */
void
nvm_store_note_numbers_moved(void)
{
	if (!atomic_load_explicit(&tables_shared->numbers_moved, memory_order_relaxed))
		atomic_store(&tables_shared->numbers_moved, true);
}

bool
nvm_store_numbers_moved(void)
{
	return tables_shared != NULL && atomic_load(&tables_shared->numbers_moved);
}

/* ---------------------------------------------------------------------
 * Table directory
 * ---------------------------------------------------------------------
 */

size_t
nvm_table_dir_count(void)
{
	return nvm_pool_header->max_tables;
}

NvmTableDirEntry *
nvm_table_dir(void)
{
	return (NvmTableDirEntry *) (nvm_pool_base + nvm_pool_header->tables_off);
}

/*
 * nvm_table_dir_used counts the directory entries in use (tables whose
 * storage exists, dropped ones not yet reclaimed included).
 */
size_t
nvm_table_dir_used(void)
{
	NvmTableDirEntry *dir = nvm_table_dir();
	size_t		n = nvm_table_dir_count();
	size_t		used = 0;

	for (size_t i = 0; i < n; i++)
		if (atomic_load(&dir[i].desc) != 0)
			used++;
	return used;
}

static bool
key_equal(const NvmTableKey *a, const NvmTableKey *b)
{
	return a->spc == b->spc && a->db == b->db && a->rel == b->rel && a->pad == b->pad;
}

/*
 * dir_install makes the directory name the descriptor at desc_off (which
 * is durable already) under key, replacing a stale descriptor with the
 * same key (a relfilenode is only reused after the relation that had it is
 * gone; the stale one leaks).
 *
 * Persist order: a free entry's key is durable before its descriptor
 * offset is stored; the offset (an aligned 8-byte store) is the publishing
 * write, and is persisted before this returns.  The replaced descriptor's
 * offset (0 if none) goes to *replaced when it is not NULL.  Returns false
 * if the directory is full.
 */
static bool
dir_install(const NvmTableKey *key, uint64_t create_txid, nvm_off desc_off,
			nvm_off *replaced)
{
	NvmTableDirEntry *dir = nvm_table_dir();
	size_t		n = nvm_table_dir_count();
	NvmTableDirEntry *target = NULL;

	nvm_spin_lock(&tables_shared->dir_lock);
	for (size_t i = 0; i < n; i++)
	{
		if (atomic_load(&dir[i].desc) != 0 && key_equal(&dir[i].key, key))
		{
			target = &dir[i];
			break;
		}
	}
	if (target == NULL)
	{
		for (size_t i = 0; i < n; i++)
		{
			if (atomic_load(&dir[i].desc) == 0)
			{
				target = &dir[i];
				target->key = *key;
				target->create_txid = create_txid;
				nvm_persist(target, sizeof(*target));
				break;
			}
		}
	}
	if (target == NULL)
	{
		nvm_spin_unlock(&tables_shared->dir_lock);
		return false;
	}
	target->create_txid = create_txid;
	if (replaced != NULL)
		*replaced = atomic_load(&target->desc);
	atomic_store(&target->desc, desc_off);
	nvm_persist(target, sizeof(*target));
	nvm_spin_unlock(&tables_shared->dir_lock);
	return true;
}

/*
 * new_empty_desc allocates an empty descriptor for key and makes it
 * durable (flushed and drained); 0 if the pool is full.
 */
static nvm_off
new_empty_desc(const NvmTableKey *key)
{
	nvm_off		desc_off = nvm_alloc_zeroed(sizeof(NvmTableDesc));
	NvmTableDesc *desc;

	if (desc_off == 0)
		return 0;
	desc = nvm_ptr(desc_off);
	desc->magic = NVM_TABLE_MAGIC;
	desc->key = *key;
	atomic_store(&desc->next_record, 1);
	atomic_store(&desc->next_version, 1);
	nvm_flush(desc, sizeof(*desc));
	nvm_drain();
	return desc_off;
}

/*
 * nvm_table_create makes a new, empty table descriptor for key and installs
 * it in the directory, replacing a stale descriptor with the same key.
 *
 * Persist order: the descriptor is durable before the directory points at
 * it (dir_install states the rest).  Returns false if the pool or the
 * directory is full.
 */
bool
nvm_table_create(const NvmTableKey *key, uint64_t create_txid, NvmTable *out)
{
	nvm_off		desc_off = new_empty_desc(key);

	if (desc_off == 0)
		return false;
	if (!dir_install(key, create_txid, desc_off, NULL))
	{
		nvm_free(desc_off);
		return false;
	}
	out->desc = nvm_ptr(desc_off);
	return true;
}

/*
 * nvm_table_open finds the descriptor of key; false if there is none.
 */
bool
nvm_table_open(const NvmTableKey *key, NvmTable *out)
{
	NvmTableDirEntry *dir = nvm_table_dir();
	size_t		n = nvm_table_dir_count();

	for (size_t i = 0; i < n; i++)
	{
		nvm_off		d = atomic_load_explicit(&dir[i].desc, memory_order_acquire);

		if (d != 0 && key_equal(&dir[i].key, key))
		{
			NvmTableDesc *desc = nvm_ptr(d);

			if (desc->magic != NVM_TABLE_MAGIC)
				return false;
			out->desc = desc;
			return true;
		}
	}
	return false;
}

/*
 * nvm_table_reset: see store.h.  Persist order: the new, empty descriptor
 * is durable before the directory names it (new_empty_desc, dir_install);
 * the old one is only detached.
 */
bool
nvm_table_reset(const NvmTableKey *key, uint64_t create_txid, NvmTable *out,
				nvm_off *detached)
{
	nvm_off		desc_off = new_empty_desc(key);

	*detached = 0;
	if (desc_off == 0)
		return false;
	if (!dir_install(key, create_txid, desc_off, detached))
	{
		nvm_free(desc_off);
		return false;
	}
	out->desc = nvm_ptr(desc_off);
	return true;
}

/*
 * free_contents gives back every version a descriptor's version slots
 * name, both arrays and the descriptor itself; the descriptor must be
 * unreachable already (durably out of the directory).  Persist order: the
 * links of clones to it (number_floor_of) are cleared and drained first.
 */
static void
free_contents(nvm_off desc_off)
{
	NvmTableDesc *desc = nvm_ptr(desc_off);
	uint64_t	limit = atomic_load(&desc->next_version);
	NvmTableDirEntry *dir = nvm_table_dir();
	size_t		n = nvm_table_dir_count();
	bool		cleared = false;

	/* clones of this table stop raising its counter before it is freed */
	for (size_t i = 0; i < n; i++)
	{
		nvm_off		d = atomic_load(&dir[i].desc);
		NvmTableDesc *other;

		if (d == 0 || d == desc_off)
			continue;
		other = nvm_ptr(d);
		if (other->magic == NVM_TABLE_MAGIC &&
			atomic_load(&other->number_floor_of) == desc_off)
		{
			atomic_store(&other->number_floor_of, 0);
			nvm_flush(&other->number_floor_of, sizeof(nvm_off));
			cleared = true;
		}
	}
	if (cleared)
		nvm_drain();

	for (uint64_t v = 1; v < limit; v++)
	{
		_Atomic uint64_t *slot = nvm_segarray_slot(&desc->versions, v, false);
		nvm_off		off;

		if (slot == NULL)
		{
			/* the segment of v is missing: skip to the next segment */
			continue;
		}
		off = atomic_load(slot);
		if (off != 0 && (off & NVM_TAG_MASK) == 0)
			nvm_free(off);
	}
	nvm_segarray_free(&desc->records);
	nvm_segarray_free(&desc->versions);
	if (atomic_load(&desc->lock_words) != 0)
	{
		nvm_segarray_free(nvm_ptr(atomic_load(&desc->lock_words)));
		nvm_free(atomic_load(&desc->lock_words));
	}
	nvm_ckpt_free_marks(desc);
	desc->magic = 0;
	nvm_flush(&desc->magic, sizeof(uint64_t));
	nvm_free(desc_off);
	nvm_drain();
}

/*
 * nvm_table_drop removes key's table from the directory and gives back all
 * its space: every version, both arrays and the descriptor.  The caller
 * guarantees that nobody can reach the table any more (PostgreSQL has
 * committed the DROP or TRUNCATE, or rolled back the CREATE).
 *
 * Persist order: the directory entry is cleared and persisted first; the
 * frees follow.  A crash in between leaks the remaining blocks (unreachable),
 * never a block that is reachable.  Returns false if there was no table.
 */
void
nvm_table_free_detached(nvm_off desc)
{
	if (desc != 0 && ((NvmTableDesc *) nvm_ptr(desc))->magic == NVM_TABLE_MAGIC)
		free_contents(desc);
}

bool
nvm_table_drop(const NvmTableKey *key)
{
	NvmTableDirEntry *dir = nvm_table_dir();
	size_t		n = nvm_table_dir_count();
	nvm_off		desc_off = 0;

	nvm_spin_lock(&tables_shared->dir_lock);
	for (size_t i = 0; i < n; i++)
	{
		if (atomic_load(&dir[i].desc) != 0 && key_equal(&dir[i].key, key))
		{
			desc_off = atomic_load(&dir[i].desc);
			atomic_store(&dir[i].desc, 0);
			nvm_persist(&dir[i], sizeof(dir[i]));
			break;
		}
	}
	nvm_spin_unlock(&tables_shared->dir_lock);
	if (desc_off == 0)
		return false;
	free_contents(desc_off);
	return true;
}

/* ---------------------------------------------------------------------
 * Cloning a table under a new key, and the start-up sweep
 * ---------------------------------------------------------------------
 */

typedef struct CloneCtx
{
	NvmTableDesc *src;
	NvmTableDesc *dst;
	uint64_t	vlimit;			/* src's next_version */
	nvm_off    *copies;			/* every version block of the copy */
	size_t		ncopies;
	size_t		cap;
	bool		failed;			/* the pool is full */
} CloneCtx;

/* The value of src's version slot n (0 if its segment is missing). */
static uint64_t
clone_src_slot(CloneCtx *c, uint64_t n)
{
	_Atomic uint64_t *slot = nvm_segarray_slot(&c->src->versions, n, false);

	return slot ? atomic_load(slot) : 0;
}

/*
 * clone_block copies the version ov into a new block (flushed later, with
 * its prev) and remembers it; 0 if the pool is full.
 */
static nvm_off
clone_block(CloneCtx *c, NvmVersion *ov)
{
	size_t		len = ov->data_len;
	nvm_off		off;

	/* a tombstone carries the epoch it is retired at (gc.h) */
	if (nvm_version_is_tombstone(ov) && len < sizeof(uint64_t))
		len = sizeof(uint64_t);
	len += sizeof(NvmVersion);
	if (c->ncopies == c->cap)
		c->copies = nvm_array_grow(c->copies, &c->cap, sizeof(nvm_off), 1024);
	off = nvm_alloc(len);
	if (off == 0)
	{
		c->failed = true;
		return 0;
	}
	memcpy(nvm_ptr(off), ov, len);
	c->copies[c->ncopies++] = off;
	return off;
}

/*
 * clone_map returns the copy of the version at src offset p: the one in the
 * copy's version slot of p's number when src's slot names p, else (a
 * version that no slot names, which a consistent table does not have) a
 * new copy of it and of the chain below it.
 */
static nvm_off
clone_map(CloneCtx *c, nvm_off p)
{
	NvmVersion *ov;
	NvmVersion *nv;
	uint64_t	vn;
	nvm_off		off;

	if (p == 0 || c->failed)
		return 0;
	ov = nvm_ptr(p);
	vn = ov->version_no;
	if (vn > 0 && vn < c->vlimit && clone_src_slot(c, vn) == p)
		return atomic_load(nvm_segarray_slot(&c->dst->versions, vn, false));
	off = clone_block(c, ov);
	if (off == 0)
		return 0;
	nv = nvm_ptr(off);
	nv->prev = clone_map(c, ov->prev);
	nvm_flush(nv, sizeof(NvmVersion) + nv->data_len);
	return off;
}

/*
 * clone_flush_slot flushes the cache line of entry slot of an array, once
 * per line: when slot is the first entry visited, starts a line, or
 * follows a segment boundary (the entry before it is not adjacent).  The
 * caller visits entries in order after all of them are written, so the
 * whole line is written when it is flushed.
 */
static void
clone_flush_slot(_Atomic uint64_t *slot, _Atomic uint64_t **prev_slot)
{
	if (*prev_slot == NULL || slot != *prev_slot + 1 ||
		((uintptr_t) slot % NVM_CACHELINE) == 0)
		nvm_flush((const void *) slot, sizeof(uint64_t));
	*prev_slot = slot;
}

/*
 * nvm_table_clone: see store.h.
 *
 * Persist order:
 *	 1. the copy is built where nobody can reach it: a new descriptor; its
 *		arrays (segarray.h: every segment drained zeroed before it is
 *		linked); a new block for every version a slot of src names (header,
 *		inlined status and data as in src, prev mapped to the copy of the
 *		older version), for every record head and version slot the mapped
 *		or verbatim value (free-list entries and redirects are numbers, not
 *		offsets); everything flushed, then the descriptor (counters,
 *		free-list heads, segment offsets) flushed;
 *	 2. the copies of txn's versions whose status is not final are appended
 *		to txn's write log (entries flushed); src's version free list is
 *		emptied (head flushed) and the copy names src in number_floor_of
 *		(see "Reuse of numbers" in store.h);
 *	 3. drain: the copy, the log entries and src's empty free list are
 *		durable;
 *	 4. the directory names the copy under the new key (dir_install: key
 *		persisted, then the descriptor offset persisted).
 *	 A crash before 4 leaks the copy (unreachable; recovery may inline a
 *	 status into its versions through the write log, which is harmless)
 *	 and src's free version numbers (never handed out twice).
 *	 After 4 the copy is a complete table; PostgreSQL's catalog says which
 *	 of the two relfilenodes is in use, and the other one's storage is
 *	 freed when the transaction ends (nvm_drop.c), or stays behind
 *	 unreachable if the server crashes first, as after a crashed CREATE.
 */
bool
nvm_table_clone(const NvmTable *src, const NvmTableKey *new_key,
				uint64_t create_txid, NvmTxn *txn, int level, NvmTable *out)
{
	CloneCtx	c;
	nvm_off		desc_off;
	uint64_t	rlimit;
	size_t		logged = 0;
	_Atomic uint64_t *prev_slot = NULL;

	memset(&c, 0, sizeof(c));
	c.src = src->desc;
	c.vlimit = atomic_load(&c.src->next_version);
	rlimit = atomic_load(&c.src->next_record);
	desc_off = nvm_alloc_zeroed(sizeof(NvmTableDesc));
	if (desc_off == 0)
		return false;
	c.dst = nvm_ptr(desc_off);
	c.dst->magic = NVM_TABLE_MAGIC;
	c.dst->key = *new_key;

	/* step 1: version slots, and a copy of every version a slot names */
	for (uint64_t n = 1; n < c.vlimit && !c.failed; n++)
	{
		uint64_t	val = clone_src_slot(&c, n);
		_Atomic uint64_t *slot;

		if (val != 0 && (val & NVM_TAG_MASK) == 0)
		{
			NvmVersion *ov = nvm_ptr(val);

			if (ov->version_no == n)
				val = clone_block(&c, ov);
			else
				val = 0;		/* a stale slot: it names nothing */
			if (c.failed)
				break;
		}
		slot = nvm_segarray_slot(&c.dst->versions, n, true);
		if (slot == NULL)
		{
			c.failed = true;
			break;
		}
		atomic_store(slot, val);
	}
	/* ... their older versions mapped to the copies */
	for (uint64_t n = 1; n < c.vlimit && !c.failed; n++)
	{
		_Atomic uint64_t *slot = nvm_segarray_slot(&c.dst->versions, n, false);
		uint64_t	val = atomic_load(slot);

		if (val != 0 && (val & NVM_TAG_MASK) == 0)
		{
			NvmVersion *nv = nvm_ptr(val);
			NvmVersion *ov = nvm_ptr(clone_src_slot(&c, n));

			nv->prev = clone_map(&c, ov->prev);
			nvm_flush(nv, sizeof(NvmVersion) + nv->data_len);
		}
		clone_flush_slot(slot, &prev_slot);
	}
	/* record heads: versions and retired records' tombstones mapped */
	prev_slot = NULL;
	for (uint64_t r = 1; r < rlimit && !c.failed; r++)
	{
		_Atomic uint64_t *from = nvm_segarray_slot(&c.src->records, r, false);
		_Atomic uint64_t *slot = nvm_segarray_slot(&c.dst->records, r, true);
		uint64_t	val = from ? atomic_load(from) : 0;

		if (slot == NULL)
		{
			c.failed = true;
			break;
		}
		if (val != 0 && (val & NVM_TAG_MASK) == 0)
			val = clone_map(&c, val);
		else if ((val & NVM_TAG_MASK) == NVM_TAG_RETIRED)
			val = clone_map(&c, val & ~NVM_TAG_MASK) | NVM_TAG_RETIRED;
		atomic_store(slot, val);
	}
	/* ... flushed once every head of a line is written */
	for (uint64_t r = 1; r < rlimit && !c.failed; r++)
		clone_flush_slot(nvm_segarray_slot(&c.dst->records, r, false), &prev_slot);
	atomic_store(&c.dst->next_record, rlimit);
	atomic_store(&c.dst->next_version, c.vlimit);
	atomic_store(&c.dst->free_records, atomic_load(&c.src->free_records));
	atomic_store(&c.dst->free_versions, atomic_load(&c.src->free_versions));
	atomic_store(&c.dst->number_floor_of, nvm_off_of(c.src));
	atomic_store(&c.dst->token_mark, atomic_load(&c.src->token_mark));
	nvm_flush(c.dst, sizeof(NvmTableDesc));

	/* step 2: txn's versions still in flight are the transaction's too */
	if (!c.failed && txn != NULL && txn->txid != NVM_INVALID_TXID)
	{
		for (size_t i = 0; i < c.ncopies; i++)
		{
			NvmVersion *nv = nvm_ptr(c.copies[i]);

			if (nv->txid != txn->txid ||
				(atomic_load(&nv->info) & NVM_VINFO_STATUS_MASK) != 0)
				continue;
			if (!nvm_txn_log_version(txn, desc_off, c.copies[i], level))
			{
				c.failed = true;
				break;
			}
			logged++;
		}
	}
	if (!c.failed)
	{
		uint64_t	src_free = atomic_load(&c.src->free_versions);

		/* the original's free version numbers now belong to the copy alone */
		atomic_store(&c.src->free_versions,
					 ((src_free >> NVM_FREE_NUMBER_BITS) + 1) << NVM_FREE_NUMBER_BITS);
		nvm_flush(&c.src->free_versions, sizeof(uint64_t));
		/* step 3: the whole copy durable before it is reachable */
		nvm_drain();
		/* step 4 */
		if (dir_install(new_key, create_txid, desc_off, NULL))
		{
			free(c.copies);
			out->desc = c.dst;
			return true;
		}
		atomic_store(&c.src->free_versions, src_free);
		nvm_flush(&c.src->free_versions, sizeof(uint64_t));
	}

	/* the pool or the directory is full: nothing of the copy stays */
	while (logged-- > 0)
		nvm_txn_unlog_last(txn);
	for (size_t i = 0; i < c.ncopies; i++)
		nvm_free(c.copies[i]);
	free(c.copies);
	nvm_segarray_free(&c.dst->records);
	nvm_segarray_free(&c.dst->versions);
	nvm_free(desc_off);
	nvm_drain();
	return false;
}

void
nvm_table_sweep(bool empty_unlogged, NvmSweepResult *result)
{
	NvmTableDirEntry *dir = nvm_table_dir();
	size_t		n = nvm_table_dir_count();

	memset(result, 0, sizeof(*result));
	for (size_t i = 0; i < n; i++)
	{
		nvm_off		old = atomic_load(&dir[i].desc);
		uint32_t	kind;
		nvm_off		fresh = 0;

		if (old == 0)
			continue;
		kind = NVM_KEY_KIND(&dir[i].key);
		if (kind == NVM_KIND_UNLOGGED && empty_unlogged)
			fresh = new_empty_desc(&dir[i].key);
		else if (kind != NVM_KIND_TEMP)
			continue;

		/*
		 * Persist order: the entry names the new, empty descriptor (a
		 * temporary table's: none) durably before the old storage is
		 * freed; a crash in between leaks the old storage.
		 */
		nvm_spin_lock(&tables_shared->dir_lock);
		atomic_store(&dir[i].desc, fresh);
		nvm_persist(&dir[i], sizeof(dir[i]));
		nvm_spin_unlock(&tables_shared->dir_lock);
		if (((NvmTableDesc *) nvm_ptr(old))->magic == NVM_TABLE_MAGIC &&
			!nvm_indoubt_names_table(old))
			free_contents(old);
		if (kind == NVM_KIND_TEMP)
			result->temp_dropped++;
		else
		{
			if (fresh == 0)
			{
				/* the pool was full: try again now that the old storage is gone */
				fresh = new_empty_desc(&dir[i].key);
				nvm_spin_lock(&tables_shared->dir_lock);
				atomic_store(&dir[i].desc, fresh);
				nvm_persist(&dir[i], sizeof(dir[i]));
				nvm_spin_unlock(&tables_shared->dir_lock);
			}
			result->unlogged_emptied++;
		}
	}
}
