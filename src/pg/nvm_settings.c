/*-------------------------------------------------------------------------
 *
 * nvm_settings.c
 *	  The module-wide nvm.* settings: their variables and definitions.
 *
 * A new setting goes here when module start reads it, when its assign hook
 * hands it to the core, or when more than one file reads it; a setting
 * that one module alone reads is that module's own (nvm_wait.c,
 * nvm_growth.c, nvm_durability.c define theirs).  An assign hook here calls
 * the core directly, never back into a file of this layer, so that a file
 * reading a setting depends on this file only.
 *
 * Those that shape the pool or shared memory need a server restart
 * (nvm.pool_path, nvm.pool_size, nvm.huge_pages, nvm.concurrency_control,
 * nvm.snapshot_buffering, and nvm_growth.c's nvm.pool_max_size);
 * nvm.emulated_drain_delay_ns and nvm_growth.c's nvm.pool_grow_step take
 * effect at a reload; nvm.prune_on_update and nvm.debug_crash_point can be
 * set by a superuser in any session, and nvm.pomvcc_update_interval,
 * nvm.commit_variant and nvm_wait.c's nvm.write_conflict by any user.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "utils/guc.h"

#include "gc.h"
#include "persist.h"
#include "pomvcc.h"
#include "pool.h"
#include "txn.h"

#include "nvm_settings.h"

/* Settings (see nvm_settings.h) */
char	   *nvm_pool_path = NULL;
int			nvm_pool_size_mb = 1024;
int			nvm_huge_pages = NVM_HUGE_PAGES_TRY;
int			nvm_concurrency_control = NVM_CC_MCSI;
int			nvm_snapshot_buffering = NVM_SNAPSHOT_JOIN;
bool		nvm_wal_redo = true;
int			nvm_debug_crash_point = NVM_CRASH_NONE;
static int	nvm_emulated_drain_delay_ns = 0;
static int	nvm_pomvcc_update_interval_ms = NVM_POMVCC_TICK_NS / 1000000;
static int	nvm_commit_variant = NVM_WRITES_CACHED;
static bool nvm_prune_on_update = true;

char	   *nvm_pool_path_resolved = NULL;

static const struct config_enum_entry nvm_snapshot_buffering_options[] = {
	{"join", NVM_SNAPSHOT_JOIN, false},
	{"paper", NVM_SNAPSHOT_PAPER, false},
	{"off", NVM_SNAPSHOT_LOCKED, false},
	{NULL, 0, false}
};

static const struct config_enum_entry nvm_commit_variant_options[] = {
	{"standard", NVM_WRITES_CACHED, false},
	{"dbxn", NVM_WRITES_NONTEMPORAL, false},
	{NULL, 0, false}
};

static const struct config_enum_entry nvm_huge_pages_options[] = {
	{"try", NVM_HUGE_PAGES_TRY, false},
	{"on", NVM_HUGE_PAGES_ON, false},
	{"off", NVM_HUGE_PAGES_OFF, false},
	{"true", NVM_HUGE_PAGES_ON, true},
	{"false", NVM_HUGE_PAGES_OFF, true},
	{"yes", NVM_HUGE_PAGES_ON, true},
	{"no", NVM_HUGE_PAGES_OFF, true},
	{"1", NVM_HUGE_PAGES_ON, true},
	{"0", NVM_HUGE_PAGES_OFF, true},
	{NULL, 0, false}
};

/* one entry a mode (ccmode.h), filled in by fill_cc_options, and the end */
static struct config_enum_entry nvm_cc_options[NVM_CC_END - NVM_CC_FIRST + 1];

/* fill_cc_options lists every mode of ccmode.h as a value of nvm.concurrency_control. */
static void
fill_cc_options(void)
{
	int			n = 0;

	for (uint32 m = NVM_CC_FIRST; m < NVM_CC_END; m++)
	{
		nvm_cc_options[n].name = nvm_cc_mode_name(m);
		nvm_cc_options[n].val = (int) m;
		nvm_cc_options[n].hidden = false;
		n++;
	}
	nvm_cc_options[n].name = NULL;
}

static const struct config_enum_entry nvm_crash_point_options[] = {
	{"none", NVM_CRASH_NONE, false},
	{"after_indoubt", NVM_CRASH_AFTER_INDOUBT, false},
	{"before_nvm_commit", NVM_CRASH_BEFORE_NVM_COMMIT, false},
	{"after_nvm_commit", NVM_CRASH_AFTER_NVM_COMMIT, false},
	{"replay_before_note", NVM_CRASH_REPLAY_BEFORE_NOTE, false},
	{"capture_after_cut", NVM_CRASH_CAPTURE_AFTER_CUT, false},
	{"capture_after_files", NVM_CRASH_CAPTURE_AFTER_FILES, false},
	{"capture_after_manifest", NVM_CRASH_CAPTURE_AFTER_MANIFEST, false},
	{"stop_before_capture", NVM_CRASH_STOP_BEFORE_CAPTURE, false},
	{"stop_after_capture", NVM_CRASH_STOP_AFTER_CAPTURE, false},
	{"recovery_end_after_capture", NVM_CRASH_RECOVERY_END_AFTER_CAPTURE, false},
	{"rebuild_mid_load", NVM_CRASH_REBUILD_MID_LOAD, false},
	{"merge_after_files", NVM_CRASH_MERGE_AFTER_FILES, false},
	{"merge_after_manifest", NVM_CRASH_MERGE_AFTER_MANIFEST, false},
	{NULL, 0, false}
};

static void nvm_assign_drain_delay(int newval, void *extra);
static void nvm_assign_pomvcc_interval(int newval, void *extra);
static void nvm_assign_commit_variant(int newval, void *extra);
static void nvm_assign_prune_on_update(bool newval, void *extra);

/*
 * nvm_define_settings defines the module-wide nvm.* settings, each with
 * the context it can be changed in (see the file header).
 */
void
nvm_define_settings(void)
{
	DefineCustomStringVariable("nvm.pool_path",
							   "Path of the persistent-memory pool file.",
							   "Empty means pg_nvm/pool in the data directory.  "
							   "The file is created, with nvm.pool_size bytes, if it does not exist, "
							   "and grows as the tables need.",
							   &nvm_pool_path,
							   "",
							   PGC_POSTMASTER,
							   0,
							   NULL, NULL, NULL);

	DefineCustomIntVariable("nvm.pool_size",
							"Initial size of a newly created persistent-memory pool.",
							"The pool then grows by nvm.pool_grow_step up to nvm.pool_max_size.",
							&nvm_pool_size_mb,
							1024,
							(int) (NVM_POOL_MIN_SIZE >> 20),
							INT_MAX,
							PGC_POSTMASTER,
							GUC_UNIT_MB,
							NULL, NULL, NULL);

	DefineCustomEnumVariable("nvm.huge_pages",
							 "Use huge pages for the mapping of the nvm pool.",
							 "try (default): where the file system and the kernel allow them; "
							 "on: refuse to start without them; off: small pages.",
							 &nvm_huge_pages,
							 NVM_HUGE_PAGES_TRY,
							 nvm_huge_pages_options,
							 PGC_POSTMASTER,
							 0,
							 NULL, NULL, NULL);

	fill_cc_options();
	DefineCustomEnumVariable("nvm.concurrency_control",
							 "Concurrency control of nvm tables.",
							 NULL,
							 &nvm_concurrency_control,
							 NVM_CC_MCSI,
							 nvm_cc_options,
							 PGC_POSTMASTER,
							 0,
							 NULL, NULL, NULL);

	DefineCustomEnumVariable("nvm.commit_variant",
							 "How the transactions of this session write the rows of new versions to the pool.",
							 "standard: stored through the cache, each line written back (CLWB) before "
							 "the fence that makes the version durable; dbxn: DBX-N's technique, "
							 "non-temporal stores of whole cache lines, the row padded to 64 bytes (256 "
							 "above 256), which need no write-back.  A transaction keeps the variant in "
							 "force at its first write.",
							 &nvm_commit_variant,
							 NVM_WRITES_CACHED,
							 nvm_commit_variant_options,
							 PGC_USERSET,
							 0,
							 NULL, nvm_assign_commit_variant, NULL);

	DefineCustomEnumVariable("nvm.debug_crash_point",
							 "Crashes the server at a point of the commit protocol or of replay (for tests).",
							 "after_indoubt: after the in-doubt marker, before PostgreSQL's commit "
							 "(or prepare) record; before_nvm_commit: after the commit record, before the nvm "
							 "status; after_nvm_commit: after the nvm status of a log-free commit, before its "
							 "WAL is flushed; replay_before_note: in the startup process, after the first nvm "
							 "commit replayed after an image of the pool, before the pool notes it applied; "
							 "capture_after_cut, capture_after_files, capture_after_manifest: in a "
							 "checkpoint's capture of the pool, after its cut, after its files, after its "
							 "manifest; stop_before_capture, stop_after_capture: at a clean stop, around "
							 "its last capture; recovery_end_after_capture: after the capture at the end "
							 "of recovery, before the end-of-recovery checkpoint; rebuild_mid_load: in "
							 "a rebuild, with half the checkpoint files loaded; merge_after_files, "
							 "merge_after_manifest: in a merge of checkpoint files, after the merged "
							 "files, after the manifest that names them.  "
							 "Never set it on a server that matters.",
							 &nvm_debug_crash_point,
							 NVM_CRASH_NONE,
							 nvm_crash_point_options,
							 PGC_SUSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);

	DefineCustomEnumVariable("nvm.snapshot_buffering",
							 "How MCSI serves a snapshot while another backend is generating one.",
							 "join (default): wait for a generation that began after the request, "
							 "so a transaction sees everything that committed before it; "
							 "paper: reuse the last buffered snapshot at once, as the MCSI paper "
							 "does (a session can then miss its own previous commit); "
							 "off: no buffering, every request scans.",
							 &nvm_snapshot_buffering,
							 NVM_SNAPSHOT_JOIN,
							 nvm_snapshot_buffering_options,
							 PGC_POSTMASTER,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("nvm.emulated_drain_delay_ns",
							"Emulated persistent-memory write latency, in nanoseconds.",
							"Each process busy-waits this long after every drain (fence) of "
							"the pool, to emulate slower media than DRAM.  0 (the default) "
							"adds nothing.  For benchmarks only.",
							&nvm_emulated_drain_delay_ns,
							0,
							0,
							1000000,
							PGC_SIGHUP,
							GUC_NOT_IN_SAMPLE,
							NULL, nvm_assign_drain_delay, NULL);

	DefineCustomIntVariable("nvm.pomvcc_update_interval",
							"How long after its last move a snapshot of this session moves POMVCC's shared commit timestamp.",
							"With nvm.concurrency_control = pomvcc, a commit becomes visible to "
							"other sessions once the shared commit timestamp has moved past it: at "
							"the next snapshot of its own session, at an abort, or at a snapshot "
							"some session takes this long after the last move.  0: every snapshot "
							"of this session moves it and contains every commit acknowledged "
							"before it; -1: this session's snapshots do not move it on time.",
							&nvm_pomvcc_update_interval_ms,
							NVM_POMVCC_TICK_NS / 1000000,
							-1,
							INT_MAX / 2,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, nvm_assign_pomvcc_interval, NULL);

	DefineCustomBoolVariable("nvm.wal_redo",
							 "Writes the changes of nvm tables to the WAL for physical standbys.",
							 "With wal_level replica or logical, each committed transaction's nvm rows, "
							 "and the creation and removal of nvm tables' storage, go into the WAL as "
							 "nvm redo records, which a standby made from a copy of the primary's data "
							 "directory and pool replays into its own pool.  Commits still wait for no "
							 "WAL flush.  Turn it off only on a cluster that never has a physical standby.",
							 &nvm_wal_redo,
							 true,
							 PGC_POSTMASTER,
							 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("nvm.prune_on_update",
							 "Prunes a row's old versions when the row is updated.",
							 "Every update frees the versions of its row that no running or "
							 "future snapshot can see.  VACUUM collects the rest.",
							 &nvm_prune_on_update,
							 true,
							 PGC_SUSET,
							 0,
							 NULL, nvm_assign_prune_on_update, NULL);
}

/*
 * nvm_assign_prune_on_update turns pruning by updates on or off in this
 * process; the horizon it uses is recomputed at most every 10 ms.
 */
static void
nvm_assign_prune_on_update(bool newval, void *extra)
{
	nvm_gc_set_auto_prune(newval, 10);
}

/*
 * nvm_assign_drain_delay hands nvm.emulated_drain_delay_ns to the core's
 * persist layer of this process.
 */
static void
nvm_assign_drain_delay(int newval, void *extra)
{
	nvm_persist_set_drain_delay_ns((uint64_t) newval);
}

/*
 * nvm_assign_commit_variant passes nvm.commit_variant to the persist
 * interface (persist.h).
 */
static void
nvm_assign_commit_variant(int newval, void *extra)
{
	nvm_persist_set_version_writes((NvmVersionWrites) newval);
}

/*
 * nvm_assign_pomvcc_interval passes nvm.pomvcc_update_interval to the
 * POMVCC mode (pomvcc.h).
 */
static void
nvm_assign_pomvcc_interval(int newval, void *extra)
{
	nvm_pomvcc_set_tick(newval < 0 ? NVM_POMVCC_TICK_NEVER : (int64_t) newval * 1000000);
}

/*
 * nvm_concurrency_control_name returns the name of the concurrency control
 * the pool runs in: the setting's, unless a pending prepared transaction
 * held its conversion back at start-up (the pool's own, then).
 */
const char *
nvm_concurrency_control_name(void)
{
	if (nvm_pool_header != NULL)
		return nvm_cc_mode_name(nvm_pool_header->cc_mode);
	return nvm_cc_mode_name((uint32) nvm_concurrency_control);
}

/*
 * nvm_crash_here stops the server with a PANIC where a test asked for a
 * crash (nvm.debug_crash_point = cp); where names the point in the message.
 */
void
nvm_crash_here(NvmCrashPoint cp, const char *where)
{
	if (nvm_debug_crash_point == cp)
		elog(PANIC, "nvm.debug_crash_point: crashing %s", where);
}
