/*-------------------------------------------------------------------------
 *
 * nvm_xact_end.h
 *	  Transaction end: the one owner of PostgreSQL's transaction and
 *	  subtransaction callbacks for nvmam, and the order of its parts.
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_XACT_END_H
#define NVM_XACT_END_H

extern void nvm_xact_end_init(void);

#endif							/* NVM_XACT_END_H */
