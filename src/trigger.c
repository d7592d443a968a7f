/*
 * trigger.c
 *		ndd_reject_near_duplicates(): a BEFORE INSERT OR UPDATE trigger that
 *		rejects (or skips) a row whose minhash sketch is a near-duplicate of a
 *		row already in the table, correctly under concurrency.
 *
 * Why a lookup alone is not enough
 * --------------------------------
 * A check cannot see a row that another transaction has not committed, so
 * two sessions inserting near-duplicates at once would both pass it.  Before
 * it checks, a transaction therefore claims tokens that every near-duplicate
 * of its row must claim too, and holds them to commit.  The tokens are the
 * row's LSH band keys under a banding that is exact at the threshold: by
 * pigeonhole, two sketches at least that similar agree on a whole band, so
 * they share a token.  Keys are folded into NDD_LOCK_TOKENS slots per table
 * (a chance collision only makes two unrelated inserts wait for each other).
 *
 * A token is claimed by upserting its row in ndd_near_duplicate_locks (ON
 * CONFLICT DO UPDATE).  That costs no shared lock-table entries, so a bulk
 * load of any size works, and it does the right thing in each isolation
 * level: under READ COMMITTED the second inserter waits for the first to
 * finish and then, with a fresh snapshot, sees its row; under REPEATABLE
 * READ and SERIALIZABLE, updating a token row that a transaction invisible
 * to our snapshot wrote raises a serialization failure (40001), just as
 * INSERT ... ON CONFLICT does.  Tokens are claimed in sorted order, so two
 * single-row inserters cannot deadlock on them.
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/syscache.h"

#include "hash.h"
#include "lsh.h"
#include "minhash.h"
#include "ndd.h"

/* Token slots per table. */
#define NDD_LOCK_TOKENS		65536

/* Prepared statements of one trigger, kept for the life of the backend. */
typedef struct TriggerPlans
{
	Oid			tgoid;			/* hash key */
	SPIPlanPtr	claim;
	SPIPlanPtr	check_insert;
	SPIPlanPtr	check_update;
} TriggerPlans;

static HTAB *trigger_plans = NULL;

typedef enum NearDuplicateAction
{
	ACTION_ERROR,
	ACTION_SKIP
} NearDuplicateAction;

static int
CompareInt32(const void *a, const void *b)
{
	int32		x = *(const int32 *) a;
	int32		y = *(const int32 *) b;

	return (x > y) - (x < y);
}

/*
 * The sorted, distinct tokens of a sketch: its band keys under the banding
 * exact at threshold, folded into NDD_LOCK_TOKENS slots.
 */
static ArrayType *
LockTokens(const MinHash *mh, double threshold)
{
	int			bands,
				rows;
	int32	   *tokens;
	Datum	   *elems;
	int			n = 0;

	LshBandingForThreshold(mh->num_perm, threshold, &bands, &rows);
	tokens = palloc(bands * sizeof(int32));
	for (int b = 0; b < bands; b++)
		tokens[b] = (int32) (LshBandHash(mh, b, rows) % NDD_LOCK_TOKENS);
	qsort(tokens, bands, sizeof(int32), CompareInt32);
	elems = palloc(bands * sizeof(Datum));
	for (int b = 0; b < bands; b++)
		if (b == 0 || tokens[b] != tokens[b - 1])
			elems[n++] = Int32GetDatum(tokens[b]);
	return construct_array(elems, n, INT4OID, sizeof(int32), true, TYPALIGN_INT);
}

/*
 * SQL text that shows the key of the row being read: "(id)=(42)" from the
 * primary key, as unique violations do, or its ctid when there is none.
 */
static char *
KeyExpression(Relation rel)
{
	Oid			pk = RelationGetPrimaryKeyIndex(rel);
	StringInfoData names,
				values;
	Relation	index;

	if (!OidIsValid(pk))
		return pstrdup("pg_catalog.concat('ctid ', ctid)");

	initStringInfo(&names);
	initStringInfo(&values);
	index = index_open(pk, AccessShareLock);
	for (int i = 0; i < index->rd_index->indnkeyatts; i++)
	{
		AttrNumber	att = index->rd_index->indkey.values[i];
		const char *name = quote_identifier(NameStr(TupleDescAttr(RelationGetDescr(rel), att - 1)->attname));

		appendStringInfo(&names, "%s%s", i ? ", " : "", name);
		appendStringInfo(&values, ", %s", name);
	}
	index_close(index, AccessShareLock);
	return psprintf("pg_catalog.concat(%s, pg_catalog.concat_ws(', '%s), ')')",
					quote_literal_cstr(psprintf("(%s)=(", names.data)), values.data);
}

static SPIPlanPtr
PrepareKept(const char *sql, int nargs, Oid *argtypes)
{
	SPIPlanPtr	plan = SPI_prepare(sql, nargs, argtypes);

	if (plan == NULL)
		elog(ERROR, "could not prepare \"%s\": %s", sql, SPI_result_code_string(SPI_result));
	SPI_keepplan(plan);
	return plan;
}

/*
 * The statements of a trigger, prepared on its first use in this backend.
 * Everything they name is schema-qualified: nothing depends on search_path.
 */
static TriggerPlans *
PlansFor(Trigger *trigger, Relation rel, const char *schema, Oid minhash_type)
{
	TriggerPlans *plans;
	bool		found;
	StringInfoData sql;
	Oid			claim_types[2] = {OIDOID, INT4ARRAYOID};
	Oid			check_types[3] = {minhash_type, FLOAT8OID, TIDOID};
	const char *column = quote_identifier(trigger->tgargs[0]);

	if (trigger_plans == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(TriggerPlans);
		trigger_plans = hash_create("ndd trigger plans", 16, &ctl, HASH_ELEM | HASH_BLOBS);
	}
	plans = hash_search(trigger_plans, &trigger->tgoid, HASH_ENTER, &found);
	if (found && plans->claim != NULL)
		return plans;
	plans->claim = NULL;

	initStringInfo(&sql);
	appendStringInfo(&sql,
					 "INSERT INTO %s.ndd_near_duplicate_locks AS l (relid, token) "
					 "SELECT $1, t FROM pg_catalog.unnest($2) WITH ORDINALITY AS u(t, o) ORDER BY o "
					 "ON CONFLICT (relid, token) DO UPDATE SET claims = l.claims OPERATOR(pg_catalog.+) 1",
					 schema);
	plans->check_insert = NULL;
	plans->check_update = NULL;
	{
		SPIPlanPtr	claim = PrepareKept(sql.data, 2, claim_types);

		resetStringInfo(&sql);
		appendStringInfo(&sql,
						 "SELECT %s, %s.similarity(%s, $1) FROM %s.%s "
						 "WHERE %s OPERATOR(%s.%%) ROW($1, $2)::%s.minhash_query",
						 KeyExpression(rel), schema, column,
						 quote_identifier(get_namespace_name(RelationGetNamespace(rel))),
						 quote_identifier(RelationGetRelationName(rel)),
						 column, schema, schema);
		plans->check_insert = PrepareKept(psprintf("%s ORDER BY 2 DESC LIMIT 1", sql.data),
										  2, check_types);
		plans->check_update = PrepareKept(psprintf("%s AND ctid OPERATOR(pg_catalog.<>) $3 ORDER BY 2 DESC LIMIT 1",
												   sql.data),
										  3, check_types);
		plans->claim = claim;
	}
	return plans;
}

/* ndd_reject_near_duplicates(sketch_column [, threshold [, action]]) */
PG_FUNCTION_INFO_V1(ndd_reject_near_duplicates);
Datum
ndd_reject_near_duplicates(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	Trigger    *trigger;
	Relation	rel;
	TupleDesc	tupdesc;
	HeapTuple	newtuple;
	const char *fname = "ndd_reject_near_duplicates";
	int			attnum;
	bool		isnull;
	Datum		value;
	MinHash    *mh;
	double		threshold = ndd_similarity_threshold;
	NearDuplicateAction action = ACTION_ERROR;
	Oid			nsp;
	const char *schema;
	Oid			minhash_type;
	TriggerPlans *plans;
	Datum		args[3];
	int			ret;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BEFORE(td->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(td->tg_event) ||
		!(TRIGGER_FIRED_BY_INSERT(td->tg_event) || TRIGGER_FIRED_BY_UPDATE(td->tg_event)))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function \"%s\" must be fired BEFORE INSERT OR UPDATE FOR EACH ROW", fname)));

	trigger = td->tg_trigger;
	rel = td->tg_relation;
	tupdesc = RelationGetDescr(rel);
	newtuple = TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? td->tg_newtuple : td->tg_trigtuple;

	if (trigger->tgnargs < 1 || trigger->tgnargs > 3)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function \"%s\" takes the sketch column, and optionally the threshold and the action", fname),
				 errhint("For example: EXECUTE FUNCTION %s('sketch', '0.8', 'error').", fname)));
	if (trigger->tgnargs >= 2)
	{
		char	   *end;

		threshold = strtod(trigger->tgargs[1], &end);
		if (end == trigger->tgargs[1] || *end != '\0' || isnan(threshold) ||
			threshold <= 0.0 || threshold > 1.0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid threshold \"%s\" for trigger \"%s\"", trigger->tgargs[1], trigger->tgname),
					 errdetail("The threshold must be greater than 0 and at most 1.")));
	}
	if (trigger->tgnargs == 3)
	{
		if (strcmp(trigger->tgargs[2], "error") == 0)
			action = ACTION_ERROR;
		else if (strcmp(trigger->tgargs[2], "skip") == 0)
			action = ACTION_SKIP;
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid action \"%s\" for trigger \"%s\"", trigger->tgargs[2], trigger->tgname),
					 errhint("Valid actions are \"error\" and \"skip\".")));
	}

	/* everything we call lives in this function's schema */
	nsp = get_func_namespace(trigger->tgfoid);
	schema = quote_identifier(get_namespace_name(nsp));
	minhash_type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
								   CStringGetDatum("minhash"), ObjectIdGetDatum(nsp));

	attnum = SPI_fnumber(tupdesc, trigger->tgargs[0]);
	if (attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist",
						trigger->tgargs[0], RelationGetRelationName(rel))));
	if (SPI_gettypeid(tupdesc, attnum) != minhash_type)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" of relation \"%s\" is not of type minhash",
						trigger->tgargs[0], RelationGetRelationName(rel))));

	if (TupleDescAttr(tupdesc, attnum - 1)->attgenerated)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("column \"%s\" of relation \"%s\" is a generated column",
						trigger->tgargs[0], RelationGetRelationName(rel)),
				 errdetail("Generated columns are computed after BEFORE triggers run, so %s cannot see it.", fname),
				 errhint("Fill the sketch in an earlier BEFORE trigger, or in the INSERT itself.")));

	value = SPI_getbinval(newtuple, tupdesc, attnum, &isnull);
	if (isnull)
		return PointerGetDatum(newtuple);
	if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
	{
		bool		oldnull;
		Datum		old = SPI_getbinval(td->tg_trigtuple, tupdesc, attnum, &oldnull);

		/* an unchanged sketch cannot become a near-duplicate */
		if (!oldnull && datumIsEqual(old, value, false, -1))
			return PointerGetDatum(newtuple);
	}
	mh = DatumGetMinHashP(value);

	SPI_connect();
	plans = PlansFor(trigger, rel, schema, minhash_type);

	/* 1. claim the tokens every near-duplicate of this row claims too */
	args[0] = ObjectIdGetDatum(RelationGetRelid(rel));
	args[1] = PointerGetDatum(LockTokens(mh, threshold));
	ret = SPI_execute_plan(plans->claim, args, NULL, false, 0);
	if (ret != SPI_OK_INSERT)
		elog(ERROR, "could not claim near-duplicate tokens: %s", SPI_result_code_string(ret));

	/* 2. look for a near-duplicate, through the index when there is one */
	args[0] = value;
	args[1] = Float8GetDatum(threshold);
	args[2] = PointerGetDatum(&td->tg_trigtuple->t_self);
	ret = SPI_execute_plan(TRIGGER_FIRED_BY_UPDATE(td->tg_event) ?
						   plans->check_update : plans->check_insert,
						   args, NULL, false, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not look for near-duplicates: %s", SPI_result_code_string(ret));

	if (SPI_processed > 0)
	{
		char	   *key = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
		char	   *similarity = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);

		key = pstrdup(key ? key : "?");
		similarity = pstrdup(similarity);
		SPI_finish();
		if (action == ACTION_SKIP)
		{
			ereport(NOTICE,
					(errmsg("skipping a near-duplicate row for relation \"%s\"",
							RelationGetRelationName(rel)),
					 errdetail("Key %s has similarity %s, at least the threshold %g.",
							   key, similarity, threshold)));
			return PointerGetDatum(NULL);
		}
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 errmsg("new row for relation \"%s\" is a near-duplicate of an existing row",
						RelationGetRelationName(rel)),
				 errdetail("Key %s has similarity %s, at least the threshold %g.",
						   key, similarity, threshold),
				 errtablecol(rel, attnum)));
	}
	SPI_finish();
	return PointerGetDatum(newtuple);
}
