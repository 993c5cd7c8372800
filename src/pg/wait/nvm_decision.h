/*-------------------------------------------------------------------------
 *
 * nvm_decision.h
 *	  Writers' decision words: a writer publishes, in its clock slot's word,
 *	  the record it is about to install a version of while it decides
 *	  whether to keep it (steps W2..W5 of the writer protocol), so that a
 *	  locker that meets the version waits for the decision rather than for
 *	  the writer's transaction (nvm_decision.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_DECISION_H
#define NVM_DECISION_H

#include "utils/rel.h"

extern Size nvm_decision_shmem_size(void);
extern void nvm_decision_shmem_startup(void);

/* Decision words of writers (steps W2, W5), and the wait for one */
extern void nvm_decision_set(int slot, Relation rel, uint64 record_no);
extern void nvm_decision_clear(void);
extern bool nvm_decision_wait(uint64 txid, Relation rel, uint64 record_no);

#endif							/* NVM_DECISION_H */
