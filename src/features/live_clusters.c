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

#include "base/ndd_limits.h"
#include "base/sketch_column.h"
#include "features/guard.h"
#include "sketch/minhash.h"
#include "sketch/simhash.h"
#include "sqlgen/sketch_sql.h"

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

/* A row's id as bigint (id_type from ResolveIdColumn); false when NULL. */
static bool
RowId(HeapTuple tuple, Relation rel, int attnum, Oid id_type, int64 *id)
{
	bool		isnull;
	Datum		value = SPI_getbinval(tuple, RelationGetDescr(rel), attnum, &isnull);

	if (isnull)
		return false;
	*id = IdGetInt64(value, id_type);
	return true;
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

/*
 * The ids of the rows near sketch $1 ($2 the threshold or distance) but row
 * $3: %1$s the id column, %2$s the table, %3$s the kind's near test of t.
 */
#define CLUSTER_NEAR_SQL \
	"SELECT pg_catalog.array_agg(t.%1$s::pg_catalog.int8 ORDER BY t.%1$s::pg_catalog.int8) " \
	"FROM %2$s t WHERE %3$s AND t.%1$s OPERATOR(pg_catalog.<>) $3"

/* the cluster of id $1 in cluster table %s */
#define CLUSTER_MEMBER_SQL \
	"SELECT m.cluster_id FROM %s m WHERE m.id OPERATOR(pg_catalog.=) $1"

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
	plans->near = PrepareAs(owner, psprintf(CLUSTER_NEAR_SQL, id, table, near), 3, near_types);
	plans->member = PrepareAs(owner, psprintf(CLUSTER_MEMBER_SQL, mapping), 1, member_types);
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

/* What a live-clusters trigger maintains, parsed from its arguments. */
typedef struct ClusterRule
{
	SketchColumn sketch;
	AttrNumber	id_attnum;
	Oid			id_type;		/* smallint, integer or bigint */
	bool		simhash;		/* else minhash */
	double		threshold;		/* minhash */
	int			max_distance;	/* simhash */
	char	   *distance;		/* simhash: ndd.hamming_threshold for the lookups */
	bool		ordered;		/* an order chooses the representative */
} ClusterRule;

/* One row's change, as the clusters see it. */
typedef struct RowChange
{
	bool		truncated;
	Datum		old_sketch,
				new_sketch;
	bool		old_null,
				new_null;
	int64		old_id,
				new_id;
	bool		has_old_id,
				has_new_id;
	bool		sketch_changed;
	bool		row_changed;	/* an insert or delete, or an update that can change pairs */
} RowChange;

/* The trigger's threshold (minhash) or distance (simhash), checked as every function checks one. */
static void
ParseClusterLimit(Trigger *trigger, ClusterRule *rule)
{
	const char *limit = trigger->tgargs[ARG_LIMIT];
	char	   *end;

	if (rule->simhash)
	{
		long		d = strtol(limit, &end, 10);

		if (end == limit || *end != '\0' || d < INT_MIN || d > INT_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid distance \"%s\" for trigger \"%s\"", limit, trigger->tgname)));
		rule->max_distance = (int) d;
		NddCheckMaxDistance(rule->max_distance);
		rule->distance = psprintf("%d", rule->max_distance);
	}
	else
	{
		rule->threshold = strtod(limit, &end);
		if (end == limit || *end != '\0')
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid threshold \"%s\" for trigger \"%s\"", limit, trigger->tgname)));
		NddCheckThreshold(rule->threshold);
	}
}

/* The rule from the trigger's arguments, with the columns' checks. */
static void
ParseClusterRule(Trigger *trigger, Relation rel, Oid nsp, ClusterRule *rule)
{
	memset(rule, 0, sizeof(*rule));
	if (trigger->tgnargs != NARGS)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function \"%s\" takes %d arguments", MAINTAIN_FUNCTION_NAME, NARGS),
				 errhint("Put a table under maintained clusters with ndd_maintain_clusters().")));
	ResolveSketchColumn(RelationGetRelid(rel), trigger->tgargs[ARG_SKETCH_COLUMN], nsp,
						SKETCH_MINHASH | SKETCH_SIMHASH, &rule->sketch);
	rule->id_attnum = ResolveIdColumn(RelationGetRelid(rel), trigger->tgargs[ARG_ID_COLUMN],
									  CLUSTER_IDS_DETAIL, &rule->id_type);
	rule->simhash = (rule->sketch.kind == SKETCH_SIMHASH);
	ParseClusterLimit(trigger, rule);
	rule->ordered = trigger->tgargs[ARG_REPRESENTATIVE_ORDER][0] != '\0';
}

/* The near-duplicate tokens of one sketch, sorted. */
static ArrayType *
SketchTokens(Datum sketch, const ClusterRule *rule)
{
	return rule->simhash ? SimHashLockTokens(DatumGetSimHash(sketch), rule->max_distance)
		: MinHashLockTokens(DatumGetMinHashP(sketch), rule->threshold);
}

/* The old and the new row's sketches and ids, and what changed. */
static void
ReadRowChange(TriggerData *td, const ClusterRule *rule, RowChange *change)
{
	Relation	rel = td->tg_relation;
	TupleDesc	tupdesc = RelationGetDescr(rel);
	HeapTuple	oldtuple = NULL,
				newtuple = NULL;
	bool		simhash = rule->simhash;

	memset(change, 0, sizeof(*change));
	change->old_null = change->new_null = true;
	change->truncated = TRIGGER_FIRED_BY_TRUNCATE(td->tg_event);
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
		change->old_sketch = SPI_getbinval(oldtuple, tupdesc, rule->sketch.attnum, &change->old_null);
		change->has_old_id = RowId(oldtuple, rel, rule->id_attnum, rule->id_type, &change->old_id);
	}
	if (newtuple)
	{
		change->new_sketch = SPI_getbinval(newtuple, tupdesc, rule->sketch.attnum, &change->new_null);
		change->has_new_id = RowId(newtuple, rel, rule->id_attnum, rule->id_type, &change->new_id);
	}
	change->sketch_changed = change->old_null != change->new_null ||
		(!change->old_null &&
		 !datumIsEqual(change->old_sketch, change->new_sketch, simhash, simhash ? SIMHASH_SIZE : -1));
	change->row_changed = change->sketch_changed || change->has_old_id != change->has_new_id ||
		change->old_id != change->new_id;
}

/*
 * Step 2: is there anything to do: the old row was in a cluster, or the new
 * row has a near-duplicate.
 */
static bool
ChangeNeeded(Relation rel, ClusterPlans *plans, const ClusterRule *rule, const RowChange *change)
{
	Oid			owner = RelationOwner(plans->target);
	Datum		args[3];

	if (change->truncated)
		return true;
	if (change->has_old_id)
	{
		args[0] = Int64GetDatum(change->old_id);
		if (Finds(rel, owner, plans->member, args, NULL))
			return true;
	}
	if (change->has_new_id && !change->new_null && change->row_changed)
	{
		args[0] = change->new_sketch;
		args[1] = rule->simhash ? Int32GetDatum(rule->max_distance) : Float8GetDatum(rule->threshold);
		args[2] = Int64GetDatum(change->new_id);
		return Finds(rel, owner, plans->near, args, rule->distance);
	}
	return false;
}

/*
 * Step 3: the step, as the owner in the settings of the lookups (RunAs), as
 * ndd_cluster_step() would run over SPI.
 */
static void
ApplyStep(Trigger *trigger, Oid nsp, ClusterPlans *plans, const ClusterRule *rule,
		  const RowChange *row)
{
	ClusterChange change;
	GuardState	state;

	memset(&change, 0, sizeof(change));
	change.tbl = plans->target;
	change.mapping = plans->mapping;
	change.sketch_column = trigger->tgargs[ARG_SKETCH_COLUMN];
	change.id_column = trigger->tgargs[ARG_ID_COLUMN];
	change.has_threshold = !rule->simhash;
	change.threshold = rule->threshold;
	change.has_max_distance = rule->simhash;
	change.max_distance = rule->max_distance;
	change.representative_order = rule->ordered ? trigger->tgargs[ARG_REPRESENTATIVE_ORDER] : NULL;
	change.has_old_id = row->has_old_id && !row->truncated;
	change.old_id = row->old_id;
	change.has_new_id = row->has_new_id && !row->truncated;
	change.new_id = row->new_id;
	change.sketch_changed = row->sketch_changed;
	GuardEnter(&state, RelationOwner(plans->target), rule->distance);
	ApplyClusterChange(nsp, &change);
	GuardLeave(&state);
}

PG_FUNCTION_INFO_V1(ndd_maintain_clusters_trigger);
Datum
ndd_maintain_clusters_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	Relation	rel;
	Oid			nsp;
	ClusterRule rule;
	RowChange	change;
	ClusterPlans *plans;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_AFTER(td->tg_event) ||
		!((TRIGGER_FIRED_FOR_ROW(td->tg_event) && !TRIGGER_FIRED_BY_TRUNCATE(td->tg_event)) ||
		  (TRIGGER_FIRED_FOR_STATEMENT(td->tg_event) && TRIGGER_FIRED_BY_TRUNCATE(td->tg_event))))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function \"%s\" must be fired AFTER INSERT OR UPDATE OR DELETE FOR EACH ROW, or AFTER TRUNCATE",
						MAINTAIN_FUNCTION_NAME),
				 errhint("Put a table under maintained clusters with ndd_maintain_clusters().")));
	rel = td->tg_relation;
	/* everything we call lives in this function's schema */
	nsp = NddNamespace(td->tg_trigger->tgfoid);
	ParseClusterRule(td->tg_trigger, rel, nsp, &rule);
	ReadRowChange(td, &rule, &change);

	/*
	 * An update that keeps the id and the sketch changes no pair; only the
	 * representative can change, when an order chooses it.  A row without
	 * an id is in no cluster.
	 */
	if (!change.truncated && !change.row_changed && !rule.ordered)
		return PointerGetDatum(NULL);
	if (!change.truncated && !change.has_old_id && !change.has_new_id)
		return PointerGetDatum(NULL);

	SPI_connect();
	plans = ClusterPlansFor(td->tg_trigger, rel, nsp, rule.sketch.type, rule.simhash, rule.threshold);

	/* 1. the tokens every near-duplicate of the old and the new row claims */
	if (rel->rd_rel->relpersistence != RELPERSISTENCE_TEMP && !change.truncated && change.row_changed)
	{
		/*
		 * Both rows' tokens in one sorted pass: taken old then new, two
		 * updates that swap near-duplicates could each hold what the other
		 * waits for (013_soak.pl met that deadlock)
		 */
		ArrayType  *old_tokens = change.old_null ? NULL : SketchTokens(change.old_sketch, &rule);
		ArrayType  *new_tokens = change.new_null ? NULL : SketchTokens(change.new_sketch, &rule);

		if (old_tokens && new_tokens)
			LockTokens(plans->target, MergeTokens(old_tokens, new_tokens));
		else if (old_tokens || new_tokens)
			LockTokens(plans->target, old_tokens ? old_tokens : new_tokens);
	}
	for (int i = 0; i < plans->ngin_indexes; i++)
		BoundPendingList(plans->gin_indexes[i]);

	/* 2. anything to do; 3. the step */
	if (ChangeNeeded(rel, plans, &rule, &change))
		ApplyStep(td->tg_trigger, nsp, plans, &rule, &change);
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
	Oid			nsp = NddNamespace(fcinfo->flinfo->fn_oid);
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
 * Dropped from the catalog in 0.3.0; the install scripts of 0.1 and 0.2.0
 * still declare it, and CREATE FUNCTION looks for its symbol.
 */
PG_FUNCTION_INFO_V1(ndd_check_cluster_indexes);
Datum
ndd_check_cluster_indexes(PG_FUNCTION_ARGS)
{
	Oid			tbl = PG_GETARG_OID(0);
	Name		column = PG_GETARG_NAME(1);
	double		threshold = PG_GETARG_FLOAT8(2);
	Oid			nsp = NddNamespace(fcinfo->flinfo->fn_oid);
	int			n;

	NddCheckThreshold(threshold);
	pfree(GinIndexesOn("ndd_maintain_clusters", NameStr(*column), get_namespace_name(nsp),
					   find_all_inheritors(tbl, AccessShareLock, NULL), true, threshold, &n));
	PG_RETURN_VOID();
}
