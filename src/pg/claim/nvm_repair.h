/*-------------------------------------------------------------------------
 *
 * nvm_repair.h
 *	  Re-inserting the index entries of nvm rows whose WAL a crash lost.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_REPAIR_H
#define NVM_REPAIR_H

#include "utils/rel.h"

#include "store.h"

extern void nvm_repair_table(Relation rel, const NvmTable *table);

#endif							/* NVM_REPAIR_H */
