/*
 * supershingle.c
 *		Broder's super-shingles over minhash sketches: minhash_supershingles(),
 *		supershingles_shared() and their S-curve supershingle_probability().
 *
 * Super-shingles
 * --------------
 * Broder (1997, "On the resemblance and containment of documents", and the
 * AltaVista clustering with Glassman, Manasse and Zweig) kept 84 min-wise
 * values per document and hashed them, in 6 groups of 14 consecutive ones,
 * into 6 "super-shingles"; two documents that share at least 2 of them are
 * near-duplicates.  A group agrees when all its positions do, so with
 * positions agreeing independently with probability s (the resemblance), a
 * pair of resemblance s shares each super-shingle with probability p = s^r
 * and shares at least n of g of them with probability
 *
 *		P(s) = sum_{j=n..g} C(g, j) p^j (1 - p)^(g - j)
 *
 * a steeper S-curve than "any band agrees" (lsh_probability), since a single
 * accidental group match is not enough.
 *
 * With a sketch of K positions and g groups, group i (0-based) covers
 * positions i*r .. i*r + r - 1 with r = floor(K / g); the last K - g*r
 * positions are not used (K = 128, g = 6: 21 positions each, 0 .. 125).
 * A super-shingle hashes the group number, r, the sketch's settings and the
 * group's r values, seeded like every ndd key, so super-shingles of different
 * groups, of different group sizes or of sketches made differently never
 * meet.  They are bigint[] elements: GIN's built-in array_ops finds rows
 * sharing one (&&), and supershingles_shared() counts them for the "at least
 * n" test.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "base/hash.h"
#include "base/ndd_limits.h"
#include "sketch/minhash.h"

/* Separates super-shingle keys from band keys and every other ndd hash. */
#define SUPERSHINGLE_DOMAIN		UINT64CONST(0x5375706572536831)	/* "SuperSh1" */

/* The 64-bit super-shingle of group `group` of `rows` positions. */
static uint64
SupershingleHash(const MinHash *mh, int group, int rows)
{
	uint64		seed = NddHashMix(SUPERSHINGLE_DOMAIN ^
								  ((uint64) (uint32) group << 32) ^
								  ((uint64) (uint32) rows << 16)) ^
		NddHashMix(((uint64) mh->num_perm << 16) |
				   ((uint64) mh->source << 8) | mh->shingle_size) ^
		NddHashMix((uint64) (uint32) mh->seed);

	return NddHashBytes(mh->values + group * rows, rows * sizeof(uint32), seed);
}

/* Error out unless 1 <= groups <= num_perm. */
static void
CheckGroups(int groups, int num_perm)
{
	if (groups < 1 || groups > num_perm)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("groups %d is out of range", groups),
				 errdetail("groups must be between 1 and the sketch's num_perm, %d.",
						   num_perm)));
}

/* minhash_supershingles(sketch, groups): one bigint per group, group 0 first */
PG_FUNCTION_INFO_V1(minhash_supershingles);
Datum
minhash_supershingles(PG_FUNCTION_ARGS)
{
	MinHash    *mh = PG_GETARG_MINHASH_P(0);
	int32		groups = PG_GETARG_INT32(1);
	int			rows;
	Datum	   *keys;

	CheckGroups(groups, mh->num_perm);
	rows = mh->num_perm / groups;
	/* an empty document is similar to nothing: it has nothing to share */
	if (mh->flags & MINHASH_FLAG_EMPTY)
		groups = 0;
	keys = palloc(Max(groups, 1) * sizeof(Datum));
	for (int g = 0; g < groups; g++)
		keys[g] = Int64GetDatum((int64) SupershingleHash(mh, g, rows));
	PG_RETURN_ARRAYTYPE_P(construct_array(keys, groups, INT8OID, sizeof(int64),
										  true, TYPALIGN_DOUBLE));
}

/* qsort comparator of int64 */
static int
CompareInt64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return (x > y) - (x < y);
}

/* The elements of a bigint[] with no NULL, sorted; *n gets their number. */
static int64 *
SortedElements(ArrayType *arr, const char *argname, int *n)
{
	int64	   *v;

	if (ARR_ELEMTYPE(arr) != INT8OID)
		elog(ERROR, "expected a bigint array");
	NddCheckNoNulls(arr, argname);
	*n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	v = palloc(Max(*n, 1) * sizeof(int64));
	memcpy(v, ARR_DATA_PTR(arr), *n * sizeof(int64));
	qsort(v, *n, sizeof(int64), CompareInt64);
	return v;
}

/* supershingles_shared(a, b): the distinct values present in both arrays */
PG_FUNCTION_INFO_V1(supershingles_shared);
Datum
supershingles_shared(PG_FUNCTION_ARGS)
{
	ArrayType  *a = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *b = PG_GETARG_ARRAYTYPE_P(1);
	int			na,
				nb,
				i = 0,
				j = 0,
				shared = 0;
	int64	   *x = SortedElements(a, "a", &na);
	int64	   *y = SortedElements(b, "b", &nb);

	while (i < na && j < nb)
	{
		if (x[i] < y[j])
			i++;
		else if (x[i] > y[j])
			j++;
		else
		{
			int64		v = x[i];

			shared++;
			while (i < na && x[i] == v)
				i++;
			while (j < nb && y[j] == v)
				j++;
		}
	}
	PG_RETURN_INT32(shared);
}

/*
 * P(at least n of g groups agree) when each agrees independently with
 * probability p: the binomial upper tail, summed in log space so that
 * C(g, j) cannot overflow for g up to NDD_NUM_PERM_MAX.
 */
static double
BinomialUpperTail(int g, int n, double p)
{
	double		sum = 0.0;

	if (p <= 0.0)
		return 0.0;
	if (p >= 1.0)
		return 1.0;
	for (int j = n; j <= g; j++)
		sum += exp(lgamma(g + 1.0) - lgamma(j + 1.0) - lgamma(g - j + 1.0) +
				   j * log(p) + (g - j) * log1p(-p));
	return Min(sum, 1.0);
}

/*
 * supershingle_probability(similarity, groups, per_group, at_least):
 * sum_{j >= at_least} C(g, j) p^j (1 - p)^(g - j), p = s^per_group
 */
PG_FUNCTION_INFO_V1(supershingle_probability);
Datum
supershingle_probability(PG_FUNCTION_ARGS)
{
	double		s = PG_GETARG_FLOAT8(0);
	int32		groups = PG_GETARG_INT32(1);
	int32		per_group = PG_GETARG_INT32(2);
	int32		at_least = PG_GETARG_INT32(3);

	if (isnan(s) || s < 0.0 || s > 1.0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("similarity must be between 0 and 1")));
	if (groups < 1 || per_group < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("groups and per_group must be positive, not %d and %d",
						groups, per_group)));
	if ((int64) groups * per_group > NDD_NUM_PERM_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%d groups of %d positions need %lld positions, more than a sketch has",
						groups, per_group, (long long) groups * per_group),
				 errdetail("num_perm is at most %d.", NDD_NUM_PERM_MAX)));
	if (at_least < 1 || at_least > groups)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("at_least %d is out of range", at_least),
				 errdetail("at_least must be between 1 and groups, %d.", groups)));
	PG_RETURN_FLOAT8(BinomialUpperTail(groups, at_least, pow(s, per_group)));
}
