/*
 * ccstate.c
 *	  The concurrency-control state that every mode shares (ccstate.h): the
 *	  shared state's address in this process, the current mode's own part
 *	  of it, and the collection horizon's function.  They are defined here,
 *	  beside the mode interface (ccmode.h), so that the modes (mcsi.c,
 *	  n2db.c, pisces.c, pomvcc.c) read them without depending on txn.c,
 *	  which sets the first two (nvm_cc_attach, nvm_cc_layout), and gc.c,
 *	  which sets the third.
 */
#include "ccstate.h"

NvmCcShared *nvm_cc = NULL;
void	   *nvm_cc_state = NULL;
bool		(*nvm_cc_horizon_fn) (NvmHorizon *h) = NULL;
