/*-------------------------------------------------------------------------
 *
 * nvm_toast.c
 *	  TOAST for nvm tables: wide values are compressed and moved out of line
 *	  into a heap TOAST table, exactly as heap does.
 *
 * An nvm table gets a TOAST table whenever heap would give one to a table
 * of the same columns (nvm_relation_needs_toast_table asks heap), and that
 * TOAST table is an ordinary heap table.  A row image is toasted when heap
 * would toast it (it has external values, or it is wider than
 * TOAST_TUPLE_THRESHOLD): heap_toast_insert_or_update compresses values
 * inline (pg_column_compression, SET COMPRESSION and toast_tuple_target
 * behave as on heap) and moves values out of line until the row fits.
 * The stored version then holds TOAST pointers, which PostgreSQL's
 * detoasting follows on its own when a value is read.
 *
 * Out-of-line values are heap rows, WAL-logged and committed under the
 * writing transaction's PostgreSQL xid (saving one assigns it).  Such a
 * transaction commits its nvm versions through the in-doubt marker
 * (nvm_xact.c, prepare_commit), so after a crash a committed version never
 * points at values of a transaction PostgreSQL did not commit, and the
 * other way round.  Only rows wider than the threshold pay this; narrower
 * rows stay entirely in the pool, without WAL.
 *
 * A value that a row no longer needs is deleted, as heap_update and
 * heap_delete do, by the transaction that replaces or deletes the row, so
 * snapshots older than that transaction keep reading it until VACUUM of
 * the TOAST table removes it by PostgreSQL's xmin horizon.  Unlike heap,
 * which toasts only after it has locked the old tuple, an nvm write learns
 * whether it succeeded only when the core appends the version: so values
 * are saved before the write (nvm_toast_row), and the deletions wait until
 * its outcome is known (nvm_toast_forget): after a successful update the
 * old row's values that the new one does not carry on, after a failed one
 * the values saved for nothing.  A value that the new row carries on
 * unchanged keeps its TOAST pointer (it is not copied).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/tableam.h"
#include "access/toast_internals.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"

#include "row/nvm_toast.h"

/*
 * nvm_relation_needs_toast_table says whether the table needs a TOAST
 * table: when heap would give one to a table of the same columns.
 */
bool
nvm_relation_needs_toast_table(Relation rel)
{
	return GetHeapamTableAmRoutine()->relation_needs_toast_table(rel);
}

/*
 * nvm_relation_toast_am names the access method of nvm tables' TOAST
 * tables: heap.
 */
Oid
nvm_relation_toast_am(Relation rel)
{
	return HEAP_TABLE_AM_OID;
}

/*
 * same_external_value says whether attribute i holds, in both deformed
 * rows, the same value stored out of line (the same TOAST pointer).
 */
static bool
same_external_value(Form_pg_attribute att, Datum a, bool a_null, Datum b, bool b_null)
{
	struct varlena *va = (struct varlena *) DatumGetPointer(a);
	struct varlena *vb = (struct varlena *) DatumGetPointer(b);

	if (att->attlen != -1 || a_null || b_null)
		return false;
	if (!VARATT_IS_EXTERNAL_ONDISK(va) || !VARATT_IS_EXTERNAL_ONDISK(vb))
		return false;
	return VARSIZE_EXTERNAL(va) == VARSIZE_EXTERNAL(vb) &&
		memcmp(va, vb, VARSIZE_EXTERNAL(va)) == 0;
}

/*
 * carried_on_values returns a row with only those out-of-line values of
 * oldtup that newtup carries on unchanged (every other column null), or
 * NULL if there is none.  Given to heap_toast_insert_or_update as the old
 * row, it makes the toaster reuse those TOAST pointers and never plan to
 * delete anything: deletions are nvm_toast_forget's.
 */
static HeapTuple
carried_on_values(TupleDesc desc, HeapTuple oldtup, HeapTuple newtup)
{
	int			natts = desc->natts;
	Datum	   *old_values = palloc(natts * sizeof(Datum));
	bool	   *old_isnull = palloc(natts * sizeof(bool));
	Datum	   *new_values = palloc(natts * sizeof(Datum));
	bool	   *new_isnull = palloc(natts * sizeof(bool));
	bool		any = false;

	heap_deform_tuple(oldtup, desc, old_values, old_isnull);
	heap_deform_tuple(newtup, desc, new_values, new_isnull);
	for (int i = 0; i < natts; i++)
	{
		if (same_external_value(TupleDescAttr(desc, i), old_values[i], old_isnull[i],
								new_values[i], new_isnull[i]))
			any = true;
		else
		{
			old_values[i] = (Datum) 0;
			old_isnull[i] = true;
		}
	}
	return any ? heap_form_tuple(desc, old_values, old_isnull) : NULL;
}

/*
 * nvm_toast_row returns tuple toasted as heap_insert (oldtup NULL) or
 * heap_update (oldtup the version being replaced) would store it, or tuple
 * itself when heap would leave it alone.  Without a TOAST table values are
 * only compressed, and external values brought along from elsewhere (an
 * INSERT ... SELECT from a heap table) are fetched back inline.  Nothing is
 * deleted here (see the file header).
 */
HeapTuple
nvm_toast_row(Relation rel, HeapTuple tuple, HeapTuple oldtup)
{
	HeapTuple	reused = NULL;

	if (rel->rd_rel->relkind != RELKIND_RELATION &&
		rel->rd_rel->relkind != RELKIND_MATVIEW)
		return tuple;
	if (!HeapTupleHasExternal(tuple) && tuple->t_len <= TOAST_TUPLE_THRESHOLD)
		return tuple;
	if (oldtup != NULL && HeapTupleHasExternal(oldtup) && HeapTupleHasExternal(tuple))
		reused = carried_on_values(RelationGetDescr(rel), oldtup, tuple);
	return heap_toast_insert_or_update(rel, tuple, reused, 0);
}

/*
 * nvm_toast_forget deletes the out-of-line values of tuple that keep (NULL:
 * none) does not carry on unchanged.  Values saved by the current command
 * for a row that was never written (just_saved: a speculative insertion
 * that lost its race, an update that failed) are super-deleted, as heap
 * does for a speculative insertion: an ordinary delete would not see rows
 * of its own command.
 */
void
nvm_toast_forget(Relation rel, HeapTuple tuple, HeapTuple keep, bool just_saved)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			natts = desc->natts;
	Datum	   *values;
	bool	   *isnull;
	Datum	   *keep_values = NULL;
	bool	   *keep_isnull = NULL;

	if (!HeapTupleHasExternal(tuple) ||
		(rel->rd_rel->relkind != RELKIND_RELATION &&
		 rel->rd_rel->relkind != RELKIND_MATVIEW))
		return;

	values = palloc(natts * sizeof(Datum));
	isnull = palloc(natts * sizeof(bool));
	heap_deform_tuple(tuple, desc, values, isnull);
	if (keep != NULL && HeapTupleHasExternal(keep))
	{
		keep_values = palloc(natts * sizeof(Datum));
		keep_isnull = palloc(natts * sizeof(bool));
		heap_deform_tuple(keep, desc, keep_values, keep_isnull);
	}

	for (int i = 0; i < natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attlen != -1 || isnull[i] ||
			!VARATT_IS_EXTERNAL_ONDISK(DatumGetPointer(values[i])))
			continue;
		if (keep_values != NULL &&
			same_external_value(att, values[i], false, keep_values[i], keep_isnull[i]))
			continue;
		toast_delete_datum(rel, values[i], just_saved);
	}

	pfree(values);
	pfree(isnull);
	if (keep_values != NULL)
	{
		pfree(keep_values);
		pfree(keep_isnull);
	}
}
