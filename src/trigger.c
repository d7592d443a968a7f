/*
 * trigger.c
 *		ndd_reject_near_duplicates(): a BEFORE INSERT OR UPDATE trigger that
 *		rejects (or skips) a row whose minhash sketch or simhash fingerprint
 *		is a near-duplicate of a row already in the table, correctly under
 *		concurrency, optionally verified by the exact Jaccard of the texts.
 *
 * Why a lookup alone is not enough
 * --------------------------------
 * A check cannot see a row that another transaction has not committed, so
 * two sessions inserting near-duplicates at once would both pass it.  Before
 * it checks, a transaction therefore claims tokens that every near-duplicate
 * of its row must claim too, and holds them to commit.  The tokens are the
 * row's bucket keys, folded into NDD_LOCK_TOKENS slots per table (a chance
 * collision only makes two unrelated inserts wait for each other).  For a
 * minhash, the LSH band keys under a banding exact at the threshold (at the
 * lower threshold candidates start from, when verifying): by pigeonhole, two
 * sketches at least that similar agree on a whole band.  For a simhash, the
 * block keys at the distance: two fingerprints within it share one.
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
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/syscache.h"

#include "hash.h"
#include "lsh.h"
#include "minhash.h"
#include "ndd.h"
#include "simhash.h"
#include "simhash_keys.h"

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

/* What a trigger compares, parsed from its arguments. */
typedef struct NearDuplicateRule
{
	bool		simhash;		/* else minhash */
	int			sketch_attnum;
	double		threshold;		/* minhash: similarity, or exact Jaccard */
	int			max_distance;	/* simhash: bits */
	NearDuplicateAction action;
	int			verify_attnum;	/* text column for exact Jaccard, or 0 */
} NearDuplicateRule;

/* The check statements' parameters, the same for every kind of rule. */
#define CHECK_NARGS 7
/* $1 sketch, $2 candidate threshold, $3 old row's ctid, $4 new text,
 * $5 shingle size, $6 unit, $7 exact threshold */

static int
CompareInt32(const void *a, const void *b)
{
	int32		x = *(const int32 *) a;
	int32		y = *(const int32 *) b;

	return (x > y) - (x < y);
}

/* Sorted, distinct tokens from keys, folded into NDD_LOCK_TOKENS slots. */
static ArrayType *
TokensFromKeys(const uint64 *keys, int nkeys)
{
	int32	   *tokens = palloc(Max(nkeys, 1) * sizeof(int32));
	Datum	   *elems = palloc(Max(nkeys, 1) * sizeof(Datum));
	int			n = 0;

	for (int i = 0; i < nkeys; i++)
		tokens[i] = (int32) (keys[i] % NDD_LOCK_TOKENS);
	qsort(tokens, nkeys, sizeof(int32), CompareInt32);
	for (int i = 0; i < nkeys; i++)
		if (i == 0 || tokens[i] != tokens[i - 1])
			elems[n++] = Int32GetDatum(tokens[i]);
	return construct_array(elems, n, INT4OID, sizeof(int32), true, TYPALIGN_INT);
}

/* A sketch's tokens: its band keys under the banding exact at threshold. */
static ArrayType *
MinHashLockTokens(const MinHash *mh, double threshold)
{
	int			bands,
				rows;
	uint64	   *keys;

	LshBandingForThreshold(mh->num_perm, threshold, &bands, &rows);
	keys = palloc(bands * sizeof(uint64));
	for (int b = 0; b < bands; b++)
		keys[b] = LshBandHash(mh, b, rows);
	return TokensFromKeys(keys, bands);
}

/* A fingerprint's tokens: its block keys at max_distance, mixed. */
static ArrayType *
SimHashLockTokens(SimHash v, int max_distance)
{
	SimHashKeyLayout layout;
	Datum	   *keys;
	uint64	   *mixed;

	SimHashKeyLayoutInit(&layout, max_distance, SIMHASH_KEYS_PAIRS);
	keys = SimHashKeys(&layout, v);
	mixed = palloc(layout.nkeys * sizeof(uint64));
	for (int i = 0; i < layout.nkeys; i++)
		mixed[i] = NddHashMix((uint64) DatumGetInt64(keys[i]));
	return TokensFromKeys(mixed, layout.nkeys);
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
 * The check returns the key of the nearest qualifying row and its score.
 */
static TriggerPlans *
PlansFor(Trigger *trigger, Relation rel, const char *schema, Oid sketch_type,
		 const NearDuplicateRule *rule)
{
	TriggerPlans *plans;
	bool		found;
	StringInfoData sql;
	Oid			claim_types[2] = {OIDOID, INT4ARRAYOID};
	Oid			check_types[CHECK_NARGS] = {sketch_type, rule->simhash ? INT4OID : FLOAT8OID,
	TIDOID, TEXTOID, INT4OID, TEXTOID, FLOAT8OID};
	const char *column = quote_identifier(trigger->tgargs[0]);
	const char *table = psprintf("%s.%s",
								 quote_identifier(get_namespace_name(RelationGetNamespace(rel))),
								 quote_identifier(RelationGetRelationName(rel)));
	const char *score;
	const char *order;
	char	   *match;
	SPIPlanPtr	claim;

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
	plans->check_insert = NULL;
	plans->check_update = NULL;

	initStringInfo(&sql);
	appendStringInfo(&sql,
					 "INSERT INTO %s.ndd_near_duplicate_locks AS l (relid, token) "
					 "SELECT $1, t FROM pg_catalog.unnest($2) WITH ORDINALITY AS u(t, o) ORDER BY o "
					 "ON CONFLICT (relid, token) DO UPDATE SET claims = l.claims OPERATOR(pg_catalog.+) 1",
					 schema);
	claim = PrepareKept(sql.data, 2, claim_types);

	/* the index condition finds candidates; the rest decides */
	if (rule->simhash)
	{
		match = psprintf("%s OPERATOR(%s.%%) $1 AND %s.hamming_distance(%s, $1) OPERATOR(pg_catalog.<=) $2",
						 column, schema, schema, column);
		score = psprintf("%s.hamming_distance(%s, $1)", schema, column);
		order = "ASC";
	}
	else
	{
		match = psprintf("%s OPERATOR(%s.%%) ROW($1, $2)::%s.minhash_query", column, schema, schema);
		score = psprintf("%s.similarity(%s, $1)", schema, column);
		order = "DESC";
	}
	if (rule->verify_attnum > 0)
	{
		const char *text_column =
			quote_identifier(NameStr(TupleDescAttr(RelationGetDescr(rel), rule->verify_attnum - 1)->attname));

		score = psprintf("%s.jaccard(%s, $4, $5, $6)", schema, text_column);
		match = psprintf("%s AND %s OPERATOR(pg_catalog.>=) $7", match, score);
		order = "DESC";
	}
	resetStringInfo(&sql);
	appendStringInfo(&sql, "SELECT %s, %s FROM %s WHERE %s",
					 KeyExpression(rel), score, table, match);
	plans->check_insert = PrepareKept(psprintf("%s ORDER BY 2 %s LIMIT 1", sql.data, order),
									  CHECK_NARGS, check_types);
	plans->check_update = PrepareKept(psprintf("%s AND ctid OPERATOR(pg_catalog.<>) $3 ORDER BY 2 %s LIMIT 1",
											   sql.data, order),
									  CHECK_NARGS, check_types);
	plans->claim = claim;
	return plans;
}

static int
ColumnOf(Relation rel, const char *name)
{
	int			attnum = SPI_fnumber(RelationGetDescr(rel), name);

	if (attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist",
						name, RelationGetRelationName(rel))));
	return attnum;
}

/*
 * The rule from the trigger's arguments:
 * (sketch_column [, threshold | max_distance [, action [, verify_column]]])
 */
static void
ParseRule(Trigger *trigger, Relation rel, Oid nsp, Oid *sketch_type, NearDuplicateRule *rule)
{
	const char *fname = "ndd_reject_near_duplicates";
	TupleDesc	tupdesc = RelationGetDescr(rel);
	Oid			minhash_type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
											   CStringGetDatum("minhash"), ObjectIdGetDatum(nsp));
	Oid			simhash_type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
											   CStringGetDatum("simhash"), ObjectIdGetDatum(nsp));

	if (trigger->tgnargs < 1 || trigger->tgnargs > 4)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function \"%s\" takes the sketch column, and optionally the threshold, the action and a text column to verify with", fname),
				 errhint("For example: EXECUTE FUNCTION %s('sketch', '0.8', 'error', 'body').", fname)));

	rule->sketch_attnum = ColumnOf(rel, trigger->tgargs[0]);
	*sketch_type = SPI_gettypeid(tupdesc, rule->sketch_attnum);
	if (*sketch_type != minhash_type && *sketch_type != simhash_type)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" of relation \"%s\" is not of type minhash or simhash",
						trigger->tgargs[0], RelationGetRelationName(rel))));
	rule->simhash = (*sketch_type == simhash_type);
	if (TupleDescAttr(tupdesc, rule->sketch_attnum - 1)->attgenerated)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("column \"%s\" of relation \"%s\" is a generated column",
						trigger->tgargs[0], RelationGetRelationName(rel)),
				 errdetail("Generated columns are computed after BEFORE triggers run, so %s cannot see it.", fname),
				 errhint("Fill the sketch in an earlier BEFORE trigger, or in the INSERT itself.")));

	rule->threshold = ndd_similarity_threshold;
	rule->max_distance = ndd_hamming_threshold;
	if (trigger->tgnargs >= 2 && rule->simhash)
	{
		char	   *end;
		long		d = strtol(trigger->tgargs[1], &end, 10);

		if (end == trigger->tgargs[1] || *end != '\0' ||
			d < NDD_SIMHASH_MAX_DISTANCE_MIN || d > NDD_SIMHASH_MAX_DISTANCE_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid distance \"%s\" for trigger \"%s\"", trigger->tgargs[1], trigger->tgname),
					 errdetail("For a simhash column the distance must be a whole number of bits from %d to %d.",
							   NDD_SIMHASH_MAX_DISTANCE_MIN, NDD_SIMHASH_MAX_DISTANCE_MAX)));
		rule->max_distance = (int) d;
	}
	else if (trigger->tgnargs >= 2)
	{
		char	   *end;

		rule->threshold = strtod(trigger->tgargs[1], &end);
		if (end == trigger->tgargs[1] || *end != '\0' || isnan(rule->threshold) ||
			rule->threshold <= 0.0 || rule->threshold > 1.0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid threshold \"%s\" for trigger \"%s\"", trigger->tgargs[1], trigger->tgname),
					 errdetail("The threshold must be greater than 0 and at most 1.")));
	}
	else if (rule->simhash &&
			 (rule->max_distance < NDD_SIMHASH_MAX_DISTANCE_MIN || rule->max_distance > NDD_SIMHASH_MAX_DISTANCE_MAX))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ndd.hamming_threshold %d is out of range for trigger \"%s\"",
						rule->max_distance, trigger->tgname),
				 errhint("Give the trigger a distance from %d to %d as its second argument.",
						 NDD_SIMHASH_MAX_DISTANCE_MIN, NDD_SIMHASH_MAX_DISTANCE_MAX)));

	rule->action = ACTION_ERROR;
	if (trigger->tgnargs >= 3)
	{
		if (strcmp(trigger->tgargs[2], "error") == 0)
			rule->action = ACTION_ERROR;
		else if (strcmp(trigger->tgargs[2], "skip") == 0)
			rule->action = ACTION_SKIP;
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid action \"%s\" for trigger \"%s\"", trigger->tgargs[2], trigger->tgname),
					 errhint("Valid actions are \"error\" and \"skip\".")));
	}

	rule->verify_attnum = 0;
	if (trigger->tgnargs == 4)
	{
		Oid			type;

		rule->verify_attnum = ColumnOf(rel, trigger->tgargs[3]);
		type = getBaseType(SPI_gettypeid(tupdesc, rule->verify_attnum));
		if (type != TEXTOID && type != VARCHAROID && type != BPCHAROID)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" of relation \"%s\" is not of a text type",
							trigger->tgargs[3], RelationGetRelationName(rel)),
					 errdetail("Verification compares the exact Jaccard similarity of the texts.")));
	}
}

/* ndd_reject_near_duplicates(sketch_column [, threshold [, action [, verify_column]]]) */
PG_FUNCTION_INFO_V1(ndd_reject_near_duplicates);
Datum
ndd_reject_near_duplicates(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	Trigger    *trigger;
	Relation	rel;
	TupleDesc	tupdesc;
	HeapTuple	newtuple;
	bool		isnull;
	Datum		value;
	NearDuplicateRule rule;
	Oid			nsp;
	const char *schema;
	Oid			sketch_type;
	TriggerPlans *plans;
	Datum		args[CHECK_NARGS];
	char		nulls[CHECK_NARGS];
	double		candidate_threshold = 0;
	ArrayType  *tokens;
	int			ret;
	int			save_nestlevel;
	MemoryContext outer;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BEFORE(td->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(td->tg_event) ||
		!(TRIGGER_FIRED_BY_INSERT(td->tg_event) || TRIGGER_FIRED_BY_UPDATE(td->tg_event)))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function \"%s\" must be fired BEFORE INSERT OR UPDATE FOR EACH ROW",
						"ndd_reject_near_duplicates")));

	trigger = td->tg_trigger;
	rel = td->tg_relation;
	tupdesc = RelationGetDescr(rel);
	newtuple = TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? td->tg_newtuple : td->tg_trigtuple;

	/* everything we call lives in this function's schema */
	nsp = get_func_namespace(trigger->tgfoid);
	schema = quote_identifier(get_namespace_name(nsp));
	ParseRule(trigger, rel, nsp, &sketch_type, &rule);

	value = SPI_getbinval(newtuple, tupdesc, rule.sketch_attnum, &isnull);
	if (isnull)
		return PointerGetDatum(newtuple);
	if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
	{
		bool		oldnull;
		Datum		old = SPI_getbinval(td->tg_trigtuple, tupdesc, rule.sketch_attnum, &oldnull);
		bool		same = !oldnull && datumIsEqual(old, value, rule.simhash,
													rule.simhash ? SIMHASH_SIZE : -1);

		/* an unchanged sketch (and text) cannot become a near-duplicate */
		if (same && rule.verify_attnum > 0)
		{
			Datum		old_text = SPI_getbinval(td->tg_trigtuple, tupdesc, rule.verify_attnum, &oldnull);
			bool		newnull;
			Datum		new_text = SPI_getbinval(newtuple, tupdesc, rule.verify_attnum, &newnull);

			same = oldnull == newnull && (oldnull || datumIsEqual(old_text, new_text, false, -1));
		}
		if (same)
			return PointerGetDatum(newtuple);
	}

	memset(nulls, ' ', sizeof(nulls));
	args[0] = value;
	args[2] = PointerGetDatum(&td->tg_trigtuple->t_self);
	args[3] = (Datum) 0;
	nulls[3] = 'n';
	args[4] = Int32GetDatum(NDD_SHINGLE_SIZE_DEFAULT);
	args[5] = CStringGetTextDatum("word");
	args[6] = Float8GetDatum(rule.threshold);
	if (rule.verify_attnum > 0)
	{
		bool		textnull;

		args[3] = SPI_getbinval(newtuple, tupdesc, rule.verify_attnum, &textnull);
		nulls[3] = textnull ? 'n' : ' ';
	}
	if (rule.simhash)
	{
		args[1] = Int32GetDatum(rule.max_distance);
		tokens = SimHashLockTokens(DatumGetSimHash(value), rule.max_distance);
	}
	else
	{
		MinHash    *mh = DatumGetMinHashP(value);

		candidate_threshold = rule.threshold;
		if (rule.verify_attnum > 0)
		{
			if (mh->source != MINHASH_SOURCE_WORD && mh->source != MINHASH_SOURCE_CHAR)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("cannot verify sketches made from arrays against a text column"),
						 errdetail("Trigger \"%s\" names column \"%s\" to verify with, but the sketch has unit=%s.",
								   trigger->tgname, trigger->tgargs[3], MinHashSourceName(mh->source))));
			candidate_threshold = LshMarginThreshold(mh->num_perm, rule.threshold, LSH_VERIFY_MARGIN);
			args[4] = Int32GetDatum(mh->shingle_size);
			args[5] = CStringGetTextDatum(MinHashSourceName(mh->source));
		}
		args[1] = Float8GetDatum(candidate_threshold);
		tokens = MinHashLockTokens(mh, candidate_threshold);
	}

	outer = CurrentMemoryContext;
	SPI_connect();
	plans = PlansFor(trigger, rel, schema, sketch_type, &rule);

	/* 1. claim the tokens every near-duplicate of this row claims too */
	{
		Datum		claim_args[2] = {ObjectIdGetDatum(RelationGetRelid(rel)), PointerGetDatum(tokens)};

		ret = SPI_execute_plan(plans->claim, claim_args, NULL, false, 0);
		if (ret != SPI_OK_INSERT)
			elog(ERROR, "could not claim near-duplicate tokens: %s", SPI_result_code_string(ret));
	}

	/*
	 * 2. look for a near-duplicate, through the index when there is one; the
	 * simhash % operator reads its distance from ndd.hamming_threshold, so
	 * that is the rule's distance while the check runs
	 */
	save_nestlevel = NewGUCNestLevel();
	if (rule.simhash)
		(void) set_config_option("ndd.hamming_threshold", psprintf("%d", rule.max_distance),
								 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	ret = SPI_execute_plan(TRIGGER_FIRED_BY_UPDATE(td->tg_event) ?
						   plans->check_update : plans->check_insert,
						   args, nulls, false, 1);
	AtEOXact_GUC(true, save_nestlevel);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not look for near-duplicates: %s", SPI_result_code_string(ret));

	if (SPI_processed > 0)
	{
		char	   *key = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
		char	   *score = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
		char	   *detail;

		key = key ? key : "?";
		if (rule.verify_attnum > 0)
			detail = psprintf("Key %s has exact Jaccard similarity %s, at least the threshold %g.",
							  key, score, rule.threshold);
		else if (rule.simhash)
			detail = psprintf("Key %s is %s bits away, within the distance %d.",
							  key, score, rule.max_distance);
		else
			detail = psprintf("Key %s has similarity %s, at least the threshold %g.",
							  key, score, rule.threshold);
		/* SPI_finish frees what SPI returned */
		detail = MemoryContextStrdup(outer, detail);
		SPI_finish();
		if (rule.action == ACTION_SKIP)
		{
			ereport(NOTICE,
					(errmsg("skipping a near-duplicate row for relation \"%s\"",
							RelationGetRelationName(rel)),
					 errdetail_internal("%s", detail)));
			return PointerGetDatum(NULL);
		}
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 errmsg("new row for relation \"%s\" is a near-duplicate of an existing row",
						RelationGetRelationName(rel)),
				 errdetail_internal("%s", detail),
				 errtablecol(rel, rule.sketch_attnum)));
	}
	SPI_finish();
	return PointerGetDatum(newtuple);
}
