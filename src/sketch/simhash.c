/*
 * simhash.c
 *		The simhash type: construction, text and binary I/O, casts, Hamming
 *		distance, the % and <-> operators, btree and hash support, and the
 *		planner's selectivity estimates for %.
 *
 * Charikar's fingerprint
 * ----------------------
 * Every feature of a document (a shingle, by default; docs/simhash.md has
 * the measurement that chose which) has a 64-bit hash.  Each feature votes
 * on each of the 64 bits: +w where its hash has a one, -w where it has a
 * zero.
 * The sign of the total gives the bit (a tie gives zero).  Two documents
 * whose weighted feature vectors make an angle theta disagree on each bit
 * with probability theta / pi, so the Hamming distance d between
 * fingerprints estimates the cosine similarity as cos(pi * d / 64).
 *
 * From text the weight is the term frequency: a feature hashed k times votes
 * k times.  Counting votes one bit at a time costs 64 steps per feature; we
 * count eight bits at once instead, adding for each byte of the hash a word
 * whose eight byte lanes are that byte's bits (SWAR), and flush the lanes to
 * wide counters before any of them can overflow.  Caller-supplied weights
 * (tf-idf) take the plain double-precision route.
 *
 * Bit order: bit i of the fingerprint is bit i of the 64-bit value.  The
 * text form is that value in 16 hex digits, most significant first; the
 * bigint cast reinterprets it as two's complement, and the bit(64) cast
 * writes it most significant bit first, so all three forms agree.  Sorting
 * (btree) is by the unsigned value, which is the order of the text form.
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/sortsupport.h"
#include "utils/varbit.h"

#include "base/ndd_limits.h"
#include "sketch/simhash.h"
#include "text/shingle.h"

/* ndd.hamming_threshold: the distance of % (registered by ndd.c) */
int			ndd_hamming_threshold = NDD_HAMMING_THRESHOLD_DEFAULT;

/* ---------------------------------------------------------------------
 * Text and binary I/O
 * ---------------------------------------------------------------------
 */

static const char simhash_hex[] = "0123456789abcdef";

/* The value of a hex digit, or -1. */
static inline int
HexValue(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * A literal that is not a fingerprint is most likely a document: simhash('a
 * literal') is read as a cast, not as a call of simhash(doc text).
 */
#define SIMHASH_SYNTAX_ERROR(input, ...) \
	ereport(ERROR, \
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION), \
			 errmsg("invalid input syntax for type simhash: \"%s\"", input), \
			 errdetail(__VA_ARGS__), \
			 errhint("To fingerprint a document given as a literal, write simhash('...'::text) or simhash(doc => '...').")))

/* simhash_in: exactly 16 hex digits, blanks around them allowed */
PG_FUNCTION_INFO_V1(simhash_in);
Datum
simhash_in(PG_FUNCTION_ARGS)
{
	const char *input = PG_GETARG_CSTRING(0);
	const char *p = input;
	SimHash		v = 0;
	int			ndigits = 0;

	while (isspace((unsigned char) *p))
		p++;
	for (; *p != '\0' && !isspace((unsigned char) *p); p++)
	{
		int			d = HexValue(*p);

		if (d < 0)
			SIMHASH_SYNTAX_ERROR(input, "Character %d is not a hexadecimal digit.",
								 (int) (p - input) + 1);
		if (ndigits == 16)
			SIMHASH_SYNTAX_ERROR(input, "A simhash is 16 hexadecimal digits; there are more.");
		v = (v << 4) | (SimHash) d;
		ndigits++;
	}
	while (isspace((unsigned char) *p))
		p++;
	if (*p != '\0')
		SIMHASH_SYNTAX_ERROR(input, "Unexpected character at %d.", (int) (p - input) + 1);
	if (ndigits != 16)
		SIMHASH_SYNTAX_ERROR(input, "A simhash is 16 hexadecimal digits; there are %d.", ndigits);
	PG_RETURN_SIMHASH(v);
}

/* simhash_out: 16 lower-case hex digits, most significant first. */
PG_FUNCTION_INFO_V1(simhash_out);
Datum
simhash_out(PG_FUNCTION_ARGS)
{
	SimHash		v = PG_GETARG_SIMHASH(0);
	char	   *out = palloc(17);

	for (int i = 0; i < 16; i++)
		out[i] = simhash_hex[(v >> (60 - 4 * i)) & 0xF];
	out[16] = '\0';
	PG_RETURN_CSTRING(out);
}

/* Binary form: the value as a big-endian int8. */
PG_FUNCTION_INFO_V1(simhash_send);
Datum
simhash_send(PG_FUNCTION_ARGS)
{
	SimHash		v = PG_GETARG_SIMHASH(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, v);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* Any 64 bits are a fingerprint; the caller checks that nothing is left. */
PG_FUNCTION_INFO_V1(simhash_recv);
Datum
simhash_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);

	PG_RETURN_SIMHASH((SimHash) pq_getmsgint64(buf));
}

/* ---------------------------------------------------------------------
 * Casts
 * ---------------------------------------------------------------------
 */

/* simhash::bigint: the same 64 bits, two's complement. */
PG_FUNCTION_INFO_V1(simhash_to_bigint);
Datum
simhash_to_bigint(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) PG_GETARG_SIMHASH(0));
}

/* bigint::simhash: the same 64 bits. */
PG_FUNCTION_INFO_V1(simhash_from_bigint);
Datum
simhash_from_bigint(PG_FUNCTION_ARGS)
{
	PG_RETURN_SIMHASH((SimHash) PG_GETARG_INT64(0));
}

/* bit(64), most significant bit first */
PG_FUNCTION_INFO_V1(simhash_to_bit);
Datum
simhash_to_bit(PG_FUNCTION_ARGS)
{
	SimHash		v = PG_GETARG_SIMHASH(0);
	VarBit	   *result = palloc0(VARBITTOTALLEN(NDD_SIMHASH_BITS));

	SET_VARSIZE(result, VARBITTOTALLEN(NDD_SIMHASH_BITS));
	VARBITLEN(result) = NDD_SIMHASH_BITS;
	for (int i = 0; i < 8; i++)
		VARBITS(result)[i] = (bits8) (v >> (56 - 8 * i));
	PG_RETURN_VARBIT_P(result);
}

/* bit(64)::simhash, most significant bit first; other lengths are errors. */
PG_FUNCTION_INFO_V1(simhash_from_bit);
Datum
simhash_from_bit(PG_FUNCTION_ARGS)
{
	VarBit	   *b = PG_GETARG_VARBIT_P(0);
	SimHash		v = 0;

	if (VARBITLEN(b) != NDD_SIMHASH_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_STRING_DATA_LENGTH_MISMATCH),
				 errmsg("bit string length %d does not match type simhash",
						VARBITLEN(b)),
				 errdetail("A simhash has exactly 64 bits.")));
	for (int i = 0; i < 8; i++)
		v = (v << 8) | VARBITS(b)[i];
	PG_RETURN_SIMHASH(v);
}

/* ---------------------------------------------------------------------
 * Construction
 * ---------------------------------------------------------------------
 */

/* Hashes counted in byte lanes before the lanes could overflow. */
#define SIMHASH_LANE_LIMIT	255

/* byte i of byte_spread[v] is bit i of v */
static uint64 byte_spread[256];
static bool byte_spread_ready = false;

/* Term-frequency votes: how many hashes had a one at each bit. */
typedef struct SimHashVotes
{
	uint64		lanes[8];		/* byte i of lanes[j]: ones at bit 8j + i
								 * since the last flush */
	int			pending;		/* hashes since the last flush */
	uint64		ones[NDD_SIMHASH_BITS];
	uint64		total;
} SimHashVotes;

/* Zero the votes, and fill byte_spread on first use. */
static void
SimHashVotesInit(SimHashVotes *votes)
{
	if (!byte_spread_ready)
	{
		for (int v = 0; v < 256; v++)
		{
			uint64		s = 0;

			for (int i = 0; i < 8; i++)
				if (v & (1 << i))
					s |= UINT64CONST(1) << (8 * i);
			byte_spread[v] = s;
		}
		byte_spread_ready = true;
	}
	memset(votes, 0, sizeof(*votes));
}

/* Add the byte lanes into the wide counters and clear them. */
static void
SimHashVotesFlush(SimHashVotes *votes)
{
	for (int j = 0; j < 8; j++)
	{
		for (int i = 0; i < 8; i++)
			votes->ones[8 * j + i] += (votes->lanes[j] >> (8 * i)) & 0xFF;
		votes->lanes[j] = 0;
	}
	votes->pending = 0;
}

/* A batch of feature hashes, one vote each (a ShingleHashSink). */
static void
SimHashVotesAdd(void *arg, const uint64 *hashes, int n)
{
	SimHashVotes *votes = (SimHashVotes *) arg;

	for (int k = 0; k < n; k++)
	{
		uint64		h = hashes[k];

		for (int j = 0; j < 8; j++)
			votes->lanes[j] += byte_spread[(h >> (8 * j)) & 0xFF];
		if (++votes->pending == SIMHASH_LANE_LIMIT)
			SimHashVotesFlush(votes);
	}
	votes->total += n;
}

/* The fingerprint: a one wherever ones outvote zeros. */
static SimHash
SimHashVotesResult(SimHashVotes *votes)
{
	SimHash		v = 0;

	SimHashVotesFlush(votes);
	for (int b = 0; b < NDD_SIMHASH_BITS; b++)
		if (2 * votes->ones[b] > votes->total)
			v |= UINT64CONST(1) << b;
	return v;
}

/* simhash(doc text, shingle_size, unit, strip_html, seed) */
PG_FUNCTION_INFO_V1(simhash_text);
Datum
simhash_text(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	int32		shingle_size = PG_GETARG_INT32(1);
	char	   *unit = text_to_cstring(PG_GETARG_TEXT_PP(2));
	bool		strip_html = PG_GETARG_BOOL(3);
	int32		seed = PG_GETARG_INT32(4);
	ShingleConfig cfg;
	SimHashVotes votes;

	ShingleConfigInit(&cfg, unit, shingle_size, strip_html, (uint64) (uint32) seed);
	SimHashVotesInit(&votes);
	ShingleHashes(VARDATA_ANY(doc), VARSIZE_ANY_EXHDR(doc), &cfg,
				  SimHashVotesAdd, &votes);
	PG_RETURN_SIMHASH(SimHashVotesResult(&votes));
}

/* simhash(features text[] | bigint[], seed): every element votes once */
PG_FUNCTION_INFO_V1(simhash_array);
Datum
simhash_array(PG_FUNCTION_ARGS)
{
	ArrayType  *features = PG_GETARG_ARRAYTYPE_P(0);
	int32		seed = PG_GETARG_INT32(1);
	SimHashVotes votes;

	SimHashVotesInit(&votes);
	ElementHashes(features, "features", (uint64) (uint32) seed,
				  SimHashVotesAdd, &votes);
	PG_RETURN_SIMHASH(SimHashVotesResult(&votes));
}

/* Weighted votes: one weight per feature, in array order. */
typedef struct SimHashWeightedVotes
{
	const float8 *weights;
	int			next;			/* index of the next feature's weight */
	float8		sums[NDD_SIMHASH_BITS];
} SimHashWeightedVotes;

/* Feature hashes, each voting with its weight (a ShingleHashSink). */
static void
SimHashWeightedAdd(void *arg, const uint64 *hashes, int n)
{
	SimHashWeightedVotes *votes = (SimHashWeightedVotes *) arg;

	for (int k = 0; k < n; k++)
	{
		uint64		h = hashes[k];
		float8		w = votes->weights[votes->next++];

		for (int b = 0; b < NDD_SIMHASH_BITS; b++)
			votes->sums[b] += ((h >> b) & 1) ? w : -w;
	}
}

/* simhash(features text[] | bigint[], weights float8[], seed) */
PG_FUNCTION_INFO_V1(simhash_array_weighted);
Datum
simhash_array_weighted(PG_FUNCTION_ARGS)
{
	ArrayType  *features = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *weights = PG_GETARG_ARRAYTYPE_P(1);
	int32		seed = PG_GETARG_INT32(2);
	int			nfeatures;
	int			nweights;
	Datum	   *wdatums;
	SimHashWeightedVotes votes;
	float8	   *w;
	SimHash		v = 0;

	NddCheckOneDimension(features, "features");
	NddCheckOneDimension(weights, "weights");
	nfeatures = ArrayGetNItems(ARR_NDIM(features), ARR_DIMS(features));
	nweights = ArrayGetNItems(ARR_NDIM(weights), ARR_DIMS(weights));
	if (nfeatures != nweights)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("features and weights have different lengths %d and %d",
						nfeatures, nweights),
				 errhint("Give one weight per feature.")));
	NddCheckNoNulls(features, "features");
	NddCheckNoNulls(weights, "weights");
	deconstruct_array(weights, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL,
					  TYPALIGN_DOUBLE, &wdatums, NULL, &nweights);
	w = palloc(Max(nweights, 1) * sizeof(float8));
	for (int i = 0; i < nweights; i++)
	{
		w[i] = DatumGetFloat8(wdatums[i]);
		if (isnan(w[i]) || isinf(w[i]))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("weights must be finite numbers"),
					 errdetail("Weight %d is %s.", i + 1,
							   isnan(w[i]) ? "NaN" : w[i] > 0 ? "Infinity" : "-Infinity")));
	}

	memset(&votes, 0, sizeof(votes));
	votes.weights = w;
	ElementHashes(features, "features", (uint64) (uint32) seed,
				  SimHashWeightedAdd, &votes);
	for (int b = 0; b < NDD_SIMHASH_BITS; b++)
		if (votes.sums[b] > 0)
			v |= UINT64CONST(1) << b;
	PG_RETURN_SIMHASH(v);
}

/* ---------------------------------------------------------------------
 * Distance, similarity and operators
 * ---------------------------------------------------------------------
 */

/* hamming_distance(a, b): bits that differ */
PG_FUNCTION_INFO_V1(hamming_distance);
Datum
hamming_distance(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(SimHashDistance(PG_GETARG_SIMHASH(0), PG_GETARG_SIMHASH(1)));
}

/* Charikar's estimate of the cosine similarity of fingerprints d bits apart */
double
SimHashCosine(int d)
{
	return cos(M_PI * d / NDD_SIMHASH_BITS);
}

/* simhash_cosine(a, b): cos(pi * d / 64) */
PG_FUNCTION_INFO_V1(simhash_cosine);
Datum
simhash_cosine(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(SimHashCosine(SimHashDistance(PG_GETARG_SIMHASH(0), PG_GETARG_SIMHASH(1))));
}

/* a % b: Hamming distance at most ndd.hamming_threshold */
PG_FUNCTION_INFO_V1(simhash_hamming_op);
Datum
simhash_hamming_op(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(SimHashDistance(PG_GETARG_SIMHASH(0), PG_GETARG_SIMHASH(1)) <=
				   ndd_hamming_threshold);
}

/* A distance for similar(): any a fingerprint can have, 0 to 64 bits. */
static void
CheckSimilarDistance(int max_distance)
{
	if (max_distance < NDD_HAMMING_THRESHOLD_MIN || max_distance > NDD_HAMMING_THRESHOLD_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_distance %d is out of range", max_distance),
				 errdetail("max_distance must be between %d and %d.",
						   NDD_HAMMING_THRESHOLD_MIN, NDD_HAMMING_THRESHOLD_MAX)));
}

/*
 * Read a simhash_query (fingerprint, max_distance): the right operand of
 * simhash % simhash_query, and the query of the index scan it becomes.
 * False for a NULL field: no row matches, as similar() is STRICT, whether a
 * scan or an index answers.
 */
bool
SimHashFromQuery(HeapTupleHeader query, SimHash *fingerprint, int *max_distance)
{
	bool		isnull_fp,
				isnull_distance;
	Datum		fp = GetAttributeByNum(query, 1, &isnull_fp);
	Datum		d = GetAttributeByNum(query, 2, &isnull_distance);

	if (isnull_fp || isnull_distance)
		return false;
	*fingerprint = DatumGetSimHash(fp);
	*max_distance = DatumGetInt32(d);
	CheckSimilarDistance(*max_distance);
	return true;
}

/* a % (q, d)::simhash_query: hamming_distance(a, q) <= d */
PG_FUNCTION_INFO_V1(simhash_similar_query_op);
Datum
simhash_similar_query_op(PG_FUNCTION_ARGS)
{
	SimHash		a = PG_GETARG_SIMHASH(0);
	SimHash		q;
	int			max_distance;

	if (!SimHashFromQuery(PG_GETARG_HEAPTUPLEHEADER(1), &q, &max_distance))
		PG_RETURN_NULL();
	PG_RETURN_BOOL(SimHashDistance(a, q) <= max_distance);
}

/*
 * similar(a, b, max_distance): hamming_distance(a, b) <= max_distance,
 * IMMUTABLE; its planner support function (similar_support.c) turns it into
 * % simhash_query, which simhash_ops indexes serve
 */
PG_FUNCTION_INFO_V1(simhash_similar);
Datum
simhash_similar(PG_FUNCTION_ARGS)
{
	int			max_distance = PG_GETARG_INT32(2);

	CheckSimilarDistance(max_distance);
	PG_RETURN_BOOL(SimHashDistance(PG_GETARG_SIMHASH(0), PG_GETARG_SIMHASH(1)) <= max_distance);
}

/* a <-> b: the Hamming distance, for ORDER BY */
PG_FUNCTION_INFO_V1(simhash_hamming_dist);
Datum
simhash_hamming_dist(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(SimHashDistance(PG_GETARG_SIMHASH(0), PG_GETARG_SIMHASH(1)));
}

/* ---------------------------------------------------------------------
 * btree and hash support: order by the unsigned value
 * ---------------------------------------------------------------------
 */

/* An SQL comparison function of two fingerprints: a op b, unsigned. */
#define SIMHASH_COMPARISON(name, op) \
PG_FUNCTION_INFO_V1(name); \
Datum \
name(PG_FUNCTION_ARGS) \
{ \
	PG_RETURN_BOOL(PG_GETARG_SIMHASH(0) op PG_GETARG_SIMHASH(1)); \
}

SIMHASH_COMPARISON(simhash_lt, <)
SIMHASH_COMPARISON(simhash_le, <=)
SIMHASH_COMPARISON(simhash_eq, ==)
SIMHASH_COMPARISON(simhash_ne, !=)
SIMHASH_COMPARISON(simhash_ge, >=)
SIMHASH_COMPARISON(simhash_gt, >)

/* btree support: compare as unsigned 64-bit values. */
PG_FUNCTION_INFO_V1(simhash_cmp);
Datum
simhash_cmp(PG_FUNCTION_ARGS)
{
	SimHash		a = PG_GETARG_SIMHASH(0);
	SimHash		b = PG_GETARG_SIMHASH(1);

	PG_RETURN_INT32(a < b ? -1 : a > b ? 1 : 0);
}

/* btree sort support: the unsigned Datum comparator. */
PG_FUNCTION_INFO_V1(simhash_sortsupport);
Datum
simhash_sortsupport(PG_FUNCTION_ARGS)
{
	SortSupport ssup = (SortSupport) PG_GETARG_POINTER(0);

	ssup->comparator = ssup_datum_unsigned_cmp;
	PG_RETURN_VOID();
}

/* The same hash as the bigint with the same bits. */
PG_FUNCTION_INFO_V1(simhash_hash);
Datum
simhash_hash(PG_FUNCTION_ARGS)
{
	return DirectFunctionCall1(hashint8, PG_GETARG_DATUM(0));
}

/* The same extended hash as the bigint with the same bits. */
PG_FUNCTION_INFO_V1(simhash_hash_extended);
Datum
simhash_hash_extended(PG_FUNCTION_ARGS)
{
	return DirectFunctionCall2(hashint8extended, PG_GETARG_DATUM(0),
							   PG_GETARG_DATUM(1));
}

/* ---------------------------------------------------------------------
 * Selectivity of %
 *
 * Two independent random fingerprints are within t bits with probability
 * sum(C(64, i), i <= t) / 2^64, about 2.4e-15 at t = 3: fingerprints of
 * distinct documents almost never match by chance, and a match is a real
 * near-duplicate.  So % is estimated like equality, one match per distinct
 * value (or per row, without statistics), plus what the most common values
 * say for a constant; never below the chance of a random match.  The
 * generic estimators would answer 1% of the table, or at least 0.01% with
 * statistics: 1,000 rows for a lookup in 10M, and a plan built for them.
 * ---------------------------------------------------------------------
 */

/* Chance that two random fingerprints are within threshold bits. */
static double
SimHashRandomMatchFraction(int threshold)
{
	double		c = 1.0;
	double		sum = 0.0;

	for (int i = 0; i <= threshold && i <= NDD_SIMHASH_BITS; i++)
	{
		sum += c;
		c = c * (NDD_SIMHASH_BITS - i) / (i + 1);
	}
	return ldexp(sum, -NDD_SIMHASH_BITS);
}

/* The share of rows one value matches: one per distinct value. */
static double
SimHashPerValueSelectivity(VariableStatData *vardata)
{
	bool		isdefault;
	double		nd = get_variable_numdistinct(vardata, &isdefault);

	/* without statistics, take fingerprints to be distinct, as they mostly are */
	if (isdefault && vardata->rel && vardata->rel->tuples > 0)
		nd = vardata->rel->tuples;
	return Max(nd >= 1.0 ? 1.0 / nd : 1.0,
			   SimHashRandomMatchFraction(ndd_hamming_threshold));
}

/* RESTRICT estimator of % */
PG_FUNCTION_INFO_V1(simhash_matchsel);
Datum
simhash_matchsel(PG_FUNCTION_ARGS)
{
	PlannerInfo *root = (PlannerInfo *) PG_GETARG_POINTER(0);
	Oid			operator = PG_GETARG_OID(1);
	List	   *args = (List *) PG_GETARG_POINTER(2);
	int			varRelid = PG_GETARG_INT32(3);
	VariableStatData vardata;
	Node	   *other;
	bool		varonleft;
	double		sel;

	if (!get_restriction_variable(root, args, varRelid, &vardata, &other, &varonleft))
		PG_RETURN_FLOAT8(SimHashRandomMatchFraction(ndd_hamming_threshold));

	sel = SimHashPerValueSelectivity(&vardata);
	if (IsA(other, Const) && ((Const *) other)->constisnull)
		sel = 0.0;				/* % is strict */
	else if (IsA(other, Const) && HeapTupleIsValid(vardata.statsTuple))
	{
		Form_pg_statistic stats = (Form_pg_statistic) GETSTRUCT(vardata.statsTuple);
		FmgrInfo	opproc;
		double		mcvsum;
		double		mcvsel;

		fmgr_info(get_opcode(operator), &opproc);
		mcvsel = mcv_selectivity(&vardata, &opproc, InvalidOid,
								 ((Const *) other)->constvalue, varonleft, &mcvsum);
		sel = mcvsel + sel * Max(0.0, 1.0 - stats->stanullfrac - mcvsum);
	}
	ReleaseVariableStats(vardata);
	CLAMP_PROBABILITY(sel);
	PG_RETURN_FLOAT8(sel);
}

/* JOIN estimator of % */
PG_FUNCTION_INFO_V1(simhash_matchjoinsel);
Datum
simhash_matchjoinsel(PG_FUNCTION_ARGS)
{
	PlannerInfo *root = (PlannerInfo *) PG_GETARG_POINTER(0);
	List	   *args = (List *) PG_GETARG_POINTER(2);
	SpecialJoinInfo *sjinfo = (SpecialJoinInfo *) PG_GETARG_POINTER(4);
	VariableStatData vardata1;
	VariableStatData vardata2;
	bool		reversed;
	double		sel;

	get_join_variables(root, args, sjinfo, &vardata1, &vardata2, &reversed);
	sel = Min(SimHashPerValueSelectivity(&vardata1),
			  SimHashPerValueSelectivity(&vardata2));
	ReleaseVariableStats(vardata1);
	ReleaseVariableStats(vardata2);
	CLAMP_PROBABILITY(sel);
	PG_RETURN_FLOAT8(sel);
}
