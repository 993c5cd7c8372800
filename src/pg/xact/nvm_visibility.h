/*-------------------------------------------------------------------------
 *
 * nvm_visibility.h
 *	  Which version of an nvm row a PostgreSQL snapshot sees, by TID.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_VISIBILITY_H
#define NVM_VISIBILITY_H

#include "utils/snapshot.h"

#include "store.h"

extern void nvm_view_init(NvmView *view, Snapshot snapshot, const NvmSnapshot *snap);
extern bool nvm_version_by_other_running(NvmVersion *v, uint64 my_txid);
extern NvmVersion *nvm_prev_live(NvmVersion *v);
extern NvmVersion *nvm_fetch_root(const NvmTable *t, uint64 root, Snapshot snapshot,
								  const NvmView *view);
extern bool nvm_version_visible(const NvmTable *t, NvmVersion *v, Snapshot snapshot,
								const NvmView *view);

#endif							/* NVM_VISIBILITY_H */
