/*
 * trigger.c
 *		ndd_reject_near_duplicates(): a BEFORE INSERT OR UPDATE trigger that
 *		rejects (or skips) a row whose minhash sketch or simhash fingerprint
 *		is a near-duplicate of a row already in the table, correctly under
 *		concurrency, optionally verified by the exact Jaccard of the texts.
 *
 * BEFORE or AFTER
 * ---------------
 * Fired BEFORE, the trigger can skip a row, and each row of a statement is
 * checked before the next is stored.  Fired AFTER (action 'error' only), it
 * checks once the statement has stored all its rows, so it can read a
 * generated sketch column, which PostgreSQL computes after BEFORE triggers.
 * The lookup then finds the row itself, and leaves it out by its ctid.
 * (AFTER was also meant to let a bulk load fill GIN's pending list in one
 * batch; measured, it is no faster: the per-row lookups dominate.)
 * Fired AFTER INSERT FOR EACH STATEMENT with a transition table, it checks
 * the statement's rows together, with no index lookup per row: see
 * CheckStatement.
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
 * A token is a heavyweight lock, taken in exclusive mode and held to the end
 * of the transaction: no table is written and nothing is left behind.  Its
 * tag is an advisory one whose fourth field no SQL function uses (the
 * pg_advisory_* functions use 1 and 2), so only ndd can take it.  Under READ
 * COMMITTED the second inserter waits for the first to finish and then,
 * with a fresh snapshot, sees its row.  Under REPEATABLE READ and
 * SERIALIZABLE the check looks with the latest snapshot, as foreign-key
 * checks do; a near-duplicate that the transaction's own snapshot cannot
 * see raises a serialization failure (40001).  Tokens are taken in sorted
 * order, so two single-row inserters cannot deadlock on them.
 *
 * Every claimer first takes the table's own tag in ROW EXCLUSIVE mode.  A
 * transaction that would hold more than GUARD_MAX_TOKEN_LOCKS tokens of one
 * table, a bulk load, takes that tag in EXCLUSIVE mode instead and no more
 * tokens, so the shared lock table never holds more than that per
 * transaction; it then waits for, and makes wait, every other writer of the
 * table (two bulk loads at once: one fails with a deadlock, 40P01).
 *
 * Who may touch the tokens
 * ------------------------
 * Only the trigger takes a table's tokens, keyed by the OID of the table it
 * guards.  So a role can claim them only by writing that table, the
 * standard of a unique index: one writer can make another wait, a stranger
 * cannot.  (The token table ndd_near_duplicate_locks, granted to nobody,
 * serves the upserted tokens of ndd_maintain_clusters.)  Likewise the check
 * runs as the owner of the guarded table, as foreign-key checks do, so it
 * sees every row whatever the inserting role may read; the DETAIL names the
 * existing row only to a role that may read the table.
 *
 * Across shards
 * -------------
 * When some partitions are postgres_fdw foreign tables, the check sends
 * similar() (immutable, with the threshold or distance as an argument, and
 * served by the shard's index) to every shard.  postgres_fdw reads a shard through one snapshot per transaction,
 * so the check cannot look with the latest snapshot; the trigger then
 * requires REPEATABLE READ, whose transaction snapshot predates every
 * shard's, and claims its tokens as rows of ndd_near_duplicate_locks: a
 * token row updated by a transaction our snapshot cannot see raises 40001,
 * which covers exactly the near-duplicates the shards' snapshots may miss.
 * Rows written to a shard directly, not through the coordinator, are not
 * checked.
 *
 * Which rows are checked
 * ----------------------
 * A trigger created on a partitioned table is cloned to every partition;
 * each clone checks, and keys its tokens by, the table the trigger was
 * created on, so a near-duplicate in another partition is found.  The
 * statements are prepared once per trigger and backend and name tables and
 * columns by name, so they are rebuilt whenever the relcache entry of any
 * table they cover (or of any index on them) or any schema name changes.
 * A minhash_ops index whose banding cannot serve the trigger's threshold
 * exactly would answer with LSH recall and let near-duplicates in: the
 * trigger refuses to run with one.  Every statement runs with search_path
 * pinned to pg_catalog, pg_temp and names every function and operator by
 * schema, so no object of another role is ever called.
 */
#include "postgres.h"

#include <limits.h>
#include <math.h>

#include "access/genam.h"
#include "access/ginblock.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/pg_class.h"
#include "catalog/pg_am.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lock.h"
#include "nodes/makefuncs.h"
#include "nodes/value.h"
#include "optimizer/plancat.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgrprotos.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "base/hash.h"
#include "base/ndd_limits.h"
#include "base/sketch_column.h"
#include "features/guard.h"
#include "index/minhash_gin.h"
#include "keys/lsh.h"
#include "keys/simhash_keys.h"
#include "sketch/minhash.h"
#include "sketch/simhash.h"
#include "sqlgen/sketch_sql.h"

/* Token slots per table. */
#define NDD_LOCK_TOKENS		65536

#define GUARD_FUNCTION_NAME "ndd_reject_near_duplicates"

/* Prepared statements of one trigger in this backend, and what they cover. */
typedef struct GuardPlans
{
	Oid			tgoid;			/* hash key */
	bool		valid;			/* false once anything they name changed */
	Oid			target;			/* the table checked: where the trigger was
								 * created */
	double		exact_at;		/* minhash: the threshold indexes were
								 * checked for */
	Oid		   *covers;			/* tables whose change invalidates the plans */
	int			ncovers;
	Oid		   *gin_indexes;	/* GIN indexes on the sketch column */
	int			ngin_indexes;
	bool		sharded;		/* some of the tables read are foreign */
	SPIPlanPtr	check_insert;
	SPIPlanPtr	check_update;
} GuardPlans;

static HTAB *guard_plans = NULL;

typedef enum NearDuplicateAction
{
	ACTION_ERROR,
	ACTION_SKIP
} NearDuplicateAction;

/* What a trigger compares, parsed from its arguments. */
typedef struct NearDuplicateRule
{
	bool		simhash;		/* else minhash */
	int			sketch_attnum;	/* in the relation the trigger fired on */
	double		threshold;		/* minhash: similarity, or exact Jaccard */
	int			max_distance;	/* simhash: bits */
	NearDuplicateAction action;
	int			verify_attnum;	/* text column for exact Jaccard, or 0 */
	Oid			verify_type;	/* its base type: text, varchar or bpchar */
} NearDuplicateRule;

/* The kind's SQL (sketch_sql.h) for a rule; schema is ndd's, quoted. */
static void
GuardSketchRule(const NearDuplicateRule *rule, const char *schema, SketchRule *kind)
{
	SketchRuleInit(kind, rule->simhash ? SKETCH_SIMHASH : SKETCH_MINHASH, schema,
				   rule->threshold, rule->max_distance);
}

/*
 * The row-level check: the key of the nearest qualifying row and its score.
 * %1$s the key, %2$s the score, %3$s the table, %4$s the test; then the
 * order of scores, nearest first.  An update (or an AFTER trigger) must not
 * find the row itself.
 */
#define GUARD_CHECK_SQL "SELECT %s, %s FROM %s AS t WHERE %s"
#define GUARD_CHECK_INSERT_SQL "%s ORDER BY 2 %s LIMIT 1"
#define GUARD_CHECK_UPDATE_SQL \
	"%s AND NOT (t.tableoid OPERATOR(pg_catalog.=) $8 AND t.ctid OPERATOR(pg_catalog.=) $3) " \
	"ORDER BY 2 %s LIMIT 1"

/* The check statements' parameters, the same for every kind of rule. */
#define CHECK_NARGS 8
/* $1 sketch, $2 candidate threshold, $3 old row's ctid, $4 new text (of
 * the verify column's base type, cast to text as the stored ones are),
 * $5 shingle size, $6 unit, $7 exact threshold, $8 old row's table */

/*
 * The statement that claims tokens (ClaimTokens), prepared once per backend
 * for the token table it names.
 */
/*
 * Claim tokens $2 of table $1 (%s.%s the token table), in the order given,
 * so that two sessions claiming overlapping tokens queue rather than deadlock.
 */
#define CLAIM_TOKENS_SQL \
	"INSERT INTO %s.%s AS l (relid, token) " \
	"SELECT $1, u.t FROM pg_catalog.unnest($2) WITH ORDINALITY AS u(t, o) ORDER BY u.o " \
	"ON CONFLICT (relid, token) DO UPDATE SET claims = l.claims OPERATOR(pg_catalog.+) 1::pg_catalog.int8"

static SPIPlanPtr claim_plan = NULL;
static Oid	claim_lock_table = InvalidOid;

/* Forget the plans that cover relid (every plan for InvalidOid). */
static void
GuardRelcacheCallback(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS status;
	GuardPlans *plans;

	/* freed on its next use: a callback must not call SPI */
	if (!OidIsValid(relid) || relid == claim_lock_table)
		claim_lock_table = InvalidOid;
	if (guard_plans == NULL)
		return;
	hash_seq_init(&status, guard_plans);
	while ((plans = hash_seq_search(&status)) != NULL)
	{
		if (!OidIsValid(relid))
			plans->valid = false;
		for (int i = 0; i < plans->ncovers && plans->valid; i++)
			if (plans->covers[i] == relid)
				plans->valid = false;
	}
}

/* A schema was renamed or dropped: the plans may name it. */
static void
GuardSyscacheCallback(Datum arg, int cacheid, uint32 hashvalue)
{
	GuardRelcacheCallback(arg, InvalidOid);
}

/* Register the callbacks above, once per backend. */
static void
WatchPlannedNames(void)
{
	static bool watching = false;

	if (watching)
		return;
	CacheRegisterRelcacheCallback(GuardRelcacheCallback, (Datum) 0);
	CacheRegisterSyscacheCallback(NAMESPACEOID, GuardSyscacheCallback, (Datum) 0);
	watching = true;
}

/* qsort comparator for int32. */
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

/*
 * The tokens this transaction holds, per guarded table.  A token's row stays
 * locked by the transaction that claimed it until it ends, so claiming it
 * again is redundant; a bulk load in one transaction stops claiming once it
 * holds every token it needs, instead of updating each token row again for
 * every row loaded (each update one more row version to step over).  Only
 * claims at the top level are remembered: a subtransaction's claim goes with
 * it if it aborts.  The set lives in TopTransactionContext and is forgotten
 * when that context is reset at the end of the transaction.
 */
typedef struct HeldToken
{
	Oid			relid;
	int32		token;
} HeldToken;

static HTAB *held_tokens = NULL;

static void
ForgetHeldTokens(void *arg)
{
	held_tokens = NULL;
}

/* The tokens not yet held by this transaction for relid (NULL if none). */
static ArrayType *
TokensToClaim(Oid relid, ArrayType *tokens)
{
	int32	   *all = (int32 *) ARR_DATA_PTR(tokens);
	int			n = ArrayGetNItems(ARR_NDIM(tokens), ARR_DIMS(tokens));
	Datum	   *missing = palloc(Max(n, 1) * sizeof(Datum));
	int			nmissing = 0;

	if (held_tokens == NULL)
		return tokens;
	for (int i = 0; i < n; i++)
	{
		HeldToken	key = {relid, all[i]};

		if (hash_search(held_tokens, &key, HASH_FIND, NULL) == NULL)
			missing[nmissing++] = Int32GetDatum(all[i]);
	}
	if (nmissing == 0)
		return NULL;
	return construct_array(missing, nmissing, INT4OID, sizeof(int32), true, TYPALIGN_INT);
}

/* Remember that the top-level transaction now holds these tokens of relid. */
static void
RememberHeldTokens(Oid relid, ArrayType *tokens)
{
	int32	   *all = (int32 *) ARR_DATA_PTR(tokens);
	int			n = ArrayGetNItems(ARR_NDIM(tokens), ARR_DIMS(tokens));

	if (GetCurrentTransactionNestLevel() != 1)
		return;
	if (held_tokens == NULL)
	{
		HASHCTL		ctl;
		MemoryContextCallback *forget;

		ctl.keysize = sizeof(HeldToken);
		ctl.entrysize = sizeof(HeldToken);
		ctl.hcxt = TopTransactionContext;
		held_tokens = hash_create("ndd held tokens", 64, &ctl,
								  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		forget = MemoryContextAlloc(TopTransactionContext, sizeof(MemoryContextCallback));
		forget->func = ForgetHeldTokens;
		forget->arg = NULL;
		MemoryContextRegisterResetCallback(TopTransactionContext, forget);
	}
	for (int i = 0; i < n; i++)
	{
		HeldToken	key = {relid, all[i]};

		(void) hash_search(held_tokens, &key, HASH_ENTER, NULL);
	}
}

/*
 * Token locks.  The tags' fourth field: GUARD_TAG_TOKEN for a token
 * (database, table, token), GUARD_TAG_TABLE for the table's own tag
 * (database, table, 0).
 */
#define GUARD_TAG_TOKEN			0x6E64	/* "nd" */
#define GUARD_TAG_TABLE			0x6E65
#define GUARD_MAX_TOKEN_LOCKS	256

/* Token locks taken by this transaction, per table: when to escalate. */
typedef struct TokenLockCount
{
	Oid			relid;
	int			count;
} TokenLockCount;

static HTAB *token_lock_counts = NULL;

static void
ForgetTokenLockCounts(void *arg)
{
	token_lock_counts = NULL;
}

static bool
HoldsLock(const LOCKTAG *tag, LOCKMODE mode)
{
	/* 17 added orstronger: false asks for exactly this mode, as before */
#if PG_VERSION_NUM >= 170000
	return LockHeldByMe(tag, mode, false);
#else
	return LockHeldByMe(tag, mode);
#endif
}

/*
 * Take the token locks of target for the rest of the transaction (see the
 * header): the table's tag, then each token in sorted order, or past
 * GUARD_MAX_TOKEN_LOCKS tokens, the table's tag alone in EXCLUSIVE mode.
 */
void
LockTokens(Oid target, ArrayType *tokens)
{
	int32	   *all = (int32 *) ARR_DATA_PTR(tokens);
	int			n = ArrayGetNItems(ARR_NDIM(tokens), ARR_DIMS(tokens));
	LOCKTAG		table_tag;
	TokenLockCount *held;
	bool		found;

	SET_LOCKTAG_ADVISORY(table_tag, MyDatabaseId, target, 0, GUARD_TAG_TABLE);
	if (HoldsLock(&table_tag, ExclusiveLock))
		return;
	if (token_lock_counts == NULL)
	{
		HASHCTL		ctl;
		MemoryContextCallback *forget;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(TokenLockCount);
		ctl.hcxt = TopTransactionContext;
		token_lock_counts = hash_create("ndd token locks", 8, &ctl,
										HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		forget = MemoryContextAlloc(TopTransactionContext, sizeof(MemoryContextCallback));
		forget->func = ForgetTokenLockCounts;
		forget->arg = NULL;
		MemoryContextRegisterResetCallback(TopTransactionContext, forget);
	}
	held = hash_search(token_lock_counts, &target, HASH_ENTER, &found);
	if (!found)
		held->count = 0;
	if (held->count + n > GUARD_MAX_TOKEN_LOCKS)
	{
		(void) LockAcquire(&table_tag, ExclusiveLock, false, false);
		return;
	}
	(void) LockAcquire(&table_tag, RowExclusiveLock, false, false);
	for (int i = 0; i < n; i++)
	{
		LOCKTAG		tag;

		SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, target, (uint32) all[i], GUARD_TAG_TOKEN);
		if (LockAcquire(&tag, ExclusiveLock, false, false) != LOCKACQUIRE_ALREADY_HELD)
			held->count++;
	}
}

/* The sorted, distinct tokens of two such arrays, for one pass of LockTokens. */
ArrayType *
MergeTokens(ArrayType *a, ArrayType *b)
{
	const int32 *x = (const int32 *) ARR_DATA_PTR(a);
	const int32 *y = (const int32 *) ARR_DATA_PTR(b);
	int			nx = ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a));
	int			ny = ArrayGetNItems(ARR_NDIM(b), ARR_DIMS(b));
	Datum	   *elems = palloc(Max(nx + ny, 1) * sizeof(Datum));
	int			i = 0,
				j = 0,
				n = 0;

	while (i < nx || j < ny)
	{
		int32		next = (j >= ny || (i < nx && x[i] <= y[j])) ? x[i] : y[j];

		if (n == 0 || DatumGetInt32(elems[n - 1]) != next)
			elems[n++] = Int32GetDatum(next);
		if (i < nx && x[i] == next)
			i++;
		if (j < ny && y[j] == next)
			j++;
	}
	return construct_array(elems, n, INT4OID, sizeof(int32), true, TYPALIGN_INT);
}

/* A sketch's tokens: its band keys under the banding exact at threshold. */
ArrayType *
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
ArrayType *
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
 * The table a trigger was created on: itself, or for a clone on a
 * partition, the partitioned table its parent trigger (recursively) is on.
 */
Oid
TriggerTarget(Trigger *trigger)
{
	Oid			tgoid = trigger->tgoid;
	Oid			relid = InvalidOid;
	Relation	tgrel = table_open(TriggerRelationId, AccessShareLock);

	while (OidIsValid(tgoid))
	{
		ScanKeyData key;
		SysScanDesc scan;
		HeapTuple	tuple;
		Form_pg_trigger tg;

		ScanKeyInit(&key, Anum_pg_trigger_oid, BTEqualStrategyNumber, F_OIDEQ,
					ObjectIdGetDatum(tgoid));
		scan = systable_beginscan(tgrel, TriggerOidIndexId, true, NULL, 1, &key);
		tuple = systable_getnext(scan);
		if (!HeapTupleIsValid(tuple))
			elog(ERROR, "could not find trigger %u", tgoid);
		tg = (Form_pg_trigger) GETSTRUCT(tuple);
		relid = tg->tgrelid;
		tgoid = tg->tgparentid;
		systable_endscan(scan);
	}
	table_close(tgrel, AccessShareLock);
	return relid;
}

/*
 * SQL text that shows the key of row t: "(id)=(42)" from the primary key,
 * as unique violations do, or its ctid (and partition) when there is none.
 */
static char *
KeyExpression(Relation rel)
{
#if PG_VERSION_NUM >= 180000
	/* false: a deferrable key is not one, as before 18 */
	Oid			pk = RelationGetPrimaryKeyIndex(rel, false);
#else
	Oid			pk = RelationGetPrimaryKeyIndex(rel);
#endif
	StringInfoData names,
				values;
	Relation	index;

	if (!OidIsValid(pk))
		return pstrdup(rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE ?
					   "pg_catalog.concat(t.tableoid::pg_catalog.regclass, ' ctid '::pg_catalog.text, t.ctid)" :
					   "pg_catalog.concat('ctid '::pg_catalog.text, t.ctid)");

	initStringInfo(&names);
	initStringInfo(&values);
	index = index_open(pk, AccessShareLock);
	for (int i = 0; i < index->rd_index->indnkeyatts; i++)
	{
		AttrNumber	att = index->rd_index->indkey.values[i];
		const char *name = quote_identifier(NameStr(TupleDescAttr(RelationGetDescr(rel), att - 1)->attname));

		appendStringInfo(&names, "%s%s", i ? ", " : "", name);
		appendStringInfo(&values, ", t.%s", name);
	}
	index_close(index, AccessShareLock);
	return psprintf("pg_catalog.concat(%s::pg_catalog.text, pg_catalog.concat_ws(', '::pg_catalog.text%s), ')'::pg_catalog.text)",
					quote_literal_cstr(psprintf("(%s)=(", names.data)), values.data);
}

/*
 * While ndd runs its statements: the role they run as (a table's owner, as
 * foreign-key checks do), search_path pinned to pg_catalog, pg_temp, no
 * sequential scan where an index serves, no JIT, and for
 * a simhash check the % operator's distance set to the rule's.  Statements
 * are prepared in the same state they run in, so their plans stay valid.  An
 * error restores the caller's state through (sub)transaction abort.
 */
/* Enter the state above as role, with the given distance for %, if any. */
void
GuardEnter(GuardState *state, Oid role, const char *hamming_threshold)
{
	state->save_nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	/*
	 * The check goes through the (exact) index whenever there is one: a plan
	 * made while the table was empty would otherwise scan it for every row
	 * of a bulk load, growing as the square of the rows loaded.
	 */
	(void) set_config_option("enable_seqscan", "off",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	/*
	 * A disabled scan is priced past jit_above_cost on a table with no index
	 * yet: each check would be compiled, about 2 s, to look at a few rows.
	 */
	(void) set_config_option("jit", "off",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	if (hamming_threshold)
		(void) set_config_option("ndd.hamming_threshold", hamming_threshold,
								 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	GetUserIdAndSecContext(&state->save_userid, &state->save_sec_context);
	SetUserIdAndSecContext(role, state->save_sec_context | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION | SECURITY_NOFORCE_RLS);
}

/* Restore the role and settings GuardEnter saved. */
void
GuardLeave(GuardState *state)
{
	SetUserIdAndSecContext(state->save_userid, state->save_sec_context);
	AtEOXact_GUC(true, state->save_nestlevel);
}

/* The owner of a relation. */
Oid
RelationOwner(Oid relid)
{
	HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);
	return owner;
}

/* Prepare a statement as role, in the state it will run in; keep it. */
SPIPlanPtr
PrepareAs(Oid role, const char *sql, int nargs, Oid *argtypes)
{
	GuardState	state;
	SPIPlanPtr	plan;

	GuardEnter(&state, role, NULL);
	plan = SPI_prepare(sql, nargs, argtypes);
	GuardLeave(&state);
	if (plan == NULL)
		elog(ERROR, "could not prepare \"%s\": %s", sql, SPI_result_code_string(SPI_result));
	SPI_keepplan(plan);
	return plan;
}

/* Run a prepared statement as role, with snapshot if valid. */
int
RunAs(Oid role, SPIPlanPtr plan, Datum *args, const char *nulls, long count,
	  const char *hamming_threshold, Snapshot snapshot)
{
	GuardState	state;
	int			ret;

	GuardEnter(&state, role, hamming_threshold);
	if (snapshot != InvalidSnapshot)
		ret = SPI_execute_snapshot(plan, args, nulls, snapshot, InvalidSnapshot,
								   false, false, count);
	else
		ret = SPI_execute_plan(plan, args, nulls, false, count);
	GuardLeave(&state);
	return ret;
}

/*
 * Claim tokens of target as the token table's owner, holding them to the end
 * of the transaction: an upsert of one row per token, in sorted order, for
 * ndd_maintain_clusters (live_clusters.c).  Updating a token row that a
 * transaction invisible to our snapshot wrote raises 40001 under REPEATABLE
 * READ, which the cluster steps need, as they read with that snapshot.
 * Tokens this transaction already holds are skipped.  SPI must be connected.
 */
void
ClaimTokens(Oid nsp, Oid target, ArrayType *tokens)
{
	Oid			lock_table;
	Datum		args[2];
	int			ret;

	if ((tokens = TokensToClaim(target, tokens)) == NULL)
		return;
	lock_table = get_relname_relid(LOCK_TABLE_NAME, nsp);
	if (!OidIsValid(lock_table))
		elog(ERROR, "relation \"%s.%s\" does not exist", get_namespace_name(nsp), LOCK_TABLE_NAME);
	if (claim_lock_table != lock_table)
	{
		Oid			types[2] = {OIDOID, INT4ARRAYOID};
		char	   *sql;

		WatchPlannedNames();
		if (claim_plan != NULL)
			SPI_freeplan(claim_plan);
		claim_plan = NULL;
		sql = psprintf(CLAIM_TOKENS_SQL, quote_identifier(get_namespace_name(nsp)), LOCK_TABLE_NAME);
		claim_plan = PrepareAs(RelationOwner(lock_table), sql, 2, types);
		claim_lock_table = lock_table;
	}
	args[0] = ObjectIdGetDatum(target);
	args[1] = PointerGetDatum(tokens);
	ret = RunAs(RelationOwner(lock_table), claim_plan, args, NULL, 0, NULL, InvalidSnapshot);
	if (ret != SPI_OK_INSERT)
		elog(ERROR, "could not claim near-duplicate tokens: %s", SPI_result_code_string(ret));
	RememberHeldTokens(target, tokens);
}

/*
 * The GIN indexes on the sketch column of every table the check reads (an
 * array in TopMemoryContext): the check reads their pending lists, which
 * BoundPendingList keeps short.  For a minhash rule (check_exact), a
 * minhash_ops index among them that would answer the check's threshold with
 * LSH recall only is refused.
 */
Oid *
GinIndexesOn(const char *trigger_name, const char *column, const char *schema_name,
			 List *tables, bool check_exact, double threshold, int *n)
{
	Oid			family = get_opfamily_oid(GIN_AM_OID,
										  list_make2(makeString(pstrdup(schema_name)),
													 makeString("minhash_ops")),
										  true);
	Oid		   *found = palloc(sizeof(Oid));
	Oid		   *result;
	int			capacity = 1;
	ListCell   *lt;

	*n = 0;
	foreach(lt, tables)
	{
		Oid			table = lfirst_oid(lt);
		AttrNumber	attnum = get_attnum(table, column);
		Relation	rel;
		List	   *indexes;
		ListCell   *lc;

		/* no such column here: no index on it (and 0 would match expressions) */
		if (attnum == InvalidAttrNumber)
			continue;
		rel = table_open(table, AccessShareLock);
		indexes = RelationGetIndexList(rel);
		foreach(lc, indexes)
		{
			Relation	index = index_open(lfirst_oid(lc), AccessShareLock);
			bool		on_column = false;

			for (int col = 0; col < index->rd_index->indnatts; col++)
			{
				int			bands,
							rows;

				if (index->rd_index->indkey.values[col] != attnum)
					continue;
				on_column = true;
				if (!check_exact || index->rd_rel->relam != GIN_AM_OID ||
					index->rd_opfamily[col] != family ||
					MinHashGinIsExact(index, col + 1, threshold, &bands, &rows))
					continue;
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("index \"%s\" cannot serve the threshold of trigger \"%s\" exactly",
								RelationGetRelationName(index), trigger_name),
						 errdetail("With %d bands of %d rows the index finds pairs at similarity %g only by chance, so the trigger could let near-duplicates in.",
								   bands, rows, threshold),
						 errhint("Recreate the index as minhash_ops(threshold = %g) or lower, or give the trigger a higher threshold.",
								 floor(threshold * 1000.0) / 1000.0)));
			}
			if (on_column && index->rd_rel->relam == GIN_AM_OID &&
				index->rd_rel->relkind == RELKIND_INDEX)
			{
				if (*n == capacity)
				{
					capacity *= 2;
					found = repalloc(found, capacity * sizeof(Oid));
				}
				found[(*n)++] = RelationGetRelid(index);
			}
			index_close(index, AccessShareLock);
		}
		list_free(indexes);
		table_close(rel, AccessShareLock);
	}
	/* kept only once nothing was refused */
	result = MemoryContextAlloc(TopMemoryContext, Max(*n, 1) * sizeof(Oid));
	memcpy(result, found, *n * sizeof(Oid));
	return result;
}

/*
 * Pages of a GIN pending list (fastupdate) that the check may scan before it
 * moves them into the index: every lookup reads the whole list, so a bulk
 * load that let it grow to gin_pending_list_limit (4 MB) would scan up to
 * 4 MB for each row.  Measured on 20,000-row guarded loads: 4 pages took
 * 10.7-11.9 s, 16 pages 13.1-14.7 s, 64 pages 21.9 s (the same load
 * unguarded: 5.3 s); then 0 pages (move whatever is pending) 4.9-9.9 s
 * against 5.5-12.8 s for 4 pages, in two interleaved pairs of runs: as
 * fast as the same guarded load into an index with fastupdate = off.
 */
#define GUARD_MAX_PENDING_PAGES		0

/* Move a GIN index's pending list into its tree before a lookup reads it. */
void
BoundPendingList(Oid indexoid)
{
	/* an index of another partition may be gone since the plans were made */
	Relation	index = try_relation_open(indexoid, AccessShareLock);
	Buffer		buffer;
	BlockNumber pending;
	Oid			owner;

	if (index == NULL)
		return;
	owner = index->rd_rel->relowner;
	buffer = ReadBuffer(index, GIN_METAPAGE_BLKNO);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	pending = GinPageGetMeta(BufferGetPage(buffer))->nPendingPages;
	UnlockReleaseBuffer(buffer);
	relation_close(index, AccessShareLock);
	if (pending > GUARD_MAX_PENDING_PAGES)
	{
		GuardState	state;

		/* as the owner, whom gin_clean_pending_list() requires */
		GuardEnter(&state, owner, NULL);
		(void) DirectFunctionCall1(gin_clean_pending_list, ObjectIdGetDatum(indexoid));
		GuardLeave(&state);
	}
}

/*
 * The statements of a trigger, prepared on its first use in this backend
 * and again whenever a table they name changes.  Everything they name is
 * schema-qualified, and every column is qualified by its table's alias.
 * The check returns the key of the nearest qualifying row and its score.
 */
/*
 * The trigger's entry in the cache of plans: a valid one to use, or one
 * emptied, to build.
 */
static GuardPlans *
CachedPlans(Trigger *trigger, const NearDuplicateRule *rule, double candidate_threshold,
			bool *usable)
{
	GuardPlans *plans;
	bool		found;

	if (guard_plans == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(GuardPlans);
		guard_plans = hash_create("ndd guard plans", 16, &ctl, HASH_ELEM | HASH_BLOBS);
		WatchPlannedNames();
	}
	plans = hash_search(guard_plans, &trigger->tgoid, HASH_ENTER, &found);
	*usable = found && plans->valid && plans->check_update != NULL &&
		(rule->simhash || plans->exact_at == candidate_threshold);
	if (*usable)
		return plans;
	if (found)
	{
		if (plans->check_insert)
			SPI_freeplan(plans->check_insert);
		if (plans->check_update)
			SPI_freeplan(plans->check_update);
		if (plans->covers)
			pfree(plans->covers);
		if (plans->gin_indexes)
			pfree(plans->gin_indexes);
	}
	/* an invalidation that arrives while we build makes us build again */
	plans->valid = true;
	plans->check_insert = plans->check_update = NULL;
	plans->covers = NULL;
	plans->ncovers = 0;
	plans->gin_indexes = NULL;
	plans->ngin_indexes = 0;
	return plans;
}

/*
 * The tables the plans depend on (the target and every table below it),
 * whether one is a foreign table, and their GIN indexes on the column.
 */
static void
PlanCovers(Trigger *trigger, const char *schema_name, const NearDuplicateRule *rule,
		   double candidate_threshold, GuardPlans *plans)
{
	List	   *members = find_all_inheritors(plans->target, AccessShareLock, NULL);
	ListCell   *lc;
	MemoryContext old;

	plans->gin_indexes = GinIndexesOn(trigger->tgname, trigger->tgargs[0], schema_name,
									  members, !rule->simhash,
									  candidate_threshold, &plans->ngin_indexes);
	old = MemoryContextSwitchTo(TopMemoryContext);
	plans->covers = palloc(Max(list_length(members), 1) * sizeof(Oid));
	MemoryContextSwitchTo(old);
	plans->sharded = false;
	foreach(lc, members)
	{
		plans->covers[plans->ncovers++] = lfirst_oid(lc);
		if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_FOREIGN_TABLE)
			plans->sharded = true;
	}
}

/*
 * The statements of a trigger, prepared on its first use in this backend
 * and again whenever a table they name changes.  Everything they name is
 * schema-qualified, and every column is qualified by its table's alias.
 * The check returns the key of the nearest qualifying row and its score.
 */
static GuardPlans *
PlansFor(Trigger *trigger, Oid nsp, Oid sketch_type,
		 const NearDuplicateRule *rule, double candidate_threshold)
{
	bool		usable;
	GuardPlans *plans = CachedPlans(trigger, rule, candidate_threshold, &usable);
	Oid			check_types[CHECK_NARGS] = {sketch_type, InvalidOid,
		TIDOID, rule->verify_type, INT4OID, TEXTOID, FLOAT8OID, OIDOID};
	const char *schema_name = get_namespace_name(nsp);
	const char *row = psprintf("t.%s", quote_identifier(trigger->tgargs[0]));
	Relation	target_rel;
	SketchRule	kind;
	const char *table;
	const char *score;
	const char *order;
	char	   *match;
	char	   *key;
	char	   *sql;

	if (usable)
		return plans;
	plans->target = TriggerTarget(trigger);
	plans->exact_at = candidate_threshold;
	PlanCovers(trigger, schema_name, rule, candidate_threshold, plans);

	target_rel = table_open(plans->target, AccessShareLock);
	table = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(target_rel)),
									   RelationGetRelationName(target_rel));
	key = KeyExpression(target_rel);
	table_close(target_rel, AccessShareLock);

	/*
	 * The index condition finds candidates; the rest decides.  On a foreign
	 * table only an immutable condition is sent to the shard (% reads a
	 * setting, and a ROW() constructor is not shipped): similar(), which
	 * the shard's own index serves.
	 */
	GuardSketchRule(rule, quote_identifier(schema_name), &kind);
	check_types[1] = kind.sql->limit_type;
	match = plans->sharded ? kind.sql->near_immutable(&kind, row, "$1", "$2") :
		kind.sql->near(&kind, row, "$1", "$2");
	score = kind.sql->score(&kind, row, "$1");
	order = kind.sql->nearest_first;
	if (rule->verify_attnum > 0)
	{
		/*
		 * both texts cast to text, the new one as the stored ones: a varchar,
		 * char(n) or domain passed bare would let an overload on its own
		 * type, planted beside jaccard, be called instead
		 */
		score = psprintf("%s.jaccard(t.%s::pg_catalog.text, $4::pg_catalog.text, $5, $6)",
						 quote_identifier(schema_name), quote_identifier(trigger->tgargs[3]));
		match = psprintf("%s AND %s OPERATOR(pg_catalog.>=) $7", match, score);
		order = "DESC";
	}
	sql = psprintf(GUARD_CHECK_SQL, key, score, table, match);
	plans->check_insert = PrepareAs(RelationOwner(plans->target),
									psprintf(GUARD_CHECK_INSERT_SQL, sql, order),
									CHECK_NARGS, check_types);
	plans->check_update = PrepareAs(RelationOwner(plans->target),
									psprintf(GUARD_CHECK_UPDATE_SQL, sql, order),
									CHECK_NARGS, check_types);
	return plans;
}

/* What CheckRuleLimit's error context names: the trigger, and the setting. */
typedef struct RuleLimitSource
{
	const char *trigger;
	const char *setting;		/* the ndd.* setting the value came from, or
								 * NULL for the trigger's second argument */
} RuleLimitSource;

/* Say where a threshold or distance that failed its check came from. */
static void
RuleLimitContext(void *arg)
{
	RuleLimitSource *source = (RuleLimitSource *) arg;

	if (source->setting)
		errcontext("%s, the default of trigger \"%s\"", source->setting, source->trigger);
	else
		errcontext("second argument of trigger \"%s\"", source->trigger);
}

/*
 * Check the rule's threshold (minhash) or distance (simhash) as every
 * function checks one, adding which trigger and argument or setting gave it.
 */
static void
CheckRuleLimit(Trigger *trigger, const NearDuplicateRule *rule)
{
	RuleLimitSource source;
	ErrorContextCallback callback;

	source.trigger = trigger->tgname;
	source.setting = trigger->tgnargs >= 2 ? NULL :
		rule->simhash ? "ndd.hamming_threshold" : "ndd.similarity_threshold";
	callback.callback = RuleLimitContext;
	callback.arg = &source;
	callback.previous = error_context_stack;
	error_context_stack = &callback;
	if (rule->simhash)
		NddCheckMaxDistance(rule->max_distance);
	else
		NddCheckThreshold(rule->threshold);
	error_context_stack = callback.previous;
}

/*
 * The rule from the trigger's arguments:
 * (sketch_column [, threshold | max_distance [, action [, verify_column]]])
 */
static void
ParseRule(Trigger *trigger, Relation rel, Oid nsp, bool after, Oid *sketch_type,
		  NearDuplicateRule *rule)
{
	const char *fname = GUARD_FUNCTION_NAME;
	TupleDesc	tupdesc = RelationGetDescr(rel);
	SketchColumn sketch;

	if (trigger->tgnargs < 1 || trigger->tgnargs > 4)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function \"%s\" takes the sketch column, and optionally the threshold, the action and a text column to verify with", fname),
				 errhint("For example: EXECUTE FUNCTION %s('sketch', '0.8', 'error', 'body').", fname)));

	ResolveSketchColumn(RelationGetRelid(rel), trigger->tgargs[0], nsp,
						SKETCH_MINHASH | SKETCH_SIMHASH, &sketch);
	rule->sketch_attnum = sketch.attnum;
	*sketch_type = sketch.type;
	rule->simhash = (sketch.kind == SKETCH_SIMHASH);
	if (!after && TupleDescAttr(tupdesc, rule->sketch_attnum - 1)->attgenerated)
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

		if (end == trigger->tgargs[1] || *end != '\0' || d < INT_MIN || d > INT_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid distance \"%s\" for trigger \"%s\"", trigger->tgargs[1], trigger->tgname),
					 errdetail("For a simhash column the distance is a whole number of bits.")));
		rule->max_distance = (int) d;
	}
	else if (trigger->tgnargs >= 2)
	{
		char	   *end;

		rule->threshold = strtod(trigger->tgargs[1], &end);
		if (end == trigger->tgargs[1] || *end != '\0')
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid threshold \"%s\" for trigger \"%s\"", trigger->tgargs[1], trigger->tgname),
					 errdetail("For a minhash column the threshold is a number.")));
	}
	CheckRuleLimit(trigger, rule);

	rule->action = ACTION_ERROR;
	if (trigger->tgnargs >= 3)
	{
		if (strcmp(trigger->tgargs[2], "error") == 0)
			rule->action = ACTION_ERROR;
		else if (strcmp(trigger->tgargs[2], "skip") == 0 && after)
			ereport(ERROR,
					(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
					 errmsg("action \"skip\" of trigger \"%s\" needs a BEFORE trigger",
							trigger->tgname),
					 errdetail("An AFTER trigger fires once the row is stored, too late to leave it out.")));
		else if (strcmp(trigger->tgargs[2], "skip") == 0)
			rule->action = ACTION_SKIP;
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid action \"%s\" for trigger \"%s\"", trigger->tgargs[2], trigger->tgname),
					 errhint("Valid actions are \"error\" and \"skip\".")));
	}

	rule->verify_attnum = 0;
	rule->verify_type = TEXTOID;
	if (trigger->tgnargs == 4)
	{
		Oid			type;

		rule->verify_attnum = ResolveColumn(RelationGetRelid(rel), trigger->tgargs[3], &type);
		type = getBaseType(type);
		if (type != TEXTOID && type != VARCHAROID && type != BPCHAROID)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" of relation \"%s\" is not of a text type",
							trigger->tgargs[3], RelationGetRelationName(rel)),
					 errdetail("Verification compares the exact Jaccard similarity of the texts.")));
		rule->verify_type = type;
	}
}

/* May the current role see the rows of relid, as BuildIndexValueDescription asks? */
static bool
MayReadRows(Oid relid)
{
	return pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) == ACLCHECK_OK &&
		check_enable_rls(relid, InvalidOid, true) != RLS_ENABLED;
}

/*
 * Old rows per new row above which the statement-level check looks each new
 * row up in the index instead of reading the whole table's keys once: an
 * index lookup costs about as much as reading 30 rows' keys (130-160 us
 * against about 5 us a row, measured with 300-word documents).
 */
#define STATEMENT_SCAN_RATIO	30

/* Run sql once as role under snapshot, sequential scans allowed; SPI connected. */
static int
RunBatchAs(Oid role, const char *sql, Datum *args, Oid *types, int nargs, Snapshot snapshot)
{
	GuardState	state;
	SPIPlanPtr	plan;
	int			ret;

	GuardEnter(&state, role, NULL);
	/* the batch reads every key of its side once: scans and hash joins */
	(void) set_config_option("enable_seqscan", "on",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	plan = SPI_prepare(sql, nargs, types);
	if (plan == NULL)
		elog(ERROR, "could not prepare \"%s\": %s", sql, SPI_result_code_string(SPI_result));
	ret = SPI_execute_snapshot(plan, args, NULL, snapshot, InvalidSnapshot, true, false, 1);
	SPI_freeplan(plan);
	GuardLeave(&state);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not look for near-duplicates: %s", SPI_result_code_string(ret));
	return SPI_processed;
}

/*
 * The statement-level check's batch queries.  %1$s the sketch column, %2$s
 * the transition table, %3$s the new rows' keys (of n.s), %4$s the keys a
 * pair must share; step 2: %5$s the score, %6$s the test of a, b; step 3:
 * %5$s the table, %6$s the stored rows' keys (of t's column), %7$s the key,
 * %8$s the score, %9$s the test of t, n.
 */
#define STATEMENT_NEW_ROWS_SQL \
	"WITH n AS MATERIALIZED (SELECT pg_catalog.row_number() OVER () AS i, x.%1$s AS s FROM %2$s x WHERE x.%1$s IS NOT NULL), " \
	"nk AS MATERIALIZED (SELECT n.i, k.k FROM n, pg_catalog.unnest(%3$s) AS k(k)), "
#define STATEMENT_AMONG_SQL \
	STATEMENT_NEW_ROWS_SQL \
	"p AS (SELECT a.i AS ia, b.i AS ib FROM nk a JOIN nk b ON b.k OPERATOR(pg_catalog.=) a.k AND b.i OPERATOR(pg_catalog.>) a.i " \
	"GROUP BY a.i, b.i HAVING pg_catalog.count(*) OPERATOR(pg_catalog.>=) %4$d::pg_catalog.int8) " \
	"SELECT %5$s FROM p JOIN n a ON a.i OPERATOR(pg_catalog.=) p.ia JOIN n b ON b.i OPERATOR(pg_catalog.=) p.ib " \
	"WHERE %6$s LIMIT 1"
#define STATEMENT_STORED_SQL \
	STATEMENT_NEW_ROWS_SQL \
	"tk AS (SELECT t.tableoid AS r, t.ctid AS c, k.k FROM %5$s t, pg_catalog.unnest(%6$s) AS k(k) WHERE t.%1$s IS NOT NULL), " \
	"p AS (SELECT nk.i, tk.r, tk.c FROM nk JOIN tk ON tk.k OPERATOR(pg_catalog.=) nk.k " \
	"GROUP BY nk.i, tk.r, tk.c HAVING pg_catalog.count(*) OPERATOR(pg_catalog.>=) %4$d::pg_catalog.int8) " \
	"SELECT %7$s, %8$s FROM p JOIN n ON n.i OPERATOR(pg_catalog.=) p.i " \
	"JOIN %5$s t ON t.tableoid OPERATOR(pg_catalog.=) p.r AND t.ctid OPERATOR(pg_catalog.=) p.c " \
	"WHERE %9$s LIMIT 1"

/* What the statement-level check knows as it goes. */
typedef struct StatementCheck
{
	Trigger    *trigger;
	Relation	rel;
	NearDuplicateRule rule;
	Oid			nsp;
	Oid			sketch_type;
	Oid			target;
	Oid			owner;
	Tuplestorestate *rows;		/* the transition table */
	int			reader;			/* our read pointer into it */
	TupleTableSlot *slot;
	int64		nrows;			/* new rows with a sketch */
	double		old_rows;		/* rows stored before, as estimated */
	SketchRule	kind;			/* the kind's SQL, keys planned */
	const char *column;			/* the names, quoted */
	const char *enr;
	const char *table;
	const char *key;
	GuardPlans *plans;			/* for lookups through the index */
} StatementCheck;

/* The next new row's sketch, through our read pointer; false at the end. */
static bool
NextNewSketch(StatementCheck *c, Datum *value)
{
	bool		isnull = true;

	tuplestore_select_read_pointer(c->rows, c->reader);
	while (isnull && tuplestore_gettupleslot(c->rows, true, false, c->slot))
	{
		CHECK_FOR_INTERRUPTS();
		*value = slot_getattr(c->slot, c->rule.sketch_attnum, &isnull);
	}
	tuplestore_select_read_pointer(c->rows, 0);
	return !isnull;
}

static void
RewindNewRows(StatementCheck *c)
{
	tuplestore_select_read_pointer(c->rows, c->reader);
	tuplestore_rescan(c->rows);
	tuplestore_select_read_pointer(c->rows, 0);
}

/* Step 1: the tokens of every new row (none for a temporary table). */
static void
ClaimNewRowsTokens(StatementCheck *c)
{
	Datum		value;

	RewindNewRows(c);
	while (NextNewSketch(c, &value))
	{
		c->nrows++;
		if (c->rel->rd_rel->relpersistence == RELPERSISTENCE_TEMP)
			continue;
		if (c->rule.simhash)
			LockTokens(c->target, SimHashLockTokens(DatumGetSimHash(value), c->rule.max_distance));
		else
			LockTokens(c->target, MinHashLockTokens(DatumGetMinHashP(value), c->rule.threshold));
	}
}

/*
 * The rows stored before the statement, as the planner estimates them (the
 * current size, not the last count); foreign partitions are refused.
 */
static double
StoredRowsEstimate(StatementCheck *c)
{
	List	   *members = find_all_inheritors(c->target, AccessShareLock, NULL);
	ListCell   *lc;
	double		rows = 0;

	foreach(lc, members)
	{
		Relation	member = table_open(lfirst_oid(lc), AccessShareLock);

		if (member->rd_rel->relkind == RELKIND_RELATION ||
			member->rd_rel->relkind == RELKIND_MATVIEW)
		{
			BlockNumber pages;
			double		tuples;
			double		allvisfrac;

			estimate_rel_size(member, NULL, &pages, &tuples, &allvisfrac);
			rows += tuples;
		}
		else if (member->rd_rel->relkind == RELKIND_FOREIGN_TABLE)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("trigger \"%s\" fired FOR EACH STATEMENT cannot check relation \"%s\", which has foreign partitions",
							c->trigger->tgname, RelationGetRelationName(c->rel)),
					 errhint("Fire it FOR EACH ROW, in REPEATABLE READ transactions.")));
		table_close(member, AccessShareLock);
	}
	/* the estimate counts this statement's rows too */
	return Max(rows - c->nrows, 0);
}

/* The names the batch queries use, and the kind's keys: minhash bands suit the first new row's sketch, as the others must. */
static void
PlanBatch(StatementCheck *c)
{
	Relation	target_rel = table_open(c->target, AccessShareLock);
	int			num_perm = 0;
	Datum		value;

	c->column = quote_identifier(c->trigger->tgargs[0]);
	c->enr = quote_identifier(c->trigger->tgnewtable);
	c->table = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(target_rel)),
										  RelationGetRelationName(target_rel));
	c->key = KeyExpression(target_rel);
	table_close(target_rel, AccessShareLock);

	GuardSketchRule(&c->rule, quote_identifier(get_namespace_name(c->nsp)), &c->kind);
	if (!c->rule.simhash)
	{
		RewindNewRows(c);
		if (NextNewSketch(c, &value))
			num_perm = DatumGetMinHashP(value)->num_perm;
	}
	SketchRulePlanKeys(&c->kind, num_perm, 0.0);
}

/* Step 2: two of the new rows near each other; the detail, or NULL. */
static char *
NewRowsAmongThemselves(StatementCheck *c)
{
	const SketchSql *sql = c->kind.sql;
	char	   *score;

	if (c->nrows < 2 ||
		RunBatchAs(c->owner, psprintf(STATEMENT_AMONG_SQL, c->column, c->enr,
									  sql->keys(&c->kind, "n.s"), c->kind.required,
									  sql->score(&c->kind, "a.s", "b.s"),
									  sql->qualifies(&c->kind, "a.s", "b.s")),
				   NULL, NULL, 0, InvalidSnapshot) == 0)
		return NULL;
	score = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	return c->rule.simhash ?
		psprintf("Two of the statement's rows are %s bits apart, within the distance %d.",
				 score, c->rule.max_distance) :
		psprintf("Two of the statement's rows have similarity %s, at least the threshold %g.",
				 score, c->rule.threshold);
}

/* Step 3, few stored rows: one query joins their keys with the new rows'. */
static bool
StoredRowsJoined(StatementCheck *c, Snapshot snapshot)
{
	const SketchSql *sql = c->kind.sql;
	const char *t_column = psprintf("t.%s", c->column);

	return RunBatchAs(c->owner, psprintf(STATEMENT_STORED_SQL, c->column, c->enr,
										 sql->keys(&c->kind, "n.s"), c->kind.required,
										 c->table, sql->keys(&c->kind, t_column), c->key,
										 sql->score(&c->kind, t_column, "n.s"),
										 sql->qualifies(&c->kind, t_column, "n.s")),
					  NULL, NULL, 0, snapshot) > 0;
}

/* Step 3, many stored rows: each new row through the index, as the row-level check does. */
static bool
StoredRowsByIndex(StatementCheck *c, Snapshot snapshot)
{
	Datum		args[CHECK_NARGS];
	char		nulls[CHECK_NARGS];
	char	   *distance = c->rule.simhash ? psprintf("%d", c->rule.max_distance) : NULL;
	GuardState	state;
	int			ret;

	if (c->plans == NULL)
	{
		c->plans = PlansFor(c->trigger, c->nsp, c->sketch_type, &c->rule, c->rule.threshold);
		for (int i = 0; i < c->plans->ngin_indexes; i++)
			BoundPendingList(c->plans->gin_indexes[i]);
	}
	memset(nulls, ' ', sizeof(nulls));
	args[1] = c->rule.simhash ? Int32GetDatum(c->rule.max_distance) : Float8GetDatum(c->rule.threshold);
	args[2] = PointerGetDatum(NULL);
	nulls[2] = 'n';
	args[3] = (Datum) 0;
	nulls[3] = 'n';
	args[4] = Int32GetDatum(NDD_SHINGLE_SIZE_DEFAULT);
	args[5] = CStringGetTextDatum("word");
	args[6] = Float8GetDatum(c->rule.threshold);
	args[7] = ObjectIdGetDatum(RelationGetRelid(c->rel));
	RewindNewRows(c);
	while (NextNewSketch(c, &args[0]))
	{
		/* read-only: a read-write run would advance the command id */
		GuardEnter(&state, c->owner, distance);
		ret = SPI_execute_snapshot(c->plans->check_insert, args, nulls, snapshot,
								   InvalidSnapshot, true, false, 1);
		GuardLeave(&state);
		if (ret != SPI_OK_SELECT)
			elog(ERROR, "could not look for near-duplicates: %s", SPI_result_code_string(ret));
		if (SPI_processed > 0)
			return true;
	}
	return false;
}

/*
 * Step 3: a stored row near a new one; the detail, or NULL.  The latest
 * snapshot, without this statement's rows (command ids from the
 * statement's own on are not visible to it); under REPEATABLE READ, one
 * found with the latest must be in the transaction's snapshot too.
 */
static char *
StoredRowsNear(StatementCheck *c)
{
	Snapshot	latest = RegisterSnapshot(GetLatestSnapshot());
	char	   *detail = NULL;

	latest->curcid = GetActiveSnapshot()->curcid;
	for (int pass = 0; pass < (IsolationUsesXactSnapshot() ? 2 : 1); pass++)
	{
		Snapshot	snapshot = pass == 0 ? latest : GetActiveSnapshot();
		bool		found = c->old_rows <= STATEMENT_SCAN_RATIO * (double) c->nrows ?
			StoredRowsJoined(c, snapshot) : StoredRowsByIndex(c, snapshot);
		const char *shown;
		char	   *score;

		if (!found && pass == 0)
			break;
		if (!found)
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("could not serialize access due to a concurrent near-duplicate of a new row for relation \"%s\"",
							RelationGetRelationName(c->rel)),
					 errhint("Retry the transaction.")));
		if (pass == 0 && IsolationUsesXactSnapshot())
			continue;
		shown = MayReadRows(c->target) ?
			psprintf("Key %s", SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1)) :
			"An existing row";
		score = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
		detail = c->rule.simhash ?
			psprintf("%s is %s bits away, within the distance %d.",
					 shown, score, c->rule.max_distance) :
			psprintf("%s has similarity %s, at least the threshold %g.",
					 shown, score, c->rule.threshold);
	}
	UnregisterSnapshot(latest);
	return detail;
}

/*
 * Fired AFTER INSERT ... REFERENCING NEW TABLE ... FOR EACH STATEMENT: the
 * statement's rows are checked together, which a bulk load needs, as a
 * row-level check costs one index lookup per row (about 40 entry-tree
 * descents of GIN) whatever the batching of the index's pending list.
 *
 * 1. Every new row claims its tokens, as a row-level trigger would (past
 *    256, the table's tag in EXCLUSIVE mode).
 * 2. The new rows are paired among themselves by bucket key in one query
 *    over the transition table: a pair at the threshold shares `required`
 *    keys (minhash bands exact at the threshold; simhash blocks).
 * 3. Against the rows stored before: when there are few of them, one query
 *    reads their keys and joins them with the new rows' keys; otherwise each
 *    new row is looked up in the index.  Both read with the latest snapshot,
 *    minus this statement's own rows (its command id), so a near-duplicate
 *    committed while we waited for the tokens is seen; under REPEATABLE
 *    READ one that the transaction's snapshot cannot see raises 40001.
 *
 * The action is 'error'; a verify_column is not supported here (use a
 * row-level trigger), nor is UPDATE: an updated row's old version is still
 * visible to the statement and would match the new one.
 */
static Datum
CheckStatement(TriggerData *td)
{
	StatementCheck c = {0};
	char	   *detail;
	MemoryContext outer = CurrentMemoryContext;

	c.trigger = td->tg_trigger;
	c.rel = td->tg_relation;
	c.rows = td->tg_newtable;
	if (c.rows == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("trigger \"%s\" fired FOR EACH STATEMENT needs REFERENCING NEW TABLE",
						c.trigger->tgname),
				 errhint("For example: CREATE TRIGGER ... AFTER INSERT ON docs REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION %s('sketch', '0.8').",
						 GUARD_FUNCTION_NAME)));
	c.nsp = NddNamespace(c.trigger->tgfoid);
	ParseRule(c.trigger, c.rel, c.nsp, true, &c.sketch_type, &c.rule);
	if (c.rule.verify_attnum > 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("trigger \"%s\" fired FOR EACH STATEMENT cannot verify with a text column",
						c.trigger->tgname),
				 errhint("Fire it FOR EACH ROW to verify with \"%s\".", c.trigger->tgargs[3])));
	c.target = TriggerTarget(c.trigger);
	c.owner = RelationOwner(c.target);
	c.slot = MakeSingleTupleTableSlot(RelationGetDescr(c.rel), &TTSOpsMinimalTuple);
	/* a reader of our own, as a scan of the transition table has */
	c.reader = tuplestore_alloc_read_pointer(c.rows, EXEC_FLAG_REWIND);

	/* 1. the tokens of every new row */
	ClaimNewRowsTokens(&c);
	if (c.nrows == 0)
	{
		ExecDropSingleTupleTableSlot(c.slot);
		return PointerGetDatum(NULL);
	}
	c.old_rows = StoredRowsEstimate(&c);
	PlanBatch(&c);

	SPI_connect();
	if (SPI_register_trigger_data(td) != SPI_OK_TD_REGISTER)
		elog(ERROR, "could not register the transition table");
	/* 2. the new rows among themselves; 3. the rows stored before */
	detail = NewRowsAmongThemselves(&c);
	if (detail == NULL)
		detail = StoredRowsNear(&c);
	/* SPI_finish frees what SPI returned */
	if (detail != NULL)
		detail = MemoryContextStrdup(outer, detail);
	SPI_finish();
	ExecDropSingleTupleTableSlot(c.slot);
	if (detail != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 errmsg("new row for relation \"%s\" is a near-duplicate of an existing row",
						RelationGetRelationName(c.rel)),
				 errdetail_internal("%s", detail),
				 errtablecol(c.rel, c.rule.sketch_attnum)));
	return PointerGetDatum(NULL);
}

/* An update that keeps the sketch (and the text) cannot make a near-duplicate. */
static bool
RowUnchanged(TriggerData *td, const NearDuplicateRule *rule, HeapTuple newtuple, Datum value)
{
	TupleDesc	tupdesc = RelationGetDescr(td->tg_relation);
	bool		oldnull;
	Datum		old;
	bool		same;

	if (!TRIGGER_FIRED_BY_UPDATE(td->tg_event))
		return false;
	old = SPI_getbinval(td->tg_trigtuple, tupdesc, rule->sketch_attnum, &oldnull);
	same = !oldnull && datumIsEqual(old, value, rule->simhash, rule->simhash ? SIMHASH_SIZE : -1);
	if (same && rule->verify_attnum > 0)
	{
		Datum		old_text = SPI_getbinval(td->tg_trigtuple, tupdesc, rule->verify_attnum, &oldnull);
		bool		newnull;
		Datum		new_text = SPI_getbinval(newtuple, tupdesc, rule->verify_attnum, &newnull);

		same = oldnull == newnull && (oldnull || datumIsEqual(old_text, new_text, false, -1));
	}
	return same;
}

/*
 * The check's parameters for a row's sketch (value), and the tokens its
 * near-duplicates claim too.  With a verify column the candidates reach
 * the threshold less LSH_VERIFY_MARGIN standard deviations, and the text
 * is shingled as the sketch was.
 */
static ArrayType *
RowCheckArgs(TriggerData *td, const NearDuplicateRule *rule, HeapTuple newtuple,
			 Datum value, Datum *args, char *nulls, double *candidate_threshold)
{
	bool		after = TRIGGER_FIRED_AFTER(td->tg_event);
	MinHash    *mh;

	memset(nulls, ' ', CHECK_NARGS);
	args[0] = value;
	/* the row itself, which an AFTER trigger's lookup finds */
	args[2] = PointerGetDatum(after ? &newtuple->t_self : &td->tg_trigtuple->t_self);
	args[3] = (Datum) 0;
	nulls[3] = 'n';
	args[4] = Int32GetDatum(NDD_SHINGLE_SIZE_DEFAULT);
	args[5] = CStringGetTextDatum("word");
	args[6] = Float8GetDatum(rule->threshold);
	args[7] = ObjectIdGetDatum(RelationGetRelid(td->tg_relation));
	if (rule->verify_attnum > 0)
	{
		bool		textnull;

		args[3] = SPI_getbinval(newtuple, RelationGetDescr(td->tg_relation), rule->verify_attnum, &textnull);
		nulls[3] = textnull ? 'n' : ' ';
	}
	*candidate_threshold = rule->threshold;
	if (rule->simhash)
	{
		args[1] = Int32GetDatum(rule->max_distance);
		return SimHashLockTokens(DatumGetSimHash(value), rule->max_distance);
	}
	mh = DatumGetMinHashP(value);
	if (rule->verify_attnum > 0)
	{
		if (mh->source != MINHASH_SOURCE_WORD && mh->source != MINHASH_SOURCE_CHAR)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("only sketches of a text's plain shingles can be verified against a text column"),
					 errdetail("Trigger \"%s\" names column \"%s\" to verify with, but the sketch has unit=%s.",
							   td->tg_trigger->tgname, td->tg_trigger->tgargs[3],
							   MinHashSourceName(mh->source))));
		*candidate_threshold = LshMarginThreshold(mh->num_perm, rule->threshold, LSH_VERIFY_MARGIN);
		args[4] = Int32GetDatum(mh->shingle_size);
		args[5] = CStringGetTextDatum(MinHashSourceName(mh->source));
	}
	args[1] = Float8GetDatum(*candidate_threshold);
	return MinHashLockTokens(mh, *candidate_threshold);
}

/*
 * Step 1: claim the tokens every near-duplicate of this row claims too (no
 * other session can write a temporary table).
 */
static void
ClaimRowTokens(Trigger *trigger, Relation rel, Oid nsp, GuardPlans *plans, ArrayType *tokens)
{
	if (plans->sharded)
	{
		/*
		 * postgres_fdw reads each shard through one snapshot per transaction,
		 * taken at its first use, so the check cannot look with the latest
		 * one.  Under REPEATABLE READ the transaction's own snapshot is older
		 * than the shards' (a shard is first read during a statement): a
		 * near-duplicate committed before it is seen on the shard, and one
		 * committed since claimed one of our tokens, whose row then fails
		 * the upsert with 40001.  READ COMMITTED has no such snapshot.
		 */
		if (!IsolationUsesXactSnapshot())
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("trigger \"%s\" needs REPEATABLE READ or SERIALIZABLE, as relation \"%s\" has foreign partitions",
							trigger->tgname, get_rel_name(plans->target)),
					 errdetail("postgres_fdw reads each shard through one snapshot per transaction, so under READ COMMITTED a near-duplicate committed since could not be seen."),
					 errhint("Write the table in REPEATABLE READ transactions (for example, SET default_transaction_isolation = 'repeatable read' for its writers), and retry those that fail with 40001.")));
		ClaimTokens(nsp, plans->target, tokens);
	}
	else if (rel->rd_rel->relpersistence != RELPERSISTENCE_TEMP)
		LockTokens(plans->target, tokens);
}

/*
 * Step 2: look for a near-duplicate, through the index when there is one;
 * true when one is found (its key and score in SPI_tuptable).  The
 * transaction's snapshot under REPEATABLE READ cannot see a near-duplicate
 * committed since it was taken, even by the inserter we waited for: look
 * with the latest snapshot, and fail if it finds one that ours cannot see.
 */
static bool
LookForNearDuplicate(Relation rel, GuardPlans *plans, SPIPlanPtr check,
					 Datum *args, char *nulls, const char *distance)
{
	Oid			owner = RelationOwner(plans->target);
	int			ret;

	for (int i = 0; i < plans->ngin_indexes; i++)
		BoundPendingList(plans->gin_indexes[i]);
	if (IsolationUsesXactSnapshot())
	{
		ret = RunAs(owner, check, args, nulls, 1, distance, GetLatestSnapshot());
		if (ret != SPI_OK_SELECT)
			elog(ERROR, "could not look for near-duplicates: %s", SPI_result_code_string(ret));
		if (SPI_processed == 0)
			return false;
		ret = RunAs(owner, check, args, nulls, 1, distance, InvalidSnapshot);
		if (ret == SPI_OK_SELECT && SPI_processed == 0)
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("could not serialize access due to a concurrent near-duplicate of the new row for relation \"%s\"",
							RelationGetRelationName(rel)),
					 errhint("Retry the transaction.")));
	}
	else
		ret = RunAs(owner, check, args, nulls, 1, distance, InvalidSnapshot);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not look for near-duplicates: %s", SPI_result_code_string(ret));
	return SPI_processed > 0;
}

/* What the error says of the row found, naming it only to a role that could read it. */
static char *
FoundDetail(GuardPlans *plans, const NearDuplicateRule *rule)
{
	char	   *score = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
	const char *key = "An existing row";

	if (MayReadRows(plans->target))
	{
		char	   *shown = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		key = psprintf("Key %s", shown ? shown : "?");
	}
	if (rule->verify_attnum > 0)
		return psprintf("%s has exact Jaccard similarity %s, at least the threshold %g.",
						key, score, rule->threshold);
	if (rule->simhash)
		return psprintf("%s is %s bits away, within the distance %d.",
						key, score, rule->max_distance);
	return psprintf("%s has similarity %s, at least the threshold %g.",
					key, score, rule->threshold);
}

/* ndd_reject_near_duplicates(sketch_column [, threshold [, action [, verify_column]]]) */
PG_FUNCTION_INFO_V1(ndd_reject_near_duplicates);
Datum
ndd_reject_near_duplicates(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	Trigger    *trigger;
	Relation	rel;
	HeapTuple	newtuple;
	bool		isnull;
	Datum		value;
	NearDuplicateRule rule;
	Oid			nsp;
	Oid			sketch_type;
	GuardPlans *plans;
	Datum		args[CHECK_NARGS];
	char		nulls[CHECK_NARGS];
	double		candidate_threshold;
	ArrayType  *tokens;
	char	   *detail = NULL;
	MemoryContext outer = CurrentMemoryContext;
	bool		after;
	Datum		result;

	if (CALLED_AS_TRIGGER(fcinfo) && TRIGGER_FIRED_AFTER(td->tg_event) &&
		TRIGGER_FIRED_FOR_STATEMENT(td->tg_event) && TRIGGER_FIRED_BY_INSERT(td->tg_event))
		return CheckStatement(td);
	if (!CALLED_AS_TRIGGER(fcinfo) || TRIGGER_FIRED_INSTEAD(td->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(td->tg_event) ||
		!(TRIGGER_FIRED_BY_INSERT(td->tg_event) || TRIGGER_FIRED_BY_UPDATE(td->tg_event)))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("function \"%s\" must be fired BEFORE or AFTER INSERT OR UPDATE FOR EACH ROW, or AFTER INSERT FOR EACH STATEMENT",
						GUARD_FUNCTION_NAME)));

	trigger = td->tg_trigger;
	rel = td->tg_relation;
	newtuple = TRIGGER_FIRED_BY_UPDATE(td->tg_event) ? td->tg_newtuple : td->tg_trigtuple;
	after = TRIGGER_FIRED_AFTER(td->tg_event);
	/* what an AFTER trigger returns is ignored */
	result = after ? (Datum) 0 : PointerGetDatum(newtuple);

	/* everything we call lives in this function's schema */
	nsp = NddNamespace(trigger->tgfoid);
	ParseRule(trigger, rel, nsp, after, &sketch_type, &rule);
	value = SPI_getbinval(newtuple, RelationGetDescr(rel), rule.sketch_attnum, &isnull);
	if (isnull || RowUnchanged(td, &rule, newtuple, value))
		return result;
	tokens = RowCheckArgs(td, &rule, newtuple, value, args, nulls, &candidate_threshold);

	SPI_connect();
	plans = PlansFor(trigger, nsp, sketch_type, &rule, candidate_threshold);
	/* 1. the tokens; 2. the lookup */
	ClaimRowTokens(trigger, rel, nsp, plans, tokens);
	if (LookForNearDuplicate(rel, plans,
							 (after || TRIGGER_FIRED_BY_UPDATE(td->tg_event)) ?
							 plans->check_update : plans->check_insert,
							 args, nulls,
							 rule.simhash ? psprintf("%d", rule.max_distance) : NULL))
		/* SPI_finish frees what SPI returned */
		detail = MemoryContextStrdup(outer, FoundDetail(plans, &rule));
	SPI_finish();
	if (detail == NULL)
		return result;
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
	return result;				/* keep the compiler quiet */
}
