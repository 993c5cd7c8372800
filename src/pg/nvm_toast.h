/*-------------------------------------------------------------------------
 *
 * nvm_toast.h
 *	  TOAST for nvm tables: toasting row images before a write, deleting
 *	  out-of-line values once a write's outcome is known.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_TOAST_H
#define NVM_TOAST_H

#include "access/htup.h"
#include "utils/rel.h"

extern HeapTuple nvm_toast_row(Relation rel, HeapTuple tuple, HeapTuple oldtup);
extern void nvm_toast_forget(Relation rel, HeapTuple tuple, HeapTuple keep,
							 bool just_saved);

#endif							/* NVM_TOAST_H */
