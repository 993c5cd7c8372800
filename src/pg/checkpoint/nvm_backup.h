/*-------------------------------------------------------------------------
 *
 * nvm_backup.h
 *	  Online base backups of nvm tables: the image of the pool logged at a
 *	  backup's start (nvm_backup.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_BACKUP_H
#define NVM_BACKUP_H

#include "access/xlogdefs.h"

#include "store.h"

extern void nvm_backup_register(void);
extern void nvm_backup_set_prepared_locks_logger(void (*logger) (const NvmTable *t));
extern void nvm_backup_log_image(const char *why, bool for_backup);
extern void nvm_backup_after_statement(void);

#endif							/* NVM_BACKUP_H */
