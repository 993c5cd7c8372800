/*-------------------------------------------------------------------------
 *
 * nvm_token.c
 *	  xmin of nvm rows: a row-version token handed out to every
 *	  (sub)transaction that writes nvm rows.
 *
 * What xmin shows.  On heap, xmin is the xid of the (sub)transaction that
 * created the row version, and applications use it as a row version:
 * optimistic concurrency (UPDATE ... WHERE xmin = <the value read>, as
 * Npgsql / Entity Framework Core's UseXminAsConcurrencyToken does) relies
 * on it changing whenever another transaction writes the row.  Most nvm
 * writers have no PostgreSQL xid (nvm_xact.c assigns one only for index
 * entries, SERIALIZABLE and logical decoding), and one they have may not
 * be durable (a crash could hand it out again), so showing it is neither
 * always possible nor safe.  Instead
 * every (sub)transaction, at its first nvm write, gets a token, and every
 * version it writes carries that token as its xmin, in the stored image
 * (nvm_tuple.c): so xmin is the same for all rows one (sub)transaction
 * wrote, as on heap (the rows of two savepoints differ, the rows written
 * before and after a released savepoint agree), and differs for rows any
 * other (sub)transaction wrote.  A token comes round again only after
 * about 1.5 to 2 billion writing (sub)transactions, much as an xid does.
 *
 * Why tokens are safe where an xid is expected.  A token is a normal
 * 32-bit xid chosen, when it is handed out, among the xids PostgreSQL
 * treats as older than anything it still knows: below oldestClogXid (the
 * oldest commit-log entry kept) and at least 2^28 above the wraparound
 * edge (nextXid - 2^31).  So, like the xmin of a long-frozen heap row:
 *	 - age(xmin) is a positive number, at least the distance from the
 *	   oldest kept commit-log entry to the next xid;
 *	 - pg_xact_commit_timestamp(xmin) is NULL (older than the oldest
 *	   timestamp kept), or the usual error when track_commit_timestamp
 *	   is off;
 *	 - pg_xact_status / txid_status on xmin::text::bigint is NULL (older
 *	   than the commit log), or, while the cluster is in its first xid
 *	   epoch, the error "transaction ID ... is in the future" (the value
 *	   lies before xid 0 of epoch 0); never the status of an unrelated
 *	   transaction.
 * This holds for at least 2^28 xids after the token was handed out, and
 * then, as for a frozen heap row's xmin, until about 2^32 xids later.
 *
 * How tokens are handed out.  A shared counter walks down from
 * oldestClogXid - 1; when the next token would come within 2^28 of the
 * wraparound edge, it starts again below oldestClogXid.  Tokens come in
 * reservations of NVM_TOKEN_RESERVATION, numbered; before a version
 * carrying a token of reservation E is written, the descriptor of its
 * table records (E, the reservation's first token) in its token_mark
 * (store.h), flushed, so the version's drain makes it durable first.  At
 * start-up the highest mark over all tables tells where to go on: below
 * the last reservation used, so no token in any live table is handed out
 * again.  (A clone copies its original's mark.)  Tokens are cached per
 * nesting level and subtransaction, so a write costs one comparison and a
 * load of the descriptor's mark.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/memutils.h"

#include "persist.h"
#include "pool.h"
#include "store.h"

#include "nvm_compat.h"
#include "xact/nvm_token.h"

/* Tokens per reservation (one descriptor write per table and reservation). */
#define NVM_TOKEN_RESERVATION	65536

/* How far above the wraparound edge tokens stay, in xids. */
#define NVM_TOKEN_MARGIN		((uint32) 1 << 28)

typedef struct NvmTokenShared
{
	slock_t		mutex;
	uint32		epoch;			/* number of the current reservation */
	uint32		first;			/* its first token */
	uint32		next;			/* next token to hand out */
	uint32		left;			/* tokens left in it */
	bool		seeded;			/* next means something */
} NvmTokenShared;

static NvmTokenShared *token_shared = NULL;

/* This backend's tokens by nesting level: the subtransaction, its token. */
typedef struct NvmLevelToken
{
	SubTransactionId subid;
	TransactionId token;
	uint64		mark;			/* (epoch << 32) | first of its reservation */
} NvmLevelToken;

static NvmLevelToken *level_tokens = NULL;
static int	max_level_tokens = 0;

static void nvm_token_counter_init(void);

Size
nvm_token_shmem_size(void)
{
	return MAXALIGN(sizeof(NvmTokenShared));
}

/*
 * nvm_token_shmem_startup finds or creates the shared counter (from
 * nvmam.c's shmem_startup_hook, after the core has started: it reads the
 * table directory).  New shared memory goes on below the last reservation
 * any table records (the highest mark, reservation numbers compared modulo
 * 2^32).
 */
void
nvm_token_shmem_startup(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	token_shared = ShmemInitStruct("nvmam xmin tokens", nvm_token_shmem_size(), &found);
	if (!found)
		nvm_token_counter_init();
	LWLockRelease(AddinShmemInitLock);
}

/*
 * nvm_token_counter_init starts the counter of new shared memory below the
 * highest reservation mark of any table.
 */
static void
nvm_token_counter_init(void)
{
	NvmTableDirEntry *dir;
	size_t		n;
	bool		any = false;
	uint64		best = 0;

	SpinLockInit(&token_shared->mutex);
	dir = nvm_table_dir();
	n = nvm_table_dir_count();
	for (size_t i = 0; i < n; i++)
	{
		nvm_off		d = atomic_load(&dir[i].desc);
		NvmTableDesc *desc;
		uint64		mark;

		if (d == 0)
			continue;
		desc = nvm_ptr(d);
		if (desc->magic != NVM_TABLE_MAGIC)
			continue;
		mark = atomic_load(&desc->token_mark);
		if (mark == 0)
			continue;
		if (!any || (int32) ((uint32) (mark >> 32) - (uint32) (best >> 32)) > 0)
			best = mark;
		any = true;
	}
	token_shared->seeded = any;
	token_shared->epoch = (uint32) (best >> 32);
	token_shared->first = (uint32) best;
	token_shared->next = (uint32) best - NVM_TOKEN_RESERVATION;
	token_shared->left = 0;
}

/*
 * token_safe says whether t is a normal xid below oldest_clog and at least
 * NVM_TOKEN_MARGIN above the wraparound edge of next_xid.
 */
static inline bool
token_safe(TransactionId t, TransactionId oldest_clog, TransactionId next_xid)
{
	uint32		below_top = (uint32) (oldest_clog - 1 - t);
	uint32		width = (uint32) (oldest_clog - (next_xid - ((uint32) 1 << 31) + NVM_TOKEN_MARGIN));

	return TransactionIdIsNormal(t) && below_top < width;
}

/* step_down returns the normal xid below t (going round past 0). */
static inline TransactionId
step_down(TransactionId t)
{
	t--;
	while (!TransactionIdIsNormal(t))
		t--;
	return t;
}

/*
 * new_token hands out the next token, and the mark of its reservation.
 */
static TransactionId
new_token(uint64 *mark)
{
	TransactionId next_xid = ReadNextTransactionId();
	TransactionId oldest_clog = NVM_TRANSAM_VARIABLES->oldestClogXid;
	TransactionId t;

	SpinLockAcquire(&token_shared->mutex);
	if (token_shared->left == 0 || !token_shared->seeded ||
		!token_safe(token_shared->next, oldest_clog, next_xid))
	{
		/* a new reservation, going on below the last one if that is safe */
		TransactionId first = token_shared->next;

		if (!token_shared->seeded || !TransactionIdIsNormal(first) ||
			!token_safe(first, oldest_clog, next_xid) ||
			!token_safe(first - NVM_TOKEN_RESERVATION, oldest_clog, next_xid))
			first = step_down(oldest_clog);
		token_shared->epoch++;
		token_shared->first = first;
		token_shared->next = first;
		token_shared->left = NVM_TOKEN_RESERVATION;
		token_shared->seeded = true;
	}
	t = token_shared->next;
	token_shared->next = step_down(t);
	token_shared->left--;
	*mark = ((uint64) token_shared->epoch << 32) | token_shared->first;
	SpinLockRelease(&token_shared->mutex);
	return t;
}

/*
 * record_mark makes sure desc's token_mark is at least mark (reservations
 * compared modulo 2^32), flushed: the caller's drain before the version is
 * published makes it durable.
 */
static void
record_mark(NvmTableDesc *desc, uint64 mark)
{
	uint64		cur = atomic_load(&desc->token_mark);

	while (cur != mark &&
		   (cur == 0 || (int32) ((uint32) (mark >> 32) - (uint32) (cur >> 32)) > 0))
	{
		if (atomic_compare_exchange_weak(&desc->token_mark, &cur, mark))
		{
			nvm_flush(&desc->token_mark, sizeof(uint64));
			break;
		}
	}
}

/*
 * nvm_token_for_write returns the xmin token of the current
 * (sub)transaction for a version about to be written into the table of
 * desc, handing one out at the subtransaction's first write.
 */
TransactionId
nvm_token_for_write(NvmTableDesc *desc)
{
	int			level = GetCurrentTransactionNestLevel();
	SubTransactionId subid = GetCurrentSubTransactionId();
	NvmLevelToken *lt;

	if (level >= max_level_tokens)
	{
		int			n = Max(8, level * 2);

		if (level_tokens == NULL)
			level_tokens = MemoryContextAllocZero(TopMemoryContext, n * sizeof(NvmLevelToken));
		else
		{
			level_tokens = repalloc(level_tokens, n * sizeof(NvmLevelToken));
			memset(level_tokens + max_level_tokens, 0,
				   (n - max_level_tokens) * sizeof(NvmLevelToken));
		}
		max_level_tokens = n;
	}
	lt = &level_tokens[level];
	if (lt->subid != subid || !TransactionIdIsValid(lt->token))
	{
		lt->subid = subid;
		lt->token = new_token(&lt->mark);
	}
	if (atomic_load_explicit(&desc->token_mark, memory_order_relaxed) != lt->mark)
		record_mark(desc, lt->mark);
	return lt->token;
}

/*
 * nvm_token_at_xact_end forgets the transaction's tokens when it ends
 * (commit, abort, prepare; a parallel worker's): subtransaction ids start
 * again in the next transaction.  A backend that has written no nvm row
 * has none.
 */
void
nvm_token_at_xact_end(void)
{
	if (level_tokens != NULL)
		memset(level_tokens, 0, max_level_tokens * sizeof(NvmLevelToken));
}
