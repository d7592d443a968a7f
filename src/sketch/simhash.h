/*
 * simhash.h
 *		The simhash type: a 64-bit fingerprint (Charikar), passed by value.
 */
#ifndef NDD_SIMHASH_H
#define NDD_SIMHASH_H

#include "access/htup.h"
#include "fmgr.h"
#include "port/pg_bitutils.h"

/* simhash is declared PASSEDBYVALUE with INTERNALLENGTH 8 */
#ifndef USE_FLOAT8_BYVAL
#error "the simhash type needs 64-bit Datums passed by value"
#endif

typedef uint64 SimHash;

#define SIMHASH_SIZE				sizeof(SimHash)

#define DatumGetSimHash(x)			((SimHash) DatumGetUInt64(x))
#define SimHashGetDatum(x)			UInt64GetDatum(x)
#define PG_GETARG_SIMHASH(n)		DatumGetSimHash(PG_GETARG_DATUM(n))
#define PG_RETURN_SIMHASH(x)		return SimHashGetDatum(x)

/* Hamming distance between two fingerprints. */
static inline int
SimHashDistance(SimHash a, SimHash b)
{
	return pg_popcount64(a ^ b);
}

/* Charikar's estimate of the cosine similarity: cos(pi * d / 64) */
extern double SimHashCosine(int d);

/* the fingerprint and distance of a simhash_query; false if one is NULL */
extern bool SimHashFromQuery(HeapTupleHeader query, SimHash *fingerprint, int *max_distance);

/* ndd.hamming_threshold, the distance of %: registered by ndd.c */
extern int	ndd_hamming_threshold;

#endif							/* NDD_SIMHASH_H */
