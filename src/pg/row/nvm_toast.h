/*-------------------------------------------------------------------------
 *
 * nvm_toast.h
 *	  TOAST for nvm tables: the access method's TOAST callbacks, toasting
 *	  row images before a write, deleting out-of-line values once a write's
 *	  outcome is known.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_TOAST_H
#define NVM_TOAST_H

#include "access/htup.h"
#include "utils/rel.h"

/* The TOAST callbacks of the access method (nvm_handler.c wires them). */
extern bool nvm_relation_needs_toast_table(Relation rel);
extern Oid	nvm_relation_toast_am(Relation rel);

/* Row images (nvm_tuple.c, nvm_modify.c) */
extern HeapTuple nvm_toast_row(Relation rel, HeapTuple tuple, HeapTuple oldtup);
extern void nvm_toast_forget(Relation rel, HeapTuple tuple, HeapTuple keep,
							 bool just_saved);

#endif							/* NVM_TOAST_H */
