/*
 * simhash_gin.c
 *		GIN operator class for simhash % simhash: Hamming search with block
 *		keys (Manku, Jain and Das Sarma, 2007; see simhash_keys.c for the
 *		keys, their two layouts and the pigeonhole bound).
 *
 * Each row's keys are its fingerprint's block keys for the index's
 * max_distance and layout (the opclass options).  The consistent function
 * demands as many shared keys as the worst placement of the current
 * threshold's differences leaves (SimHashRequiredKeys), and the recheck
 * applies the exact distance, so an index scan returns exactly what a
 * sequential scan returns, at any threshold.  When no key need survive (far
 * above max_distance) the scan reads the whole index and rechecks every row.
 *
 * The trade-off between the layouts is posting-list entries read per lookup
 * against bytes per row.  With blocks, a lookup reads about 5 N / 2^13
 * entries: 6,000 at 10M rows, most of a millisecond, and a batch of lookups
 * cannot go faster.  With pairs it reads 6 N / 2^21, about 30 at 10M, each a
 * heap visit, and the index is larger because its keys are nearly unique at
 * a few million rows.  bench/simhash_search.sh measures both, and
 * docs/simhash.md ("Choosing the GIN layout") gives figures.
 */
#include "postgres.h"

#include "access/gin.h"
#include "access/reloptions.h"
#include "access/stratnum.h"
#include "fmgr.h"

#include "base/ndd_limits.h"
#include "keys/simhash_keys.h"
#include "sketch/simhash.h"

/* opclass options: simhash_ops(max_distance = k, keys = pairs | blocks) */
typedef struct SimHashGinOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			max_distance;
	int			keys;
} SimHashGinOptions;

static relopt_enum_elt_def simhash_gin_keys_values[] = {
	{"pairs", SIMHASH_KEYS_PAIRS},
	{"blocks", SIMHASH_KEYS_BLOCKS},
	{(const char *) NULL, 0}
};

/* The key layout of the index column, from its options (defaults without). */
static void
SimHashKeyLayoutFromOptions(FunctionCallInfo fcinfo, SimHashKeyLayout *layout)
{
	int			max_distance = NDD_SIMHASH_MAX_DISTANCE_DEFAULT;
	int			keys = SIMHASH_KEYS_PAIRS;

	if (PG_HAS_OPCLASS_OPTIONS())
	{
		SimHashGinOptions *options = (SimHashGinOptions *) PG_GET_OPCLASS_OPTIONS();

		max_distance = options->max_distance;
		keys = options->keys;
	}
	SimHashKeyLayoutInit(layout, max_distance, keys);
}

/* options(internal): simhash_ops(max_distance, keys) and their ranges */
PG_FUNCTION_INFO_V1(gin_simhash_options);
Datum
gin_simhash_options(PG_FUNCTION_ARGS)
{
	local_relopts *relopts = (local_relopts *) PG_GETARG_POINTER(0);

	init_local_reloptions(relopts, sizeof(SimHashGinOptions));
	add_local_int_reloption(relopts, "max_distance",
							"largest Hamming distance the index is laid out for",
							NDD_SIMHASH_MAX_DISTANCE_DEFAULT,
							NDD_SIMHASH_MAX_DISTANCE_MIN,
							NDD_SIMHASH_MAX_DISTANCE_MAX,
							offsetof(SimHashGinOptions, max_distance));
	add_local_enum_reloption(relopts, "keys",
							 "what a key is: a pair of blocks of one half, or one block",
							 simhash_gin_keys_values,
							 SIMHASH_KEYS_PAIRS,
							 "Valid values are \"pairs\" and \"blocks\".",
							 offsetof(SimHashGinOptions, keys));
	PG_RETURN_VOID();
}

/* gin_extract_value_simhash(simhash, internal nkeys, internal nullFlags) */
PG_FUNCTION_INFO_V1(gin_extract_value_simhash);
Datum
gin_extract_value_simhash(PG_FUNCTION_ARGS)
{
	SimHash		v = PG_GETARG_SIMHASH(0);
	int32	   *nkeys = (int32 *) PG_GETARG_POINTER(1);
	SimHashKeyLayout layout;

	SimHashKeyLayoutFromOptions(fcinfo, &layout);
	*nkeys = layout.nkeys;
	PG_RETURN_POINTER(SimHashKeys(&layout, v));
}

/*
 * gin_extract_query_simhash(query, nkeys, strategy, partial, extra_data,
 * nullFlags, searchMode): the query's keys, and in extra_data how many of
 * them a row must share at the current threshold.
 */
PG_FUNCTION_INFO_V1(gin_extract_query_simhash);
Datum
gin_extract_query_simhash(PG_FUNCTION_ARGS)
{
	int32	   *nkeys = (int32 *) PG_GETARG_POINTER(1);
	StrategyNumber strategy = PG_GETARG_UINT16(2);
	Pointer   **extra_data = (Pointer **) PG_GETARG_POINTER(4);
	int32	   *searchMode = (int32 *) PG_GETARG_POINTER(6);
	SimHashKeyLayout layout;
	int32	   *required;
	SimHash		q;
	int			max_distance;

	switch (strategy)
	{
		case NDD_SIMHASH_MATCH_STRATEGY:
			q = PG_GETARG_SIMHASH(0);
			max_distance = ndd_hamming_threshold;
			break;
		case NDD_SIMHASH_MATCH_QUERY_STRATEGY:
			if (!SimHashFromQuery(PG_GETARG_HEAPTUPLEHEADER(0), &q, &max_distance))
			{
				/* a NULL fingerprint or distance: no row, as in a scan */
				*nkeys = 0;
				*searchMode = GIN_SEARCH_MODE_DEFAULT;
				PG_RETURN_POINTER(NULL);
			}
			break;
		default:
			elog(ERROR, "unrecognized strategy number: %d", strategy);
	}
	SimHashKeyLayoutFromOptions(fcinfo, &layout);

	required = palloc(sizeof(int32));
	*required = SimHashRequiredKeys(&layout, max_distance);
	if (*required < 1)
	{
		/* no key need survive: every row is a candidate */
		*nkeys = 0;
		*searchMode = GIN_SEARCH_MODE_ALL;
		PG_RETURN_POINTER(NULL);
	}
	*extra_data = palloc(layout.nkeys * sizeof(Pointer));
	for (int i = 0; i < layout.nkeys; i++)
		(*extra_data)[i] = (Pointer) required;
	*nkeys = layout.nkeys;
	PG_RETURN_POINTER(SimHashKeys(&layout, q));
}

/* Keys a row must share with the query, from extract_query. */
static inline int32
RequiredFromExtraData(Pointer *extra_data, int32 nkeys)
{
	return nkeys > 0 ? *(int32 *) extra_data[0] : 0;
}

/*
 * gin_simhash_consistent(check, strategy, query, nkeys, extra_data, recheck,
 * queryKeys, nullFlags)
 */
PG_FUNCTION_INFO_V1(gin_simhash_consistent);
Datum
gin_simhash_consistent(PG_FUNCTION_ARGS)
{
	bool	   *check = (bool *) PG_GETARG_POINTER(0);
	int32		nkeys = PG_GETARG_INT32(3);
	Pointer    *extra_data = (Pointer *) PG_GETARG_POINTER(4);
	bool	   *recheck = (bool *) PG_GETARG_POINTER(5);
	int32		required = RequiredFromExtraData(extra_data, nkeys);
	int32		matched = 0;

	for (int i = 0; i < nkeys; i++)
		matched += check[i];

	/* every block lies in some key: all keys equal means equal fingerprints */
	*recheck = !(nkeys > 0 && matched == nkeys);
	PG_RETURN_BOOL(matched >= required);
}

/*
 * gin_simhash_triconsistent(check, strategy, query, nkeys, extra_data,
 * queryKeys, nullFlags)
 */
PG_FUNCTION_INFO_V1(gin_simhash_triconsistent);
Datum
gin_simhash_triconsistent(PG_FUNCTION_ARGS)
{
	GinTernaryValue *check = (GinTernaryValue *) PG_GETARG_POINTER(0);
	int32		nkeys = PG_GETARG_INT32(3);
	Pointer    *extra_data = (Pointer *) PG_GETARG_POINTER(4);
	int32		required = RequiredFromExtraData(extra_data, nkeys);
	int32		ntrue = 0;
	int32		nmaybe = 0;

	for (int i = 0; i < nkeys; i++)
	{
		if (check[i] == GIN_TRUE)
			ntrue++;
		else if (check[i] == GIN_MAYBE)
			nmaybe++;
	}
	if (ntrue + nmaybe < required)
		PG_RETURN_GIN_TERNARY_VALUE(GIN_FALSE);
	if (nkeys > 0 && ntrue == nkeys)
		PG_RETURN_GIN_TERNARY_VALUE(GIN_TRUE);
	PG_RETURN_GIN_TERNARY_VALUE(GIN_MAYBE);
}
