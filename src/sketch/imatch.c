/*
 * imatch.c
 *		I-Match signatures (Chowdhury, Frieder, Grossman and McCabe, 2002) and
 *		their randomized-lexicon variant (Kołcz, Chowdhury and Alspector,
 *		2004): the collection lexicon aggregate imatch_lexicon(), and
 *		imatch_signature(), imatch_signatures(), imatch_idf() and
 *		imatch_lexicon_info() over it.
 *
 * I-Match
 * -------
 * A document's I-Match signature is one hash of the set of its distinct
 * words whose inverse document frequency idf = ln(N / df) lies in a band
 * [min_idf, max_idf], N being the number of documents of the collection and
 * df the number of them that hold the word.  Very common words carry no
 * signal and are left out, so two documents that differ only in them get
 * equal signatures: duplicates are found with a plain btree or UNIQUE index
 * on one bigint.
 *
 * The lexicon is a value, not a table: imatch_lexicon(doc) aggregates a
 * collection into a bytea of the document count and the sorted (word hash,
 * df) pairs, so that the signature functions stay IMMUTABLE and need no
 * catalog access.  Its state is a hash table of word hashes kept within
 * work_mem; each entry remembers the last document that counted it, so a
 * word counts once per document without a set per document.  A word the
 * lexicon does not hold (a document added after it was built) counts as
 * seen in one document.
 *
 * Lexicon layout (after the varlena header; nothing is aligned, fields are
 * read with memcpy):
 *		uint32 magic, uint32 version, uint64 checksum of what follows,
 *		int64 documents, int64 words, uint64 hash[words] (increasing),
 *		int64 df[words]
 *
 * A lexicon is typically read from a table for every row of a query, where a
 * detoast each time would cost its whole size per row.  The signature
 * functions read only its header, and keep one checked, aligned copy per
 * call site (fn_extra) under its checksum.
 *
 * Randomized lexicons
 * -------------------
 * One changed word of the band changes the I-Match signature.  Kołcz et al.
 * add signatures made with random sub-lexicons: copy j keeps each word with
 * probability `keep`, decided by a hash of the word and j, so that every
 * document keeps the same words.  Two documents whose banded sets differ in
 * d words share copy j's signature when all d are dropped from it, with
 * probability (1 - keep)^d; they match on some copy with probability
 * 1 - (1 - (1 - keep)^d)^copies.
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
#include "utils/memutils.h"

#include "base/hash.h"
#include "base/ndd_limits.h"
#include "base/sort_uint64.h"
#include "text/shingle.h"

#define IMATCH_MAGIC		0x4c44444e	/* "NDDL" */
#define IMATCH_VERSION		1
#define IMATCH_HEADER_SIZE	(2 * sizeof(uint32) + sizeof(uint64) + 2 * sizeof(int64))
#define IMATCH_ENTRY_SIZE	(sizeof(uint64) + sizeof(int64))
#define IMATCH_MAX_WORDS	((MaxAllocSize - VARHDRSZ - IMATCH_HEADER_SIZE) / IMATCH_ENTRY_SIZE)

#define IMATCH_COPIES_MIN	1
#define IMATCH_COPIES_MAX	64

/* ---------------------------------------------------------------------
 * The aggregate's state: word hash -> df
 * ---------------------------------------------------------------------
 */

typedef struct LexEntry
{
	uint64		key;			/* the word's hash */
	int64		df;
	int64		last_doc;		/* the document that counted it last */
	char		status;			/* simplehash's */
} LexEntry;

#define SH_PREFIX lexset
#define SH_ELEMENT_TYPE LexEntry
#define SH_KEY_TYPE uint64
#define SH_KEY key
#define SH_HASH_KEY(tb, k) ((uint32) ((k) >> 32) ^ (uint32) (k))
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

typedef struct LexState
{
	lexset_hash *words;
	int64		documents;
} LexState;

/* A new, empty state in context. */
static LexState *
LexStateCreate(MemoryContext context)
{
	LexState   *s = MemoryContextAlloc(context, sizeof(LexState));

	s->words = lexset_create(context, 1024, NULL);
	s->documents = 0;
	return s;
}

/* Error out once the hash table outgrows work_mem. */
static inline void
LexStateCheckSize(LexState *s)
{
	if ((double) s->words->size * sizeof(LexEntry) > (double) work_mem * 1024.0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("I-Match lexicon exceeds work_mem"),
				 errdetail("The lexicon holds %u distinct words in %zu bytes, and work_mem is %d kB.",
						   s->words->members, (Size) s->words->size * sizeof(LexEntry), work_mem),
				 errhint("Raise work_mem, or build the lexicon from a sample of the table (TABLESAMPLE).")));
}

/* Add df to a word's count; in the transition, once per document. */
static inline void
LexStateAdd(LexState *s, uint64 hash, int64 df, int64 doc)
{
	bool		found;
	LexEntry   *e = lexset_insert(s->words, hash, &found);

	if (!found)
	{
		e->df = 0;
		e->last_doc = 0;
		LexStateCheckSize(s);
	}
	if (doc == 0 || e->last_doc != doc)
	{
		e->df += df;
		e->last_doc = doc;
	}
}

/* A ShingleHashSink: count the words of the current document. */
static void
LexStateAddWords(void *arg, const uint64 *hashes, int n)
{
	LexState   *s = (LexState *) arg;

	for (int i = 0; i < n; i++)
		LexStateAdd(s, hashes[i], 1, s->documents);
}

/* The tokenizer settings of I-Match: words, one at a time, hashed. */
static void
WordConfig(ShingleConfig *cfg)
{
	ShingleConfigInit(cfg, "word", 1, false, 0);
}

/* ---------------------------------------------------------------------
 * The lexicon value
 * ---------------------------------------------------------------------
 */

/* A lexicon read into aligned arrays. */
typedef struct Lexicon
{
	uint64		checksum;
	int64		documents;
	int64		words;
	uint64	   *hash;
	int64	   *df;
} Lexicon;

typedef LexEntry *LexEntryP;

#define ST_SORT sort_lex_entries
#define ST_ELEMENT_TYPE LexEntryP
#define ST_COMPARE(a, b) ((*(a))->key < (*(b))->key ? -1 : (*(a))->key > (*(b))->key ? 1 : 0)
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/* The state as a lexicon value: its words sorted by hash, with a checksum. */
static bytea *
LexStateToBytea(LexState *s)
{
	uint32		n = s->words->members;
	LexEntry  **entries;
	lexset_iterator it;
	LexEntry   *e;
	uint32		i = 0;
	Size		len;
	bytea	   *out;
	char	   *p;
	char	   *hashes;
	char	   *dfs;
	uint32		magic = IMATCH_MAGIC;
	uint32		version = IMATCH_VERSION;
	uint64		checksum;
	int64		words = n;

	if ((Size) n > IMATCH_MAX_WORDS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("I-Match lexicon exceeds the maximum size of a value"),
				 errdetail("The lexicon holds %u distinct words.", n)));
	entries = MemoryContextAllocHuge(CurrentMemoryContext, Max(n, 1) * sizeof(LexEntry *));
	lexset_start_iterate(s->words, &it);
	while ((e = lexset_iterate(s->words, &it)) != NULL)
		entries[i++] = e;
	sort_lex_entries(entries, n);

	len = VARHDRSZ + IMATCH_HEADER_SIZE + (Size) n * IMATCH_ENTRY_SIZE;
	out = palloc_extended(len, MCXT_ALLOC_HUGE);
	SET_VARSIZE(out, len);
	p = VARDATA(out);
	hashes = p + IMATCH_HEADER_SIZE;
	dfs = hashes + (Size) n * sizeof(uint64);
	for (i = 0; i < n; i++)
	{
		memcpy(hashes + (Size) i * sizeof(uint64), &entries[i]->key, sizeof(uint64));
		memcpy(dfs + (Size) i * sizeof(int64), &entries[i]->df, sizeof(int64));
		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(entries);

	memcpy(p, &magic, sizeof(uint32));
	memcpy(p + 4, &version, sizeof(uint32));
	memcpy(p + 16, &s->documents, sizeof(int64));
	memcpy(p + 24, &words, sizeof(int64));
	checksum = NddHashBytes(p + 16, len - VARHDRSZ - 16, 0);
	memcpy(p + 8, &checksum, sizeof(uint64));
	return out;
}

/* Error out: the bytea given as a lexicon is not one. */
static void
LexiconInvalid(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid I-Match lexicon"),
			 errdetail_internal("%s", detail),
			 errhint("Build the lexicon with imatch_lexicon().")));
}

/* Read and check the header of a lexicon of len bytes (VARDATA at p). */
static void
LexiconHeader(const char *p, Size len, Lexicon *lex)
{
	uint32		magic,
				version;

	if (len < IMATCH_HEADER_SIZE)
		LexiconInvalid("The value is too short.");
	memcpy(&magic, p, sizeof(uint32));
	memcpy(&version, p + 4, sizeof(uint32));
	memcpy(&lex->checksum, p + 8, sizeof(uint64));
	memcpy(&lex->documents, p + 16, sizeof(int64));
	memcpy(&lex->words, p + 24, sizeof(int64));
	if (magic != IMATCH_MAGIC)
		LexiconInvalid("The value does not start as a lexicon does.");
	if (version != IMATCH_VERSION)
		LexiconInvalid(psprintf("Version %u is not supported.", version));
	if (lex->documents < 1 || lex->words < 0 || (uint64) lex->words > IMATCH_MAX_WORDS)
		LexiconInvalid("The document or word count is out of range.");
}

/*
 * The whole lexicon at p (len bytes after the varlena header), checked and
 * copied into context.
 */
static void
LexiconLoad(const char *p, Size len, Lexicon *lex, MemoryContext context)
{
	const char *hashes;
	const char *dfs;

	LexiconHeader(p, len, lex);
	if (len != IMATCH_HEADER_SIZE + (Size) lex->words * IMATCH_ENTRY_SIZE)
		LexiconInvalid("The length does not match the word count.");
	if (NddHashBytes(p + 16, len - 16, 0) != lex->checksum)
		LexiconInvalid("The checksum does not match.");
	hashes = p + IMATCH_HEADER_SIZE;
	dfs = hashes + (Size) lex->words * sizeof(uint64);
	lex->hash = MemoryContextAllocHuge(context, Max(lex->words, 1) * sizeof(uint64));
	lex->df = MemoryContextAllocHuge(context, Max(lex->words, 1) * sizeof(int64));
	memcpy(lex->hash, hashes, (Size) lex->words * sizeof(uint64));
	memcpy(lex->df, dfs, (Size) lex->words * sizeof(int64));
	for (int64 i = 0; i < lex->words; i++)
	{
		if (lex->df[i] < 1 || lex->df[i] > lex->documents)
			LexiconInvalid("A document frequency is out of range.");
		if (i > 0 && lex->hash[i] <= lex->hash[i - 1])
			LexiconInvalid("The words are not sorted.");
	}
}

/*
 * The lexicon argument argno, read once per call site: only its header is
 * fetched when the cached copy has the same checksum.
 */
static Lexicon *
LexiconArg(FunctionCallInfo fcinfo, int argno)
{
	Datum		d = PG_GETARG_DATUM(argno);
	Lexicon    *cached = (Lexicon *) fcinfo->flinfo->fn_extra;
	bytea	   *head;
	Lexicon		probe;
	bytea	   *whole;

	head = DatumGetByteaPSlice(d, 0, IMATCH_HEADER_SIZE);
	LexiconHeader(VARDATA(head), VARSIZE(head) - VARHDRSZ, &probe);
	if (cached != NULL && cached->checksum == probe.checksum &&
		cached->documents == probe.documents && cached->words == probe.words)
		return cached;

	if (cached != NULL)
	{
		pfree(cached->hash);
		pfree(cached->df);
	}
	else
		cached = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(Lexicon));
	fcinfo->flinfo->fn_extra = NULL;
	whole = DatumGetByteaPP(d);
	LexiconLoad(VARDATA_ANY(whole), VARSIZE_ANY_EXHDR(whole), cached, fcinfo->flinfo->fn_mcxt);
	fcinfo->flinfo->fn_extra = cached;
	if ((Pointer) whole != DatumGetPointer(d))
		pfree(whole);
	return cached;
}

/* The df of a word hash: 1 if the lexicon lacks it. */
static int64
LexiconDf(const Lexicon *lex, uint64 hash)
{
	int64		lo = 0,
				hi = lex->words;

	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;

		if (lex->hash[mid] < hash)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < lex->words && lex->hash[lo] == hash ? lex->df[lo] : 1;
}

/* ln(N / df) */
static inline double
LexiconIdf(const Lexicon *lex, uint64 hash)
{
	return log((double) lex->documents / (double) LexiconDf(lex, hash));
}

/* ---------------------------------------------------------------------
 * The aggregate
 * ---------------------------------------------------------------------
 */

/* imatch_lexicon(doc text) transition: NULL documents are skipped */
PG_FUNCTION_INFO_V1(imatch_lexicon_transfn);
Datum
imatch_lexicon_transfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	LexState   *s;
	text	   *doc;
	ShingleConfig cfg;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "imatch_lexicon_transfn called in non-aggregate context");
	/* a state exists only once a document was seen: documents >= 1 */
	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_POINTER(PG_GETARG_POINTER(0));
	}
	s = PG_ARGISNULL(0) ? LexStateCreate(aggcontext) : (LexState *) PG_GETARG_POINTER(0);
	doc = PG_GETARG_TEXT_PP(1);
	s->documents++;
	WordConfig(&cfg);
	/* the tokenizer's buffers go to the per-row memory context */
	ShingleHashes(VARDATA_ANY(doc), VARSIZE_ANY_EXHDR(doc), &cfg, LexStateAddWords, s);
	PG_RETURN_POINTER(s);
}

/* Parallel workers' states: documents and dfs add up. */
PG_FUNCTION_INFO_V1(imatch_lexicon_combinefn);
Datum
imatch_lexicon_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	LexState   *a;
	LexState   *b;
	lexset_iterator it;
	LexEntry   *e;
	uint32		i = 0;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "imatch_lexicon_combinefn called in non-aggregate context");
	a = PG_ARGISNULL(0) ? NULL : (LexState *) PG_GETARG_POINTER(0);
	b = PG_ARGISNULL(1) ? NULL : (LexState *) PG_GETARG_POINTER(1);
	if (b == NULL)
		PG_RETURN_POINTER(a);
	if (a == NULL)
		a = LexStateCreate(aggcontext);
	lexset_start_iterate(b->words, &it);
	while ((e = lexset_iterate(b->words, &it)) != NULL)
	{
		LexStateAdd(a, e->key, e->df, 0);
		if ((++i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	a->documents += b->documents;
	PG_RETURN_POINTER(a);
}

/* The state as a lexicon value (the serial form and the result alike). */
PG_FUNCTION_INFO_V1(imatch_lexicon_serialfn);
Datum
imatch_lexicon_serialfn(PG_FUNCTION_ARGS)
{
	PG_RETURN_BYTEA_P(LexStateToBytea((LexState *) PG_GETARG_POINTER(0)));
}

/* A state back from imatch_lexicon_serialfn, checked as any lexicon. */
PG_FUNCTION_INFO_V1(imatch_lexicon_deserialfn);
Datum
imatch_lexicon_deserialfn(PG_FUNCTION_ARGS)
{
	MemoryContext aggcontext;
	bytea	   *in = PG_GETARG_BYTEA_PP(0);
	Lexicon		lex;
	LexState   *s;

	if (!AggCheckCallContext(fcinfo, &aggcontext))
		elog(ERROR, "imatch_lexicon_deserialfn called in non-aggregate context");
	s = LexStateCreate(aggcontext);
	LexiconLoad(VARDATA_ANY(in), VARSIZE_ANY_EXHDR(in), &lex, CurrentMemoryContext);
	for (int64 i = 0; i < lex.words; i++)
	{
		LexStateAdd(s, lex.hash[i], lex.df[i], 0);
		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	s->documents = lex.documents;
	PG_RETURN_POINTER(s);
}

/* imatch_lexicon result: NULL when no document was seen */
PG_FUNCTION_INFO_V1(imatch_lexicon_finalfn);
Datum
imatch_lexicon_finalfn(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_BYTEA_P(LexStateToBytea((LexState *) PG_GETARG_POINTER(0)));
}

/* ---------------------------------------------------------------------
 * Signatures
 * ---------------------------------------------------------------------
 */

/* The distinct words of a document in the idf band, gathered. */
typedef struct BandWords
{
	const Lexicon *lex;
	double		min_idf;
	double		max_idf;
	uint64	   *items;
	Size		count;
	Size		capacity;
} BandWords;

/* Sort the gathered hashes and drop repeats. */
static void
BandWordsCompact(BandWords *w)
{
	Size		j = 0;

	SortUint64(w->items, w->count);
	for (Size i = 0; i < w->count; i++)
		if (j == 0 || w->items[i] != w->items[j - 1])
			w->items[j++] = w->items[i];
	w->count = j;
}

/* A ShingleHashSink: keep the words whose idf lies in the band. */
static void
BandWordsAdd(void *arg, const uint64 *hashes, int n)
{
	BandWords  *w = (BandWords *) arg;

	for (int i = 0; i < n; i++)
	{
		double		idf = LexiconIdf(w->lex, hashes[i]);

		if (idf < w->min_idf || idf > w->max_idf)
			continue;
		if (w->count == w->capacity)
		{
			/* repeats are common: compact before growing */
			BandWordsCompact(w);
			if (w->count > w->capacity / 2)
			{
				w->capacity *= 2;
				w->items = repalloc_huge(w->items, w->capacity * sizeof(uint64));
			}
		}
		w->items[w->count++] = hashes[i];
	}
}

/* Error out unless 0 <= min_idf <= max_idf (max_idf may be Infinity). */
static void
CheckIdfBand(double min_idf, double max_idf)
{
	if (isnan(min_idf) || isnan(max_idf) || min_idf < 0 || min_idf > max_idf)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("idf band [%g, %g] is invalid", min_idf, max_idf),
				 errdetail("min_idf must be at least 0 and at most max_idf.")));
}

/* The sorted, distinct words of doc whose idf lies in [min_idf, max_idf]. */
static void
GatherBandWords(text *doc, const Lexicon *lex, double min_idf, double max_idf,
				BandWords *w)
{
	ShingleConfig cfg;

	WordConfig(&cfg);
	w->lex = lex;
	w->min_idf = min_idf;
	w->max_idf = max_idf;
	w->capacity = 256;
	w->count = 0;
	w->items = palloc(w->capacity * sizeof(uint64));
	ShingleHashes(VARDATA_ANY(doc), VARSIZE_ANY_EXHDR(doc), &cfg, BandWordsAdd, w);
	BandWordsCompact(w);
}

/*
 * imatch_signature(doc, lexicon, min_idf, max_idf): the hash of the sorted
 * distinct words in the idf band; NULL when there is none
 */
PG_FUNCTION_INFO_V1(imatch_signature);
Datum
imatch_signature(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	double		min_idf = PG_GETARG_FLOAT8(2);
	double		max_idf = PG_GETARG_FLOAT8(3);
	Lexicon    *lex;
	BandWords	w;

	CheckIdfBand(min_idf, max_idf);
	lex = LexiconArg(fcinfo, 1);
	GatherBandWords(doc, lex, min_idf, max_idf, &w);
	if (w.count == 0)
		PG_RETURN_NULL();
	PG_RETURN_INT64((int64) NddHashBytes(w.items, w.count * sizeof(uint64), 0));
}

/* Does copy j (1-based) of the randomized lexicons keep a word? */
static inline bool
CopyKeeps(uint64 hash, int j, double keep)
{
	uint64		x = NddHashMix(hash ^ NddHashMix(UINT64CONST(0x9e3779b97f4a7c15) * (uint64) j));

	return (double) (x >> 11) * (1.0 / 9007199254740992.0) < keep;
}

/*
 * imatch_signatures(doc, lexicon, copies, keep, min_idf, max_idf): the
 * I-Match signature, then one per randomized lexicon whose words are not
 * all dropped; NULL when the band holds no word of doc
 */
PG_FUNCTION_INFO_V1(imatch_signatures);
Datum
imatch_signatures(PG_FUNCTION_ARGS)
{
	text	   *doc = PG_GETARG_TEXT_PP(0);
	int32		copies = PG_GETARG_INT32(2);
	double		keep = PG_GETARG_FLOAT8(3);
	double		min_idf = PG_GETARG_FLOAT8(4);
	double		max_idf = PG_GETARG_FLOAT8(5);
	Lexicon    *lex;
	BandWords	w;
	uint64	   *subset;
	Datum	   *sigs;
	int			n = 0;

	if (copies < IMATCH_COPIES_MIN || copies > IMATCH_COPIES_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("copies %d is out of range", copies),
				 errdetail("copies must be between %d and %d.", IMATCH_COPIES_MIN, IMATCH_COPIES_MAX)));
	if (!(keep > 0.0 && keep <= 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("keep must be greater than 0 and at most 1")));
	CheckIdfBand(min_idf, max_idf);
	lex = LexiconArg(fcinfo, 1);
	GatherBandWords(doc, lex, min_idf, max_idf, &w);
	if (w.count == 0)
		PG_RETURN_NULL();

	sigs = palloc((copies + 1) * sizeof(Datum));
	sigs[n++] = Int64GetDatum((int64) NddHashBytes(w.items, w.count * sizeof(uint64), 0));
	subset = palloc_extended(w.count * sizeof(uint64), MCXT_ALLOC_HUGE);
	for (int j = 1; j <= copies; j++)
	{
		Size		m = 0;

		CHECK_FOR_INTERRUPTS();
		for (Size i = 0; i < w.count; i++)
			if (CopyKeeps(w.items[i], j, keep))
				subset[m++] = w.items[i];
		if (m > 0)
			sigs[n++] = Int64GetDatum((int64) NddHashBytes(subset, m * sizeof(uint64), (uint64) j));
	}
	PG_RETURN_ARRAYTYPE_P(construct_array(sigs, n, INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/*
 * imatch_idf(lexicon, word): ln(N / df) of a word, as the signatures see it;
 * an error unless the tokenizer reads one word in it
 */
PG_FUNCTION_INFO_V1(imatch_idf);
Datum
imatch_idf(PG_FUNCTION_ARGS)
{
	text	   *word = PG_GETARG_TEXT_PP(1);
	Lexicon    *lex = LexiconArg(fcinfo, 0);
	BandWords	w;

	/* every word, in the band [0, Infinity]; its sorted hashes */
	GatherBandWords(word, lex, 0.0, get_float8_infinity(), &w);
	if (w.count != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" is not one word", text_to_cstring(word)),
				 errdetail("The tokenizer reads %zu words in it.", w.count)));
	PG_RETURN_FLOAT8(LexiconIdf(lex, w.items[0]));
}

/* imatch_lexicon_info(lexicon): (documents, words) */
PG_FUNCTION_INFO_V1(imatch_lexicon_info);
Datum
imatch_lexicon_info(PG_FUNCTION_ARGS)
{
	Lexicon    *lex = LexiconArg(fcinfo, 0);
	TupleDesc	tupdesc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = Int64GetDatum(lex->documents);
	values[1] = Int64GetDatum(lex->words);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}
