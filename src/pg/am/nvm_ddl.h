/*-------------------------------------------------------------------------
 *
 * nvm_ddl.h
 *	  Utility statements that need help with nvm tables (nvm_ddl.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_DDL_H
#define NVM_DDL_H

#include "nodes/plannodes.h"

extern PlannedStmt *nvm_ddl_utility(PlannedStmt *pstmt, bool *readOnlyTree);

#endif							/* NVM_DDL_H */
