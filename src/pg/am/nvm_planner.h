/*-------------------------------------------------------------------------
 *
 * nvm_planner.h
 *	  Planner hook that keeps index builds on nvm tables serial
 *	  (nvm_planner.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_PLANNER_H
#define NVM_PLANNER_H

/* Installs the planner hook; called from _PG_init. */
extern void nvm_planner_init(void);

#endif							/* NVM_PLANNER_H */
