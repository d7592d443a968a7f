/*
 * minhash_gin.c
 *		The GIN operator class minhash_ops: LSH band keys as index entries,
 *		exact by pigeonhole (similar() reaches it through similar_support.c).
 *
 * Each indexed sketch yields one key per band: the band number in the high
 * bits and key_bits bits of the band's hash (lsh.c) in the low ones.  The
 * keys are deliberately not unique: GIN stores each distinct key once with
 * a compressed posting list, so short keys make a small index, and the
 * consistent function's count of matching bands filters the chance
 * collisions that short keys bring (the recheck removes the rest).
 *
 * The consistent function demands LshRequiredBands() matching keys for the
 * scan's threshold: every row whose similarity reaches the threshold has at
 * least that many, so the index returns exactly the rows a sequential scan
 * returns.  When the threshold is below what the banding can serve exactly
 * (the bound drops under 1), it demands one band: classic LSH, with the
 * recall of the S-curve.  A threshold of 0 matches everything, and so does
 * the scan.
 *
 * An index serves sketches made one way only: its options name the sketch
 * settings (defaults: those of minhash_sketch's defaults), and a sketch made
 * otherwise is an error when it is indexed or searched for, never a silent
 * empty answer.
 */
#include "postgres.h"

#include "access/gin.h"
#include "access/genam.h"
#include "access/reloptions.h"
#include "access/stratnum.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "nodes/pathnodes.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "base/ndd_limits.h"
#include "index/gin_enough_keys.h"
#include "index/minhash_gin.h"
#include "keys/lsh.h"
#include "sketch/minhash.h"

typedef struct MinHashGinOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			num_perm;
	int			unit;			/* MinHashSource */
	int			shingle_size;
	int			seed;
	double		threshold;		/* lowest threshold served exactly */
	int			bands;			/* 0: derived */
	int			rows;			/* 0: derived */
	int			key_bits;
} MinHashGinOptions;

static relopt_enum_elt_def unit_values[] =
{
	{"word", MINHASH_SOURCE_WORD},
	{"char", MINHASH_SOURCE_CHAR},
	{"text", MINHASH_SOURCE_TEXT},
	{"bigint", MINHASH_SOURCE_BIGINT},
	{"weighted_word", MINHASH_SOURCE_WEIGHTED_WORD},
	{"weighted_char", MINHASH_SOURCE_WEIGHTED_CHAR},
	{"weighted_text", MINHASH_SOURCE_WEIGHTED_TEXT},
	{"weighted_bigint", MINHASH_SOURCE_WEIGHTED_BIGINT},
	{(const char *) NULL, 0}
};

static Datum *GinKeys(const struct MinHashGinOptions *opts, const MinHash *mh, int32 *nkeys);

/* The banding an index uses, from its options. */
static void
GinBanding(const MinHashGinOptions *opts, int *bands, int *rows)
{
	if (opts->bands > 0 && opts->rows > 0)
	{
		*bands = opts->bands;
		*rows = opts->rows;
	}
	else if (opts->bands > 0)
	{
		/* at least one row, so that too many bands fail validation */
		*bands = opts->bands;
		*rows = Max(opts->num_perm / opts->bands, 1);
	}
	else if (opts->rows > 0)
	{
		*rows = opts->rows;
		*bands = Max(opts->num_perm / opts->rows, 1);
	}
	else
		LshBandingForThreshold(opts->num_perm, opts->threshold, bands, rows);
}

/* Checked when CREATE INDEX parses the options. */
static void
GinOptionsValidate(void *parsed, relopt_value *vals, int nvals)
{
	MinHashGinOptions *opts = (MinHashGinOptions *) parsed;
	int			bands,
				rows;

	NddCheckThreshold(opts->threshold);
	GinBanding(opts, &bands, &rows);
	LshCheckBanding(opts->num_perm, bands, rows);
}

/* options(internal): the opclass options and their ranges */
PG_FUNCTION_INFO_V1(gin_minhash_options);
Datum
gin_minhash_options(PG_FUNCTION_ARGS)
{
	local_relopts *relopts = (local_relopts *) PG_GETARG_POINTER(0);

	init_local_reloptions(relopts, sizeof(MinHashGinOptions));
	add_local_int_reloption(relopts, "num_perm", "num_perm of the indexed sketches",
							NDD_NUM_PERM_DEFAULT, NDD_NUM_PERM_MIN, NDD_NUM_PERM_MAX,
							offsetof(MinHashGinOptions, num_perm));
	add_local_enum_reloption(relopts, "unit", "unit of the indexed sketches",
							 unit_values, MINHASH_SOURCE_WORD,
							 "Valid values are \"word\", \"char\", \"text\", \"bigint\", \"weighted_word\", \"weighted_char\", \"weighted_text\" and \"weighted_bigint\".",
							 offsetof(MinHashGinOptions, unit));
	add_local_int_reloption(relopts, "shingle_size", "shingle_size of the indexed sketches",
							NDD_SHINGLE_SIZE_DEFAULT, NDD_SHINGLE_SIZE_MIN, NDD_SHINGLE_SIZE_MAX,
							offsetof(MinHashGinOptions, shingle_size));
	add_local_int_reloption(relopts, "seed", "seed of the indexed sketches",
							0, PG_INT32_MIN, PG_INT32_MAX,
							offsetof(MinHashGinOptions, seed));
	add_local_real_reloption(relopts, "threshold",
							 "lowest similarity threshold the index serves exactly",
							 NDD_SIMILARITY_THRESHOLD_DEFAULT, 0.0, 1.0,
							 offsetof(MinHashGinOptions, threshold));
	add_local_int_reloption(relopts, "bands", "number of LSH bands (0: from threshold)",
							0, 0, NDD_NUM_PERM_MAX,
							offsetof(MinHashGinOptions, bands));
	add_local_int_reloption(relopts, "rows", "positions per LSH band (0: from threshold)",
							0, 0, NDD_NUM_PERM_MAX,
							offsetof(MinHashGinOptions, rows));
	add_local_int_reloption(relopts, "key_bits", "bits of each band's hash kept in its key",
							NDD_GIN_KEY_BITS_DEFAULT, NDD_GIN_KEY_BITS_MIN, NDD_GIN_KEY_BITS_MAX,
							offsetof(MinHashGinOptions, key_bits));
	register_reloptions_validator(relopts, GinOptionsValidate);
	PG_RETURN_VOID();
}

/* The opclass options of column attno of a minhash_ops index. */
static MinHashGinOptions *
GinIndexOptions(Relation index, int attno)
{
	bytea	  **options = RelationGetIndexAttOptions(index, false);

	if (options[attno - 1] == NULL)
		elog(ERROR, "index \"%s\" has no minhash_ops options", RelationGetRelationName(index));
	return (MinHashGinOptions *) options[attno - 1];
}

/*
 * Does column attno of this minhash_ops index return every row whose
 * similarity reaches threshold?  *bands and *rows are set to its banding.
 * For callers that must not rely on LSH recall (the insert guard).
 */
bool
MinHashGinIsExact(Relation index, int attno, double threshold, int *bands, int *rows)
{
	MinHashGinOptions *opts = GinIndexOptions(index, attno);

	GinBanding(opts, bands, rows);
	return LshRequiredBands(opts->num_perm, *bands, *rows, threshold) >= 1;
}

/*
 * The banding and key_bits of column attno of this minhash_ops index, and
 * the keys it holds for sketch mh (one per band), for callers that read its
 * posting lists themselves (minhash_topk.c).  Errors out, as a scan does,
 * when mh was made otherwise than the index's sketches.
 */
Datum *
MinHashGinIndexKeys(Relation index, int attno, const MinHash *mh,
					int32 *nkeys, int *bands, int *rows)
{
	MinHashGinOptions *opts = GinIndexOptions(index, attno);

	GinBanding(opts, bands, rows);
	return GinKeys(opts, mh, nkeys);
}

/* The banding of column attno of this minhash_ops index. */
void
MinHashGinBanding(Relation index, int attno, int *bands, int *rows)
{
	MinHashGinOptions *opts = GinIndexOptions(index, attno);

	GinBanding(opts, bands, rows);
}

/*
 * The lowest similarity m / K from which column attno of this minhash_ops
 * index answers similar() exactly (the pigeonhole bound demands a band).
 */
double
MinHashGinLowestExact(Relation index, int attno)
{
	MinHashGinOptions *opts = GinIndexOptions(index, attno);
	int			k;
	int			bands,
				rows;

	k = opts->num_perm;
	for (int m = 1; m < k; m++)
		if (MinHashGinIsExact(index, attno, (double) m / k, &bands, &rows))
			return (double) m / k;
	return 1.0;
}


/* The opclass options of the index column being scanned or built. */
static MinHashGinOptions *
GinOptions(FunctionCallInfo fcinfo)
{
	if (!PG_HAS_OPCLASS_OPTIONS())
		elog(ERROR, "minhash_ops called without its options");
	return (MinHashGinOptions *) PG_GET_OPCLASS_OPTIONS();
}

/* Error out unless the sketch was made the way the index expects. */
static void
GinCheckSketch(const MinHashGinOptions *opts, const MinHash *mh)
{
	int			shingle_size = MinHashSourceIsArray(opts->unit) ? 1 : opts->shingle_size;

	if (mh->num_perm != opts->num_perm || mh->source != opts->unit ||
		mh->shingle_size != shingle_size || mh->seed != opts->seed)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("minhash sketch does not match the settings of the index"),
				 errdetail("The index serves sketches made with %s; this one was made with %s.",
						   MinHashSettingsString(opts->num_perm, opts->unit, shingle_size, opts->seed),
						   MinHashSettingsString(mh->num_perm, mh->source, mh->shingle_size, mh->seed)),
				 errhint("Create the index with matching options, as in minhash_ops(num_perm = %d, unit = '%s', shingle_size = %d, seed = %d).",
						 mh->num_perm, MinHashSourceName(mh->source), mh->shingle_size, mh->seed)));
}

/* The index keys of a sketch: one per band. */
static Datum *
GinKeys(const MinHashGinOptions *opts, const MinHash *mh, int32 *nkeys)
{
	int			bands,
				rows;
	Datum	   *keys;

	GinCheckSketch(opts, mh);
	GinBanding(opts, &bands, &rows);
	keys = palloc(bands * sizeof(Datum));
	for (int b = 0; b < bands; b++)
	{
		uint64		h = LshBandHash(mh, b, rows);

		keys[b] = Int32GetDatum((int32) (((uint32) b << opts->key_bits) |
										 (uint32) (h >> (64 - opts->key_bits))));
	}
	*nkeys = bands;
	return keys;
}

/* extractValue(minhash, internal, internal) */
PG_FUNCTION_INFO_V1(gin_extract_value_minhash);
Datum
gin_extract_value_minhash(PG_FUNCTION_ARGS)
{
	MinHash    *mh = PG_GETARG_MINHASH_P(0);
	int32	   *nkeys = (int32 *) PG_GETARG_POINTER(1);

	PG_RETURN_POINTER(GinKeys(GinOptions(fcinfo), mh, nkeys));
}

/* extractQuery(query, internal, int2, internal, internal, internal, internal) */
PG_FUNCTION_INFO_V1(gin_extract_query_minhash);
Datum
gin_extract_query_minhash(PG_FUNCTION_ARGS)
{
	int32	   *nkeys = (int32 *) PG_GETARG_POINTER(1);
	StrategyNumber strategy = PG_GETARG_UINT16(2);
	Pointer   **extra_data = (Pointer **) PG_GETARG_POINTER(4);
	int32	   *search_mode = (int32 *) PG_GETARG_POINTER(6);
	MinHashGinOptions *opts = GinOptions(fcinfo);
	MinHash    *mh;
	double		threshold;
	int			bands,
				rows;
	int		   *required;
	Datum	   *keys;

	switch (strategy)
	{
		case NDD_MINHASH_SIMILAR_STRATEGY:
			mh = PG_GETARG_MINHASH_P(0);
			threshold = ndd_similarity_threshold;
			break;
		case NDD_MINHASH_SIMILAR_QUERY_STRATEGY:
			mh = MinHashFromQuery(PG_GETARG_HEAPTUPLEHEADER(0), &threshold);
			if (mh == NULL)
			{
				/* a NULL sketch or threshold: no row, as in a scan */
				*nkeys = 0;
				*search_mode = GIN_SEARCH_MODE_DEFAULT;
				PG_RETURN_POINTER(NULL);
			}
			break;
		default:
			elog(ERROR, "unrecognized strategy number: %d", strategy);
	}

	keys = GinKeys(opts, mh, nkeys);
	GinBanding(opts, &bands, &rows);

	/* the count of matching bands consistent() demands, shared by all keys */
	required = palloc(sizeof(int));
	*required = Max(LshRequiredBands(mh->num_perm, bands, rows, threshold), 1);
	if (threshold <= 0.0)
	{
		/* everything matches, as in a sequential scan */
		*required = 0;
		*search_mode = GIN_SEARCH_MODE_ALL;
	}
	*extra_data = palloc(*nkeys * sizeof(Pointer));
	for (int i = 0; i < *nkeys; i++)
		(*extra_data)[i] = (Pointer) required;
	PG_RETURN_POINTER(keys);
}

/* consistent(internal, int2, query, int4, internal, internal, internal, internal) */
PG_FUNCTION_INFO_V1(gin_minhash_consistent);
Datum
gin_minhash_consistent(PG_FUNCTION_ARGS)
{
	bool	   *check = (bool *) PG_GETARG_POINTER(0);
	int32		nkeys = PG_GETARG_INT32(3);
	Pointer    *extra_data = (Pointer *) PG_GETARG_POINTER(4);
	bool	   *recheck = (bool *) PG_GETARG_POINTER(5);

	*recheck = true;
	PG_RETURN_BOOL(GinEnoughKeys(check, nkeys, extra_data));
}

/* triConsistent(internal, int2, query, int4, internal, internal, internal) */
PG_FUNCTION_INFO_V1(gin_minhash_triconsistent);
Datum
gin_minhash_triconsistent(PG_FUNCTION_ARGS)
{
	GinTernaryValue *check = (GinTernaryValue *) PG_GETARG_POINTER(0);
	int32		nkeys = PG_GETARG_INT32(3);
	Pointer    *extra_data = (Pointer *) PG_GETARG_POINTER(4);

	PG_RETURN_GIN_TERNARY_VALUE(GinMaybeEnoughKeys(check, nkeys, extra_data) ? GIN_MAYBE : GIN_FALSE);
}
