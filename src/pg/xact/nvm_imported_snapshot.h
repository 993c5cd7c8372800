/*-------------------------------------------------------------------------
 *
 * nvm_imported_snapshot.h
 *	  Reading nvm tables with a PostgreSQL snapshot that another process
 *	  took (a replication slot's, an imported one).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_IMPORTED_SNAPSHOT_H
#define NVM_IMPORTED_SNAPSHOT_H

#include "utils/snapshot.h"

#include "store.h"

extern void nvm_imported_snapshot_init(void);
extern void nvm_imported_snapshot_at_xact_end(void);
extern bool nvm_imported_snapshot_follow(void);
extern bool nvm_imported_snapshot_applies(void);
extern void nvm_imported_snapshot_view(NvmView *view, Snapshot snapshot);

#endif							/* NVM_IMPORTED_SNAPSHOT_H */
