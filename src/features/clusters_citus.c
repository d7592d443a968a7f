/*
 * clusters_citus.c
 *		near_duplicate_clusters on a table Citus distributes by hash: the
 *		connected components computed on the workers, so that neither the
 *		pairs nor a union-find of every id has to fit the coordinator.
 *
 *	1. The pairs, as near_duplicate_pairs finds them there (pairs_citus.c),
 *	   into a distributed table of edges, each edge both ways, by its
 *	   first row.
 *	2. Rounds of large-star then small-star (Kiveris, Lattanzi, Mirrokni,
 *	   Rastogi and Vassilvitskii, "Connected Components in MapReduce and
 *	   Beyond", SoCC 2014) until a round changes no edge: each is a
 *	   statement Citus pushes to the shards, whose rows move by their first
 *	   row, then a GROUP BY that drops the repeated ones.  At most O(log^2 n)
 *	   rounds; each component ends as a star around its smallest id.
 *	3. Each id with the smallest id it is joined to (itself for a centre):
 *	   its component's smallest id, the label near_duplicate_clusters gives
 *	   on one server.
 *
 * Large-star at a row u links each larger neighbour v to m, the smallest of
 * u and its neighbours; small-star at u links u and each smaller neighbour
 * to the smallest of them.  Every edge is stored both ways, so each row
 * sees its whole neighbourhood on its own shard.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "features/citus_work.h"
#include "features/clusters_citus.h"
#include "features/pairs.h"
#include "sqlgen/spi_run.h"

/* the edges' tables: an edge u - v, stored as (u, v) and (v, u) */
#define EDGES_COLUMNS "u pg_catalog.int8, v pg_catalog.int8"

/* step 1: the pairs into %1$s, one way (%2$s: e.u, e.v) or the other, from %3$s */
#define EDGES_SQL \
	"INSERT INTO %1$s (u, v) SELECT %2$s FROM %3$s e"

/*
 * Large-star of %2$s into %1$s: at u, m the least of u and its neighbours,
 * and each neighbour v > u linked to m (both ways).
 */
#define LARGE_STAR_SQL \
	"INSERT INTO %1$s (u, v)\n" \
	"SELECT d.a, d.b\n" \
	"FROM (SELECT e.v, m.m FROM %2$s e\n" \
	"      JOIN (SELECT g.u, LEAST(g.u, pg_catalog.min(g.v)) AS m FROM %2$s g GROUP BY g.u) m\n" \
	"        ON m.u OPERATOR(pg_catalog.=) e.u\n" \
	"      WHERE e.v OPERATOR(pg_catalog.>) e.u) x\n" \
	"CROSS JOIN LATERAL ROWS FROM (pg_catalog.unnest(ARRAY[x.v, x.m]),\n" \
	"                             pg_catalog.unnest(ARRAY[x.m, x.v])) d(a, b)\n" \
	"WHERE d.a OPERATOR(pg_catalog.<>) d.b"

/*
 * Small-star of %2$s into %1$s: at u with smaller neighbours, m the least
 * of them; u and each of them linked to m (both ways).
 */
#define SMALL_STAR_SQL \
	"INSERT INTO %1$s (u, v)\n" \
	"SELECT d.a, d.b\n" \
	"FROM (SELECT e.u, e.v, m.m FROM %2$s e\n" \
	"      JOIN (SELECT g.u, pg_catalog.min(g.v) AS m FROM %2$s g\n" \
	"            WHERE g.v OPERATOR(pg_catalog.<) g.u GROUP BY g.u) m\n" \
	"        ON m.u OPERATOR(pg_catalog.=) e.u\n" \
	"      WHERE e.v OPERATOR(pg_catalog.<) e.u) x\n" \
	"CROSS JOIN LATERAL ROWS FROM (pg_catalog.unnest(ARRAY[x.v, x.m, x.u, x.m]),\n" \
	"                             pg_catalog.unnest(ARRAY[x.m, x.v, x.m, x.u])) d(a, b)\n" \
	"WHERE d.a OPERATOR(pg_catalog.<>) d.b"

/* the emitted edges of %2$s, each once, into %1$s */
#define DISTINCT_EDGES_SQL \
	"INSERT INTO %1$s (u, v) SELECT r.u, r.v FROM %2$s r GROUP BY r.u, r.v"

/* the edges of %1$s that %2$s lacks: none, both ways, when a round changed nothing */
#define CHANGED_EDGES_SQL \
	"SELECT (SELECT pg_catalog.count(*) FROM %1$s a LEFT JOIN %2$s b\n" \
	"          ON b.u OPERATOR(pg_catalog.=) a.u AND b.v OPERATOR(pg_catalog.=) a.v\n" \
	"        WHERE b.u IS NULL)\n" \
	"     OPERATOR(pg_catalog.+)\n" \
	"       (SELECT pg_catalog.count(*) FROM %2$s b LEFT JOIN %1$s a\n" \
	"          ON a.u OPERATOR(pg_catalog.=) b.u AND a.v OPERATOR(pg_catalog.=) b.v\n" \
	"        WHERE a.u IS NULL)"

/* step 3: each row and the least id it is joined to; %s the edges */
#define LABELS_SQL \
	"SELECT e.u, LEAST(e.u, pg_catalog.min(e.v)) FROM %s e GROUP BY e.u"

#define Exec(sql) RunStatement("near_duplicate_clusters", sql, 0, NULL, NULL, NULL)

static void
Report(bool progress, TimestampTz started, const char *message)
{
	Datum		elapsed;

	if (!progress)
		return;
	elapsed = DirectFunctionCall2(timestamp_mi, TimestampTzGetDatum(GetCurrentTimestamp()),
								  TimestampTzGetDatum(started));
	ereport(NOTICE,
			(errmsg_internal("%s", message),
			 errdetail("%s so far", DatumGetCString(DirectFunctionCall1(interval_out, elapsed)))));
}

/* One star operation (sql) of the graph from into into, each edge once. */
static void
Star(const char *sql, const char *from, const char *into, const char *emitted)
{
	Exec(psprintf("DELETE FROM %s", emitted));
	Exec(psprintf(sql, emitted, from));
	Exec(psprintf("DELETE FROM %s", into));
	Exec(psprintf(DISTINCT_EDGES_SQL, into, emitted));
	CitusWorkAnalyze(into);
}

/* How many edges differ between two graphs. */
static int64
Changed(const char *a, const char *b)
{
	bool		isnull;

	Exec(psprintf(CHANGED_EDGES_SQL, a, b));
	return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/*
 * Step 2: rounds of large-star and small-star over three tables of edges
 * until a round changes nothing; the table that holds the stars.
 */
static const char *
Converge(const char *edges, const char *next, const char *after, const char *emitted,
		 bool progress, TimestampTz started)
{
	for (int round = 1;; round++)
	{
		const char *before = edges;
		int64		changed;

		Star(LARGE_STAR_SQL, edges, next, emitted);
		Star(SMALL_STAR_SQL, next, after, emitted);
		changed = Changed(before, after);
		/* the stars are the next round's graph; the other two its scratch */
		edges = after;
		after = next;
		next = before;
		Report(progress, started,
			   psprintf("ndd: components, round %d: " INT64_FORMAT " edges changed", round, changed));
		if (changed == 0)
			return edges;
	}
}

void
ClustersOnCitus(FunctionCallInfo fcinfo, Tuplestorestate *out, TupleDesc out_desc, bool progress)
{
	TimestampTz started = GetCurrentTimestamp();
	CitusWork	work;
	const char *edges;
	const char *next;
	const char *after;
	const char *emitted;
	uint64		n;

	/* 1. the pairs (their own work tables gone), as edges both ways */
	CitusWorkInit(&work, PG_GETARG_OID(0));
	emitted = CitusWorkTable(&work, "emitted", EDGES_COLUMNS, "u", NULL);
	(void) PairsOnCitusInto(fcinfo, emitted);
	edges = CitusWorkTable(&work, "edges", EDGES_COLUMNS, "u", emitted);
	next = CitusWorkTable(&work, "next", EDGES_COLUMNS, "u", emitted);
	after = CitusWorkTable(&work, "after", EDGES_COLUMNS, "u", emitted);
	Exec(psprintf(EDGES_SQL, edges, "e.u, e.v", emitted));
	Exec(psprintf(EDGES_SQL, edges, "e.v, e.u", emitted));
	CitusWorkAnalyze(edges);

	/* 2. large-star and small-star until nothing changes */
	edges = Converge(edges, next, after, emitted, progress, started);

	/* 3. each row with its component's least id */
	n = CopyCursor(SPI_cursor_open_with_args(NULL, psprintf(LABELS_SQL, edges), 0, NULL, NULL, NULL,
											 false, 0),
				   out, out_desc);
	CitusWorkDrop(&work);
	Report(progress, started, psprintf("ndd: " UINT64_FORMAT " rows in clusters", n));
}
