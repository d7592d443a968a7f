/*
 * discovery_verify.c
 *		Step 7 of the discovery engine with verify_column (discovery.h): the
 *		exact Jaccard resemblance of each pair's two texts, shingled as the
 *		sketches were.
 *
 * A pair whose sketches estimate at least the threshold less a margin
 * (the SQL path's rule, LSH_VERIFY_MARGIN) is checked on its texts.  Step 6
 * grouped the pairs by connected component, so a family's pairs come
 * together: a group of up to 64 rows has each text fetched and shingled
 * once into one table that counts, for every two texts, the shingles they
 * share (text/shingle_group.c), where probing each pair's sets into each
 * other had been most of the time.  A larger group, or one whose texts
 * would pass half of work_mem, is checked a pair at a time: each text's
 * shingles in a hash set (shingle_set.c), the smaller probed into the
 * larger until the pair reaches the threshold or can no longer, the sets
 * of the rows seen last kept while half of work_mem holds them.  Both give
 * the Jaccard of the same counts, to the bit.  The texts are read as the
 * SQL path reads them, cast to text: char(n) loses its trailing spaces.
 */
#include "postgres.h"

#include "access/tableam.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "base/hash.h"
#include "features/discovery.h"
#include "text/shingle_group.h"
#include "text/shingle_set.h"

/* rows whose sets are kept, at most (a direct-mapped table) */
#define VERIFY_CACHED_ROWS	1024

#define ST_SORT SortChecks
#define ST_ELEMENT_TYPE TextCheck
#define ST_COMPARE(a, b) \
	((a)->group != (b)->group ? ((a)->group > (b)->group) - ((a)->group < (b)->group) : \
	 (a)->lo != (b)->lo ? ((a)->lo > (b)->lo) - ((a)->lo < (b)->lo) : \
	 ((a)->hi > (b)->hi) - ((a)->hi < (b)->hi))
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DECLARE
#define ST_DEFINE
#include "lib/sort_template.h"

typedef struct CachedSet
{
	uint64		row;
	ShingleSet *set;			/* NULL: free, or the text is NULL */
	bool		used;
} CachedSet;

typedef struct DiscoveryTexts
{
	MemoryContext context;		/* the cached sets */
	Size		bytes;			/* what they take, about */
	Size		budget;
	ShingleConfig config;
	bool		bpchar;			/* char(n): trailing spaces do not count */
	CachedSet	cache[VERIFY_CACHED_ROWS];
} DiscoveryTexts;

static DiscoveryTexts *
TextsCreate(Discovery *d)
{
	DiscoveryTexts *texts = palloc0(sizeof(DiscoveryTexts));
	const DiscoveryRequest *req = d->req;

	texts->context = AllocSetContextCreate(CurrentMemoryContext, "ndd discovery texts",
										   ALLOCSET_DEFAULT_SIZES);
	texts->budget = d->budget / 2;
	ShingleConfigInit(&texts->config, req->verify_unit, req->verify_shingle_size, false, 0);
	texts->bpchar = getBaseType(get_atttype(req->relid, d->verify_att)) == BPCHAROID;
	return texts;
}

/*
 * A row's place in the cache: its TID hashed, since a TID's low bits are its
 * line on the page, which few values fill.
 */
static inline CachedSet *
CacheSlot(DiscoveryTexts *texts, uint64 row)
{
	return &texts->cache[NddHashMix(row) % VERIFY_CACHED_ROWS];
}

/* Forget every set, when they would take more than their budget. */
static void
Forget(DiscoveryTexts *texts)
{
	MemoryContextReset(texts->context);
	memset(texts->cache, 0, sizeof(texts->cache));
	texts->bytes = 0;
}

/*
 * A slot's text, detoasted into the current context, and the length that
 * counts; false for NULL.  Free it with FreeText.
 */
static bool
TextOfSlot(Discovery *d, DiscoveryTexts *texts, TupleTableSlot *slot, Datum *value, text **t,
		   int *len)
{
	bool		isnull;

	*value = slot_getattr(slot, d->verify_att, &isnull);
	if (isnull)
		return false;
	*t = (text *) PG_DETOAST_DATUM_PACKED(*value);
	*len = VARSIZE_ANY_EXHDR(*t);
	if (texts->bpchar)
		*len = bpchartruelen(VARDATA_ANY(*t), *len);
	return true;
}

static void
FreeText(Datum value, text *t)
{
	if ((Pointer) t != DatumGetPointer(value))
		pfree(t);
}

/* The shingle set of a slot's text, in the current context; NULL for NULL. */
static ShingleSet *
SetOfText(Discovery *d, DiscoveryTexts *texts, TupleTableSlot *slot)
{
	Datum		value;
	text	   *t;
	int			len;
	ShingleSet *set;

	if (!TextOfSlot(d, texts, slot, &value, &t, &len))
		return NULL;
	/* a text is probed once for each of its pairs: in as few slots as will do */
	set = ShingleSetOfTextFitted(VARDATA_ANY(t), len, &texts->config);
	FreeText(value, t);
	return set;
}

/*
 * The set of a candidate's second row: from the cache, or made and kept
 * there (every set forgotten first when they hold their budget).  Valid
 * until the next call.
 */
static ShingleSet *
TextSet(Discovery *d, DiscoveryTexts *texts, uint64 row, TupleTableSlot *slot)
{
	CachedSet  *c = CacheSlot(texts, row);
	MemoryContext caller;

	if (c->used && c->row == row)
		return c->set;
	if (texts->bytes > texts->budget)
		Forget(texts);
	caller = MemoryContextSwitchTo(texts->context);
	c->used = true;
	c->row = row;
	c->set = SetOfText(d, texts, slot);
	if (c->set)
		texts->bytes += ShingleSetBytes(c->set);
	MemoryContextSwitchTo(caller);
	return c->set;
}

/*
 * The set of a first row, kept apart (in context, which the caller resets
 * for the next first row) so that the cache may forget its sets meanwhile.
 */
static ShingleSet *
FirstTextSet(Discovery *d, DiscoveryTexts *texts, uint64 row, TupleTableSlot *slot,
			 MemoryContext context)
{
	CachedSet  *c = CacheSlot(texts, row);
	MemoryContext caller = MemoryContextSwitchTo(context);
	ShingleSet *set;

	if (c->used && c->row == row)
		set = c->set ? ShingleSetCopy(c->set) : NULL;
	else
		set = SetOfText(d, texts, slot);
	MemoryContextSwitchTo(caller);
	return set;
}

/* step 7's state: the texts' sets, the first row's apart, two fetched rows */
typedef struct Verifier
{
	DiscoveryTexts *texts;
	MemoryContext group_context;	/* a group's table, reset after it */
	MemoryContext first_context;
	ShingleSet *first;			/* NULL: the first row's text is NULL */
	FetchedRow	a;
	FetchedRow	b;
} Verifier;

/* One pair, its first row fetched in a: into the answer if its texts reach the threshold. */
static void
CheckPair(Discovery *d, Verifier *v, const TextCheck *check)
{
	ShingleSet *second;
	double		jaccard;

	CHECK_FOR_INTERRUPTS();
	if (v->first == NULL)
		return;
	DiscoveryFetch(d, check->hi, &v->b);
	if (!v->b.found)
		return;
	second = TextSet(d, v->texts, check->hi, v->b.slot);
	if (second != NULL && ShingleSetJaccardReaches(v->first, second, d->req->threshold, &jaccard))
		DiscoveryAnswer(d, v->a.id, v->b.id, jaccard, check->distance, check->distance_null);
}

/* A group's rows, each fetched once: its members in a ShingleGroup. */
typedef struct GroupRows
{
	int			n;
	uint64		rows[SHINGLE_GROUP_MAX_TEXTS];
	int64		ids[SHINGLE_GROUP_MAX_TEXTS];
	bool		present[SHINGLE_GROUP_MAX_TEXTS];	/* found, its text not NULL */
} GroupRows;

/* A row's member number, made if it is new; -1 when the group is full. */
static int
MemberOf(GroupRows *g, uint64 row)
{
	for (int i = 0; i < g->n; i++)
		if (g->rows[i] == row)
			return i;
	if (g->n == SHINGLE_GROUP_MAX_TEXTS)
		return -1;
	g->rows[g->n] = row;
	return g->n++;
}

/*
 * Member i's text, fetched in v->a, into the group: false if the text is
 * NULL (its pairs are not answered) or the group passed its budget (then
 * *counted is false).
 */
static bool
AddGroupText(Discovery *d, Verifier *v, ShingleGroup *group, int i, bool *counted)
{
	Datum		value;
	text	   *t;
	int			len;

	if (!TextOfSlot(d, v->texts, v->a.slot, &value, &t, &len))
		return false;
	*counted = ShingleGroupAddText(group, i, VARDATA_ANY(t), len, &v->texts->config);
	FreeText(value, t);
	return true;
}

/*
 * A group's pairs checked together (shingle_group.c): each row fetched and
 * shingled once, every pair's common count from one table.  False, having
 * answered nothing, when the group has more rows than a ShingleGroup holds
 * or its texts more shingles than the budget allows: the caller then
 * checks its pairs one at a time.
 */
static bool
VerifyGroup(Discovery *d, Verifier *v, const TextCheck *checks, uint64 n)
{
	GroupRows	g = {0};
	ShingleGroup *group;
	MemoryContext caller;
	bool		counted = true;

	/* 1. the group's rows, as members */
	for (uint64 i = 0; i < n; i++)
		if (MemberOf(&g, checks[i].lo) < 0 || MemberOf(&g, checks[i].hi) < 0)
			return false;

	/* 2. each member's text into one table, which takes the sets' budget */
	if (v->texts->bytes > 0)
		Forget(v->texts);
	caller = MemoryContextSwitchTo(v->group_context);
	group = ShingleGroupCreate(g.n, v->texts->budget);
	for (int i = 0; i < g.n && counted; i++)
	{
		CHECK_FOR_INTERRUPTS();
		DiscoveryFetch(d, g.rows[i], &v->a);
		g.present[i] = v->a.found && AddGroupText(d, v, group, i, &counted);
		g.ids[i] = v->a.id;
	}
	if (counted)
		ShingleGroupCount(group);
	MemoryContextSwitchTo(caller);
	if (!counted)
	{
		MemoryContextReset(v->group_context);
		return false;
	}

	/* 3. each pair that reaches the threshold into the answer */
	for (uint64 i = 0; i < n; i++)
	{
		int			a = MemberOf(&g, checks[i].lo);
		int			b = MemberOf(&g, checks[i].hi);
		double		jaccard;

		if (!g.present[a] || !g.present[b])
			continue;
		jaccard = ShingleGroupJaccard(group, a, b);
		if (jaccard >= d->req->threshold)
			DiscoveryAnswer(d, g.ids[a], g.ids[b], jaccard, checks[i].distance,
							checks[i].distance_null);
	}
	MemoryContextReset(v->group_context);
	return true;
}

/*
 * A group's pairs one at a time, each first row fetched once: a group too
 * large for a ShingleGroup.  The sets of its second rows are kept while
 * half of work_mem holds them.
 */
static void
VerifyPairs(Discovery *d, Verifier *v, const TextCheck *checks, uint64 n)
{
	uint64		first_row = PG_UINT64_MAX;

	/* make room for the group's sets now rather than amid them */
	if (v->texts->bytes > v->texts->budget / 2)
		Forget(v->texts);
	for (uint64 i = 0; i < n; i++)
	{
		if (checks[i].lo != first_row)
		{
			first_row = checks[i].lo;
			DiscoveryFetch(d, first_row, &v->a);
			MemoryContextReset(v->first_context);
			v->first = NULL;
			if (v->a.found)
				v->first = FirstTextSet(d, v->texts, first_row, v->a.slot, v->first_context);
		}
		if (v->a.found)
			CheckPair(d, v, &checks[i]);
	}
}

/* One partition that fits: sorted by group, then rows; each group checked. */
static void
VerifyInMemory(Discovery *d, Spill *spill, int part, void *arg)
{
	Verifier   *v = arg;
	uint64		n;
	TextCheck  *checks = (TextCheck *) SpillTake(spill, part, &n);
	uint64		end;

	SortChecks(checks, n);
	for (uint64 start = 0; start < n; start = end)
	{
		for (end = start + 1; end < n && checks[end].group == checks[start].group; end++)
			;
		if (!VerifyGroup(d, v, &checks[start], end - start))
			VerifyPairs(d, v, &checks[start], end - start);
	}
	pfree(checks);
}

/* Step 7: the partitions of grouped pairs this participant claims, checked on their texts */
void
DiscoveryVerifyChecks(Discovery *d)
{
	Spill	   *groups;
	Verifier	v = {0};
	int			part;

	if (d->verify_att <= 0)
		return;
	if (d->shared)
		d->group_partitions = DiscoverySharedGroupPartitions(d);
	groups = DiscoveryReadSpill(d, "c", d->groups, d->group_partitions, sizeof(TextCheck),
								DiscoveryGroupPartition);
	if (d->shared)
		d->results = DiscoveryWriteSpill(d, "r", 1, sizeof(PairResult), NULL);
	v.texts = TextsCreate(d);
	v.first_context = AllocSetContextCreate(CurrentMemoryContext, "ndd discovery first text",
											ALLOCSET_DEFAULT_SIZES);
	v.group_context = AllocSetContextCreate(CurrentMemoryContext, "ndd discovery text group",
											ALLOCSET_DEFAULT_SIZES);
	v.a.slot = table_slot_create(d->rel, NULL);
	v.b.slot = table_slot_create(d->rel, NULL);
	while (DiscoveryClaim(d, DISCOVERY_STEP_VERIFY, d->group_partitions, &part))
		DiscoveryFitPartition(d, groups, part, sizeof(TextCheck), d->budget / 2, VerifyInMemory, &v);
	SpillEnd(groups);
	d->groups = NULL;
	if (d->results)
	{
		SpillEnd(d->results);
		d->results = NULL;
	}
	ExecDropSingleTupleTableSlot(v.a.slot);
	ExecDropSingleTupleTableSlot(v.b.slot);
	MemoryContextDelete(v.first_context);
	MemoryContextDelete(v.group_context);
	MemoryContextDelete(v.texts->context);
}
