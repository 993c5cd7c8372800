/*-------------------------------------------------------------------------
 *
 * nvm_resync.h
 *	  After a crash of the primary, the rows of the tables that may have
 *	  lost redo are logged again (nvm_resync.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_RESYNC_H
#define NVM_RESYNC_H

#include "access/xlogdefs.h"

#include "store.h"

extern void nvm_resync_run(void);
extern XLogRecPtr nvm_resync_log_rows(NvmTable *t, uint64 *total);

#endif							/* NVM_RESYNC_H */
