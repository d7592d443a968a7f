/*
 * simhash_gin.c
 *		GIN operator class for simhash % simhash: Hamming search with block
 *		keys (Manku, Jain and Das Sarma, 2007).
 *
 * Pigeonhole over blocks
 * ----------------------
 * Split the 64 bits into b blocks.  Two fingerprints within t bits differ
 * in at most t blocks, so they agree exactly on at least b - t of them.
 * Each block, tagged with its number, is a GIN key: a row within t bits of
 * the query shares at least b - t keys with it.  The consistent function
 * demands that many, and the recheck applies the exact distance, so an
 * index scan returns exactly what a sequential scan returns.
 *
 * The opclass option max_distance (k) fixes the split: b = k + 2 blocks,
 * so at the largest threshold a candidate must still match two blocks.
 * Demanding two matches is what makes short blocks affordable: a random
 * row shares one given block of 13 bits (k = 3) with probability 2^-13 but
 * two of the five with probability about 10 * 2^-26, so at 10M rows the
 * scan reads about 6,000 posting-list entries and visits almost no heap
 * rows that are not real matches.  Longer keys (one block per key with
 * b = k + 1) visit hundreds of rows per lookup; keys from pairs of blocks
 * make the index several times larger.  bench/simhash_split.sh measures
 * these, and README gives the figures.
 *
 * A threshold above k still works: at k + 1 one matching block is enough
 * (exact, but each lookup visits more rows); above that the scan reads the
 * whole index and rechecks every row.
 */
#include "postgres.h"

#include "access/gin.h"
#include "access/reloptions.h"
#include "access/stratnum.h"
#include "fmgr.h"

#include "ndd.h"
#include "simhash.h"

/* opclass options: simhash_ops(max_distance = k) */
typedef struct SimHashGinOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			max_distance;
} SimHashGinOptions;

/* The split of the 64 bits into blocks. */
typedef struct SimHashBlocks
{
	int			nblocks;
	int			shift[NDD_SIMHASH_MAX_DISTANCE_MAX + 2];
	uint64		mask[NDD_SIMHASH_MAX_DISTANCE_MAX + 2];
} SimHashBlocks;

/* Block i of b: nearly equal runs of bits, the longer ones first. */
static void
SimHashBlocksInit(SimHashBlocks *blocks, int max_distance)
{
	int			b = max_distance + 2;
	int			start = NDD_SIMHASH_BITS;

	blocks->nblocks = b;
	for (int i = 0; i < b; i++)
	{
		int			len = NDD_SIMHASH_BITS / b + (i < NDD_SIMHASH_BITS % b);

		start -= len;
		blocks->shift[i] = start;
		blocks->mask[i] = len == 64 ? ~UINT64CONST(0) : (UINT64CONST(1) << len) - 1;
	}
}

static void
SimHashBlocksFromOptions(FunctionCallInfo fcinfo, SimHashBlocks *blocks)
{
	int			max_distance = NDD_SIMHASH_MAX_DISTANCE_DEFAULT;

	if (PG_HAS_OPCLASS_OPTIONS())
		max_distance = ((SimHashGinOptions *) PG_GET_OPCLASS_OPTIONS())->max_distance;
	SimHashBlocksInit(blocks, max_distance);
}

/* The keys of a fingerprint: block number in the high bits, then the block. */
static Datum *
SimHashBlockKeys(const SimHashBlocks *blocks, SimHash v)
{
	Datum	   *keys = palloc(blocks->nblocks * sizeof(Datum));

	for (int i = 0; i < blocks->nblocks; i++)
		keys[i] = Int64GetDatum(((int64) i << 48) |
								(int64) ((v >> blocks->shift[i]) & blocks->mask[i]));
	return keys;
}

PG_FUNCTION_INFO_V1(gin_simhash_options);
Datum
gin_simhash_options(PG_FUNCTION_ARGS)
{
	local_relopts *relopts = (local_relopts *) PG_GETARG_POINTER(0);

	init_local_reloptions(relopts, sizeof(SimHashGinOptions));
	add_local_int_reloption(relopts, "max_distance",
							"largest Hamming distance the index serves efficiently",
							NDD_SIMHASH_MAX_DISTANCE_DEFAULT,
							NDD_SIMHASH_MAX_DISTANCE_MIN,
							NDD_SIMHASH_MAX_DISTANCE_MAX,
							offsetof(SimHashGinOptions, max_distance));
	PG_RETURN_VOID();
}

/* gin_extract_value_simhash(simhash, internal nkeys, internal nullFlags) */
PG_FUNCTION_INFO_V1(gin_extract_value_simhash);
Datum
gin_extract_value_simhash(PG_FUNCTION_ARGS)
{
	SimHash		v = PG_GETARG_SIMHASH(0);
	int32	   *nkeys = (int32 *) PG_GETARG_POINTER(1);
	SimHashBlocks blocks;

	SimHashBlocksFromOptions(fcinfo, &blocks);
	*nkeys = blocks.nblocks;
	PG_RETURN_POINTER(SimHashBlockKeys(&blocks, v));
}

/*
 * gin_extract_query_simhash(query, nkeys, strategy, partial, extra_data,
 * nullFlags, searchMode): the query's blocks, and in extra_data how many of
 * them a row must match at the current threshold.
 */
PG_FUNCTION_INFO_V1(gin_extract_query_simhash);
Datum
gin_extract_query_simhash(PG_FUNCTION_ARGS)
{
	SimHash		q = PG_GETARG_SIMHASH(0);
	int32	   *nkeys = (int32 *) PG_GETARG_POINTER(1);
	StrategyNumber strategy = PG_GETARG_UINT16(2);
	Pointer   **extra_data = (Pointer **) PG_GETARG_POINTER(4);
	int32	   *searchMode = (int32 *) PG_GETARG_POINTER(6);
	SimHashBlocks blocks;
	int32	   *required;

	if (strategy != NDD_SIMHASH_MATCH_STRATEGY)
		elog(ERROR, "unrecognized strategy number: %d", strategy);
	SimHashBlocksFromOptions(fcinfo, &blocks);

	if (ndd_hamming_threshold >= blocks.nblocks)
	{
		/* no block need agree: every row is a candidate */
		*nkeys = 0;
		*searchMode = GIN_SEARCH_MODE_ALL;
		PG_RETURN_POINTER(NULL);
	}

	required = palloc(sizeof(int32));
	*required = blocks.nblocks - ndd_hamming_threshold;
	*extra_data = palloc(blocks.nblocks * sizeof(Pointer));
	for (int i = 0; i < blocks.nblocks; i++)
		(*extra_data)[i] = (Pointer) required;
	*nkeys = blocks.nblocks;
	PG_RETURN_POINTER(SimHashBlockKeys(&blocks, q));
}

/* Blocks a row must share with the query, from extract_query. */
static inline int32
RequiredBlocks(Pointer *extra_data, int32 nkeys)
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
	int32		required = RequiredBlocks(extra_data, nkeys);
	int32		matched = 0;

	for (int i = 0; i < nkeys; i++)
		matched += check[i];

	/* all blocks equal means equal fingerprints: nothing to recheck */
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
	int32		required = RequiredBlocks(extra_data, nkeys);
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
