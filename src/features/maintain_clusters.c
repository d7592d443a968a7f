/*
 * maintain_clusters.c
 *		Live clusters: ndd_maintain_clusters, which puts a table under a
 *		cluster table kept current, and the step that applies one row's
 *		change to that cluster table (ndd_cluster_step; the trigger of
 *		live_clusters.c calls it directly, as ApplyClusterChange).
 *
 * ndd_maintain_clusters
 *	1. Checks, each with its SQLSTATE: the caller owns the table; the sketch
 *	   and id columns exist; the id is a smallint, integer or bigint that is
 *	   a unique, NOT NULL key; the sketch column is a minhash (with a
 *	   threshold, and no index that answers it with LSH recall only) or a
 *	   simhash (with a distance).
 *	2. Under a SHARE ROW EXCLUSIVE lock of the table, so that no writer
 *	   changes it between the first clusters and the trigger: the cluster
 *	   table, filled from near_duplicate_clusters, and the two triggers.
 *
 * The step
 *	0. Neither an old nor a new row (a TRUNCATE): empty the cluster table.
 *	1. The old row leaves its cluster, which is recomputed from its
 *	   remaining members (ndd_components of their pairs).
 *	2. The new row joins the clusters of its near-duplicates into one.
 *	3. With an order, each changed cluster's representative is its first
 *	   row.
 * The cluster table changes only under ndd_claim_cluster_lock: a row with no
 * cluster and no near-duplicate takes no part in that lock.  What was read
 * before the lock is read again once it is held.
 *
 * Each step is one SQL statement over SPI, built here from the names the
 * caller gave, quoted and qualified: a table or column name can never
 * change what runs.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "base/ndd_limits.h"
#include "base/sketch_column.h"
#include "features/citus_work.h"
#include "features/guard.h"
#include "sqlgen/sketch_sql.h"
#include "sqlgen/spi_run.h"

/*
 * The step's statements.  %1$s is the cluster table, or as each says.
 */

/* 0. claim the lock of the cluster table $1 (%1$s ndd's schema) */
#define STEP_CLAIM_SQL \
	"SELECT %1$s.ndd_claim_cluster_lock($1)"

/* 0. a TRUNCATE empties the cluster table */
#define STEP_TRUNCATE_SQL \
	"TRUNCATE %1$s"

/* the ids of the near-duplicates of id $1: %1$s the table, %2$s the id column, %3$s the pair */
#define STEP_NEAR_SQL \
	"SELECT pg_catalog.array_agg(t.%2$s::pg_catalog.int8)\n" \
	"FROM %1$s r, %1$s t\n" \
	"WHERE r.%2$s OPERATOR(pg_catalog.=) $1 AND %3$s\n" \
	"  AND t.%2$s OPERATOR(pg_catalog.<>) r.%2$s"

/* every near-duplicate pair among the ids $4: as STEP_NEAR_SQL */
#define STEP_PAIRS_SQL \
	"SELECT r.%2$s::pg_catalog.int8, t.%2$s::pg_catalog.int8\n" \
	"FROM %1$s r, %1$s t\n" \
	"WHERE r.%2$s OPERATOR(pg_catalog.=) ANY ($4) AND t.%2$s OPERATOR(pg_catalog.=) ANY ($4)\n" \
	"  AND %3$s AND t.%2$s OPERATOR(pg_catalog.<>) r.%2$s"

/* the cluster of id $1 */
#define STEP_CLUSTER_OF_SQL \
	"SELECT m.cluster_id FROM %1$s m WHERE m.id OPERATOR(pg_catalog.=) $1"

/* 1. the members of cluster $1, out of the cluster table */
#define STEP_LEAVE_SQL \
	"WITH d AS (DELETE FROM %1$s m WHERE m.cluster_id OPERATOR(pg_catalog.=) $1 RETURNING m.id)\n" \
	"SELECT pg_catalog.array_agg(d.id) FROM d"

/* 1. back in, by the components of their pairs: %2$s ndd's schema, %3$s the pairs */
#define STEP_RELABEL_SQL \
	"INSERT INTO %1$s (id, cluster_id)\n" \
	"SELECT c.labels[i.i][1], c.labels[i.i][2]\n" \
	"FROM (SELECT %2$s.ndd_components(p.a, p.b) AS labels FROM (%3$s) p(a, b)) c,\n" \
	"     pg_catalog.generate_subscripts(c.labels, 1) i(i)"

/* 2. the ids $1 and every member of their clusters, and the smallest */
#define STEP_JOINED_SQL \
	"WITH j AS (\n" \
	"    SELECT u.id FROM pg_catalog.unnest($1) u(id)\n" \
	"    UNION\n" \
	"    SELECT m.id FROM %1$s m\n" \
	"    WHERE m.cluster_id OPERATOR(pg_catalog.=) ANY (\n" \
	"        SELECT c.cluster_id FROM %1$s c WHERE c.id OPERATOR(pg_catalog.=) ANY ($1)))\n" \
	"SELECT pg_catalog.array_agg(j.id), pg_catalog.min(j.id) FROM j"

/* 2. the ids $1 into cluster $2 */
#define STEP_JOIN_SQL \
	"INSERT INTO %1$s AS m (id, cluster_id)\n" \
	"SELECT u.id, $2 FROM pg_catalog.unnest($1) u(id)\n" \
	"ON CONFLICT (id) DO UPDATE SET cluster_id = excluded.cluster_id\n" \
	"WHERE m.cluster_id OPERATOR(pg_catalog.<>) excluded.cluster_id"

/* 3. every member of the clusters the ids $1 are in */
#define STEP_MEMBERS_SQL \
	"SELECT pg_catalog.array_agg(m.id) FROM %1$s m\n" \
	"WHERE m.cluster_id OPERATOR(pg_catalog.=) ANY (\n" \
	"    SELECT c.cluster_id FROM %1$s c WHERE c.id OPERATOR(pg_catalog.=) ANY ($1))"

/*
 * 3. the ids $1 ranked: %1$s the table, %2$s the id column, %3$s the
 * caller's order, in a query of its own, where it sees the table's columns
 * and nothing else (ties go to the smaller id)
 */
#define STEP_RANKED_SQL \
	"SELECT pg_catalog.array_agg(t.%2$s::pg_catalog.int8 ORDER BY %3$s, t.%2$s::pg_catalog.int8)\n" \
	"FROM %1$s t WHERE t.%2$s OPERATOR(pg_catalog.=) ANY ($1)"

/* 3. each cluster's representative, its first row in the ranking $1 */
#define STEP_REPRESENTATIVES_SQL \
	"UPDATE %1$s AS m SET cluster_id = r.rep\n" \
	"FROM (SELECT l.id, pg_catalog.first_value(l.id) OVER (\n" \
	"          PARTITION BY l.cluster_id ORDER BY o.rank) AS rep\n" \
	"      FROM %1$s l\n" \
	"      JOIN pg_catalog.unnest($1) WITH ORDINALITY o(id, rank)\n" \
	"        ON o.id OPERATOR(pg_catalog.=) l.id) r\n" \
	"WHERE m.id OPERATOR(pg_catalog.=) r.id\n" \
	"  AND m.cluster_id OPERATOR(pg_catalog.<>) r.rep"

/*
 * ndd_maintain_clusters' statements: %1$s the table, or as each says.
 */

/* no writer may change the table between the first clusters and the trigger */
#define MAINTAIN_LOCK_SQL \
	"LOCK TABLE %1$s IN SHARE ROW EXCLUSIVE MODE"

/* the cluster table: %1$s its schema, %2$s its name */
#define MAINTAIN_CREATE_SQL \
	"CREATE TABLE %1$s.%2$s (id pg_catalog.int8 PRIMARY KEY, cluster_id pg_catalog.int8 NOT NULL)"

/* %1$s the cluster table */
#define MAINTAIN_INDEX_SQL \
	"CREATE INDEX ON %1$s (cluster_id)"

/* %1$s the cluster table, %2$s the comment (a literal) */
#define MAINTAIN_COMMENT_SQL \
	"COMMENT ON TABLE %1$s IS %2$s"

/* the comment's text: %s the table */
#define MAINTAIN_COMMENT \
	"near-duplicate clusters of %s, kept by ndd_maintain_clusters: (id, cluster_id), cluster_id being the representative row"

/*
 * The first clusters: %1$s the cluster table, %2$s ndd's schema; $1 .. $6
 * tbl, sketch_column, id_column, threshold, max_distance,
 * representative_order.
 */
#define MAINTAIN_FILL_SQL \
	"INSERT INTO %1$s (id, cluster_id)\n" \
	"SELECT c.id, c.cluster_id\n" \
	"FROM %2$s.near_duplicate_clusters($1, $2, $3, $4, NULL::pg_catalog.name, false, $5, $6) c"

/* the triggers: %1$s the table, %2$s ndd's schema, %3$s their arguments */
#define MAINTAIN_ROW_TRIGGER_SQL \
	"CREATE TRIGGER ndd_maintain_clusters AFTER INSERT OR UPDATE OR DELETE ON %1$s " \
	"FOR EACH ROW EXECUTE FUNCTION %2$s.ndd_maintain_clusters_trigger(%3$s)"
#define MAINTAIN_TRUNCATE_TRIGGER_SQL \
	"CREATE TRIGGER ndd_maintain_clusters_truncate AFTER TRUNCATE ON %1$s " \
	"FOR EACH STATEMENT EXECUTE FUNCTION %2$s.ndd_maintain_clusters_trigger(%3$s)"

/* how much of the table's name a default cluster table name keeps, in characters */
#define MAINTAIN_NAME_CHARS 54


/* Column n of the last statement's first row; NULL when there is none. */
static Datum
Answer(int n, bool *isnull)
{
	if (SPI_processed == 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	return SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, n, isnull);
}

static char *
RegclassText(Oid relid)
{
	return DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(relid)));
}

/* a bigint[] of the elements of a and then of b, either NULL for none (NULL if both are) */
static Datum
CatIds(Datum a, bool a_null, Datum b, bool b_null, bool *isnull)
{
	Datum	   *ea = NULL,
			   *eb = NULL,
			   *elems;
	bool	   *na = NULL,
			   *nb = NULL,
			   *nulls;
	int			la = 0,
				lb = 0,
				dims[1],
				lbs[1] = {1};

	*isnull = a_null && b_null;
	if (*isnull)
		return (Datum) 0;
	if (!a_null)
		deconstruct_array(DatumGetArrayTypeP(a), INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
						  &ea, &na, &la);
	if (!b_null)
		deconstruct_array(DatumGetArrayTypeP(b), INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
						  &eb, &nb, &lb);
	if (la + lb == 0)
		return PointerGetDatum(construct_empty_array(INT8OID));
	elems = palloc((la + lb) * sizeof(Datum));
	nulls = palloc((la + lb) * sizeof(bool));
	for (int i = 0; i < la; i++)
	{
		elems[i] = ea[i];
		nulls[i] = na[i];
	}
	for (int i = 0; i < lb; i++)
	{
		elems[la + i] = eb[i];
		nulls[la + i] = nb[i];
	}
	dims[0] = la + lb;
	return PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs, INT8OID, 8,
											  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* a bigint[] of one id */
static Datum
OneId(int64 id)
{
	Datum		elem = Int64GetDatum(id);

	return PointerGetDatum(construct_array(&elem, 1, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* The statements of one step, built from the change's names. */
typedef struct Step
{
	const ClusterChange *change;
	const char *ndd;			/* ndd's schema, quoted */
	const char *mapping;		/* the cluster table, as regclass writes it */
	char	   *near;			/* STEP_NEAR_SQL */
	char	   *pairs;			/* STEP_PAIRS_SQL */
	char	   *cluster_of;		/* STEP_CLUSTER_OF_SQL */
	bool		locked;			/* the cluster table's lock is held */
} Step;

static void
Claim(Step *s)
{
	Oid			type = REGCLASSOID;
	Datum		arg = ObjectIdGetDatum(s->change->mapping);

	RunStatement("ndd_cluster_step", psprintf(STEP_CLAIM_SQL, s->ndd), 1, &type, &arg, NULL);
	s->locked = true;
}

/* The cluster of an id, false for none. */
static bool
ClusterOf(Step *s, int64 id, int64 *cluster)
{
	Oid			type = INT8OID;
	Datum		arg = Int64GetDatum(id);
	bool		isnull;
	Datum		value;

	RunStatement("ndd_cluster_step", s->cluster_of, 1, &type, &arg, NULL);
	value = Answer(1, &isnull);
	if (!isnull)
		*cluster = DatumGetInt64(value);
	return !isnull;
}

/* The parameters $1 .. $3 of the statements that find pairs: an id, the rule's two limits. */
static void
PairArgs(const ClusterChange *c, Oid *types, Datum *args, char *nulls, int64 id, bool id_null)
{
	types[0] = INT8OID;
	args[0] = Int64GetDatum(id);
	nulls[0] = id_null ? 'n' : ' ';
	types[1] = FLOAT8OID;
	args[1] = Float8GetDatum(c->threshold);
	nulls[1] = c->has_threshold ? ' ' : 'n';
	types[2] = INT4OID;
	args[2] = Int32GetDatum(c->max_distance);
	nulls[2] = c->has_max_distance ? ' ' : 'n';
}

/* The ids of the near-duplicates of the row of id new_id, or NULL. */
static Datum
Near(Step *s, bool *isnull)
{
	Oid			types[3];
	Datum		args[3];
	char		nulls[3];

	PairArgs(s->change, types, args, nulls, s->change->new_id, false);
	RunStatement("ndd_cluster_step", s->near, 3, types, args, nulls);
	return Answer(1, isnull);
}

/* Step 1: the old row leaves its cluster; the ids it changed into *members. */
static void
Leave(Step *s, Datum *members, bool *members_null)
{
	const ClusterChange *c = s->change;
	int64		cluster;
	Oid			types[4];
	Datum		args[4];
	char		nulls[4];

	if (!ClusterOf(s, c->old_id, &cluster))
		return;
	Claim(s);
	/* again: another transaction may have changed it before we held the lock */
	if (!ClusterOf(s, c->old_id, &cluster))
		return;
	if (c->has_new_id && c->old_id == c->new_id && !c->sketch_changed)
	{
		/* the same pairs: only the representative may have changed */
		*members = OneId(c->old_id);
		*members_null = false;
		return;
	}
	types[0] = INT8OID;
	args[0] = Int64GetDatum(cluster);
	RunStatement("ndd_cluster_step", psprintf(STEP_LEAVE_SQL, s->mapping), 1, types, args, NULL);
	*members = Answer(1, members_null);

	PairArgs(c, types, args, nulls, c->old_id, false);
	types[3] = INT8ARRAYOID;
	args[3] = *members;
	nulls[3] = *members_null ? 'n' : ' ';
	RunStatement("ndd_cluster_step", psprintf(STEP_RELABEL_SQL, s->mapping, s->ndd, s->pairs),
		4, types, args, nulls);
}

/* Step 2: the new row joins the clusters of its near-duplicates; *members grows by them. */
static void
JoinNear(Step *s, Datum *members, bool *members_null)
{
	const ClusterChange *c = s->change;
	bool		isnull;
	Datum		neighbours = Near(s, &isnull);
	Datum		rep;
	Oid			types[2] = {INT8ARRAYOID, INT8OID};
	Datum		args[2];
	bool		rep_null;

	if (!isnull && !s->locked)
	{
		Claim(s);
		neighbours = Near(s, &isnull);
	}
	if (isnull)
		return;
	neighbours = CatIds(neighbours, false, OneId(c->new_id), false, &isnull);
	args[0] = neighbours;
	RunStatement("ndd_cluster_step", psprintf(STEP_JOINED_SQL, s->mapping), 1, types, args, NULL);
	neighbours = Answer(1, &isnull);
	rep = Answer(2, &rep_null);

	args[0] = neighbours;
	args[1] = rep;
	RunStatement("ndd_cluster_step", psprintf(STEP_JOIN_SQL, s->mapping), 2, types, args,
		isnull ? (rep_null ? "nn" : "n ") : (rep_null ? " n" : "  "));
	*members = CatIds(*members, *members_null, neighbours, isnull, members_null);
}

/* Step 3: each changed cluster's representative is its first row by the order. */
static void
Rank(Step *s, Datum members)
{
	const ClusterChange *c = s->change;
	Oid			type = INT8ARRAYOID;
	bool		isnull;

	RunStatement("ndd_cluster_step", psprintf(STEP_MEMBERS_SQL, s->mapping), 1, &type, &members, NULL);
	members = Answer(1, &isnull);
	if (isnull)
		return;
	RunStatement("ndd_cluster_step",
		psprintf(STEP_RANKED_SQL, RegclassText(c->tbl), quote_identifier(c->id_column),
				 c->representative_order),
		1, &type, &members, NULL);
	members = Answer(1, &isnull);
	RunStatement("ndd_cluster_step", psprintf(STEP_REPRESENTATIVES_SQL, s->mapping), 1, &type, &members,
		isnull ? "n" : NULL);
}

/*
 * Apply one row's change to a cluster table, as the role and with the
 * settings the caller is in (search_path pg_catalog, pg_temp).
 */
void
ApplyClusterChange(Oid ndd_nsp, const ClusterChange *c)
{
	Step		s;
	Datum		members = (Datum) 0;
	bool		members_null = true;

	memset(&s, 0, sizeof(s));
	s.change = c;
	s.ndd = quote_identifier(get_namespace_name(ndd_nsp));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "ndd_cluster_step: SPI_connect failed");
	s.mapping = RegclassText(c->mapping);

	/* 0. a TRUNCATE */
	if (!c->has_old_id && !c->has_new_id)
	{
		Claim(&s);
		RunStatement("ndd_cluster_step", psprintf(STEP_TRUNCATE_SQL, s.mapping), 0, NULL, NULL, NULL);
		SPI_finish();
		return;
	}
	{
		const char *table = RegclassText(c->tbl);
		const char *id = quote_identifier(c->id_column);
		const char *sketch = quote_identifier(c->sketch_column);
		SketchRule	kind;
		const char *pair;

		/* row t is near row r: $2 the threshold (minhash), $3 the distance (simhash) */
		SketchRuleInit(&kind, c->has_max_distance ? SKETCH_SIMHASH : SKETCH_MINHASH, s.ndd, 0, 0);
		pair = kind.sql->near(&kind, psprintf("t.%s", sketch), psprintf("r.%s", sketch),
							  c->has_max_distance ? "$3" : "$2");

		s.near = psprintf(STEP_NEAR_SQL, table, id, pair);
		s.pairs = psprintf(STEP_PAIRS_SQL, table, id, pair);
		s.cluster_of = psprintf(STEP_CLUSTER_OF_SQL, s.mapping);
	}

	/* 1. the old row leaves its cluster: recompute what remains of it */
	if (c->has_old_id)
		Leave(&s, &members, &members_null);

	/* 2. the new row joins the clusters of its near-duplicates into one */
	if (c->has_new_id)
		JoinNear(&s, &members, &members_null);

	/* 3. with an order, each changed cluster's representative is its first row */
	if (c->representative_order != NULL && !members_null)
		Rank(&s, members);

	SPI_finish();
}

/* A name argument that becomes an identifier: format('%I', NULL) refuses it. */
static const char *
IdentifierArg(FunctionCallInfo fcinfo, int n)
{
	if (PG_ARGISNULL(n))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("null values cannot be formatted as an SQL identifier")));
	return NameStr(*PG_GETARG_NAME(n));
}

/* A table argument: it must name one. */
static Oid
TableArg(FunctionCallInfo fcinfo, int n, const char *argname)
{
	if (PG_ARGISNULL(n))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("argument \"%s\" must not be null", argname)));
	ErrorIfNoRelation(PG_GETARG_OID(n));
	return PG_GETARG_OID(n);
}

/*
 * ndd_cluster_step(tbl regclass, mapping regclass, sketch_column name,
 * id_column name, threshold float8, max_distance int, representative_order
 * text, old_id bigint, new_id bigint, sketch_changed boolean): one row's
 * change, applied to the cluster table mapping (id, cluster_id) of tbl.
 * old_id leaves its cluster, new_id joins the clusters of its
 * near-duplicates; neither (a TRUNCATE) empties the cluster table.  A
 * max_distance makes the pairs simhash pairs.
 */
PG_FUNCTION_INFO_V1(ndd_cluster_step);
Datum
ndd_cluster_step(PG_FUNCTION_ARGS)
{
	ClusterChange c;

	memset(&c, 0, sizeof(c));
	c.mapping = TableArg(fcinfo, 1, "mapping");
	c.has_old_id = !PG_ARGISNULL(7);
	c.old_id = c.has_old_id ? PG_GETARG_INT64(7) : 0;
	c.has_new_id = !PG_ARGISNULL(8);
	c.new_id = c.has_new_id ? PG_GETARG_INT64(8) : 0;
	if (c.has_old_id || c.has_new_id)
	{
		c.tbl = TableArg(fcinfo, 0, "tbl");
		c.sketch_column = IdentifierArg(fcinfo, 2);
		c.id_column = IdentifierArg(fcinfo, 3);
	}
	c.has_threshold = !PG_ARGISNULL(4);
	c.threshold = c.has_threshold ? PG_GETARG_FLOAT8(4) : 0;
	c.has_max_distance = !PG_ARGISNULL(5);
	c.max_distance = c.has_max_distance ? PG_GETARG_INT32(5) : 0;
	c.representative_order = PG_ARGISNULL(6) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(6));
	/* NOT NULL is not true: an unknown change may change pairs */
	c.sketch_changed = PG_ARGISNULL(9) || PG_GETARG_BOOL(9);

	ApplyClusterChange(NddNamespace(fcinfo->flinfo->fn_oid), &c);
	PG_RETURN_VOID();
}

/* A setting of ndd as current_setting(name, true) gives it; NULL when there is none. */
static const char *
Setting(const char *name)
{
	return GetConfigOptionByName(name, NULL, true);
}

/* 42703, for a table or column that is NULL or missing, in the words of ResolveColumn */
static void
NoSuchColumn(const char *column, const char *table)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_COLUMN),
			 errmsg("column \"%s\" of relation \"%s\" does not exist",
					column ? column : "<NULL>", table ? table : "<NULL>")));
}

/* Is attnum of relid NOT NULL, and the one key of a unique, non-partial index on no expression? */
static bool
IsUniqueKey(Oid relid, AttrNumber attnum)
{
	HeapTuple	tuple = SearchSysCache2(ATTNUM, ObjectIdGetDatum(relid), Int16GetDatum(attnum));
	bool		not_null;
	bool		found = false;
	Relation	pg_index;
	SysScanDesc scan;
	ScanKeyData key;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for attribute %d of relation %u", attnum, relid);
	not_null = ((Form_pg_attribute) GETSTRUCT(tuple))->attnotnull;
	ReleaseSysCache(tuple);
	if (!not_null)
		return false;

	ScanKeyInit(&key, Anum_pg_index_indrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	pg_index = table_open(IndexRelationId, AccessShareLock);
	scan = systable_beginscan(pg_index, IndexIndrelidIndexId, true, NULL, 1, &key);
	while (!found && HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_index index = (Form_pg_index) GETSTRUCT(tuple);

		found = index->indisunique && index->indnkeyatts == 1 &&
			heap_attisnull(tuple, Anum_pg_index_indpred, NULL) &&
			heap_attisnull(tuple, Anum_pg_index_indexprs, NULL) &&
			index->indkey.values[0] == attnum;
	}
	systable_endscan(scan);
	table_close(pg_index, AccessShareLock);
	return found;
}

/* What ndd_maintain_clusters was asked, and what it decided. */
typedef struct Maintain
{
	Oid			ndd_nsp;
	const char *ndd_q;			/* ndd's schema, quoted */
	Oid			tbl;
	const char *sketch_name;
	const char *id_name;
	bool		has_threshold;
	double		threshold;
	bool		has_max_distance;
	int32		max_distance;
	const char *order;			/* representative_order, or NULL */
	char	   *cluster_table;
	char	   *schema;			/* the table's */
	char	   *table_name;
	SketchColumn sketch;
	char	   *rule;			/* the threshold or distance, as the trigger's argument */
} Maintain;

/* 1. The caller owns the table; its id is a unique integer key; the sketch column is one. */
static void
CheckOwnerAndColumns(Maintain *m)
{
	HeapTuple	tuple;
	AttrNumber	id_attnum;
	Oid			id_type;

	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(m->tbl));
	if (HeapTupleIsValid(tuple))
	{
		Form_pg_class form = (Form_pg_class) GETSTRUCT(tuple);
		Oid			owner = form->relowner;

		m->table_name = pstrdup(NameStr(form->relname));
		m->schema = get_namespace_name(form->relnamespace);
		ReleaseSysCache(tuple);
		if (!has_privs_of_role(GetUserId(), owner))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("must be owner of table %s", m->table_name)));
	}
	if (m->table_name == NULL || m->sketch_name == NULL)
		NoSuchColumn(m->sketch_name, m->table_name);
	(void) ResolveColumn(m->tbl, m->sketch_name, NULL);
	if (m->id_name == NULL)
		NoSuchColumn(m->id_name, m->table_name);
	id_attnum = ResolveIdColumn(m->tbl, m->id_name, CLUSTER_IDS_DETAIL, &id_type);
	/* one row per id: a unique, non-partial index on the id column alone */
	if (!IsUniqueKey(m->tbl, id_attnum))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_COLUMN_REFERENCE),
				 errmsg("column \"%s\" of relation \"%s\" is not a unique, NOT NULL key",
						m->id_name, m->table_name),
				 errhint("Maintained clusters name each row by its id: use the primary key, or a column with a unique index and NOT NULL.")));
	ResolveSketchColumn(m->tbl, m->sketch_name, m->ndd_nsp, SKETCH_MINHASH | SKETCH_SIMHASH, &m->sketch);
}

/* 1. The threshold (minhash) or distance (simhash), given or from its setting. */
static void
DecideRule(Maintain *m)
{
	if (m->sketch.kind == SKETCH_MINHASH)
	{
		const char *setting = Setting("ndd.similarity_threshold");
		int			n;

		if (m->has_max_distance)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("max_distance applies to simhash columns; column \"%s\" is a minhash",
							m->sketch_name)));
		if (!m->has_threshold)
			m->threshold = setting ? DatumGetFloat8(DirectFunctionCall1(float8in, CStringGetDatum(setting)))
				: NDD_SIMILARITY_THRESHOLD_DEFAULT;
		m->has_threshold = true;
		NddCheckThreshold(m->threshold);
		m->rule = DatumGetCString(DirectFunctionCall1(float8out, Float8GetDatum(m->threshold)));
		/* an index that finds pairs at the threshold only by chance would leave clusters wrong */
		pfree(GinIndexesOn("ndd_maintain_clusters", m->sketch_name, get_namespace_name(m->ndd_nsp),
						   find_all_inheritors(m->tbl, AccessShareLock, NULL), true, m->threshold, &n));
	}
	else
	{
		const char *setting = Setting("ndd.hamming_threshold");

		if (m->has_threshold)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("threshold applies to minhash columns; column \"%s\" is a simhash",
							m->sketch_name)));
		if (!m->has_max_distance)
			m->max_distance = setting ? DatumGetInt32(DirectFunctionCall1(int4in, CStringGetDatum(setting)))
				: NDD_SIMHASH_MAX_DISTANCE_DEFAULT;
		m->has_max_distance = true;
		NddCheckMaxDistance(m->max_distance);
		m->rule = psprintf("%d", m->max_distance);
	}
}

/* left(table_name, 54) || '_clusters', cut to a name */
static char *
DefaultClusterTableName(const char *table_name)
{
	int			keep = pg_mbcharcliplen(table_name, strlen(table_name), MAINTAIN_NAME_CHARS);
	char	   *name = psprintf("%.*s_clusters", keep, table_name);

	name[pg_mbcliplen(name, strlen(name), NAMEDATALEN - 1)] = '\0';
	return name;
}

/* 2. The cluster table beside the table, with its index and comment. */
static Oid
CreateClusterTable(const Maintain *m, const char *table)
{
	Oid			mapping;
	char	   *mapping_q;

	RunStatement("ndd_maintain_clusters",
		psprintf(MAINTAIN_CREATE_SQL, quote_identifier(m->schema), quote_identifier(m->cluster_table)),
		0, NULL, NULL, NULL);
	CommandCounterIncrement();
	mapping = get_relname_relid(m->cluster_table, get_rel_namespace(m->tbl));
	if (!OidIsValid(mapping))
		elog(ERROR, "ndd_maintain_clusters: relation \"%s.%s\" was not created", m->schema, m->cluster_table);
	mapping_q = RegclassText(mapping);
	RunStatement("ndd_maintain_clusters", psprintf(MAINTAIN_INDEX_SQL, mapping_q), 0, NULL, NULL, NULL);
	RunStatement("ndd_maintain_clusters",
		psprintf(MAINTAIN_COMMENT_SQL, mapping_q, quote_literal_cstr(psprintf(MAINTAIN_COMMENT, table))),
		0, NULL, NULL, NULL);
	return mapping;
}

/* 2. The first clusters, from near_duplicate_clusters. */
static void
FillClusterTable(const Maintain *m, const char *mapping_q, Datum sketch_name, Datum id_name)
{
	Oid			types[6] = {REGCLASSOID, NAMEOID, NAMEOID, FLOAT8OID, INT4OID, TEXTOID};
	Datum		values[6];
	char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};

	values[0] = ObjectIdGetDatum(m->tbl);
	values[1] = sketch_name;
	values[2] = id_name;
	values[3] = Float8GetDatum(m->threshold);
	nulls[3] = m->sketch.kind == SKETCH_MINHASH ? ' ' : 'n';
	values[4] = Int32GetDatum(m->max_distance);
	nulls[4] = m->sketch.kind == SKETCH_SIMHASH ? ' ' : 'n';
	values[5] = m->order ? CStringGetTextDatum(m->order) : (Datum) 0;
	nulls[5] = m->order ? ' ' : 'n';
	RunStatement("ndd_maintain_clusters", psprintf(MAINTAIN_FILL_SQL, mapping_q, m->ndd_q), 6, types, values, nulls);
}

/* 2. The row and TRUNCATE triggers that keep the cluster table current. */
static void
CreateTriggers(const Maintain *m, const char *table)
{
	char	   *args = psprintf("%s, %s, %s, %s, %s, %s",
								quote_literal_cstr(m->schema), quote_literal_cstr(m->cluster_table),
								quote_literal_cstr(m->sketch_name), quote_literal_cstr(m->id_name),
								quote_literal_cstr(m->rule), quote_literal_cstr(m->order ? m->order : ""));

	RunStatement("ndd_maintain_clusters", psprintf(MAINTAIN_ROW_TRIGGER_SQL, table, m->ndd_q, args),
		0, NULL, NULL, NULL);
	RunStatement("ndd_maintain_clusters", psprintf(MAINTAIN_TRUNCATE_TRIGGER_SQL, table, m->ndd_q, args),
		0, NULL, NULL, NULL);
}

/*
 * ndd_maintain_clusters(tbl regclass, sketch_column name, id_column name,
 * threshold float8, max_distance int, representative_order text,
 * cluster_table name) returns regclass: the cluster table it creates, kept
 * current by the triggers it puts on tbl.
 */
PG_FUNCTION_INFO_V1(ndd_maintain_clusters);
Datum
ndd_maintain_clusters(PG_FUNCTION_ARGS)
{
	Maintain	m;
	char	   *table;
	Oid			mapping;

	memset(&m, 0, sizeof(m));
	m.ndd_nsp = NddNamespace(fcinfo->flinfo->fn_oid);
	m.ndd_q = quote_identifier(get_namespace_name(m.ndd_nsp));
	m.tbl = PG_ARGISNULL(0) ? InvalidOid : PG_GETARG_OID(0);
	if (!PG_ARGISNULL(0))
		ErrorIfNoRelation(m.tbl);
	m.sketch_name = PG_ARGISNULL(1) ? NULL : NameStr(*PG_GETARG_NAME(1));
	m.id_name = PG_ARGISNULL(2) ? NULL : NameStr(*PG_GETARG_NAME(2));
	m.has_threshold = !PG_ARGISNULL(3);
	m.threshold = m.has_threshold ? PG_GETARG_FLOAT8(3) : 0;
	m.has_max_distance = !PG_ARGISNULL(4);
	m.max_distance = m.has_max_distance ? PG_GETARG_INT32(4) : 0;
	m.order = PG_ARGISNULL(5) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(5));
	m.cluster_table = PG_ARGISNULL(6) ? NULL : pstrdup(NameStr(*PG_GETARG_NAME(6)));

	/* 1. the checks, each with its SQLSTATE */
	CheckOwnerAndColumns(&m);
	DecideRule(&m);
	if (m.cluster_table == NULL)
		m.cluster_table = DefaultClusterTableName(m.table_name);

	/* 2. the cluster table and its triggers, the table locked against writers */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "ndd_maintain_clusters: SPI_connect failed");
	table = RegclassText(m.tbl);
	if (CitusHashDistributed(m.tbl))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("clusters of relation \"%s\" cannot be kept current", m.table_name),
				 errdetail("The table is distributed by Citus, which runs no triggers on it."),
				 errhint("Find its clusters with near_duplicate_clusters().")));
	RunStatement("ndd_maintain_clusters", psprintf(MAINTAIN_LOCK_SQL, table), 0, NULL, NULL, NULL);
	mapping = CreateClusterTable(&m, table);
	FillClusterTable(&m, RegclassText(mapping), PG_GETARG_DATUM(1), PG_GETARG_DATUM(2));
	CreateTriggers(&m, table);
	SPI_finish();
	PG_RETURN_OID(mapping);
}
