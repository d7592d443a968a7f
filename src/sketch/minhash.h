/*
 * minhash.h
 *		The minhash type: K 32-bit min-wise hash values and how they were made.
 */
#ifndef NDD_MINHASH_H
#define NDD_MINHASH_H

#include "access/htup.h"
#include "fmgr.h"
#include "port/pg_bitutils.h"

#define MINHASH_VERSION			1

/* What the hashed elements were. */
typedef enum MinHashSource
{
	MINHASH_SOURCE_WORD = 1,	/* word shingles of a text */
	MINHASH_SOURCE_CHAR = 2,	/* character shingles of a text */
	MINHASH_SOURCE_TEXT = 3,	/* elements of a text[] */
	MINHASH_SOURCE_BIGINT = 4,	/* elements of a bigint[] */
	/* weighted minhash (weighted_minhash.c): the same, each with a weight */
	MINHASH_SOURCE_WEIGHTED_WORD = 5,	/* word shingles, weighed by count */
	MINHASH_SOURCE_WEIGHTED_CHAR = 6,	/* character shingles, by count */
	MINHASH_SOURCE_WEIGHTED_TEXT = 7,	/* a text[] with a float8[] of weights */
	MINHASH_SOURCE_WEIGHTED_BIGINT = 8	/* a bigint[] with its weights */
} MinHashSource;

#define MINHASH_SOURCE_FIRST	MINHASH_SOURCE_WORD
#define MINHASH_SOURCE_LAST		MINHASH_SOURCE_WEIGHTED_BIGINT

/* Sketches of arrays have no shingles: their shingle_size is 1. */
static inline bool
MinHashSourceIsArray(int source)
{
	return source == MINHASH_SOURCE_TEXT || source == MINHASH_SOURCE_BIGINT ||
		source == MINHASH_SOURCE_WEIGHTED_TEXT || source == MINHASH_SOURCE_WEIGHTED_BIGINT;
}

/* Sketches of weighted sets hold float4 ranks (weighted_minhash.c). */
static inline bool
MinHashSourceIsWeighted(int source)
{
	return source >= MINHASH_SOURCE_WEIGHTED_WORD && source <= MINHASH_SOURCE_WEIGHTED_BIGINT;
}

/*
 * weighted_minhash.c: the weights a feature may have (0 leaves it out), and
 * how many rank bounds it tries, each double the last, before giving up.
 * They bound the ranks a weighted sketch can hold, which minhash_in checks.
 */
#define WEIGHTED_MINHASH_WEIGHT_MIN		1e-12
#define WEIGHTED_MINHASH_WEIGHT_MAX		1e15
#define WEIGHTED_MINHASH_MAX_ROUNDS		64

/* flags */
#define MINHASH_FLAG_EMPTY		0x01	/* made from no elements at all */
#define MINHASH_FLAG_FILLED		0x02	/* some positions were filled by
										 * densification; a bitmap follows */

/* a position that no element reached */
#define MINHASH_EMPTY_VALUE		PG_UINT32_MAX

typedef struct MinHash
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	uint8		version;
	uint8		source;			/* MinHashSource */
	uint8		shingle_size;	/* 1 for arrays */
	uint8		flags;
	uint16		num_perm;		/* K */
	uint16		unused;
	int32		seed;
	uint32		values[FLEXIBLE_ARRAY_MEMBER];	/* K values, then the filled
												 * bitmap if FLAG_FILLED */
} MinHash;

#define MINHASH_HEADER_SIZE		offsetof(MinHash, values)
#define MINHASH_BITMAP_WORDS(k) (((k) + 31) / 32)
#define MINHASH_SIZE(k, filled) \
	(MINHASH_HEADER_SIZE + sizeof(uint32) * ((k) + ((filled) ? MINHASH_BITMAP_WORDS(k) : 0)))
#define MINHASH_FILLED_BITMAP(mh)	((mh)->values + (mh)->num_perm)
#define MINHASH_IS_FILLED(mh, i) \
	(((mh)->flags & MINHASH_FLAG_FILLED) && \
	 (MINHASH_FILLED_BITMAP(mh)[(i) / 32] & ((uint32) 1 << ((i) % 32))))

#define DatumGetMinHashP(x)		((MinHash *) PG_DETOAST_DATUM(x))
#define PG_GETARG_MINHASH_P(n)	DatumGetMinHashP(PG_GETARG_DATUM(n))
#define PG_RETURN_MINHASH_P(x)	PG_RETURN_POINTER(x)

extern MinHash *MinHashFromRaw(const uint32 *raw, int num_perm, MinHashSource source,
							   int shingle_size, int32 seed);
extern const char *MinHashSourceName(int source);
extern int	MinHashSourceFromName(const char *name, size_t len);
extern char *MinHashSettingsString(int num_perm, int source, int shingle_size, int32 seed);
extern void MinHashCheckCompatible(const MinHash *a, const MinHash *b);
extern double MinHashSimilarity(const MinHash *a, const MinHash *b);
extern MinHash *MinHashFromQuery(HeapTupleHeader query, double *threshold);

/*
 * The low 2 bits of every position, 32 positions a word: codes that differ
 * mean values that differ (minhash_lowbits, discovery's cheap first test).
 */
#define MINHASH_LOWBITS_WORDS(k)	(((k) + 31) / 32)
extern void MinHashLowbits(const MinHash *mh, uint64 *words);

/* The 2-bit codes that differ between two words of low bits. */
static inline int
MinHashLowbitsDiffering(uint64 x, uint64 y)
{
	const uint64 low = UINT64CONST(0x5555555555555555);

	x ^= y;
	/* a code differs when either of its bits does */
	return pg_popcount64((x | (x >> 1)) & low);
}

/* darts per unit of area for K positions, of weighted sketches */
extern double WeightedMinHashIntensity(int k);

/* ndd.similarity_threshold, the threshold of %: registered by ndd.c */
extern double ndd_similarity_threshold;

#endif							/* NDD_MINHASH_H */
