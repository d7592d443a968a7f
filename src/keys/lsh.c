/*
 * lsh.c
 *		Locality-sensitive hashing over minhash sketches: band keys, the
 *		exactness bound, and the SQL helpers minhash_bands(), minhash_band_keys(),
 *		lsh_probability() and lsh_params().
 *
 * Banding splits the first b*r positions of a sketch into b bands of r rows;
 * a band key hashes the band number, the sketch's settings and the band's r
 * values.  Two sketches that agree on a whole band share its key.
 *
 * Pigeonhole makes banded search exact.  A pair with similarity at least t
 * agrees on at least m = LshMinAgreeing(K, t) of the K positions, so at most
 * K - m positions differ, and each difference breaks at most one band: at
 * least b - (K - m) bands still agree.  An index that demands that many
 * matching keys (LshRequiredBands) therefore misses no pair that % would
 * accept, as long as the demand is at least 1.  Below that it can only fall
 * back to classic LSH, "any band agrees", whose recall is the S-curve
 * 1 - (1 - s^r)^b.
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"

#include "base/hash.h"
#include "base/ndd_limits.h"
#include "keys/bucket_keys.h"
#include "keys/lsh.h"
#include "sketch/minhash.h"

/*
 * The 64-bit key of one band: its r values hashed with a seed that mixes the
 * band number with the sketch's settings, so keys of different bands or of
 * sketches made differently do not meet.
 */
uint64
LshBandHash(const MinHash *mh, int band, int rows)
{
	uint64		seed = NddHashMix(((uint64) (uint32) band << 32) |
								  ((uint64) mh->num_perm << 16) |
								  ((uint64) mh->source << 8) | mh->shingle_size) ^
		NddHashMix((uint64) (uint32) mh->seed);

	return NddHashBytes(mh->values + band * rows, rows * sizeof(uint32), seed);
}

/*
 * The fewest agreeing positions m for which m / K >= threshold, computed with
 * the same floating-point expression similarity() and % use.
 */
int
LshMinAgreeing(int num_perm, double threshold)
{
	int			m = (int) ceil(threshold * num_perm);

	m = Max(0, Min(m, num_perm));
	while (m > 0 && (double) (m - 1) / num_perm >= threshold)
		m--;
	while (m <= num_perm && (double) m / num_perm < threshold)
		m++;
	return m;					/* num_perm + 1 if no m qualifies */
}

/*
 * Matching band keys every pair with similarity >= threshold is sure to
 * have.  Zero or less means banding cannot be exact at this threshold.
 */
int
LshRequiredBands(int num_perm, int bands, int rows, double threshold)
{
	int			differing = num_perm - LshMinAgreeing(num_perm, threshold);

	/* differences outside the banded positions break no band */
	differing = Min(differing, bands * rows);
	return bands - Max(differing, 0);
}

/*
 * The banding that is exact down to threshold with the longest bands: the
 * largest r whose b = K / r bands still satisfy the pigeonhole bound.
 */
void
LshBandingForThreshold(int num_perm, double threshold, int *bands, int *rows)
{
	int			needed = num_perm - LshMinAgreeing(num_perm, threshold) + 1;
	int			r = 1;

	while (r < num_perm && num_perm / (r + 1) >= needed)
		r++;
	*rows = r;
	*bands = num_perm / r;
}

/*
 * The threshold margin standard deviations of the estimate, sqrt(t(1-t)/K),
 * below threshold: where candidates for exact verification start.
 */
double
LshMarginThreshold(int num_perm, double threshold, double margin)
{
	return Max(threshold - margin * sqrt(threshold * (1.0 - threshold) / num_perm),
			   1.0 / num_perm);
}

/*
 * lsh_banding(sketch, threshold, margin): the banding exact at threshold
 * minus margin standard deviations of the estimate, for sketches like this
 * one, and the matching bands a pair at least that similar is sure to have.
 */
PG_FUNCTION_INFO_V1(lsh_banding);
Datum
lsh_banding(PG_FUNCTION_ARGS)
{
	MinHash    *mh = PG_GETARG_MINHASH_P(0);
	double		threshold = PG_GETARG_FLOAT8(1);
	double		margin = PG_GETARG_FLOAT8(2);
	int			k = mh->num_perm;
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	int			bands,
				rows;
	double		lower;

	NddCheckThreshold(threshold);
	if (isnan(margin) || margin < 0.0 || isinf(margin))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("margin must be finite and not negative")));
	lower = LshMarginThreshold(k, threshold, margin);
	LshBandingForThreshold(k, lower, &bands, &rows);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = Int32GetDatum(bands);
	values[1] = Int32GetDatum(rows);
	values[2] = Int32GetDatum(LshRequiredBands(k, bands, rows, lower));
	values[3] = Float8GetDatum(lower);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}

/* minhash_bands(sketch, bands, rows): (band, key) for a bucket table */
PG_FUNCTION_INFO_V1(minhash_bands);
Datum
minhash_bands(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MinHash    *mh = PG_GETARG_MINHASH_P(0);
	int32		bands = PG_GETARG_INT32(1);
	int32		rows = PG_GETARG_INT32(2);

	LshCheckBanding(mh->num_perm, bands, rows);
	InitMaterializedSRF(fcinfo, 0);
	for (int b = 0; b < bands; b++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};

		values[0] = Int32GetDatum(b);
		values[1] = Int64GetDatum((int64) LshBandHash(mh, b, rows));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* minhash_band_keys(sketch, bands, rows): the band keys as one array */
PG_FUNCTION_INFO_V1(minhash_band_keys);
Datum
minhash_band_keys(PG_FUNCTION_ARGS)
{
	MinHash    *mh = PG_GETARG_MINHASH_P(0);
	int32		bands = PG_GETARG_INT32(1);
	int32		rows = PG_GETARG_INT32(2);
	Datum	   *keys;

	LshCheckBanding(mh->num_perm, bands, rows);
	/* an empty document is similar to nothing: it has no keys to share */
	if (mh->flags & MINHASH_FLAG_EMPTY)
		bands = 0;
	keys = palloc(Max(bands, 1) * sizeof(Datum));
	for (int b = 0; b < bands; b++)
		keys[b] = Int64GetDatum((int64) LshBandHash(mh, b, rows));
	PG_RETURN_ARRAYTYPE_P(construct_array(keys, bands, INT8OID, sizeof(int64), true, TYPALIGN_DOUBLE));
}

/* Error out unless 0 <= s <= 1: a similarity, not a threshold. */
static void
CheckSimilarity(double s)
{
	if (isnan(s) || s < 0.0 || s > 1.0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("similarity must be between 0 and 1")));
}

/* Probability that a pair of similarity s shares at least one band. */
static double
SCurve(double s, int bands, int rows)
{
	return 1.0 - pow(1.0 - pow(s, rows), bands);
}

/* lsh_probability(similarity, bands, rows) = 1 - (1 - s^r)^b */
PG_FUNCTION_INFO_V1(lsh_probability);
Datum
lsh_probability(PG_FUNCTION_ARGS)
{
	double		s = PG_GETARG_FLOAT8(0);
	int32		bands = PG_GETARG_INT32(1);
	int32		rows = PG_GETARG_INT32(2);

	CheckSimilarity(s);
	LshCheckBandsRows(bands, rows);
	PG_RETURN_FLOAT8(SCurve(s, bands, rows));
}

/* Simpson's rule with an even number of intervals. */
static double
Integrate(double from, double to, int bands, int rows, bool missed)
{
	const int	n = 200;
	double		h = (to - from) / n;
	double		sum = 0.0;

	for (int i = 0; i <= n; i++)
	{
		double		p = SCurve(from + i * h, bands, rows);
		double		f = missed ? 1.0 - p : p;

		sum += f * (i == 0 || i == n ? 1 : (i % 2 ? 4 : 2));
	}
	return sum * h / 3.0;
}

/*
 * lsh_params(threshold, num_perm, false_positive_weight, false_negative_weight):
 * the banding that minimises the weighted areas under the S-curve below the
 * threshold (false positives) and above it (false negatives).
 */
PG_FUNCTION_INFO_V1(lsh_params);
Datum
lsh_params(PG_FUNCTION_ARGS)
{
	double		threshold = PG_GETARG_FLOAT8(0);
	int32		num_perm = PG_GETARG_INT32(1);
	double		fp_weight = PG_GETARG_FLOAT8(2);
	double		fn_weight = PG_GETARG_FLOAT8(3);
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	double		best = get_float8_infinity();
	int			best_b = 1,
				best_r = 1;
	double		best_fp = 0,
				best_fn = 0;

	NddCheckThreshold(threshold);
	NddCheckNumPerm(num_perm);
	if (isnan(fp_weight) || isnan(fn_weight) || fp_weight < 0 || fn_weight < 0 ||
		fp_weight + fn_weight <= 0 || isinf(fp_weight) || isinf(fn_weight))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("weights must be finite, not negative, and not both zero")));

	for (int b = 1; b <= num_perm; b++)
	{
		CHECK_FOR_INTERRUPTS();
		for (int r = 1; b * r <= num_perm; r++)
		{
			double		fp = Integrate(0.0, threshold, b, r, false);
			double		fn = Integrate(threshold, 1.0, b, r, true);
			double		err = fp * fp_weight + fn * fn_weight;

			if (err < best)
			{
				best = err;
				best_b = b;
				best_r = r;
				best_fp = fp;
				best_fn = fn;
			}
		}
	}

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = Int32GetDatum(best_b);
	values[1] = Int32GetDatum(best_r);
	values[2] = Float8GetDatum(best_fp);
	values[3] = Float8GetDatum(best_fn);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}

/* ---------------------------------------------------------------------
 * The discovery engine's bucket keys (bucket_keys.h): the band keys as
 * minhash_band_keys makes them, the low bits as minhash_lowbits, the test
 * of minhash_lowbits_agreement and the score of similarity().
 * ---------------------------------------------------------------------
 */

static int
MinhashBucketKeys(const BucketKeys *bk, Datum sketch, uint64 *keys, uint64 *summary)
{
	MinHash    *mh = DatumGetMinHashP(sketch);
	int			n = bk->bands;

	LshCheckBanding(mh->num_perm, bk->bands, bk->rows);
	/* an empty document is similar to nothing: it has no keys to share */
	if (mh->flags & MINHASH_FLAG_EMPTY)
		n = 0;
	for (int b = 0; keys != NULL && b < n; b++)
		keys[b] = LshBandHash(mh, b, bk->rows);
	if (summary != NULL)
		MinHashLowbits(mh, summary);
	if ((Pointer) mh != DatumGetPointer(sketch))
		pfree(mh);
	return n;
}

static bool
MinhashCloseEnough(const BucketKeys *bk, const uint64 *x, const uint64 *y)
{
	int			differing = 0;

	for (int w = 0; w < bk->summary_words; w++)
		differing += MinHashLowbitsDiffering(x[w], y[w]);
	return bk->summary_words * 32 - differing >= bk->min_agreement;
}

static bool
MinhashScore(const BucketKeys *bk, Datum a, Datum b,
			 double *similarity, int32 *distance, bool *distance_null)
{
	*similarity = MinHashSimilarity(DatumGetMinHashP(a), DatumGetMinHashP(b));
	*distance = 0;
	*distance_null = true;
	return *similarity >= bk->lower;
}

void
BucketKeysMinhash(BucketKeys *bk, int num_perm, int bands, int rows, int required, double lower)
{
	memset(bk, 0, sizeof(BucketKeys));
	bk->max_keys = bands;
	bk->summary_words = MINHASH_LOWBITS_WORDS(num_perm);
	bk->keys = MinhashBucketKeys;
	bk->close_enough = MinhashCloseEnough;
	bk->score = MinhashScore;
	bk->bands = bands;
	bk->rows = rows;
	/* a pair sharing `required` bands agrees on all but bands - required rows */
	bk->min_agreement = bands * rows - bands + required;
	bk->lower = lower;
}
