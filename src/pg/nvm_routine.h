/*-------------------------------------------------------------------------
 *
 * nvm_routine.h
 *	  How a relation is known to use the nvm table access method
 *	  (nvm_routine.c), without the callback files that nvm_handler.c wires
 *	  into the routine.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_ROUTINE_H
#define NVM_ROUTINE_H

#include "access/tableam.h"
#include "executor/tuptable.h"
#include "utils/rel.h"

/*
 * nvm_slot_callbacks is the routine's slot_callbacks: rows are heap tuple
 * images that slots point at in place.  No other access method uses it.
 */
extern const TupleTableSlotOps *nvm_slot_callbacks(Relation rel);

/*
 * nvm_routine_is_nvm says whether routine (a relation's rd_tableam, or
 * NULL) is the nvm access method's.
 */
extern bool nvm_routine_is_nvm(const TableAmRoutine *routine);

#endif							/* NVM_ROUTINE_H */
