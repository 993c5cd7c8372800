/*-------------------------------------------------------------------------
 *
 * nvm_relation.h
 *	  Finding the pool storage (NvmTable) of a PostgreSQL relation.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_RELATION_H
#define NVM_RELATION_H

#include "utils/rel.h"

#include "store.h"

#include "nvm_compat.h"

extern void nvm_check_pool_mapped(void);
extern bool nvm_relid_is_nvm(Oid relid);
extern void nvm_relation_key(Relation rel, const RelFileLocator *rnode,
							 char persistence, NvmTableKey *key);
extern NvmTable nvm_relation_table(Relation rel);
extern NvmTable nvm_relation_table_for_size(Relation rel);
extern int32 nvm_relation_data_width(Relation rel, int32 *attr_widths);
extern bool nvm_relation_indexes_repairable(Relation rel);
extern NvmTable nvm_relation_create_storage(Relation rel, const RelFileLocator *rnode,
											char persistence, uint64 create_txid);
pg_noreturn extern void nvm_report_storage_full(Relation rel);
pg_noreturn extern void nvm_report_pool_full(Relation rel);
pg_noreturn extern void nvm_report_write_start_failed(void);

#endif							/* NVM_RELATION_H */
