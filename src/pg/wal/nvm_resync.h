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

extern void nvm_resync_run(void);

#endif							/* NVM_RESYNC_H */
