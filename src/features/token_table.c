/*
 * token_table.c
 *		ndd_forget_dropped_tables(): the event trigger on sql_drop that
 *		deletes the rows of ndd_near_duplicate_locks keyed by a dropped
 *		table, so that the token table stays bounded by the tables that
 *		exist (its rows: trigger.c, ClaimTokens).
 *
 * It runs as the token table's owner (SECURITY DEFINER) with search_path
 * pinned to pg_catalog, pg_temp, and its one statement names the table by
 * ndd's schema, quoted, and everything else by pg_catalog's.  When ndd
 * itself is being dropped, its function or its table is gone already and
 * there is nothing to forget.
 */
#include "postgres.h"

#include "commands/event_trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "base/sketch_column.h"
#include "features/guard.h"
#include "sqlgen/spi_run.h"

/* %1$s ndd's schema, %2$s the token table */
#define FORGET_DROPPED_SQL \
	"DELETE FROM %1$s.%2$s l\n" \
	"USING pg_catalog.pg_event_trigger_dropped_objects() d\n" \
	"WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass\n" \
	"  AND d.objsubid OPERATOR(pg_catalog.=) 0\n" \
	"  AND l.relid OPERATOR(pg_catalog.=) d.objid"

PG_FUNCTION_INFO_V1(ndd_forget_dropped_tables);
Datum
ndd_forget_dropped_tables(PG_FUNCTION_ARGS)
{
	Oid			nsp;

	/* as PL/pgSQL refuses a trigger function called as a function */
	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("trigger functions can only be called as triggers")));
	nsp = NddNamespace(fcinfo->flinfo->fn_oid);
	if (!OidIsValid(nsp) || !OidIsValid(get_relname_relid(LOCK_TABLE_NAME, nsp)))
		PG_RETURN_VOID();		/* ndd itself is being dropped */

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "ndd_forget_dropped_tables: SPI_connect failed");
	RunStatement("ndd_forget_dropped_tables",
				 psprintf(FORGET_DROPPED_SQL, quote_identifier(get_namespace_name(nsp)),
						  quote_identifier(LOCK_TABLE_NAME)),
				 0, NULL, NULL, NULL);
	SPI_finish();
	PG_RETURN_VOID();
}
