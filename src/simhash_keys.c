/*
 * simhash_keys.c
 *		Block keys of simhash fingerprints, and the SQL helper simhash_keys().
 *
 * Split the 64 bits into blocks.  Two fingerprints within t bits differ in
 * at most t blocks and agree exactly on the others, so they share every key
 * made only of clean blocks.  The layouts (pairs and blocks) and their
 * trade-offs are described in simhash_gin.c.
 */
#include "postgres.h"

#include <limits.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"

#include "ndd.h"
#include "simhash.h"
#include "simhash_keys.h"

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
