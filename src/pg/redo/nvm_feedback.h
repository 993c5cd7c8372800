/*-------------------------------------------------------------------------
 *
 * nvm_feedback.h
 *	  hot_standby_feedback for nvm tables: the primary's collection held
 *	  back for physical standbys' queries (nvm_feedback.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_FEEDBACK_H
#define NVM_FEEDBACK_H

extern void nvm_feedback_init(void);
extern Size nvm_feedback_shmem_size(void);
extern void nvm_feedback_shmem_request(void);
extern void nvm_feedback_shmem_startup(void);

#endif							/* NVM_FEEDBACK_H */
