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

/*
 * nvm_repair_at_start repairs every table of the repair list, one worker
 * per database, before the resync after a crash (nvm_repair.c's header).
 */
extern void nvm_repair_at_start(void);

#endif							/* NVM_REPAIR_H */
