/*
 * live_clusters.c
 *		Clusters kept current as rows change: the trigger that
 *		ndd_maintain_clusters() puts on a table, and the lock its cluster
 *		mapping is changed under.
 *
 * The trigger fires AFTER each inserted, updated or deleted row (and after
 * TRUNCATE).  It claims the row's near-duplicate tokens (its band keys, as
 * the insert guard's) by upserting them in ndd_near_duplicate_locks
 * (ClaimTokens in trigger.c), so two transactions writing rows that are
 * near-duplicates of each other take turns: under READ COMMITTED the second
 * waits and then sees the first's row; under REPEATABLE READ, updating a
 * token row that a transaction invisible to its snapshot wrote raises a
 * serialization failure, as INSERT ... ON CONFLICT does.  (The guard's lock
 * tokens would not: the steps below read with the transaction's snapshot.)  Then, as the table's owner and with search_path
 * pinned, it runs ndd_cluster_step() (sql/ndd.sql), which updates the
 * mapping: an inserted row joins the clusters of its near-duplicates, a
 * deleted row's cluster is recomputed from its remaining members, an
 * updated row is both.
 *
 * Rows that are not near-duplicates of each other may still meet in one
 * cluster, through others, so changes of the mapping itself are serialized
 * too: ndd_claim_cluster_lock() claims one token keyed by the mapping table,
 * with the same upsert, before ndd_cluster_step() changes it.  A row with no
 * near-duplicate changes no mapping and takes no part in that lock, so
 * inserting distinct rows stays concurrent.
 */
#include "postgres.h"

#include <limits.h>

#include "access/table.h"
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
#include "utils/syscache.h"

#include "guard.h"
#include "minhash.h"
#include "ndd.h"
#include "simhash.h"

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

/* Claim the near-duplicate tokens of one sketch. */
static void
ClaimSketchTokens(Oid nsp, Oid target, Datum sketch, bool simhash, double threshold,
				  int max_distance)
{
	ArrayType  *tokens = simhash ? SimHashLockTokens(DatumGetSimHash(sketch), max_distance)
		: MinHashLockTokens(DatumGetMinHashP(sketch), threshold);

	ClaimTokens(nsp, target, tokens);
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
	Oid			target;
	Oid			mapping;
	Oid			minhash_type,
				simhash_type,
				sketch_type;
	int			sketch_attnum,
				id_attnum;
	bool		simhash;
	double		threshold = 0;
	int			max_distance = 0;
	bool		truncated;
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
	Datum		args[10];
	char		nulls[10];
	Oid			argtypes[10] = {REGCLASSOID, REGCLASSOID, NAMEOID, NAMEOID, FLOAT8OID,
		INT4OID, TEXTOID, INT8OID, INT8OID, BOOLOID};
	char	   *distance = NULL;
	const char *schema_name;
	Oid		   *gin_indexes;
	int			ngin_indexes;
	GuardState	state;
	int			ret;

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
	schema_name = get_namespace_name(nsp);
	target = TriggerTarget(trigger);
	mapping = get_relname_relid(trigger->tgargs[ARG_MAPPING_TABLE],
								get_namespace_oid(trigger->tgargs[ARG_MAPPING_SCHEMA], false));
	if (!OidIsValid(mapping))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("cluster table \"%s.%s\" of trigger \"%s\" does not exist",
						trigger->tgargs[ARG_MAPPING_SCHEMA], trigger->tgargs[ARG_MAPPING_TABLE],
						trigger->tgname)));

	sketch_attnum = ColumnOf(rel, trigger->tgargs[ARG_SKETCH_COLUMN]);
	id_attnum = ColumnOf(rel, trigger->tgargs[ARG_ID_COLUMN]);
	minhash_type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
								   CStringGetDatum("minhash"), ObjectIdGetDatum(nsp));
	simhash_type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
								   CStringGetDatum("simhash"), ObjectIdGetDatum(nsp));
	sketch_type = SPI_gettypeid(tupdesc, sketch_attnum);
	if (sketch_type != minhash_type && sketch_type != simhash_type)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" of relation \"%s\" is not of type minhash or simhash",
						trigger->tgargs[ARG_SKETCH_COLUMN], RelationGetRelationName(rel))));
	simhash = (sketch_type == simhash_type);
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

	/*
	 * An update that keeps the id and the sketch changes no pair; only the
	 * representative can change, when an order chooses it.
	 */
	if (oldtuple && newtuple && !sketch_changed && has_old_id == has_new_id &&
		old_id == new_id && trigger->tgargs[ARG_REPRESENTATIVE_ORDER][0] == '\0')
		return PointerGetDatum(NULL);

	SPI_connect();

	/* 1. the tokens every near-duplicate of the old and the new row claims */
	if (rel->rd_rel->relpersistence != RELPERSISTENCE_TEMP && !truncated &&
		(sketch_changed || old_id != new_id || has_old_id != has_new_id))
	{
		if (!old_null)
			ClaimSketchTokens(nsp, target, old_sketch, simhash, threshold, max_distance);
		if (!new_null)
			ClaimSketchTokens(nsp, target, new_sketch, simhash, threshold, max_distance);
	}

	/*
	 * 2. the step, through exact indexes only (one that answers the threshold
	 * with LSH recall would miss pairs and leave clusters wrong)
	 */
	gin_indexes = GinIndexesOn(trigger->tgname, trigger->tgargs[ARG_SKETCH_COLUMN], schema_name,
							   find_all_inheritors(target, AccessShareLock, NULL),
							   !simhash, threshold, &ngin_indexes);
	for (int i = 0; i < ngin_indexes; i++)
		BoundPendingList(gin_indexes[i]);
	pfree(gin_indexes);

	memset(nulls, ' ', sizeof(nulls));
	args[0] = ObjectIdGetDatum(target);
	args[1] = ObjectIdGetDatum(mapping);
	args[2] = DirectFunctionCall1(namein, CStringGetDatum(trigger->tgargs[ARG_SKETCH_COLUMN]));
	args[3] = DirectFunctionCall1(namein, CStringGetDatum(trigger->tgargs[ARG_ID_COLUMN]));
	args[4] = Float8GetDatum(threshold);
	nulls[4] = simhash ? 'n' : ' ';
	args[5] = Int32GetDatum(max_distance);
	nulls[5] = simhash ? ' ' : 'n';
	args[6] = CStringGetTextDatum(trigger->tgargs[ARG_REPRESENTATIVE_ORDER]);
	nulls[6] = trigger->tgargs[ARG_REPRESENTATIVE_ORDER][0] == '\0' ? 'n' : ' ';
	args[7] = Int64GetDatum(old_id);
	nulls[7] = has_old_id ? ' ' : 'n';
	args[8] = Int64GetDatum(new_id);
	nulls[8] = has_new_id ? ' ' : 'n';
	args[9] = BoolGetDatum(sketch_changed);
	if (truncated)
		nulls[7] = nulls[8] = 'n';
	else if (!has_old_id && !has_new_id)
	{
		/* a row without an id is in no cluster */
		SPI_finish();
		return PointerGetDatum(NULL);
	}

	GuardEnter(&state, RelationOwner(target), distance);
	ret = SPI_execute_with_args(psprintf("SELECT %s.ndd_cluster_step($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
										 quote_identifier(schema_name)),
								10, argtypes, args, nulls, false, 0);
	GuardLeave(&state);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not update the clusters of \"%s\": %s",
			 RelationGetRelationName(rel), SPI_result_code_string(ret));
	SPI_finish();
	return PointerGetDatum(NULL);
}

/*
 * ndd_claim_cluster_lock(mapping regclass): hold, to the end of the
 * transaction, the lock under which ndd_cluster_step() changes a cluster
 * table.  Only a role that may update that table may take it.
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
