/*
 * containment_gin.c
 *		The GIN operator class containment_ops: finds the documents holding at
 *		least a share t of a passage's shingles (text @> containment_query).
 *
 * The index is an inverted index of shingles, as pg_trgm's is of trigrams:
 * each document's distinct shingles are its keys, key_bits bits (24 by
 * default) of each shingle's 64-bit hash.  A query demands that a row match
 * enough of the passage's keys: a document holding a share t of the
 * passage's |Q| shingles matches at least ceil(t |Q|) of them, less one for
 * every two of the passage's shingles whose keys coincide (such a pair
 * matches as one key).  So the index returns every row the operator
 * accepts, and the recheck, the exact containment of the text, removes the
 * chance matches that short keys let through.  Inserts, updates and deletes
 * are GIN's own.
 *
 * A long passage sends at most CONTAINMENT_QUERY_KEYS_MAX of its keys:
 * GIN's work grows with the keys sent, with their square before it reads
 * the index, and in the pending list it looks each key up in each row deaf
 * to cancel.  A row holding R of all the passage's keys holds at least R
 * less the keys not sent, so that is what it must match; where that leaves
 * nothing to ask, every row was a candidate.  Size keys narrow that case:
 * each document also has one key for the class of its number of distinct
 * shingles, n, classes a factor of at most 1.25 apart (SizeClass).  A
 * document holding a share t of |Q| shingles holds at least t |Q| distinct
 * shingles of its own, so n >= m = ceil(t |Q|) and, the classes rising
 * with n, its class is at least m's: the query then asks for any of the
 * classes from m's up, and only documents long enough are rechecked.
 * Size keys are negative and shingle keys are not (key_bits is at most 31),
 * so a query asks for one kind or the other, never both.
 *
 * An index serves the queries of its own shingling (its options).  Asked
 * a query shingled otherwise, it matches every row, so that the answer
 * stays exact (the recheck, text/containment.c, shingles as the query
 * asks) and the planner, which prices that as reading the whole index,
 * prefers an index that matches or a scan.
 */
#include "postgres.h"

#include <math.h>

#include "access/detoast.h"
#include "access/gin.h"
#include "access/htup_details.h"
#include "access/reloptions.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/primnodes.h"
#include "port/pg_bitutils.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "base/ndd_limits.h"
#include "base/toast_read.h"
#include "index/containment_gin.h"
#include "index/gin_enough_keys.h"
#include "text/containment.h"
#include "text/shingle.h"

/* The one strategy of containment_ops: text @> containment_query. */
#define CONTAINMENT_STRATEGY	1

/* The options of a containment_ops index: the shingling of its keys. */
typedef struct ContainmentGinOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			shingle_size;
	int			unit;			/* ShingleUnit */
	bool		strip_html;
	int			key_bits;		/* bits of each shingle's hash kept */
} ContainmentGinOptions;

/*
 * Keys of 24 bits by default: past 16M distinct shingles (a few thousand
 * long documents) keys repeat, and GIN stores a key once with a compressed
 * list of its rows, a byte or two a row, where a key of one row costs a
 * whole entry (about 30 bytes).  A passage's chance matches stay rare: a
 * 10,000-shingle document holds a given 24-bit key once in 1,700.
 */
#define CONTAINMENT_KEY_BITS_DEFAULT	24
#define CONTAINMENT_KEY_BITS_MIN		16
/* at most 31: shingle keys are >= 0, apart from the negative size keys */
#define CONTAINMENT_KEY_BITS_MAX		31

/*
 * The most keys a query sends.  GIN's work grows with them, and none of it
 * can be cancelled in the pending list: it looks each key up in each
 * pending row, holding the page's lock (so interrupts are held off), about
 * 0.2 to 0.4 ms a key for 4 MB of pending list (its default limit) of
 * 1,000-word or 40-word documents here.  Before reading the index it calls
 * triConsistent, which counts all the keys, once per key until the keys
 * left cannot reach the count; PostgreSQL releases before 2025 also rewrite
 * all the keys' flags before each call, keys^2 in all.  2,048 keys keep the
 * pending list under a second and the rest to milliseconds; a passage of up
 * to 2,048 / (1 - t) shingles (10,240 at t = 0.8) still narrows the rows.
 */
#define CONTAINMENT_QUERY_KEYS_MAX	2048

/*
 * The class of the most shingles a document can have (a text is under
 * 1 GB, far from 2^32 shingles): a query for long documents asks for every
 * class from its own up to this one, at most 128 keys.
 */
#define CONTAINMENT_SIZE_CLASS_MAX	127

static relopt_enum_elt_def unit_values[] =
{
	{"word", SHINGLE_UNIT_WORD},
	{"char", SHINGLE_UNIT_CHAR},
	{(const char *) NULL, 0}
};

/* ---------------------------------------------------------------------
 * GIN support
 * ---------------------------------------------------------------------
 */

/*
 * Calls of the compare function between two looks at interrupts: a look
 * costs a load and a branch, a call through fmgr a few nanoseconds, so
 * 4,096 calls are microseconds apart.
 */
#define CONTAINMENT_COMPARE_CHECK_CALLS	4096

/*
 * compare(int4, int4): the order of the keys, int4's, looking at pending
 * interrupts every CONTAINMENT_COMPARE_CHECK_CALLS calls.  GIN's build puts
 * a row's keys (millions for a long document) into its in-memory tree
 * (ginInsertBAEntries) calling nothing of ours but this and looking at no
 * interrupt itself.  Where GIN compares holding a buffer lock (searching
 * the entry tree, matching or flushing the pending list), interrupts are
 * held off and the look does nothing; an error elsewhere is GIN's usual
 * abort.
 */
PG_FUNCTION_INFO_V1(gin_compare_containment);
Datum
gin_compare_containment(PG_FUNCTION_ARGS)
{
	static uint32 calls = 0;
	int32		a = PG_GETARG_INT32(0);
	int32		b = PG_GETARG_INT32(1);

	if (unlikely(++calls % CONTAINMENT_COMPARE_CHECK_CALLS == 0))
		CHECK_FOR_INTERRUPTS();
	PG_RETURN_INT32((a > b) - (a < b));
}

/* options(internal) */
PG_FUNCTION_INFO_V1(gin_containment_options);
Datum
gin_containment_options(PG_FUNCTION_ARGS)
{
	local_relopts *relopts = (local_relopts *) PG_GETARG_POINTER(0);

	init_local_reloptions(relopts, sizeof(ContainmentGinOptions));
	add_local_int_reloption(relopts, "shingle_size", "shingle_size of the indexed shingles",
							NDD_SHINGLE_SIZE_DEFAULT, NDD_SHINGLE_SIZE_MIN, NDD_SHINGLE_SIZE_MAX,
							offsetof(ContainmentGinOptions, shingle_size));
	add_local_enum_reloption(relopts, "unit", "unit of the indexed shingles",
							 unit_values, SHINGLE_UNIT_WORD,
							 "Valid values are \"word\" and \"char\".",
							 offsetof(ContainmentGinOptions, unit));
	add_local_bool_reloption(relopts, "strip_html", "whether markup was stripped before shingling",
							 false, offsetof(ContainmentGinOptions, strip_html));
	add_local_int_reloption(relopts, "key_bits", "bits of each shingle's hash kept in its key",
							CONTAINMENT_KEY_BITS_DEFAULT, CONTAINMENT_KEY_BITS_MIN,
							CONTAINMENT_KEY_BITS_MAX,
							offsetof(ContainmentGinOptions, key_bits));
	PG_RETURN_VOID();
}

/* The shingling of a containment_ops index column, from its parsed options. */
void
ContainmentIndexShingling(const bytea *options, ShingleConfig *cfg)
{
	const ContainmentGinOptions *opts = (const ContainmentGinOptions *) options;

	ShingleConfigInit(cfg, ShingleUnitName((ShingleUnit) opts->unit),
					  opts->shingle_size, opts->strip_html, 0);
}

/* The shingling of the index column being scanned or built. */
static void
IndexShingling(FunctionCallInfo fcinfo, ShingleConfig *cfg, ContainmentGinOptions **opts)
{
	if (!PG_HAS_OPCLASS_OPTIONS())
		elog(ERROR, "containment_ops called without its options");
	*opts = (ContainmentGinOptions *) PG_GET_OPCLASS_OPTIONS();
	ContainmentIndexShingling((bytea *) *opts, cfg);
}

/* The key of a 64-bit shingle hash: its low key_bits bits, both halves mixed. */
static inline int32
ShingleKey(uint64 hash, int key_bits)
{
	uint32		folded = (uint32) (hash ^ (hash >> 32));

	StaticAssertStmt(CONTAINMENT_KEY_BITS_MAX <= 31, "shingle keys must stay >= 0");
	return (int32) (folded & (((uint32) 1 << key_bits) - 1));
}

/*
 * The size class of a document of n distinct shingles: n itself below 4,
 * else 4 per power of two, by the two bits after the leading one, so that
 * a class spans a factor of at most 1.25.  It never falls as n grows.
 */
static inline int
SizeClass(uint64 n)
{
	int			b;

	if (n < 4)
		return (int) n;
	n = Min(n, (uint64) PG_UINT32_MAX);
	b = pg_leftmost_one_pos64(n);
	return 4 * b + (int) ((n >> (b - 2)) & 3);
}

/* The size key of class c: negative, so never a shingle's key. */
static inline int32
SizeKey(int c)
{
	return (int32) (-1 - c);
}

/* A sort of keys that honours query cancel: a 100 MB document has millions. */
#define ST_SORT sort_keys
#define ST_ELEMENT_TYPE int32
#define ST_COMPARE(a, b) ((*(a) > *(b)) - (*(a) < *(b)))
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/*
 * Distinct keys of a shingle set, at most max of them, as Datums in
 * ascending order; *nkeys of them, after front free slots.  Under max, all
 * of them; else the least of the keys of its first shingles, as many as
 * that takes (any max of them serve a query, and a passage of millions of
 * shingles need not sort its keys).
 */
static Datum *
KeysOfSet(const uint64 *set, size_t n, int key_bits, int max, int front, int32 *nkeys)
{
	size_t		take = (size_t) max >= n / 2 ? n : (size_t) max * 2;
	int32	   *keys = palloc_extended(Max(n, 1) * sizeof(int32), MCXT_ALLOC_HUGE);
	Datum	   *datums;
	int			m;

	for (;;)
	{
		m = 0;
		for (size_t i = 0; i < take; i++)
			keys[i] = ShingleKey(set[i], key_bits);
		sort_keys(keys, take);
		for (size_t i = 0; i < take; i++)
			if (m == 0 || keys[i] != keys[m - 1])
				keys[m++] = keys[i];
		/* keys coincided: more shingles */
		if (m >= max || take == n)
			break;
		take = Min(n, take * 2);
	}
	m = Min(m, max);
	datums = palloc_extended(Max((size_t) m + front, 1) * sizeof(Datum), MCXT_ALLOC_HUGE);
	for (int i = 0; i < m; i++)
		datums[front + i] = Int32GetDatum(keys[i]);
	pfree(keys);
	*nkeys = m;
	return datums;
}

/*
 * extractValue(text, internal): a document's distinct shingle keys and the
 * key of its size class (none for a document without shingles)
 */
PG_FUNCTION_INFO_V1(gin_extract_value_containment);
Datum
gin_extract_value_containment(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	int32	   *nkeys = (int32 *) PG_GETARG_POINTER(1);
	ContainmentGinOptions *opts;
	ShingleConfig cfg;
	size_t		n;
	uint64	   *set;
	Datum	   *keys;

	IndexShingling(fcinfo, &cfg, &opts);
	set = ShingleSetSorted(VARDATA_ANY(doc), VARSIZE_ANY_EXHDR(doc), &cfg, &n);
	CHECK_FOR_INTERRUPTS();
	keys = KeysOfSet(set, n, opts->key_bits, INT_MAX, 1, nkeys);
	pfree(set);
	if (n == 0)
		PG_RETURN_POINTER(keys);

	/*
	 * First: negative, it keeps the keys ascending, and GIN's sort of them
	 * (a call of the compare function per comparison) then ends after one
	 * pass.  Last, it made building an index a fifth slower.
	 */
	keys[0] = Int32GetDatum(SizeKey(SizeClass(n)));
	(*nkeys)++;
	PG_RETURN_POINTER(keys);
}

/* Every row must match count of the nkeys keys of a query: its extra_data. */
static Pointer *
RequiredKeys(int32 nkeys, int count)
{
	int		   *extra = palloc(sizeof(int));
	Pointer    *extra_data = palloc(Max(nkeys, 1) * sizeof(Pointer));

	*extra = count;
	for (int i = 0; i < nkeys; i++)
		extra_data[i] = (Pointer) extra;
	return extra_data;
}

/*
 * The keys of documents of at least m distinct shingles, m >= 1: the size
 * keys of their classes, from m's up, of which a row must match one.
 */
static Datum *
SizeKeysFrom(uint64 m, int32 *nkeys, Pointer **extra_data)
{
	int			first = SizeClass(m);
	Datum	   *keys;

	Assert(m >= 1 && SizeClass(PG_UINT32_MAX) == CONTAINMENT_SIZE_CLASS_MAX);
	*nkeys = CONTAINMENT_SIZE_CLASS_MAX - first + 1;
	keys = palloc(*nkeys * sizeof(Datum));
	for (int c = first; c <= CONTAINMENT_SIZE_CLASS_MAX; c++)
		keys[c - first] = Int32GetDatum(SizeKey(c));
	*extra_data = RequiredKeys(*nkeys, 1);
	return keys;
}

/*
 * extractQuery(text, internal, int2, internal, internal,
 * internal, internal): at most CONTAINMENT_QUERY_KEYS_MAX of the passage's
 * keys, and in extra_data the count a row must match; or, where that count
 * leaves nothing to ask, the size keys of documents long enough
 */
PG_FUNCTION_INFO_V1(gin_extract_query_containment);
Datum
gin_extract_query_containment(PG_FUNCTION_ARGS)
{
	int32	   *nkeys = (int32 *) PG_GETARG_POINTER(1);
	StrategyNumber strategy = PG_GETARG_UINT16(2);
	Pointer   **extra_data = (Pointer **) PG_GETARG_POINTER(4);
	int32	   *search_mode = (int32 *) PG_GETARG_POINTER(6);
	ContainmentGinOptions *opts;
	ShingleConfig cfg;
	ContainmentQuery q;
	size_t		n;
	uint64	   *set;
	Datum	   *keys;
	int64		least;
	int64		required;

	if (strategy != CONTAINMENT_STRATEGY)
		elog(ERROR, "unrecognized strategy number: %d", strategy);
	IndexShingling(fcinfo, &cfg, &opts);
	*nkeys = 0;
	*search_mode = GIN_SEARCH_MODE_DEFAULT;
	/* a NULL field: no row, as in a scan */
	if (!ContainmentReadQuery(PG_GETARG_DATUM(0), &q))
		PG_RETURN_POINTER(NULL);
	/* another index's query: every row, and the recheck decides */
	if (!ContainmentSameShingling(&q.cfg, &cfg))
	{
		*search_mode = GIN_SEARCH_MODE_ALL;
		PG_RETURN_POINTER(NULL);
	}

	/* 1. the passage's keys: no shingle, no row (its containment is 0) */
	set = ShingleSetSorted(VARDATA_ANY(q.passage), VARSIZE_ANY_EXHDR(q.passage), &cfg, &n);
	keys = KeysOfSet(set, n, opts->key_bits, CONTAINMENT_QUERY_KEYS_MAX, 0, nkeys);
	pfree(set);
	if (*nkeys == 0)
		PG_RETURN_POINTER(NULL);

	/*
	 * 2. the keys a row must match: a row that qualifies shares at least
	 * ceil(t |Q|) shingles (least) with the passage, less one for each of the
	 * other |Q| - nkeys shingles, whose keys coincide with one sent or are
	 * not sent; the small margin keeps a product such as 0.7 * 10 from
	 * rounding up past 7.
	 */
	least = (int64) ceil(q.threshold * (double) n - 1e-9);
	required = least - (int64) (n - *nkeys);
	if (required > 0)
	{
		*extra_data = RequiredKeys(*nkeys, (int) required);
		PG_RETURN_POINTER(keys);
	}
	pfree(keys);
	*nkeys = 0;
	/* 3. else it must hold as many shingles of its own: ask by size */
	if (least > 0)
		PG_RETURN_POINTER(SizeKeysFrom((uint64) least, nkeys, extra_data));
	/* every row may hold enough: the recheck decides */
	*search_mode = GIN_SEARCH_MODE_ALL;
	PG_RETURN_POINTER(NULL);
}

/*
 * consistent(internal, int2, text, int4, internal, internal,
 * internal, internal).  Both consistent functions look at pending
 * interrupts: GIN calls them in loops of its own that do not (once per key
 * to split the keys, once per row of the pending list).
 */
PG_FUNCTION_INFO_V1(gin_containment_consistent);
Datum
gin_containment_consistent(PG_FUNCTION_ARGS)
{
	bool	   *check = (bool *) PG_GETARG_POINTER(0);
	int32		nkeys = PG_GETARG_INT32(3);
	Pointer    *extra_data = (Pointer *) PG_GETARG_POINTER(4);
	bool	   *recheck = (bool *) PG_GETARG_POINTER(5);

	CHECK_FOR_INTERRUPTS();
	*recheck = true;
	PG_RETURN_BOOL(GinEnoughKeys(check, nkeys, extra_data));
}

/* triConsistent(internal, int2, text, int4, internal, internal, internal) */
PG_FUNCTION_INFO_V1(gin_containment_triconsistent);
Datum
gin_containment_triconsistent(PG_FUNCTION_ARGS)
{
	GinTernaryValue *check = (GinTernaryValue *) PG_GETARG_POINTER(0);
	int32		nkeys = PG_GETARG_INT32(3);
	Pointer    *extra_data = (Pointer *) PG_GETARG_POINTER(4);

	CHECK_FOR_INTERRUPTS();
	PG_RETURN_GIN_TERNARY_VALUE(GinMaybeEnoughKeys(check, nkeys, extra_data) ? GIN_MAYBE : GIN_FALSE);
}
