/*
 * shingle_set.c
 *		A text's distinct shingle hashes in a hash set, the exact Jaccard
 *		resemblance of two sets, and the SQL functions that compute it:
 *		jaccard(text, text) and jaccard() of two arrays.
 *
 * Shingling a text gives its shingle hashes in document order, repeats
 * included (shingle.c, ShingleHashes).  Sorting them to drop the repeats and
 * merging two sorted runs cost most of an exact Jaccard; here each hash goes
 * into an open-addressing table instead (a power of two of slots, linear
 * probing, at most half full, doubled when it would be fuller), and the
 * Jaccard of two sets probes each member of the smaller into the larger.
 *
 * The slot of a hash is the top bits of the hash times an odd salt drawn
 * once per backend (multiply-shift).  Shingle hashes are seeded with a known
 * seed, so with a fixed slot function a text written to give hashes that
 * share those bits would pile them into one run of slots and make each
 * insert cost the run; with the salt, two hashes share a home slot about as
 * rarely as if they were random, whatever they are.  A set grows before a
 * run of hashes rather than within it, so a run is placed with the table's
 * fields in locals.  (Fetching a run's slots ahead of their probes gained
 * nothing measurable, even in tables of megabytes.)
 *
 * A slot holding 0 is free; the hash 0 is a member like any other, recorded
 * by a flag beside the slots.
 *
 * The Jaccard of sets of na and nb members that share c is
 * f(c) = c / (na + nb - c), as a double, in the one expression of shingle.h
 * (ShingleJaccardOfCounts) that the sorted sets use too, so both give the
 * same value to the bit.  For fixed na and nb, f never decreases as c grows:
 * c and na + nb - c convert to doubles exactly (below 2^53), the exact
 * quotient grows with c, and rounding to nearest keeps that order.  So "does
 * the Jaccard reach t" is "is c at least need", the least count with
 * f(need) >= t, found with f itself rather than by algebra on doubles.  A
 * count that has missed more members of the smaller set than it can afford
 * (its size less need) stops: no pair whose Jaccard reaches t is dropped.
 */
#include "postgres.h"

#include <math.h>

#include "common/pg_prng.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/array.h"

#include "text/shingle.h"
#include "text/shingle_set.h"

/* The fewest slots of a table. */
#define SHINGLE_SET_MIN_SLOTS		16

/*
 * A text's set starts with room for about a shingle per word (per byte for
 * character shingles), up to this many, and doubles from there: a text of
 * few distinct shingles (a long run of one word) stays small.
 */
#define SHINGLE_SET_START_MAX		65536

/* Hashes added, or gathered to be looked up, at a time. */
#define SHINGLE_SET_RUN				256


/* Slots moved between looks at interrupts when a set grows. */
#define SHINGLE_SET_CHECK_SLOTS		65536


/* This backend's multiplier of every slot: odd, drawn at the first set. */
static uint64 shingle_set_salt = 0;

/* The first slot to look at for a hash: the top bits of hash times salt. */
static pg_attribute_always_inline size_t
ShingleSetHome(uint64 hash, int shift)
{
	return (size_t) ((hash * shingle_set_salt) >> shift);
}

/* This backend's salt of slots, drawn the first time (shingle_group.c's too). */
uint64
ShingleSetSalt(void)
{
	if (shingle_set_salt == 0)
		shingle_set_salt = pg_prng_uint64(&pg_global_prng_state) | 1;
	return shingle_set_salt;
}

/* Give the set nslots free slots (a power of two, zeroed: 0 is free). */
static void
ShingleSetAllocSlots(ShingleSet *set, size_t nslots)
{
	StaticAssertStmt(SHINGLE_SET_FREE == 0, "free slots are zeroed");
	set->slots = (uint64 *) palloc_extended(nslots * sizeof(uint64),
											MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	set->mask = nslots - 1;
	set->shift = 64 - pg_leftmost_one_pos64(nslots);
}

/* An empty set with room for expected members before it grows. */
ShingleSet *
ShingleSetCreate(size_t expected)
{
	ShingleSet *set = palloc(sizeof(ShingleSet));
	size_t		nslots = SHINGLE_SET_MIN_SLOTS;

	ShingleSetSalt();
	if (expected >= nslots / 2)
		nslots = pg_nextpower2_size_t(expected * 2 + 1);
	ShingleSetAllocSlots(set, nslots);
	set->nslotted = 0;
	set->has_free_value = false;
	set->members = NULL;
	return set;
}

/*
 * Put a hash that is not SHINGLE_SET_FREE in the first free slot from home
 * on, unless it is there already.  Returns whether it was placed.  The table
 * is never full, so a free slot ends the probe.
 */
static pg_attribute_always_inline bool
ShingleSetPlace(uint64 *slots, size_t mask, size_t home, uint64 hash)
{
	size_t		i = home;

	for (; slots[i] != SHINGLE_SET_FREE; i = (i + 1) & mask)
		if (slots[i] == hash)
			return false;
	slots[i] = hash;
	return true;
}

/* Lay the set out again in nslots slots, moving every hash to its slot there. */
static pg_noinline void
ShingleSetRelay(ShingleSet *set, size_t nslots)
{
	size_t		old_slots = set->mask + 1;
	uint64	   *old = set->slots;

	ShingleSetAllocSlots(set, nslots);
	for (size_t from = 0; from < old_slots; from += SHINGLE_SET_CHECK_SLOTS)
	{
		CHECK_FOR_INTERRUPTS();
		for (size_t i = from; i < Min(old_slots, from + SHINGLE_SET_CHECK_SLOTS); i++)
			if (old[i] != SHINGLE_SET_FREE)
				ShingleSetPlace(set->slots, set->mask,
								ShingleSetHome(old[i], set->shift), old[i]);
	}
	pfree(old);
}

/* Double the slots. */
static void
ShingleSetGrow(ShingleSet *set)
{
	ShingleSetRelay(set, (set->mask + 1) * 2);
}

/*
 * Ready a set to be compared many times (discovery's verification): the
 * fewest slots that keep it at most half full, so that probes into it
 * read fewer cache lines, and its members in a row, so that probing with
 * it passes no free slot.  Adding to it afterwards drops the row.
 */
void
ShingleSetFit(ShingleSet *set)
{
	size_t		nslots = Max(SHINGLE_SET_MIN_SLOTS, pg_nextpower2_size_t(set->nslotted * 2 + 1));
	size_t		n = 0;

	if (nslots < set->mask + 1)
		ShingleSetRelay(set, nslots);
	if (set->members)
		pfree(set->members);
	set->members = palloc_extended(Max(set->nslotted, 1) * sizeof(uint64), MCXT_ALLOC_HUGE);
	for (size_t i = 0; i <= set->mask; i++)
		if (set->slots[i] != SHINGLE_SET_FREE)
			set->members[n++] = set->slots[i];
	Assert(n == set->nslotted);
}

/* A copy of a set, in the current memory context. */
ShingleSet *
ShingleSetCopy(const ShingleSet *set)
{
	ShingleSet *copy = palloc(sizeof(ShingleSet));

	*copy = *set;
	copy->slots = palloc_extended((set->mask + 1) * sizeof(uint64), MCXT_ALLOC_HUGE);
	memcpy(copy->slots, set->slots, (set->mask + 1) * sizeof(uint64));
	if (set->members)
	{
		copy->members = palloc_extended(Max(set->nslotted, 1) * sizeof(uint64), MCXT_ALLOC_HUGE);
		memcpy(copy->members, set->members, set->nslotted * sizeof(uint64));
	}
	return copy;
}

/* The memory a set takes, about. */
Size
ShingleSetBytes(const ShingleSet *set)
{
	return sizeof(ShingleSet) + (set->mask + 1) * sizeof(uint64) +
		(set->members ? set->nslotted * sizeof(uint64) : 0);
}

/*
 * Add n hashes (n <= SHINGLE_SET_RUN), the set having room for them all
 * while staying under half full.
 */
static pg_attribute_always_inline void
ShingleSetAddRun(ShingleSet *set, const uint64 *hashes, int n)
{
	uint64	   *slots = set->slots;
	size_t		mask = set->mask;
	int			shift = set->shift;
	size_t		placed = 0;

	for (int i = 0; i < n; i++)
	{
		if (likely(hashes[i] != SHINGLE_SET_FREE))
			placed += ShingleSetPlace(slots, mask, ShingleSetHome(hashes[i], shift),
									  hashes[i]);
		else
			set->has_free_value = true;
	}
	set->nslotted += placed;
}

/*
 * Add a batch of hashes (a ShingleHashSink: arg is the set); repeats change
 * nothing.  The set doubles before it would be more than half full, so a
 * probe ends within a few slots.
 */
void
ShingleSetAddBatch(void *arg, const uint64 *hashes, int n)
{
	ShingleSet *set = (ShingleSet *) arg;

	if (unlikely(set->members != NULL))
	{
		pfree(set->members);
		set->members = NULL;
	}

	for (int from = 0; from < n; from += SHINGLE_SET_RUN)
	{
		int			run = Min(n - from, SHINGLE_SET_RUN);

		while (set->nslotted + run > set->mask / 2)
			ShingleSetGrow(set);
		ShingleSetAddRun(set, hashes + from, run);
	}
}

/* Add a hash to the set. */
void
ShingleSetAdd(ShingleSet *set, uint64 hash)
{
	ShingleSetAddBatch(set, &hash, 1);
}

/* Is a hash that is not SHINGLE_SET_FREE in the slots, from home on? */
static pg_attribute_always_inline bool
ShingleSetHasSlotted(const ShingleSet *set, size_t home, uint64 hash)
{
	for (size_t i = home;; i = (i + 1) & set->mask)
	{
		if (set->slots[i] == hash)
			return true;
		if (set->slots[i] == SHINGLE_SET_FREE)
			return false;
	}
}

/* Is the hash a member of the set? */
bool
ShingleSetContains(const ShingleSet *set, uint64 hash)
{
	if (hash == SHINGLE_SET_FREE)
		return set->has_free_value;
	return ShingleSetHasSlotted(set, ShingleSetHome(hash, set->shift), hash);
}

/* Free the set's memory. */
void
ShingleSetFree(ShingleSet *set)
{
	if (set->members)
		pfree(set->members);
	pfree(set->slots);
	pfree(set);
}

/*
 * The distinct shingle hashes of the len bytes at text, shingled as cfg
 * says: the hashes ShingleSetSorted() sorts, in a set.
 */
ShingleSet *
ShingleSetOfText(const char *text, size_t len, const ShingleConfig *cfg)
{
	size_t		expected = cfg->unit == SHINGLE_UNIT_CHAR ? len : len / 5;
	ShingleSet *set = ShingleSetCreate(Min(expected, SHINGLE_SET_START_MAX));

	ShingleHashes(text, len, cfg, ShingleSetAddBatch, set);
	return set;
}

/* a text's hashes as the shingler gives them, repeats included */
typedef struct GatheredHashes
{
	uint64	   *hashes;
	size_t		n;
	size_t		room;
} GatheredHashes;

static void
GatherHashes(void *arg, const uint64 *hashes, int n)
{
	GatheredHashes *g = (GatheredHashes *) arg;

	if (g->n + n > g->room)
	{
		g->room = Max(g->room * 2, g->n + n);
		g->hashes = repalloc_huge(g->hashes, g->room * sizeof(uint64));
	}
	memcpy(g->hashes + g->n, hashes, n * sizeof(uint64));
	g->n += n;
}

/*
 * A text's set made to be probed many times (discovery's verification), as
 * ShingleSetOfText and then ShingleSetFit would leave it, in one go: the
 * hashes are gathered first, so the table starts at its size (up to
 * SHINGLE_SET_START_MAX, growing past it only for very long texts), and
 * each hash placed is moved down the same array, which becomes the row of
 * members.
 */
ShingleSet *
ShingleSetOfTextFitted(const char *text, size_t len, const ShingleConfig *cfg)
{
	GatheredHashes g;
	ShingleSet *set;
	size_t		m = 0;

	g.room = Max(cfg->unit == SHINGLE_UNIT_CHAR ? len : len / 4, SHINGLE_SET_MIN_SLOTS);
	g.hashes = palloc_extended(g.room * sizeof(uint64), MCXT_ALLOC_HUGE);
	g.n = 0;
	ShingleHashes(text, len, cfg, GatherHashes, &g);
	set = ShingleSetCreate(Min(g.n, SHINGLE_SET_START_MAX));
	for (size_t from = 0; from < g.n; from += SHINGLE_SET_RUN)
	{
		size_t		end = Min(g.n, from + SHINGLE_SET_RUN);

		CHECK_FOR_INTERRUPTS();
		while (m + (end - from) > set->mask / 2)
			ShingleSetGrow(set);
		for (size_t i = from; i < end; i++)
		{
			uint64		hash = g.hashes[i];

			if (unlikely(hash == SHINGLE_SET_FREE))
			{
				set->has_free_value = true;
				continue;
			}
			/* m <= i: the hashes still to read lie above */
			g.hashes[m] = hash;
			m += ShingleSetPlace(set->slots, set->mask, ShingleSetHome(hash, set->shift), hash);
		}
	}
	set->nslotted = m;
	set->members = repalloc_huge(g.hashes, Max(m, 1) * sizeof(uint64));
	return set;
}

/* How many of n hashes (n <= SHINGLE_SET_RUN, none free) the set holds. */
static pg_attribute_always_inline size_t
ShingleSetCountRun(const ShingleSet *set, const uint64 *hashes, int n)
{
	size_t		found = 0;

	for (int i = 0; i < n; i++)
		found += ShingleSetHasSlotted(set, ShingleSetHome(hashes[i], set->shift),
									  hashes[i]);
	return found;
}

/* ShingleSetCountCommon for a small set whose members are in a row. */
static bool
ShingleSetCountMembers(const ShingleSet *small, const ShingleSet *large, size_t max_misses,
					   size_t looked, size_t found, size_t *common)
{
	for (size_t from = 0; from < small->nslotted; from += SHINGLE_SET_RUN)
	{
		int			n = (int) Min(small->nslotted - from, SHINGLE_SET_RUN);

		found += ShingleSetCountRun(large, small->members + from, n);
		looked += n;
		if (looked - found > max_misses)
			return false;
		CHECK_FOR_INTERRUPTS();
	}
	/* the free value alone may have missed (no run above then) */
	if (looked - found > max_misses)
		return false;
	*common = found;
	return true;
}

/*
 * Count the members of small that large holds into *common, a run of them
 * at a time, unless more than max_misses of them are missing: then stop,
 * and return false.
 */
static bool
ShingleSetCountCommon(const ShingleSet *small, const ShingleSet *large,
					  size_t max_misses, size_t *common)
{
	size_t		nslots = small->mask + 1;
	uint64		run[SHINGLE_SET_RUN];
	int			n = 0;
	size_t		looked = 0;
	size_t		found = 0;

	if (small->has_free_value)
	{
		looked++;
		found += large->has_free_value;
	}
	if (small->members)
		return ShingleSetCountMembers(small, large, max_misses, looked, found, common);
	for (size_t i = 0; i < nslots; i++)
	{
		/* gathered without a branch: free and taken slots come at random */
		run[n] = small->slots[i];
		n += (run[n] != SHINGLE_SET_FREE);
		if (n < SHINGLE_SET_RUN && i + 1 < nslots)
			continue;
		found += ShingleSetCountRun(large, run, n);
		looked += n;
		n = 0;
		if (looked - found > max_misses)
			return false;
		CHECK_FOR_INTERRUPTS();
	}
	*common = found;
	return true;
}

/*
 * The exact Jaccard resemblance of two sets: the value SortedJaccard gives
 * for the same hashes sorted (0 when either is empty).
 */
double
ShingleSetJaccard(const ShingleSet *a, const ShingleSet *b)
{
	size_t		na = ShingleSetSize(a);
	size_t		nb = ShingleSetSize(b);
	size_t		common;

	if (na == 0 || nb == 0)
		return 0.0;
	if (na <= nb)
		ShingleSetCountCommon(a, b, SIZE_MAX, &common);
	else
		ShingleSetCountCommon(b, a, SIZE_MAX, &common);
	return ShingleJaccardOfCounts(common, na, nb);
}

/*
 * The fewest shared members with which sets of na and nb members (neither
 * empty) reach a Jaccard of threshold, into *need; false if no count up to
 * the smaller size does.  A guess from the algebra, then corrected with the
 * expression itself, which never decreases as the count grows.
 */
static bool
ShingleJaccardNeed(size_t na, size_t nb, double threshold, size_t *need)
{
	size_t		most = Min(na, nb);
	size_t		c;

	/* no Jaccard is above 1, and none reaches NaN */
	if (isnan(threshold) || threshold > 1.0)
		return false;
	if (threshold <= 0.0)
	{
		*need = 0;
		return true;
	}
	/* c / (na + nb - c) >= t  <=>  c >= t (na + nb) / (1 + t) */
	c = (size_t) Min(floor(threshold * (double) (na + nb) / (1.0 + threshold)),
					 (double) most);
	while (c > 0 && ShingleJaccardOfCounts(c - 1, na, nb) >= threshold)
		c--;
	while (c <= most && ShingleJaccardOfCounts(c, na, nb) < threshold)
		c++;
	if (c > most)
		return false;
	*need = c;
	return true;
}

/*
 * Does the Jaccard of two sets reach threshold?  If it does, *jaccard gets
 * it, exactly as ShingleSetJaccard gives it; if not, *jaccard is left alone.
 * The sizes alone may say no (even the smaller set wholly shared would not
 * do); otherwise the smaller set is probed into the larger until the count
 * can no longer reach the threshold.
 */
bool
ShingleSetJaccardReaches(const ShingleSet *a, const ShingleSet *b,
						 double threshold, double *jaccard)
{
	size_t		na = ShingleSetSize(a);
	size_t		nb = ShingleSetSize(b);
	size_t		need;
	size_t		common;

	if (na == 0 || nb == 0)
	{
		/* the empty set resembles nothing: 0, which reaches only t <= 0 */
		if (!(0.0 >= threshold))
			return false;
		*jaccard = 0.0;
		return true;
	}
	if (!ShingleJaccardNeed(na, nb, threshold, &need))
		return false;
	if (na <= nb ? !ShingleSetCountCommon(a, b, na - need, &common)
		: !ShingleSetCountCommon(b, a, nb - need, &common))
		return false;
	*jaccard = ShingleJaccardOfCounts(common, na, nb);
	Assert(*jaccard >= threshold);
	return true;
}

/* ---------------------------------------------------------------------
 * SQL functions
 * ---------------------------------------------------------------------
 */

/* jaccard(a text, b text, shingle_size, unit, strip_html): exact resemblance */
PG_FUNCTION_INFO_V1(jaccard_text);
Datum
jaccard_text(PG_FUNCTION_ARGS)
{
	text	   *a = PG_GETARG_TEXT_PP(0);
	text	   *b = PG_GETARG_TEXT_PP(1);
	ShingleConfig cfg;
	ShingleSet *sa;
	ShingleSet *sb;
	double		jaccard;

	ShingleConfigFromArgs(fcinfo, 2, &cfg);
	sa = ShingleSetOfText(VARDATA_ANY(a), VARSIZE_ANY_EXHDR(a), &cfg);
	sb = ShingleSetOfText(VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b), &cfg);
	jaccard = ShingleSetJaccard(sa, sb);
	ShingleSetFree(sa);
	ShingleSetFree(sb);
	PG_RETURN_FLOAT8(jaccard);
}

/* The set of an array's elements (ElementHashes), named argname in errors. */
static ShingleSet *
ShingleSetOfElements(ArrayType *arr, const char *argname)
{
	size_t		n = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	ShingleSet *set = ShingleSetCreate(Min(n, SHINGLE_SET_START_MAX));

	ElementHashes(arr, argname, 0, ShingleSetAddBatch, set);
	return set;
}

/* jaccard(text[], text[]) and jaccard(bigint[], bigint[]): sets as given */
PG_FUNCTION_INFO_V1(jaccard_array);
Datum
jaccard_array(PG_FUNCTION_ARGS)
{
	ArrayType  *a = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *b = PG_GETARG_ARRAYTYPE_P(1);
	ShingleSet *sa = ShingleSetOfElements(a, "a");
	ShingleSet *sb = ShingleSetOfElements(b, "b");
	double		jaccard = ShingleSetJaccard(sa, sb);

	ShingleSetFree(sa);
	ShingleSetFree(sb);
	PG_RETURN_FLOAT8(jaccard);
}
