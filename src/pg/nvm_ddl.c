/*-------------------------------------------------------------------------
 *
 * nvm_ddl.c
 *	  Utility statements that need help with nvm tables: temporary and
 *	  unlogged tables when nvm is the default access method, and REFRESH
 *	  MATERIALIZED VIEW CONCURRENTLY.
 *
 * nvm tables cannot be temporary (the pool is shared by every backend,
 * while a temporary table's relfilenode is only unique within its
 * backend) nor unlogged (after a crash PostgreSQL empties an unlogged
 * table's indexes, while its nvm rows would survive).  With
 * default_table_access_method = nvm, a temporary or unlogged table created
 * without USING would therefore fail; instead it is created with heap, as
 * if the statement said USING heap.  This covers CREATE TABLE, CREATE
 * TABLE AS, SELECT INTO and CREATE MATERIALIZED VIEW (also under EXPLAIN),
 * and tables created in the pg_temp schema.  An explicit USING nvm still
 * fails with the errors of nvm_relation_set_new_filenode.
 *
 * The statement is changed on a copy, so a cached plan keeps its original
 * form and follows the setting in force when it runs again.
 *
 * REFRESH MATERIALIZED VIEW CONCURRENTLY builds the new contents in a
 * temporary table of the materialized view's access method, which an nvm
 * materialized view cannot have; it is refused before it starts, with a
 * hint, rather than failing half-way.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tableam.h"
#include "catalog/pg_class.h"
#include "catalog/namespace.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "nodes/plannodes.h"

#include "nvm_ddl.h"
#include "nvm_relation.h"

#define NVM_AM_NAME		"nvm"
#define NVM_FALLBACK_AM	"heap"

/*
 * nvm_rangevar_needs_fallback says whether a relation named rv, with
 * persistence given in rv or by its schema, cannot be an nvm table.
 */
static bool
nvm_rangevar_needs_fallback(const RangeVar *rv)
{
	if (rv->relpersistence != RELPERSISTENCE_PERMANENT)
		return true;
	return rv->schemaname != NULL && strncmp(rv->schemaname, "pg_temp", 7) == 0;
}

/*
 * nvm_stmt_needs_fallback says whether the utility statement stmt creates,
 * without USING, a table that cannot be an nvm table; with apply it also
 * sets the statement's access method to heap.
 */
static bool
nvm_stmt_needs_fallback(Node *stmt, bool apply)
{
	if (stmt == NULL)
		return false;
	switch (nodeTag(stmt))
	{
		case T_CreateStmt:
			{
				CreateStmt *cs = (CreateStmt *) stmt;

				/* a partitioned table has no access method of its own */
				if (cs->accessMethod != NULL || cs->partspec != NULL ||
					!nvm_rangevar_needs_fallback(cs->relation))
					return false;
				if (apply)
					cs->accessMethod = pstrdup(NVM_FALLBACK_AM);
				return true;
			}
		case T_CreateTableAsStmt:
			{
				CreateTableAsStmt *ctas = (CreateTableAsStmt *) stmt;
				IntoClause *into = ctas->into;

				if (into == NULL || into->accessMethod != NULL ||
					!nvm_rangevar_needs_fallback(into->rel))
					return false;
				if (apply)
					into->accessMethod = pstrdup(NVM_FALLBACK_AM);
				return true;
			}
		case T_ExplainStmt:
			{
				Query	   *query = (Query *) ((ExplainStmt *) stmt)->query;

				if (query == NULL || !IsA(query, Query) ||
					query->commandType != CMD_UTILITY)
					return false;
				return nvm_stmt_needs_fallback(query->utilityStmt, apply);
			}
		default:
			return false;
	}
}

/*
 * nvm_check_refresh_concurrently refuses REFRESH MATERIALIZED VIEW
 * CONCURRENTLY of an nvm materialized view.  (The name is looked up without
 * a lock: the command itself looks it up again.)
 */
static void
nvm_check_refresh_concurrently(Node *stmt)
{
	RefreshMatViewStmt *rstmt;
	Oid			relid;

	if (stmt == NULL || !IsA(stmt, RefreshMatViewStmt))
		return;
	rstmt = (RefreshMatViewStmt *) stmt;
	if (!rstmt->concurrent)
		return;
	relid = RangeVarGetRelid(rstmt->relation, NoLock, true);
	if (OidIsValid(relid) && nvm_relid_is_nvm(relid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot refresh nvm materialized view \"%s\" concurrently",
						rstmt->relation->relname),
				 errdetail("A concurrent refresh builds the new contents in a temporary table of the view's access method, and nvm tables cannot be temporary."),
				 errhint("Refresh without CONCURRENTLY, or create the materialized view USING heap.")));
}

/*
 * nvm_ddl_utility checks a utility statement before it runs: it refuses
 * REFRESH MATERIALIZED VIEW CONCURRENTLY of an nvm materialized view, and
 * returns pstmt, or, when the default access method is nvm, a copy of it
 * in which a temporary or unlogged table created without USING uses heap.
 * *readOnlyTree becomes false for a copy.
 */
PlannedStmt *
nvm_ddl_utility(PlannedStmt *pstmt, bool *readOnlyTree)
{
	PlannedStmt *copy;

	nvm_check_refresh_concurrently(pstmt->utilityStmt);
	if (default_table_access_method == NULL ||
		strcmp(default_table_access_method, NVM_AM_NAME) != 0)
		return pstmt;
	if (!nvm_stmt_needs_fallback(pstmt->utilityStmt, false))
		return pstmt;

	copy = copyObject(pstmt);
	(void) nvm_stmt_needs_fallback(copy->utilityStmt, true);
	*readOnlyTree = false;
	return copy;
}
