/*-------------------------------------------------------------------------
 *
 * nvm_import.h
 *	  Imported snapshots and the nvm view (nvm_import.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_IMPORT_H
#define NVM_IMPORT_H

/* Called after SET TRANSACTION SNAPSHOT 'id' has imported snapshot id. */
extern void nvm_import_snapshot(const char *id);

#endif							/* NVM_IMPORT_H */
