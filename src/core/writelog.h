/*
 * writelog.h
 *	  A clock slot's persistent write log read back: which of its entries
 *	  are valid, and the replay that inlines the final status of the slot's
 *	  last writing transaction into every version it logged.  The log is
 *	  written by txn.c (nvm_txn_begin_write, nvm_txn_log_version; the format
 *	  is in pool.h); it is read here by recovery (recover.c), by the
 *	  resolution of transactions in doubt (indoubt.c) and by the walks of
 *	  txn.c's nvm_txn_write_log_each.
 */
#ifndef NVM_WRITELOG_H
#define NVM_WRITELOG_H

#include "pool.h"

/*
 * nvm_writelog_valid_offset says whether off can be the offset of a
 * version inside the chunk area (write-log entries may be stale).
 */
extern bool nvm_writelog_valid_offset(nvm_off off);

/*
 * nvm_writelog_valid_pair says whether a write-log entry names an
 * allocated version of transaction txid in a valid table.
 */
extern bool nvm_writelog_valid_pair(const NvmWriteLogEntryPair *e, uint64_t txid);

/*
 * nvm_writelog_replay inlines the final status of the slot's last writing
 * transaction (COMMITTED or ABORTED, as status_of says for its txid: txn.h,
 * nvm_txn_final_status; asked only when the log has entries) into every
 * version it logged.
 * Stale entries of older transactions end the scan.  With reclaim
 * (start-up only, when nobody reads the chains), an aborted transaction's
 * versions are then unlinked from the head of their chains and freed,
 * newest first: its space comes back.
 */
extern void nvm_writelog_replay(NvmSlotPersist *sp, NvmTxnStatus (*status_of) (uint64_t txid),
								bool reclaim);

#endif							/* NVM_WRITELOG_H */
