/*
 * live_clusters.c
 *		Clusters kept current as rows change: the trigger that
 *		ndd_maintain_clusters() puts on a table, and the lock its cluster
 *		mapping is changed under.
 *
 * The trigger fires AFTER each inserted, updated or deleted row (and after
 * TRUNCATE).  It takes the row's near-duplicate tokens, the insert guard's
 * lock tokens (LockTokens in trigger.c), so two transactions writing rows
 * that are near-duplicates of each other take turns: under READ COMMITTED
 * the second waits and then sees the first's row.  Then it asks, as the
 * table's owner, whether the old row is in a cluster and which rows are near
 * the new one.  Under REPEATABLE READ and SERIALIZABLE it asks both with the
 * latest snapshot and with its own, and fails with 40001 if the answers
 * differ: a concurrent change its snapshot cannot see would leave the
 * clusters wrong.  Only if there is something to do does it apply, as the
 * owner with search_path pinned, the step of ndd_cluster_step()
 * (ApplyClusterChange, maintain_clusters.c), which updates the mapping: an
 * inserted row joins the clusters of its near-duplicates, a deleted row's
 * cluster is recomputed from its remaining members, an updated row is both.
 *
 * Rows that are not near-duplicates of each other may still meet in one
 * cluster, through others, so changes of the mapping itself are serialized
 * too: ndd_claim_cluster_lock() upserts one row of ndd_near_duplicate_locks
 * keyed by the mapping table before the step changes it, which
 * under REPEATABLE READ fails with 40001 if a transaction its snapshot
 * cannot see changed the mapping, as INSERT ... ON CONFLICT does.  A row
 * with no near-duplicate changes no mapping and takes no part in that lock,
 * so inserting distinct rows stays concurrent.
 */
#include "postgres.h"

#include <limits.h>

#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "guard.h"
#include "minhash.h"
#include "ndd.h"
#include "simhash.h"
#include "sketch_column.h"
#include "sketch_sql.h"

#define MAINTAIN_FUNCTION_NAME "ndd_maintain_clusters_trigger"

/* The trigger's arguments, as ndd_maintain_clusters() writes them. */
enum
{
	ARG_MAPPING_SCHEMA,
	ARG_MAPPING_TABLE,
	ARG_SKETCH_COLUMN,
	ARG_ID_COLUMN,
	ARG_LIMIT,					/* minhash threshold, or simhash distance */
	ARG_REPRESENTATIVE_ORDER,	/* '' for the smallest id */
	NARGS
};

/* A row's id as bigint, from a smallint, integer or bigint column. */
static bool
RowId(HeapTuple tuple, Relation rel, int attnum, int64 *id)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	bool		isnull;
	Datum		value = SPI_getbinval(tuple, tupdesc, attnum, &isnull);

	if (isnull)
		return false;
	switch (SPI_gettypeid(tupdesc, attnum))
	{
		case INT2OID:
			*id = DatumGetInt16(value);
			break;
		case INT4OID:
			*id = DatumGetInt32(value);
			break;
		case INT8OID:
			*id = DatumGetInt64(value);
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" of relation \"%s\" is not of type smallint, integer or bigint",
							SPI_fname(tupdesc, attnum), RelationGetRelationName(rel)),
					 errdetail("Cluster ids are the ids of their representatives.")));
	}
	return true;
}

/* Take the near-duplicate tokens of one sketch. */
static void
LockSketchTokens(Oid target, Datum sketch, bool simhash, double threshold, int max_distance)
{
	ArrayType  *tokens = simhash ? SimHashLockTokens(DatumGetSimHash(sketch), max_distance)
		: MinHashLockTokens(DatumGetMinHashP(sketch), threshold);

	LockTokens(target, tokens);
}

/*
 * The statements of one maintaining trigger in this backend, prepared on its
 * first use and again whenever a table they name (or any schema) changes.
 * Most rows need no step: an inserted row with no near-duplicate, a deleted
 * row in no cluster.  Two cheap prepared lookups find those, so only the
 * rows that change a cluster pay for the step.
 */
typedef struct ClusterPlans
{
	Oid			tgoid;			/* hash key */
	bool		valid;			/* false once anything they name changed */
	Oid			target;			/* the table the trigger was created on */
	Oid			mapping;		/* its cluster table */
	Oid		   *covers;			/* tables whose change invalidates the plans */
	int			ncovers;
	Oid		   *gin_indexes;	/* GIN indexes on the sketch column */
	int			ngin_indexes;
	SPIPlanPtr	near;			/* the ids of rows near sketch $1, but id $3 */
	SPIPlanPtr	member;			/* the cluster of id $1 */
} ClusterPlans;

static HTAB *cluster_plans = NULL;

/* Forget the plans that cover relid (every plan for InvalidOid). */
static void
ClusterRelcacheCallback(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS status;
	ClusterPlans *plans;

	hash_seq_init(&status, cluster_plans);
	while ((plans = hash_seq_search(&status)) != NULL)
	{
		if (!OidIsValid(relid))
			plans->valid = false;
		for (int i = 0; i < plans->ncovers && plans->valid; i++)
			if (plans->covers[i] == relid)
				plans->valid = false;
	}
}

static void
ClusterSyscacheCallback(Datum arg, int cacheid, uint32 hashvalue)
{
	ClusterRelcacheCallback(arg, InvalidOid);
}

static ClusterPlans *
ClusterPlansFor(Trigger *trigger, Relation rel, Oid nsp, Oid sketch_type, bool simhash,
				double threshold)
{
	ClusterPlans *plans;
	bool		found;
	const char *schema_name = get_namespace_name(nsp);
	const char *schema = quote_identifier(schema_name);
	const char *sketch = quote_identifier(trigger->tgargs[ARG_SKETCH_COLUMN]);
	const char *id = quote_identifier(trigger->tgargs[ARG_ID_COLUMN]);
	Oid			near_types[3] = {sketch_type, InvalidOid, INT8OID};
	SketchRule	kind;
	Oid			member_types[1] = {INT8OID};
	List	   *members;
	ListCell   *lc;
	Oid			owner;
	Relation	target_rel;
	char	   *table;
	char	   *mapping;
	char	   *near;
	MemoryContext old;

	if (cluster_plans == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(ClusterPlans);
		cluster_plans = hash_create("ndd cluster plans", 16, &ctl, HASH_ELEM | HASH_BLOBS);
		CacheRegisterRelcacheCallback(ClusterRelcacheCallback, (Datum) 0);
		CacheRegisterSyscacheCallback(NAMESPACEOID, ClusterSyscacheCallback, (Datum) 0);
	}
	plans = hash_search(cluster_plans, &trigger->tgoid, HASH_ENTER, &found);
	if (found && plans->valid && plans->member != NULL)
		return plans;
	if (found)
	{
		if (plans->near)
			SPI_freeplan(plans->near);
		if (plans->member)
			SPI_freeplan(plans->member);
		if (plans->covers)
			pfree(plans->covers);
		if (plans->gin_indexes)
			pfree(plans->gin_indexes);
	}
	/* an invalidation that arrives while we build makes us build again */
	plans->valid = true;
	plans->near = plans->member = NULL;
	plans->covers = plans->gin_indexes = NULL;
	plans->ncovers = plans->ngin_indexes = 0;

	plans->target = TriggerTarget(trigger);
	plans->mapping = get_relname_relid(trigger->tgargs[ARG_MAPPING_TABLE],
									   get_namespace_oid(trigger->tgargs[ARG_MAPPING_SCHEMA], false));
	if (!OidIsValid(plans->mapping))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("cluster table \"%s.%s\" of trigger \"%s\" does not exist",
						trigger->tgargs[ARG_MAPPING_SCHEMA], trigger->tgargs[ARG_MAPPING_TABLE],
						trigger->tgname)));

	/*
	 * Lookups go through exact indexes only: one that answers the threshold
	 * with LSH recall would miss pairs and leave clusters wrong.
	 */
	members = find_all_inheritors(plans->target, AccessShareLock, NULL);
	plans->gin_indexes = GinIndexesOn(trigger->tgname, trigger->tgargs[ARG_SKETCH_COLUMN],
									  schema_name, members, !simhash, threshold,
									  &plans->ngin_indexes);
	old = MemoryContextSwitchTo(TopMemoryContext);
	plans->covers = palloc((list_length(members) + 1) * sizeof(Oid));
	MemoryContextSwitchTo(old);
	foreach(lc, members)
		plans->covers[plans->ncovers++] = lfirst_oid(lc);
	plans->covers[plans->ncovers++] = plans->mapping;

	target_rel = table_open(plans->target, AccessShareLock);
	table = psprintf("%s.%s", quote_identifier(get_namespace_name(RelationGetNamespace(target_rel))),
					 quote_identifier(RelationGetRelationName(target_rel)));
	table_close(target_rel, AccessShareLock);
	mapping = psprintf("%s.%s", quote_identifier(trigger->tgargs[ARG_MAPPING_SCHEMA]),
					   quote_identifier(trigger->tgargs[ARG_MAPPING_TABLE]));
	SketchRuleInit(&kind, simhash ? SKETCH_SIMHASH : SKETCH_MINHASH, schema, threshold, 0);
	near = kind.sql->near(&kind, psprintf("t.%s", sketch), "$1", "$2");
	near_types[1] = kind.sql->limit_type;

	owner = RelationOwner(plans->target);
	plans->near = PrepareAs(owner,
							psprintf("SELECT pg_catalog.array_agg(t.%s::pg_catalog.int8 ORDER BY t.%s::pg_catalog.int8) "
									 "FROM %s t WHERE %s AND t.%s OPERATOR(pg_catalog.<>) $3",
									 id, id, table, near, id),
							3, near_types);
	plans->member = PrepareAs(owner,
							  psprintf("SELECT m.cluster_id FROM %s m WHERE m.id OPERATOR(pg_catalog.=) $1", mapping),
							  1, member_types);
	return plans;
}

/* The first column of a lookup's first row, as text; NULL for none. */
static char *
LookUp(Oid owner, SPIPlanPtr plan, Datum *args, const char *distance, Snapshot snapshot)
{
	int			ret = RunAs(owner, plan, args, NULL, 1, distance, snapshot);

	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not look up clusters: %s", SPI_result_code_string(ret));
	if (SPI_processed == 0)
		return NULL;
	return SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
}

/*
 * Does a lookup find something?  Under REPEATABLE READ and SERIALIZABLE,
 * fail unless the transaction's snapshot gives the answer the latest one
 * gives.
 */
static bool
Finds(Relation rel, Oid owner, SPIPlanPtr plan, Datum *args, const char *distance)
{
	char	   *answer = LookUp(owner, plan, args, distance, InvalidSnapshot);

	if (IsolationUsesXactSnapshot())
	{
		char	   *latest = LookUp(owner, plan, args, distance, GetLatestSnapshot());

		if ((answer == NULL) != (latest == NULL) ||
			(answer != NULL && strcmp(answer, latest) != 0))
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("could not serialize access due to a concurrent change of the near-duplicate clusters of relation \"%s\"",
							RelationGetRelationName(rel)),
					 errhint("Retry the transaction.")));
	}
	return answer != NULL;
}

PG_FUNCTION_INFO_V1(ndd_maintain_clusters_trigger);
Datum
ndd_maintain_clusters_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	Trigger    *trigger;
	Relation	rel;
	TupleDesc	tupdesc;
	Oid			nsp;
	SketchColumn sketch;
	int			sketch_attnum,
				id_attnum;
	bool		simhash;
	double		threshold = 0;
	int			max_distance = 0;
	bool		truncated;
	bool		ordered;
	HeapTuple	oldtuple = NULL,
				newtuple = NULL;
	Datum		old_sketch = (Datum) 0,
				new_sketch = (Datum) 0;
	bool		old_null = true,
				new_null = true;
	int64		old_id = 0,
				new_id = 0;
	bool		has_old_id = false,
				has_new_id = false;
	bool		sketch_changed;
	bool		row_changed;
	bool		needed;
	ClusterPlans *plans;
	Oid			owner;
	Datum		args[3];
	char	   *distance = NULL;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_AFTER(td->tg_event) ||
		!((TRIGGER_FIRED_FOR_ROW(td->tg_event) && !TRIGGER_FIRED_BY_TRUNCATE(td->tg_event)) ||
		  (TRIGGER_FIRED_FOR_STATEMENT(td->tg_event) && TRIGGER_FIRED_BY_TRUNCATE(td->tg_event))))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function \"%s\" must be fired AFTER INSERT OR UPDATE OR DELETE FOR EACH ROW, or AFTER TRUNCATE",
						MAINTAIN_FUNCTION_NAME),
				 errhint("Put a table under maintained clusters with ndd_maintain_clusters().")));

	trigger = td->tg_trigger;
	rel = td->tg_relation;
	tupdesc = RelationGetDescr(rel);
	if (trigger->tgnargs != NARGS)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function \"%s\" takes %d arguments", MAINTAIN_FUNCTION_NAME, NARGS),
				 errhint("Put a table under maintained clusters with ndd_maintain_clusters().")));

	/* everything we call lives in this function's schema */
	nsp = get_func_namespace(trigger->tgfoid);
	ResolveSketchColumn(RelationGetRelid(rel), trigger->tgargs[ARG_SKETCH_COLUMN], nsp,
						SKETCH_MINHASH | SKETCH_SIMHASH, &sketch);
	sketch_attnum = sketch.attnum;
	id_attnum = ResolveColumn(RelationGetRelid(rel), trigger->tgargs[ARG_ID_COLUMN], NULL);
	simhash = (sketch.kind == SKETCH_SIMHASH);
	{
		char	   *end;
		const char *limit = trigger->tgargs[ARG_LIMIT];

		if (simhash)
		{
			long		d = strtol(limit, &end, 10);

			if (end == limit || *end != '\0' || d < INT_MIN || d > INT_MAX)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid distance \"%s\" for trigger \"%s\"", limit, trigger->tgname)));
			max_distance = (int) d;
			NddCheckMaxDistance(max_distance);
			distance = psprintf("%d", max_distance);
		}
		else
		{
			threshold = strtod(limit, &end);
			if (end == limit || *end != '\0')
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid threshold \"%s\" for trigger \"%s\"", limit, trigger->tgname)));
			NddCheckThreshold(threshold);
		}
	}
	ordered = trigger->tgargs[ARG_REPRESENTATIVE_ORDER][0] != '\0';

	truncated = TRIGGER_FIRED_BY_TRUNCATE(td->tg_event);
	if (TRIGGER_FIRED_BY_INSERT(td->tg_event))
		newtuple = td->tg_trigtuple;
	else if (TRIGGER_FIRED_BY_DELETE(td->tg_event))
		oldtuple = td->tg_trigtuple;
	else if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
	{
		oldtuple = td->tg_trigtuple;
		newtuple = td->tg_newtuple;
	}
	if (oldtuple)
	{
		old_sketch = SPI_getbinval(oldtuple, tupdesc, sketch_attnum, &old_null);
		has_old_id = RowId(oldtuple, rel, id_attnum, &old_id);
	}
	if (newtuple)
	{
		new_sketch = SPI_getbinval(newtuple, tupdesc, sketch_attnum, &new_null);
		has_new_id = RowId(newtuple, rel, id_attnum, &new_id);
	}
	sketch_changed = old_null != new_null ||
		(!old_null && !datumIsEqual(old_sketch, new_sketch, simhash, simhash ? SIMHASH_SIZE : -1));
	/* an insert or delete, or an update that can change pairs */
	row_changed = sketch_changed || has_old_id != has_new_id || old_id != new_id;

	/*
	 * An update that keeps the id and the sketch changes no pair; only the
	 * representative can change, when an order chooses it.
	 */
	if (!truncated && !row_changed && !ordered)
		return PointerGetDatum(NULL);
	if (!truncated && !has_old_id && !has_new_id)
		return PointerGetDatum(NULL);	/* a row without an id is in no cluster */

	SPI_connect();
	plans = ClusterPlansFor(trigger, rel, nsp, sketch.type, simhash, threshold);
	owner = RelationOwner(plans->target);

	/* 1. the tokens every near-duplicate of the old and the new row claims */
	if (rel->rd_rel->relpersistence != RELPERSISTENCE_TEMP && !truncated && row_changed)
	{
		if (!old_null)
			LockSketchTokens(plans->target, old_sketch, simhash, threshold, max_distance);
		if (!new_null)
			LockSketchTokens(plans->target, new_sketch, simhash, threshold, max_distance);
	}
	for (int i = 0; i < plans->ngin_indexes; i++)
		BoundPendingList(plans->gin_indexes[i]);

	/*
	 * 2. is there anything to do: the old row was in a cluster, or the new
	 * row has a near-duplicate
	 */
	needed = truncated;
	if (!needed && has_old_id)
	{
		args[0] = Int64GetDatum(old_id);
		needed = Finds(rel, owner, plans->member, args, NULL);
	}
	if (!needed && has_new_id && !new_null && row_changed)
	{
		args[0] = new_sketch;
		args[1] = simhash ? Int32GetDatum(max_distance) : Float8GetDatum(threshold);
		args[2] = Int64GetDatum(new_id);
		needed = Finds(rel, owner, plans->near, args, distance);
	}

	/*
	 * 3. the step, as the owner in the settings of the lookups (RunAs), as
	 * ndd_cluster_step() would run over SPI
	 */
	if (needed)
	{
		ClusterChange change;
		GuardState	state;

		memset(&change, 0, sizeof(change));
		change.tbl = plans->target;
		change.mapping = plans->mapping;
		change.sketch_column = trigger->tgargs[ARG_SKETCH_COLUMN];
		change.id_column = trigger->tgargs[ARG_ID_COLUMN];
		change.has_threshold = !simhash;
		change.threshold = threshold;
		change.has_max_distance = simhash;
		change.max_distance = max_distance;
		change.representative_order = ordered ? trigger->tgargs[ARG_REPRESENTATIVE_ORDER] : NULL;
		change.has_old_id = has_old_id && !truncated;
		change.old_id = old_id;
		change.has_new_id = has_new_id && !truncated;
		change.new_id = new_id;
		change.sketch_changed = sketch_changed;
		GuardEnter(&state, owner, distance);
		ApplyClusterChange(nsp, &change);
		GuardLeave(&state);
	}
	SPI_finish();
	return PointerGetDatum(NULL);
}

/*
 * ndd_claim_cluster_lock(mapping regclass): hold, to the end of the
 * transaction, the lock under which the step (maintain_clusters.c) changes
 * a cluster table.  Only a role that may update that table may take it.
 */
PG_FUNCTION_INFO_V1(ndd_claim_cluster_lock);
Datum
ndd_claim_cluster_lock(PG_FUNCTION_ARGS)
{
	Oid			mapping = PG_GETARG_OID(0);
	Oid			nsp = get_func_namespace(fcinfo->flinfo->fn_oid);
	Datum		zero = Int32GetDatum(0);

	if (pg_class_aclcheck(mapping, GetUserId(), ACL_UPDATE) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(mapping))));
	if (get_rel_persistence(mapping) == RELPERSISTENCE_TEMP)
		PG_RETURN_VOID();
	SPI_connect();
	ClaimTokens(nsp, mapping, construct_array(&zero, 1, INT4OID, sizeof(int32), true, TYPALIGN_INT));
	SPI_finish();
	PG_RETURN_VOID();
}

/*
 * ndd_check_cluster_indexes(tbl regclass, sketch_column name, threshold
 * float8): error out, as the trigger would on its first row, if a
 * minhash_ops index on the column answers the threshold with LSH recall only.
 */
PG_FUNCTION_INFO_V1(ndd_check_cluster_indexes);
Datum
ndd_check_cluster_indexes(PG_FUNCTION_ARGS)
{
	Oid			tbl = PG_GETARG_OID(0);
	Name		column = PG_GETARG_NAME(1);
	double		threshold = PG_GETARG_FLOAT8(2);
	Oid			nsp = get_func_namespace(fcinfo->flinfo->fn_oid);
	int			n;

	NddCheckThreshold(threshold);
	pfree(GinIndexesOn("ndd_maintain_clusters", NameStr(*column), get_namespace_name(nsp),
					   find_all_inheritors(tbl, AccessShareLock, NULL), true, threshold, &n));
	PG_RETURN_VOID();
}
