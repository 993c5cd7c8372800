/*
 * replica.c
 *	  A standby's replay of the primary's committed versions into its own
 *	  pool (replica.h has the design and the persist order).
 */
#include <string.h>

#include "alloc.h"
#include "indoubt.h"
#include "persist.h"
#include "pool.h"
#include "replica.h"
#include "segarray.h"
#include "store.h"
#include "visibility.h"

/* raise_to raises *counter to at least value and flushes it. */
static void
raise_to(_Atomic uint64_t *counter, uint64_t value)
{
	uint64_t	cur = atomic_load(counter);

	while (cur < value && !atomic_compare_exchange_weak(counter, &cur, value))
		;
	nvm_flush((const void *) counter, sizeof(uint64_t));
}

/*
 * drop_free_list empties a free list of numbers (persisted): its numbers
 * are never handed out again.
 */
static void
drop_free_list(_Atomic uint64_t *list)
{
	atomic_store(list, 0);
	nvm_persist((const void *) list, sizeof(uint64_t));
}

/*
 * already_installed says whether the version slot value cur names a
 * version that replay installed before: on the chain that starts at head,
 * of the same record, with the same kind and contents, committed (or in
 * doubt).
 */
static bool
already_installed(nvm_off cur, nvm_off head, const NvmReplicaVersion *rv)
{
	NvmVersion *v;
	uint64_t	tomb = rv->kind & NVM_VINFO_TOMBSTONE;
	bool		linked = false;

	if (cur == 0 || (cur & NVM_TAG_MASK) != 0)
		return false;
	/*
	 * Only a version on its record's chain counts: a crash can leave a slot
	 * naming a version whose install never reached its head (the slot is
	 * written before the drain that publishes the version), with bytes of
	 * whatever the block held before.
	 */
	for (nvm_off x = (head & NVM_TAG_MASK) == 0 ? head : 0; x != 0 && !linked;
		 x = ((NvmVersion *) nvm_ptr(x))->prev)
		linked = x == cur;
	if (!linked)
		return false;
	v = nvm_ptr(cur);
	if (v->record_no != rv->record_no || v->version_no != rv->version_no ||
		v->index_root != rv->index_root ||
		(atomic_load(&v->info) & NVM_VINFO_TOMBSTONE) != tomb)
		return false;
	if (!tomb && (v->data_len != rv->len || memcmp(v->data, rv->data, rv->len) != 0))
		return false;
	/*
	 * Committed, or a prepared transaction's (in doubt: its COMMIT record
	 * comes after its PREPARE's).  Not a version of a replay transaction
	 * that a crash cut short before its write-log entry was durable: its
	 * txid may be handed out again, to the replay transaction now running.
	 */
	switch (nvm_version_status(v))
	{
		case NVM_STATUS_COMMITTED:
			return true;
		case NVM_STATUS_RUNNING:
			return nvm_indoubt_xid_of(v->txid) != 0;
		default:
			return false;
	}
}

NvmReplicaResult
nvm_replica_install(NvmTable *t, NvmTxn *txn, const NvmReplicaVersion *rv)
{
	NvmTableDesc *desc = t->desc;
	bool		tomb = (rv->kind & NVM_VINFO_TOMBSTONE) != 0;
	uint32_t	len = tomb ? 0 : rv->len;
	_Atomic uint64_t *slot;
	_Atomic uint64_t *head;
	nvm_off		h;
	nvm_off		off;
	uint64_t	cur;
	NvmVersion *v;

	slot = nvm_segarray_slot(&desc->versions, rv->version_no, true);
	head = nvm_segarray_slot(&desc->records, rv->record_no, true);
	if (slot == NULL || head == NULL)
		return NVM_REPLICA_NO_SPACE;
	if (already_installed(atomic_load(slot), atomic_load(head), rv))
		return NVM_REPLICA_PRESENT;

	/*
	 * A number on the standby's free list (the pool was copied with it) is
	 * taken by the primary: the list is dropped, its numbers left unused,
	 * so that a promoted standby never pops a number in use.
	 */
	if ((atomic_load(slot) & NVM_TAG_MASK) == NVM_TAG_FREE)
		drop_free_list(&desc->free_versions);
	if ((atomic_load(head) & NVM_TAG_MASK) == NVM_TAG_FREE)
		drop_free_list(&desc->free_records);
	if (nvm_txn_begin_write(txn) == NVM_INVALID_TXID)
		return NVM_REPLICA_NO_SPACE;

	/* a tombstone has room for the epoch it is retired at (gc.h) */
	off = nvm_alloc(sizeof(NvmVersion) + (tomb ? sizeof(uint64_t) : len));
	if (off == 0)
		return NVM_REPLICA_NO_SPACE;
	v = nvm_ptr(off);

	/*
	 * The chain below: what the standby holds for the record number.  A
	 * head that is no version (free, or a retired record's marker) starts
	 * a new chain.
	 */
	h = atomic_load_explicit(head, memory_order_acquire);
	v->txid = txn->txid;
	v->prev = (h & NVM_TAG_MASK) == 0 ? h : 0;
	/* an insert into a number in use here continues that chain */
	atomic_store_explicit(&v->info, rv->kind & (NVM_VINFO_TOMBSTONE | NVM_VINFO_MOVED |
												(v->prev == 0 ? NVM_VINFO_INSERTED : 0)),
						  memory_order_relaxed);
	v->record_no = rv->record_no;
	v->version_no = rv->version_no;
	v->index_root = rv->index_root;
	v->data_len = len;
	v->external_id = 0;
	if (len)
		memcpy(v->data, rv->data, len);
	if (!nvm_txn_log_version(txn, nvm_off_of(desc), off, 1))
	{
		nvm_free(off);
		return NVM_REPLICA_NO_SPACE;
	}
	nvm_flush(v, sizeof(NvmVersion) + len);
	raise_to(&desc->next_version, rv->version_no + 1);
	raise_to(&desc->next_record, rv->record_no + 1);
	/* R1: version, counters and log entry durable before anything names it */
	nvm_drain();
	/* R2: the number names the new version (readers told first if it moves) */
	cur = atomic_load(slot);
	if (cur != 0 && (cur & NVM_TAG_MASK) == 0)
		nvm_store_note_numbers_moved();
	atomic_store_explicit(slot, off, memory_order_release);
	nvm_flush(slot, sizeof(uint64_t));
	/* R3: the chain grows at its head */
	atomic_store_explicit(head, off, memory_order_release);
	nvm_flush(head, sizeof(uint64_t));
	return NVM_REPLICA_INSTALLED;
}

nvm_off
nvm_replica_load_write(NvmTable *t, uint64_t txid, const NvmReplicaVersion *rv, bool *present)
{
	NvmTableDesc *desc = t->desc;
	bool		tomb = (rv->kind & NVM_VINFO_TOMBSTONE) != 0;
	uint32_t	len = tomb ? 0 : rv->len;
	_Atomic uint64_t *head = nvm_segarray_slot(&desc->records, rv->record_no, true);
	nvm_off		h;
	nvm_off		off;
	NvmVersion *v;

	*present = false;
	if (head == NULL || nvm_segarray_slot(&desc->versions, rv->version_no, true) == NULL)
		return 0;
	h = atomic_load_explicit(head, memory_order_acquire);
	if (h != 0 && (h & NVM_TAG_MASK) == 0 &&
		((NvmVersion *) nvm_ptr(h))->version_no == rv->version_no)
	{
		*present = true;
		return 0;
	}
	off = nvm_alloc(sizeof(NvmVersion) + (tomb ? sizeof(uint64_t) : len));
	if (off == 0)
		return 0;
	v = nvm_ptr(off);
	v->txid = txid;
	v->prev = 0;
	atomic_store_explicit(&v->info,
						  (uint64_t) NVM_STATUS_COMMITTED | NVM_VINFO_INSERTED |
						  (rv->kind & (NVM_VINFO_TOMBSTONE | NVM_VINFO_MOVED)),
						  memory_order_relaxed);
	v->record_no = rv->record_no;
	v->version_no = rv->version_no;
	v->index_root = rv->index_root;
	v->data_len = len;
	v->external_id = 0;
	if (len)
		memcpy(v->data, rv->data, len);
	nvm_flush(v, sizeof(NvmVersion) + len);
	return off;
}

void
nvm_replica_load_link(NvmTable *t, nvm_off version)
{
	NvmTableDesc *desc = t->desc;
	NvmVersion *v = nvm_ptr(version);
	_Atomic uint64_t *slot = nvm_segarray_slot(&desc->versions, v->version_no, false);
	_Atomic uint64_t *head = nvm_segarray_slot(&desc->records, v->record_no, false);

	atomic_store_explicit(slot, version, memory_order_release);
	nvm_flush((const void *) slot, sizeof(uint64_t));
	atomic_store_explicit(head, version, memory_order_release);
	nvm_flush((const void *) head, sizeof(uint64_t));
	if (v->index_root != v->version_no && v->index_root != 0)
	{
		_Atomic uint64_t *root = nvm_segarray_slot(&desc->versions, v->index_root, true);

		if (root != NULL && atomic_load(root) == 0)
		{
			atomic_store(root, (v->record_no << 3) | NVM_TAG_REDIRECT);
			nvm_flush((const void *) root, sizeof(uint64_t));
		}
		if (v->index_root >= atomic_load(&desc->next_version))
			raise_to(&desc->next_version, v->index_root + 1);
	}
	if (v->version_no >= atomic_load(&desc->next_version))
		raise_to(&desc->next_version, v->version_no + 1);
	if (v->record_no >= atomic_load(&desc->next_record))
		raise_to(&desc->next_record, v->record_no + 1);
}

void
nvm_replica_raise_counters(NvmTable *t, uint64_t next_record, uint64_t next_version)
{
	raise_to(&t->desc->next_record, next_record);
	raise_to(&t->desc->next_version, next_version);
	nvm_drain();
}

void
nvm_table_counters(const NvmTable *t, uint64_t *next_record, uint64_t *next_version)
{
	*next_record = atomic_load(&t->desc->next_record);
	*next_version = atomic_load(&t->desc->next_version);
}

void
nvm_table_raise_redo_reserved(NvmTable *t, uint64_t limit)
{
	uint64_t	cur = atomic_load(&t->desc->redo_reserved);

	while (cur < limit && !atomic_compare_exchange_weak(&t->desc->redo_reserved, &cur, limit))
		;
}

void
nvm_replica_forget_reservations(void)
{
	NvmTableDirEntry *dir = nvm_table_dir();
	size_t		n = nvm_table_dir_count();

	for (size_t i = 0; i < n; i++)
	{
		nvm_off		d = atomic_load(&dir[i].desc);

		if (d != 0)
			atomic_store(&((NvmTableDesc *) nvm_ptr(d))->redo_reserved, 0);
	}
}

void
nvm_table_note_redo(NvmTable *t, uint64_t lsn)
{
	uint64_t	cur = atomic_load(&t->desc->redo_lsn);

	/* a table marked for a resync keeps its mark until the resync is logged */
	while (cur < lsn && cur != NVM_REDO_RESYNC &&
		   !atomic_compare_exchange_weak(&t->desc->redo_lsn, &cur, lsn))
		;
	nvm_flush((const void *) &t->desc->redo_lsn, sizeof(uint64_t));
}

void
nvm_table_set_redo(NvmTable *t, uint64_t lsn)
{
	atomic_store(&t->desc->redo_lsn, lsn);
	nvm_persist((const void *) &t->desc->redo_lsn, sizeof(uint64_t));
}

/* mark_table marks the table at desc for a resync (persisted). */
static void
mark_table(nvm_off desc)
{
	NvmTableDesc *d = nvm_ptr(desc);

	if (atomic_load(&d->redo_lsn) == NVM_REDO_RESYNC)
		return;
	atomic_store(&d->redo_lsn, NVM_REDO_RESYNC);
	nvm_persist((const void *) &d->redo_lsn, sizeof(uint64_t));
}

/* mark_last_commit_table is the write-log visitor of nvm_replica_mark_resync. */
static void
mark_last_commit_table(nvm_off table, nvm_off version, void *arg)
{
	(void) version;
	(void) arg;
	mark_table(table);
}

uint32_t
nvm_replica_mark_resync(bool after_crash, uint64_t durable_end)
{
	NvmTableDirEntry *dir = nvm_table_dir();
	size_t		n = nvm_table_dir_count();
	uint32_t	marked = 0;

	for (uint32_t c = 0; after_crash && c < nvm_pool_header->max_slots; c++)
	{
		uint64_t	txid = nvm_pool_slot(c)->log_txid;

		if (txid != NVM_INVALID_TXID && nvm_status_get(txid) == NVM_STATUS_COMMITTED)
			(void) nvm_txn_write_log_each(c, txid, NULL, mark_last_commit_table, NULL);
	}
	for (size_t i = 0; i < n; i++)
	{
		nvm_off		d = atomic_load(&dir[i].desc);
		uint64_t	lsn;

		if (d == 0)
			continue;
		lsn = atomic_load(&((NvmTableDesc *) nvm_ptr(d))->redo_lsn);
		if (after_crash && lsn > durable_end && lsn != NVM_REDO_RESYNC)
			mark_table(d);
		if (atomic_load(&((NvmTableDesc *) nvm_ptr(d))->redo_lsn) == NVM_REDO_RESYNC)
			marked++;
	}
	return marked;
}

NvmVersion *
nvm_replica_newest_committed(const NvmTable *t, uint64_t record_no)
{
	nvm_off		h = nvm_record_head(t, record_no);

	for (NvmVersion *v = nvm_ptr(h); v != NULL; v = nvm_ptr(v->prev))
	{
		if (nvm_version_status(v) == NVM_STATUS_COMMITTED)
			return v;
	}
	return NULL;
}

NvmReplicaResult
nvm_replica_delete(NvmTable *t, NvmTxn *txn, uint64_t record_no)
{
	NvmReplicaVersion rv;

	memset(&rv, 0, sizeof(rv));
	rv.record_no = record_no;
	rv.version_no = atomic_fetch_add(&t->desc->next_version, 1);
	rv.index_root = rv.version_no;
	rv.kind = NVM_VINFO_TOMBSTONE;
	return nvm_replica_install(t, txn, &rv);
}

void
nvm_replica_redirect(NvmTable *t, uint64_t root, uint64_t record_no)
{
	_Atomic uint64_t *slot = nvm_segarray_slot(&t->desc->versions, root, true);
	uint64_t	val;

	if (slot == NULL)
		return;
	val = atomic_load(slot);
	if (val != 0 && (val & NVM_TAG_MASK) == 0 &&
		((NvmVersion *) nvm_ptr(val))->record_no == record_no)
		return;
	if (val == ((record_no << 3) | NVM_TAG_REDIRECT))
		return;
	if ((val & NVM_TAG_MASK) == NVM_TAG_FREE)
		drop_free_list(&t->desc->free_versions);
	if (val != 0 && (val & NVM_TAG_MASK) == 0)
		nvm_store_note_numbers_moved();
	atomic_store(slot, (record_no << 3) | NVM_TAG_REDIRECT);
	nvm_flush((const void *) slot, sizeof(uint64_t));
	raise_to(&t->desc->next_version, root + 1);
	nvm_drain();
}
