/*
 * clusters.c
 *		near_duplicate_clusters: every row that has a near-duplicate,
 *		labelled with its cluster, the connected component of the pairs
 *		near_duplicate_pairs finds.
 *
 *	1. The pairs, joined into components by union-find (ndd_components,
 *	   components.c), into a temporary table of (id, smallest id of its
 *	   component).
 *	2. Each row with its label; or, with representative_order, with the id
 *	   of the row of its cluster that the caller's order ranks first.
 *
 * The answer is read through a cursor into the function's tuplestore, which
 * spills to disk beyond work_mem, so memory stays bounded however many rows
 * have near-duplicates.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "base/sketch_column.h"
#include "sqlgen/spi_run.h"

/*
 * Step 1, %1$s ndd's schema; $1 .. $7 the arguments near_duplicate_pairs
 * takes (tbl, sketch_column, id_column, threshold, verify_column, progress,
 * max_distance).
 */
#define CLUSTERS_LABELS_SQL \
	"CREATE TEMP TABLE ndd_cluster_labels AS\n" \
	"SELECT c.labels[i.i][1] AS id, c.labels[i.i][2] AS label\n" \
	"FROM (SELECT %1$s.ndd_components(p.id_a, p.id_b) AS labels\n" \
	"      FROM %1$s.near_duplicate_pairs($1, $2, $3, $4, $5, $6, $7) p) c,\n" \
	"     pg_catalog.generate_subscripts(c.labels, 1) i(i)"

/* step 2 without an order */
#define CLUSTERS_LABELLED_SQL \
	"SELECT l.id, l.label FROM pg_temp.ndd_cluster_labels l"

/*
 * Step 2 with an order: %1$s the table, %2$s the id column, %3$s the
 * caller's order.  The order is the caller's SQL, run with the caller's
 * rights and search_path pg_catalog, pg_temp; it ranks the clustered rows
 * in a query of their own, where it sees the table's columns and nothing
 * else (ties go to the smaller id).
 */
#define CLUSTERS_RANKED_SQL \
	"SELECT l.id, pg_catalog.first_value(l.id) OVER (\n" \
	"           PARTITION BY l.label ORDER BY r.rank)\n" \
	"FROM pg_temp.ndd_cluster_labels l\n" \
	"JOIN (SELECT t.%2$s::pg_catalog.int8 AS id,\n" \
	"             pg_catalog.row_number() OVER (ORDER BY %3$s, t.%2$s::pg_catalog.int8) AS rank\n" \
	"      FROM %1$s t\n" \
	"      WHERE EXISTS (SELECT FROM pg_temp.ndd_cluster_labels c\n" \
	"                    WHERE c.id OPERATOR(pg_catalog.=) t.%2$s::pg_catalog.int8)) r\n" \
	"  ON r.id OPERATOR(pg_catalog.=) l.id"

/* Run one statement of near_duplicate_clusters. */
#define Exec(sql, nargs, types, args, nulls) \
	RunStatement("near_duplicate_clusters", sql, nargs, types, args, nulls)

/* Copy every row of sql, (id, cluster_id), into the answer. */
static void
EmitQuery(const char *sql, Tuplestorestate *out, TupleDesc out_desc)
{
	(void) CopyCursor(SPI_cursor_open_with_args(NULL, sql, 0, NULL, NULL, NULL, false, 0),
					  out, out_desc);
}

/* Step 1: label the rows of the pairs; returns how many. */
static uint64
LabelComponents(FunctionCallInfo fcinfo, const char *ndd_q)
{
	Oid			types[7] = {REGCLASSOID, NAMEOID, NAMEOID, FLOAT8OID, NAMEOID, BOOLOID, INT4OID};
	Datum		args[7];
	char		nulls[7];
	Oid			labels;

	/* a table left by an earlier call of this session that failed */
	labels = RelnameGetRelid("ndd_cluster_labels");
	if (OidIsValid(labels) && isTempNamespace(get_rel_namespace(labels)))
		Exec("DROP TABLE pg_temp.ndd_cluster_labels", 0, NULL, NULL, NULL);

	for (int i = 0; i < 7; i++)
	{
		args[i] = PG_ARGISNULL(i) ? (Datum) 0 : PG_GETARG_DATUM(i);
		nulls[i] = PG_ARGISNULL(i) ? 'n' : ' ';
	}
	Exec(psprintf(CLUSTERS_LABELS_SQL, ndd_q), 7, types, args, nulls);
	return SPI_processed;
}

PG_FUNCTION_INFO_V1(near_duplicate_clusters);
Datum
near_duplicate_clusters(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TimestampTz started = GetCurrentTimestamp();
	Oid			ndd_nsp = NddNamespace(fcinfo->flinfo->fn_oid);
	bool		progress = !PG_ARGISNULL(5) && PG_GETARG_BOOL(5);
	uint64		n;

	InitMaterializedSRF(fcinfo, 0);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "near_duplicate_clusters: SPI_connect failed");

	/* 1. the components of the pairs */
	n = LabelComponents(fcinfo, quote_identifier(get_namespace_name(ndd_nsp)));
	Exec("ANALYZE pg_temp.ndd_cluster_labels", 0, NULL, NULL, NULL);
	if (progress)
		ereport(NOTICE,
				(errmsg("ndd: " UINT64_FORMAT " rows in clusters", n),
				 errdetail("%s so far",
						   DatumGetCString(DirectFunctionCall1(interval_out,
															   DirectFunctionCall2(timestamp_mi,
																				   TimestampTzGetDatum(GetCurrentTimestamp()),
																				   TimestampTzGetDatum(started)))))));

	/* 2. each row with its cluster */
	if (PG_ARGISNULL(7))
		EmitQuery(CLUSTERS_LABELLED_SQL, rsinfo->setResult, rsinfo->setDesc);
	else
	{
		Oid			relid = PG_GETARG_OID(0);
		const char *id_name = NameStr(*PG_GETARG_NAME(2));

		EmitQuery(psprintf(CLUSTERS_RANKED_SQL,
						   DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(relid))),
						   quote_identifier(id_name),
						   text_to_cstring(PG_GETARG_TEXT_PP(7))),
				  rsinfo->setResult, rsinfo->setDesc);
	}
	Exec("DROP TABLE pg_temp.ndd_cluster_labels", 0, NULL, NULL, NULL);
	SPI_finish();
	return (Datum) 0;
}
