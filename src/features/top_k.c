/*
 * top_k.c
 *		near_duplicate_top_k: the k rows whose minhash sketches are most
 *		similar to a query, exactly as a sequential scan ordered by
 *		similarity (ties by smaller id) returns them, served by a
 *		minhash_ops index where one can.
 *
 *	0. Counting the query's keys in the posting lists of an index of one-row
 *	   bands (minhash_index_top_k, minhash_topk.c), where there is one and
 *	   it can answer (not on a table of Citus, whose table and indexes here
 *	   are empty shells).
 *	1. Passes at falling thresholds, each exact through the indexes: down
 *	   to the lowest threshold every minhash_ops index on the column serves
 *	   exactly (minhash_index_exact_threshold).
 *	2. When every row not found has similarity 0: the smallest ids.
 *	3. Otherwise a sequential scan.
 *
 * Each step is one SQL statement over SPI, built here from the names the
 * caller gave, quoted and qualified: a table or column name can never
 * change what runs.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/tuplestore.h"

#include "base/sketch_column.h"
#include "sketch/minhash.h"
#include "sqlgen/sketch_sql.h"
#include "sqlgen/spi_run.h"

/*
 * The statements.  Parameters: $1 the query; then as each says.  Steps 1-3
 * take %1$s the id column, %2$s the score of row t (sketch_sql.h), %3$s the
 * table, %4$s the rows they read, %5$s the id as it orders.
 */

/* step 0 (%s ndd's schema; $2 tbl, $3 sketch column, $4 id column, $5 k) */
#define TOPK_COUNT_SQL \
	"SELECT c.ids, c.similarities, c.postings, c.index_name, c.lists_unread " \
	"FROM %s.minhash_index_top_k($2, $3, $4, $1, $5) c"

/* step 1: the top $3 of the rows at least $2 similar (%4$s: the test) */
#define TOPK_PASS_SQL \
	"SELECT t.%1$s::pg_catalog.int8, %2$s " \
	"FROM %3$s t WHERE %4$s " \
	"ORDER BY 2 DESC, %5$s LIMIT $3"

/* step 2: $3 rows of similarity below $2 (that is, 0), by smallest id (%4$s: the sketch) */
#define TOPK_REST_SQL \
	"SELECT t.%1$s::pg_catalog.int8, %2$s " \
	"FROM %3$s t WHERE %4$s IS NOT NULL " \
	"AND %2$s OPERATOR(pg_catalog.<) $2 " \
	"ORDER BY %5$s LIMIT $3"

/* step 3: the top $2 of every row (%4$s: the sketch) */
#define TOPK_SCAN_SQL \
	"SELECT t.%1$s::pg_catalog.int8, %2$s " \
	"FROM %3$s t WHERE %4$s IS NOT NULL " \
	"ORDER BY 2 DESC, %5$s LIMIT $2"

/* the names of the indexes in an EXPLAIN (FORMAT JSON) plan ($1) */
#define TOPK_PLAN_INDEXES_SQL \
	"SELECT pg_catalog.string_agg(i.i OPERATOR(pg_catalog.#>>) '{}'::pg_catalog.text[], ', '::pg_catalog.text) " \
	"FROM pg_catalog.jsonb_path_query($1::pg_catalog.jsonb, " \
	"'strict $.**.\"Index Name\"'::pg_catalog.jsonpath) i(i)"

typedef struct TopK
{
	Oid			relid;
	const char *sketch_name;	/* the columns as given */
	const char *id_name;
	const char *ndd;			/* the names, quoted */
	const char *id;
	const char *table;
	const char *sketch;			/* t's sketch */
	const char *id_order;		/* the id as it orders */
	const char *score;			/* t's similarity to the query, $1 */
	const char *near;			/* t reaches the threshold $2 */
	Oid			query_type;
	Datum		query;
	int			num_perm;
	int32		k;
	bool		progress;
	Tuplestorestate *out;
	TupleDesc	out_desc;
} TopK;

/* Steps 1-3: reading rows (the sketch, or a test on it) */
static char *
Statement(const TopK *t, const char *format, const char *rows)
{
	return psprintf(format, t->id, t->score, t->table, rows, t->id_order);
}

static char *
Float8Text(double value)
{
	return DatumGetCString(DirectFunctionCall1(float8out, Float8GetDatum(value)));
}

/* Run one statement of near_duplicate_top_k (no NULL arguments). */
#define Run(sql, nargs, types, args) \
	RunStatement("near_duplicate_top_k", sql, nargs, types, args, NULL)

/* Add the (id, similarity) rows of a statement's result to the answer. */
static int
EmitRows(TopK *t, SPITupleTable *rows)
{
	for (uint64 i = 0; i < rows->numvals; i++)
	{
		Datum		values[2];
		bool		nulls[2];

		values[0] = SPI_getbinval(rows->vals[i], rows->tupdesc, 1, &nulls[0]);
		values[1] = SPI_getbinval(rows->vals[i], rows->tupdesc, 2, &nulls[1]);
		tuplestore_putvalues(t->out, t->out_desc, values, nulls);
	}
	return (int) rows->numvals;
}

/* Step 2: the other `wanted` rows, all of similarity 0, by smallest id. */
static void
EmitRest(TopK *t, int wanted)
{
	Oid			types[3] = {t->query_type, FLOAT8OID, INT4OID};
	Datum		args[3] = {t->query, Float8GetDatum(1.0 / t->num_perm), Int32GetDatum(wanted)};

	if (t->progress)
		ereport(NOTICE,
				(errmsg("ndd: the other %d rows at similarity 0, by %s", wanted, t->id_name)));
	Run(Statement(t, TOPK_REST_SQL, t->sketch), 3, types, args);
	EmitRows(t, SPI_tuptable);
}

/* Step 0: true when counting answered, its rows emitted. */
static bool
ByCounting(TopK *t)
{
	Oid			types[5] = {t->query_type, REGCLASSOID, NAMEOID, NAMEOID, INT4OID};
	Datum		args[5];
	HeapTuple	row;
	TupleDesc	desc;
	bool		isnull;
	Datum	   *ids,
			   *sims;
	int			n;

	args[0] = t->query;
	args[1] = ObjectIdGetDatum(t->relid);
	args[2] = DirectFunctionCall1(namein, CStringGetDatum(t->sketch_name));
	args[3] = DirectFunctionCall1(namein, CStringGetDatum(t->id_name));
	args[4] = Int32GetDatum(t->k);
	Run(psprintf(TOPK_COUNT_SQL, t->ndd), 5, types, args);
	row = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	(void) SPI_getbinval(row, desc, 1, &isnull);
	if (isnull)
		return false;			/* it cannot answer */

	deconstruct_array(DatumGetArrayTypeP(SPI_getbinval(row, desc, 1, &isnull)),
					  INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &ids, NULL, &n);
	deconstruct_array(DatumGetArrayTypeP(SPI_getbinval(row, desc, 2, &isnull)),
					  FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &sims, NULL, &n);
	if (t->progress)
		ereport(NOTICE,
				(errmsg("ndd: %d rows above similarity 0 from %s postings of index %s",
						n, SPI_getvalue(row, desc, 3), SPI_getvalue(row, desc, 4)),
				 errdetail("The answer left the %s longest of the query's posting lists unread.",
						   SPI_getvalue(row, desc, 5))));
	for (int i = 0; i < n; i++)
	{
		Datum		values[2] = {ids[i], sims[i]};
		bool		nulls[2] = {false, false};

		tuplestore_putvalues(t->out, t->out_desc, values, nulls);
	}
	if (n < t->k)
		EmitRest(t, t->k - n);
	return true;
}

/* The lowest threshold every minhash_ops index on the column serves exactly (NaN: none). */
static double
ExactThreshold(const TopK *t)
{
	Oid			types[2] = {REGCLASSOID, NAMEOID};
	Datum		args[2] = {ObjectIdGetDatum(t->relid),
	DirectFunctionCall1(namein, CStringGetDatum(t->sketch_name))};
	bool		isnull;
	Datum		lowest;

	Run(psprintf("SELECT %s.minhash_index_exact_threshold($1, $2)", t->ndd), 2, types, args);
	lowest = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return isnull ? get_float8_nan() : DatumGetFloat8(lowest);
}

/* The indexes the plan of one pass at threshold t uses, for progress. */
static char *
PassIndexes(const TopK *t, const char *pass, Oid *types, Datum *args)
{
	Oid			json_type = TEXTOID;
	Datum		plan;
	bool		isnull;
	char	   *names;

	Run(psprintf("EXPLAIN (FORMAT JSON) %s", pass), 3, types, args);
	plan = CStringGetTextDatum(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1));
	Run(TOPK_PLAN_INDEXES_SQL, 1, &json_type, &plan);
	(void) SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	names = isnull ? NULL : SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	return names ? psprintf("index %s", names) : pstrdup("no index");
}

/*
 * Step 1: passes at falling thresholds down to lowest_m agreeing positions;
 * true when one found k rows (emitted).  Otherwise *found holds the last
 * pass's rows (all those at lowest_m or more), not yet emitted.
 */
static bool
ByPasses(TopK *t, int lowest_m, SPITupleTable **found)
{
	char	   *pass = Statement(t, TOPK_PASS_SQL, t->near);
	int			m = t->num_perm;

	*found = NULL;
	while (m > lowest_m)
	{
		double		threshold;
		Oid			types[3] = {t->query_type, FLOAT8OID, INT4OID};
		Datum		args[3];
		char	   *indexes = NULL;

		m = Max(m / 2, lowest_m);
		threshold = (double) m / t->num_perm;
		args[0] = t->query;
		args[1] = Float8GetDatum(threshold);
		args[2] = Int32GetDatum(t->k);
		if (t->progress)
			indexes = PassIndexes(t, pass, types, args);
		Run(pass, 3, types, args);
		if (t->progress)
			ereport(NOTICE,
					(errmsg("ndd: %d rows at similarity >= %s (%s)",
							(int) SPI_processed, Float8Text(threshold), indexes)));
		if ((int64) SPI_processed >= t->k)
		{
			EmitRows(t, SPI_tuptable);
			return true;
		}
		*found = SPI_tuptable;
	}
	return false;
}

/* Step 3: a sequential scan. */
static void
ByScan(TopK *t, double lowest)
{
	Oid			types[2] = {t->query_type, INT4OID};
	Datum		args[2] = {t->query, Int32GetDatum(t->k)};

	if (t->progress)
		ereport(NOTICE,
				(errmsg("ndd: sequential scan of %s",
						DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(t->relid)))),
				 isnan(lowest) ?
				 errdetail("Column \"%s\" has no minhash_ops index.", t->sketch_name) :
				 errdetail("Its minhash_ops indexes are exact down to similarity %s, and fewer than %d rows reach it.",
						   Float8Text(lowest), t->k)));
	Run(Statement(t, TOPK_SCAN_SQL, t->sketch), 2, types, args);
	EmitRows(t, SPI_tuptable);
}

/* Check the arguments and fill in what the statements are built from. */
static void
Prepare(TopK *t, FunctionCallInfo fcinfo)
{
	Oid			ndd_nsp = NddNamespace(fcinfo->flinfo->fn_oid);
	SketchColumn sketch;
	Oid			id_type;
	const char *id_q;
	SketchRule	kind;

	t->relid = PG_GETARG_OID(0);
	t->sketch_name = NameStr(*PG_GETARG_NAME(1));
	t->id_name = NameStr(*PG_GETARG_NAME(2));
	t->query = PG_GETARG_DATUM(3);
	t->k = PG_GETARG_INT32(4);
	t->progress = PG_GETARG_BOOL(5);
	if (t->k <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("k must be positive, not %d", t->k)));
	ResolveSketchColumn(t->relid, t->sketch_name, ndd_nsp, SKETCH_MINHASH, &sketch);
	(void) ResolveColumn(t->relid, t->id_name, &id_type);
	t->query_type = sketch.type;
	t->num_perm = DatumGetMinHashP(t->query)->num_perm;

	id_q = quote_identifier(t->id_name);
	t->ndd = quote_identifier(get_namespace_name(ndd_nsp));
	t->id = id_q;
	t->table = QualifiedTableName(t->relid);
	t->sketch = psprintf("t.%s", quote_identifier(t->sketch_name));
	/* an integer orders as its bigint does, and a btree on it serves step 2 */
	t->id_order = (id_type == INT2OID || id_type == INT4OID || id_type == INT8OID) ?
		psprintf("t.%s", id_q) : psprintf("t.%s::pg_catalog.int8", id_q);
	/* similar(), which a shard is sent and the planner turns into an index scan */
	SketchRuleInit(&kind, SKETCH_MINHASH, t->ndd, 0, 0);
	t->score = kind.sql->score(&kind, t->sketch, "$1");
	t->near = kind.sql->near_immutable(&kind, t->sketch, "$1", "$2");
}

PG_FUNCTION_INFO_V1(near_duplicate_top_k);
Datum
near_duplicate_top_k(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TopK		t;
	MinHash    *query;
	bool		empty;
	double		lowest = get_float8_nan();
	int			lowest_m = -1;
	SPITupleTable *found = NULL;

	memset(&t, 0, sizeof(t));
	Prepare(&t, fcinfo);
	InitMaterializedSRF(fcinfo, 0);
	t.out = rsinfo->setResult;
	t.out_desc = rsinfo->setDesc;
	query = DatumGetMinHashP(t.query);
	/* an empty query is 0 similar to every row */
	empty = MinHashSimilarity(query, query) == 0;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "near_duplicate_top_k: SPI_connect failed");

	/* 0. counting keys in the posting lists of an index of one-row bands */
	if (!empty && ByCounting(&t))
	{
		SPI_finish();
		return (Datum) 0;
	}

	/* 1. passes at falling thresholds, each exact through the indexes */
	if (!empty)
		lowest = ExactThreshold(&t);
	if (!isnan(lowest))
	{
		lowest_m = (int) ceil(lowest * t.num_perm - 1e-9);
		if (ByPasses(&t, lowest_m, &found))
		{
			SPI_finish();
			return (Datum) 0;
		}
	}

	if (lowest_m == 1 || empty)
	{
		/* 2. every row not found has similarity 0: the smallest ids */
		int			n = 0;

		if (found)
			n = EmitRows(&t, found);
		EmitRest(&t, t.k - n);
	}
	else
		ByScan(&t, lowest);		/* 3. a sequential scan */

	SPI_finish();
	return (Datum) 0;
}
