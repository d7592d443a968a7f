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
 * The work tables (citus_work.c) are dropped at the end; an error or a
 * cancel rolls their creation back with the transaction, on every node.
 * Every name is quoted and every function and operator qualified, as on
 * one server.  near_duplicate_clusters takes the pairs into a table of its
 * own instead (clusters_citus.c).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "features/citus_work.h"
#include "features/pairs_citus.h"
#include "sqlgen/spi_run.h"

/* step 0: the work tables' columns; %s a sketch type or the summary's */
#define CITUS_ROWS_COLUMNS "id pg_catalog.int8, sketch %s, body pg_catalog.text"
#define CITUS_KEYS_COLUMNS "band_key pg_catalog.int8, id pg_catalog.int8, summary %s"
#define CITUS_PAIRS_COLUMNS "id_a pg_catalog.int8, id_b pg_catalog.int8"
#define CITUS_HALVES_COLUMNS "id_a pg_catalog.int8, id_b pg_catalog.int8, sketch_a %s, body_a pg_catalog.text"

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

/*
 * Into a table of pairs (u, v): %1$s the table, %2$s the answer's query
 * (its columns id_a, id_b, similarity, distance).
 */
#define CITUS_INTO_SQL \
	"INSERT INTO %1$s (u, v) SELECT a.id_a, a.id_b FROM (%2$s) a"

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

/*
 * Step 0: the work tables, and where the rows are read.  The table itself
 * serves when it is distributed by its id of type bigint, with which the
 * pairs' tables can be colocated; else a copy of its ids, sketches and
 * texts, distributed by id in as many shards as the table.
 */
static void
CreateWorkTables(const CitusPairs *c, CitusWork *work, WorkTables *w, RowSource *src)
{
	const char *sketch_type = psprintf("%s.%s", c->rule->ndd,
									   c->kind == SKETCH_SIMHASH ? "simhash" : "minhash");
	const char *colocate = c->tbl;
	char	   *column = CitusDistributionColumn(c->relid);

	src->rows = c->tbl;
	src->id = quote_identifier(c->id_name);
	src->sketch = quote_identifier(c->sketch_name);
	w->rows = w->copy_rows = NULL;
	if (column == NULL || strcmp(column, c->id_name) != 0 ||
		get_atttype(c->relid, get_attnum(c->relid, c->id_name)) != INT8OID)
	{
		const char *text_of_t = c->verify_name ?
			psprintf("t.%s::pg_catalog.text", quote_identifier(c->verify_name)) : "NULL::pg_catalog.text";

		w->rows = CitusWorkTable(work, "rows", psprintf(CITUS_ROWS_COLUMNS, sketch_type), "id", NULL);
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

	w->keys = CitusWorkTable(work, "keys", psprintf(CITUS_KEYS_COLUMNS, c->rule->sql->summary_type(c->rule)),
							 "band_key", colocate);
	w->shared = CitusWorkTable(work, "shared", CITUS_PAIRS_COLUMNS, "id_a", colocate);
	w->candidates = CitusWorkTable(work, "candidates", CITUS_PAIRS_COLUMNS, "id_a", colocate);
	w->halves = CitusWorkTable(work, "halves", psprintf(CITUS_HALVES_COLUMNS, sketch_type), "id_b", colocate);
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
	CitusWorkAnalyze(w->keys);

	/* 2. every two rows of a key whose summaries pass, by first row */
	Exec(psprintf(CITUS_SHARED_SQL, w->shared, w->keys,
				  rule->sql->close_enough(rule, "x.summary", "y.summary")), 0, NULL, NULL);
	Progress(c, psprintf("ndd: 2/4 " UINT64_FORMAT " pairs of rows share a key", SPI_processed));

	/* 3. the pairs that share enough keys */
	Exec(psprintf(CITUS_CANDIDATES_SQL, w->candidates, w->shared, rule->required), 0, NULL, NULL);
	Progress(c, psprintf("ndd: 3/4 " UINT64_FORMAT " candidate pairs", SPI_processed));
}

/*
 * Step 4: each candidate with its first row's sketch (and text) where its
 * second row is; the query that scores (and verifies) it there, whose
 * parameters *nargs, types and args give.
 */
static char *
ScoringQuery(const CitusPairs *c, const WorkTables *w, const RowSource *src,
			 int *nargs, Oid *types, Datum *args)
{
	const SketchRule *rule = c->rule;
	const char *y = psprintf("y.%s", src->sketch);

	Exec(psprintf(CITUS_HALVES_SQL, w->halves, w->candidates, src->rows, src->id, src->sketch,
				  src->text_of_x), 0, NULL, NULL);
	if (c->verify_name == NULL)
	{
		*nargs = 0;
		return psprintf(CITUS_ANSWER_SQL, w->halves, src->rows, src->id,
						rule->sql->report(rule, "h.sketch_a", y), rule->sql->qualifies(rule, "h.sketch_a", y));
	}
	*nargs = 3;
	types[0] = INT4OID;
	types[1] = TEXTOID;
	types[2] = FLOAT8OID;
	args[0] = Int32GetDatum(c->shingle_size);
	args[1] = CStringGetTextDatum(c->unit);
	args[2] = Float8GetDatum(c->threshold);
	return psprintf(CITUS_VERIFIED_SQL, w->halves, src->rows, src->id,
					rule->sql->report(rule, "h.sketch_a", y), rule->sql->qualifies(rule, "h.sketch_a", y),
					rule->ndd, src->text_of_y);
}

/* Steps 0-4 up to the scoring query, the work tables in work. */
static char *
MapReduce(const CitusPairs *c, CitusWork *work, int *nargs, Oid *types, Datum *args)
{
	WorkTables	w;
	RowSource	src;

	/* 0. the work tables */
	CreateWorkTables(c, work, &w, &src);
	/* 1-3. the candidates */
	FindCandidates(c, &w, &src);
	/* 4. taken where their second rows are */
	return ScoringQuery(c, &w, &src, nargs, types, args);
}

uint64
CitusPairsRun(const CitusPairs *c, Tuplestorestate *out, TupleDesc out_desc)
{
	CitusWork	work;
	int			nargs;
	Oid			types[3];
	Datum		args[3];
	char	   *query;
	uint64		n;

	CitusWorkInit(&work, c->relid);
	query = MapReduce(c, &work, &nargs, types, args);
	n = CopyCursor(SPI_cursor_open_with_args(NULL, query, nargs, types, args, NULL, false, 0),
				   out, out_desc);
	CitusWorkDrop(&work);
	Progress(c, psprintf("ndd: 4/4 " UINT64_FORMAT " pairs", n));
	return n;
}

uint64
CitusPairsInto(const CitusPairs *c, const char *into)
{
	CitusWork	work;
	int			nargs;
	Oid			types[3];
	Datum		args[3];
	char	   *query;
	uint64		n;

	CitusWorkInit(&work, c->relid);
	query = MapReduce(c, &work, &nargs, types, args);
	Exec(psprintf(CITUS_INTO_SQL, into, query), nargs, types, args);
	n = SPI_processed;
	CitusWorkDrop(&work);
	Progress(c, psprintf("ndd: 4/4 " UINT64_FORMAT " pairs", n));
	return n;
}
