/*-------------------------------------------------------------------------
 *
 * nvm_ssi.h
 *	  Serializable isolation for nvm tables through PostgreSQL's predicate
 *	  locks (see nvm_ssi.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_SSI_H
#define NVM_SSI_H

#include "storage/itemptr.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"

#include "store.h"

extern bool nvm_ssi_needed(Relation rel, Snapshot snapshot);
extern void nvm_ssi_lock_relation(Relation rel, Snapshot snapshot);
extern void nvm_ssi_check_version(Relation rel, NvmVersion *v, Snapshot snapshot,
								  const NvmView *view);
extern void nvm_ssi_read_row(Relation rel, const NvmTable *t, uint64 record_no,
							 NvmVersion *read, Snapshot snapshot, const NvmView *view);
extern void nvm_ssi_write(Relation rel, ItemPointer otid);

#endif							/* NVM_SSI_H */
