/*-------------------------------------------------------------------------
 *
 * nvm_tuple.h
 *	  Stored tuple images of nvm versions, and tuple table slots over them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_TUPLE_H
#define NVM_TUPLE_H

#include "access/htup.h"
#include "executor/tuptable.h"
#include "utils/rel.h"

#include "store.h"

extern HeapTuple nvm_form_tuple(Relation rel, TupleTableSlot *slot, CommandId cid,
								 HeapTuple oldtup, TransactionId xmin);
extern void nvm_version_tuple(Relation rel, NvmVersion *v, HeapTuple tuple);
extern void nvm_store_version(Relation rel, NvmVersion *v, TupleTableSlot *slot);
extern void nvm_store_version_copy(Relation rel, NvmVersion *v, TupleTableSlot *slot,
								   TransactionId xmin);
extern void nvm_tuple_mark_speculative(HeapTuple tuple, uint32 token, TransactionId xid);
extern bool nvm_version_speculative(NvmVersion *v, uint32 *token, TransactionId *xid);
extern void nvm_version_end_speculative(NvmVersion *v);

#endif							/* NVM_TUPLE_H */
