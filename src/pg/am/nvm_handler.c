/*-------------------------------------------------------------------------
 *
 * nvm_handler.c
 *	  The nvm table access method: its TableAmRoutine and handler.
 *
 * This file only wires the callbacks, in the order of TableAmRoutine in
 * access/tableam.h, to the files that implement them (declared in
 * nvm_am.h, and nvm_toast.h for nvm_toast.c):
 *	 nvm_scan.c		sequential (also parallel and TID range), ANALYZE,
 *					bitmap and sample scans; TID helpers
 *	 nvm_fetch.c	fetching rows by index TID and by version TID
 *	 nvm_modify.c	inserts, updates, deletes, row locks
 *	 nvm_storage.c	storage life cycle and sizes
 *	 nvm_vacuum.c	VACUUM
 *	 nvm_index.c	index builds and index maintenance
 *	 nvm_toast.c	TOAST tables (heap tables)
 * except slot_callbacks, which is nvm_routine.c's (it is how the layer
 * recognises nvm relations), and the handler refuses to run without the
 * pool (nvm_relation.c).
 * Every callback that PostgreSQL requires is set (in a release build a
 * missing one is a crash, not an error), and so are the optional TID-range
 * scan callbacks: a TID range scan is a sequential scan whose version
 * numbers are bounded by the range (nvm_scan_set_tidrange).  Only
 * relation_fetch_toast_slice is left NULL: it is for tables that are TOAST
 * tables, which nvm tables never are (their TOAST tables use heap).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tableam.h"
#include "executor/tuptable.h"
#include "fmgr.h"

#include "am/nvm_am.h"
#include "nvm_routine.h"
#include "row/nvm_toast.h"
#include "space/nvm_relation.h"

PG_FUNCTION_INFO_V1(nvm_tableam_handler);

static const TableAmRoutine nvm_methods = {
	.type = T_TableAmRoutine,

	.slot_callbacks = nvm_slot_callbacks,

	.scan_begin = nvm_scan_begin,
	.scan_end = nvm_scan_end,
	.scan_rescan = nvm_scan_rescan,
	.scan_getnextslot = nvm_scan_getnextslot,

	.scan_set_tidrange = nvm_scan_set_tidrange,
	/* the range bounds the version numbers a sequential scan walks */
	.scan_getnextslot_tidrange = nvm_scan_getnextslot,

	.parallelscan_estimate = nvm_parallelscan_estimate,
	.parallelscan_initialize = nvm_parallelscan_initialize,
	.parallelscan_reinitialize = nvm_parallelscan_reinitialize,

	.index_fetch_begin = nvm_index_fetch_begin,
	.index_fetch_reset = nvm_index_fetch_reset,
	.index_fetch_end = nvm_index_fetch_end,
	.index_fetch_tuple = nvm_index_fetch_tuple,

	.tuple_fetch_row_version = nvm_tuple_fetch_row_version,
	.tuple_tid_valid = nvm_tuple_tid_valid,
	.tuple_get_latest_tid = nvm_tuple_get_latest_tid,
	.tuple_satisfies_snapshot = nvm_tuple_satisfies_snapshot,
	.index_delete_tuples = nvm_index_delete_tuples,

	.tuple_insert = nvm_tuple_insert,
	.tuple_insert_speculative = nvm_tuple_insert_speculative,
	.tuple_complete_speculative = nvm_tuple_complete_speculative,
	.multi_insert = nvm_multi_insert,
	.tuple_delete = nvm_tuple_delete,
	.tuple_update = nvm_tuple_update,
	.tuple_lock = nvm_tuple_lock,
	.finish_bulk_insert = nvm_finish_bulk_insert,

#if PG_VERSION_NUM >= 160000
	.relation_set_new_filelocator = nvm_relation_set_new_filelocator,
#else
	.relation_set_new_filenode = nvm_relation_set_new_filelocator,
#endif
	.relation_nontransactional_truncate = nvm_relation_nontransactional_truncate,
	.relation_copy_data = nvm_relation_copy_data,
	.relation_copy_for_cluster = nvm_relation_copy_for_cluster,
	.relation_vacuum = nvm_relation_vacuum,
	.scan_analyze_next_block = nvm_scan_analyze_next_block,
	.scan_analyze_next_tuple = nvm_scan_analyze_next_tuple,
	.index_build_range_scan = nvm_index_build_range_scan,
	.index_validate_scan = nvm_index_validate_scan,

	.relation_size = nvm_relation_size,
	.relation_needs_toast_table = nvm_relation_needs_toast_table,
	.relation_toast_am = nvm_relation_toast_am,
	.relation_fetch_toast_slice = NULL,

	.relation_estimate_size = nvm_relation_estimate_size,

#if PG_VERSION_NUM < 180000
	.scan_bitmap_next_block = nvm_scan_bitmap_next_block,
#endif
	.scan_bitmap_next_tuple = nvm_scan_bitmap_next_tuple,
	.scan_sample_next_block = nvm_scan_sample_next_block,
	.scan_sample_next_tuple = nvm_scan_sample_next_tuple
};

/*
 * nvm_tableam_handler returns the access method; it refuses to when the
 * pool is not mapped (the module was not preloaded), so that CREATE
 * EXTENSION and every use of an nvm table fail clearly.
 */
Datum
nvm_tableam_handler(PG_FUNCTION_ARGS)
{
	nvm_check_pool_mapped();
	PG_RETURN_POINTER(&nvm_methods);
}
