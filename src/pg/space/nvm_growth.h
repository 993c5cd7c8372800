/*-------------------------------------------------------------------------
 *
 * nvm_growth.h
 *	  The pool's growth as the server sees it: its settings, its log lines,
 *	  the shared memory that grows with it, and the wording of the errors
 *	  of a pool that cannot grow.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_GROWTH_H
#define NVM_GROWTH_H

#include "pool.h"

extern void nvm_growth_define_settings(void);
extern void nvm_growth_pool_options(NvmPoolOptions *opts);
extern void nvm_growth_opened(void);
extern void *nvm_growth_core_area(void);
extern int	nvm_growth_errdetail(const char *what);

#endif							/* NVM_GROWTH_H */
