/*
 * simhash_gist.c
 *		GiST operator class for simhash, with its key type gsimhash: %
 *		(within ndd.hamming_threshold bits) and ORDER BY fp <-> q (nearest by
 *		Hamming distance).
 *
 * Keys of shared bits
 * -------------------
 * A leaf key is one fingerprint.  An inner key records the bits on which
 * every fingerprint below it agrees (mask) and their values (bits).  The
 * query disagrees with every fingerprint below on at least the masked bits
 * where it differs from bits, so popcount((q ^ bits) & mask) is a lower
 * bound of the distance to anything in the subtree: % descends only where
 * that bound is within the threshold, and the kNN search visits subtrees in
 * the order of the bound, which GiST's distance ordering requires.  Leaves
 * are exact, so nothing is rechecked.
 *
 * A subtree is only as useful as the bits its fingerprints share, so the
 * tree should group fingerprints by common bits, as a binary trie does:
 * the sorted build (sortsupport) orders fingerprints by value, so each page
 * holds a run sharing its leading bits; picksplit cuts a page on the bit
 * that divides it most evenly.  Random fingerprints leave about log2(N /
 * entries per page) shared bits per leaf page, so a % lookup still visits
 * a few percent of a large index; GIN's block keys are the fast path for
 * %, and this opclass is the one that orders by distance.
 */
#include "postgres.h"

#include "access/gist.h"
#include "access/stratnum.h"
#include "fmgr.h"
#include "utils/sortsupport.h"

#include "base/ndd_limits.h"
#include "sketch/simhash.h"

/*
 * The GiST key, the storage type gsimhash: the bits every fingerprint below
 * an entry agrees on (mask) and their values (bits, zero outside mask).  A
 * leaf holds one fingerprint: mask is all ones.
 */
typedef struct GistSimHashKey
{
	uint64		bits;
	uint64		mask;
} GistSimHashKey;

#define DatumGetGistSimHashKeyP(x)	((GistSimHashKey *) DatumGetPointer(x))
#define GETKEY(vec, i)	DatumGetGistSimHashKeyP((vec)->vector[(i)].key)

/* A split on one bit must put at least this share of entries on each side. */
#define GSIMHASH_MIN_SPLIT_FRACTION	0.1

/* Lower bound of the distance from q to every fingerprint below key. */
static inline int
KeyDistance(const GistSimHashKey *key, SimHash q)
{
	return pg_popcount64((q ^ key->bits) & key->mask);
}

/* Merge key b into a. */
static inline void
KeyUnion(GistSimHashKey *a, const GistSimHashKey *b)
{
	a->mask &= b->mask & ~(a->bits ^ b->bits);
	a->bits &= a->mask;
}

/* gsimhash: the storage type of the index; shown as bits/mask in hex */
PG_FUNCTION_INFO_V1(gsimhash_in);
Datum
gsimhash_in(PG_FUNCTION_ARGS)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cannot accept a value of type %s", "gsimhash")));
	PG_RETURN_VOID();			/* keep compiler quiet */
}

/* gsimhash_out: bits/mask in hex, for debugging an index. */
PG_FUNCTION_INFO_V1(gsimhash_out);
Datum
gsimhash_out(PG_FUNCTION_ARGS)
{
	GistSimHashKey *key = (GistSimHashKey *) PG_GETARG_POINTER(0);

	PG_RETURN_CSTRING(psprintf("%016llx/%016llx",
							   (unsigned long long) key->bits,
							   (unsigned long long) key->mask));
}

/* A fingerprint becomes a key of all 64 bits. */
PG_FUNCTION_INFO_V1(gsimhash_compress);
Datum
gsimhash_compress(PG_FUNCTION_ARGS)
{
	GISTENTRY  *entry = (GISTENTRY *) PG_GETARG_POINTER(0);
	GISTENTRY  *retval = entry;

	if (entry->leafkey)
	{
		GistSimHashKey *key = palloc(sizeof(GistSimHashKey));

		key->bits = DatumGetSimHash(entry->key);
		key->mask = ~UINT64CONST(0);
		retval = palloc(sizeof(GISTENTRY));
		gistentryinit(*retval, PointerGetDatum(key),
					  entry->rel, entry->page, entry->offset, false);
	}
	PG_RETURN_POINTER(retval);
}

/* Index-only scans: a leaf key gives back its fingerprint. */
PG_FUNCTION_INFO_V1(gsimhash_fetch);
Datum
gsimhash_fetch(PG_FUNCTION_ARGS)
{
	GISTENTRY  *entry = (GISTENTRY *) PG_GETARG_POINTER(0);
	GistSimHashKey *key = DatumGetGistSimHashKeyP(entry->key);
	GISTENTRY  *retval = palloc(sizeof(GISTENTRY));

	gistentryinit(*retval, SimHashGetDatum(key->bits),
				  entry->rel, entry->page, entry->offset, false);
	PG_RETURN_POINTER(retval);
}

/* gsimhash_consistent(entry, query, strategy, subtype, recheck) */
PG_FUNCTION_INFO_V1(gsimhash_consistent);
Datum
gsimhash_consistent(PG_FUNCTION_ARGS)
{
	GISTENTRY  *entry = (GISTENTRY *) PG_GETARG_POINTER(0);
	StrategyNumber strategy = PG_GETARG_UINT16(2);
	bool	   *recheck = (bool *) PG_GETARG_POINTER(4);
	SimHash		q;
	int			max_distance;

	switch (strategy)
	{
		case NDD_SIMHASH_MATCH_STRATEGY:
			q = PG_GETARG_SIMHASH(1);
			max_distance = ndd_hamming_threshold;
			break;
		case NDD_SIMHASH_MATCH_QUERY_STRATEGY:
			/* a NULL fingerprint or distance: no row, as in a scan */
			if (!SimHashFromQuery(PG_GETARG_HEAPTUPLEHEADER(1), &q, &max_distance))
				PG_RETURN_BOOL(false);
			break;
		default:
			elog(ERROR, "unrecognized strategy number: %d", strategy);
	}
	*recheck = false;
	PG_RETURN_BOOL(KeyDistance(DatumGetGistSimHashKeyP(entry->key), q) <= max_distance);
}

/* gsimhash_distance(entry, query, strategy, subtype, recheck) */
PG_FUNCTION_INFO_V1(gsimhash_distance);
Datum
gsimhash_distance(PG_FUNCTION_ARGS)
{
	GISTENTRY  *entry = (GISTENTRY *) PG_GETARG_POINTER(0);
	SimHash		q = PG_GETARG_SIMHASH(1);
	StrategyNumber strategy = PG_GETARG_UINT16(2);
	bool	   *recheck = (bool *) PG_GETARG_POINTER(4);

	if (strategy != NDD_SIMHASH_DISTANCE_STRATEGY)
		elog(ERROR, "unrecognized strategy number: %d", strategy);
	*recheck = false;
	PG_RETURN_FLOAT8((float8) KeyDistance(DatumGetGistSimHashKeyP(entry->key), q));
}

/* gsimhash_union(entryvec, size): the bits all entries share */
PG_FUNCTION_INFO_V1(gsimhash_union);
Datum
gsimhash_union(PG_FUNCTION_ARGS)
{
	GistEntryVector *entryvec = (GistEntryVector *) PG_GETARG_POINTER(0);
	int		   *size = (int *) PG_GETARG_POINTER(1);
	GistSimHashKey *result = palloc(sizeof(GistSimHashKey));

	*result = *GETKEY(entryvec, 0);
	for (int i = 1; i < entryvec->n; i++)
		KeyUnion(result, GETKEY(entryvec, i));
	*size = sizeof(GistSimHashKey);
	PG_RETURN_POINTER(result);
}

/* gsimhash_same(a, b, result): are two keys identical? */
PG_FUNCTION_INFO_V1(gsimhash_same);
Datum
gsimhash_same(PG_FUNCTION_ARGS)
{
	GistSimHashKey *a = (GistSimHashKey *) PG_GETARG_POINTER(0);
	GistSimHashKey *b = (GistSimHashKey *) PG_GETARG_POINTER(1);
	bool	   *result = (bool *) PG_GETARG_POINTER(2);

	*result = a->bits == b->bits && a->mask == b->mask;
	PG_RETURN_POINTER(result);
}

/* Shared bits a key loses by taking in another. */
static inline int
KeyLoss(const GistSimHashKey *orig, const GistSimHashKey *add)
{
	GistSimHashKey merged = *orig;

	KeyUnion(&merged, add);
	return pg_popcount64(orig->mask) - pg_popcount64(merged.mask);
}

/* gsimhash_penalty(orig, new, penalty): shared bits the subtree would lose */
PG_FUNCTION_INFO_V1(gsimhash_penalty);
Datum
gsimhash_penalty(PG_FUNCTION_ARGS)
{
	GISTENTRY  *origentry = (GISTENTRY *) PG_GETARG_POINTER(0);
	GISTENTRY  *newentry = (GISTENTRY *) PG_GETARG_POINTER(1);
	float	   *penalty = (float *) PG_GETARG_POINTER(2);

	*penalty = (float) KeyLoss(DatumGetGistSimHashKeyP(origentry->key),
							   DatumGetGistSimHashKeyP(newentry->key));
	PG_RETURN_POINTER(penalty);
}

typedef struct SortedEntry
{
	uint64		bits;
	OffsetNumber offset;
} SortedEntry;

/* qsort comparator: entries by value, unsigned. */
static int
CompareSortedEntries(const void *a, const void *b)
{
	uint64		x = ((const SortedEntry *) a)->bits;
	uint64		y = ((const SortedEntry *) b)->bits;

	return x < y ? -1 : x > y ? 1 : 0;
}

/* Put entry i on one side of a split, widening that side's key. */
static void
SplitAdd(GIST_SPLITVEC *v, GistEntryVector *entryvec, OffsetNumber i,
		 bool left, GistSimHashKey *lkey, GistSimHashKey *rkey)
{
	GistSimHashKey *key = GETKEY(entryvec, i);

	if (left)
	{
		if (v->spl_nleft == 0)
			*lkey = *key;
		else
			KeyUnion(lkey, key);
		v->spl_left[v->spl_nleft++] = i;
	}
	else
	{
		if (v->spl_nright == 0)
			*rkey = *key;
		else
			KeyUnion(rkey, key);
		v->spl_right[v->spl_nright++] = i;
	}
}

/*
 * gsimhash_picksplit(entryvec, splitvec): split on the bit that divides the
 * entries most evenly, as a trie would; entries that do not fix that bit go
 * where they cost fewer shared bits.  When no bit divides them well enough
 * (duplicates, or mostly undetermined bits), cut the entries sorted by value
 * in half.
 */
PG_FUNCTION_INFO_V1(gsimhash_picksplit);
Datum
gsimhash_picksplit(PG_FUNCTION_ARGS)
{
	GistEntryVector *entryvec = (GistEntryVector *) PG_GETARG_POINTER(0);
	GIST_SPLITVEC *v = (GIST_SPLITVEC *) PG_GETARG_POINTER(1);
	OffsetNumber maxoff = entryvec->n - 1;
	int			n = maxoff - FirstOffsetNumber + 1;
	int			ones[NDD_SIMHASH_BITS] = {0};
	int			zeros[NDD_SIMHASH_BITS] = {0};
	int			best_bit = -1;
	int			best_min = 0;
	GistSimHashKey *lkey = palloc(sizeof(GistSimHashKey));
	GistSimHashKey *rkey = palloc(sizeof(GistSimHashKey));

	v->spl_left = palloc(n * sizeof(OffsetNumber));
	v->spl_right = palloc(n * sizeof(OffsetNumber));
	v->spl_nleft = v->spl_nright = 0;

	for (OffsetNumber i = FirstOffsetNumber; i <= maxoff; i++)
	{
		GistSimHashKey *key = GETKEY(entryvec, i);

		for (int b = 0; b < NDD_SIMHASH_BITS; b++)
		{
			if (!((key->mask >> b) & 1))
				continue;
			if ((key->bits >> b) & 1)
				ones[b]++;
			else
				zeros[b]++;
		}
	}
	for (int b = NDD_SIMHASH_BITS - 1; b >= 0; b--)
	{
		int			m = Min(ones[b], zeros[b]);

		if (m > best_min)
		{
			best_min = m;
			best_bit = b;
		}
	}

	if (best_bit >= 0 && best_min >= n * GSIMHASH_MIN_SPLIT_FRACTION)
	{
		OffsetNumber *undecided = palloc(n * sizeof(OffsetNumber));
		int			nundecided = 0;

		for (OffsetNumber i = FirstOffsetNumber; i <= maxoff; i++)
		{
			GistSimHashKey *key = GETKEY(entryvec, i);

			if ((key->mask >> best_bit) & 1)
				SplitAdd(v, entryvec, i, ((key->bits >> best_bit) & 1) == 0,
						 lkey, rkey);
			else
				undecided[nundecided++] = i;
		}
		for (int j = 0; j < nundecided; j++)
		{
			GistSimHashKey *key = GETKEY(entryvec, undecided[j]);
			int			lloss = KeyLoss(lkey, key);
			int			rloss = KeyLoss(rkey, key);

			SplitAdd(v, entryvec, undecided[j],
					 lloss < rloss || (lloss == rloss && v->spl_nleft <= v->spl_nright),
					 lkey, rkey);
		}
	}
	else
	{
		SortedEntry *sorted = palloc(n * sizeof(SortedEntry));

		for (OffsetNumber i = FirstOffsetNumber; i <= maxoff; i++)
		{
			sorted[i - FirstOffsetNumber].bits = GETKEY(entryvec, i)->bits;
			sorted[i - FirstOffsetNumber].offset = i;
		}
		qsort(sorted, n, sizeof(SortedEntry), CompareSortedEntries);
		for (int j = 0; j < n; j++)
			SplitAdd(v, entryvec, sorted[j].offset, j < n / 2, lkey, rkey);
	}

	v->spl_ldatum = PointerGetDatum(lkey);
	v->spl_rdatum = PointerGetDatum(rkey);
	PG_RETURN_POINTER(v);
}

/* Sorted build: order keys by value, so that pages hold runs of prefixes. */
static int
gsimhash_fastcmp(Datum x, Datum y, SortSupport ssup)
{
	uint64		a = DatumGetGistSimHashKeyP(x)->bits;
	uint64		b = DatumGetGistSimHashKeyP(y)->bits;

	return a < b ? -1 : a > b ? 1 : 0;
}

/* Sort support for the sorted build: gsimhash_fastcmp. */
PG_FUNCTION_INFO_V1(gsimhash_sortsupport);
Datum
gsimhash_sortsupport(PG_FUNCTION_ARGS)
{
	SortSupport ssup = (SortSupport) PG_GETARG_POINTER(0);

	ssup->comparator = gsimhash_fastcmp;
	PG_RETURN_VOID();
}
