/*-------------------------------------------------------------------------
 *
 * nvm_index.h
 *	  Index support of nvm tables beyond the table-AM callbacks.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_INDEX_H
#define NVM_INDEX_H

#include "nodes/nodes.h"

extern void nvm_check_utility(Node *stmt);

#endif							/* NVM_INDEX_H */
