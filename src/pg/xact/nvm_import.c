/*-------------------------------------------------------------------------
 *
 * nvm_import.c
 *	  Snapshots imported with SET TRANSACTION SNAPSHOT read nvm tables as
 *	  their exporter does.
 *
 * PostgreSQL's snapshot of a transaction says nothing about nvm rows, whose
 * view is the MCSI vector (nvm_xact.c).  A transaction that imports
 * another's snapshot (pg_dump --jobs: every worker imports the leader's)
 * must see the exporter's nvm rows too, or a parallel dump would read each
 * nvm table at another moment.  PostgreSQL writes the exported snapshot to
 * pg_snapshots/<id> with the exporter's virtual transaction id, pid and
 * isolation level, and checks at import that the exporter still runs.
 * After that check, the importer adopts the vector the exporter pinned for
 * garbage collection, which is its transaction snapshot when it runs
 * REPEATABLE READ or SERIALIZABLE, and checks again that the exporter's
 * transaction kept running while the vector was copied.  A snapshot
 * exported by a READ COMMITTED transaction (whose pinned vector is older
 * than the exported snapshot) or by a process that never took an nvm
 * snapshot is refused at the first read of an nvm table, with a hint.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "storage/fd.h"
#include "storage/proc.h"
#include "storage/procarray.h"

#include "nvm_compat.h"
#include "xact/nvm_import.h"
#include "xact/nvm_snapshot.h"

/* The exporter named in a pg_snapshots file. */
typedef struct Exporter
{
	int			pid;
	NvmBackendNumber	backend;
	LocalTransactionId lxid;
	int			iso;
	PGPROC	   *proc;
} Exporter;

/*
 * read_exporter reads the exporter's virtual transaction id, pid and
 * isolation level from pg_snapshots/<id>; false if the file cannot be
 * read (PostgreSQL has just read it, so this is not expected).
 */
static bool
read_exporter(const char *id, Exporter *ex)
{
	char		path[MAXPGPATH];
	char		line[256];
	FILE	   *f;
	int			found = 0;

	memset(ex, 0, sizeof(*ex));
	ex->iso = -1;
	if (strspn(id, "0123456789ABCDEF-") != strlen(id))
		return false;
	snprintf(path, sizeof(path), "pg_snapshots/%s", id);
	f = AllocateFile(path, PG_BINARY_R);
	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL)
	{
		if (sscanf(line, "vxid:%d/%u", &ex->backend, &ex->lxid) == 2)
			found |= 1;
		else if (sscanf(line, "pid:%d", &ex->pid) == 1)
			found |= 2;
		else if (sscanf(line, "iso:%d", &ex->iso) == 1)
			found |= 4;
	}
	FreeFile(f);
	return found == 7;
}

/* exporter_still_runs says whether the exporter's transaction still runs. */
static bool
exporter_still_runs(void *arg)
{
	Exporter   *ex = (Exporter *) arg;

	pg_read_barrier();
	return NVM_PROC_BACKEND(ex->proc) == ex->backend && NVM_PROC_LXID(ex->proc) == ex->lxid;
}

/*
 * nvm_import_snapshot gives the current transaction the nvm view of the
 * transaction that exported snapshot id, which SET TRANSACTION SNAPSHOT has
 * just imported (see the file header).
 */
void
nvm_import_snapshot(const char *id)
{
	Exporter	ex;

	if (!read_exporter(id, &ex))
	{
		nvm_xact_adopt_snapshot(-1, NULL, NULL,
								"The exported snapshot's file could not be read.");
		return;
	}
	if (ex.iso < XACT_REPEATABLE_READ)
	{
		nvm_xact_adopt_snapshot(-1, NULL, NULL,
								"The snapshot was exported by a READ COMMITTED transaction, whose nvm view is not kept.");
		return;
	}
	ex.proc = BackendPidGetProc(ex.pid);
	if (ex.proc == NULL || !exporter_still_runs(&ex))
	{
		nvm_xact_adopt_snapshot(-1, NULL, NULL,
								"The exporting transaction has ended.");
		return;
	}
	nvm_xact_adopt_snapshot(NVM_PROC_NUMBER(ex.proc), exporter_still_runs, &ex, NULL);
}
