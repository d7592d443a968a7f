/*
 * explain.c
 *		ndd_explain(): why two documents are (not) near-duplicates, as ndd's
 *		own functions see them: the exact Jaccard, the minhash estimate, the
 *		simhash distance, the shingles of each, how many they share, and a
 *		sample of the shingles shared and of those only one has.
 *
 * One statement over SPI.  Only ndd's schema, quoted, is put into its text;
 * the documents and settings are parameters of the exact types of the
 * functions they reach, and the function runs with search_path pinned to
 * pg_catalog, pg_temp, so no other role's object can answer for ndd's or
 * PostgreSQL's.  The samples are in byte order (COLLATE "C"), whatever the
 * database's collation.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "base/sketch_column.h"
#include "sqlgen/spi_run.h"

/* the columns, in the order of ndd_explain's OUT arguments */
#define EXPLAIN_COLUMNS		10

/* the up to $8 smallest of a set expression of s.sa and s.sb, in byte order */
#define EXPLAIN_SAMPLE(set) \
	"(SELECT COALESCE(pg_catalog.array_agg(i.v ORDER BY i.v COLLATE pg_catalog.\"C\"), '{}'::pg_catalog.text[])\n" \
	"        FROM (SELECT i.v FROM (" set ") i\n" \
	"              ORDER BY i.v COLLATE pg_catalog.\"C\" LIMIT $8) i)"

/*
 * %1$s ndd's schema; $1, $2 the documents, $3 shingle_size, $4 unit, $5
 * strip_html, $6 num_perm, $7 seed, $8 sample
 */
#define EXPLAIN_SQL \
	"SELECT %1$s.jaccard($1, $2, $3, $4, $5),\n" \
	"       %1$s.similarity(%1$s.minhash_sketch($1, $6, $3, $4, $5, $7),\n" \
	"                       %1$s.minhash_sketch($2, $6, $3, $4, $5, $7)),\n" \
	"       %1$s.hamming_distance(%1$s.simhash($1, $3, $4, $5, $7),\n" \
	"                             %1$s.simhash($2, $3, $4, $5, $7)),\n" \
	"       pg_catalog.cardinality(s.sa), pg_catalog.cardinality(s.sb),\n" \
	"       (SELECT pg_catalog.count(*)::pg_catalog.int4\n" \
	"        FROM (SELECT pg_catalog.unnest(s.sa) INTERSECT SELECT pg_catalog.unnest(s.sb)) i),\n" \
	"       (SELECT pg_catalog.count(*)::pg_catalog.int4\n" \
	"        FROM (SELECT pg_catalog.unnest(s.sa) UNION SELECT pg_catalog.unnest(s.sb)) u),\n" \
	"       " EXPLAIN_SAMPLE("SELECT pg_catalog.unnest(s.sa) AS v INTERSECT SELECT pg_catalog.unnest(s.sb)") ",\n" \
	"       " EXPLAIN_SAMPLE("SELECT pg_catalog.unnest(s.sa) AS v EXCEPT SELECT pg_catalog.unnest(s.sb)") ",\n" \
	"       " EXPLAIN_SAMPLE("SELECT pg_catalog.unnest(s.sb) AS v EXCEPT SELECT pg_catalog.unnest(s.sa)") "\n" \
	"FROM (SELECT %1$s.show_shingles($1, $3, $4, $5) AS sa,\n" \
	"             %1$s.show_shingles($2, $3, $4, $5) AS sb) s"

PG_FUNCTION_INFO_V1(ndd_explain);
Datum
ndd_explain(PG_FUNCTION_ARGS)
{
	Oid			types[8] = {TEXTOID, TEXTOID, INT4OID, TEXTOID, BOOLOID, INT4OID, INT4OID, INT4OID};
	Datum		args[8];
	const char *ndd = quote_identifier(get_namespace_name(NddNamespace(fcinfo->flinfo->fn_oid)));
	TupleDesc	desc;
	Datum		values[EXPLAIN_COLUMNS];
	bool		nulls[EXPLAIN_COLUMNS];
	Datum		result;

	if (PG_GETARG_INT32(4) < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sample %d is out of range", PG_GETARG_INT32(4)),
				 errdetail("sample must be at least 0.")));
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "ndd_explain: return type must be a row type");
	desc = BlessTupleDesc(desc);

	/* $1 .. $8 from (a, b, shingle_size, unit, sample, strip_html, num_perm, seed) */
	args[0] = PG_GETARG_DATUM(0);
	args[1] = PG_GETARG_DATUM(1);
	args[2] = PG_GETARG_DATUM(2);
	args[3] = PG_GETARG_DATUM(3);
	args[4] = PG_GETARG_DATUM(5);
	args[5] = PG_GETARG_DATUM(6);
	args[6] = PG_GETARG_DATUM(7);
	args[7] = PG_GETARG_DATUM(4);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "ndd_explain: SPI_connect failed");
	RunQuery("ndd_explain", psprintf(EXPLAIN_SQL, ndd), 8, types, args, NULL);
	if (SPI_processed != 1 || SPI_tuptable->tupdesc->natts != EXPLAIN_COLUMNS)
		elog(ERROR, "ndd_explain: expected one row of %d columns", EXPLAIN_COLUMNS);
	for (int c = 0; c < EXPLAIN_COLUMNS; c++)
	{
		if (SPI_gettypeid(SPI_tuptable->tupdesc, c + 1) != TupleDescAttr(desc, c)->atttypid)
			elog(ERROR, "ndd_explain: column %d is of type %u, not %u", c + 1,
				 SPI_gettypeid(SPI_tuptable->tupdesc, c + 1), TupleDescAttr(desc, c)->atttypid);
		values[c] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, c + 1, &nulls[c]);
	}
	/* copied out of SPI's memory, which SPI_finish frees */
	result = PointerGetDatum(SPI_returntuple(heap_form_tuple(desc, values, nulls), desc));
	SPI_finish();
	PG_RETURN_DATUM(result);
}
