/*-------------------------------------------------------------------------
 *
 * nvm_drop.h
 *	  Transactional freeing of dropped relfilenodes' pool space.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_DROP_H
#define NVM_DROP_H

#include "access/xact.h"

#include "store.h"

extern void nvm_drop_init(void);
extern void nvm_drop_schedule(const NvmTableKey *key, bool at_commit);
extern void nvm_drop_schedule_detached(nvm_off desc);
extern void nvm_drop_at_xact_end(XactEvent event);
extern void nvm_drop_at_subxact_end(SubXactEvent event);

#endif							/* NVM_DROP_H */
