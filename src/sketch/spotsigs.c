/*
 * spotsigs.c
 *		SpotSigs (Theobald, Siddharth and Paepcke, 2008): spot signatures of a
 *		document, spotsigs(), and their similarity with the length-ratio
 *		bound, spotsigs_similarity().
 *
 * Spot signatures
 * ---------------
 * Boilerplate (navigation, link lists, footers, ads) is mostly nouns and
 * short phrases, while running text is full of stopwords.  A spot signature
 * starts at an antecedent, a common stopword such as "the" or "is", and
 * chains the next `chain` words that are not stopwords, taking every
 * `distance`-th of them: "... there is a rose in the garden" with chain 2
 * gives is:rose:garden and the:garden:<next>.  Pages that share an article
 * share its spot signatures whatever their boilerplate, which yields few.
 * The signatures' Jaccard resemblance is the SpotSigs similarity.
 *
 * Every word goes through the shared tokenizer (shingle.h), hashed as a
 * 1-word shingle, and so does every element of the antecedent and stopword
 * lists, so "The" in a list matches "the" in a document.  Antecedents are
 * stopwords too: a chain skips them.  A chain cut short by the end of the
 * document gives no signature.
 *
 * The document is read once, in order.  Open signatures wait in a queue for
 * the content words (non-stopwords) they need; the last chain * distance
 * content words are kept in a ring, so memory is bounded by the distinct
 * signatures found.
 *
 * Length-ratio bound: |A ∩ B| <= min(|A|, |B|) and |A ∪ B| >= max(|A|, |B|),
 * so J(A, B) <= min / max.  spotsigs_similarity() skips the merge when the
 * bound is below the caller's threshold.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "base/hash.h"
#include "base/ndd_limits.h"
#include "base/sort_uint64.h"
#include "text/shingle.h"

#define SPOTSIGS_CHAIN_MIN		1
#define SPOTSIGS_CHAIN_MAX		16
#define SPOTSIGS_DISTANCE_MIN	1
#define SPOTSIGS_DISTANCE_MAX	16

/* A sort of signed values that honours query cancel (unsigned: sort_uint64.h). */
#define ST_SORT sort_i64
#define ST_ELEMENT_TYPE int64
#define ST_COMPARE(a, b) (*(a) < *(b) ? -1 : *(a) > *(b) ? 1 : 0)
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/* A growable set of 64-bit values, compacted (sorted, deduplicated) when full. */
typedef struct U64Set
{
	uint64	   *items;
	Size		count;
	Size		capacity;
} U64Set;

static void
U64SetInit(U64Set *set, Size capacity)
{
	set->capacity = capacity;
	set->count = 0;
	set->items = palloc(capacity * sizeof(uint64));
}

/* Sort the set and drop repeats. */
static void
U64SetCompact(U64Set *set)
{
	Size		j = 0;

	SortUint64(set->items, set->count);
	for (Size i = 0; i < set->count; i++)
		if (j == 0 || set->items[i] != set->items[j - 1])
			set->items[j++] = set->items[i];
	set->count = j;
}

static void
U64SetAdd(U64Set *set, uint64 v)
{
	if (set->count == set->capacity)
	{
		U64SetCompact(set);
		if (set->count > set->capacity / 2)
		{
			set->capacity *= 2;
			set->items = repalloc_huge(set->items, set->capacity * sizeof(uint64));
		}
	}
	set->items[set->count++] = v;
}

/* A ShingleHashSink adding every hash to a U64Set. */
static void
U64SetAddBatch(void *arg, const uint64 *hashes, int n)
{
	for (int i = 0; i < n; i++)
		U64SetAdd((U64Set *) arg, hashes[i]);
}

static inline bool
U64SetContains(const U64Set *set, uint64 v)
{
	Size		lo = 0,
				hi = set->count;

	while (lo < hi)
	{
		Size		mid = lo + (hi - lo) / 2;

		if (set->items[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < set->count && set->items[lo] == v;
}

/* The tokenizer settings of SpotSigs: words, one at a time, hashed. */
static void
SpotConfig(ShingleConfig *cfg, bool strip_html)
{
	ShingleConfigInit(cfg, "word", 1, strip_html, 0);
}

/* The hashes of every word of every element of a text[] list, as a set. */
static void
WordListHashes(ArrayType *arr, const char *argname, U64Set *set)
{
	Datum	   *elems;
	int			n;
	ShingleConfig cfg;

	NddCheckNoNulls(arr, argname);
	SpotConfig(&cfg, false);
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &n);
	U64SetInit(set, 64);
	for (int i = 0; i < n; i++)
	{
		text	   *t = DatumGetTextPP(elems[i]);

		CHECK_FOR_INTERRUPTS();
		ShingleHashes(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), &cfg, U64SetAddBatch, set);
	}
	U64SetCompact(set);
}

/* An antecedent waiting for its chain. */
typedef struct OpenSpot
{
	uint64		antecedent;
	int64		start;			/* content words seen before it */
} OpenSpot;

/* The state of one pass over a document. */
typedef struct SpotState
{
	U64Set		antecedents;
	U64Set		stopwords;
	int			chain;
	int			distance;
	int			span;			/* chain * distance */

	int64		content;		/* content words seen */
	uint64		ring[SPOTSIGS_CHAIN_MAX * SPOTSIGS_DISTANCE_MAX];	/* content
																	 * word k
																	 * at k %
																	 * span */
	OpenSpot   *open;			/* queue: open[head .. tail) */
	Size		head;
	Size		tail;
	Size		open_cap;

	U64Set		sigs;
} SpotState;

/* Queue an antecedent, unless the same one waits at the same place. */
static void
SpotOpen(SpotState *s, uint64 antecedent)
{
	for (Size i = s->tail; i > s->head && s->open[i - 1].start == s->content; i--)
		if (s->open[i - 1].antecedent == antecedent)
			return;
	if (s->tail == s->open_cap)
	{
		if (s->head > 0)
		{
			memmove(s->open, s->open + s->head, (s->tail - s->head) * sizeof(OpenSpot));
			s->tail -= s->head;
			s->head = 0;
		}
		if (s->tail == s->open_cap)
		{
			s->open_cap *= 2;
			s->open = repalloc_huge(s->open, s->open_cap * sizeof(OpenSpot));
		}
	}
	s->open[s->tail].antecedent = antecedent;
	s->open[s->tail].start = s->content;
	s->tail++;
}

/* A content word: close every open signature that it completes. */
static void
SpotContent(SpotState *s, uint64 word)
{
	uint64		buf[1 + SPOTSIGS_CHAIN_MAX];

	s->content++;
	s->ring[s->content % s->span] = word;
	while (s->head < s->tail && s->open[s->head].start + s->span == s->content)
	{
		int64		start = s->open[s->head].start;

		buf[0] = s->open[s->head].antecedent;
		for (int i = 1; i <= s->chain; i++)
			buf[i] = s->ring[(start + (int64) i * s->distance) % s->span];
		U64SetAdd(&s->sigs, NddHashBytes(buf, (s->chain + 1) * sizeof(uint64), 0));
		s->head++;
	}
}

/* A ShingleHashSink: words in document order. */
static void
SpotWords(void *arg, const uint64 *hashes, int n)
{
	SpotState  *s = (SpotState *) arg;

	for (int i = 0; i < n; i++)
	{
		uint64		h = hashes[i];

		if (U64SetContains(&s->antecedents, h))
			SpotOpen(s, h);
		else if (!U64SetContains(&s->stopwords, h))
			SpotContent(s, h);
	}
}

/*
 * spotsigs(doc, antecedents, chain, stopwords, distance, strip_html): the
 * sorted distinct spot signatures of a document
 */
PG_FUNCTION_INFO_V1(spotsigs);
Datum
spotsigs(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	ArrayType  *antecedents = PG_GETARG_ARRAYTYPE_P(1);
	int32		chain = PG_GETARG_INT32(2);
	ArrayType  *stopwords = PG_GETARG_ARRAYTYPE_P(3);
	int32		distance = PG_GETARG_INT32(4);
	bool		strip_html = PG_GETARG_BOOL(5);
	SpotState	s;
	ShingleConfig cfg;
	Datum	   *elems;

	if (chain < SPOTSIGS_CHAIN_MIN || chain > SPOTSIGS_CHAIN_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("chain %d is out of range", chain),
				 errdetail("chain must be between %d and %d.", SPOTSIGS_CHAIN_MIN, SPOTSIGS_CHAIN_MAX)));
	if (distance < SPOTSIGS_DISTANCE_MIN || distance > SPOTSIGS_DISTANCE_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("distance %d is out of range", distance),
				 errdetail("distance must be between %d and %d.", SPOTSIGS_DISTANCE_MIN, SPOTSIGS_DISTANCE_MAX)));
	WordListHashes(antecedents, "antecedents", &s.antecedents);
	if (s.antecedents.count == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("antecedents must hold at least one word")));
	WordListHashes(stopwords, "stopwords", &s.stopwords);

	s.chain = chain;
	s.distance = distance;
	s.span = chain * distance;
	s.content = 0;
	s.head = s.tail = 0;
	s.open_cap = 64;
	s.open = palloc(s.open_cap * sizeof(OpenSpot));
	U64SetInit(&s.sigs, 256);

	SpotConfig(&cfg, strip_html);
	ShingleHashes(VARDATA_ANY(doc), VARSIZE_ANY_EXHDR(doc), &cfg, SpotWords, &s);
	U64SetCompact(&s.sigs);

	/* sorted as bigint, so that equal sets print alike */
	sort_i64((int64 *) s.sigs.items, s.sigs.count);
	if (s.sigs.count > MaxAllocSize / sizeof(Datum))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the spot signatures of the document exceed the maximum array size")));
	elems = palloc(Max(s.sigs.count, 1) * sizeof(Datum));
	for (Size i = 0; i < s.sigs.count; i++)
		elems[i] = Int64GetDatum((int64) s.sigs.items[i]);
	PG_RETURN_ARRAYTYPE_P(construct_array(elems, (int) s.sigs.count, INT8OID,
										  sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* The elements of a bigint[] set, sorted and distinct (as given, when they are). */
static int64 *
SortedDistinct(ArrayType *arr, const char *argname, int *n)
{
	int64	   *v;
	int			j = 0;
	bool		sorted = true;

	NddCheckNoNulls(arr, argname);
	*n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	v = (int64 *) ARR_DATA_PTR(arr);
	for (int i = 1; i < *n && sorted; i++)
		sorted = v[i - 1] < v[i];
	if (sorted)
		return v;
	v = palloc(Max(*n, 1) * sizeof(int64));
	memcpy(v, ARR_DATA_PTR(arr), *n * sizeof(int64));
	sort_i64(v, *n);
	for (int i = 0; i < *n; i++)
		if (j == 0 || v[i] != v[j - 1])
			v[j++] = v[i];
	*n = j;
	return v;
}

/*
 * spotsigs_similarity(a, b, threshold): Jaccard of two signature sets, or
 * NULL, without comparing them, when min(|a|, |b|) / max(|a|, |b|) is below
 * threshold
 */
PG_FUNCTION_INFO_V1(spotsigs_similarity);
Datum
spotsigs_similarity(PG_FUNCTION_ARGS)
{
	ArrayType  *a = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *b = PG_GETARG_ARRAYTYPE_P(1);
	double		threshold = PG_GETARG_FLOAT8(2);
	int64	   *va,
			   *vb;
	int			na,
				nb,
				i = 0,
				j = 0,
				common = 0;

	if (!(threshold >= 0.0 && threshold <= 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("threshold must be between 0 and 1")));
	va = SortedDistinct(a, "a", &na);
	vb = SortedDistinct(b, "b", &nb);
	if (na == 0 || nb == 0)
	{
		/* the bound is 0; jaccard() of an empty set is 0 too */
		if (threshold > 0.0)
			PG_RETURN_NULL();
		PG_RETURN_FLOAT8(0.0);
	}
	if ((double) Min(na, nb) / (double) Max(na, nb) < threshold)
		PG_RETURN_NULL();
	while (i < na && j < nb)
	{
		if (va[i] < vb[j])
			i++;
		else if (va[i] > vb[j])
			j++;
		else
		{
			common++;
			i++;
			j++;
		}
	}
	PG_RETURN_FLOAT8((double) common / (double) (na + nb - common));
}
