/*
 * containment.c
 *		Containment: how much of a passage a document holds, exactly:
 *		containment(), containment_query() and text @> containment_query.
 *
 * Containment C(Q, D) = |Q ∩ D| / |Q| over shingle sets.  Resemblance fails
 * for a short passage inside a long document (a 200-word quote in a
 * 20,000-word page resembles it at J ~ 0.01 even when it is there whole);
 * containment is 1 there.
 *
 * The recheck of a containment_ops index (index/containment_gin.c) is the
 * operator: it shingles the passage once per scan, not once per row
 * (PassageCache), and looks each of a document's shingles up in it.
 *
 * The passage is given with its threshold and its shingling as a
 * containment_query, built by containment_query(); the recheck shingles as
 * the query asks, whatever the index's shingling.
 */
#include "postgres.h"

#include <math.h>

#include "access/detoast.h"
#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/primnodes.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "base/ndd_limits.h"
#include "base/toast_read.h"
#include "text/containment.h"
#include "text/shingle.h"

/* ---------------------------------------------------------------------
 * Exact containment
 * ---------------------------------------------------------------------
 */

/*
 * A passage's distinct shingles, sorted, kept in fn_extra across the rows
 * of one expression: a scan and an index's recheck call the operator (and
 * containment()) once per row with the same passage, and shingling a long
 * one for every row cost |Q| log |Q| a row.  The key is the bytes of the
 * argument that holds the passage, as it comes (ArgKey).  A Const cannot
 * change and is not compared; anything else is, since an expression may be
 * evaluated again with new values (a join's inner side; PL/pgSQL keeps a
 * simple expression's state while its variables, external Params, change).
 */
typedef struct PassageCache
{
	bool		valid;
	bool		constant;		/* the arguments are Consts */
	Size		len;			/* the key */
	char	   *key;
	bool		null_field;		/* a containment_query with a NULL field */
	double		threshold;
	ShingleConfig cfg;
	uint64	   *set;			/* in fn_mcxt */
	size_t		n;
	uint32	   *dir;			/* a long set's directory, or NULL */
	int			dir_bits;
} PassageCache;

/*
 * A set of this many shingles or more gets a directory: where each run of
 * hashes with the same top dir_bits bits starts, four to eight hashes a
 * run.  A document's hash is then looked for in its run, not searched for
 * in the whole passage, where each step of a binary search in a set of
 * millions is a cache miss.
 */
#define PASSAGE_DIRECTORY_MIN	4096

/*
 * The bytes that identify a varlena argument: as it comes, a pointer to a
 * value stored out of line, compressed or plain, so that a passage read
 * from a table is neither fetched nor decompressed again for each row.
 * Equal bytes are an equal value: a value stored out of line is never
 * changed, and its pointer names it.  A value in memory (expanded,
 * indirect) is flattened.
 */
static struct varlena *
ArgKey(Datum value)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(value);

	if (VARATT_IS_EXTERNAL(v) && !VARATT_IS_EXTERNAL_ONDISK(v))
		v = detoast_external_attr(v);
	return v;
}

/* Are arguments first .. last of the call fcinfo serves Consts? */
static bool
ArgsConstant(FunctionCallInfo fcinfo, int first, int last)
{
	Node	   *expr = fcinfo->flinfo->fn_expr;
	List	   *args;

	if (expr == NULL)
		return false;
	if (IsA(expr, FuncExpr))
		args = ((FuncExpr *) expr)->args;
	else if (IsA(expr, OpExpr))
		args = ((OpExpr *) expr)->args;
	else
		return false;
	if (list_length(args) <= last)
		return false;
	for (int i = first; i <= last; i++)
		if (!IsA(list_nth(args, i), Const))
			return false;
	return true;
}

/* fn_extra's cache if it holds the set of key (len bytes), else NULL. */
static PassageCache *
PassageCacheGet(FunctionCallInfo fcinfo, const void *key, Size len)
{
	PassageCache *c = (PassageCache *) fcinfo->flinfo->fn_extra;

	if (c == NULL || !c->valid)
		return NULL;
	if (c->constant || (c->len == len && memcmp(c->key, key, len) == 0))
		return c;
	return NULL;
}

/* An emptied cache in fn_extra for key, to be filled by the caller. */
static PassageCache *
PassageCacheReset(FunctionCallInfo fcinfo, const void *key, Size len, bool constant)
{
	PassageCache *c = (PassageCache *) fcinfo->flinfo->fn_extra;

	if (c == NULL)
		c = fcinfo->flinfo->fn_extra =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(PassageCache));
	if (c->key)
		pfree(c->key);
	if (c->set)
		pfree(c->set);
	if (c->dir)
		pfree(c->dir);
	memset(c, 0, sizeof(PassageCache));
	c->constant = constant;
	/* a constant key is never compared: no copy */
	if (!constant)
	{
		c->key = MemoryContextAllocHuge(fcinfo->flinfo->fn_mcxt, Max(len, 1));
		memcpy(c->key, key, len);
		c->len = len;
	}
	return c;
}

/* Shingle passage into the cache c (its set in fn_mcxt), and mark it valid. */
static void
PassageCacheFill(FunctionCallInfo fcinfo, PassageCache *c, text *passage,
				 const ShingleConfig *cfg)
{
	MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);

	c->cfg = *cfg;
	c->set = ShingleSetSorted(VARDATA_ANY(passage), VARSIZE_ANY_EXHDR(passage), cfg, &c->n);
	if (c->n >= PASSAGE_DIRECTORY_MIN)
	{
		size_t		nruns;
		size_t		i = 0;

		c->dir_bits = 1;
		while (((size_t) 8 << c->dir_bits) <= c->n)
			c->dir_bits++;
		nruns = (size_t) 1 << c->dir_bits;
		c->dir = palloc_extended((nruns + 1) * sizeof(uint32), MCXT_ALLOC_HUGE);
		for (size_t run = 0; run <= nruns; run++)
		{
			while (i < c->n && (c->set[i] >> (64 - c->dir_bits)) < run)
				i++;
			c->dir[run] = (uint32) i;
		}
	}
	MemoryContextSwitchTo(old);
	c->valid = true;
}

/* How many of a document's nd sorted, distinct hashes the passage holds. */
static size_t
CountShared(const PassageCache *c, const uint64 *d, size_t nd)
{
	size_t		common = 0;

	if (c->dir == NULL || c->n < 4 * nd)
		return ShingleSetIntersection(c->set, c->n, d, nd);
	for (size_t i = 0; i < nd; i++)
	{
		size_t		run = d[i] >> (64 - c->dir_bits);
		size_t		lo = c->dir[run],
					hi = c->dir[run + 1];

		/* the first of the run not below d[i] */
		while (lo < hi)
		{
			size_t		mid = lo + (hi - lo) / 2;

			if (c->set[mid] < d[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		common += (lo < c->dir[run + 1] && c->set[lo] == d[i]);
	}
	return common;
}

/* C(passage, doc) from the passage's set: 0 for a passage without shingles. */
static double
ContainmentOfSet(const PassageCache *c, text *doc)
{
	size_t		nd;
	uint64	   *d;
	double		containment;

	if (c->n == 0)
		return 0.0;
	d = ShingleSetSorted(VARDATA_ANY(doc), VARSIZE_ANY_EXHDR(doc), &c->cfg, &nd);
	containment = (double) CountShared(c, d, nd) / (double) c->n;
	pfree(d);
	return containment;
}

/* containment(passage text, doc text, shingle_size, unit, strip_html) */
PG_FUNCTION_INFO_V1(containment_text);
Datum
containment_text(PG_FUNCTION_ARGS)
{
	struct varlena *key = ArgKey(PG_GETARG_DATUM(0));
	ShingleConfig cfg;
	PassageCache *c;

	ShingleConfigInit(&cfg, text_to_cstring(PG_GETARG_TEXT_PP(3)), PG_GETARG_INT32(2),
					  PG_GETARG_BOOL(4), 0);
	c = PassageCacheGet(fcinfo, key, VARSIZE_ANY(key));
	if (c == NULL || !ContainmentSameShingling(&c->cfg, &cfg))
	{
		/* the passage and the shingling, not the document */
		c = PassageCacheReset(fcinfo, key, VARSIZE_ANY(key),
							  ArgsConstant(fcinfo, 0, 0) && ArgsConstant(fcinfo, 2, 4));
		PassageCacheFill(fcinfo, c, PG_GETARG_TEXT_PP_CANCELLABLE(0), &cfg);
	}
	PG_RETURN_FLOAT8(ContainmentOfSet(c, PG_GETARG_TEXT_PP_CANCELLABLE(1)));
}

/* ---------------------------------------------------------------------
 * The query: containment_query(passage, threshold, shingle_size, unit,
 * strip_html), and text @> containment_query
 * ---------------------------------------------------------------------
 */

/*
 * The last query containment_query() made from a passage stored out of
 * line, and its arguments: a scan that builds the query for each row (its
 * passage from a subquery, a parameter) would otherwise fetch the passage
 * from its TOAST table again for each row.
 */
typedef struct QueryMakerCache
{
	char		passage[TOAST_POINTER_SIZE];
	double		threshold;
	int32		shingle_size;
	char	   *unit;			/* in fn_mcxt */
	bool		strip_html;
	HeapTupleHeader query;		/* in fn_mcxt */
} QueryMakerCache;

/* Do the arguments of fcinfo make the query cached in c? */
static bool
QueryMakerCacheHit(FunctionCallInfo fcinfo, const QueryMakerCache *c)
{
	struct varlena *passage = (struct varlena *) PG_GETARG_POINTER(0);

	return c != NULL && c->query != NULL && VARATT_IS_EXTERNAL_ONDISK(passage) &&
		VARSIZE_EXTERNAL(passage) == TOAST_POINTER_SIZE &&
		memcmp(c->passage, passage, TOAST_POINTER_SIZE) == 0 &&
		c->threshold == PG_GETARG_FLOAT8(1) &&
		c->shingle_size == PG_GETARG_INT32(2) &&
		strcmp(c->unit, text_to_cstring(PG_GETARG_TEXT_PP(3))) == 0 &&
		c->strip_html == PG_GETARG_BOOL(4);
}

/* Keep query, made from fcinfo's arguments, if its passage is out of line. */
static void
QueryMakerCacheKeep(FunctionCallInfo fcinfo, Datum query)
{
	struct varlena *passage = (struct varlena *) PG_GETARG_POINTER(0);
	QueryMakerCache *c = (QueryMakerCache *) fcinfo->flinfo->fn_extra;
	MemoryContext old;

	if (!VARATT_IS_EXTERNAL_ONDISK(passage) || VARSIZE_EXTERNAL(passage) != TOAST_POINTER_SIZE)
		return;
	if (c == NULL)
		c = fcinfo->flinfo->fn_extra =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(QueryMakerCache));
	if (c->query)
		pfree(c->query);
	if (c->unit)
		pfree(c->unit);
	c->query = NULL;
	c->unit = NULL;
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	memcpy(c->passage, passage, TOAST_POINTER_SIZE);
	c->threshold = PG_GETARG_FLOAT8(1);
	c->shingle_size = PG_GETARG_INT32(2);
	c->unit = text_to_cstring(PG_GETARG_TEXT_PP(3));
	c->strip_html = PG_GETARG_BOOL(4);
	/* last: a cache without its query is never hit */
	c->query = (HeapTupleHeader) PG_DETOAST_DATUM_COPY(query);
	MemoryContextSwitchTo(old);
}

/* containment_query(...): the composite, its fields checked */
PG_FUNCTION_INFO_V1(containment_query_make);
Datum
containment_query_make(PG_FUNCTION_ARGS)
{
	QueryMakerCache *c = (QueryMakerCache *) fcinfo->flinfo->fn_extra;
	TupleDesc	desc;
	Datum		values[5];
	bool		nulls[5] = {false, false, false, false, false};
	ShingleConfig cfg;
	Datum		query;

	/* a copy: the caller owns its result */
	if (QueryMakerCacheHit(fcinfo, c))
		PG_RETURN_DATUM(PointerGetDatum(PG_DETOAST_DATUM_COPY(PointerGetDatum(c->query))));
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "containment_query must return a composite type");
	NddCheckThreshold(PG_GETARG_FLOAT8(1));
	ShingleConfigInit(&cfg, text_to_cstring(PG_GETARG_TEXT_PP(3)), PG_GETARG_INT32(2),
					  PG_GETARG_BOOL(4), 0);
	for (int i = 0; i < 5; i++)
		values[i] = PG_GETARG_DATUM(i);
	/* a passage stored out of line: fetched here, compressed or not */
	values[0] = PointerGetDatum(ToastFetchCancellable((struct varlena *) PG_GETARG_POINTER(0)));
	query = HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls));
	if (values[0] != PG_GETARG_DATUM(0))
		pfree(DatumGetPointer(values[0]));
	QueryMakerCacheKeep(fcinfo, query);
	PG_RETURN_DATUM(query);
}

/*
 * The fields of a containment_query; false if any is NULL (no row matches).
 * A query stored out of line (a long passage read from a table) is fetched
 * honouring query cancel.
 */
bool
ContainmentReadQuery(Datum query, ContainmentQuery *q)
{
	HeapTupleHeader tuple = (HeapTupleHeader) DetoastCancellable((struct varlena *) DatumGetPointer(query));
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
	/* a composite may be written by hand: check what the maker checks */
	NddCheckThreshold(q->threshold);
	ShingleConfigInit(&q->cfg, TextDatumGetCString(v[3]), DatumGetInt32(v[2]),
					  DatumGetBool(v[4]), 0);
	return true;
}

/* doc @> containment_query(passage, t, ...): containment(passage, doc) >= t */
PG_FUNCTION_INFO_V1(containment_contains_op);
Datum
containment_contains_op(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP_CANCELLABLE(0);
	struct varlena *key = ArgKey(PG_GETARG_DATUM(1));
	PassageCache *c = PassageCacheGet(fcinfo, key, VARSIZE_ANY(key));

	if (c == NULL)
	{
		ContainmentQuery q;

		c = PassageCacheReset(fcinfo, key, VARSIZE_ANY(key), ArgsConstant(fcinfo, 1, 1));
		if (ContainmentReadQuery(PG_GETARG_DATUM(1), &q))
		{
			c->threshold = q.threshold;
			PassageCacheFill(fcinfo, c, q.passage, &q.cfg);
		}
		else
		{
			c->null_field = true;
			c->valid = true;
		}
	}
	if (c->null_field)
		PG_RETURN_NULL();
	PG_RETURN_BOOL(ContainmentOfSet(c, doc) >= c->threshold);
}

/* Do two shinglings give the same shingles? */
bool
ContainmentSameShingling(const ShingleConfig *a, const ShingleConfig *b)
{
	return a->unit == b->unit && a->size == b->size && a->strip_html == b->strip_html;
}
