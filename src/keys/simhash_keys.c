/*
 * simhash_keys.c
 *		Block keys of simhash fingerprints, how many of them two fingerprints
 *		within t bits are sure to share, and the SQL helper simhash_keys().
 *		The GIN operator class, all-pairs discovery and the insert guard all
 *		find near fingerprints through these keys.
 *
 * Pigeonhole over blocks
 * ----------------------
 * Split the 64 bits into blocks.  Two fingerprints within t bits differ in
 * at most t blocks and agree exactly on the others.  A key is made of one or
 * two blocks (tagged with the key's number), so two fingerprints within t
 * bits share every key whose blocks escaped the t differences, and at least
 * as many as the worst placement of t differences leaves
 * (SimHashRequiredKeys).
 *
 * Two layouts, for a largest distance k (max_distance):
 *
 *	pairs (default): two halves of 32 bits, each split into k/2 + 2 blocks;
 *	  a key is a pair of blocks of one half.  k differences leave one half
 *	  with at most k/2, hence two clean blocks there: one shared key.  At
 *	  k = 3: 6 blocks of 10-11 bits, 6 keys of 21-22 bits per row.
 *	blocks: k + 2 blocks, each block a key; two fingerprints within k bits
 *	  share two.  At k = 3: 5 blocks of 12-13 bits, 5 keys per row.
 *
 * Above k the bound stays positive while some key must survive the
 * differences (one more bit for blocks; with pairs, until a difference may
 * fall into every pair); beyond that it is zero and the keys promise
 * nothing.  simhash_gin.c weighs the two layouts for an index.
 */
#include "postgres.h"

#include <limits.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"

#include "base/ndd_limits.h"
#include "keys/bucket_keys.h"
#include "keys/simhash_keys.h"
#include "sketch/simhash.h"

/* Lay out the blocks and keys for max_distance in the given layout. */
void
SimHashKeyLayoutInit(SimHashKeyLayout *layout, int max_distance, int keys)
{
	int			group_bits;
	int			b = 0;

	if (keys == SIMHASH_KEYS_BLOCKS)
	{
		layout->ngroups = 1;
		layout->group_blocks = max_distance + 2;
		layout->key_blocks = 1;
	}
	else
	{
		layout->ngroups = 2;
		layout->group_blocks = max_distance / 2 + 2;
		layout->key_blocks = 2;
	}
	group_bits = NDD_SIMHASH_BITS / layout->ngroups;
	layout->nkeys = 0;

	/* blocks of nearly equal length, from the most significant bit down */
	for (int g = 0; g < layout->ngroups; g++)
	{
		int			first = b;
		int			start = NDD_SIMHASH_BITS - g * group_bits;

		for (int j = 0; j < layout->group_blocks; j++, b++)
		{
			layout->len[b] = group_bits / layout->group_blocks +
				(j < group_bits % layout->group_blocks);
			start -= layout->len[b];
			layout->shift[b] = start;
		}
		for (int i = first; i < b; i++)
		{
			if (layout->key_blocks == 1)
			{
				layout->key[layout->nkeys][0] = i;
				layout->key[layout->nkeys++][1] = -1;
			}
			else
				for (int j = i + 1; j < b; j++)
				{
					layout->key[layout->nkeys][0] = i;
					layout->key[layout->nkeys++][1] = j;
				}
		}
	}
}

/* The value of block b of a fingerprint. */
static inline uint64
Block(const SimHashKeyLayout *layout, int b, SimHash v)
{
	return (v >> layout->shift[b]) & ((UINT64CONST(1) << layout->len[b]) - 1);
}

/* The keys of a fingerprint: key number in the high bits, then its blocks. */
Datum *
SimHashKeys(const SimHashKeyLayout *layout, SimHash v)
{
	Datum	   *keys = palloc(layout->nkeys * sizeof(Datum));

	for (int k = 0; k < layout->nkeys; k++)
	{
		int			b1 = layout->key[k][0];
		int			b2 = layout->key[k][1];
		uint64		value = Block(layout, b1, v);

		if (b2 >= 0)
			value = (value << layout->len[b2]) | Block(layout, b2, v);
		keys[k] = Int64GetDatum(((int64) k << 48) | (int64) value);
	}
	return keys;
}

/* Keys of a group left whole when e of its blocks hold a difference. */
static int
CleanKeys(const SimHashKeyLayout *layout, int e)
{
	int			clean = layout->group_blocks - e;

	if (clean < layout->key_blocks)
		return 0;
	return layout->key_blocks == 1 ? clean : clean * (clean - 1) / 2;
}

/*
 * Keys a row within t bits of the query shares with it at least: the
 * minimum over the ways t differences can fall, each in its own block.
 */
int
SimHashRequiredKeys(const SimHashKeyLayout *layout, int t)
{
	int			m = layout->group_blocks;
	int			required = INT_MAX;

	if (layout->ngroups == 1)
		return CleanKeys(layout, Min(t, m));
	for (int e1 = Max(0, t - m); e1 <= Min(t, m); e1++)
		required = Min(required, CleanKeys(layout, e1) + CleanKeys(layout, t - e1));
	return required == INT_MAX ? 0 : required;
}

/*
 * simhash_keys(fingerprint, max_distance): the keys (pairs layout) of which
 * two fingerprints within max_distance bits share at least one.
 */
PG_FUNCTION_INFO_V1(simhash_keys);
Datum
simhash_keys(PG_FUNCTION_ARGS)
{
	SimHash		v = PG_GETARG_SIMHASH(0);
	int32		max_distance = PG_GETARG_INT32(1);
	SimHashKeyLayout layout;

	NddCheckMaxDistance(max_distance);
	SimHashKeyLayoutInit(&layout, max_distance, SIMHASH_KEYS_PAIRS);
	Assert(SimHashRequiredKeys(&layout, max_distance) >= 1);
	PG_RETURN_ARRAYTYPE_P(construct_array(SimHashKeys(&layout, v), layout.nkeys, INT8OID,
										  sizeof(int64), true, TYPALIGN_DOUBLE));
}

/* ---------------------------------------------------------------------
 * The discovery engine's bucket keys (bucket_keys.h): the keys of
 * simhash_keys(), the fingerprint as its own summary, the distance as
 * hamming_distance() and simhash_cosine() report it.
 * ---------------------------------------------------------------------
 */

static int
SimhashBucketKeys(const BucketKeys *bk, Datum sketch, uint64 *keys, uint64 *summary)
{
	SimHash		v = DatumGetSimHash(sketch);

	if (summary != NULL)
		summary[0] = v;
	if (keys != NULL)
	{
		Datum	   *made = SimHashKeys(&bk->layout, v);

		for (int k = 0; k < bk->layout.nkeys; k++)
			keys[k] = (uint64) DatumGetInt64(made[k]);
		pfree(made);
	}
	return bk->layout.nkeys;
}

static bool
SimhashCloseEnough(const BucketKeys *bk, const uint64 *x, const uint64 *y)
{
	return SimHashDistance(x[0], y[0]) <= bk->max_distance;
}

static bool
SimhashScore(const BucketKeys *bk, Datum a, Datum b,
			 double *similarity, int32 *distance, bool *distance_null)
{
	*distance = SimHashDistance(DatumGetSimHash(a), DatumGetSimHash(b));
	*distance_null = false;
	*similarity = SimHashCosine(*distance);
	return *distance <= bk->max_distance;
}

void
BucketKeysSimhash(BucketKeys *bk, int max_distance)
{
	memset(bk, 0, sizeof(BucketKeys));
	NddCheckMaxDistance(max_distance);
	SimHashKeyLayoutInit(&bk->layout, max_distance, SIMHASH_KEYS_PAIRS);
	bk->max_keys = bk->layout.nkeys;
	bk->summary_words = 1;
	bk->keys = SimhashBucketKeys;
	bk->close_enough = SimhashCloseEnough;
	bk->score = SimhashScore;
	bk->max_distance = max_distance;
}
