/*
 * fuzz_shingle_set.c
 *		The hash sets of shingle_set.c against sorted runs: the members, the
 *		exact Jaccard and the test that stops counting at a threshold.
 *
 * Input: byte 0 chooses the mode (bit 0) and a threshold (the other bits);
 * byte 1 where the rest is cut in two, a and b.
 *   - Sets (bit 0 clear): a and b are runs of 2-byte values, each made a
 *     hash of one of four shapes (small integers from 0, the free slot's
 *     value, up; high bits only; near 2^64; mixed), 256 values a shape, so
 *     that the sets share members, repeat them and grow.
 *   - Texts (bit 0 set): a and b are documents, shingled by word, size
 *     1 + byte 0 / 2 % 5; their sets come from ShingleSetOfText.
 *
 * Byte 1's two low bits also say which sides are fitted (ShingleSetFit:
 * fewest slots, members in a row) before the checks, and in texts mode its
 * next two which sides are made fitted from the text
 * (ShingleSetOfTextFitted), as discovery's verification makes the sets it
 * probes many times.
 *
 * In texts mode the two texts, and the first again, also go into one
 * ShingleGroup (shingle_group.c), as discovery verifies a family.
 *
 * Checks: a set holds exactly the distinct hashes sorted and deduplicated
 * (ShingleSetSorted's for texts); ShingleSetJaccard, both ways round, is the
 * Jaccard of the sorted runs to the bit; ShingleSetJaccardReaches says true
 * exactly when that Jaccard is at least the threshold, and then gives it to
 * the bit, for thresholds at, just above and just below values the Jaccard
 * of these sizes can take (across the range, next to the true one, at the
 * largest), and 0, 1, beyond, infinite and NaN; the group gives the two
 * texts that same Jaccard, both ways round, and the first and its copy the
 * Jaccard of equal sets.
 */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "base/hash.h"
#include "text/shingle.h"
#include "text/shingle_group.h"
#include "text/shingle_set.h"

typedef struct Sides
{
	uint64	   *raw[2];			/* the hashes as added, repeats included */
	size_t		nraw[2];
	uint64	   *sorted[2];		/* distinct, ascending */
	size_t		nsorted[2];
	ShingleSet *set[2];
	const char *doc[2];			/* texts mode */
	size_t		len[2];
	ShingleConfig cfg;
	double		group_jaccard[3];	/* texts mode: 0-1, 1-0, 0 and its copy */
} Sides;

static int
CompareUint64(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return (x > y) - (x < y);
}

/* A hash of one of four shapes from a 2-byte value. */
static uint64
ShapedHash(unsigned v)
{
	uint64		i = (v >> 2) & 0xFF;

	switch (v & 3)
	{
		case 0:
			return i;			/* 0 is the free slot's value */
		case 1:
			return i << 56;
		case 2:
			return PG_UINT64_MAX - i;
		default:
			return NddHashMix(i);
	}
}

/* Sort and deduplicate side s's raw hashes into its sorted run. */
static void
SortSide(Sides *x, int s)
{
	size_t		n = 0;

	x->sorted[s] = malloc(Max(x->nraw[s], 1) * sizeof(uint64));
	memcpy(x->sorted[s], x->raw[s], x->nraw[s] * sizeof(uint64));
	qsort(x->sorted[s], x->nraw[s], sizeof(uint64), CompareUint64);
	for (size_t i = 0; i < x->nraw[s]; i++)
		if (n == 0 || x->sorted[s][i] != x->sorted[s][n - 1])
			x->sorted[s][n++] = x->sorted[s][i];
	x->nsorted[s] = n;
}

/* Sets mode: the raw hashes of both sides, then their sets. */
static void
BuildSets(void *arg)
{
	Sides	   *x = (Sides *) arg;

	for (int s = 0; s < 2; s++)
	{
		/* a set that starts small, so that it grows */
		x->set[s] = ShingleSetCreate(x->nraw[s] % 7);
		for (size_t i = 0; i < x->nraw[s]; i++)
			ShingleSetAdd(x->set[s], x->raw[s][i]);
	}
}

/* byte 1 of the input, whose low bits choose how sets are fitted */
static const uint8_t *fitted;

/* Texts mode: each side's set and its sorted run, from the text. */
static void
BuildTexts(void *arg)
{
	Sides	   *x = (Sides *) arg;

	for (int s = 0; s < 2; s++)
	{
		uint64	   *run;

		/* byte 1's bits 2 and 3: the side's set made fitted from the start */
		x->set[s] = (*fitted & (4 << s)) ?
			ShingleSetOfTextFitted(x->doc[s], x->len[s], &x->cfg) :
			ShingleSetOfText(x->doc[s], x->len[s], &x->cfg);
		run = ShingleSetSorted(x->doc[s], x->len[s], &x->cfg, &x->nsorted[s]);
		x->sorted[s] = malloc(Max(x->nsorted[s], 1) * sizeof(uint64));
		memcpy(x->sorted[s], run, x->nsorted[s] * sizeof(uint64));
	}
}

/* Texts mode: both texts, and the first again, counted in one group. */
static void
BuildGroup(void *arg)
{
	Sides	   *x = (Sides *) arg;
	ShingleGroup *group = ShingleGroupCreate(3, (Size) 1 << 30);

	for (int s = 0; s < 3; s++)
	{
		int			side = (s == 2) ? 0 : s;

		if (!ShingleGroupAddText(group, s, x->doc[side], x->len[side], &x->cfg))
			FUZZ_FAIL("a group of three texts passed a budget of 1 GB");
	}
	ShingleGroupCount(group);
	x->group_jaccard[0] = ShingleGroupJaccard(group, 0, 1);
	x->group_jaccard[1] = ShingleGroupJaccard(group, 1, 0);
	x->group_jaccard[2] = ShingleGroupJaccard(group, 0, 2);
}

/* The group's Jaccards are the sets' to the bit. */
static void
CheckGroup(const Sides *x, double want)
{
	double		same = ShingleJaccardOfCounts(x->nsorted[0], x->nsorted[0], x->nsorted[0]);

	if (memcmp(&x->group_jaccard[0], &want, sizeof(double)) != 0 ||
		memcmp(&x->group_jaccard[1], &want, sizeof(double)) != 0)
		FUZZ_FAIL("group jaccard %.17g and %.17g, sorted runs give %.17g",
				  x->group_jaccard[0], x->group_jaccard[1], want);
	if (memcmp(&x->group_jaccard[2], &same, sizeof(double)) != 0)
		FUZZ_FAIL("a text and its copy: group jaccard %.17g, not %.17g", x->group_jaccard[2], same);
}

/* The set of side s holds its sorted run's hashes and nothing else. */
static void
CheckMembers(const Sides *x, int s)
{
	if (ShingleSetSize(x->set[s]) != x->nsorted[s])
		FUZZ_FAIL("side %d: %zu members, %zu distinct hashes", s,
				  ShingleSetSize(x->set[s]), x->nsorted[s]);
	for (size_t i = 0; i < x->nsorted[s]; i++)
		if (!ShingleSetContains(x->set[s], x->sorted[s][i]))
			FUZZ_FAIL("side %d lacks hash %zu of %zu", s, i, x->nsorted[s]);
	/* the other side's hashes that are not in this one */
	for (size_t i = 0; i < x->nsorted[1 - s]; i++)
	{
		uint64		h = x->sorted[1 - s][i];

		if (ShingleSetContains(x->set[s], h) !=
			(bsearch(&h, x->sorted[s], x->nsorted[s], sizeof(uint64), CompareUint64) != NULL))
			FUZZ_FAIL("side %d: membership of a hash of the other side is wrong", s);
	}
}

/* Reaches, both ways round, at threshold t, against the exact jaccard. */
static void
CheckThreshold(const Sides *x, double jaccard, double t)
{
	for (int s = 0; s < 2; s++)
	{
		double		got = -1.0;
		bool		reaches = ShingleSetJaccardReaches(x->set[s], x->set[1 - s], t, &got);

		if (reaches != (jaccard >= t))
			FUZZ_FAIL("threshold %.17g: reaches %d, jaccard %.17g (%zu and %zu members)",
					  t, reaches, jaccard, x->nsorted[0], x->nsorted[1]);
		if (reaches && memcmp(&got, &jaccard, sizeof(double)) != 0)
			FUZZ_FAIL("threshold %.17g: jaccard %.17g, not %.17g", t, got, jaccard);
	}
}

/* Thresholds at the Jaccard of a count c, and just above and below it. */
static void
CheckCount(const Sides *x, double jaccard, size_t c)
{
	double		f = ShingleJaccardOfCounts(c, x->nsorted[0], x->nsorted[1]);

	CheckThreshold(x, jaccard, f);
	CheckThreshold(x, jaccard, nextafter(f, 2.0));
	CheckThreshold(x, jaccard, nextafter(f, -1.0));
}

/* Values the Jaccard can take, and around them, and the odd thresholds. */
static void
CheckThresholds(const Sides *x, double jaccard, uint8_t pick)
{
	static const double odd[] = {0.0, -0.0, -1.0, 1.0, 1.5, 0.5};
	size_t		most = Min(x->nsorted[0], x->nsorted[1]);
	size_t		step = most / 8 + 1;
	size_t		common = ShingleSetIntersection(x->sorted[0], x->nsorted[0],
												x->sorted[1], x->nsorted[1]);

	for (int i = 0; i < lengthof(odd); i++)
		CheckThreshold(x, jaccard, odd[i]);
	CheckThreshold(x, jaccard, INFINITY);
	CheckThreshold(x, jaccard, -INFINITY);
	CheckThreshold(x, jaccard, NAN);
	CheckThreshold(x, jaccard, pick / 127.0);
	/* counts across the range, those next to the true one, and the last */
	for (size_t c = 0; c <= most + 1; c += step)
		CheckCount(x, jaccard, c);
	for (size_t c = (common > 2 ? common - 2 : 0); c <= common + 2; c++)
		CheckCount(x, jaccard, c);
	for (size_t c = (most > 2 ? most - 2 : 0); c <= most + 1; c++)
		CheckCount(x, jaccard, c);
}

/* The checks of the header, on sets built. */
static void
CheckSides(const Sides *x, uint8_t pick)
{
	double		want;
	double		ab;
	double		ba;

	CheckMembers(x, 0);
	CheckMembers(x, 1);
	want = ShingleJaccardOfCounts(ShingleSetIntersection(x->sorted[0], x->nsorted[0],
														 x->sorted[1], x->nsorted[1]),
								  x->nsorted[0], x->nsorted[1]);
	ab = ShingleSetJaccard(x->set[0], x->set[1]);
	ba = ShingleSetJaccard(x->set[1], x->set[0]);
	if (memcmp(&ab, &want, sizeof(double)) != 0 || memcmp(&ba, &want, sizeof(double)) != 0)
		FUZZ_FAIL("jaccard %.17g and %.17g, sorted runs give %.17g", ab, ba, want);
	if (x->doc[0] != NULL)
		CheckGroup(x, want);
	CheckThresholds(x, want, pick);
}


/* Fit the sides byte 1's two low bits name. */
static void
FitSides(void *arg)
{
	Sides	   *x = (Sides *) arg;

	for (int s = 0; s < 2; s++)
		if (*fitted & (1 << s))
			ShingleSetFit(x->set[s]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Sides		x;
	size_t		rest;
	size_t		cut;

	if (size < 2)
		return 0;
	memset(&x, 0, sizeof(x));
	fitted = &data[1];
	rest = size - 2;
	cut = rest * data[1] / 255;
	if (data[0] & 1)
	{
		ShingleConfigInit(&x.cfg, "word", 1 + (data[0] >> 1) % 5, false, 0);
		x.doc[0] = (const char *) data + 2;
		x.len[0] = cut;
		x.doc[1] = (const char *) data + 2 + cut;
		x.len[1] = rest - cut;
		if (!FuzzTry(BuildTexts, &x))
			FUZZ_FAIL("shingling was refused: %s", fuzz_errmsg);
		if (!FuzzTry(BuildGroup, &x))
			FUZZ_FAIL("counting the group was refused: %s", fuzz_errmsg);
	}
	else
	{
		cut &= ~(size_t) 1;
		for (int s = 0; s < 2; s++)
		{
			const uint8_t *p = data + 2 + (s == 0 ? 0 : cut);
			size_t		n = (s == 0 ? cut : rest - cut) / 2;

			x.raw[s] = malloc(Max(n, 1) * sizeof(uint64));
			for (size_t i = 0; i < n; i++)
				x.raw[s][x.nraw[s]++] = ShapedHash(p[2 * i] | (p[2 * i + 1] << 8));
			SortSide(&x, s);
		}
		if (!FuzzTry(BuildSets, &x))
			FUZZ_FAIL("building the sets failed: %s", fuzz_errmsg);
	}
	if (!FuzzTry(FitSides, &x))
		FUZZ_FAIL("fitting the sets failed: %s", fuzz_errmsg);
	CheckSides(&x, data[0] >> 1);
	FuzzReset();
	for (int s = 0; s < 2; s++)
	{
		free(x.raw[s]);
		free(x.sorted[s]);
	}
	return 0;
}
