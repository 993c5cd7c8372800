/*-------------------------------------------------------------------------
 *
 * nvm_ddl.c
 *	  Utility statements that need help with nvm tables: temporary and
 *	  unlogged tables, and the tables of extension scripts, created without
 *	  USING when nvm is the default access method.
 *
 * nvm tables can be temporary and unlogged (nvm_storage.c), but with
 * default_table_access_method = nvm a temporary or unlogged table created
 * without USING is still created with heap, as if the statement said USING
 * heap: such tables are scratch space, which heap's local buffers (for
 * temporary tables) serve without touching the shared pool.  This covers
 * CREATE TABLE, CREATE TABLE AS, SELECT INTO and CREATE MATERIALIZED VIEW
 * (also under EXPLAIN), and tables created in the pg_temp schema.  An
 * explicit USING nvm creates an nvm table.  Tables that PostgreSQL creates
 * itself with a table's access method (the temporary table of REFRESH
 * MATERIALIZED VIEW CONCURRENTLY, the transient table of a rewrite) are
 * nvm tables when the table is.
 *
 * A table that an extension's script creates without USING (CREATE
 * EXTENSION, ALTER EXTENSION UPDATE) is a heap table too: an extension's
 * own tables are its catalog, which its C code may read and write with
 * heap's functions (simple_heap_insert, heap_getnext) whatever the table's
 * access method; Citus's metadata tables are such, and an nvm one crashed
 * the server at Citus's first metadata write.  An extension that means its
 * table to be an nvm table says USING nvm.
 *
 * The statement is changed on a copy, so a cached plan keeps its original
 * form and follows the setting in force when it runs again.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tableam.h"
#include "catalog/pg_class.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "nodes/plannodes.h"

#include "am/nvm_ddl.h"

#define NVM_AM_NAME		"nvm"
#define NVM_FALLBACK_AM	"heap"

/*
 * nvm_rangevar_needs_fallback says whether a relation named rv, with
 * persistence given in rv or by its schema, cannot be an nvm table without
 * USING: a temporary or unlogged one, or one an extension's script creates.
 */
static bool
nvm_rangevar_needs_fallback(const RangeVar *rv)
{
	if (creating_extension)
		return true;
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
 * nvm_ddl_utility returns the utility statement pstmt, or, when the
 * default access method is nvm, a copy of it in which a temporary or
 * unlogged table, or an extension script's table, created without USING
 * uses heap.  *readOnlyTree becomes
 * false for a copy.
 */
PlannedStmt *
nvm_ddl_utility(PlannedStmt *pstmt, bool *readOnlyTree)
{
	PlannedStmt *copy;

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
