/*
 * minhash.c
 *		The minhash type: construction, text and binary I/O, similarity, the
 *		% and <-> operators, % minhash_query and similar() (a threshold given
 *		as a value), and the low-bits summary that discovery prunes with.
 *
 * One permutation, densified
 * --------------------------
 * Classic minhash evaluates K hash functions on every shingle: O(nK).  We use
 * one-permutation hashing instead (Li, Owen and Zhang, 2012): each shingle's
 * 64-bit hash is split in two halves; the high half picks one of K bins
 * (multiply-shift, no division) and the low half is the value, and each bin
 * keeps its minimum value.  That is one hash and one comparison per shingle:
 * O(n + K).
 *
 * A short document leaves some bins empty.  They are filled by optimal
 * densification (Shrivastava, 2017): an empty bin i probes bins j1, j2, ...
 * chosen by a hash of (i, attempt) that does not depend on the document, and
 * copies the value of the first bin that is not empty.  Two documents probe
 * the same sequence, so their copies agree exactly when the first bin
 * reached by their union holds a shared minimum: each position still agrees
 * with probability J, the Jaccard resemblance, and similarity() = agreeing
 * positions / K stays unbiased with binomial error sqrt(J(1-J)/K).
 *
 * A sketch remembers which positions were filled (a bitmap, present only
 * when some were), because the union of two sketches is the element-wise
 * minimum of their *real* bins, densified again; filled values must not take
 * part in it.
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "access/htup_details.h"

#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "funcapi.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "base/hash.h"
#include "base/ndd_limits.h"
#include "sketch/minhash.h"
#include "text/shingle.h"

/* ndd.similarity_threshold: the threshold of % (registered by ndd.c) */
double		ndd_similarity_threshold = NDD_SIMILARITY_THRESHOLD_DEFAULT;

/* Probes per empty bin before falling back to the next real bin in order. */
#define MINHASH_MAX_PROBES(k)	(64 * (k))

/* The unit name of a MinHashSource, as sketches show it; NULL if unknown. */
const char *
MinHashSourceName(int source)
{
	switch (source)
	{
		case MINHASH_SOURCE_WORD:
			return "word";
		case MINHASH_SOURCE_CHAR:
			return "char";
		case MINHASH_SOURCE_TEXT:
			return "text";
		case MINHASH_SOURCE_BIGINT:
			return "bigint";
		case MINHASH_SOURCE_WEIGHTED_WORD:
			return "weighted_word";
		case MINHASH_SOURCE_WEIGHTED_CHAR:
			return "weighted_char";
		case MINHASH_SOURCE_WEIGHTED_TEXT:
			return "weighted_text";
		case MINHASH_SOURCE_WEIGHTED_BIGINT:
			return "weighted_bigint";
	}
	return NULL;
}

/* The MinHashSource named by len bytes at name, or 0. */
int
MinHashSourceFromName(const char *name, size_t len)
{
	for (int s = MINHASH_SOURCE_FIRST; s <= MINHASH_SOURCE_LAST; s++)
	{
		const char *n = MinHashSourceName(s);

		if (strlen(n) == len && memcmp(n, name, len) == 0)
			return s;
	}
	return 0;
}

/* "num_perm=128, unit=word, shingle_size=5, seed=0", for messages */
char *
MinHashSettingsString(int num_perm, int source, int shingle_size, int32 seed)
{
	return psprintf("num_perm=%d, unit=%s, shingle_size=%d, seed=%d",
					num_perm, MinHashSourceName(source), shingle_size, seed);
}

/* How a sketch was made, as MinHashSettingsString writes it. */
static char *
MinHashSettings(const MinHash *mh)
{
	return MinHashSettingsString(mh->num_perm, mh->source, mh->shingle_size, mh->seed);
}

/* The bin an empty bin i looks at on its attempt-th probe. */
static inline int
DensifyProbe(int i, uint32 attempt, int k, int32 seed)
{
	uint64		h = NddHashMix(((uint64) (uint32) i << 32 | attempt) ^
							   NddHashMix((uint64) (uint32) seed));

	return (int) NddHashRange((uint32) (h >> 32), (uint32) k);
}

/*
 * Build a sketch from raw bin minima (MINHASH_EMPTY_VALUE where no element
 * fell), densifying the empty bins.
 */
MinHash *
MinHashFromRaw(const uint32 *raw, int k, MinHashSource source,
			   int shingle_size, int32 seed)
{
	int			nreal = 0;
	MinHash    *mh;

	for (int i = 0; i < k; i++)
		nreal += (raw[i] != MINHASH_EMPTY_VALUE);

	mh = palloc0(MINHASH_SIZE(k, nreal > 0 && nreal < k));
	SET_VARSIZE(mh, MINHASH_SIZE(k, nreal > 0 && nreal < k));
	mh->version = MINHASH_VERSION;
	mh->source = source;
	mh->shingle_size = shingle_size;
	mh->num_perm = k;
	mh->seed = seed;
	memcpy(mh->values, raw, k * sizeof(uint32));

	if (nreal == 0)
		mh->flags |= MINHASH_FLAG_EMPTY;
	else if (nreal < k)
	{
		uint32	   *filled = MINHASH_FILLED_BITMAP(mh);

		mh->flags |= MINHASH_FLAG_FILLED;
		for (int i = 0; i < k; i++)
		{
			uint32		attempt = 0;
			int			j;

			if (raw[i] != MINHASH_EMPTY_VALUE)
				continue;
			for (;;)
			{
				if (attempt < MINHASH_MAX_PROBES(k))
					j = DensifyProbe(i, attempt++, k, seed);
				else
					j = (i + (attempt++ - MINHASH_MAX_PROBES(k)) + 1) % k;
				if (raw[j] != MINHASH_EMPTY_VALUE)
					break;
			}
			mh->values[i] = raw[j];
			filled[i / 32] |= (uint32) 1 << (i % 32);
		}
	}
	return mh;
}

/* Error out unless both sketches were made the same way. */
void
MinHashCheckCompatible(const MinHash *a, const MinHash *b)
{
	if (a->num_perm != b->num_perm || a->source != b->source ||
		a->shingle_size != b->shingle_size || a->seed != b->seed ||
		a->version != b->version)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot compare minhash sketches made with different settings"),
				 errdetail("One was made with %s, the other with %s.",
						   MinHashSettings(a), MinHashSettings(b)),
				 errhint("Make both sketches with the same num_perm, unit, shingle_size and seed.")));
}

/* Estimated Jaccard resemblance: the fraction of agreeing positions. */
double
MinHashSimilarity(const MinHash *a, const MinHash *b)
{
	int			k = a->num_perm;
	int			same = 0;

	MinHashCheckCompatible(a, b);
	if ((a->flags | b->flags) & MINHASH_FLAG_EMPTY)
		return 0.0;
	for (int i = 0; i < k; i++)
		same += (a->values[i] == b->values[i]);
	return (double) same / k;
}

/* ---------------------------------------------------------------------
 * Construction
 * ---------------------------------------------------------------------
 */

typedef struct MinHashBuilder
{
	int			num_perm;
	uint32	   *mins;
} MinHashBuilder;

/* Start a sketch of num_perm empty bins. */
static void
MinHashBuilderInit(MinHashBuilder *b, int num_perm)
{
	NddCheckNumPerm(num_perm);
	b->num_perm = num_perm;
	b->mins = palloc(num_perm * sizeof(uint32));
	memset(b->mins, 0xFF, num_perm * sizeof(uint32));
}

/* One element: its high half picks the bin, its low half competes there. */
static inline void
MinHashBuilderAdd(MinHashBuilder *b, uint64 hash)
{
	uint32		bin = NddHashRange((uint32) (hash >> 32), (uint32) b->num_perm);
	uint32		value = (uint32) hash;
	uint32		min = b->mins[bin];

	/* a store either way, so no branch to mispredict on early shingles */
	b->mins[bin] = value < min ? value : min;
}

/* Add a batch of element hashes (a ShingleHashSink). */
static void
MinHashBuilderAddBatch(void *arg, const uint64 *hashes, int n)
{
	/* a copy in locals: the stores to the bins cannot change it */
	MinHashBuilder b = *(MinHashBuilder *) arg;

	for (int i = 0; i < n; i++)
		MinHashBuilderAdd(&b, hashes[i]);
}

/* minhash_sketch(doc text, num_perm, shingle_size, unit, strip_html, seed) */
PG_FUNCTION_INFO_V1(minhash_sketch_text);
Datum
minhash_sketch_text(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	int32		num_perm = PG_GETARG_INT32(1);
	int32		shingle_size = PG_GETARG_INT32(2);
	char	   *unit = text_to_cstring(PG_GETARG_TEXT_PP(3));
	bool		strip_html = PG_GETARG_BOOL(4);
	int32		seed = PG_GETARG_INT32(5);
	ShingleConfig cfg;
	MinHashBuilder b;

	ShingleConfigInit(&cfg, unit, shingle_size, strip_html, (uint64) (uint32) seed);
	MinHashBuilderInit(&b, num_perm);
	ShingleHashes(VARDATA_ANY(doc), VARSIZE_ANY_EXHDR(doc), &cfg,
				  MinHashBuilderAddBatch, &b);
	PG_RETURN_MINHASH_P(MinHashFromRaw(b.mins, num_perm,
									   cfg.unit == SHINGLE_UNIT_CHAR ?
									   MINHASH_SOURCE_CHAR : MINHASH_SOURCE_WORD,
									   shingle_size, seed));
}

/* minhash_sketch(elements text[] | bigint[], num_perm, seed): a set as given */
PG_FUNCTION_INFO_V1(minhash_sketch_array);
Datum
minhash_sketch_array(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	int32		num_perm = PG_GETARG_INT32(1);
	int32		seed = PG_GETARG_INT32(2);
	Oid			elemtype = ARR_ELEMTYPE(arr);
	MinHashBuilder b;

	MinHashBuilderInit(&b, num_perm);
	ElementHashes(arr, "elements", (uint64) (uint32) seed,
				  MinHashBuilderAddBatch, &b);
	PG_RETURN_MINHASH_P(MinHashFromRaw(b.mins, num_perm,
									   elemtype == INT8OID ?
									   MINHASH_SOURCE_BIGINT : MINHASH_SOURCE_TEXT,
									   1, seed));
}

/* ---------------------------------------------------------------------
 * Text and binary I/O
 *
 * Text form: v1,num_perm=128,unit=word,shingle_size=5,seed=0:VALUES[:FILLED]
 * VALUES is K values of 8 hex digits; FILLED, present only when some
 * positions were filled by densification, is the bitmap as K/32 words of 8
 * hex digits.  A sketch of no elements has "empty" as its VALUES.
 *
 * Input, text or binary, takes only values that the sketch functions can
 * make, since similarity, containment, union and the index trust them: a
 * plain sketch is what densifying its real positions gives (MinHashFromRaw),
 * a weighted one holds a rank at every position (weighted_minhash.c, "What a
 * sketch holds").
 * ---------------------------------------------------------------------
 */

/* Append n words as 8 lower-case hex digits each. */
static void
AppendHexWords(StringInfo buf, const uint32 *words, int n)
{
	static const char hex[] = "0123456789abcdef";

	enlargeStringInfo(buf, n * 8);
	for (int i = 0; i < n; i++)
		for (int shift = 28; shift >= 0; shift -= 4)
			buf->data[buf->len++] = hex[(words[i] >> shift) & 0xF];
	buf->data[buf->len] = '\0';
}

/* minhash_out: the text form above. */
PG_FUNCTION_INFO_V1(minhash_out);
Datum
minhash_out(PG_FUNCTION_ARGS)
{
	MinHash    *mh = PG_GETARG_MINHASH_P(0);
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfo(&buf, "v%d,num_perm=%d,unit=%s,shingle_size=%d,seed=%d:",
					 mh->version, mh->num_perm, MinHashSourceName(mh->source),
					 mh->shingle_size, mh->seed);
	if (mh->flags & MINHASH_FLAG_EMPTY)
		appendStringInfoString(&buf, "empty");
	else
	{
		AppendHexWords(&buf, mh->values, mh->num_perm);
		if (mh->flags & MINHASH_FLAG_FILLED)
		{
			appendStringInfoChar(&buf, ':');
			AppendHexWords(&buf, MINHASH_FILLED_BITMAP(mh),
						   MINHASH_BITMAP_WORDS(mh->num_perm));
		}
	}
	PG_RETURN_CSTRING(buf.data);
}

#define MINHASH_SYNTAX_ERROR(input, ...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION), \
			 errmsg("invalid input syntax for type minhash: \"%s\"", input), \
			 errdetail(__VA_ARGS__)))

/* Parse "name=<integer>" followed by the given terminator. */
static long
ParseField(const char *input, const char **p, const char *name, char terminator)
{
	size_t		nl = strlen(name);
	char	   *end;
	long		v;

	if (strncmp(*p, name, nl) != 0 || (*p)[nl] != '=')
		MINHASH_SYNTAX_ERROR(input, "Expected \"%s=\" at character %d.",
							 name, (int) (*p - input) + 1);
	*p += nl + 1;
	errno = 0;
	v = strtol(*p, &end, 10);
	if (end == *p || errno != 0 || *end != terminator || v < PG_INT32_MIN || v > PG_INT32_MAX)
		MINHASH_SYNTAX_ERROR(input, "Invalid value of %s at character %d.",
							 name, (int) (*p - input) + 1);
	*p = end + 1;
	return v;
}

/* Parse n words of 8 hex digits. */
static void
ParseHexWords(const char *input, const char **p, uint32 *words, int n, const char *what)
{
	for (int i = 0; i < n; i++)
	{
		uint32		w = 0;

		for (int d = 0; d < 8; d++)
		{
			char		c = (*p)[0];
			int			v;

			if (c >= '0' && c <= '9')
				v = c - '0';
			else if (c >= 'a' && c <= 'f')
				v = c - 'a' + 10;
			else if (c >= 'A' && c <= 'F')
				v = c - 'A' + 10;
			else
				MINHASH_SYNTAX_ERROR(input, "The %s must be %d groups of 8 hexadecimal digits; character %d is not one.",
									 what, n, (int) (*p - input) + 1);
			w = (w << 4) | v;
			(*p)++;
		}
		words[i] = w;
	}
}

/* Check the header fields that text and binary input share. */
static void
CheckHeader(const char *input, int version, int num_perm, int source, int shingle_size)
{
	if (version != MINHASH_VERSION)
		MINHASH_SYNTAX_ERROR(input, "Unsupported minhash format version %d.", version);
	/* a literal's fields are its syntax: 22P02, the detail NddCheckNumPerm's */
	if (!NddNumPermIsValid(num_perm))
		MINHASH_SYNTAX_ERROR(input, "num_perm must be between %d and %d.",
							 NDD_NUM_PERM_MIN, NDD_NUM_PERM_MAX);
	if (source < MINHASH_SOURCE_FIRST || source > MINHASH_SOURCE_LAST)
		MINHASH_SYNTAX_ERROR(input, "unit must be word, char, text, bigint, weighted_word, weighted_char, weighted_text or weighted_bigint.");
	if (MinHashSourceIsArray(source) ? shingle_size != 1 :
		(shingle_size < NDD_SHINGLE_SIZE_MIN || shingle_size > NDD_SHINGLE_SIZE_MAX))
		MINHASH_SYNTAX_ERROR(input, "shingle_size must be between %d and %d, and 1 for arrays.",
							 NDD_SHINGLE_SIZE_MIN, NDD_SHINGLE_SIZE_MAX);
}

/* Is position i marked in a filled bitmap? */
static inline bool
BitmapHas(const uint32 *bitmap, int i)
{
	return (bitmap[i / 32] >> (i % 32)) & 1;
}

/*
 * The highest rank a weighted sketch can hold: ranks lie below a bound that
 * starts at 1 / (total weight), at most 1 / WEIGHT_MIN, and doubles at most
 * MAX_ROUNDS - 1 times; rounding to float4 keeps them at most this.
 */
static float4
WeightedRankMax(void)
{
	return (float4) ldexp(1.0 / WEIGHTED_MINHASH_WEIGHT_MIN,
						  WEIGHTED_MINHASH_MAX_ROUNDS - 1);
}

/*
 * Error out unless a weighted sketch's values are ranks: normal positive
 * float4 (the lowest rank is far above FLT_MIN for any weights) no larger
 * than WeightedRankMax().  Negative, zero, NaN or infinite ranks would make
 * containment() and the union wrong.
 */
static void
CheckRanks(const char *input, int num_perm, const uint32 *values)
{
	float4		max = WeightedRankMax();

	for (int i = 0; i < num_perm; i++)
	{
		float4		r;

		memcpy(&r, &values[i], sizeof(r));
		/* NaN fails both */
		if (!(r >= FLT_MIN && r <= max))
			MINHASH_SYNTAX_ERROR(input, "Value %d of a weighted sketch is %08x, the float4 %g: a rank is a float4 from %g to %g.",
								 i + 1, values[i], r, FLT_MIN, max);
	}
}

/*
 * Rebuild a sketch from its parts, refusing what no sketch function makes.
 * A filled bitmap lies within K and leaves a real position.  A weighted
 * sketch fills none and holds ranks.  A plain one is what densifying its
 * real positions gives: no real position holds MINHASH_EMPTY_VALUE (a bin
 * no element reached) and each filled one holds the value densification
 * copies there.
 */
static MinHash *
MinHashAssemble(const char *input, int num_perm, int source, int shingle_size,
				int32 seed, bool empty, const uint32 *values, const uint32 *filled)
{
	bool		weighted = MinHashSourceIsWeighted(source);
	uint32	   *raw = palloc(num_perm * sizeof(uint32));
	int			nfilled = 0;
	MinHash    *mh;

	if (filled && num_perm % 32 != 0 &&
		(filled[num_perm / 32] >> (num_perm % 32)) != 0)
		MINHASH_SYNTAX_ERROR(input, "The filled bitmap has bits beyond num_perm.");
	for (int i = 0; i < num_perm; i++)
	{
		bool		is_filled = filled != NULL && BitmapHas(filled, i);

		nfilled += is_filled;
		raw[i] = (empty || is_filled) ? MINHASH_EMPTY_VALUE : values[i];
	}
	if (nfilled == num_perm)
		MINHASH_SYNTAX_ERROR(input, "The filled bitmap leaves no real position.");
	if (!empty && weighted)
	{
		if (nfilled > 0)
			MINHASH_SYNTAX_ERROR(input, "A weighted sketch has no filled positions: each holds a rank.");
		CheckRanks(input, num_perm, values);
	}
	else if (!empty)
	{
		for (int i = 0; i < num_perm; i++)
			if (values[i] == MINHASH_EMPTY_VALUE && !(filled && BitmapHas(filled, i)))
				MINHASH_SYNTAX_ERROR(input, "Value %d is ffffffff, the mark of a bin no element reached, but is not marked as filled.",
									 i + 1);
	}
	mh = MinHashFromRaw(raw, num_perm, source, shingle_size, seed);
	/* only a filled position can differ: densification chose its value */
	for (int i = 0; i < num_perm && !empty; i++)
		if (mh->values[i] != values[i])
			MINHASH_SYNTAX_ERROR(input, "Value %d is filled and is %08x, but densification fills it with %08x.",
								 i + 1, values[i], mh->values[i]);
	pfree(raw);
	return mh;
}

/* minhash_in: the text form above, every field checked. */
PG_FUNCTION_INFO_V1(minhash_in);
Datum
minhash_in(PG_FUNCTION_ARGS)
{
	const char *input = PG_GETARG_CSTRING(0);
	const char *p = input;
	long		version;
	long		num_perm;
	long		shingle_size;
	long		seed;
	int			source;
	const char *comma;
	uint32	   *values = NULL;
	uint32	   *filled = NULL;
	bool		empty = false;

	if (*p != 'v')
		MINHASH_SYNTAX_ERROR(input, "A minhash starts with its format version, as in \"v1,\".");
	p++;
	{
		char	   *end;

		errno = 0;
		version = strtol(p, &end, 10);
		if (end == p || *end != ',' || errno != 0)
			MINHASH_SYNTAX_ERROR(input, "A minhash starts with its format version, as in \"v1,\".");
		p = end + 1;
	}
	num_perm = ParseField(input, &p, "num_perm", ',');
	if (strncmp(p, "unit=", 5) != 0 || (comma = strchr(p, ',')) == NULL)
		MINHASH_SYNTAX_ERROR(input, "Expected \"unit=\" at character %d.", (int) (p - input) + 1);
	source = MinHashSourceFromName(p + 5, comma - p - 5);
	p = comma + 1;
	shingle_size = ParseField(input, &p, "shingle_size", ',');
	seed = ParseField(input, &p, "seed", ':');
	CheckHeader(input, version, num_perm, source, shingle_size);

	if (strcmp(p, "empty") == 0)
		empty = true;
	else
	{
		values = palloc(num_perm * sizeof(uint32));
		ParseHexWords(input, &p, values, num_perm, "values");
		if (*p == ':')
		{
			p++;
			filled = palloc(MINHASH_BITMAP_WORDS(num_perm) * sizeof(uint32));
			ParseHexWords(input, &p, filled, MINHASH_BITMAP_WORDS(num_perm), "filled bitmap");
		}
		if (*p != '\0')
			MINHASH_SYNTAX_ERROR(input, "Unexpected character at %d.", (int) (p - input) + 1);
	}
	PG_RETURN_MINHASH_P(MinHashAssemble(input, num_perm, source, shingle_size,
										(int32) seed, empty, values, filled));
}

/* Binary form: the header fields, the values, then the bitmap if any. */
PG_FUNCTION_INFO_V1(minhash_send);
Datum
minhash_send(PG_FUNCTION_ARGS)
{
	MinHash    *mh = PG_GETARG_MINHASH_P(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbyte(&buf, mh->version);
	pq_sendbyte(&buf, mh->source);
	pq_sendbyte(&buf, mh->shingle_size);
	pq_sendbyte(&buf, mh->flags);
	pq_sendint16(&buf, mh->num_perm);
	pq_sendint32(&buf, mh->seed);
	for (int i = 0; i < mh->num_perm; i++)
		pq_sendint32(&buf, mh->values[i]);
	if (mh->flags & MINHASH_FLAG_FILLED)
		for (int i = 0; i < MINHASH_BITMAP_WORDS(mh->num_perm); i++)
			pq_sendint32(&buf, MINHASH_FILLED_BITMAP(mh)[i]);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* Binary input: checked as minhash_in checks the text form. */
PG_FUNCTION_INFO_V1(minhash_recv);
Datum
minhash_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	const char *what = "(binary)";
	int			version = pq_getmsgbyte(buf);
	int			source = pq_getmsgbyte(buf);
	int			shingle_size = pq_getmsgbyte(buf);
	int			flags = pq_getmsgbyte(buf);
	int			num_perm = (uint16) pq_getmsgint(buf, 2);
	int32		seed = (int32) pq_getmsgint(buf, 4);
	uint32	   *values;
	uint32	   *filled = NULL;

	CheckHeader(what, version, num_perm, source, shingle_size);
	if ((flags & ~(MINHASH_FLAG_EMPTY | MINHASH_FLAG_FILLED)) != 0 ||
		flags == (MINHASH_FLAG_EMPTY | MINHASH_FLAG_FILLED))
		MINHASH_SYNTAX_ERROR(what, "Invalid flags %d.", flags);
	values = palloc(num_perm * sizeof(uint32));
	for (int i = 0; i < num_perm; i++)
		values[i] = (uint32) pq_getmsgint(buf, 4);
	if (flags & MINHASH_FLAG_FILLED)
	{
		filled = palloc(MINHASH_BITMAP_WORDS(num_perm) * sizeof(uint32));
		for (int i = 0; i < MINHASH_BITMAP_WORDS(num_perm); i++)
			filled[i] = (uint32) pq_getmsgint(buf, 4);
	}
	PG_RETURN_MINHASH_P(MinHashAssemble(what, num_perm, source, shingle_size, seed,
										(flags & MINHASH_FLAG_EMPTY) != 0,
										values, filled));
}

/* ---------------------------------------------------------------------
 * Similarity and operators
 * ---------------------------------------------------------------------
 */

/* similarity(a, b): the estimated Jaccard resemblance */
PG_FUNCTION_INFO_V1(minhash_similarity);
Datum
minhash_similarity(PG_FUNCTION_ARGS)
{
	MinHash    *a = PG_GETARG_MINHASH_P(0);
	MinHash    *b = PG_GETARG_MINHASH_P(1);

	PG_RETURN_FLOAT8(MinHashSimilarity(a, b));
}

/* ---------------------------------------------------------------------
 * Containment from two sketches
 *
 * C(Q, D) = |Q ∩ D| / |Q| = J (|Q| + |D|) / ((1 + J) |Q|): the resemblance
 * and both sizes.  A sketch carries its set's size: each real position of a
 * plain sketch holds the least of the bin's 32-bit values, uniform in
 * [0, 1) once scaled, so with n elements in K bins each position is an
 * exponential of rate n / K cut off at 1 (an empty bin, filled by
 * densification, counts as the cut-off); a weighted sketch's positions are
 * the lowest ranks, exponentials of rate T W / K (weighted_minhash.c).  The
 * rate is estimated as (positions seen - 1) / (sum of what they hold).
 * ---------------------------------------------------------------------
 */

/*
 * Darts of intensity T per unit of area (weight x rank) for K positions:
 * K (ln K + 3), with ln K rounded up to ln 2 times a whole number of bits so
 * that T is the same double on every machine (the geometry of the cells
 * depends on it; libm's log may differ in its last bit).
 */
double
WeightedMinHashIntensity(int k)
{
	int			bits = 0;

	while ((1 << bits) < k)
		bits++;
	return k * (bits * 0.6931471805599453 + 3.0);
}

/* The estimated size of a sketch's set (its total weight, if weighted). */
static double
MinHashSetSize(const MinHash *mh)
{
	int			k = mh->num_perm;
	int			seen = 0;
	double		exposure = 0.0;
	bool		weighted = MinHashSourceIsWeighted(mh->source);

	if (mh->flags & MINHASH_FLAG_EMPTY)
		return 0.0;
	for (int i = 0; i < k; i++)
	{
		if (MINHASH_IS_FILLED(mh, i))
			exposure += 1.0;
		else if (weighted)
		{
			float4		r;

			memcpy(&r, &mh->values[i], sizeof(r));
			exposure += r;
			seen++;
		}
		else
		{
			exposure += ((double) mh->values[i] + 0.5) / 4294967296.0;
			seen++;
		}
	}
	if (seen < 2)
		return (double) seen;
	if (weighted)
		return k * ((seen - 1) / exposure) / WeightedMinHashIntensity(k);
	return k * ((seen - 1) / exposure);
}

/* containment(query, doc): estimated |Q ∩ D| / |Q| (0 for an empty query) */
PG_FUNCTION_INFO_V1(minhash_containment);
Datum
minhash_containment(PG_FUNCTION_ARGS)
{
	MinHash    *q = PG_GETARG_MINHASH_P(0);
	MinHash    *d = PG_GETARG_MINHASH_P(1);
	double		j = MinHashSimilarity(q, d);
	double		nq = MinHashSetSize(q);
	double		nd = MinHashSetSize(d);
	double		c;

	if (nq <= 0.0 || j <= 0.0)
		PG_RETURN_FLOAT8(0.0);
	c = j * (nq + nd) / ((1.0 + j) * nq);
	PG_RETURN_FLOAT8(Min(c, 1.0));
}

/* a % b: similarity at least ndd.similarity_threshold */
PG_FUNCTION_INFO_V1(minhash_similarity_op);
Datum
minhash_similarity_op(PG_FUNCTION_ARGS)
{
	MinHash    *a = PG_GETARG_MINHASH_P(0);
	MinHash    *b = PG_GETARG_MINHASH_P(1);

	PG_RETURN_BOOL(MinHashSimilarity(a, b) >= ndd_similarity_threshold);
}

/*
 * Read a minhash_query (sketch, threshold): the right operand of
 * minhash % minhash_query, and the query of the index scan it becomes.
 * A NULL field gives NULL: no row matches, as similar() is STRICT, whether
 * a scan or the index answers.
 */
MinHash *
MinHashFromQuery(HeapTupleHeader query, double *threshold)
{
	bool		isnull_sketch,
				isnull_threshold;
	Datum		sketch = GetAttributeByNum(query, 1, &isnull_sketch);
	Datum		t = GetAttributeByNum(query, 2, &isnull_threshold);

	if (isnull_sketch || isnull_threshold)
		return NULL;
	*threshold = DatumGetFloat8(t);
	NddCheckThreshold(*threshold);
	return DatumGetMinHashP(sketch);
}

/* a % (q, t)::minhash_query: similarity(a, q) >= t */
PG_FUNCTION_INFO_V1(minhash_similar_query_op);
Datum
minhash_similar_query_op(PG_FUNCTION_ARGS)
{
	MinHash    *a = PG_GETARG_MINHASH_P(0);
	double		threshold;
	MinHash    *q = MinHashFromQuery(PG_GETARG_HEAPTUPLEHEADER(1), &threshold);

	if (q == NULL)
		PG_RETURN_NULL();
	PG_RETURN_BOOL(MinHashSimilarity(a, q) >= threshold);
}

/*
 * similar(a, b, threshold): similarity(a, b) >= threshold, IMMUTABLE; its
 * planner support function (minhash_gin.c) turns it into % minhash_query
 */
PG_FUNCTION_INFO_V1(minhash_similar);
Datum
minhash_similar(PG_FUNCTION_ARGS)
{
	MinHash    *a = PG_GETARG_MINHASH_P(0);
	MinHash    *b = PG_GETARG_MINHASH_P(1);
	double		threshold = PG_GETARG_FLOAT8(2);

	NddCheckThreshold(threshold);
	PG_RETURN_BOOL(MinHashSimilarity(a, b) >= threshold);
}

/* a <-> b: 1 - similarity */
PG_FUNCTION_INFO_V1(minhash_similarity_dist);
Datum
minhash_similarity_dist(PG_FUNCTION_ARGS)
{
	MinHash    *a = PG_GETARG_MINHASH_P(0);
	MinHash    *b = PG_GETARG_MINHASH_P(1);

	PG_RETURN_FLOAT8(1.0 - MinHashSimilarity(a, b));
}

/*
 * minhash_settings(minhash, OUT num_perm, OUT unit, OUT shingle_size,
 * OUT seed): how a sketch was made, for SQL that must shingle text the same way
 */
PG_FUNCTION_INFO_V1(minhash_settings_record);
Datum
minhash_settings_record(PG_FUNCTION_ARGS)
{
	MinHash    *mh = PG_GETARG_MINHASH_P(0);
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = Int32GetDatum(mh->num_perm);
	values[1] = CStringGetTextDatum(MinHashSourceName(mh->source));
	values[2] = Int32GetDatum(mh->shingle_size);
	values[3] = Int32GetDatum(mh->seed);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}

/* minhash_settings(minhash) RETURNS text, as ndd 0.1 declares it */
PG_FUNCTION_INFO_V1(minhash_settings);
Datum
minhash_settings(PG_FUNCTION_ARGS)
{
	MinHash    *mh = PG_GETARG_MINHASH_P(0);

	PG_RETURN_TEXT_P(cstring_to_text(MinHashSettings(mh)));
}

/* ---------------------------------------------------------------------
 * Low bits: a 2-bit-per-position summary for pruning candidate pairs
 * ---------------------------------------------------------------------
 *
 * Positions whose values agree also agree on their low two bits, so the
 * number of agreeing 2-bit codes is never below the number of agreeing
 * values: a pair whose codes agree on fewer than m positions cannot reach
 * similarity m / K.  Unrelated positions agree by chance one time in four,
 * so the test discards most pairs below the threshold from 32 bytes instead
 * of the whole sketch (b-bit minwise hashing, Li and Koenig, 2010, used as
 * a bound rather than as an estimator).
 */

/* The low 2 bits of each position, packed: MINHASH_LOWBITS_WORDS words. */
void
MinHashLowbits(const MinHash *mh, uint64 *words)
{
	int			k = mh->num_perm;

	for (int w = 0; w < MINHASH_LOWBITS_WORDS(k); w++)
	{
		uint64		word = 0;

		for (int i = w * 32; i < k && i < (w + 1) * 32; i++)
			word |= (uint64) (mh->values[i] & 3) << (2 * (i % 32));
		words[w] = word;
	}
}

/* minhash_lowbits(sketch): the low 2 bits of each position, packed */
PG_FUNCTION_INFO_V1(minhash_lowbits);
Datum
minhash_lowbits(PG_FUNCTION_ARGS)
{
	MinHash    *mh = PG_GETARG_MINHASH_P(0);
	int			nwords = MINHASH_LOWBITS_WORDS(mh->num_perm);
	uint64	   *words = palloc(nwords * sizeof(uint64));
	bytea	   *out = palloc(VARHDRSZ + nwords * sizeof(uint64));

	SET_VARSIZE(out, VARHDRSZ + nwords * sizeof(uint64));
	MinHashLowbits(mh, words);
	/* unaligned: VARDATA is 4 bytes into an 8-byte aligned palloc */
	memcpy(VARDATA(out), words, nwords * sizeof(uint64));
	PG_RETURN_BYTEA_P(out);
}

/* minhash_lowbits_agreement(a, b): positions whose 2-bit codes agree */
PG_FUNCTION_INFO_V1(minhash_lowbits_agreement);
Datum
minhash_lowbits_agreement(PG_FUNCTION_ARGS)
{
	bytea	   *a = PG_GETARG_BYTEA_PP(0);
	bytea	   *b = PG_GETARG_BYTEA_PP(1);
	Size		len = VARSIZE_ANY_EXHDR(a);
	int			differing = 0;
	int			codes;

	if (len != VARSIZE_ANY_EXHDR(b) || len % sizeof(uint64) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("low bits of sketches of different sizes cannot be compared")));
	for (Size i = 0; i < len / sizeof(uint64); i++)
	{
		uint64		x,
					y;

		/* unaligned: short varlena headers */
		memcpy(&x, VARDATA_ANY(a) + i * sizeof(uint64), sizeof(uint64));
		memcpy(&y, VARDATA_ANY(b) + i * sizeof(uint64), sizeof(uint64));
		differing += MinHashLowbitsDiffering(x, y);
	}
	codes = (int) (len / sizeof(uint64)) * 32;
	PG_RETURN_INT32(codes - differing);
}
