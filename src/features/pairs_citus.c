/*
 * pairs_citus.c
 *		near_duplicate_pairs on a table Citus distributes by hash: the same
 *		keys, tests and scores as on one server, as a map-reduce that Citus
 *		runs on its workers (docs/operations.md, "Distributing with Citus").
 *
 * On the coordinator a distributed table is an empty shell, and Citus
 * cannot plan the one-server path's join of candidates with the table
 * twice.  So each step is a statement that Citus can push to the shards,
 * and the rows move between steps by the distribution column of the next
 * step's table (Citus repartitions an INSERT ... SELECT on the workers):
 *
 *	0. Work tables, distributed: keys by key; pairs of rows by their first
 *	   row, beside the table's own shards (the table itself when it is
 *	   distributed by its bigint id, else a copy of its ids and sketches).
 *	1. Each row's bucket keys and summary, sent to the shard of the key.
 *	2. Where a key's rows meet: every two of them whose summaries pass,
 *	   sent to the shard of the first row.
 *	3. There, the pairs that share as many keys as a qualifying pair is
 *	   sure to share (LSH banding, exact by pigeonhole).
 *	4. Each candidate takes its first row's sketch (and text) to the shard
 *	   of its second row, where it is scored (and verified); the pairs that
 *	   qualify come back to the coordinator.
 *
 * The work tables are dropped at the end; an error or a cancel rolls their
 * creation back with the transaction, on every node.  They live in the
 * table's schema, named at random, and are created, never reused: a table
 * of the same name makes the call fail.  Every name is quoted and every
 * function and operator qualified, as on one server.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "common/pg_prng.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "features/pairs_citus.h"
#include "sqlgen/spi_run.h"

/* the hash-distributed table's distribution column ($1 the table) */
#define CITUS_DISTRIBUTION_SQL \
	"SELECT pg_catalog.column_to_column_name(d.logicalrelid, d.partkey)\n" \
	"FROM pg_catalog.pg_dist_partition d\n" \
	"WHERE d.logicalrelid::pg_catalog.oid OPERATOR(pg_catalog.=) $1\n" \
	"  AND d.partmethod OPERATOR(pg_catalog.=) 'h'::pg_catalog.\"char\""

/* $1 a work table, $2 its distribution column, $3 what to colocate it with */
#define CITUS_DISTRIBUTE_SQL \
	"SELECT pg_catalog.create_distributed_table($1, $2, colocate_with => $3)"

/* or $3 its shards, as many as the table's ($1) */
#define CITUS_DISTRIBUTE_COUNTED_SQL \
	"SELECT pg_catalog.create_distributed_table($1, $2, shard_count => $3)"
#define CITUS_SHARD_COUNT_SQL \
	"SELECT pg_catalog.count(*)::pg_catalog.int4 FROM pg_catalog.pg_dist_shard s\n" \
	"WHERE s.logicalrelid::pg_catalog.oid OPERATOR(pg_catalog.=) $1"

/* step 0: the work tables; %1$s the name, %2$s a sketch type or the summary's */
#define CITUS_ROWS_TABLE_SQL \
	"CREATE TABLE %1$s (id pg_catalog.int8, sketch %2$s, body pg_catalog.text)"
#define CITUS_KEYS_TABLE_SQL \
	"CREATE TABLE %1$s (band_key pg_catalog.int8, id pg_catalog.int8, summary %2$s)"
#define CITUS_PAIRS_TABLE_SQL \
	"CREATE TABLE %1$s (id_a pg_catalog.int8, id_b pg_catalog.int8)"
#define CITUS_HALVES_TABLE_SQL \
	"CREATE TABLE %1$s (id_a pg_catalog.int8, id_b pg_catalog.int8, sketch_a %2$s, body_a pg_catalog.text)"

/*
 * step 0, a table distributed otherwise: its ids, sketches and texts by id.
 * %1$s the copy, %2$s the table, %3$s its id, %4$s its sketch column, %5$s
 * the text of t (or NULL).
 */
#define CITUS_COPY_ROWS_SQL \
	"INSERT INTO %1$s (id, sketch, body)\n" \
	"SELECT t.%3$s::pg_catalog.int8, t.%4$s, %5$s FROM %2$s t\n" \
	"WHERE t.%4$s IS NOT NULL AND t.%3$s IS NOT NULL"

/*
 * step 1: %1$s the keys' table, %2$s the rows, %3$s their id, %4$s the keys
 * of row t, %5$s its summary, %6$s the sketch column
 */
#define CITUS_KEYS_SQL \
	"INSERT INTO %1$s (band_key, id, summary)\n" \
	"SELECT k.k, t.%3$s::pg_catalog.int8, %5$s\n" \
	"FROM %2$s t CROSS JOIN LATERAL pg_catalog.unnest(%4$s) k(k)\n" \
	"WHERE t.%6$s IS NOT NULL AND t.%3$s IS NOT NULL"

/* step 2: %1$s the pairs' table, %2$s the keys', %3$s the test of summaries x, y */
#define CITUS_SHARED_SQL \
	"INSERT INTO %1$s (id_a, id_b)\n" \
	"SELECT x.id, y.id\n" \
	"FROM %2$s x JOIN %2$s y\n" \
	"  ON y.band_key OPERATOR(pg_catalog.=) x.band_key AND y.id OPERATOR(pg_catalog.>) x.id\n" \
	"WHERE %3$s"

/* step 3: %1$s the candidates' table, %2$s the pairs', %3$d the keys required */
#define CITUS_CANDIDATES_SQL \
	"INSERT INTO %1$s (id_a, id_b)\n" \
	"SELECT s.id_a, s.id_b FROM %2$s s GROUP BY s.id_a, s.id_b\n" \
	"HAVING pg_catalog.count(*) OPERATOR(pg_catalog.>=) %3$d::pg_catalog.int8"

/*
 * step 4: %1$s the halves' table, %2$s the candidates', %3$s the rows,
 * %4$s their id, %5$s the sketch column, %6$s the text of x (or NULL)
 */
#define CITUS_HALVES_SQL \
	"INSERT INTO %1$s (id_a, id_b, sketch_a, body_a)\n" \
	"SELECT c.id_a, c.id_b, x.%5$s, %6$s\n" \
	"FROM %2$s c JOIN %3$s x ON x.%4$s OPERATOR(pg_catalog.=) c.id_a"

/*
 * step 4, the answer: %1$s the halves, %2$s the rows, %3$s their id, %4$s
 * the similarity and distance of h.sketch_a and y's sketch, %5$s that they
 * qualify.  Verified: %6$s ndd, %7$s the text of y; $1 shingle_size, $2
 * unit, $3 the threshold.
 */
#define CITUS_ANSWER_SQL \
	"SELECT v.id_a, v.id_b, v.similarity, v.distance\n" \
	"FROM (SELECT h.id_a, h.id_b, %4$s\n" \
	"      FROM %1$s h JOIN %2$s y ON y.%3$s OPERATOR(pg_catalog.=) h.id_b\n" \
	"      WHERE %5$s) v(id_a, id_b, similarity, distance)"
#define CITUS_VERIFIED_SQL \
	"SELECT v.id_a, v.id_b, v.j, v.distance\n" \
	"FROM (SELECT h.id_a, h.id_b, %4$s,\n" \
	"             %6$s.ndd_shingle_set_jaccard(%6$s.ndd_shingle_set(h.body_a, $1, $2),\n" \
	"                                          %6$s.ndd_shingle_set(%7$s, $1, $2))\n" \
	"      FROM %1$s h JOIN %2$s y ON y.%3$s OPERATOR(pg_catalog.=) h.id_b\n" \
	"      WHERE %5$s) v(id_a, id_b, similarity, distance, j)\n" \
	"WHERE v.j OPERATOR(pg_catalog.>=) $3"

/* the work tables, each name quoted and qualified */
typedef struct WorkTables
{
	const char *rows;			/* NULL: the table itself */
	const char *copy_rows;		/* the statement that fills rows */
	const char *keys;
	const char *shared;
	const char *candidates;
	const char *halves;
} WorkTables;

/* where steps 1 and 4 read ids, sketches and texts */
typedef struct RowSource
{
	const char *rows;
	const char *id;
	const char *sketch;
	const char *text_of_x;		/* a text expression over x, and over y */
	const char *text_of_y;
} RowSource;

#define Exec(sql, nargs, types, args) \
	RunStatement("near_duplicate_pairs", sql, nargs, types, args, NULL)

static void
Progress(const CitusPairs *c, const char *message)
{
	if (c->progress)
		c->progress(c->arg, message);
}

/* The distribution column of a hash-distributed table; NULL otherwise. */
static char *
DistributionColumn(Oid relid)
{
	Oid			types[1] = {OIDOID};
	Datum		args[1] = {ObjectIdGetDatum(relid)};

	if (!OidIsValid(get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE)))
		return NULL;
	Exec(CITUS_DISTRIBUTION_SQL, 1, types, args);
	if (SPI_processed == 0)
		return NULL;
	return SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
}

bool
CitusHashDistributed(Oid relid)
{
	return DistributionColumn(relid) != NULL;
}

/*
 * Step 0: a new work table, distributed by column and colocated with
 * colocate_with (a table's name); or, without it, in as many shards as the
 * table (whose shards' count decides how the work is split).
 */
static void
Distribute(const CitusPairs *c, const char *create, const char *schema, const char *name,
		   const char *column, const char *colocate_with)
{
	Oid			types[3] = {REGCLASSOID, TEXTOID, TEXTOID};
	Datum		args[3];
	Oid			relid;
	bool		isnull;

	Exec(create, 0, NULL, NULL);
	relid = get_relname_relid(name, get_namespace_oid(schema, false));
	Assert(OidIsValid(relid));
	args[0] = ObjectIdGetDatum(relid);
	args[1] = CStringGetTextDatum(column);
	if (colocate_with)
	{
		args[2] = CStringGetTextDatum(colocate_with);
		Exec(CITUS_DISTRIBUTE_SQL, 3, types, args);
		return;
	}
	types[2] = OIDOID;
	args[2] = ObjectIdGetDatum(c->relid);
	Exec(CITUS_SHARD_COUNT_SQL, 1, &types[2], &args[2]);
	args[2] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	types[2] = INT4OID;
	Exec(CITUS_DISTRIBUTE_COUNTED_SQL, 3, types, args);
}

/* A work table's name, quoted and qualified: the call's prefix and its role. */
static const char *
WorkName(const char *schema, const char *prefix, const char *role, const char **bare)
{
	*bare = psprintf("%s_%s", prefix, role);
	return psprintf("%s.%s", quote_identifier(schema), quote_identifier(*bare));
}

/*
 * Step 0: the work tables, and where the rows are read.  The table itself
 * serves when it is distributed by its id of type bigint, with which the
 * pairs' tables can be colocated; else a copy of its ids, sketches and
 * texts, distributed by id.
 */
static void
CreateWorkTables(const CitusPairs *c, WorkTables *w, RowSource *src)
{
	const char *schema = get_namespace_name(get_rel_namespace(c->relid));
	const char *prefix = psprintf("ndd_pairs_%016llx",
								  (unsigned long long) pg_prng_uint64(&pg_global_prng_state));
	const char *ndd = c->rule->ndd;
	const char *sketch_type = psprintf("%s.%s", ndd, c->kind == SKETCH_SIMHASH ? "simhash" : "minhash");
	const char *colocate = c->tbl;
	const char *bare;
	char	   *column = DistributionColumn(c->relid);
	AttrNumber	id_att = get_attnum(c->relid, c->id_name);

	src->rows = c->tbl;
	src->id = quote_identifier(c->id_name);
	src->sketch = quote_identifier(c->sketch_name);
	w->rows = w->copy_rows = NULL;
	if (column == NULL || strcmp(column, c->id_name) != 0 ||
		get_atttype(c->relid, id_att) != INT8OID)
	{
		const char *text_of_t = c->verify_name ?
			psprintf("t.%s::pg_catalog.text", quote_identifier(c->verify_name)) : "NULL::pg_catalog.text";

		w->rows = WorkName(schema, prefix, "rows", &bare);
		Distribute(c, psprintf(CITUS_ROWS_TABLE_SQL, w->rows, sketch_type), schema, bare, "id", NULL);
		w->copy_rows = psprintf(CITUS_COPY_ROWS_SQL, w->rows, c->tbl, src->id, src->sketch, text_of_t);
		src->rows = colocate = w->rows;
		src->id = "id";
		src->sketch = "sketch";
		src->text_of_x = "x.body";
		src->text_of_y = "y.body";
	}
	else if (c->verify_name)
	{
		src->text_of_x = psprintf("x.%s::pg_catalog.text", quote_identifier(c->verify_name));
		src->text_of_y = psprintf("y.%s::pg_catalog.text", quote_identifier(c->verify_name));
	}
	else
		src->text_of_x = src->text_of_y = "NULL::pg_catalog.text";

	w->keys = WorkName(schema, prefix, "keys", &bare);
	Distribute(c, psprintf(CITUS_KEYS_TABLE_SQL, w->keys, c->rule->sql->summary_type(c->rule)),
			   schema, bare, "band_key", colocate);
	w->shared = WorkName(schema, prefix, "shared", &bare);
	Distribute(c, psprintf(CITUS_PAIRS_TABLE_SQL, w->shared), schema, bare, "id_a", colocate);
	w->candidates = WorkName(schema, prefix, "candidates", &bare);
	Distribute(c, psprintf(CITUS_PAIRS_TABLE_SQL, w->candidates), schema, bare, "id_a", colocate);
	w->halves = WorkName(schema, prefix, "halves", &bare);
	Distribute(c, psprintf(CITUS_HALVES_TABLE_SQL, w->halves, sketch_type), schema, bare, "id_b", colocate);
}

/* Steps 1-3: the candidates, in w->candidates (after the copy of the rows). */
static void
FindCandidates(const CitusPairs *c, const WorkTables *w, const RowSource *src)
{
	const SketchRule *rule = c->rule;
	const char *s = psprintf("t.%s", src->sketch);

	/* 0. the copy of the rows, if any, by id */
	if (w->copy_rows)
		Exec(w->copy_rows, 0, NULL, NULL);

	/* 1. each row's keys, by key */
	Exec(psprintf(CITUS_KEYS_SQL, w->keys, src->rows, src->id, rule->sql->keys(rule, s),
				  rule->sql->summary(rule, s), src->sketch), 0, NULL, NULL);
	Progress(c, psprintf("ndd: 1/4 " UINT64_FORMAT " keys sent to the shards of their keys", SPI_processed));

	/* 2. every two rows of a key whose summaries pass, by first row */
	Exec(psprintf(CITUS_SHARED_SQL, w->shared, w->keys,
				  rule->sql->close_enough(rule, "x.summary", "y.summary")), 0, NULL, NULL);
	Progress(c, psprintf("ndd: 2/4 " UINT64_FORMAT " pairs of rows share a key", SPI_processed));

	/* 3. the pairs that share enough keys */
	Exec(psprintf(CITUS_CANDIDATES_SQL, w->candidates, w->shared, rule->required), 0, NULL, NULL);
	Progress(c, psprintf("ndd: 3/4 " UINT64_FORMAT " candidate pairs", SPI_processed));
}

/* Step 4: the candidates scored (and verified) where their second rows are. */
static uint64
ScoreCandidates(const CitusPairs *c, const WorkTables *w, const RowSource *src,
				Tuplestorestate *out, TupleDesc out_desc)
{
	const SketchRule *rule = c->rule;
	const char *y = psprintf("y.%s", src->sketch);
	Oid			types[3] = {INT4OID, TEXTOID, FLOAT8OID};
	Datum		args[3];
	Portal		portal;

	Exec(psprintf(CITUS_HALVES_SQL, w->halves, w->candidates, src->rows, src->id, src->sketch,
				  src->text_of_x), 0, NULL, NULL);
	if (c->verify_name == NULL)
		portal = SPI_cursor_open_with_args(NULL,
										   psprintf(CITUS_ANSWER_SQL, w->halves, src->rows, src->id,
													rule->sql->report(rule, "h.sketch_a", y),
													rule->sql->qualifies(rule, "h.sketch_a", y)),
										   0, NULL, NULL, NULL, false, 0);
	else
	{
		args[0] = Int32GetDatum(c->shingle_size);
		args[1] = CStringGetTextDatum(c->unit);
		args[2] = Float8GetDatum(c->threshold);
		portal = SPI_cursor_open_with_args(NULL,
										   psprintf(CITUS_VERIFIED_SQL, w->halves, src->rows, src->id,
													rule->sql->report(rule, "h.sketch_a", y),
													rule->sql->qualifies(rule, "h.sketch_a", y),
													rule->ndd, src->text_of_y),
										   3, types, args, NULL, false, 0);
	}
	return CopyCursor(portal, out, out_desc);
}

uint64
CitusPairsRun(const CitusPairs *c, Tuplestorestate *out, TupleDesc out_desc)
{
	WorkTables	w;
	RowSource	src;
	uint64		n;

	/* 0. the work tables */
	CreateWorkTables(c, &w, &src);
	/* 1-3. the candidates */
	FindCandidates(c, &w, &src);
	/* 4. scored where their rows are */
	n = ScoreCandidates(c, &w, &src, out, out_desc);
	Exec(psprintf("DROP TABLE %s, %s, %s, %s%s%s", w.keys, w.shared, w.candidates, w.halves,
				  w.rows ? ", " : "", w.rows ? w.rows : ""), 0, NULL, NULL);
	Progress(c, psprintf("ndd: 4/4 " UINT64_FORMAT " pairs", n));
	return n;
}
