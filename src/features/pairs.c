/*
 * pairs.c
 *		near_duplicate_pairs: every pair of rows whose minhash sketches reach
 *		a threshold, or whose simhash fingerprints are within max_distance
 *		bits, found through the bucket keys the rows share.
 *
 *	0. The checks, each with its SQLSTATE; the leaf partitions, when the
 *	   table is partitioned over postgres_fdw shards; the banding that suits
 *	   the table's minhash sketches (all made like the first), or the block
 *	   keys of simhash fingerprints.
 *	1. Which keys occur more than once, in a filter sized for the rows
 *	   (ndd_colliding_keys, key_filter.c); across shards, each shard makes
 *	   its part of the filter and the parts are merged.
 *	2. The keys that may collide, as an array per row, with a small summary
 *	   of each row's sketch; across shards, only the rows with enough such
 *	   keys leave their shard.
 *	3. The pairs of rows that share a kept key and whose summaries pass.
 *	4. The candidates whose sketches (with verify_column: whose texts)
 *	   reach the threshold.
 *
 * On a plain table the discovery engine (discovery.h) runs steps 1-4 in C,
 * with the same filter, keys, tests and scores; ndd.discovery_path
 * chooses.  Elsewhere (shards, views, row security, verification):
 *
 * Steps 1-4 are SQL statements over SPI on temporary tables, which
 * PostgreSQL keeps within work_mem (spilling to disk) and can cancel; each
 * is built here from the names the caller gave, quoted and qualified, so a
 * table or column name can never change what runs.  The answer is read
 * through a cursor into the function's tuplestore, which spills to disk
 * beyond work_mem.
 */
#include "postgres.h"

#include <math.h>

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "base/ndd_limits.h"
#include "base/sketch_column.h"
#include "features/citus_work.h"
#include "features/discovery.h"
#include "features/pairs.h"
#include "features/pairs_citus.h"
#include "keys/lsh.h"
#include "sketch/simhash.h"
#include "sqlgen/sketch_sql.h"
#include "sqlgen/spi_run.h"

/* step 0: the leaf partitions of $1, each with whether it is a foreign table */
#define PAIRS_LEAVES_SQL \
	"SELECT p.relid::pg_catalog.regclass::pg_catalog.text,\n" \
	"       c.relkind OPERATOR(pg_catalog.=) 'f'::pg_catalog.\"char\"\n" \
	"FROM pg_catalog.pg_partition_tree($1) p\n" \
	"JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) p.relid\n" \
	"WHERE p.isleaf ORDER BY p.relid"

/*
 * A row to learn from: on shards, a LIMIT is sent only in a query of one
 * foreign table, or every shard sends a whole fetch_size of rows.  %1$s the
 * sketch column, %2$s a leaf; joined by PAIRS_UNION_ALL, in parentheses.
 */
#define PAIRS_FIRST_ROW_OF_LEAF \
	"(SELECT t.%1$s FROM ONLY %2$s t WHERE t.%1$s IS NOT NULL LIMIT 1)"
#define PAIRS_UNION_ALL " UNION ALL "

/* step 0, minhash: %1$s the sketch column, %2$s where the first rows are */
#define PAIRS_PROBE_SQL \
	"SELECT t.%1$s::pg_catalog.text FROM %2$s t WHERE t.%1$s IS NOT NULL LIMIT 1"

/* the settings of the probe ($1, as text); %1$s ndd's schema */
#define PAIRS_SETTINGS_SQL \
	"SELECT m.num_perm, m.unit, m.shingle_size, m.seed FROM %1$s.minhash_settings($1::%1$s.minhash) m"

/*
 * Every sketch made like the probe, one table: the settings of one made
 * otherwise.  %1$s the table, %2$s ndd's schema, %3$s the sketch column;
 * $1 .. $4 the probe's settings.
 */
#define PAIRS_OTHER_SETTINGS_SQL \
	"SELECT pg_catalog.format('num_perm=%%s, unit=%%s, shingle_size=%%s, seed=%%s',\n" \
	"                         m.num_perm, m.unit, m.shingle_size, m.seed)\n" \
	"FROM %1$s t, %2$s.minhash_settings(t.%3$s) m\n" \
	"WHERE t.%3$s IS NOT NULL\n" \
	"  AND (m.num_perm OPERATOR(pg_catalog.<>) $1 OR m.unit OPERATOR(pg_catalog.<>) $2\n" \
	"       OR m.shingle_size OPERATOR(pg_catalog.<>) $3 OR m.seed OPERATOR(pg_catalog.<>) $4)\n" \
	"LIMIT 1"

/*
 * Across shards each shard compares its sketches with the probe, where
 * similarity() fails on one made otherwise (and nothing moves).  %1$s the
 * sketch column, %2$s a leaf, %3$s the score of t's sketch and the probe.
 */
#define PAIRS_SHARD_SETTINGS_OF_LEAF \
	"(SELECT pg_catalog.count(*) AS n FROM ONLY %2$s t WHERE t.%1$s IS NOT NULL" \
	" AND %3$s OPERATOR(pg_catalog.<) 0::pg_catalog.float8)"
#define PAIRS_SUM_SQL "SELECT pg_catalog.sum(s.n) FROM (%s) s"

/* step 1: keys per row; %1$s the keys of row t, %2$s first rows, %3$s sketch column */
#define PAIRS_KEYS_PER_ROW_SQL \
	"SELECT pg_catalog.cardinality(%1$s) FROM %2$s t WHERE t.%3$s IS NOT NULL LIMIT 1"

/* the table's rows as the planner last counted them ($1 the table) */
#define PAIRS_RELTUPLES_SQL \
	"SELECT c.reltuples::pg_catalog.int8 FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) $1"

/* the rows with a sketch: %1$s the table, %2$s the sketch column */
#define PAIRS_COUNT_SQL \
	"SELECT pg_catalog.count(*) FROM %1$s t WHERE t.%2$s IS NOT NULL"

/* the colliding keys, one table: %1$s ndd, %2$s keys, %3$s table, %4$s sketch; $1 expected keys */
#define PAIRS_COLLISIONS_SQL \
	"SELECT %1$s.ndd_colliding_keys(%2$s, $1) FROM %3$s t WHERE t.%4$s IS NOT NULL"

/* across shards: each shard counts its rows (%1$s a leaf, %2$s sketch column) */
#define PAIRS_SHARD_COUNT_OF_LEAF \
	"SELECT pg_catalog.count(*) AS n FROM ONLY %1$s t WHERE t.%2$s IS NOT NULL"
#define PAIRS_SHARD_SUM_SQL "SELECT pg_catalog.sum(s.n)::pg_catalog.int8 FROM (%s) s"

/*
 * and makes its whole filter state (both bitmaps, of one size) for the
 * coordinator to merge: a key seen once on each of two shards collides.
 * %1$s ndd, %2$s a leaf, %3$s keys, %4$s sketch column; $1 the filter's bits.
 */
#define PAIRS_SHARD_PARTIAL_OF_LEAF \
	"SELECT %1$s.ndd_colliding_keys_partial(%3$s, $1) AS partial FROM ONLY %2$s t WHERE t.%4$s IS NOT NULL"
#define PAIRS_FILTER_BITS_SQL "SELECT %s.ndd_key_filter_bits($1)"
#define PAIRS_MERGE_SQL "SELECT %1$s.ndd_colliding_keys_merge(s.partial) FROM (%2$s) s"

/*
 * Step 2 across shards: only the rows with as many keys that may collide as
 * a pair must share leave their shard: the filter is shipped in each
 * shard's query, which applies it there.  %1$s the table, %2$s the id
 * column, %3$s ndd, %4$s keys, %5$s the sketch column; $1 the filter, $2 the
 * keys required.
 *
 * The shard computes a row's colliding keys to decide, and the coordinator
 * computes them again for the rows sent (PAIRS_KEYS_SQL): a postgres_fdw
 * scan of a foreign table returns its columns, never a value computed from
 * them (EXPLAIN VERBOSE shows the test in the Remote SQL and the keys in
 * the local Output).  Only an aggregate sent to a shard returns computed
 * values, and with the test in its WHERE the shard would compute the keys
 * twice itself, with the test in its HAVING it would group every row.
 */
#define PAIRS_SHARD_ROWS_SQL \
	"\n" \
	"            CREATE TEMP TABLE ndd_pair_rows AS\n" \
	"            SELECT t.%2$s::pg_catalog.int8 AS ndd_pair_id, t.%5$s\n" \
	"            FROM %1$s t\n" \
	"            WHERE t.%5$s IS NOT NULL\n" \
	"              AND pg_catalog.cardinality(%3$s.ndd_colliding(%4$s, $1, 0::pg_catalog.int4))\n" \
	"                  OPERATOR(pg_catalog.>=) $2"

/*
 * step 2: one row per row with a key that may collide, its keys as an
 * array: a sixth of the bytes of a row per key (the summary and the row's
 * header once, not once per key).  %s the summary's type.
 */
#define PAIRS_KEYS_TABLE_SQL \
	"CREATE TEMP TABLE ndd_pair_keys (id pg_catalog.int8, keys pg_catalog.int8[], summary %s)"

/*
 * %1$s where the rows are, %2$s their id, %3$s ndd, %4$s keys, %5$s the
 * sketch column, %6$s the summary; $1 the filter, $2 the keys required less
 * one.  OFFSET 0 keeps the keys computed once, not again in the filter.
 */
#define PAIRS_KEYS_SQL \
	"\n" \
	"        INSERT INTO pg_temp.ndd_pair_keys (id, keys, summary)\n" \
	"        SELECT s.id, s.keys, s.summary\n" \
	"        FROM (SELECT t.%2$s::pg_catalog.int8 AS id,\n" \
	"                     %3$s.ndd_colliding(%4$s, $1, $2) AS keys, %6$s AS summary\n" \
	"              FROM %1$s t\n" \
	"              WHERE t.%5$s IS NOT NULL\n" \
	"              OFFSET 0) s\n" \
	"        WHERE pg_catalog.cardinality(s.keys) OPERATOR(pg_catalog.>) 0"

/* the keys kept, for progress */
#define PAIRS_KEYS_COUNT_SQL \
	"SELECT pg_catalog.sum(pg_catalog.cardinality(k.keys))::pg_catalog.int8 FROM pg_temp.ndd_pair_keys k"

/* step 3 */
#define PAIRS_CANDIDATES_TABLE_SQL \
	"CREATE TEMP TABLE ndd_pair_candidates (a pg_catalog.int8, b pg_catalog.int8)"

/* %s the test of summaries x, y */
#define PAIRS_CANDIDATES_SQL \
	"\n" \
	"        INSERT INTO pg_temp.ndd_pair_candidates (a, b)\n" \
	"        SELECT DISTINCT x.id, y.id\n" \
	"        FROM pg_temp.ndd_pair_keys x\n" \
	"             CROSS JOIN LATERAL pg_catalog.unnest(x.keys) kx(key)\n" \
	"        JOIN (pg_temp.ndd_pair_keys y\n" \
	"              CROSS JOIN LATERAL pg_catalog.unnest(y.keys) ky(key))\n" \
	"          ON ky.key OPERATOR(pg_catalog.=) kx.key AND y.id OPERATOR(pg_catalog.>) x.id\n" \
	"        WHERE %s"

/* the ids of the candidates */
#define PAIRS_CANDIDATE_IDS_SQL \
	"SELECT pg_catalog.array_agg(DISTINCT u.id)\n" \
	"FROM (SELECT c.a FROM pg_temp.ndd_pair_candidates c\n" \
	"      UNION ALL SELECT c.b FROM pg_temp.ndd_pair_candidates c) u(id)"

/*
 * across shards, the texts of the candidates only, fetched by id from each
 * shard: %1$s the table, %2$s the id column, %3$s the verify column; $1 the ids
 */
#define PAIRS_SHARD_TEXTS_SQL \
	"\n" \
	"            CREATE TEMP TABLE ndd_pair_texts AS\n" \
	"            SELECT t.%2$s::pg_catalog.int8 AS ndd_pair_id, t.%3$s\n" \
	"            FROM %1$s t\n" \
	"            WHERE t.%2$s::pg_catalog.int8 OPERATOR(pg_catalog.=) ANY ($1)"

/*
 * Step 4: %1$s where the rows are, %2$s their id, %3$s the sketch column,
 * %4$s the similarity and distance of s.sa, s.sb, %5$s whether that pair
 * v(similarity, distance) qualifies: each pair is scored once.
 */
#define PAIRS_QUALIFY_SQL \
	"\n" \
	"        SELECT c.a, c.b, v.similarity, v.distance\n" \
	"        FROM pg_temp.ndd_pair_candidates c\n" \
	"        JOIN %1$s ta ON ta.%2$s::pg_catalog.int8 OPERATOR(pg_catalog.=) c.a\n" \
	"        JOIN %1$s tb ON tb.%2$s::pg_catalog.int8 OPERATOR(pg_catalog.=) c.b,\n" \
	"        -- after the pair is joined, never as a filter of a ta x tb join\n" \
	"        LATERAL (SELECT %4$s FROM (SELECT ta.%3$s AS sa, tb.%3$s AS sb) s\n" \
	"                 OFFSET 0) v(similarity, distance)\n" \
	"        WHERE %5$s"

/*
 * With verify_column, the exact Jaccard of the texts, shingled as the
 * sketches were (simhash candidates use jaccard()'s defaults), each text
 * once however many candidates it is in: the candidates the estimate
 * keeps (%s the query above), the shingle set of each text among them, then
 * the pairs whose sets reach the threshold.
 */
#define PAIRS_KEPT_SQL \
	"CREATE TEMP TABLE ndd_pair_kept AS %s"

/*
 * The sets go out of line uncompressed: hashes do not compress, trying cost
 * about as much as the shingling, and a join then carries pointers to them
 * rather than the sets (kept in the row, they made the hash joins spill).
 */
#define PAIRS_SETS_TABLE_SQL \
	"CREATE TEMP TABLE ndd_pair_sets (id pg_catalog.int8, shingles pg_catalog.int8[])"
#define PAIRS_SETS_STORAGE_SQL \
	"ALTER TABLE pg_temp.ndd_pair_sets ALTER COLUMN shingles SET STORAGE EXTERNAL"

/*
 * %1$s where the texts are, %2$s their id, %3$s the verify column, %4$s ndd;
 * $1 shingle_size, $2 unit.  The text is cast to text: a varchar, char(n) or
 * domain column passed bare would let an overload on its own type, planted
 * beside ndd_shingle_set, be called instead.
 */
#define PAIRS_SETS_SQL \
	"\n" \
	"            INSERT INTO pg_temp.ndd_pair_sets (id, shingles)\n" \
	"            SELECT t.%2$s::pg_catalog.int8, %4$s.ndd_shingle_set(t.%3$s::pg_catalog.text, $1, $2)\n" \
	"            FROM %1$s t\n" \
	"            WHERE t.%2$s::pg_catalog.int8 OPERATOR(pg_catalog.=) ANY (\n" \
	"                SELECT k.a FROM pg_temp.ndd_pair_kept k\n" \
	"                UNION SELECT k.b FROM pg_temp.ndd_pair_kept k)"

/* %s ndd; $1 the threshold */
#define PAIRS_VERIFY_SQL \
	"\n" \
	"            SELECT k.a, k.b, v.j, k.distance\n" \
	"            FROM pg_temp.ndd_pair_kept k\n" \
	"            JOIN pg_temp.ndd_pair_sets sa ON sa.id OPERATOR(pg_catalog.=) k.a\n" \
	"            JOIN pg_temp.ndd_pair_sets sb ON sb.id OPERATOR(pg_catalog.=) k.b,\n" \
	"            -- once per pair, and only after the pair is joined (OFFSET 0\n" \
	"            -- keeps the planner from copying the call into the filter)\n" \
	"            LATERAL (SELECT %s.ndd_shingle_set_jaccard(sa.shingles, sb.shingles) AS j OFFSET 0) v\n" \
	"            WHERE v.j OPERATOR(pg_catalog.>=) $1"

typedef struct Pairs
{
	Oid			relid;
	const char *tbl;			/* the table as regclass shows it */
	const char *rel_name;		/* as error messages name it */
	const char *ndd;			/* the names, quoted */
	const char *sketch;
	const char *id;
	const char *sketch_name;	/* the columns as given */
	const char *verify_name;	/* NULL without verification */
	const char *id_name;
	double		threshold;
	int32		max_distance;
	bool		simhash;
	bool		progress;
	TimestampTz started;

	/* distributed by Citus, by hash: map-reduce (pairs_citus.c) */
	bool		citus;

	/* the leaf partitions, when one is a foreign table */
	bool		sharded;
	List	   *leaves;			/* of char *, as regclass shows them */
	const char *first_rows;		/* a relation whose first rows are cheap */

	/* the sketches' settings (minhash) */
	char	   *probe;			/* NULL: no sketch at all */
	int32		num_perm;
	char	   *unit;
	int32		shingle_size;
	int32		seed;

	/* what steps 1-4 run */
	SketchRule	rule;			/* the kind's fragments and its keys */
	char	   *keys_of;		/* the bucket keys of row t */
	char	   *summary;		/* a small summary of row t's sketch */
	const char *summary_type;
	char	   *close_enough;	/* a necessary test on summaries x, y */
	char	   *score;			/* similarity and distance of s.sa, s.sb */
	char	   *keep;			/* which of those qualify */

	Datum		collisions;		/* the filter, a bytea */
	bool		collisions_null;
	const char *rows_of;		/* where steps 2-4 read sketches */
	const char *row_id;
	const char *texts_of;		/* where verification reads texts */
	const char *text_id;
} Pairs;

/* Run one statement of near_duplicate_pairs. */
#define Exec(sql, nargs, types, args, nulls) \
	RunStatement("near_duplicate_pairs", sql, nargs, types, args, nulls)

/* The first column of the first row of the last statement; NULL: none. */
static Datum
FirstValue(bool *isnull)
{
	Datum		value;

	if (SPI_processed == 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	value = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, isnull);
	if (*isnull)
		return (Datum) 0;
	return datumCopy(value, TupleDescAttr(SPI_tuptable->tupdesc, 0)->attbyval,
					 TupleDescAttr(SPI_tuptable->tupdesc, 0)->attlen);
}

static char *
ElapsedText(Pairs *p)
{
	return psprintf("%s so far",
					DatumGetCString(DirectFunctionCall1(interval_out,
														DirectFunctionCall2(timestamp_mi,
																			TimestampTzGetDatum(GetCurrentTimestamp()),
																			TimestampTzGetDatum(p->started)))));
}

/* each leaf in format (%1$s a column or ndd, %2$s the leaf, ...), joined */
static char *
OverLeaves(Pairs *p, const char *format, const char *a, const char *c, const char *d,
		   bool leaf_first)
{
	StringInfoData sql;
	ListCell   *lc;

	initStringInfo(&sql);
	foreach(lc, p->leaves)
	{
		if (foreach_current_index(lc) > 0)
			appendStringInfoString(&sql, PAIRS_UNION_ALL);
		if (leaf_first)
			appendStringInfo(&sql, format, (char *) lfirst(lc), a, c, d);
		else
			appendStringInfo(&sql, format, a, (char *) lfirst(lc), c, d);
	}
	return sql.data;
}

/* Step 0: the arguments, in the order the checks were always made. */
static void
CheckArguments(FunctionCallInfo fcinfo, Pairs *p)
{
	Oid			ndd_nsp = NddNamespace(fcinfo->flinfo->fn_oid);
	SketchColumn sketch;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("tbl, sketch_column and id_column must not be null")));
	p->relid = PG_GETARG_OID(0);
	p->sketch_name = NameStr(*PG_GETARG_NAME(1));
	p->threshold = PG_ARGISNULL(3) ? ndd_similarity_threshold : PG_GETARG_FLOAT8(3);
	p->verify_name = PG_ARGISNULL(4) ? NULL : NameStr(*PG_GETARG_NAME(4));
	p->progress = !PG_ARGISNULL(5) && PG_GETARG_BOOL(5);
	p->max_distance = PG_ARGISNULL(6) ? ndd_hamming_threshold : PG_GETARG_INT32(6);
	NddCheckThreshold(p->threshold);
	ResolveSketchColumn(p->relid, p->sketch_name, ndd_nsp,
						SKETCH_MINHASH | SKETCH_SIMHASH, &sketch);
	p->simhash = sketch.kind == SKETCH_SIMHASH;
	p->rel_name = get_rel_name(p->relid);
	if (p->verify_name)
	{
		Oid			type;

		/* verification compares the exact Jaccard similarity of texts */
		ResolveColumn(p->relid, p->verify_name, &type);
		/* a domain counts as its base type */
		type = getBaseType(type);
		if (type != TEXTOID && type != VARCHAROID && type != BPCHAROID)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" of relation \"%s\" is not of a text type",
							p->verify_name, p->rel_name),
					 errdetail("Verification compares the exact Jaccard similarity of the texts.")));
	}
	p->ndd = quote_identifier(get_namespace_name(ndd_nsp));
	p->tbl = DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(p->relid)));
	p->sketch = quote_identifier(p->sketch_name);
	p->id_name = NameStr(*PG_GETARG_NAME(2));
	p->id = quote_identifier(p->id_name);
	p->rows_of = p->texts_of = p->tbl;
	p->row_id = p->text_id = p->id;
}

/*
 * Step 0: a table partitioned over postgres_fdw shards: each shard computes
 * its keys and its part of the filter, and sends only the rows that have a
 * key that may collide (docs/operations.md, "Across shards (postgres_fdw)").
 */
static void
FindLeaves(Pairs *p)
{
	Oid			types[1] = {REGCLASSOID};
	Datum		args[1] = {ObjectIdGetDatum(p->relid)};

	Exec(PAIRS_LEAVES_SQL, 1, types, args, NULL);
	p->sharded = false;
	p->leaves = NIL;
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		foreign = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull);

		p->leaves = lappend(p->leaves, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
		if (!isnull && DatumGetBool(foreign))
			p->sharded = true;
	}
	if (p->sharded)
		p->first_rows = psprintf("(%s)", OverLeaves(p, PAIRS_FIRST_ROW_OF_LEAF, p->sketch, NULL, NULL, false));
	else
		p->first_rows = p->tbl;
}

/*
 * Step 0: the fragments of steps 1-4, from the kind's module (sketch_sql.h)
 * once its keys are planned.
 */
static void
TakeFragments(Pairs *p)
{
	const SketchSql *sql = p->rule.sql;
	const char *s = psprintf("t.%s", p->sketch);

	p->keys_of = sql->keys(&p->rule, s);
	p->summary = sql->summary(&p->rule, s);
	p->summary_type = sql->summary_type(&p->rule);
	p->close_enough = sql->close_enough(&p->rule, "x.summary", "y.summary");
	p->score = sql->report(&p->rule, "s.sa", "s.sb");
	p->keep = sql->report_qualifies(&p->rule, "v.similarity", "v.distance");
}

/* Step 0, simhash: block keys within max_distance bits. */
static void
PlanSimhash(Pairs *p)
{
	int32		k = p->max_distance;

	NddCheckMaxDistance(k);
	SketchRuleInit(&p->rule, SKETCH_SIMHASH, p->ndd, p->threshold, k);
	SketchRulePlanKeys(&p->rule, 0, 0.0);
	TakeFragments(p);
	if (p->progress)
		ereport(NOTICE, (errmsg("ndd: fingerprints of %s within %d bits", p->tbl, k)));
}

static void
MixedSketches(Pairs *p, const char *detail)
{
	DiscoveryMixedSketches(p->sketch_name, p->rel_name, detail);
}

/*
 * Across shards, each shard compares its sketches with the probe, in a
 * subtransaction: similarity() fails there on a sketch made otherwise.
 */
static void
CheckShardSettings(Pairs *p)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	SketchRule	kind;
	char	   *sql;

	SketchRuleInit(&kind, SKETCH_MINHASH, p->ndd, p->threshold, 0);
	sql = psprintf(PAIRS_SUM_SQL,
				   OverLeaves(p, PAIRS_SHARD_SETTINGS_OF_LEAF, p->sketch,
							  kind.sql->score(&kind, psprintf("t.%s", p->sketch),
											  psprintf("%s::%s.minhash", quote_literal_cstr(p->probe), p->ndd)),
							  NULL, false));

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		Exec(sql, 0, NULL, NULL, NULL);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		if (edata->sqlerrcode != ERRCODE_INVALID_PARAMETER_VALUE)
			ReThrowError(edata);
		MixedSketches(p, psprintf("A shard reported: %s", edata->detail ? edata->detail : ""));
	}
	PG_END_TRY();
}

/*
 * Step 0, minhash: the banding suits the table's sketches, so take the first
 * one's settings; one banding suits one kind of sketch, so every sketch must
 * be made like the first, or pairs among the others would be missed.
 * Returns false when there is no sketch at all.  The engine checks every
 * sketch in its first pass instead.
 */
static bool
ReadSettings(Pairs *p, bool engine)
{
	Oid			types[4] = {TEXTOID, TEXTOID, INT4OID, INT4OID};
	Datum		args[4];
	bool		isnull;
	Datum		other;

	Exec(psprintf(PAIRS_PROBE_SQL, p->sketch, p->first_rows), 0, NULL, NULL, NULL);
	(void) FirstValue(&isnull);
	if (isnull)
		return false;
	p->probe = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	args[0] = CStringGetTextDatum(p->probe);
	Exec(psprintf(PAIRS_SETTINGS_SQL, p->ndd), 1, types, args, NULL);
	p->num_perm = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	p->unit = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
	p->shingle_size = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));
	p->seed = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4, &isnull));

	if (p->sharded)
		CheckShardSettings(p);
	else if (!engine)
	{
		types[0] = INT4OID;
		types[1] = TEXTOID;
		args[0] = Int32GetDatum(p->num_perm);
		args[1] = CStringGetTextDatum(p->unit);
		args[2] = Int32GetDatum(p->shingle_size);
		args[3] = Int32GetDatum(p->seed);
		Exec(psprintf(PAIRS_OTHER_SETTINGS_SQL, p->tbl, p->ndd, p->sketch), 4, types, args, NULL);
		other = FirstValue(&isnull);
		if (!isnull)
			DiscoveryMixedSettings(p->sketch_name, p->rel_name,
								   psprintf("num_perm=%d, unit=%s, shingle_size=%d, seed=%d",
											p->num_perm, p->unit, p->shingle_size, p->seed),
								   TextDatumGetCString(other));
	}
	if (p->verify_name && strcmp(p->unit, "word") != 0 && strcmp(p->unit, "char") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("only sketches of a text's plain shingles can be verified against a text column"),
				 errdetail("Column \"%s\" of relation \"%s\" holds sketches with unit=%s.",
						   p->sketch_name, p->rel_name, p->unit)));
	return true;
}

/* Step 0, minhash: the banding; with verification, 3 standard deviations lower. */
static void
PlanMinhash(Pairs *p)
{
	SketchRule *rule = &p->rule;

	SketchRuleInit(rule, SKETCH_MINHASH, p->ndd, p->threshold, 0);
	SketchRulePlanKeys(rule, p->num_perm, p->verify_name ? LSH_VERIFY_MARGIN : 0.0);
	TakeFragments(p);
	if (p->progress)
		ereport(NOTICE,
				(errmsg("ndd: %d bands of %d rows over %s, at least %d matching bands per candidate",
						rule->bands, rule->rows, p->tbl, rule->required)));
}

/*
 * Step 1: the keys the filter is sized for, the rows expected (reltuples,
 * else counted) times the first row's keys: a table never analysed
 * (reltuples -1), a view or a partitioned table is counted, or the filter
 * would take all of work_mem however few its rows.  Unknown: keys_null.
 */
static int64
ExpectedKeys(Pairs *p, int64 *n, bool *n_null, bool *keys_null)
{
	Oid			types[1] = {OIDOID};
	Datum		args[1] = {ObjectIdGetDatum(p->relid)};
	Datum		value;
	int32		keys_per_row = 0;

	Exec(psprintf(PAIRS_KEYS_PER_ROW_SQL, p->keys_of, p->first_rows, p->sketch), 0, NULL, NULL, NULL);
	value = FirstValue(keys_null);
	if (!*keys_null)
		keys_per_row = DatumGetInt32(value);
	*n = 0;
	Exec(PAIRS_RELTUPLES_SQL, 1, types, args, NULL);
	value = FirstValue(n_null);
	if (!*n_null)
		*n = DatumGetInt64(value);
	if (p->sharded)
	{
		Exec(psprintf(PAIRS_SHARD_SUM_SQL, OverLeaves(p, PAIRS_SHARD_COUNT_OF_LEAF, p->sketch, NULL, NULL, true)),
			 0, NULL, NULL, NULL);
		value = FirstValue(n_null);
		if (!*n_null)
			*n = DatumGetInt64(value);
		return (*n_null ? 1 : Max(*n, 1)) * (int64) keys_per_row;
	}
	if (*n_null || *n <= 0)
	{
		Exec(psprintf(PAIRS_COUNT_SQL, p->tbl, p->sketch), 0, NULL, NULL, NULL);
		value = FirstValue(n_null);
		*n = *n_null ? 0 : DatumGetInt64(value);
		*n_null = false;
	}
	return Max(*n, 1) * (int64) keys_per_row;
}

/* Step 1: which keys occur more than once. */
static void
CountKeys(Pairs *p)
{
	Oid			types[1] = {INT8OID};
	Datum		args[1];
	char		nulls[1] = {' '};
	bool		keys_null;
	int64		n;
	bool		n_null;

	args[0] = Int64GetDatum(ExpectedKeys(p, &n, &n_null, &keys_null));
	nulls[0] = keys_null ? 'n' : ' ';
	if (p->sharded)
	{
		Datum		bits;
		bool		isnull;

		Exec(psprintf(PAIRS_FILTER_BITS_SQL, p->ndd), 1, types, args, nulls);
		bits = FirstValue(&isnull);
		args[0] = bits;
		nulls[0] = isnull ? 'n' : ' ';
		Exec(psprintf(PAIRS_MERGE_SQL, p->ndd,
					  OverLeaves(p, PAIRS_SHARD_PARTIAL_OF_LEAF, p->ndd, p->keys_of, p->sketch, false)),
			 1, types, args, nulls);
	}
	else
		Exec(psprintf(PAIRS_COLLISIONS_SQL, p->ndd, p->keys_of, p->tbl, p->sketch), 1, types, args, nulls);
	p->collisions = FirstValue(&p->collisions_null);
	if (p->progress)
		ereport(NOTICE,
				(errmsg("ndd: 1/4 keys counted, in a filter of %s kB for about %s rows",
						p->collisions_null ? "<NULL>" :
						psprintf("%d", (int) (VARSIZE_ANY_EXHDR(DatumGetPointer(p->collisions)) / 1024)),
						n_null ? "<NULL>" : psprintf(INT64_FORMAT, n)),
				 errdetail("%s", ElapsedText(p))));
}

/* every temporary table of steps 2-4 */
static const char *const PAIRS_TEMP_TABLES[] = {
	"ndd_pair_keys", "ndd_pair_candidates", "ndd_pair_rows", "ndd_pair_texts",
	"ndd_pair_kept", "ndd_pair_sets",
};

/* a table left by an earlier call of this session that failed */
static void
DropLeftover(const char *name)
{
	Oid			relid = RelnameGetRelid(name);

	if (OidIsValid(relid) && isTempNamespace(get_rel_namespace(relid)))
		Exec(psprintf("DROP TABLE pg_temp.%s", name), 0, NULL, NULL, NULL);
}

/* Step 2: the keys that may collide, with their rows. */
static void
KeepKeys(Pairs *p)
{
	Oid			types[2] = {BYTEAOID, INT4OID};
	Datum		args[2] = {p->collisions, Int32GetDatum(p->rule.required)};
	char		nulls[2] = {p->collisions_null ? 'n' : ' ', ' '};

	for (int i = 0; i < lengthof(PAIRS_TEMP_TABLES); i++)
		DropLeftover(PAIRS_TEMP_TABLES[i]);
	if (p->sharded)
	{
		Exec(psprintf(PAIRS_SHARD_ROWS_SQL, p->tbl, p->id, p->ndd, p->keys_of, p->sketch),
			 2, types, args, nulls);
		p->rows_of = "pg_temp.ndd_pair_rows";
		p->row_id = "ndd_pair_id";
		if (p->progress)
			ereport(NOTICE,
					(errmsg("ndd: 2/4 " UINT64_FORMAT " rows sent by the shards", SPI_processed),
					 errdetail("%s", ElapsedText(p))));
	}
	Exec(psprintf(PAIRS_KEYS_TABLE_SQL, p->summary_type), 0, NULL, NULL, NULL);
	args[1] = Int32GetDatum(p->rule.required - 1);
	Exec(psprintf(PAIRS_KEYS_SQL, p->rows_of, p->row_id, p->ndd, p->keys_of, p->sketch, p->summary),
		 2, types, args, nulls);
	if (p->progress)
	{
		bool		isnull;
		int64		keys;

		Exec(PAIRS_KEYS_COUNT_SQL, 0, NULL, NULL, NULL);
		keys = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		ereport(NOTICE,
				(errmsg("ndd: 2/4 " INT64_FORMAT " keys may be shared", isnull ? 0 : keys),
				 errdetail("%s", ElapsedText(p))));
	}
	Exec("ANALYZE pg_temp.ndd_pair_keys", 0, NULL, NULL, NULL);
}

/* Step 3: rows that share a kept key, and whose summaries pass. */
static void
FindCandidates(Pairs *p)
{
	uint64		n;

	Exec(PAIRS_CANDIDATES_TABLE_SQL, 0, NULL, NULL, NULL);
	Exec(psprintf(PAIRS_CANDIDATES_SQL, p->close_enough), 0, NULL, NULL, NULL);
	n = SPI_processed;
	Exec("DROP TABLE pg_temp.ndd_pair_keys", 0, NULL, NULL, NULL);
	Exec("ANALYZE pg_temp.ndd_pair_candidates", 0, NULL, NULL, NULL);
	if (p->sharded && p->verify_name)
	{
		Oid			types[1] = {INT8ARRAYOID};
		Datum		args[1];
		char		nulls[1];
		bool		isnull;

		Exec(PAIRS_CANDIDATE_IDS_SQL, 0, NULL, NULL, NULL);
		args[0] = FirstValue(&isnull);
		nulls[0] = isnull ? 'n' : ' ';
		Exec(psprintf(PAIRS_SHARD_TEXTS_SQL, p->tbl, p->id, quote_identifier(p->verify_name)),
			 1, types, args, nulls);
		p->texts_of = "pg_temp.ndd_pair_texts";
		p->text_id = "ndd_pair_id";
	}
	if (p->progress)
		ereport(NOTICE,
				(errmsg("ndd: 3/4 " UINT64_FORMAT " candidate pairs", n),
				 errdetail("%s", ElapsedText(p))));
}

/*
 * Step 4 with verify_column: the candidates the estimate keeps, and the
 * shingle set of each of their texts, made once.
 */
static void
ShingleKept(Pairs *p, const char *qualify)
{
	Oid			types[2] = {INT4OID, TEXTOID};
	Datum		args[2];

	Exec(psprintf(PAIRS_KEPT_SQL, qualify), 0, NULL, NULL, NULL);
	Exec("ANALYZE pg_temp.ndd_pair_kept", 0, NULL, NULL, NULL);
	args[0] = Int32GetDatum(p->unit ? p->shingle_size : NDD_SHINGLE_SIZE_DEFAULT);
	args[1] = CStringGetTextDatum(p->unit ? p->unit : "word");
	Exec(PAIRS_SETS_TABLE_SQL, 0, NULL, NULL, NULL);
	Exec(PAIRS_SETS_STORAGE_SQL, 0, NULL, NULL, NULL);
	Exec(psprintf(PAIRS_SETS_SQL, p->texts_of, p->text_id, quote_identifier(p->verify_name), p->ndd),
		 2, types, args, NULL);
	/* the id alone: statistics of the arrays' elements would cost more than the sets */
	Exec("ANALYZE pg_temp.ndd_pair_sets (id)", 0, NULL, NULL, NULL);
}

/* Step 4: copy every qualifying pair into the answer, a batch at a time. */
static void
EmitPairs(Pairs *p, Tuplestorestate *out, TupleDesc out_desc)
{
	Oid			types[1] = {FLOAT8OID};
	Datum		args[1] = {Float8GetDatum(p->threshold)};
	char	   *sql;
	Portal		portal;
	uint64		n;

	sql = psprintf(PAIRS_QUALIFY_SQL, p->rows_of, p->row_id, p->sketch, p->score, p->keep);
	if (p->verify_name)
	{
		ShingleKept(p, sql);
		portal = SPI_cursor_open_with_args(NULL, psprintf(PAIRS_VERIFY_SQL, p->ndd), 1, types, args,
										   NULL, false, 0);
	}
	else
		portal = SPI_cursor_open_with_args(NULL, sql, 0, NULL, NULL, NULL, false, 0);
	n = CopyCursor(portal, out, out_desc);

	Exec("DROP TABLE pg_temp.ndd_pair_candidates", 0, NULL, NULL, NULL);
	if (p->verify_name)
		Exec("DROP TABLE pg_temp.ndd_pair_kept, pg_temp.ndd_pair_sets", 0, NULL, NULL, NULL);
	if (p->sharded)
	{
		Exec("DROP TABLE pg_temp.ndd_pair_rows", 0, NULL, NULL, NULL);
		if (p->verify_name)
			Exec("DROP TABLE pg_temp.ndd_pair_texts", 0, NULL, NULL, NULL);
	}
	if (p->progress)
		ereport(NOTICE,
				(errmsg("ndd: 4/4 " UINT64_FORMAT " pairs", n),
				 errdetail("%s", ElapsedText(p))));
}

/*
 * The engine's progress: a NOTICE with the time so far, as the steps above,
 * and until the end the time left, from the share of the work done.
 */
static void
EngineProgress(void *arg, const char *message, double done)
{
	Pairs	   *p = (Pairs *) arg;
	long		secs;
	int			usecs;
	double		elapsed;

	if (done >= 1.0 || done <= 0.0)
	{
		ereport(NOTICE, (errmsg_internal("%s", message), errdetail("%s", ElapsedText(p))));
		return;
	}
	TimestampDifference(p->started, GetCurrentTimestamp(), &secs, &usecs);
	elapsed = (double) secs + usecs / 1e6;
	ereport(NOTICE,
			(errmsg_internal("%s", message),
			 errdetail("%s, about %.0f s left", ElapsedText(p), ceil(elapsed * (1.0 - done) / done))));
}

/*
 * Step 0: whether the discovery engine answers (discovery.h): by
 * ndd.discovery_path, where it can read the table as the SQL path does.
 */
static bool
UseEngine(Pairs *p)
{
	const char *why = NULL;

	if (ndd_discovery_path == DISCOVERY_PATH_SQL)
		return false;
	if (p->sharded)
		why = "The table is partitioned over shards";
	else if (p->citus || CitusKnows(p->relid))
		why = "The table is distributed by Citus";
	else
		(void) DiscoveryEngineReads(p->relid, p->sketch_name, p->id_name, p->verify_name, &why);
	if (why && ndd_discovery_path == DISCOVERY_PATH_ENGINE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the discovery engine cannot answer for relation \"%s\"", p->rel_name),
				 errdetail("%s.", why),
				 errhint("Set ndd.discovery_path to auto.")));
	return why == NULL;
}

/* The discovery engine instead of steps 1-4: the same keys, tests and scores. */
static void
RunEngine(Pairs *p, Tuplestorestate *out, TupleDesc out_desc)
{
	DiscoveryRequest req = {0};
	bool		keys_null;
	bool		n_null;

	req.relid = p->relid;
	req.sketch_name = p->sketch_name;
	req.id_name = p->id_name;
	req.relation_name = p->rel_name;
	req.simhash = p->simhash;
	/* shingled as ShingleKept shingles for the SQL path */
	req.verify_name = p->verify_name;
	req.verify_unit = p->unit ? p->unit : "word";
	req.verify_shingle_size = p->unit ? p->shingle_size : NDD_SHINGLE_SIZE_DEFAULT;
	req.threshold = p->threshold;
	req.max_distance = p->max_distance;
	if (!p->simhash)
	{
		req.bands = p->rule.bands;
		req.rows = p->rule.rows;
		req.required = p->rule.required;
		req.lower = p->rule.lower;
		req.check_settings = true;
		req.num_perm = p->num_perm;
		req.source = MinHashSourceFromName(p->unit, strlen(p->unit));
		req.shingle_size = p->shingle_size;
		req.seed = p->seed;
	}
	req.drop_frequent = p->rule.required - 1;
	req.expected_keys = ExpectedKeys(p, &req.expected_rows, &n_null, &keys_null);
	if (keys_null)
		req.expected_keys = 0;
	req.progress = p->progress ? EngineProgress : NULL;
	req.arg = p;
	(void) DiscoveryEngineRun(&req, out, out_desc);
}

static void
CitusProgress(void *arg, const char *message)
{
	ereport(NOTICE, (errmsg_internal("%s", message), errdetail("%s", ElapsedText((Pairs *) arg))));
}

/* What pairs_citus.c needs of the call. */
static void
CitusOf(Pairs *p, CitusPairs *c)
{
	memset(c, 0, sizeof(CitusPairs));
	c->relid = p->relid;
	c->tbl = p->tbl;
	c->id_name = p->id_name;
	c->sketch_name = p->sketch_name;
	c->verify_name = p->verify_name;
	c->kind = p->simhash ? SKETCH_SIMHASH : SKETCH_MINHASH;
	c->rule = &p->rule;
	c->threshold = p->threshold;
	/* shingled as ShingleKept shingles on one server */
	c->unit = p->unit ? p->unit : "word";
	c->shingle_size = p->unit ? p->shingle_size : NDD_SHINGLE_SIZE_DEFAULT;
	c->progress = p->progress ? CitusProgress : NULL;
	c->arg = p;
}

/*
 * Step 0: the arguments, the shards, the path, and what the sketches are;
 * false when the table has no sketch at all.  SPI is connected.
 */
static bool
PreparePairs(FunctionCallInfo fcinfo, Pairs *p, bool *engine)
{
	p->started = GetCurrentTimestamp();
	CheckArguments(fcinfo, p);
	FindLeaves(p);
	p->citus = !p->sharded && CitusHashDistributed(p->relid);
	*engine = UseEngine(p);
	if (p->simhash)
		PlanSimhash(p);
	else
	{
		if (!ReadSettings(p, *engine))
			return false;
		PlanMinhash(p);
	}
	return true;
}

uint64
PairsOnCitusInto(FunctionCallInfo fcinfo, const char *into)
{
	Pairs		p = {0};
	CitusPairs	c;
	bool		engine;

	if (!PreparePairs(fcinfo, &p, &engine))
		return 0;
	Assert(p.citus && !engine);
	CitusOf(&p, &c);
	return CitusPairsInto(&c, into);
}

PG_FUNCTION_INFO_V1(near_duplicate_pairs);
Datum
near_duplicate_pairs(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Pairs		p = {0};
	bool		engine;

	InitMaterializedSRF(fcinfo, 0);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "near_duplicate_pairs: SPI_connect failed");

	/* 0. the arguments, the shards, the path, and what the sketches are */
	if (!PreparePairs(fcinfo, &p, &engine))
	{
		SPI_finish();
		return (Datum) 0;
	}

	if (engine)
		RunEngine(&p, rsinfo->setResult, rsinfo->setDesc);
	else if (p.citus)
	{
		/* steps 1-4 as a map-reduce that Citus runs on its workers */
		CitusPairs	c;

		CitusOf(&p, &c);
		(void) CitusPairsRun(&c, rsinfo->setResult, rsinfo->setDesc);
	}
	else
	{
		/* 1. which keys occur more than once */
		CountKeys(&p);
		/* 2. the keys that may collide, with their rows */
		KeepKeys(&p);
		/* 3. rows that share a kept key, and whose summaries pass */
		FindCandidates(&p);
		/* 4. the candidates that qualify */
		EmitPairs(&p, rsinfo->setResult, rsinfo->setDesc);
	}

	SPI_finish();
	return (Datum) 0;
}
