/*
 * clusters.c
 *		near_duplicate_clusters: every row that has a near-duplicate,
 *		labelled with its cluster, the connected component of the pairs
 *		near_duplicate_pairs finds.
 *
 *	1. The pairs, as near_duplicate_pairs returns them through SQL (so its
 *	   engine, SQL path and shards are the ones it picks), streamed from
 *	   the executor into a DestReceiver that joins them by union-find
 *	   (components.c): no row of them is copied.
 *	   On a table Citus distributes the components are computed on the
 *	   workers instead (clusters_citus.c), labelled by their smallest ids.
 *	2. Each id with its label, the smallest id of its component, straight
 *	   into the function's tuplestore; or, with representative_order, the
 *	   labels into a temporary table, a batch at a time, and each row with
 *	   the id of the row of its cluster that the caller's order ranks first,
 *	   read through a cursor.
 *
 * The union-find holds 30 to 55 bytes per distinct id of the pairs, and 8
 * more for the labels while they are written out (components.c), outside
 * work_mem; it is freed before the ranking query runs.  The answer goes to
 * the tuplestore, which spills to disk beyond work_mem, as the temporary
 * table does.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/params.h"
#include "tcop/dest.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "base/sketch_column.h"
#include "features/citus_work.h"
#include "features/clusters_citus.h"
#include "features/components.h"
#include "sqlgen/spi_run.h"

/* pairs read between two checks for cancel, and labels written per INSERT */
#define CLUSTERS_BATCH_ROWS 8192

/*
 * Step 1, %1$s ndd's schema; $1 .. $7 the arguments near_duplicate_pairs
 * takes (tbl, sketch_column, id_column, threshold, verify_column, progress,
 * max_distance).
 */
#define CLUSTERS_PAIRS_SQL \
	"SELECT p.id_a, p.id_b\n" \
	"FROM %1$s.near_duplicate_pairs($1, $2, $3, $4, $5, $6, $7) p"

/* step 2 with an order: the labels, then $1 ids and $2 their labels, a batch */
#define CLUSTERS_LABELS_TABLE_SQL \
	"CREATE TEMP TABLE ndd_cluster_labels (id pg_catalog.int8, label pg_catalog.int8)"
#define CLUSTERS_LABELS_FILL_SQL \
	"INSERT INTO pg_temp.ndd_cluster_labels (id, label)\n" \
	"SELECT u.id, u.label FROM ROWS FROM (pg_catalog.unnest($1), pg_catalog.unnest($2)) u(id, label)"

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

/* Step 1's receiver: each pair the executor returns, into the union-find. */
typedef struct PairsReceiver
{
	DestReceiver pub;			/* first: the executor sees a DestReceiver */
	Components *components;
	uint64		pairs;
} PairsReceiver;

/* One pair into the union-find; a check for cancel every batch. */
static bool
PairsReceiveSlot(TupleTableSlot *slot, DestReceiver *self)
{
	PairsReceiver *r = (PairsReceiver *) self;

	slot_getsomeattrs(slot, 2);
	/* (a pair of a NULL id joins nothing, as in the aggregate) */
	if (!slot->tts_isnull[0] && !slot->tts_isnull[1])
		ComponentsAddPair(r->components, DatumGetInt64(slot->tts_values[0]),
						  DatumGetInt64(slot->tts_values[1]));
	if (++r->pairs % CLUSTERS_BATCH_ROWS == 0)
		CHECK_FOR_INTERRUPTS();
	return true;
}

/* The query is ours: it returns (id_a bigint, id_b bigint). */
static void
PairsStartup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
	if (typeinfo->natts != 2 || TupleDescAttr(typeinfo, 0)->atttypid != INT8OID ||
		TupleDescAttr(typeinfo, 1)->atttypid != INT8OID)
		elog(ERROR, "near_duplicate_clusters: the pairs are not two bigint ids");
}

/* Nothing to flush or free: the union-find lives in its own context. */
static void
PairsShutdown(DestReceiver *self)
{
}

static void
PairsDestroy(DestReceiver *self)
{
}

/*
 * Step 1: the components of the pairs near_duplicate_pairs returns for this
 * call's first seven arguments, in a union-find of context.
 */
static Components *
JoinPairs(FunctionCallInfo fcinfo, const char *ndd_q, MemoryContext context)
{
	Oid			types[7] = {REGCLASSOID, NAMEOID, NAMEOID, FLOAT8OID, NAMEOID, BOOLOID, INT4OID};
	ParamListInfo params = makeParamList(7);
	PairsReceiver receiver;
	SPIExecuteOptions options;
	SPIPlanPtr	plan;

	for (int i = 0; i < 7; i++)
	{
		params->params[i].value = PG_ARGISNULL(i) ? (Datum) 0 : PG_GETARG_DATUM(i);
		params->params[i].isnull = PG_ARGISNULL(i);
		params->params[i].pflags = PARAM_FLAG_CONST;
		params->params[i].ptype = types[i];
	}
	plan = SPI_prepare(psprintf(CLUSTERS_PAIRS_SQL, ndd_q), 7, types);
	if (plan == NULL)
		elog(ERROR, "near_duplicate_clusters: SPI_prepare failed: %s", SPI_result_code_string(SPI_result));

	memset(&receiver, 0, sizeof(receiver));
	receiver.pub.receiveSlot = PairsReceiveSlot;
	receiver.pub.rStartup = PairsStartup;
	receiver.pub.rShutdown = PairsShutdown;
	receiver.pub.rDestroy = PairsDestroy;
	receiver.pub.mydest = DestNone;
	receiver.components = ComponentsCreate(context);

	memset(&options, 0, sizeof(options));
	options.params = params;
	options.dest = (DestReceiver *) &receiver;
	/* (a SELECT into a receiver of DestNone reports SPI_OK_UTILITY) */
	if (SPI_execute_plan_extended(plan, &options) < 0)
		elog(ERROR, "near_duplicate_clusters: SPI_execute_plan_extended failed");
	SPI_freeplan(plan);
	return receiver.components;
}

/* Step 2 without an order: each id and its label into the answer. */
static void
EmitLabels(Components *c, Tuplestorestate *out, TupleDesc out_desc)
{
	const int64 *ids = ComponentsIds(c);
	int64	   *labels = ComponentsLabels(c);
	uint32		n = ComponentsCount(c);
	bool		nulls[2] = {false, false};

	for (uint32 i = 0; i < n; i++)
	{
		Datum		values[2] = {Int64GetDatum(ids[i]), Int64GetDatum(labels[i])};

		tuplestore_putvalues(out, out_desc, values, nulls);
		if ((i + 1) % CLUSTERS_BATCH_ROWS == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(labels);
}

/*
 * Step 2 with an order: each id and its label into the temporary table
 * ndd_cluster_labels (a table an earlier call of this session left when it
 * failed is dropped first), CLUSTERS_BATCH_ROWS rows per INSERT.
 */
static void
StoreLabels(Components *c)
{
	Oid			types[2] = {INT8ARRAYOID, INT8ARRAYOID};
	const int64 *ids = ComponentsIds(c);
	int64	   *labels = ComponentsLabels(c);
	uint32		n = ComponentsCount(c);
	Datum	   *elems = palloc(2 * CLUSTERS_BATCH_ROWS * sizeof(Datum));
	Oid			left = RelnameGetRelid("ndd_cluster_labels");
	SPIPlanPtr	plan;

	if (OidIsValid(left) && isTempNamespace(get_rel_namespace(left)))
		Exec("DROP TABLE pg_temp.ndd_cluster_labels", 0, NULL, NULL, NULL);
	Exec(CLUSTERS_LABELS_TABLE_SQL, 0, NULL, NULL, NULL);
	plan = SPI_prepare(CLUSTERS_LABELS_FILL_SQL, 2, types);
	if (plan == NULL)
		elog(ERROR, "near_duplicate_clusters: SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	for (uint32 start = 0; start < n; start += CLUSTERS_BATCH_ROWS)
	{
		int			rows = (int) Min(n - start, CLUSTERS_BATCH_ROWS);
		Datum		args[2];

		for (int i = 0; i < rows; i++)
		{
			elems[i] = Int64GetDatum(ids[start + i]);
			elems[CLUSTERS_BATCH_ROWS + i] = Int64GetDatum(labels[start + i]);
		}
		args[0] = PointerGetDatum(construct_array(elems, rows, INT8OID, sizeof(int64),
												  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		args[1] = PointerGetDatum(construct_array(elems + CLUSTERS_BATCH_ROWS, rows, INT8OID,
												  sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		if (SPI_execute_plan(plan, args, NULL, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "near_duplicate_clusters: the labels were not stored");
		pfree(DatumGetPointer(args[0]));
		pfree(DatumGetPointer(args[1]));
		CHECK_FOR_INTERRUPTS();
	}
	SPI_freeplan(plan);
	pfree(elems);
	pfree(labels);
}

/* Step 2 with an order: each row of the table ranked, into the answer. */
static void
EmitRanked(FunctionCallInfo fcinfo, Tuplestorestate *out, TupleDesc out_desc)
{
	Oid			relid = PG_GETARG_OID(0);
	const char *id_name = NameStr(*PG_GETARG_NAME(2));
	const char *sql = psprintf(CLUSTERS_RANKED_SQL,
							   DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(relid))),
							   quote_identifier(id_name),
							   text_to_cstring(PG_GETARG_TEXT_PP(7)));

	Exec("ANALYZE pg_temp.ndd_cluster_labels", 0, NULL, NULL, NULL);
	(void) CopyCursor(SPI_cursor_open_with_args(NULL, sql, 0, NULL, NULL, NULL, false, 0),
					  out, out_desc);
	Exec("DROP TABLE pg_temp.ndd_cluster_labels", 0, NULL, NULL, NULL);
}

/* The NOTICE of progress: how many rows are in clusters, and the time so far. */
static void
ReportRows(uint64 n, TimestampTz started)
{
	Datum		elapsed = DirectFunctionCall2(timestamp_mi,
											  TimestampTzGetDatum(GetCurrentTimestamp()),
											  TimestampTzGetDatum(started));

	ereport(NOTICE,
			(errmsg("ndd: " UINT64_FORMAT " rows in clusters", n),
			 errdetail("%s so far", DatumGetCString(DirectFunctionCall1(interval_out, elapsed)))));
}

PG_FUNCTION_INFO_V1(near_duplicate_clusters);
Datum
near_duplicate_clusters(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TimestampTz started = GetCurrentTimestamp();
	Oid			ndd_nsp = NddNamespace(fcinfo->flinfo->fn_oid);
	bool		progress = !PG_ARGISNULL(5) && PG_GETARG_BOOL(5);
	MemoryContext context;
	Components *components;

	InitMaterializedSRF(fcinfo, 0);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "near_duplicate_clusters: SPI_connect failed");
	/* (a child of SPI's: gone with it, on error too) */
	context = AllocSetContextCreate(CurrentMemoryContext, "ndd clusters", ALLOCSET_DEFAULT_SIZES);

	/* on Citus: the components computed on the workers */
	if (!PG_ARGISNULL(0) && CitusHashDistributed(PG_GETARG_OID(0)))
	{
		if (!PG_ARGISNULL(7))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("representative_order is not supported on a table distributed by Citus"),
					 errdetail("Its clusters are labelled by their smallest id.")));
		ClustersOnCitus(fcinfo, rsinfo->setResult, rsinfo->setDesc, progress);
		SPI_finish();
		return (Datum) 0;
	}

	/* 1. the components of the pairs */
	components = JoinPairs(fcinfo, quote_identifier(get_namespace_name(ndd_nsp)), context);
	if (progress)
		ReportRows(ComponentsCount(components), started);

	/* 2. each row with its cluster */
	if (PG_ARGISNULL(7))
		EmitLabels(components, rsinfo->setResult, rsinfo->setDesc);
	else
		StoreLabels(components);
	/* the union-find is done with: freed before the ranking runs */
	MemoryContextDelete(context);
	if (!PG_ARGISNULL(7))
		EmitRanked(fcinfo, rsinfo->setResult, rsinfo->setDesc);
	SPI_finish();
	return (Datum) 0;
}
