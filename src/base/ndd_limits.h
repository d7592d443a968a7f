/*
 * ndd_limits.h
 *		Limits and defaults shared by every layer of ndd, and the checks of
 *		the arguments they limit.  It includes nothing of ndd, so that any
 *		file may include it; the settings (GUCs) belong to the files that
 *		read them and are registered by ndd.c.
 */
#ifndef NDD_LIMITS_H
#define NDD_LIMITS_H

#include "utils/array.h"

/* PostgreSQL 16 moved the varlena macros (VARDATA, SET_VARSIZE...) here */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/* minhash sketch length (K, the number of min-wise hash positions) */
#define NDD_NUM_PERM_DEFAULT		128
#define NDD_NUM_PERM_MIN			16
#define NDD_NUM_PERM_MAX			1024

/* tokens per shingle */
#define NDD_SHINGLE_SIZE_DEFAULT	5
#define NDD_SHINGLE_SIZE_MIN		1
#define NDD_SHINGLE_SIZE_MAX		32

/* threshold of minhash's % operator */
#define NDD_SIMILARITY_THRESHOLD_DEFAULT	0.8

/* minhash GIN operator class: strategies and options */
#define NDD_MINHASH_SIMILAR_STRATEGY		1	/* minhash % minhash */
#define NDD_MINHASH_SIMILAR_QUERY_STRATEGY	2	/* minhash % minhash_query */
#define NDD_GIN_KEY_BITS_DEFAULT	13
#define NDD_GIN_KEY_BITS_MIN		4
#define NDD_GIN_KEY_BITS_MAX		20

/* simhash: threshold of the % operator (Hamming distance in bits) */
#define NDD_SIMHASH_BITS					64
#define NDD_HAMMING_THRESHOLD_DEFAULT		3
#define NDD_HAMMING_THRESHOLD_MIN			0
#define NDD_HAMMING_THRESHOLD_MAX			64

/* simhash GIN and GiST operator classes */
#define NDD_SIMHASH_MAX_DISTANCE_DEFAULT	3
#define NDD_SIMHASH_MAX_DISTANCE_MIN		0
#define NDD_SIMHASH_MAX_DISTANCE_MAX		6
#define NDD_SIMHASH_MATCH_STRATEGY			1	/* simhash % simhash */
#define NDD_SIMHASH_DISTANCE_STRATEGY		2	/* simhash <-> simhash */
#define NDD_SIMHASH_MATCH_QUERY_STRATEGY	3	/* simhash % simhash_query */

/*
 * Argument checks, one per rule, as pgvector's CheckDim: every function that
 * takes a threshold, a num_perm, a distance or an array of elements rejects
 * a bad one in the same words.  Out of range is INVALID_PARAMETER_VALUE.
 */

/* Error out unless 0 < threshold <= 1 (NaN is out of range too). */
static inline void
NddCheckThreshold(double threshold)
{
	if (!(threshold > 0.0 && threshold <= 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("threshold must be greater than 0 and at most 1")));
}

/* Is num_perm a sketch length ndd supports? */
static inline bool
NddNumPermIsValid(int num_perm)
{
	return num_perm >= NDD_NUM_PERM_MIN && num_perm <= NDD_NUM_PERM_MAX;
}

/* Error out unless num_perm is a sketch length ndd supports. */
static inline void
NddCheckNumPerm(int num_perm)
{
	if (!NddNumPermIsValid(num_perm))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("num_perm %d is out of range", num_perm),
				 errdetail("num_perm must be between %d and %d.",
						   NDD_NUM_PERM_MIN, NDD_NUM_PERM_MAX)));
}

/*
 * Error out unless an index, block keys or the trigger can be laid out for
 * this Hamming distance (ndd.hamming_threshold's own, wider range is checked
 * by the GUC machinery).
 */
static inline void
NddCheckMaxDistance(int max_distance)
{
	if (max_distance < NDD_SIMHASH_MAX_DISTANCE_MIN ||
		max_distance > NDD_SIMHASH_MAX_DISTANCE_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_distance %d is out of range", max_distance),
				 errdetail("max_distance must be between %d and %d.",
						   NDD_SIMHASH_MAX_DISTANCE_MIN, NDD_SIMHASH_MAX_DISTANCE_MAX)));
}

/*
 * Error out if the array argument argname holds a NULL: a NULL element has
 * no hash, and no key.
 */
static inline void
NddCheckNoNulls(ArrayType *arr, const char *argname)
{
	if (array_contains_nulls(arr))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("array must not contain nulls"),
				 errdetail("Argument \"%s\" has a null element.", argname)));
}

/*
 * Error out unless the array argument argname has at most one dimension:
 * features and weights pair up by position, which a matrix does not define.
 */
static inline void
NddCheckOneDimension(ArrayType *arr, const char *argname)
{
	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("features and weights must be one-dimensional arrays"),
				 errdetail("\"%s\" has %d dimensions.", argname, ARR_NDIM(arr))));
}

#endif							/* NDD_LIMITS_H */
