/*-------------------------------------------------------------------------
 *
 * nvm_compat.h
 *	  The differences between the PostgreSQL versions nvmam builds against
 *	  (15 and 18 tested, 17 compiled), in one place.  The layer is written
 *	  against PostgreSQL 18's names; on an older version this header maps
 *	  them onto that version's.  What cannot be a name (a callback whose
 *	  arguments changed) is a guarded block beside the code, testing
 *	  PG_VERSION_NUM, and is listed here.
 *
 *	  Names mapped here:
 *	  - 16: RelFileNode became RelFileLocator (its fields spcOid, dbOid,
 *	    relNumber; Relation's rd_locator); xl_seq_rec's node became locator;
 *	    ReorderBufferChange's relnode became rlocator;
 *	  - 17: BackendId became ProcNumber, which is also the PGPROC's index
 *	    (pgprocno is gone, the vxid's backend is vxid.procNumber, the
 *	    PGPROC's local transaction id is vxid.lxid); ShmemVariableCache
 *	    became TransamVariables;
 *	  - 18: HandleStartupProcInterrupts became
 *	    ProcessStartupProcInterrupts; pg_attribute_noreturn() became
 *	    pg_noreturn (before the
 *	    declaration); INT64_MODIFIER is gone (PRIx64 from <inttypes.h>).
 *
 *	  Guarded blocks elsewhere (grep PG_VERSION_NUM):
 *	  - 16: relation_set_new_filenode/_filelocator (am/nvm_handler.c);
 *	    the permissions of a range-table entry (xact/nvm_xact.c);
 *	    getIdentitySequence takes the relation from 17 (xact/nvm_commit.c);
 *	  - 17: scan_analyze_next_block takes its blocks from a read stream
 *	    (am/nvm_scan.c);
 *	  - 18: scan_bitmap_next_block is gone and scan_bitmap_next_tuple
 *	    iterates the bitmap itself (am/nvm_scan.c); a parallel scan names
 *	    its relation by locator (am/nvm_scan.c).
 *
 *	  Include it after postgres.h and the PostgreSQL headers a file needs.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_COMPAT_H
#define NVM_COMPAT_H

#include <inttypes.h>

#include "access/tableam.h"

#if PG_VERSION_NUM >= 160000
#include "storage/relfilelocator.h"
#else
#include "storage/relfilenode.h"
#endif
#if PG_VERSION_NUM >= 170000
#include "storage/procnumber.h"
#else
#include "storage/backendid.h"
#endif

#if PG_VERSION_NUM < 150000 || PG_VERSION_NUM >= 190000
#error "nvmam builds against PostgreSQL 15 to 18"
#endif

/* ---- 16: a relation's files are named by a RelFileLocator ---- */
#if PG_VERSION_NUM < 160000
typedef RelFileNode RelFileLocator;
#define RelFileLocatorEquals(a, b)	RelFileNodeEquals(a, b)
#define rd_locator	rd_node
#define spcOid		spcNode
#define dbOid		dbNode
#define relNumber	relNode
/* xl_seq_rec (commands/sequence.h) and ReorderBufferChange's tuple change */
#define NVM_SEQ_REC_LOCATOR(rec)	((rec).node)
#define NVM_CHANGE_LOCATOR(change)	((change)->data.tp.relnode)
#else
#define NVM_SEQ_REC_LOCATOR(rec)	((rec).locator)
#define NVM_CHANGE_LOCATOR(change)	((change)->data.tp.rlocator)
#endif

/* ---- 16: tuple_update says which indexes need the new version ---- */
#if PG_VERSION_NUM >= 160000
typedef TU_UpdateIndexes NvmUpdateIndexes;
/* a changed indexed column puts the version into every index */
#define NVM_SET_UPDATE_INDEXES(p, b)	(*(p) = (b) ? TU_All : TU_None)
#else
typedef bool NvmUpdateIndexes;
#define NVM_SET_UPDATE_INDEXES(p, b)	(*(p) = (b))
#endif

/* ---- 16: other calls whose arguments changed ---- */
#if PG_VERSION_NUM >= 160000
/* tuplesort_getdatum's copy argument (16) */
#define NVM_TUPLESORT_GETDATUM(state, forward, val, isnull, abbrev) \
	tuplesort_getdatum(state, forward, false, val, isnull, abbrev)
/* the columns of any index: those that block HOT and the summarized (16) */
#define NVM_INDEX_ATTR_BITMAP_ALL(rel) \
	bms_union(RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_HOT_BLOCKING), \
			  RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_SUMMARIZED))
#define NVM_COUNT_HEAP_UPDATE(rel, hot)	pgstat_count_heap_update(rel, hot, false)
#define NVM_HEAP_KEY_TEST(tuple, desc, nkeys, keys) \
	HeapKeyTest(tuple, desc, nkeys, keys)
#define NVM_TABLE_STATUS_RELID(status)	((status)->id)
/* a btree descent to read; the heap relation serves only writers (16) */
#define NVM_BT_SEARCH_READ(irel, key, bufp)	_bt_search(irel, NULL, key, bufp, BT_READ)
#define RelidByRelfilenode(spc, rel)	RelidByRelfilenumber(spc, rel)
#else
#define NVM_TUPLESORT_GETDATUM(state, forward, val, isnull, abbrev) \
	tuplesort_getdatum(state, forward, val, isnull, abbrev)
#define NVM_INDEX_ATTR_BITMAP_ALL(rel) \
	RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_ALL)
#define NVM_COUNT_HEAP_UPDATE(rel, hot)	pgstat_count_heap_update(rel, hot)
/* HeapKeyTest is a macro with a result argument before 16 */
#define NVM_HEAP_KEY_TEST(tuple, desc, nkeys, keys) \
	({ bool nvm_key_test_result_; \
	   HeapKeyTest(tuple, desc, nkeys, keys, nvm_key_test_result_); \
	   nvm_key_test_result_; })
#define NVM_TABLE_STATUS_RELID(status)	((status)->t_id)
#define NVM_BT_SEARCH_READ(irel, key, bufp)	_bt_search(irel, key, bufp, BT_READ, NULL)
#endif

/* ---- 18: calls that gained an argument ---- */
#if PG_VERSION_NUM >= 180000
/* index_beginscan's instrumentation (none here) */
#define NVM_INDEX_BEGINSCAN(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan(heap, index, snapshot, NULL, nkeys, norderbys)
/* a conditional wait logs its failure as log_lock_failures says */
#define NVM_CONDITIONAL_XACT_LOCK_TABLE_WAIT(xid) \
	ConditionalXactLockTableWait(xid, log_lock_failures)
#define NVM_PAGE_IS_VERIFIED(page, blkno) \
	PageIsVerified((PageData *) (page), blkno, 0, NULL)
#else
#define NVM_INDEX_BEGINSCAN(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan(heap, index, snapshot, nkeys, norderbys)
#define NVM_CONDITIONAL_XACT_LOCK_TABLE_WAIT(xid) ConditionalXactLockTableWait(xid)
#define NVM_PAGE_IS_VERIFIED(page, blkno) PageIsVerifiedExtended(page, blkno, 0)
#endif
#if PG_VERSION_NUM >= 180000
/* pages all frozen beside pages all visible; the vacuum's start time */
#define NVM_VAC_UPDATE_RELSTATS(rel, pages, tuples, allvisible, allfrozen, hasindex, frozenxid, minmulti) \
	vac_update_relstats(rel, pages, tuples, allvisible, allfrozen, hasindex, \
						frozenxid, minmulti, NULL, NULL, false)
#define NVM_REPORT_VACUUM(relid, shared, live, dead, starttime) \
	pgstat_report_vacuum(relid, shared, live, dead, starttime)
#else
#define NVM_VAC_UPDATE_RELSTATS(rel, pages, tuples, allvisible, allfrozen, hasindex, frozenxid, minmulti) \
	vac_update_relstats(rel, pages, tuples, allvisible, hasindex, \
						frozenxid, minmulti, NULL, NULL, false)
#define NVM_REPORT_VACUUM(relid, shared, live, dead, starttime) \
	pgstat_report_vacuum(relid, shared, live, dead)
#endif
#if PG_VERSION_NUM >= 170000
/* VACUUM's progress counts the dead items' memory, and dead item ids (17) */
#define NVM_PROGRESS_VACUUM_MAX_DEAD		PROGRESS_VACUUM_MAX_DEAD_TUPLE_BYTES
#define NVM_PROGRESS_VACUUM_MAX_DEAD_VALUE(n)	((int64) (n) * (int64) sizeof(uint64))
#define NVM_PROGRESS_VACUUM_NUM_DEAD		PROGRESS_VACUUM_NUM_DEAD_ITEM_IDS
#else
#define NVM_PROGRESS_VACUUM_MAX_DEAD		PROGRESS_VACUUM_MAX_DEAD_TUPLES
#define NVM_PROGRESS_VACUUM_MAX_DEAD_VALUE(n)	((int64) (n))
#define NVM_PROGRESS_VACUUM_NUM_DEAD		PROGRESS_VACUUM_NUM_DEAD_TUPLES
#endif
#if PG_VERSION_NUM >= 160000
/* the local copy of the i-th backend's status, 1 to numbackends */
#define NVM_LOCAL_BEENTRY(i)	pgstat_get_local_beentry_by_index(i)
#else
#define NVM_LOCAL_BEENTRY(i)	pgstat_fetch_stat_local_beentry(i)
#endif

/* ---- 17: the reorder buffer's tuples are HeapTuples ---- */
#if PG_VERSION_NUM >= 180000
typedef HeapTuple NvmDecodedTuple;
#define NVM_DECODED_TUPLE(t)				(t)
#define NVM_ALLOC_DECODED_TUPLE(rb, len)	ReorderBufferAllocTupleBuf(rb, len)
#define NVM_ALLOC_CHANGE(rb)				ReorderBufferAllocChange(rb)
#elif PG_VERSION_NUM >= 170000
typedef HeapTuple NvmDecodedTuple;
#define NVM_DECODED_TUPLE(t)				(t)
#define NVM_ALLOC_DECODED_TUPLE(rb, len)	ReorderBufferGetTupleBuf(rb, len)
#define NVM_ALLOC_CHANGE(rb)				ReorderBufferGetChange(rb)
#else
typedef struct ReorderBufferTupleBuf *NvmDecodedTuple;
#define NVM_DECODED_TUPLE(t)				(&(t)->tuple)
#define NVM_ALLOC_DECODED_TUPLE(rb, len)	ReorderBufferGetTupleBuf(rb, len)
#define NVM_ALLOC_CHANGE(rb)				ReorderBufferGetChange(rb)
#endif

/* ---- 17: backends are numbered by their PGPROC (ProcNumber) ---- */
#if PG_VERSION_NUM >= 170000
typedef ProcNumber NvmBackendNumber;
#define NVM_MY_BACKEND_NUMBER		MyProcNumber
#define NVM_INVALID_BACKEND_NUMBER	INVALID_PROC_NUMBER
/* a regular backend's number is below MaxBackends, from 0 */
#define NVM_FIRST_BACKEND_NUMBER	0
#define NVM_PROC_NUMBER(proc)		GetNumberFromPGProc(proc)
#define NVM_PROC_BACKEND(proc)		((proc)->vxid.procNumber)
#define NVM_PROC_LXID(proc)			((proc)->vxid.lxid)
#define NVM_VXID_BACKEND(vxid)		((vxid).procNumber)
#define NVM_TRANSAM_VARIABLES		TransamVariables
#else
typedef BackendId NvmBackendNumber;
#define NVM_MY_BACKEND_NUMBER		MyBackendId
#define NVM_INVALID_BACKEND_NUMBER	InvalidBackendId
/* a backend id runs from 1 to MaxBackends */
#define NVM_FIRST_BACKEND_NUMBER	1
#define NVM_PROC_NUMBER(proc)		((proc)->pgprocno)
#define NVM_PROC_BACKEND(proc)		((proc)->backendId)
#define NVM_PROC_LXID(proc)			((proc)->lxid)
#define NVM_VXID_BACKEND(vxid)		((vxid).backendId)
#define NVM_TRANSAM_VARIABLES		ShmemVariableCache
#endif

/* the highest backend number a regular backend can have */
#define NVM_LAST_BACKEND_NUMBER		(NVM_FIRST_BACKEND_NUMBER + MaxBackends - 1)

/* ---- 18: renamed calls ---- */
#if PG_VERSION_NUM < 180000
#define ProcessStartupProcInterrupts()	HandleStartupProcInterrupts()
#endif

/* ---- 18: noreturn before the declaration ---- */
#ifndef pg_noreturn
#define pg_noreturn _Noreturn
#endif

#endif							/* NVM_COMPAT_H */
