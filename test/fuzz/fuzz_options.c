/*
 * fuzz_options.c
 *		The opclass options of minhash_ops (GIN) and simhash_ops (GIN), with
 *		values decoded from the input, and what follows from them.
 *
 * PostgreSQL parses the option strings and checks each value's range; this
 * harness plays that part (see pg_shim.c: the options function's
 * declarations are recorded there), giving every option its default, an
 * end of its range or a value inside it.  Then:
 *
 * minhash_ops: the validator refuses only with 22023.  If it accepts, a
 * sketch made with the index's settings is indexed (extractValue) and a
 * second sketch, the first with some positions changed, is searched for
 * (extractQuery, % at ndd.similarity_threshold from the input).  When the
 * banding is exact at that threshold (the pigeonhole bound is at least 1)
 * and the pair's similarity reaches it, consistent() must accept the row;
 * at a threshold of 0 it must accept every row; triConsistent must agree.
 *
 * simhash_ops: for ndd.hamming_threshold from the input and two
 * fingerprints some bits apart, consistent() accepts every row within the
 * threshold, and never skips the recheck unless the fingerprints are equal;
 * triConsistent agrees.  simhash_keys(v, max_distance) takes any integer.
 */
#include "fuzz.h"

#include <math.h>

#include "access/gin.h"
#include "base/ndd_limits.h"
#include "keys/lsh.h"
#include "keys/simhash_keys.h"
#include "sketch/minhash.h"
#include "sketch/simhash.h"

extern Datum gin_minhash_options(PG_FUNCTION_ARGS);
extern Datum gin_extract_value_minhash(PG_FUNCTION_ARGS);
extern Datum gin_extract_query_minhash(PG_FUNCTION_ARGS);
extern Datum gin_minhash_consistent(PG_FUNCTION_ARGS);
extern Datum gin_minhash_triconsistent(PG_FUNCTION_ARGS);
extern Datum gin_simhash_options(PG_FUNCTION_ARGS);
extern Datum gin_extract_value_simhash(PG_FUNCTION_ARGS);
extern Datum gin_extract_query_simhash(PG_FUNCTION_ARGS);
extern Datum gin_simhash_consistent(PG_FUNCTION_ARGS);
extern Datum gin_simhash_triconsistent(PG_FUNCTION_ARGS);
extern Datum simhash_keys(PG_FUNCTION_ARGS);

/* The input, read a byte at a time; zeros once it runs out. */
typedef struct Reader
{
	const uint8_t *p;
	size_t		left;
} Reader;

static uint8_t
Byte(Reader *r)
{
	if (r->left == 0)
		return 0;
	r->left--;
	return *r->p++;
}

static uint32
Word(Reader *r)
{
	uint32		w = 0;

	for (int i = 0; i < 4; i++)
		w = (w << 8) | Byte(r);
	return w;
}

/* A value PostgreSQL's parser would let through for option o. */
static void
DecodeOption(Reader *r, const FuzzRelopt *o, char *opts)
{
	uint8_t		mode = Byte(r) % 6;

	if (o->type == 'i')
	{
		int			v;

		switch (mode)
		{
			case 0:
				v = o->int_default;
				break;
			case 1:
				v = o->int_min;
				break;
			case 2:
				v = o->int_max;
				break;
			case 3:
				v = o->int_min + Byte(r);	/* not in Min(): evaluated once */
				v = Min(v, o->int_max);
				break;
			default:
				v = (int) ((int64) o->int_min +
						   (int64) (Word(r) % ((uint64) ((int64) o->int_max - o->int_min) + 1)));
				break;
		}
		memcpy(opts + o->offset, &v, sizeof(int));
	}
	else if (o->type == 'r')
	{
		double		v;

		switch (mode)
		{
			case 0:
				v = o->real_default;
				break;
			case 1:
				v = o->real_min;
				break;
			case 2:
				v = o->real_max;
				break;
			case 3:
				{
					/* edges: the smallest positive values, just below max */
					static const double edges[] = {4.9e-324, 2.2250738585072014e-308, 1e-300,
					1e-9, 0x1.fffffffffffffp-1, 0.5};

					v = edges[Byte(r) % lengthof(edges)];
					break;
				}
			default:
				v = o->real_min + (o->real_max - o->real_min) * ((double) Word(r) / 4294967295.0);
				break;
		}
		if (v < o->real_min || v > o->real_max)
			v = o->real_default;
		memcpy(opts + o->offset, &v, sizeof(double));
	}
	else
	{
		int			n = 0;
		int			v = o->int_default;

		while (o->members[n].string_val)
			n++;
		if (mode != 0)
			v = o->members[Byte(r) % n].symbol_val;
		memcpy(opts + o->offset, &v, sizeof(int));
	}
}

/* Call an options function and fill its options from the input. */
static bytea *
DecodeOptions(Reader *r, PGFunction optionsfn)
{
	local_relopts relopts;
	Datum		arg = PointerGetDatum(&relopts);
	Datum		result;
	char	   *opts;

	if (!FuzzCall(optionsfn, 1, &arg, &result))
		FUZZ_FAIL("options function raised: %s", fuzz_errmsg);
	opts = palloc0(fuzz_relopt_struct_size);
	SET_VARSIZE(opts, fuzz_relopt_struct_size);
	for (int i = 0; i < fuzz_nrelopts; i++)
		DecodeOption(r, &fuzz_relopts[i], opts);
	return (bytea *) opts;
}

static int
OptionInt(const bytea *opts, const char *name)
{
	int			v;

	for (int i = 0; i < fuzz_nrelopts; i++)
		if (strcmp(fuzz_relopts[i].name, name) == 0)
		{
			memcpy(&v, (const char *) opts + fuzz_relopts[i].offset, sizeof(int));
			return v;
		}
	FUZZ_FAIL("no option %s", name);
}

static double
OptionReal(const bytea *opts, const char *name)
{
	double		v;

	for (int i = 0; i < fuzz_nrelopts; i++)
		if (strcmp(fuzz_relopts[i].name, name) == 0)
		{
			memcpy(&v, (const char *) opts + fuzz_relopts[i].offset, sizeof(double));
			return v;
		}
	FUZZ_FAIL("no option %s", name);
}

static void
DoValidate(void *arg)
{
	fuzz_relopt_validator(arg, NULL, 0);
}

/*
 * The banding for bands, rows and threshold, as docs/reference.md documents
 * the options of minhash_ops ("Operator classes").
 */
static void
DocumentedBanding(int k, int bands, int rows, double threshold, int *b, int *r)
{
	if (bands > 0 && rows > 0)
		*b = bands, *r = rows;
	else if (bands > 0)
		*b = bands, *r = Max(k / bands, 1);
	else if (rows > 0)
		*r = rows, *b = Max(k / rows, 1);
	else
		LshBandingForThreshold(k, threshold, b, r);
}

static void
FuzzMinHashOptions(Reader *r)
{
	bytea	   *opts = DecodeOptions(r, gin_minhash_options);
	int			k,
				unit,
				bands,
				rows;
	uint32	   *raw;
	MinHash    *a;
	MinHash    *q;
	Datum		args[8];
	Datum		keys_a,
				keys_q,
				res;
	int32		nkeys_a = 0,
				nkeys_q = 0,
				search_mode = GIN_SEARCH_MODE_DEFAULT;
	bool	   *null_flags = NULL;
	bool	   *partial = NULL;
	Pointer    *extra_data = NULL;
	bool	   *check;
	GinTernaryValue *tcheck;
	bool		recheck;
	bool		consistent;
	double		threshold;
	double		sim;
	int			nchanges;

	if (fuzz_relopt_validator == NULL)
		FUZZ_FAIL("minhash_ops has no validator");
	if (!FuzzTry(DoValidate, opts))
	{
		if (fuzz_sqlerrcode != ERRCODE_INVALID_PARAMETER_VALUE)
			FUZZ_FAIL("validator refused with SQLSTATE %s: %s",
					  unpack_sql_state(fuzz_sqlerrcode), fuzz_errmsg);
		return;
	}

	/* a sketch made as the index expects, values from the input */
	k = OptionInt(opts, "num_perm");
	unit = OptionInt(opts, "unit");
	raw = palloc(k * sizeof(uint32));
	for (int i = 0; i < k; i++)
		raw[i] = (Byte(r) & 0x80) ? MINHASH_EMPTY_VALUE : Word(r) % 1000;
	a = MinHashFromRaw(raw, k, unit, MinHashSourceIsArray(unit) ? 1 : OptionInt(opts, "shingle_size"),
					   OptionInt(opts, "seed"));
	/* the query: the same sketch with some positions changed */
	q = palloc(VARSIZE(a));
	memcpy(q, a, VARSIZE(a));
	nchanges = Byte(r);
	for (int i = 0; i < nchanges; i++)
	{
		int			pos = ((Byte(r) << 8) | Byte(r)) % k;

		q->values[pos] ^= 1 + Byte(r);
	}
	if (q->flags & MINHASH_FLAG_EMPTY && nchanges > 0)
		return;					/* not a sketch anything makes */
	threshold = (double) Word(r) / 4294967295.0;	/* the GUC's range is 0 .. 1 */
	if (Byte(r) & 1)
		threshold = OptionReal(opts, "threshold");
	ndd_similarity_threshold = threshold;

	fuzz_opclass_options = opts;
	args[0] = PointerGetDatum(a);
	args[1] = PointerGetDatum(&nkeys_a);
	args[2] = PointerGetDatum(&null_flags);
	if (!FuzzCall(gin_extract_value_minhash, 3, args, &keys_a))
		FUZZ_FAIL("extractValue refused a matching sketch: %s", fuzz_errmsg);
	args[0] = PointerGetDatum(q);
	args[1] = PointerGetDatum(&nkeys_q);
	args[2] = UInt16GetDatum(NDD_MINHASH_SIMILAR_STRATEGY);
	args[3] = PointerGetDatum(&partial);
	args[4] = PointerGetDatum(&extra_data);
	args[5] = PointerGetDatum(&null_flags);
	args[6] = PointerGetDatum(&search_mode);
	if (!FuzzCall(gin_extract_query_minhash, 7, args, &keys_q))
		FUZZ_FAIL("extractQuery refused a matching sketch: %s", fuzz_errmsg);

	DocumentedBanding(k, OptionInt(opts, "bands"), OptionInt(opts, "rows"),
					  OptionReal(opts, "threshold"), &bands, &rows);
	if (nkeys_a != bands || nkeys_q != bands)
		FUZZ_FAIL("%d and %d keys for %d bands", nkeys_a, nkeys_q, bands);
	if ((int64) bands * rows > k)
		FUZZ_FAIL("%d bands of %d rows accepted for %d positions", bands, rows, k);

	check = palloc(Max(bands, 1) * sizeof(bool));
	tcheck = palloc(Max(bands, 1) * sizeof(GinTernaryValue));
	for (int i = 0; i < bands; i++)
	{
		check[i] = ((Datum *) DatumGetPointer(keys_a))[i] == ((Datum *) DatumGetPointer(keys_q))[i];
		tcheck[i] = check[i] ? GIN_TRUE : GIN_FALSE;
	}
	args[0] = PointerGetDatum(check);
	args[1] = UInt16GetDatum(NDD_MINHASH_SIMILAR_STRATEGY);
	args[2] = PointerGetDatum(q);
	args[3] = Int32GetDatum(nkeys_q);
	args[4] = PointerGetDatum(extra_data);
	args[5] = PointerGetDatum(&recheck);
	args[6] = keys_q;
	args[7] = PointerGetDatum(null_flags);
	if (!FuzzCall(gin_minhash_consistent, 8, args, &res))
		FUZZ_FAIL("consistent raised: %s", fuzz_errmsg);
	consistent = DatumGetBool(res);
	args[0] = PointerGetDatum(tcheck);
	args[5] = keys_q;
	args[6] = PointerGetDatum(null_flags);
	if (!FuzzCall(gin_minhash_triconsistent, 7, args, &res))
		FUZZ_FAIL("triConsistent raised: %s", fuzz_errmsg);
	if ((DatumGetUInt8(res) != GIN_FALSE) != consistent)
		FUZZ_FAIL("consistent and triConsistent disagree");

	sim = MinHashSimilarity(a, q);
	if (threshold <= 0.0 && !consistent)
		FUZZ_FAIL("threshold 0 but a row was skipped");
	if (sim >= threshold && LshRequiredBands(k, bands, rows, threshold) >= 1 && !consistent)
		FUZZ_FAIL("exact banding %d x %d at threshold %.17g skipped a row of similarity %.17g",
				  bands, rows, threshold, sim);
}

static void
FuzzSimHashOptions(Reader *r)
{
	bytea	   *opts = DecodeOptions(r, gin_simhash_options);
	SimHash		q = ((uint64) Word(r) << 32) | Word(r);
	SimHash		v = q;
	Datum		args[8];
	Datum		keys_v,
				keys_q,
				res;
	int32		nkeys_v = 0,
				nkeys_q = 0,
				search_mode = GIN_SEARCH_MODE_DEFAULT;
	bool	   *null_flags = NULL;
	bool	   *partial = NULL;
	Pointer    *extra_data = NULL;
	bool		check[SIMHASH_MAX_KEYS];
	GinTernaryValue tcheck[SIMHASH_MAX_KEYS];
	bool		recheck = true;
	bool		consistent;
	int			nflips = Byte(r) % 16;
	int32		max_distance;

	if (fuzz_relopt_validator != NULL)
		FUZZ_FAIL("simhash_ops has a validator this harness does not call");
	for (int i = 0; i < nflips; i++)
		v ^= UINT64CONST(1) << (Byte(r) % 64);
	ndd_hamming_threshold = Byte(r) % (NDD_HAMMING_THRESHOLD_MAX + 1);

	fuzz_opclass_options = (Byte(r) & 1) ? opts : NULL;	/* without: defaults */
	args[0] = SimHashGetDatum(v);
	args[1] = PointerGetDatum(&nkeys_v);
	args[2] = PointerGetDatum(&null_flags);
	if (!FuzzCall(gin_extract_value_simhash, 3, args, &keys_v))
		FUZZ_FAIL("extractValue raised: %s", fuzz_errmsg);
	args[0] = SimHashGetDatum(q);
	args[1] = PointerGetDatum(&nkeys_q);
	args[2] = UInt16GetDatum(NDD_SIMHASH_MATCH_STRATEGY);
	args[3] = PointerGetDatum(&partial);
	args[4] = PointerGetDatum(&extra_data);
	args[5] = PointerGetDatum(&null_flags);
	args[6] = PointerGetDatum(&search_mode);
	if (!FuzzCall(gin_extract_query_simhash, 7, args, &keys_q))
		FUZZ_FAIL("extractQuery raised: %s", fuzz_errmsg);
	if (nkeys_v < 1 || nkeys_v > SIMHASH_MAX_KEYS)
		FUZZ_FAIL("%d keys", nkeys_v);
	if (nkeys_q == 0)
	{
		if (search_mode != GIN_SEARCH_MODE_ALL)
			FUZZ_FAIL("no query keys, but not a full scan");
	}
	else
	{
		if (nkeys_q != nkeys_v)
			FUZZ_FAIL("%d value keys, %d query keys", nkeys_v, nkeys_q);
		for (int i = 0; i < nkeys_q; i++)
		{
			check[i] = ((Datum *) DatumGetPointer(keys_v))[i] == ((Datum *) DatumGetPointer(keys_q))[i];
			tcheck[i] = check[i] ? GIN_TRUE : GIN_FALSE;
		}
		args[0] = PointerGetDatum(check);
		args[1] = UInt16GetDatum(NDD_SIMHASH_MATCH_STRATEGY);
		args[2] = SimHashGetDatum(q);
		args[3] = Int32GetDatum(nkeys_q);
		args[4] = PointerGetDatum(extra_data);
		args[5] = PointerGetDatum(&recheck);
		args[6] = keys_q;
		args[7] = PointerGetDatum(null_flags);
		if (!FuzzCall(gin_simhash_consistent, 8, args, &res))
			FUZZ_FAIL("consistent raised: %s", fuzz_errmsg);
		consistent = DatumGetBool(res);
		if (SimHashDistance(q, v) <= ndd_hamming_threshold && !consistent)
			FUZZ_FAIL("a row %d bits away skipped at threshold %d",
					  SimHashDistance(q, v), ndd_hamming_threshold);
		if (consistent && !recheck && q != v)
			FUZZ_FAIL("no recheck for a row that differs");
		args[0] = PointerGetDatum(tcheck);
		args[5] = keys_q;
		args[6] = PointerGetDatum(null_flags);
		if (!FuzzCall(gin_simhash_triconsistent, 7, args, &res))
			FUZZ_FAIL("triConsistent raised: %s", fuzz_errmsg);
		if ((DatumGetUInt8(res) != GIN_FALSE) != consistent ||
			(DatumGetUInt8(res) == GIN_TRUE && q != v))
			FUZZ_FAIL("consistent and triConsistent disagree");
	}

	/* simhash_keys(v, max_distance), any integer */
	max_distance = (Byte(r) & 1) ? (int32) Word(r) : (int32) (Byte(r) % 10) - 2;
	args[0] = SimHashGetDatum(v);
	args[1] = Int32GetDatum(max_distance);
	if (FuzzCall(simhash_keys, 2, args, &res))
	{
		if (max_distance < NDD_SIMHASH_MAX_DISTANCE_MIN || max_distance > NDD_SIMHASH_MAX_DISTANCE_MAX)
			FUZZ_FAIL("simhash_keys accepted max_distance %d", max_distance);
	}
	else if (fuzz_sqlerrcode != ERRCODE_INVALID_PARAMETER_VALUE)
		FUZZ_FAIL("simhash_keys refused with SQLSTATE %s: %s",
				  unpack_sql_state(fuzz_sqlerrcode), fuzz_errmsg);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Reader		r = {data, size};

	if (size < 1)
		return 0;
	if (Byte(&r) & 1)
		FuzzSimHashOptions(&r);
	else
		FuzzMinHashOptions(&r);
	ndd_similarity_threshold = 0.8;
	ndd_hamming_threshold = 3;
	FuzzReset();
	return 0;
}
