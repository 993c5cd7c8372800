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
#include "lib/stringinfo.h"

#include "store.h"

extern void nvm_resync_run(void);
extern XLogRecPtr nvm_resync_log_rows(NvmTable *t, uint64 *total);
extern uint64 nvm_resync_each_row(NvmTable *t,
								  void (*visit) (uint64 record_no, const NvmVersion *v, void *arg),
								  void *arg);
extern void nvm_resync_append_row(StringInfo buf, uint64 record_no, const NvmVersion *v);

#endif							/* NVM_RESYNC_H */
