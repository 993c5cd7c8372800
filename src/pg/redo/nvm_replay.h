/*-------------------------------------------------------------------------
 *
 * nvm_replay.h
 *	  A standby's replay of the nvm redo records into its own pool
 *	  (nvm_replay.c), called by the nvm resource manager (nvm_wal.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_REPLAY_H
#define NVM_REPLAY_H

#include "access/xlogreader.h"
#include "lib/stringinfo.h"

extern void nvm_replay(XLogReaderState *record);
extern void nvm_replay_end(void);
extern int	nvm_replay_resolve_indoubt(uint64 xid64);
extern void nvm_replay_desc(StringInfo buf, XLogReaderState *record);

extern bool nvm_replay_load_files_now(void);

#endif							/* NVM_REPLAY_H */
