/*
 * gin_enough_keys.h
 *		The consistent test of the GIN operator classes whose queries demand
 *		that a row match at least a number of their keys (minhash_ops: bands,
 *		containment_ops: shingles): extractQuery leaves that number in
 *		extra_data[0] (0 matches every row).
 */
#ifndef NDD_GIN_ENOUGH_KEYS_H
#define NDD_GIN_ENOUGH_KEYS_H

#include "access/gin.h"

/*
 * How many of check[0 .. n) are not 0 (false): eight at a time, as GIN calls
 * consistent once per candidate row and most candidates match one key.
 * Values are 0, 1 (true) and 2 (maybe): bits 0 or 1 of each byte.
 */
static inline int
CountNonZero(const uint8 *check, int n)
{
	const uint64 ones = UINT64CONST(0x0101010101010101);
	int			count = 0;
	int			i = 0;

	for (; i + 8 <= n; i += 8)
	{
		uint64		w;

		memcpy(&w, check + i, sizeof(w));
		/* one bit per byte, summed into the top byte by the multiply */
		count += (int) ((((w | (w >> 1)) & ones) * ones) >> 56);
	}
	for (; i < n; i++)
		count += (check[i] != 0);
	return count;
}

/* consistent(): do the keys present reach the number the query demands? */
static inline bool
GinEnoughKeys(const bool *check, int32 nkeys, Pointer *extra_data)
{
	int			required = nkeys > 0 ? *(int *) extra_data[0] : 0;

	StaticAssertStmt(sizeof(bool) == 1, "check[] must be one byte per key");
	return CountNonZero((const uint8 *) check, nkeys) >= required;
}

/* triConsistent(): could the keys present or maybe present reach it? */
static inline bool
GinMaybeEnoughKeys(const GinTernaryValue *check, int32 nkeys, Pointer *extra_data)
{
	int			required = nkeys > 0 ? *(int *) extra_data[0] : 0;

	StaticAssertStmt(sizeof(GinTernaryValue) == 1 && GIN_FALSE == 0,
					 "check[] must be one byte per key, 0 for false");
	return CountNonZero((const uint8 *) check, nkeys) >= required;
}

#endif							/* NDD_GIN_ENOUGH_KEYS_H */
