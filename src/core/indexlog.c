/*
 * indexlog.c
 *	  The index log: per-slot rings of the index roots that transactions
 *	  committed without a flush of the external log, and the repair list
 *	  that recovery builds from them.  The design and the persist orders are
 *	  in indexlog.h.
 */
#include "indexlog.h"

#include "alloc.h"
#include "persist.h"
#include "pool.h"
#include "store.h"

#include <stdlib.h>
#include <string.h>

static uint64_t new_ring_capacity = NVM_INDEXLOG_DEFAULT_CAPACITY;

void
nvm_indexlog_set_capacity(uint32_t capacity)
{
	new_ring_capacity = capacity ? capacity : NVM_INDEXLOG_DEFAULT_CAPACITY;
}

/* ring_of returns slot's ring, NULL if it has none (or a damaged link). */
static NvmIndexLogRing *
ring_of(uint32_t slot)
{
	NvmSlotPersist *sp = nvm_pool_slot(slot);
	NvmIndexLogRing *ring;

	if (sp->indexlog_off == 0)
		return NULL;
	ring = nvm_ptr(sp->indexlog_off);
	if (ring->capacity == 0 || ring->head - ring->tail > ring->capacity)
		return NULL;
	return ring;
}

/*
 * ring_create allocates a zeroed ring for slot and links it: the ring is
 * durable (drain) before the link, which the caller's next drain makes
 * durable (a crash before leaks the ring).
 */
static NvmIndexLogRing *
ring_create(uint32_t slot)
{
	NvmSlotPersist *sp = nvm_pool_slot(slot);
	uint64_t	capacity = new_ring_capacity;
	nvm_off		off = nvm_alloc_zeroed(sizeof(NvmIndexLogRing) +
									   capacity * sizeof(NvmIndexLogEntry));
	NvmIndexLogRing *ring;

	if (off == 0)
		return NULL;
	ring = nvm_ptr(off);
	ring->capacity = capacity;
	nvm_flush(ring, sizeof(NvmIndexLogRing));
	nvm_drain();
	sp->indexlog_off = off;
	nvm_flush(&sp->indexlog_off, sizeof(nvm_off));
	return ring;
}

uint64_t
nvm_indexlog_room(uint32_t slot)
{
	NvmIndexLogRing *ring = ring_of(slot);

	return ring ? ring->capacity : new_ring_capacity;
}

uint64_t
nvm_indexlog_pending(uint32_t slot)
{
	NvmIndexLogRing *ring = ring_of(slot);

	return ring ? ring->head - ring->tail : 0;
}

/*
 * flush_entries flushes the entries [from, to) of ring, which may wrap
 * around its end.
 */
static void
flush_entries(NvmIndexLogRing *ring, uint64_t from, uint64_t to)
{
	while (from < to)
	{
		uint64_t	i = from % ring->capacity;
		uint64_t	n = ring->capacity - i;

		if (n > to - from)
			n = to - from;
		nvm_flush(&ring->entries[i], n * sizeof(NvmIndexLogEntry));
		from += n;
	}
}

bool
nvm_indexlog_append(uint32_t slot, const NvmIndexLogEntry *entries, size_t n,
					uint64_t durable_lsn)
{
	NvmIndexLogRing *ring = ring_of(slot);
	uint64_t	head,
				tail;

	if (n == 0)
		return true;
	if (ring == NULL && (ring = ring_create(slot)) == NULL)
		return false;
	if (n > ring->capacity)
		return false;

	/* entries whose records are durable need no repair: drop them */
	head = ring->head;
	tail = ring->tail;
	while (tail < head && ring->entries[tail % ring->capacity].lsn <= durable_lsn)
		tail++;
	if (head - tail + n > ring->capacity)
		return false;

	for (size_t k = 0; k < n; k++)
		ring->entries[(head + k) % ring->capacity] = entries[k];
	flush_entries(ring, head, head + n);
	ring->tail = tail;
	ring->head = head + n;
	nvm_flush(ring, sizeof(NvmIndexLogRing));
	return true;
}

/* ---------------------------------------------------------------------
 * Recovery
 * ---------------------------------------------------------------------
 */

static int
cmp_off(const void *a, const void *b)
{
	nvm_off		x = *(const nvm_off *) a;
	nvm_off		y = *(const nvm_off *) b;

	return x < y ? -1 : x > y;
}

static int
cmp_entry(const void *a, const void *b)
{
	const NvmIndexRepairEntry *x = a;
	const NvmIndexRepairEntry *y = b;
	nvm_off		tx = atomic_load(&x->table);
	nvm_off		ty = atomic_load(&y->table);

	if (tx != ty)
		return tx < ty ? -1 : 1;
	return x->version_no < y->version_no ? -1 : x->version_no > y->version_no;
}

/*
 * live_tables returns the sorted descriptor offsets of the table
 * directory's entries (malloc'd), their number in *n.
 */
static nvm_off *
live_tables(size_t *n)
{
	NvmTableDirEntry *dir = nvm_table_dir();
	size_t		count = nvm_table_dir_count();
	nvm_off    *out = malloc((count ? count : 1) * sizeof(nvm_off));

	if (out == NULL)
		abort();
	*n = 0;
	for (size_t i = 0; i < count; i++)
	{
		nvm_off		d = atomic_load(&dir[i].desc);

		if (d != 0)
			out[(*n)++] = d;
	}
	qsort(out, *n, sizeof(nvm_off), cmp_off);
	return out;
}

static bool
is_live(const nvm_off *tables, size_t n, nvm_off desc)
{
	return desc != 0 && bsearch(&desc, tables, n, sizeof(nvm_off), cmp_off) != NULL;
}

/* empty_rings drops every ring's entries (persisted). */
static void
empty_rings(void)
{
	for (uint32_t c = 0; c < nvm_pool_header->max_slots; c++)
	{
		NvmIndexLogRing *ring = ring_of(c);

		if (ring != NULL && ring->tail != ring->head)
		{
			ring->tail = ring->head;
			nvm_flush(&ring->tail, sizeof(uint64_t));
		}
	}
	nvm_drain();
}

/*
 * external_recover builds the external list after a crash: the uncleared
 * entries of the old list, then every ring's external entries in
 * [tail, head), in order (see indexlog.h for the persist order; the rings
 * are emptied by the caller afterwards).  After a clean stop it only frees
 * an old list whose entries are all cleared.  Returns false, changing
 * nothing, if the pool has no room for the new list.
 */
static bool
external_recover(bool wal_complete)
{
	NvmPoolRoot *root = nvm_pool_root();
	NvmExternalList *old = nvm_ptr(root->external_off);
	uint64_t	n = 0;
	nvm_off		list_off = 0;
	NvmExternalList *list = NULL;

	if (wal_complete)
	{
		uint64_t	left = 0;

		/* (the count may be too high after a crash in nvm_external_clear) */
		for (uint64_t i = 0; old != NULL && i < old->count; i++)
			left += atomic_load(&old->entries[i].word0) != 0;
		if (old != NULL && left == 0)
		{
			root->external_off = 0;
			nvm_persist(&root->external_off, sizeof(uint64_t));
			nvm_free(nvm_off_of(old));
		}
		return true;
	}

	/* two passes: count, then copy */
	for (int pass = 0; pass < 2; pass++)
	{
		uint64_t	k = 0;

		if (old != NULL)
		{
			for (uint64_t i = 0; i < old->count; i++)
			{
				uint64_t	w0 = atomic_load(&old->entries[i].word0);

				if (w0 == 0)
					continue;
				if (list != NULL)
				{
					atomic_store(&list->entries[k].word0, w0);
					list->entries[k].word1 = old->entries[i].word1;
				}
				k++;
			}
		}
		for (uint32_t c = 0; c < nvm_pool_header->max_slots; c++)
		{
			NvmIndexLogRing *ring = ring_of(c);

			if (ring == NULL)
				continue;
			for (uint64_t i = ring->tail; i < ring->head; i++)
			{
				NvmIndexLogEntry *e = &ring->entries[i % ring->capacity];

				if (!(e->table & NVM_INDEXLOG_EXTERNAL))
					continue;
				if (list != NULL)
				{
					atomic_store(&list->entries[k].word0, e->table);
					list->entries[k].word1 = e->version_no;
				}
				k++;
			}
		}
		if (pass == 0)
		{
			n = k;
			if (n == 0)
				break;
			list_off = nvm_alloc_zeroed(sizeof(NvmExternalList) + n * sizeof(NvmExternalEntry));
			if (list_off == 0)
				return false;
			list = nvm_ptr(list_off);
			list->count = n;
			atomic_store(&list->remaining, n);
		}
	}
	if (list != NULL)
	{
		nvm_flush(list, sizeof(NvmExternalList) + n * sizeof(NvmExternalEntry));
		nvm_drain();			/* the list is durable before the root names it */
	}
	if (list_off == 0 && old == NULL)
		return true;
	root->external_off = list_off;
	nvm_persist(&root->external_off, sizeof(uint64_t));	/* ... before the rings are emptied */
	if (old != NULL)
		nvm_free(nvm_off_of(old));
	return true;
}

int64_t
nvm_indexlog_recover(bool wal_complete)
{
	NvmPoolRoot *root = nvm_pool_root();
	NvmIndexRepairList *old = nvm_ptr(root->index_repair_off);
	NvmIndexRepairEntry *found = NULL;
	size_t		nfound = 0,
				cap = 0;
	size_t		ntables;
	nvm_off    *tables;
	nvm_off		list_off = 0;
	NvmIndexRepairList *list = NULL;

	if (!external_recover(wal_complete))
		return -1;
	if (wal_complete && old == NULL)
	{
		empty_rings();
		return 0;
	}

	tables = live_tables(&ntables);

	/* what is left of the previous list, then every ring's entries */
	for (int pass = 0; pass < 2; pass++)
	{
		uint32_t	nslots = pass == 0 ? 1 : nvm_pool_header->max_slots;

		for (uint32_t c = 0; c < nslots; c++)
		{
			NvmIndexLogRing *ring = pass == 1 ? ring_of(c) : NULL;
			uint64_t	from = 0,
						to = 0;

			if (pass == 0 && old != NULL)
				to = old->count;
			else if (pass == 1 && ring != NULL && !wal_complete)
			{
				from = ring->tail;
				to = ring->head;
			}
			for (uint64_t i = from; i < to; i++)
			{
				nvm_off		t;
				uint64_t	vno;

				if (pass == 0)
				{
					t = atomic_load(&old->entries[i].table);
					vno = old->entries[i].version_no;
				}
				else
				{
					t = ring->entries[i % ring->capacity].table;
					vno = ring->entries[i % ring->capacity].version_no;
				}
				if (!is_live(tables, ntables, t) || vno == 0)
					continue;
				if (nfound == cap)
					found = nvm_array_grow(found, &cap, sizeof(*found), 256);
				atomic_store(&found[nfound].table, t);
				found[nfound].version_no = vno;
				nfound++;
			}
		}
	}
	free(tables);

	/* one entry per root, grouped by table */
	if (nfound > 1)
	{
		size_t		k = 0;

		qsort(found, nfound, sizeof(*found), cmp_entry);
		for (size_t i = 1; i < nfound; i++)
			if (cmp_entry(&found[i], &found[k]) != 0)
				found[++k] = found[i];
		nfound = k + 1;
	}

	if (nfound > 0)
	{
		list_off = nvm_alloc_zeroed(sizeof(NvmIndexRepairList) +
									nfound * sizeof(NvmIndexRepairEntry));
		if (list_off == 0)
		{
			free(found);
			return -1;
		}
		list = nvm_ptr(list_off);
		list->count = nfound;
		atomic_store(&list->remaining, nfound);
		memcpy(list->entries, found, nfound * sizeof(*found));
		nvm_flush(list, sizeof(NvmIndexRepairList) + nfound * sizeof(NvmIndexRepairEntry));
		nvm_drain();			/* the list is durable before the root names it */
	}
	free(found);

	root->index_repair_off = list_off;
	nvm_flush(&root->index_repair_off, sizeof(uint64_t));
	nvm_drain();				/* ... and the root names it before the rings are emptied */
	empty_rings();
	if (old != NULL)
		nvm_free(nvm_off_of(old));
	return (int64_t) nfound;
}

/* ---------------------------------------------------------------------
 * External entries
 * ---------------------------------------------------------------------
 */

/*
 * lower_remaining ends a clearing of n entries (flushed by the caller) of
 * the repair or the external list: they are durable (drain) before the
 * list's count of remaining entries goes down (persisted); a crash in
 * between leaves the count too high, which the next start recomputes.
 */
static void
lower_remaining(_Atomic uint64_t *remaining, uint64_t n)
{
	nvm_drain();
	if (n > 0)
	{
		atomic_fetch_sub(remaining, n);
		nvm_persist(remaining, sizeof(uint64_t));
	}
}

NvmExternalList *
nvm_external_list(void)
{
	NvmExternalList *list = nvm_ptr(nvm_pool_root()->external_off);

	if (list == NULL || atomic_load_explicit(&list->remaining, memory_order_acquire) == 0)
		return NULL;
	return list;
}

/* nvm_external_clear: the persist order is lower_remaining's. */
uint64_t
nvm_external_clear(uint64_t from, uint64_t n)
{
	NvmExternalList *list = nvm_external_list();
	uint64_t	cleared = 0;

	if (list == NULL)
		return 0;
	for (uint64_t i = from; i < from + n && i < list->count; i++)
	{
		uint64_t	w0 = atomic_load(&list->entries[i].word0);

		if (w0 == 0 || !atomic_compare_exchange_strong(&list->entries[i].word0, &w0, 0))
			continue;
		nvm_flush(&list->entries[i].word0, sizeof(uint64_t));
		cleared++;
	}
	lower_remaining(&list->remaining, cleared);
	return cleared;
}

/* ---------------------------------------------------------------------
 * Repair
 * ---------------------------------------------------------------------
 */

NvmIndexRepairList *
nvm_repair_list(void)
{
	NvmIndexRepairList *list = nvm_ptr(nvm_pool_root()->index_repair_off);

	if (list == NULL || atomic_load_explicit(&list->remaining, memory_order_acquire) == 0)
		return NULL;
	return list;
}

uint64_t
nvm_repair_count_for(nvm_off desc)
{
	return nvm_repair_versions_for(desc, NULL, UINT64_MAX);
}

/* (out NULL: only count them) */
uint64_t
nvm_repair_versions_for(nvm_off desc, uint64_t *out, uint64_t max)
{
	NvmIndexRepairList *list = nvm_repair_list();
	uint64_t	n = 0;

	if (list == NULL)
		return 0;
	for (uint64_t i = 0; i < list->count && n < max; i++)
	{
		if (atomic_load(&list->entries[i].table) != desc)
			continue;
		if (out != NULL)
			out[n] = list->entries[i].version_no;
		n++;
	}
	return n;
}

bool
nvm_repair_names(nvm_off desc, uint64_t version_no)
{
	NvmIndexRepairList *list = nvm_repair_list();

	if (list == NULL)
		return false;
	for (uint64_t i = 0; i < list->count; i++)
		if (atomic_load(&list->entries[i].table) == desc && list->entries[i].version_no == version_no)
			return true;
	return false;
}

/* nvm_repair_done: the persist order is lower_remaining's. */
uint64_t
nvm_repair_done(nvm_off desc)
{
	NvmIndexRepairList *list = nvm_repair_list();
	uint64_t	n = 0;

	if (list == NULL || desc == 0)
		return 0;
	for (uint64_t i = 0; i < list->count; i++)
	{
		nvm_off		expected = desc;

		if (atomic_compare_exchange_strong(&list->entries[i].table, &expected, 0))
		{
			nvm_flush(&list->entries[i].table, sizeof(nvm_off));
			n++;
		}
	}
	lower_remaining(&list->remaining, n);
	return n;
}
