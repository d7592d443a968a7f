/*
 * minhash_bbit.c
 *		The minhash_bbit type: b-bit minwise hashing as storage.  Construction
 *		from a minhash, text and binary I/O, and similarity() corrected for
 *		accidental b-bit collisions.
 *
 * b-bit minwise hashing
 * ---------------------
 * Li and König (2010, "b-Bit Minwise Hashing") keep only the lowest b bits of
 * each min-wise value.  Two positions whose values agree still agree on their
 * b bits, which happens with probability R, the Jaccard resemblance; two
 * positions whose values differ now also agree, by accident, with probability
 * about 1/2^b.  So the fraction P of agreeing b-bit positions has expectation
 *
 *		E[P] = C1 + (1 - C2) R
 *
 * where C1 and C2 depend on b and on the sets' densities r = |S| / D in the
 * hash space D.  Both tend to 1/2^b as r goes to 0 (the paper's Theorem 1),
 * which gives the simple estimator used here:
 *
 *		R = (P - 1/2^b) / (1 - 1/2^b), clipped to [0, 1]
 *
 * For ndd the densities really are near 0: a sketch position is the minimum
 * of one bin's 32-bit values (one-permutation hashing, minhash.c), so D =
 * 2^32 per bin and a bin holds about |S| / K elements; the density terms of
 * C1 and C2 differ from 1/2^b by O(|S| / (K 2^32)), far below the sampling
 * error for any set PostgreSQL can hold.  The full C1,b / C2,b form is
 * therefore not implemented.  The estimator is unbiased before clipping,
 * with variance P(1 - P) / (K (1 - 1/2^b)^2); clipping at 0 lifts the
 * estimates of nearly disjoint sets a little.
 *
 * At b = 4 and K = 128 the payload is 64 bytes instead of 512, at the price
 * of a larger variance: the trade Li and König recommend for storage and
 * verification.  There is no index over minhash_bbit: LSH needs the full
 * values, since b-bit bands collide by accident too often.
 */
#include "postgres.h"

#include "fmgr.h"
#include "libpq/pqformat.h"
#include "port/pg_bitutils.h"
#include "utils/builtins.h"

#include "base/ndd_limits.h"
#include "sketch/minhash.h"
#include "sketch/minhash_bbit.h"

/* Error out unless b is 1, 2, 4 or 8. */
static void
CheckBits(int bits)
{
	if (!MINHASH_BBIT_BITS_VALID(bits))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("b %d is out of range", bits),
				 errdetail("b must be 1, 2, 4 or 8.")));
}

/* A zeroed value of K fields of b bits, with the header filled in. */
static MinHashBbit *
MinHashBbitAlloc(int num_perm, int bits, int source, int shingle_size,
				 int32 seed, bool empty)
{
	MinHashBbit *mb = palloc0(MINHASH_BBIT_SIZE(num_perm, bits));

	SET_VARSIZE(mb, MINHASH_BBIT_SIZE(num_perm, bits));
	mb->version = MINHASH_BBIT_VERSION;
	mb->source = source;
	mb->shingle_size = shingle_size;
	mb->flags = empty ? MINHASH_BBIT_FLAG_EMPTY : 0;
	mb->num_perm = num_perm;
	mb->bits = bits;
	mb->seed = seed;
	return mb;
}

/* Store the b-bit value v at position i (the field is still zero). */
static inline void
MinHashBbitSet(MinHashBbit *mb, int i, uint32 v)
{
	mb->data[(i * mb->bits) / 8] |= (uint8) (v << ((i * mb->bits) % 8));
}

/* minhash_bbit(sketch, b): the lowest b bits of each position */
PG_FUNCTION_INFO_V1(minhash_bbit);
Datum
minhash_bbit(PG_FUNCTION_ARGS)
{
	MinHash    *mh = PG_GETARG_MINHASH_P(0);
	int32		bits = PG_GETARG_INT32(1);
	bool		empty;
	MinHashBbit *mb;

	CheckBits(bits);
	empty = (mh->flags & MINHASH_FLAG_EMPTY) != 0;
	mb = MinHashBbitAlloc(mh->num_perm, bits, mh->source, mh->shingle_size,
						  mh->seed, empty);
	if (!empty)
		for (int i = 0; i < mh->num_perm; i++)
			MinHashBbitSet(mb, i, mh->values[i] & ((1u << bits) - 1));
	PG_RETURN_MINHASH_BBIT_P(mb);
}

/* "num_perm=128, unit=word, shingle_size=5, seed=0, b=4", for messages */
static char *
MinHashBbitSettings(const MinHashBbit *mb)
{
	return psprintf("%s, b=%d",
					MinHashSettingsString(mb->num_perm, mb->source,
										  mb->shingle_size, mb->seed),
					mb->bits);
}

/* Error out unless both values were made the same way, b included. */
static void
MinHashBbitCheckCompatible(const MinHashBbit *a, const MinHashBbit *b)
{
	if (a->num_perm != b->num_perm || a->bits != b->bits ||
		a->source != b->source || a->shingle_size != b->shingle_size ||
		a->seed != b->seed || a->version != b->version)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot compare minhash_bbit sketches made with different settings"),
				 errdetail("One was made with %s, the other with %s.",
						   MinHashBbitSettings(a), MinHashBbitSettings(b)),
				 errhint("Make both sketches with the same num_perm, unit, shingle_size and seed, and keep the same b.")));
}

/*
 * Fields of b bits that differ in a ^ b, for one 64-bit word: fold each
 * field's bits onto its lowest bit and count those.
 */
static inline int
DifferingFields(uint64 x, int bits)
{
	switch (bits)
	{
		case 1:
			return pg_popcount64(x);
		case 2:
			x |= x >> 1;
			return pg_popcount64(x & UINT64CONST(0x5555555555555555));
		case 4:
			x |= x >> 1;
			x |= x >> 2;
			return pg_popcount64(x & UINT64CONST(0x1111111111111111));
		default:
			x |= x >> 1;
			x |= x >> 2;
			x |= x >> 4;
			return pg_popcount64(x & UINT64CONST(0x0101010101010101));
	}
}

/*
 * Estimated Jaccard resemblance: (P - 1/2^b) / (1 - 1/2^b) clipped to
 * [0, 1], P being the fraction of agreeing b-bit positions; 0 when either
 * sketch is of an empty document.
 */
double
MinHashBbitSimilarity(const MinHashBbit *a, const MinHashBbit *b)
{
	int			k = a->num_perm;
	int			nbytes;
	int			differing = 0;
	double		chance,
				p,
				r;

	MinHashBbitCheckCompatible(a, b);
	if ((a->flags | b->flags) & MINHASH_BBIT_FLAG_EMPTY)
		return 0.0;
	nbytes = MINHASH_BBIT_DATA_BYTES(k, a->bits);
	/* bits past K * b are zero in both: they never differ */
	for (int off = 0; off < nbytes; off += sizeof(uint64))
	{
		uint64		x = 0,
					y = 0;
		int			n = Min((int) sizeof(uint64), nbytes - off);

		memcpy(&x, a->data + off, n);
		memcpy(&y, b->data + off, n);
		differing += DifferingFields(x ^ y, a->bits);
	}
	chance = 1.0 / (double) (1 << a->bits);
	p = (double) (k - differing) / k;
	r = (p - chance) / (1.0 - chance);
	return Max(0.0, Min(1.0, r));
}

/* similarity(a, b): the estimated Jaccard resemblance */
PG_FUNCTION_INFO_V1(minhash_bbit_similarity);
Datum
minhash_bbit_similarity(PG_FUNCTION_ARGS)
{
	MinHashBbit *a = PG_GETARG_MINHASH_BBIT_P(0);
	MinHashBbit *b = PG_GETARG_MINHASH_BBIT_P(1);

	PG_RETURN_FLOAT8(MinHashBbitSimilarity(a, b));
}

/* ---------------------------------------------------------------------
 * Text and binary I/O
 *
 * Text form: v1,num_perm=128,unit=word,shingle_size=5,seed=0,b=4:VALUES
 * VALUES is the K positions in order, each its b-bit value in hexadecimal:
 * one digit for b = 1, 2 or 4 (at most 1, 3 or f), two for b = 8.  A sketch
 * of no elements has "empty" as its VALUES.  Integers are plain decimal
 * (a minus sign only for seed); nothing else, blanks included, is accepted.
 * ---------------------------------------------------------------------
 */

/* Hex digits per position in the text form. */
#define MINHASH_BBIT_DIGITS(b)	((b) > 4 ? 2 : 1)

/* minhash_bbit_out: the text form above */
PG_FUNCTION_INFO_V1(minhash_bbit_out);
Datum
minhash_bbit_out(PG_FUNCTION_ARGS)
{
	MinHashBbit *mb = PG_GETARG_MINHASH_BBIT_P(0);
	static const char hex[] = "0123456789abcdef";
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfo(&buf, "v%d,num_perm=%d,unit=%s,shingle_size=%d,seed=%d,b=%d:",
					 mb->version, mb->num_perm, MinHashSourceName(mb->source),
					 mb->shingle_size, mb->seed, mb->bits);
	if (mb->flags & MINHASH_BBIT_FLAG_EMPTY)
		appendStringInfoString(&buf, "empty");
	else
		for (int i = 0; i < mb->num_perm; i++)
		{
			uint32		v = MINHASH_BBIT_GET(mb, i);

			if (mb->bits > 4)
				appendStringInfoChar(&buf, hex[v >> 4]);
			appendStringInfoChar(&buf, hex[v & 0xF]);
		}
	PG_RETURN_CSTRING(buf.data);
}

#define MINHASH_BBIT_SYNTAX_ERROR(input, ...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION), \
			 errmsg("invalid input syntax for type minhash_bbit: \"%s\"", input), \
			 errdetail(__VA_ARGS__)))

/*
 * Parse "name=<integer>" and the terminator after it: decimal digits, a
 * leading minus only if negative is true, within int32.
 */
static int64
ParseBbitField(const char *input, const char **p, const char *name,
			   bool negative, char terminator)
{
	size_t		nl = strlen(name);
	const char *s;
	int64		v = 0;
	bool		minus = false;
	int			digits = 0;

	if (strncmp(*p, name, nl) != 0 || (*p)[nl] != '=')
		MINHASH_BBIT_SYNTAX_ERROR(input, "Expected \"%s=\" at character %d.",
								  name, (int) (*p - input) + 1);
	s = *p + nl + 1;
	if (negative && *s == '-')
	{
		minus = true;
		s++;
	}
	while (*s >= '0' && *s <= '9' && digits <= 10)
	{
		v = v * 10 + (*s++ - '0');
		digits++;
	}
	if (minus)
		v = -v;
	if (digits == 0 || digits > 10 || *s != terminator ||
		v < PG_INT32_MIN || v > PG_INT32_MAX)
		MINHASH_BBIT_SYNTAX_ERROR(input, "Invalid value of %s at character %d.",
								  name, (int) (*p - input) + (int) nl + 2);
	*p = s + 1;
	return v;
}

/* Check the header fields that text and binary input share. */
static void
CheckBbitHeader(const char *input, int version, int num_perm, int source,
				int shingle_size, int bits)
{
	if (version != MINHASH_BBIT_VERSION)
		MINHASH_BBIT_SYNTAX_ERROR(input, "Unsupported minhash_bbit format version %d.", version);
	if (!NddNumPermIsValid(num_perm))
		MINHASH_BBIT_SYNTAX_ERROR(input, "num_perm must be between %d and %d.",
								  NDD_NUM_PERM_MIN, NDD_NUM_PERM_MAX);
	if (source < MINHASH_SOURCE_FIRST || source > MINHASH_SOURCE_LAST)
		MINHASH_BBIT_SYNTAX_ERROR(input, "unit must be word, char, text, bigint, weighted_word, weighted_char, weighted_text or weighted_bigint.");
	if (MinHashSourceIsArray(source) ? shingle_size != 1 :
		(shingle_size < NDD_SHINGLE_SIZE_MIN || shingle_size > NDD_SHINGLE_SIZE_MAX))
		MINHASH_BBIT_SYNTAX_ERROR(input, "shingle_size must be between %d and %d, and 1 for arrays.",
								  NDD_SHINGLE_SIZE_MIN, NDD_SHINGLE_SIZE_MAX);
	if (!MINHASH_BBIT_BITS_VALID(bits))
		MINHASH_BBIT_SYNTAX_ERROR(input, "b must be 1, 2, 4 or 8.");
}

/* The value of one hexadecimal digit, or -1. */
static inline int
HexDigit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* minhash_bbit_in: the text form above, every field checked */
PG_FUNCTION_INFO_V1(minhash_bbit_in);
Datum
minhash_bbit_in(PG_FUNCTION_ARGS)
{
	const char *input = PG_GETARG_CSTRING(0);
	const char *p = input;
	int64		version,
				num_perm,
				shingle_size,
				seed,
				bits;
	int			source;
	const char *comma;
	bool		empty;
	MinHashBbit *mb;

	if (*p != 'v')
		MINHASH_BBIT_SYNTAX_ERROR(input, "A minhash_bbit starts with its format version, as in \"v1,\".");
	p++;
	version = 0;
	if (*p < '0' || *p > '9')
		MINHASH_BBIT_SYNTAX_ERROR(input, "A minhash_bbit starts with its format version, as in \"v1,\".");
	while (*p >= '0' && *p <= '9' && version <= 255)
		version = version * 10 + (*p++ - '0');
	if (*p++ != ',')
		MINHASH_BBIT_SYNTAX_ERROR(input, "A minhash_bbit starts with its format version, as in \"v1,\".");
	num_perm = ParseBbitField(input, &p, "num_perm", false, ',');
	if (strncmp(p, "unit=", 5) != 0 || (comma = strchr(p, ',')) == NULL)
		MINHASH_BBIT_SYNTAX_ERROR(input, "Expected \"unit=\" at character %d.", (int) (p - input) + 1);
	source = MinHashSourceFromName(p + 5, comma - p - 5);
	p = comma + 1;
	shingle_size = ParseBbitField(input, &p, "shingle_size", false, ',');
	seed = ParseBbitField(input, &p, "seed", true, ',');
	bits = ParseBbitField(input, &p, "b", false, ':');
	CheckBbitHeader(input, (int) version, (int) num_perm, source,
					(int) shingle_size, (int) bits);

	empty = strcmp(p, "empty") == 0;
	mb = MinHashBbitAlloc((int) num_perm, (int) bits, source, (int) shingle_size,
						  (int32) seed, empty);
	if (!empty)
	{
		int			ndigits = MINHASH_BBIT_DIGITS(bits);

		for (int i = 0; i < num_perm; i++)
		{
			uint32		v = 0;

			for (int d = 0; d < ndigits; d++)
			{
				int			h = HexDigit(*p);

				if (h < 0)
					MINHASH_BBIT_SYNTAX_ERROR(input, "The values must be %d hexadecimal digits, %d per position; character %d is not one.",
											  (int) num_perm * ndigits, ndigits, (int) (p - input) + 1);
				v = (v << 4) | h;
				p++;
			}
			if (v >= (1u << bits))
				MINHASH_BBIT_SYNTAX_ERROR(input, "The value ending at character %d does not fit in %d bits.",
										  (int) (p - input), (int) bits);
			MinHashBbitSet(mb, i, v);
		}
		if (*p != '\0')
			MINHASH_BBIT_SYNTAX_ERROR(input, "Unexpected character at %d.", (int) (p - input) + 1);
	}
	PG_RETURN_MINHASH_BBIT_P(mb);
}

/*
 * Binary form: version, unit, shingle_size, flags and b as bytes, num_perm
 * as 2 bytes, seed as 4, then, unless empty, the packed payload as stored.
 */
PG_FUNCTION_INFO_V1(minhash_bbit_send);
Datum
minhash_bbit_send(PG_FUNCTION_ARGS)
{
	MinHashBbit *mb = PG_GETARG_MINHASH_BBIT_P(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbyte(&buf, mb->version);
	pq_sendbyte(&buf, mb->source);
	pq_sendbyte(&buf, mb->shingle_size);
	pq_sendbyte(&buf, mb->flags);
	pq_sendbyte(&buf, mb->bits);
	pq_sendint16(&buf, mb->num_perm);
	pq_sendint32(&buf, mb->seed);
	if (!(mb->flags & MINHASH_BBIT_FLAG_EMPTY))
		pq_sendbytes(&buf, (const char *) mb->data,
					 MINHASH_BBIT_DATA_BYTES(mb->num_perm, mb->bits));
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* Binary input: checked as minhash_bbit_in checks the text form. */
PG_FUNCTION_INFO_V1(minhash_bbit_recv);
Datum
minhash_bbit_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	const char *what = "(binary)";
	int			version = pq_getmsgbyte(buf);
	int			source = pq_getmsgbyte(buf);
	int			shingle_size = pq_getmsgbyte(buf);
	int			flags = pq_getmsgbyte(buf);
	int			bits = pq_getmsgbyte(buf);
	int			num_perm = (uint16) pq_getmsgint(buf, 2);
	int32		seed = (int32) pq_getmsgint(buf, 4);
	bool		empty;
	MinHashBbit *mb;

	CheckBbitHeader(what, version, num_perm, source, shingle_size, bits);
	if ((flags & ~MINHASH_BBIT_FLAG_EMPTY) != 0)
		MINHASH_BBIT_SYNTAX_ERROR(what, "Invalid flags %d.", flags);
	empty = (flags & MINHASH_BBIT_FLAG_EMPTY) != 0;
	mb = MinHashBbitAlloc(num_perm, bits, source, shingle_size, seed, empty);
	if (!empty)
	{
		int			nbytes = MINHASH_BBIT_DATA_BYTES(num_perm, bits);
		int			used = (num_perm * bits) % 8;

		pq_copymsgbytes(buf, (char *) mb->data, nbytes);
		if (used != 0 && (mb->data[nbytes - 1] >> used) != 0)
			MINHASH_BBIT_SYNTAX_ERROR(what, "The payload has bits set past num_perm * b.");
	}
	PG_RETURN_MINHASH_BBIT_P(mb);
}
