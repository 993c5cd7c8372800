/*-------------------------------------------------------------------------
 *
 * nvmam.h
 *	  Module-wide declarations of the nvm table access method's PostgreSQL
 *	  layer: settings, the resolved pool path, and the access method.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVMAM_H
#define NVMAM_H

#include "access/tableam.h"

/* The pool file in use (nvm.pool_path, or its default), set in _PG_init. */
extern char *nvm_pool_path_resolved;

/* nvm.debug_crash_point: where a test makes the commit protocol crash. */
typedef enum NvmCrashPoint
{
	NVM_CRASH_NONE = 0,
	NVM_CRASH_AFTER_INDOUBT,
	NVM_CRASH_BEFORE_NVM_COMMIT,
	NVM_CRASH_AFTER_NVM_COMMIT
} NvmCrashPoint;

extern int	nvm_debug_crash_point;

/* The name of the nvm.concurrency_control setting in force. */
extern const char *nvm_concurrency_control_name(void);

/* The nvm table access method (nvm_handler.c). */
extern const TableAmRoutine *nvm_table_am_routine(void);

/* Planner hook that keeps index builds on nvm tables serial (nvm_planner.c). */
extern void nvm_planner_init(void);

#endif							/* NVMAM_H */
