/*
 * minhash_agg.c
 *		minhash_union(): the sketch of the union of many sets.
 *
 * The minimum over a union is the minimum of the minima, so the union of
 * sketches is the element-wise minimum of their real bins (positions filled
 * by densification are left out), densified again.  The state is a sketch,
 * so the transition function is also the combine function: the aggregate
 * runs in parallel and on a distributed engine without serialisation.
 */
#include "postgres.h"

#include "fmgr.h"

#include "sketch/minhash.h"

/* The real bin i of a sketch, or MINHASH_EMPTY_VALUE. */
static inline uint32
RealBin(const MinHash *mh, int i)
{
	if ((mh->flags & MINHASH_FLAG_EMPTY) || MINHASH_IS_FILLED(mh, i))
		return MINHASH_EMPTY_VALUE;
	return mh->values[i];
}

/* minhash_union_transfn(a minhash, b minhash): the sketch of the union */
PG_FUNCTION_INFO_V1(minhash_union_transfn);
Datum
minhash_union_transfn(PG_FUNCTION_ARGS)
{
	MinHash    *a = PG_GETARG_MINHASH_P(0);
	MinHash    *b = PG_GETARG_MINHASH_P(1);
	int			k = a->num_perm;
	uint32	   *raw;

	MinHashCheckCompatible(a, b);
	raw = palloc(k * sizeof(uint32));
	for (int i = 0; i < k; i++)
		raw[i] = Min(RealBin(a, i), RealBin(b, i));
	PG_RETURN_MINHASH_P(MinHashFromRaw(raw, k, a->source, a->shingle_size, a->seed));
}
