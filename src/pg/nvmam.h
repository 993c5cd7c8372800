/*-------------------------------------------------------------------------
 *
 * nvmam.h
 *	  Module-wide declarations of the nvm table access method's PostgreSQL
 *	  layer: the access method (settings are in nvm_settings.h).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVMAM_H
#define NVMAM_H

#include "access/tableam.h"

/* The nvm table access method (nvm_handler.c). */
extern const TableAmRoutine *nvm_table_am_routine(void);

/* Planner hook that keeps index builds on nvm tables serial (nvm_planner.c). */
extern void nvm_planner_init(void);

#endif							/* NVMAM_H */
