/*
 * containment.c
 *		Containment: how much of a passage a document holds, exactly, and the
 *		GIN operator class containment_ops that finds the documents holding
 *		at least a share t of a passage's shingles.
 *
 * Containment C(Q, D) = |Q ∩ D| / |Q| over shingle sets.  Resemblance fails
 * for a short passage inside a long document (a 200-word quote in a
 * 20,000-word page resembles it at J ~ 0.01 even when it is there whole);
 * containment is 1 there.
 *
 * The index is an inverted index of shingles, as pg_trgm's is of trigrams:
 * each document's distinct shingles are its keys, key_bits bits (24 by
 * default) of each shingle's 64-bit hash.  A query demands that a row match enough of the passage's
 * keys: a document holding a share t of the passage's |Q| shingles matches
 * at least ceil(t |Q|) of them, less one for every two of the passage's
 * shingles whose keys coincide (such a pair matches as one key).  So the
 * index returns every row the operator accepts, and the recheck, the exact
 * containment of the text, removes the chance matches that short keys let
 * through.  Inserts, updates and deletes are GIN's own.
 *
 * The passage is given with its threshold and its shingling as a
 * containment_query, built by containment_query(): an index serves the
 * queries of its own shingling (its options).  Asked a query shingled
 * otherwise, it matches every row, so that the answer stays exact (the
 * recheck shingles as the query asks) and the planner, which prices that as
 * reading the whole index, prefers an index that matches or a scan.
 */
#include "postgres.h"

#include <math.h>

#include "access/gin.h"
#include "access/htup_details.h"
#include "access/reloptions.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "containment.h"
#include "gin_enough_keys.h"
#include "ndd.h"
#include "shingle.h"

/* The one strategy of containment_ops: text @> containment_query. */
#define CONTAINMENT_STRATEGY	1

/* A passage, its threshold and its shingling, from a containment_query. */
typedef struct ContainmentQuery
{
	text	   *passage;
	double		threshold;
	ShingleConfig cfg;
	int			shingle_size;
	const char *unit;
	bool		strip_html;
} ContainmentQuery;

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
#define CONTAINMENT_KEY_BITS_MAX		32

static relopt_enum_elt_def unit_values[] =
{
	{"word", SHINGLE_UNIT_WORD},
	{"char", SHINGLE_UNIT_CHAR},
	{(const char *) NULL, 0}
};

/* ---------------------------------------------------------------------
 * Exact containment
 * ---------------------------------------------------------------------
 */

/* C(passage, doc): 0 for a passage without shingles. */
static double
Containment(text *passage, text *doc, const ShingleConfig *cfg)
{
	size_t		nq,
				nd;
	uint64	   *q = ShingleSet(VARDATA_ANY(passage), VARSIZE_ANY_EXHDR(passage), cfg, &nq);
	uint64	   *d;
	double		c;

	if (nq == 0)
		return 0.0;
	d = ShingleSet(VARDATA_ANY(doc), VARSIZE_ANY_EXHDR(doc), cfg, &nd);
	c = (double) ShingleSetIntersection(q, nq, d, nd) / (double) nq;
	pfree(q);
	pfree(d);
	return c;
}

/* containment(passage text, doc text, shingle_size, unit, strip_html) */
PG_FUNCTION_INFO_V1(containment_text);
Datum
containment_text(PG_FUNCTION_ARGS)
{
	ShingleConfig cfg;

	ShingleConfigInit(&cfg, text_to_cstring(PG_GETARG_TEXT_PP(3)), PG_GETARG_INT32(2),
					  PG_GETARG_BOOL(4), 0);
	PG_RETURN_FLOAT8(Containment(PG_GETARG_TEXT_PP(0), PG_GETARG_TEXT_PP(1), &cfg));
}

/* ---------------------------------------------------------------------
 * The query: containment_query(passage, threshold, shingle_size, unit,
 * strip_html), and text @> containment_query
 * ---------------------------------------------------------------------
 */

/* containment_query(...): the composite, its fields checked */
PG_FUNCTION_INFO_V1(containment_query_make);
Datum
containment_query_make(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[5];
	bool		nulls[5] = {false, false, false, false, false};
	ShingleConfig cfg;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "containment_query must return a composite type");
	NddCheckThreshold(PG_GETARG_FLOAT8(1));
	ShingleConfigInit(&cfg, text_to_cstring(PG_GETARG_TEXT_PP(3)), PG_GETARG_INT32(2),
					  PG_GETARG_BOOL(4), 0);
	for (int i = 0; i < 5; i++)
		values[i] = PG_GETARG_DATUM(i);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

/* The fields of a containment_query; false if any is NULL (no row matches). */
static bool
ReadQuery(HeapTupleHeader tuple, ContainmentQuery *q)
{
	bool		isnull[5];
	Datum		v[5];

	for (int i = 0; i < 5; i++)
	{
		v[i] = GetAttributeByNum(tuple, i + 1, &isnull[i]);
		if (isnull[i])
			return false;
	}
	q->passage = DatumGetTextPP(v[0]);
	q->threshold = DatumGetFloat8(v[1]);
	q->shingle_size = DatumGetInt32(v[2]);
	q->unit = TextDatumGetCString(v[3]);
	q->strip_html = DatumGetBool(v[4]);
	/* a composite may be written by hand: check what the maker checks */
	NddCheckThreshold(q->threshold);
	ShingleConfigInit(&q->cfg, q->unit, q->shingle_size, q->strip_html, 0);
	return true;
}

/* doc @> containment_query(passage, t, ...): containment(passage, doc) >= t */
PG_FUNCTION_INFO_V1(containment_contains_op);
Datum
containment_contains_op(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	ContainmentQuery q;

	if (!ReadQuery(PG_GETARG_HEAPTUPLEHEADER(1), &q))
		PG_RETURN_NULL();
	PG_RETURN_BOOL(Containment(q.passage, doc, &q.cfg) >= q.threshold);
}

/* ---------------------------------------------------------------------
 * GIN support
 * ---------------------------------------------------------------------
 */

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

/* Do two shinglings give the same shingles? */
bool
ContainmentSameShingling(const ShingleConfig *a, const ShingleConfig *b)
{
	return a->unit == b->unit && a->size == b->size && a->strip_html == b->strip_html;
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

	return (int32) (key_bits >= 32 ? folded : folded & (((uint32) 1 << key_bits) - 1));
}

/* A sort of keys that honours query cancel: a 100 MB document has millions. */
#define ST_SORT sort_keys
#define ST_ELEMENT_TYPE int32
#define ST_COMPARE(a, b) ((*(a) > *(b)) - (*(a) < *(b)))
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/* The distinct keys of a shingle set, as Datums; *nkeys of them. */
static Datum *
KeysOfSet(const uint64 *set, size_t n, int key_bits, int32 *nkeys)
{
	int32	   *keys = palloc_extended(Max(n, 1) * sizeof(int32), MCXT_ALLOC_HUGE);
	Datum	   *datums;
	int			m = 0;

	for (size_t i = 0; i < n; i++)
		keys[i] = ShingleKey(set[i], key_bits);
	sort_keys(keys, n);
	for (size_t i = 0; i < n; i++)
		if (m == 0 || keys[i] != keys[m - 1])
			keys[m++] = keys[i];
	datums = palloc_extended(Max(m, 1) * sizeof(Datum), MCXT_ALLOC_HUGE);
	for (int i = 0; i < m; i++)
		datums[i] = Int32GetDatum(keys[i]);
	pfree(keys);
	*nkeys = m;
	return datums;
}

/* extractValue(text, internal): a document's distinct shingle keys */
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
	set = ShingleSet(VARDATA_ANY(doc), VARSIZE_ANY_EXHDR(doc), &cfg, &n);
	CHECK_FOR_INTERRUPTS();
	keys = KeysOfSet(set, n, opts->key_bits, nkeys);
	pfree(set);
	PG_RETURN_POINTER(keys);
}

/* extractQuery(containment_query, internal, int2, internal, internal, internal, internal) */
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
	int		   *required;

	if (strategy != CONTAINMENT_STRATEGY)
		elog(ERROR, "unrecognized strategy number: %d", strategy);
	IndexShingling(fcinfo, &cfg, &opts);
	if (!ReadQuery(PG_GETARG_HEAPTUPLEHEADER(0), &q))
	{
		/* a NULL field: no row, as in a scan */
		*nkeys = 0;
		*search_mode = GIN_SEARCH_MODE_DEFAULT;
		PG_RETURN_POINTER(NULL);
	}
	/* another index's query: every row, and the recheck decides */
	if (!ContainmentSameShingling(&q.cfg, &cfg))
	{
		*nkeys = 0;
		*search_mode = GIN_SEARCH_MODE_ALL;
		PG_RETURN_POINTER(NULL);
	}

	/* 1. the passage's keys: no shingle, no row (its containment is 0) */
	set = ShingleSet(VARDATA_ANY(q.passage), VARSIZE_ANY_EXHDR(q.passage), &cfg, &n);
	keys = KeysOfSet(set, n, opts->key_bits, nkeys);
	if (*nkeys == 0)
	{
		*search_mode = GIN_SEARCH_MODE_DEFAULT;
		PG_RETURN_POINTER(NULL);
	}

	/*
	 * 2. the keys a row must match: ceil(t |Q|) shingles, less those hidden
	 * by keys that coincide (|Q| - nkeys of them); the small margin keeps a
	 * product such as 0.7 * 10 from rounding up past 7.
	 */
	required = palloc(sizeof(int));
	*required = (int) ceil(q.threshold * (double) n - 1e-9) - (int) (n - *nkeys);
	if (*required <= 0)
	{
		/* every row may hold enough: the recheck decides */
		*required = 0;
		*search_mode = GIN_SEARCH_MODE_ALL;
	}
	*extra_data = palloc(*nkeys * sizeof(Pointer));
	for (int i = 0; i < *nkeys; i++)
		(*extra_data)[i] = (Pointer) required;
	PG_RETURN_POINTER(keys);
}

/* consistent(internal, int2, containment_query, int4, internal, internal, internal, internal) */
PG_FUNCTION_INFO_V1(gin_containment_consistent);
Datum
gin_containment_consistent(PG_FUNCTION_ARGS)
{
	bool	   *check = (bool *) PG_GETARG_POINTER(0);
	int32		nkeys = PG_GETARG_INT32(3);
	Pointer    *extra_data = (Pointer *) PG_GETARG_POINTER(4);
	bool	   *recheck = (bool *) PG_GETARG_POINTER(5);

	*recheck = true;
	PG_RETURN_BOOL(GinEnoughKeys(check, nkeys, extra_data));
}

/* triConsistent(internal, int2, containment_query, int4, internal, internal, internal) */
PG_FUNCTION_INFO_V1(gin_containment_triconsistent);
Datum
gin_containment_triconsistent(PG_FUNCTION_ARGS)
{
	GinTernaryValue *check = (GinTernaryValue *) PG_GETARG_POINTER(0);
	int32		nkeys = PG_GETARG_INT32(3);
	Pointer    *extra_data = (Pointer *) PG_GETARG_POINTER(4);

	PG_RETURN_GIN_TERNARY_VALUE(GinMaybeEnoughKeys(check, nkeys, extra_data) ? GIN_MAYBE : GIN_FALSE);
}
