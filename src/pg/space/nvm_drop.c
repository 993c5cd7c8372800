/*-------------------------------------------------------------------------
 *
 * nvm_drop.c
 *	  Giving the pool space of dropped relfilenodes back, transactionally.
 *
 * A relfilenode's rows are freed only when it can no longer be reached:
 *	 - DROP TABLE (and the transient table of a rewriting ALTER TABLE): the
 *	   object_access_hook sees the drop; the storage goes when the dropping
 *	   transaction commits, and stays if it rolls back;
 *	 - TRUNCATE and SET TABLESPACE (a new relfilenode): the old storage
 *	   goes at commit, the new one at abort;
 *	 - a non-transactional truncate (of a table created in the transaction,
 *	   or ON COMMIT DELETE ROWS) gives the table a new, empty descriptor at
 *	   once; the old one, detached, is freed when the transaction ends
 *	   either way, after the transaction's own versions in it got their
 *	   final status;
 *	 - CREATE TABLE: the new storage goes if the creating transaction (or
 *	   subtransaction) rolls back.
 * This mirrors PostgreSQL's own pending deletes of relation files
 * (catalog/storage.c).  Storage is named by its pool key (nvm_relation.c),
 * which tells temporary tables of different backends apart.  Temporary
 * tables are dropped like any other table when their session ends (or by
 * whoever cleans up after a session that could not); after a crash, the
 * start-up sweep (nvmam.c) drops their storage.  If the server crashes
 * between PostgreSQL's commit and the free, the storage stays behind
 * unreachable (see doc/limitations.md); a later relation that
 * reuses the relfilenode replaces it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xact.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "store.h"

#include "claim/nvm_binding.h"
#include "redo/nvm_redo.h"
#include "redo/nvm_redofmt.h"
#include "space/nvm_drop.h"
#include "space/nvm_relation.h"

typedef struct PendingDrop
{
	NvmTableKey key;
	nvm_off		detached;		/* a detached descriptor, freed at the end either way */
	bool		at_commit;		/* drop at commit (else at abort) */
	int			level;			/* subtransaction nesting level that asked */
	struct PendingDrop *next;
} PendingDrop;

static PendingDrop *pending_drops = NULL;
static object_access_hook_type prev_object_access_hook = NULL;

/*
 * drop_storage frees p's storage and logs the drop, with the image of a
 * base backup kept out meanwhile (nvm_redo_storage_begin).
 */
static void
drop_storage(PendingDrop *p)
{
	nvm_redo_storage_begin();
	if (p->detached != 0)
		nvm_table_free_detached(p->detached);
	else if (nvm_table_drop(&p->key))
		nvm_redo_log_storage(XLNVM_STORAGE_DROP, &p->key, NULL);
	nvm_redo_storage_end();
}

/*
 * nvm_drop_schedule frees the storage of key when the current transaction
 * commits (at_commit) or rolls back (otherwise).
 */
void
nvm_drop_schedule(const NvmTableKey *key, bool at_commit)
{
	PendingDrop *p = MemoryContextAlloc(TopMemoryContext, sizeof(PendingDrop));

	p->key = *key;
	p->detached = 0;
	p->at_commit = at_commit;
	p->level = GetCurrentTransactionNestLevel();
	p->next = pending_drops;
	pending_drops = p;
}

/*
 * nvm_drop_schedule_detached frees the detached descriptor at desc when the
 * top-level transaction ends, whether it commits or rolls back.
 */
void
nvm_drop_schedule_detached(nvm_off desc)
{
	PendingDrop *p = MemoryContextAllocZero(TopMemoryContext, sizeof(PendingDrop));

	p->detached = desc;
	p->level = 1;
	p->next = pending_drops;
	pending_drops = p;
}

/*
 * nvm_drop_at_xact_end carries out the drops due at the end of the
 * top-level transaction (COMMIT, ABORT) and forgets the others.
 *
 * A transaction that was just prepared (PREPARE) only forgets its pending
 * drops: its outcome is decided later, by COMMIT or ROLLBACK PREPARED,
 * maybe in another session or after a restart, so none of them may run
 * now, nor at the end of this backend's next transaction.  The storage
 * that the prepared transaction's outcome makes unreachable stays behind,
 * as after a crash between PostgreSQL's commit and the free
 * (doc/limitations.md); a detached descriptor may hold the prepared transaction's
 * versions, which its resolution still writes into, so it stays too.
 * A parallel worker's transaction has no drops.
 */
void
nvm_drop_at_xact_end(XactEvent event)
{
	bool		commit = event == XACT_EVENT_COMMIT;
	bool		carry_out = commit || event == XACT_EVENT_ABORT;

	/* a copy whose WAL lacks the commit record must not meet the pool */
	if (commit && pending_drops != NULL)
		nvm_binding_note_flushed();
	while (pending_drops)
	{
		PendingDrop *p = pending_drops;

		pending_drops = p->next;
		if (carry_out && (p->at_commit == commit || p->detached != 0))
			drop_storage(p);
		pfree(p);
	}
}

/*
 * nvm_drop_at_subxact_end: when the current subtransaction rolls back
 * (SUBXACT_EVENT_ABORT_SUB), the storage it created goes now and the drops
 * it asked for are cancelled; when it commits, its parent inherits its
 * entries.  Detached descriptors wait for the top-level transaction's end.
 */
void
nvm_drop_at_subxact_end(SubXactEvent event)
{
	bool		commit = event == SUBXACT_EVENT_COMMIT_SUB;
	int			level = GetCurrentTransactionNestLevel();
	PendingDrop **link = &pending_drops;

	while (*link)
	{
		PendingDrop *p = *link;

		if (p->level < level || p->detached != 0)
		{
			link = &p->next;
			continue;
		}
		if (commit)
		{
			p->level = level - 1;
			link = &p->next;
			continue;
		}
		*link = p->next;
		if (!p->at_commit)
			drop_storage(p);
		pfree(p);
	}
}

/*
 * nvm_object_access notes the drop of an nvm table so that its storage is
 * freed when the dropping transaction commits.
 */
static void
nvm_object_access(ObjectAccessType access, Oid classId, Oid objectId,
				  int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);

	if (access == OAT_DROP && classId == RelationRelationId && subId == 0 &&
		nvm_relid_is_nvm(objectId))
	{
		Relation	rel = relation_open(objectId, NoLock);

		if (rel->rd_rel->relkind == RELKIND_RELATION ||
			rel->rd_rel->relkind == RELKIND_MATVIEW ||
			rel->rd_rel->relkind == RELKIND_TOASTVALUE)
		{
			NvmTableKey key;

			nvm_relation_key(rel, &rel->rd_locator, rel->rd_rel->relpersistence, &key);
			nvm_drop_schedule(&key, true);
		}
		relation_close(rel, NoLock);
	}
}

/*
 * nvm_drop_init installs the object access hook; called from _PG_init.
 */
void
nvm_drop_init(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = nvm_object_access;
}
