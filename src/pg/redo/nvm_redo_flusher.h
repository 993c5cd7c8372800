/*-------------------------------------------------------------------------
 *
 * nvm_redo_flusher.h
 *	  The redo flusher: the WAL of nvm commits flushed at once while
 *	  standbys stream (nvm_redo_flusher.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_REDO_FLUSHER_H
#define NVM_REDO_FLUSHER_H

#include "access/xlogdefs.h"

extern void nvm_redo_flusher_define_settings(void);
extern void nvm_redo_flusher_register(void);
extern Size nvm_redo_flusher_shmem_size(void);
extern void nvm_redo_flusher_shmem_startup(void);
extern bool nvm_redo_flusher_request(XLogRecPtr end);

#endif							/* NVM_REDO_FLUSHER_H */
