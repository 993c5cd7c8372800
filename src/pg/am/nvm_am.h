/*-------------------------------------------------------------------------
 *
 * nvm_am.h
 *	  The callbacks of the nvm table access method, grouped by the file
 *	  that implements them (nvm_scan.c, nvm_fetch.c, nvm_modify.c,
 *	  nvm_storage.c, nvm_vacuum.c, nvm_index.c; nvm_toast.h declares
 *	  nvm_toast.c's, which the row images use too); nvm_handler.c wires
 *	  them into a TableAmRoutine.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_AM_H
#define NVM_AM_H

#include "access/relscan.h"
#include "access/tableam.h"
#include "executor/tuptable.h"
#include "nodes/execnodes.h"
#include "utils/rel.h"

#include "gc.h"

#include "nvm_compat.h"

/* nvm_scan.c: sequential, parallel, TID range, ANALYZE, bitmap, sample scans */
extern TableScanDesc nvm_scan_begin(Relation rel, Snapshot snapshot,
									int nkeys, struct ScanKeyData *key,
									ParallelTableScanDesc pscan, uint32 flags);
extern void nvm_scan_end(TableScanDesc sscan);
extern void nvm_scan_rescan(TableScanDesc sscan, struct ScanKeyData *key,
							bool set_params, bool allow_strat,
							bool allow_sync, bool allow_pagemode);
extern bool nvm_scan_getnextslot(TableScanDesc sscan, ScanDirection direction,
								 TupleTableSlot *slot);
extern void nvm_scan_set_tidrange(TableScanDesc sscan, ItemPointer mintid,
								  ItemPointer maxtid);
extern Size nvm_parallelscan_estimate(Relation rel);
extern Size nvm_parallelscan_initialize(Relation rel, ParallelTableScanDesc pscan);
extern void nvm_parallelscan_reinitialize(Relation rel, ParallelTableScanDesc pscan);
extern bool nvm_tuple_tid_valid(TableScanDesc sscan, ItemPointer tid);
extern void nvm_tuple_get_latest_tid(TableScanDesc sscan, ItemPointer tid);
#if PG_VERSION_NUM >= 170000
extern bool nvm_scan_analyze_next_block(TableScanDesc sscan, struct ReadStream *stream);
#else
extern bool nvm_scan_analyze_next_block(TableScanDesc sscan, BlockNumber blockno,
										BufferAccessStrategy bstrategy);
#endif
extern bool nvm_scan_analyze_next_tuple(TableScanDesc sscan, TransactionId OldestXmin,
										double *liverows, double *deadrows,
										TupleTableSlot *slot);
#if PG_VERSION_NUM >= 180000
extern bool nvm_scan_bitmap_next_tuple(TableScanDesc sscan, TupleTableSlot *slot,
									   bool *recheck, uint64 *lossy_pages,
									   uint64 *exact_pages);
#else
extern bool nvm_scan_bitmap_next_block(TableScanDesc sscan,
									   struct TBMIterateResult *tbmres);
extern bool nvm_scan_bitmap_next_tuple(TableScanDesc sscan,
									   struct TBMIterateResult *tbmres,
									   TupleTableSlot *slot);
#endif
extern bool nvm_scan_sample_next_block(TableScanDesc sscan,
									   struct SampleScanState *scanstate);
extern bool nvm_scan_sample_next_tuple(TableScanDesc sscan,
									   struct SampleScanState *scanstate,
									   TupleTableSlot *slot);

/* nvm_fetch.c: fetching rows by TID, through indexes and directly */
extern struct IndexFetchTableData *nvm_index_fetch_begin(Relation rel);
extern void nvm_index_fetch_reset(struct IndexFetchTableData *data);
extern void nvm_index_fetch_end(struct IndexFetchTableData *data);
extern bool nvm_index_fetch_tuple(struct IndexFetchTableData *data,
								  ItemPointer tid, Snapshot snapshot,
								  TupleTableSlot *slot,
								  bool *call_again, bool *all_dead);
extern bool nvm_tuple_fetch_row_version(Relation rel, ItemPointer tid,
										Snapshot snapshot, TupleTableSlot *slot);
extern bool nvm_tuple_satisfies_snapshot(Relation rel, TupleTableSlot *slot,
										 Snapshot snapshot);

/* nvm_modify.c: inserts, updates, deletes and row locks */
extern void nvm_tuple_insert(Relation rel, TupleTableSlot *slot, CommandId cid,
							 int options, struct BulkInsertStateData *bistate);
extern void nvm_tuple_insert_speculative(Relation rel, TupleTableSlot *slot,
										 CommandId cid, int options,
										 struct BulkInsertStateData *bistate,
										 uint32 specToken);
extern void nvm_tuple_complete_speculative(Relation rel, TupleTableSlot *slot,
										   uint32 specToken, bool succeeded);
extern void nvm_multi_insert(Relation rel, TupleTableSlot **slots, int nslots,
							 CommandId cid, int options,
							 struct BulkInsertStateData *bistate);
extern TM_Result nvm_tuple_delete(Relation rel, ItemPointer tid, CommandId cid,
								  Snapshot snapshot, Snapshot crosscheck,
								  bool wait, TM_FailureData *tmfd,
								  bool changingPart);
extern TM_Result nvm_tuple_update(Relation rel, ItemPointer otid,
								  TupleTableSlot *slot, CommandId cid,
								  Snapshot snapshot, Snapshot crosscheck,
								  bool wait, TM_FailureData *tmfd,
								  LockTupleMode *lockmode, NvmUpdateIndexes *update_indexes);
extern TM_Result nvm_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot,
								TupleTableSlot *slot, CommandId cid,
								LockTupleMode mode, LockWaitPolicy wait_policy,
								uint8 flags, TM_FailureData *tmfd);
extern void nvm_finish_bulk_insert(Relation rel, int options);

/* nvm_storage.c: storage life cycle and sizes */
extern void nvm_relation_set_new_filelocator(Relation rel, const RelFileLocator *newrnode,
											 char persistence,
											 TransactionId *freezeXid,
											 MultiXactId *minmulti);
extern void nvm_relation_nontransactional_truncate(Relation rel);
extern void nvm_relation_copy_data(Relation rel, const RelFileLocator *newrnode);
extern void nvm_relation_copy_for_cluster(Relation OldTable, Relation NewTable,
										  Relation OldIndex, bool use_sort,
										  TransactionId OldestXmin,
										  TransactionId *xid_cutoff,
										  MultiXactId *multi_cutoff,
										  double *num_tuples,
										  double *tups_vacuumed,
										  double *tups_recently_dead);
extern uint64 nvm_relation_size(Relation rel, ForkNumber forkNumber);
extern void nvm_relation_estimate_size(Relation rel, int32 *attr_widths,
									   BlockNumber *pages, double *tuples,
									   double *allvisfrac);

extern void nvm_storage_cover_version(Relation rel, uint64 version_no);

/* nvm_vacuum.c: VACUUM, and the horizon of garbage collection */
extern bool nvm_compute_horizon(NvmHorizon *h, int max_attempts);
extern void nvm_relation_vacuum(Relation rel, struct VacuumParams *params,
								BufferAccessStrategy bstrategy);

/* nvm_index.c: building and maintaining indexes */
extern TransactionId nvm_index_delete_tuples(Relation rel, TM_IndexDeleteOp *delstate);
extern double nvm_index_build_range_scan(Relation table_rel, Relation index_rel,
										 struct IndexInfo *index_info,
										 bool allow_sync, bool anyvisible,
										 bool progress, BlockNumber start_blockno,
										 BlockNumber numblocks,
										 IndexBuildCallback callback,
										 void *callback_state,
										 TableScanDesc scan);
extern void nvm_index_validate_scan(Relation table_rel, Relation index_rel,
									struct IndexInfo *index_info,
									Snapshot snapshot,
									struct ValidateIndexState *state);

#endif							/* NVM_AM_H */
