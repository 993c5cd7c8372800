/*-------------------------------------------------------------------------
 *
 * nvm_prepared_locks.c
 *	  The row locks of a prepared transaction (nvm_prepared_locks.h).  The
 *	  words themselves are nvm_lockword.c's and are taken by nvm_rowlock.c,
 *	  which remembers here every word it installs.
 *
 * Why the words need no durability.  Lockers of a server that crashed or
 * stopped are not running any more, so a word written by an earlier start
 * means nothing: its start number says so, and readers ignore it (an xid
 * of that start may even be handed out again, since lockers write no WAL).
 * The exception is a prepared transaction, whose locks PostgreSQL keeps
 * across restarts: before the prepare record is written (PRE_PREPARE),
 * every word naming the transaction is marked PREPARED and persisted,
 * along with the directory entries that lead to it (persist order: words
 * and their array's segment pointers flushed -> drain -> prepare record).
 * A PREPARED word is read whatever its start number; its xid was written
 * to WAL by the prepare record (and a MultiXactId's members by its own
 * record, which precedes it), so neither is handed out again.  A locker
 * that later adds itself to such a word keeps the mark, flushes the WAL of
 * the new MultiXactId before publishing it and persists the word.
 *
 * Bounded memory.  The list of rows a backend remembers for PREPARE is
 * capped (NVM_REMEMBERED_LOCKS); past the cap PREPARE scans the words of
 * the tables the transaction locked rows in.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/atomics.h"
#include "utils/memutils.h"

#include "persist.h"
#include "store.h"

#include "redo/nvm_redo.h"
#include "wait/nvm_lockword.h"
#include "wait/nvm_prepared_locks.h"

/* How many locked words a backend remembers for PREPARE TRANSACTION. */
#define NVM_REMEMBERED_LOCKS	4096

/* Words this transaction installed, for PREPARE TRANSACTION. */
typedef struct NvmLockedRow
{
	NvmTableDesc *desc;
	uint64		record_no;
} NvmLockedRow;

static NvmLockedRow *locked_rows = NULL;	/* NVM_REMEMBERED_LOCKS of them */
static int	nlocked_rows = 0;
static bool locked_rows_overflow = false;
static NvmTableDesc **locked_tables = NULL;
static int	nlocked_tables = 0;
static int	max_locked_tables = 0;

/*
 * nvm_prepared_locks_remember notes that this transaction installed a word for
 * record_no of table, for PREPARE TRANSACTION: the row (up to
 * NVM_REMEMBERED_LOCKS of them) and its table (always).
 */
void
nvm_prepared_locks_remember(const NvmTable *table, uint64 record_no)
{
	int			i;

	if (locked_rows == NULL)
		locked_rows = MemoryContextAlloc(TopMemoryContext,
										 NVM_REMEMBERED_LOCKS * sizeof(NvmLockedRow));
	if (nlocked_rows < NVM_REMEMBERED_LOCKS)
	{
		locked_rows[nlocked_rows].desc = table->desc;
		locked_rows[nlocked_rows].record_no = record_no;
		nlocked_rows++;
	}
	else
		locked_rows_overflow = true;
	for (i = 0; i < nlocked_tables; i++)
	{
		if (locked_tables[i] == table->desc)
			return;
	}
	if (nlocked_tables == max_locked_tables)
	{
		max_locked_tables = Max(8, max_locked_tables * 2);
		if (locked_tables == NULL)
			locked_tables = MemoryContextAlloc(TopMemoryContext,
											   max_locked_tables * sizeof(NvmTableDesc *));
		else
			locked_tables = repalloc(locked_tables,
									 max_locked_tables * sizeof(NvmTableDesc *));
	}
	locked_tables[nlocked_tables++] = table->desc;
}

/*
 * Words marked at PREPARE TRANSACTION, for the redo of standbys: pairs of
 * record number and word of one table at a time (prepared_words_table).
 */
static uint64 *prepared_words = NULL;
static uint32 nprepared_words = 0;
static uint32 max_prepared_words = 0;
static const NvmTableDesc *prepared_words_table = NULL;

/*
 * log_prepared_words writes the words gathered for the standbys' redo
 * (nvm_redo_log_lock_words) and starts an empty list.
 */
static void
log_prepared_words(void)
{
	if (nprepared_words > 0)
		nvm_redo_log_lock_words(&prepared_words_table->key, prepared_words, nprepared_words);
	nprepared_words = 0;
}

/*
 * note_prepared_word remembers, for the standbys' redo or a checkpoint's
 * in-doubt file, that record_no's word of table is word, which names a
 * prepared transaction.  Where neither is written (no redo, and no
 * in-doubt file being gathered: nvm_redo_log_lock_words says), the words
 * are dropped when logged.  The capture at the end of recovery gathers
 * its in-doubt file in the startup process, which writes no redo: the
 * words must reach its file all the same.
 */
static void
note_prepared_word(const NvmTable *table, uint64 record_no, uint64 word)
{
	if (prepared_words_table != table->desc || nprepared_words == max_prepared_words)
	{
		log_prepared_words();
		prepared_words_table = table->desc;
	}
	if (prepared_words == NULL)
	{
		max_prepared_words = NVM_REMEMBERED_LOCKS;
		prepared_words = MemoryContextAlloc(TopMemoryContext,
											2 * sizeof(uint64) * max_prepared_words);
	}
	prepared_words[2 * nprepared_words] = record_no;
	prepared_words[2 * nprepared_words + 1] = word;
	nprepared_words++;
}

/*
 * mark_prepared marks record_no's word PREPARED if it names this
 * transaction, and flushes it (with the array's segment pointer).  A word
 * that names it is noted for the standbys' redo even when another prepared
 * locker marked it already: the standby must have this locker too.
 */
static void
mark_prepared(const NvmTable *table, uint64 record_no)
{
	_Atomic uint64_t *w = nvm_record_lock_word(table, record_no, true);

	if (w == NULL)
		return;
	for (;;)
	{
		uint64		word = pg_atomic_read_u64(nvm_lockword_pg(w));
		NvmLockers	l;
		bool		mine;

		if (word == 0)
			return;
		nvm_lockword_read(word, &l);
		mine = nvm_lockword_own_mode(&l) >= 0;
		nvm_lockword_free(&l);
		if (!mine)
			return;
		if ((word & NVM_LW_PREPARED) ||
			pg_atomic_compare_exchange_u64(nvm_lockword_pg(w), &word, word | NVM_LW_PREPARED))
		{
			nvm_flush((void *) w, sizeof(uint64));
			note_prepared_word(table, record_no, word | NVM_LW_PREPARED);
			return;
		}
	}
}

/*
 * persist_prepared_locks marks every word this transaction installed
 * PREPARED and makes them durable, before the prepare record: the rows it
 * remembers, or, if it locked more than it remembers, every word of the
 * tables it locked rows in.  Then it logs the marked words for standbys
 * (LOCKS records, nvm_redofmt.h), also before the prepare record, so that
 * a standby promoted while the transaction is prepared holds its locks.
 */
static void
persist_prepared_locks(void)
{
	for (int i = 0; i < nlocked_tables; i++)
	{
		NvmTable	t = {locked_tables[i]};

		if (locked_rows_overflow)
		{
			uint64		limit = nvm_table_record_limit(&t);

			for (uint64 r = 1; r < limit; r++)
			{
				if (r % 4096 == 0)
					CHECK_FOR_INTERRUPTS();
				if (nvm_record_lock_word(&t, r, false) != NULL)
					mark_prepared(&t, r);
			}
		}
		nvm_flush(&t.desc->lock_words, sizeof(nvm_off));
	}
	if (!locked_rows_overflow)
	{
		for (int i = 0; i < nlocked_rows; i++)
		{
			NvmTable	t = {locked_rows[i].desc};

			mark_prepared(&t, locked_rows[i].record_no);
		}
	}
	nvm_drain();
	log_prepared_words();
}

/*
 * nvm_prepared_locks_log_table logs (LOCKS records) every word of table t
 * that a prepared transaction holds, as PREPARE TRANSACTION logged them:
 * the image of the pool for a base backup (checkpoint/nvm_backup.c) carries them,
 * so that a restored cluster holds the row locks of transactions still
 * prepared.  A word a COMMIT or ROLLBACK PREPARED releases meanwhile is
 * logged as it was; the restored cluster treats it as its primary would
 * after a restart.
 */
void
nvm_prepared_locks_log_table(const NvmTable *t)
{
	uint64		limit = nvm_table_record_limit(t);

	for (uint64 r = 1; r < limit; r++)
	{
		_Atomic uint64_t *w = nvm_record_lock_word(t, r, false);
		uint64		word;

		if (r % 4096 == 0)
			CHECK_FOR_INTERRUPTS();
		if (w == NULL)
			continue;
		word = atomic_load(w);
		if (word & NVM_LW_PREPARED)
			note_prepared_word(t, r, word);
	}
	log_prepared_words();
}

/*
 * nvm_prepared_locks_before_prepare persists the words of a transaction being
 * prepared (PRE_PREPARE comes before the prepare record); the transaction
 * end (nvm_xact_end.c) calls it.
 */
void
nvm_prepared_locks_before_prepare(void)
{
	if (nlocked_tables > 0)
		persist_prepared_locks();
}

/*
 * nvm_prepared_locks_forget forgets the words to mark at PREPARE, at the
 * end of a transaction (nvm_rowlock_at_xact_end).
 */
void
nvm_prepared_locks_forget(void)
{
	nlocked_rows = 0;
	nlocked_tables = 0;
	locked_rows_overflow = false;
	nprepared_words = 0;
	prepared_words_table = NULL;
}
