/*-------------------------------------------------------------------------
 *
 * nvm_routine.c
 *	  How a relation is known to use the nvm table access method.
 *
 * The routine itself (nvm_handler.c) names every callback, so whatever
 * compared a relation's rd_tableam with its address depended on every
 * callback file, and those depend on the code that recognises nvm
 * relations (nvm_relation.c).  The routine is recognised here instead by
 * one of its callbacks, slot_callbacks, which lives in this file and in
 * no other access method's routine; this file depends on nothing else of
 * the layer.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tableam.h"
#include "executor/tuptable.h"

#include "nvm_routine.h"

/*
 * nvm_slot_callbacks: rows are heap tuple images that slots point at in
 * place.
 */
const TupleTableSlotOps *
nvm_slot_callbacks(Relation rel)
{
	return &TTSOpsHeapTuple;
}

/*
 * nvm_routine_is_nvm says whether routine is the nvm access method's: NULL
 * (a relation without a table access method) is not.
 */
bool
nvm_routine_is_nvm(const TableAmRoutine *routine)
{
	return routine != NULL && routine->slot_callbacks == nvm_slot_callbacks;
}
