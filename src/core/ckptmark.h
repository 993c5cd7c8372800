/*
 * ckptmark.h
 *	  What an incremental checkpoint of the pool needs the pool to remember:
 *	  which records of each table changed since the checkpoint files last
 *	  captured them (change marks), and, per clock slot, the newest
 *	  transaction whose redo is known to be durable in the WAL.
 *
 * The PG layer keeps the pool's rows durable on ordinary storage through
 * its WAL and through checkpoint files (src/pg/checkpoint/): a checkpoint
 * writes, for each table, only the records that changed since the last
 * one.  The core keeps the marks that say which; it does not know what a
 * checkpoint or a WAL is.
 *
 * Change marks.  Each table has two bitmaps of record numbers (bit r % 64
 * of word r / 64 of a persistent array, segarray.h), one per parity of the
 * pool-wide checkpoint epoch (NvmPoolRoot.ckpt_epoch).  Whoever records a
 * change marks the record in the bitmap of the current epoch's parity
 * (nvm_ckpt_mark); the PG layer does it when it logs a commit's redo, and
 * when replay installs a version, while it keeps the epoch from moving (its
 * own lock).  A checkpoint advances the epoch at its cut (nvm_ckpt_epoch_
 * advance, under the exclusive side of that lock), reads the records marked
 * in either bitmap (nvm_ckpt_each_marked: those of the epoch that ended,
 * and any left in the other by a checkpoint that did not finish, or
 * made after the cut: reading those again costs a little and is never
 * wrong), and once what it wrote is durable drops the bitmap of the epoch
 * that ended (nvm_ckpt_drop_marks).  Nobody marks that bitmap any more
 * then: markers read the epoch under the lock the cut holds exclusively.
 *
 * Persist order.  A mark is stored and flushed; the marker's next drain
 * makes it durable.  Off persistent memory (where checkpoint files are
 * written) a crash of the server keeps every store; a crash of the
 * operating system makes the pool be rebuilt, and replay marks again what
 * it installs.  The epoch is stored and persisted (flush and drain) before
 * the cut's lock is released.  A bitmap's array is allocated zeroed and
 * drained before it is installed with a compare-and-swap (as row-lock
 * words are, store.h); dropping one clears the descriptor's word,
 * persisted, before the array is freed.
 *
 * Durable watermarks.  Per clock slot, the newest txid whose commit's redo
 * is known flushed to the WAL (nvm_slot_note_durable, raised only; the
 * array is allocated at the first note and named by NvmPoolRoot.durable_off).
 * A slot's transactions commit one after another, so every committed
 * transaction of the slot up to it has its redo in the WAL.  After a crash
 * of the server the PG layer logs again only what committed after it
 * (the "lost window"), instead of whole tables.  The watermark may lag
 * (a slot that went idle): what it leaves out is logged again, harmlessly.
 */
#ifndef NVM_CKPTMARK_H
#define NVM_CKPTMARK_H

#include "nvm_types.h"
#include "storefmt.h"

/* nvm_ckpt_epoch is the pool-wide checkpoint epoch (0 in a new pool). */
extern uint64_t nvm_ckpt_epoch(void);

/*
 * nvm_ckpt_epoch_advance moves the epoch on by one, persisted, and returns
 * the epoch that ended.  The caller keeps every marker out meanwhile.
 */
extern uint64_t nvm_ckpt_epoch_advance(void);

/*
 * nvm_ckpt_mark marks record_no of t as changed in the current epoch
 * (false: the pool had no room for the bitmap: the caller must capture the
 * whole table at the next checkpoint, see nvm_ckpt_mark_whole).  Nothing
 * is stored while t was asked, in the current epoch, to be read whole at
 * the next cut (nvm_ckpt_mark_whole): that read covers the change.
 */
extern bool nvm_ckpt_mark(NvmTable *t, uint64_t record_no);

/*
 * nvm_ckpt_mark_whole says that t changed in a way its records' marks do
 * not cover (its counters, or a bitmap that could not be made): its next
 * capture reads the whole table.  nvm_ckpt_wants_whole says whether that
 * was asked since the last nvm_ckpt_drop_marks.
 */
extern void nvm_ckpt_mark_whole(NvmTable *t);
extern bool nvm_ckpt_wants_whole(const NvmTable *t);

/* nvm_ckpt_has_marks says whether t has any record marked (either bitmap) or wants a whole capture. */
extern bool nvm_ckpt_has_marks(const NvmTable *t);

/*
 * nvm_ckpt_each_marked calls fn with every record number marked in either
 * of t's bitmaps, ascending, each once, and returns how many; fn returns
 * false to stop.
 */
typedef bool (*NvmCkptMarkVisitor) (uint64_t record_no, void *arg);
extern uint64_t nvm_ckpt_each_marked(const NvmTable *t, NvmCkptMarkVisitor fn, void *arg);

/*
 * nvm_ckpt_drop_marks drops t's bitmap of the ended epoch (and the whole
 * capture asked of it), once the capture that read it is durable.
 */
extern void nvm_ckpt_drop_marks(NvmTable *t, uint64_t ended_epoch);

/* nvm_ckpt_free_marks frees both bitmaps of a table whose storage is freed (store.c). */
extern void nvm_ckpt_free_marks(NvmTableDesc *desc);

/*
 * nvm_ckpt_boot_bound returns the highest clock value that a transaction
 * of slot may have been given before this start of the server (after the
 * core's recovery and any conversion of modes): every transaction of the
 * slot at or below it is final, and every later one is above it.
 */
extern uint64_t nvm_ckpt_boot_bound(uint32_t slot);

/* Durable watermarks (see the header comment). */
extern void nvm_slot_note_durable(uint32_t slot, uint64_t txid);
extern uint64_t nvm_slot_durable_txid(uint32_t slot);

#endif							/* NVM_CKPTMARK_H */
