/*
 * weighted_minhash.c
 *		Weighted minhash: sketches of weighted sets (a document's term
 *		counts, tf-idf vectors, quantities in a basket) whose agreeing
 *		positions estimate the weighted Jaccard similarity
 *		sum(min(a_i, b_i)) / sum(max(a_i, b_i)); and that similarity exactly.
 *
 * A weighted sketch is a minhash (minhash.h) whose source says "weighted":
 * similarity(), %, <->, minhash_ops indexes, discovery, top-k and the guard
 * take it as they take any minhash, and refuse to compare it with a sketch
 * made another way.
 *
 * Darts under the weights
 * -----------------------
 * Draw feature i as a strip of the plane: weight x along one axis
 * (0 <= x < w_i), rank r along the other.  Darts fall on the plane as a
 * Poisson process of intensity T that depends on the seed and the feature
 * only, never on the set, and each dart is marked with one of K positions.
 * A sketch keeps, for each position, the lowest rank among the darts that
 * lie under the set's weights.  Two sets agree at a position when that dart
 * lies under both, which happens with probability (area under both) / (area
 * under either): the weighted Jaccard similarity.  So similarity(), the
 * fraction of agreeing positions, is unbiased with binomial error
 * sqrt(J(1 - J) / K), as for minhash.
 *
 * Only darts below a rank bound are looked at: with total weight W, the
 * area under the weights up to rank 1 / W holds T darts on average, and
 * T = K (ln K + 3) reaches every position but about once in twenty sketches;
 * then the bound doubles and the darts are thrown again (the same darts, and
 * more).  To throw the same darts for any weight without visiting the whole
 * plane, it is cut into regions (nu, rho) whose width and height double
 * (weights from (2^nu - 1) / T, ranks from 2^rho - 1) and each region into
 * 2^(nu + rho) cells of area 1 / T, each holding one dart on average, drawn
 * from a hash of (seed, feature, region, cell) in rank order (gaps Exp(1)
 * in units of the cell's height), so that a cell stops at its first dart
 * past the bound and a cell with none below it costs one hash.  A feature
 * visits the cells that meet [0, w_i) x [0, bound): about as many as the
 * darts it adds, plus log2(1 + T w_i) regions.  This is DartMinHash (Christiani, 2020): about
 * n log(T w) + K log K hashes a sketch, where ICWS (Ioffe, 2010) computes
 * n K samples.
 *
 * A position stores its dart's rank as the bits of a float4.  Positive
 * floats order as their bits do, so the element-wise minimum of two sketches
 * is the sketch of their union (each feature at its larger weight), as for
 * minhash, and minhash_union() works unchanged.  Two different darts share
 * a float4 rank about once in 2^24 comparisons, far below the estimate's own
 * error.  Weights are bounded (WEIGHT_MIN, WEIGHT_MAX) so that every rank is
 * a normal float4.
 *
 * What a sketch holds
 * -------------------
 * The sketch of an empty set is marked empty.  Any other has a rank at every
 * position (nothing is left to densification, so no filled bitmap), and a
 * rank is a positive float4 below the last rank bound: that bound starts at
 * 1 / W, W >= WEIGHT_MIN, and doubles at most MAX_ROUNDS - 1 times, so no
 * rank exceeds 2^63 / WEIGHT_MIN (9.2e30) rounded to float4.  The lowest
 * rank is the first dart of a cell in region (nu, 0), -ln(u) >= 2^-33 times
 * a height 2^-nu > 1 / (1 + T w): with T at most T(1024) and w at most
 * WEIGHT_MAX times the 2^27 elements an array can hold, no rank is below
 * about 8.5e-38, a normal float4.  minhash_in and minhash_recv take nothing
 * else for a weighted unit (minhash.c).
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "base/hash.h"
#include "base/ndd_limits.h"
#include "sketch/minhash.h"
#include "text/shingle.h"

/* The weights a feature may have (0 leaves it out), from minhash.h. */
#define WEIGHT_MIN		WEIGHTED_MINHASH_WEIGHT_MIN
#define WEIGHT_MAX		WEIGHTED_MINHASH_WEIGHT_MAX

/* Rank bounds tried before giving up: each doubles the last. */
#define MAX_ROUNDS		WEIGHTED_MINHASH_MAX_ROUNDS


/* A feature: the hash of its name, and its weight. */
typedef struct WeightedFeature
{
	uint64		hash;
	double		weight;
} WeightedFeature;

/* A growable list of features. */
typedef struct FeatureList
{
	WeightedFeature *items;
	int			count;
	int			capacity;
} FeatureList;


#define ST_SORT sort_features
#define ST_ELEMENT_TYPE WeightedFeature
#define ST_COMPARE(a, b) ((a)->hash < (b)->hash ? -1 : (a)->hash > (b)->hash ? 1 : 0)
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/* ---------------------------------------------------------------------
 * Features and their weights
 * ---------------------------------------------------------------------
 */

static void
FeatureListInit(FeatureList *list, int capacity)
{
	list->capacity = Max(capacity, 16);
	list->count = 0;
	list->items = palloc_extended(list->capacity * sizeof(WeightedFeature), MCXT_ALLOC_HUGE);
}

static void
FeatureListAdd(FeatureList *list, uint64 hash, double weight)
{
	if (list->count == list->capacity)
	{
		list->capacity *= 2;
		list->items = repalloc_huge(list->items, list->capacity * sizeof(WeightedFeature));
	}
	list->items[list->count].hash = hash;
	list->items[list->count].weight = weight;
	list->count++;
}

/* Add a batch of shingle hashes, each of weight 1 (a ShingleHashSink). */
static void
FeatureListAddShingles(void *arg, const uint64 *hashes, int n)
{
	for (int i = 0; i < n; i++)
		FeatureListAdd((FeatureList *) arg, hashes[i], 1.0);
}

/*
 * Sort by hash and merge repeats, adding their weights (a feature listed
 * twice, or a shingle seen twice, weighs the sum); drop zero weights.
 */
static void
FeatureListMerge(FeatureList *list)
{
	int			j = 0;

	sort_features(list->items, list->count);
	for (int i = 0; i < list->count; i++)
	{
		if (j > 0 && list->items[j - 1].hash == list->items[i].hash)
			list->items[j - 1].weight += list->items[i].weight;
		else
			list->items[j++] = list->items[i];
	}
	list->count = j;
	j = 0;
	for (int i = 0; i < list->count; i++)
		if (list->items[i].weight > 0.0)
			list->items[j++] = list->items[i];
	list->count = j;
}

/* Error out unless w is a weight a feature may have. */
static void
CheckWeight(double w, int position, const char *argname)
{
	if (!(w == 0.0 || (w >= WEIGHT_MIN && w <= WEIGHT_MAX)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("weight %g is out of range", w),
				 errdetail("Element %d of \"%s\" is not 0 or between %g and %g.",
						   position, argname, WEIGHT_MIN, WEIGHT_MAX)));
}

/* Collect the hashes of an array's elements (a ShingleHashSink). */
typedef struct HashArray
{
	uint64	   *hashes;
	int			count;
} HashArray;

static void
HashArrayAdd(void *arg, const uint64 *hashes, int n)
{
	HashArray  *h = (HashArray *) arg;

	memcpy(h->hashes + h->count, hashes, n * sizeof(uint64));
	h->count += n;
}

/*
 * The weighted set of features[i] at weights[i], merged: the features hashed
 * as minhash_sketch(text[] | bigint[]) hashes them.
 */
static void
FeaturesFromArrays(ArrayType *features, ArrayType *weights, uint64 seed,
				   const char *features_arg, const char *weights_arg, FeatureList *list)
{
	int			nfeatures;
	int			nweights;
	Datum	   *w;
	HashArray	h;

	NddCheckOneDimension(features, features_arg);
	NddCheckOneDimension(weights, weights_arg);
	nfeatures = ArrayGetNItems(ARR_NDIM(features), ARR_DIMS(features));
	nweights = ArrayGetNItems(ARR_NDIM(weights), ARR_DIMS(weights));
	NddCheckNoNulls(weights, weights_arg);
	if (nfeatures != nweights)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("features and weights must have the same number of elements"),
				 errdetail("\"%s\" has %d elements, \"%s\" %d.",
						   features_arg, nfeatures, weights_arg, nweights)));
	h.hashes = palloc_extended(Max(nfeatures, 1) * sizeof(uint64), MCXT_ALLOC_HUGE);
	h.count = 0;
	ElementHashes(features, features_arg, seed, HashArrayAdd, &h);
	deconstruct_array(weights, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &w, NULL, &nweights);
	FeatureListInit(list, nfeatures);
	for (int i = 0; i < nfeatures; i++)
	{
		double		weight = DatumGetFloat8(w[i]);

		CheckWeight(weight, i + 1, weights_arg);
		FeatureListAdd(list, h.hashes[i], weight);
	}
	pfree(h.hashes);
	FeatureListMerge(list);
}

/* The shingles of a document, each weighing its number of occurrences. */
static void
FeaturesFromText(text *doc, const ShingleConfig *cfg, FeatureList *list)
{
	FeatureListInit(list, VARSIZE_ANY_EXHDR(doc) / 6);
	ShingleHashes(VARDATA_ANY(doc), VARSIZE_ANY_EXHDR(doc), cfg,
				  FeatureListAddShingles, list);
	FeatureListMerge(list);
}

/* ---------------------------------------------------------------------
 * Throwing darts
 * ---------------------------------------------------------------------
 */

/* A uniform double in (0, 1) from 32 bits. */
static inline double
Unit32(uint32 bits)
{
	return ((double) bits + 0.5) * (1.0 / 4294967296.0);
}

/*
 * Region (nu, rho) of the plane, for one rank bound: where it starts, the
 * size of its cells, and how far up its cells lie below the bound.
 */
typedef struct DartRegion
{
	uint64		key;			/* a hash of (nu, rho) */
	double		x;				/* first weight */
	double		r;				/* first rank */
	double		width;			/* of a cell */
	double		height;			/* of a cell */
	uint64		across;			/* cells across: 2^rho */
	uint64		up;				/* cells up below the bound (at most 2^nu) */
	uint64		full;			/* of those, cells wholly below the bound */
	double		edge_first;		/* the last, partial cell has a dart below
								 * the bound when its first uniform exceeds
								 * this */
} DartRegion;

/* The regions of one round: every (nu, rho) a feature may reach. */
typedef struct DartPlane
{
	double		intensity;
	double		bound;
	int			last_rho;
	int			max_nu;
	DartRegion *regions;		/* [nu * (last_rho + 1) + rho] */
	int			k;
	double	   *best;			/* each position's lowest rank so far */
} DartPlane;

/* A cell's darts come in rank order, gaps Exp(1) in units of its height. */
#define FULL_CELL_FIRST		0.36787944117144233	/* exp(-1) */

/* Lay out the regions below rank bound for weights up to max_weight. */
static void
DartPlaneInit(DartPlane *plane, double intensity, double bound, double max_weight)
{
	plane->intensity = intensity;
	plane->bound = bound;
	/* one more than log2 says, in case it rounds down: empty ones are skipped */
	plane->last_rho = (int) floor(log2(1.0 + bound)) + 1;
	plane->max_nu = (int) floor(log2(1.0 + intensity * max_weight)) + 1;
	plane->regions = palloc((plane->max_nu + 1) * (plane->last_rho + 1) * sizeof(DartRegion));
	for (int nu = 0; nu <= plane->max_nu; nu++)
		for (int rho = 0; rho <= plane->last_rho; rho++)
		{
			DartRegion *g = &plane->regions[nu * (plane->last_rho + 1) + rho];
			double		two_nu = ldexp(1.0, nu);
			double		two_rho = ldexp(1.0, rho);
			double		below;

			g->key = NddHashMix(((uint64) nu << 16 | (uint64) rho) + UINT64CONST(0x9e3779b97f4a7c15));
			g->x = (two_nu - 1.0) / intensity;
			g->r = two_rho - 1.0;
			/* 2^rho cells across, 2^nu up: each of area 1 / T */
			g->width = two_nu / intensity / two_rho;
			g->height = two_rho / two_nu;
			g->across = (uint64) 1 << Min(rho, 32);
			/* how many cells' heights fit below the bound */
			below = g->r < bound ? (bound - g->r) / g->height : 0.0;
			g->full = (uint64) Min(floor(below), (double) ((uint64) 1 << Min(nu, 32)));
			g->up = g->full;
			g->edge_first = 1.0;
			if (g->full < ((uint64) 1 << Min(nu, 32)) && below > (double) g->full)
			{
				g->up++;
				g->edge_first = exp(-(below - (double) g->full));
			}
		}
}

/* Keep a dart of rank r that lies under the weight, at its position. */
static inline void
DartLand(DartPlane *plane, uint64 bits, double r)
{
	uint32		pos = NddHashRange((uint32) (NddHashMix(bits ^ UINT64CONST(0x94d049bb133111eb)) >> 32),
								   (uint32) plane->k);

	if (r < plane->best[pos])
		plane->best[pos] = r;
}

/*
 * Throw the darts of one feature that fall under its weight and below the
 * rank bound.  A cell's darts are drawn in rank order, so a cell stops at
 * its first dart past the bound; most cells a feature visits have none
 * below it, which costs one hash and one comparison.
 */
static void
ThrowFeature(DartPlane *plane, const WeightedFeature *f)
{
	/* regions start further right as nu grows, and higher as rho grows */
	for (int nu = 0; nu <= plane->max_nu; nu++)
	{
		if (plane->regions[nu * (plane->last_rho + 1)].x >= f->weight)
			break;
		for (int rho = 0; rho <= plane->last_rho; rho++)
		{
			const DartRegion *g = &plane->regions[nu * (plane->last_rho + 1) + rho];
			uint64		region;

			if (g->up == 0)
				break;
			region = NddHashMix(f->hash ^ g->key);
			for (uint64 a = 0; a < g->across; a++)
			{
				double		x0 = g->x + a * g->width;

				if (x0 >= f->weight)
					break;
				for (uint64 b = 0; b < g->up; b++)
				{
					double		r0 = g->r + b * g->height;
					double		top = Min(plane->bound, r0 + g->height);
					/* cell (0, 0) is the region's own hash: one mix fewer */
					uint64		cell = (a | b) == 0 ? region : NddHashMix(region ^ (a << 32 | b));
					double		u = Unit32((uint32) (cell >> 32));
					double		gaps;
					uint64		dart;

					/* 1. the first dart: is it below the bound, in this cell? */
					if (u <= (b < g->full ? FULL_CELL_FIRST : g->edge_first))
						continue;
					gaps = -log(u);
					dart = cell;
					/* 2. it and the darts after it, until one is past */
					for (int q = 1;; q++)
					{
						double		r = r0 + g->height * gaps;
						double		x;

						if (r >= top)
							break;
						x = x0 + g->width * Unit32((uint32) dart);
						if (x < f->weight)
							DartLand(plane, dart, r);
						dart = NddHashMix(cell + q * UINT64CONST(0xbf58476d1ce4e5b9));
						gaps += -log(Unit32((uint32) (dart >> 32)));
					}
				}
			}
		}
	}
}

/*
 * The sketch of a merged weighted set: each position's lowest rank under the
 * weights, as float4 bits (MINHASH_EMPTY_VALUE everywhere for an empty set).
 */
static MinHash *
WeightedSketch(const FeatureList *list, int k, MinHashSource source,
			   int shingle_size, int32 seed)
{
	DartPlane	plane;
	double		total = 0.0;
	double		max_weight = 0.0;
	double		bound;
	uint32	   *raw = palloc(k * sizeof(uint32));
	int			round;

	for (int i = 0; i < list->count; i++)
	{
		total += list->items[i].weight;
		max_weight = Max(max_weight, list->items[i].weight);
	}
	for (int i = 0; i < k; i++)
		raw[i] = MINHASH_EMPTY_VALUE;
	if (list->count == 0)
		return MinHashFromRaw(raw, k, source, shingle_size, seed);

	plane.k = k;
	plane.best = palloc(k * sizeof(double));
	for (int i = 0; i < k; i++)
		plane.best[i] = DBL_MAX;
	bound = 1.0 / total;
	for (round = 0; round < MAX_ROUNDS; round++)
	{
		bool		all = true;

		DartPlaneInit(&plane, WeightedMinHashIntensity(k), bound, max_weight);
		for (int i = 0; i < list->count; i++)
		{
			if ((i & 255) == 0)
				CHECK_FOR_INTERRUPTS();
			ThrowFeature(&plane, &list->items[i]);
		}
		pfree(plane.regions);
		for (int i = 0; i < k && all; i++)
			all = plane.best[i] < bound;
		if (all)
			break;
		bound *= 2.0;
	}
	if (round == MAX_ROUNDS)
		elog(ERROR, "weighted minhash left a position empty after %d rounds", MAX_ROUNDS);

	for (int i = 0; i < k; i++)
	{
		float4		r = (float4) plane.best[i];

		memcpy(&raw[i], &r, sizeof(uint32));
	}
	pfree(plane.best);
	return MinHashFromRaw(raw, k, source, shingle_size, seed);
}

/* ---------------------------------------------------------------------
 * Exact weighted Jaccard
 * ---------------------------------------------------------------------
 */

/* sum(min) / sum(max) of two merged lists (0 when both are empty). */
static double
WeightedJaccard(const FeatureList *a, const FeatureList *b)
{
	double		mins = 0.0;
	double		maxes = 0.0;
	int			i = 0,
				j = 0;

	while (i < a->count || j < b->count)
	{
		if (j == b->count || (i < a->count && a->items[i].hash < b->items[j].hash))
			maxes += a->items[i++].weight;
		else if (i == a->count || b->items[j].hash < a->items[i].hash)
			maxes += b->items[j++].weight;
		else
		{
			mins += Min(a->items[i].weight, b->items[j].weight);
			maxes += Max(a->items[i].weight, b->items[j].weight);
			i++;
			j++;
		}
	}
	return maxes > 0.0 ? mins / maxes : 0.0;
}

/* ---------------------------------------------------------------------
 * SQL functions
 * ---------------------------------------------------------------------
 */

/* weighted_minhash_sketch(features text[] | bigint[], weights float8[], num_perm, seed) */
PG_FUNCTION_INFO_V1(weighted_minhash_sketch_array);
Datum
weighted_minhash_sketch_array(PG_FUNCTION_ARGS)
{
	ArrayType  *features = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *weights = PG_GETARG_ARRAYTYPE_P(1);
	int32		num_perm = PG_GETARG_INT32(2);
	int32		seed = PG_GETARG_INT32(3);
	FeatureList list;

	NddCheckNumPerm(num_perm);
	FeaturesFromArrays(features, weights, (uint64) (uint32) seed, "features", "weights", &list);
	PG_RETURN_MINHASH_P(WeightedSketch(&list, num_perm,
									   ARR_ELEMTYPE(features) == INT8OID ?
									   MINHASH_SOURCE_WEIGHTED_BIGINT : MINHASH_SOURCE_WEIGHTED_TEXT,
									   1, seed));
}

/* weighted_minhash_sketch(doc text, num_perm, shingle_size, unit, strip_html, seed) */
PG_FUNCTION_INFO_V1(weighted_minhash_sketch_text);
Datum
weighted_minhash_sketch_text(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	int32		num_perm = PG_GETARG_INT32(1);
	int32		shingle_size = PG_GETARG_INT32(2);
	char	   *unit = text_to_cstring(PG_GETARG_TEXT_PP(3));
	bool		strip_html = PG_GETARG_BOOL(4);
	int32		seed = PG_GETARG_INT32(5);
	ShingleConfig cfg;
	FeatureList list;

	NddCheckNumPerm(num_perm);
	ShingleConfigInit(&cfg, unit, shingle_size, strip_html, (uint64) (uint32) seed);
	FeaturesFromText(doc, &cfg, &list);
	PG_RETURN_MINHASH_P(WeightedSketch(&list, num_perm,
									   cfg.unit == SHINGLE_UNIT_CHAR ?
									   MINHASH_SOURCE_WEIGHTED_CHAR : MINHASH_SOURCE_WEIGHTED_WORD,
									   shingle_size, seed));
}

/* weighted_jaccard(features_a, weights_a, features_b, weights_b) */
PG_FUNCTION_INFO_V1(weighted_jaccard_array);
Datum
weighted_jaccard_array(PG_FUNCTION_ARGS)
{
	FeatureList a,
				b;

	FeaturesFromArrays(PG_GETARG_ARRAYTYPE_P(0), PG_GETARG_ARRAYTYPE_P(1), 0,
					   "features_a", "weights_a", &a);
	FeaturesFromArrays(PG_GETARG_ARRAYTYPE_P(2), PG_GETARG_ARRAYTYPE_P(3), 0,
					   "features_b", "weights_b", &b);
	PG_RETURN_FLOAT8(WeightedJaccard(&a, &b));
}

/* weighted_jaccard(a text, b text, shingle_size, unit, strip_html): by counts */
PG_FUNCTION_INFO_V1(weighted_jaccard_text);
Datum
weighted_jaccard_text(PG_FUNCTION_ARGS)
{
	ShingleConfig cfg;
	FeatureList a,
				b;

	ShingleConfigInit(&cfg, text_to_cstring(PG_GETARG_TEXT_PP(3)), PG_GETARG_INT32(2),
					  PG_GETARG_BOOL(4), 0);
	FeaturesFromText(PG_GETARG_TEXT_PP(0), &cfg, &a);
	FeaturesFromText(PG_GETARG_TEXT_PP(1), &cfg, &b);
	PG_RETURN_FLOAT8(WeightedJaccard(&a, &b));
}
