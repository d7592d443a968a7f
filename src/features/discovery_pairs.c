/*
 * discovery_pairs.c
 *		Step 4 of the discovery engine (discovery.h): each candidate pair
 *		once, its rows fetched by heap position and scored.
 *
 * A partition of candidates holds every pair of its first rows, so sorted
 * by (first row, second row) each pair's copies (one per shared key) lie
 * together and each first row's partners follow it: the first row is
 * fetched once, each partner once per pair.  Both rows are read under the
 * engine's snapshot, so they are the versions steps 1 and 2 saw.  The
 * pair is reported as the SQL path reports it: ids in order, a pair of
 * rows with one id never, the score of the kind's functions.
 */
#include "postgres.h"

#include "access/tableam.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "base/sketch_column.h"
#include "features/discovery.h"
#include "text/shingle_set.h"

/* splits of one partition, at most, before it is read as it is */
#define PAIRS_MAX_LEVEL		4

#define ST_SORT SortEdges
#define ST_ELEMENT_TYPE Edge
#define ST_COMPARE(a, b) \
	((a)->lo != (b)->lo ? ((a)->lo > (b)->lo) - ((a)->lo < (b)->lo) : \
	 ((a)->hi > (b)->hi) - ((a)->hi < (b)->hi))
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DECLARE
#define ST_DEFINE
#include "lib/sort_template.h"

/* a fetched row: its id and sketch, valid while its slot holds it */
typedef struct FetchedRow
{
	TupleTableSlot *slot;
	bool		found;
	int64		id;
	bool		id_null;
	Datum		sketch;
} FetchedRow;

/* Fetch the row at a packed position, as the engine's snapshot sees it. */
static void
Fetch(Discovery *d, uint64 row, FetchedRow *r)
{
	ItemPointerData tid;
	bool		isnull;
	Datum		id;

	UnpackRow(row, &tid);
	r->found = table_tuple_fetch_row_version(d->rel, &tid, d->snapshot, r->slot);
	if (!r->found)
		return;
	id = slot_getattr(r->slot, d->id_att, &r->id_null);
	r->id = r->id_null ? 0 : IdGetInt64(id, d->id_type);
	r->sketch = slot_getattr(r->slot, d->sketch_att, &isnull);
	r->found = !isnull && !r->id_null;
}

/* step 4's verification: the texts' sets, the first row's apart */
typedef struct Verifying
{
	DiscoveryTexts *texts;
	MemoryContext first_context;
	ShingleSet *first;
} Verifying;

static bool Verified(Discovery *d, const FetchedRow *b, uint64 row, Verifying *v, double *jaccard);

/*
 * Score one pair (b fetched at row); when it qualifies, and with
 * verification its texts reach the threshold, into the answer with ids in
 * order, the texts' Jaccard as its similarity.
 */
static void
ScorePair(Discovery *d, const FetchedRow *a, const FetchedRow *b, uint64 row, Verifying *v)
{
	const BucketKeys *bk = &d->keys;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	double		similarity;
	int32		distance;
	MemoryContext caller;

	if (a->id == b->id)
		return;
	caller = MemoryContextSwitchTo(d->row_context);
	if (bk->score(bk, a->id < b->id ? a->sketch : b->sketch, a->id < b->id ? b->sketch : a->sketch,
				  &similarity, &distance, &nulls[3]) &&
		(v == NULL || Verified(d, b, row, v, &similarity)))
	{
		MemoryContextSwitchTo(caller);
		if (d->results)
		{
			/* a parallel participant's pairs go to the leader */
			PairResult	r = {Min(a->id, b->id), Max(a->id, b->id), similarity, distance, nulls[3]};

			SpillAdd(d->results, &r);
		}
		else
		{
			values[0] = Int64GetDatum(Min(a->id, b->id));
			values[1] = Int64GetDatum(Max(a->id, b->id));
			values[2] = Float8GetDatum(similarity);
			values[3] = Int32GetDatum(distance);
			tuplestore_putvalues(d->out, d->out_desc, values, nulls);
		}
		d->pairs++;
	}
	MemoryContextSwitchTo(caller);
	MemoryContextReset(d->row_context);
}

/* The pair's texts reach the threshold: their Jaccard into *jaccard. */
static bool
Verified(Discovery *d, const FetchedRow *b, uint64 row, Verifying *v, double *jaccard)
{
	ShingleSet *second;

	if (v->first == NULL)
		return false;
	second = DiscoveryTextSet(d, v->texts, row, b->slot);
	return second != NULL &&
		ShingleSetJaccardReaches(v->first, second, d->req->threshold, jaccard);
}

/* One partition that fits: sorted, each pair once, scored. */
static void
ScoreInMemory(Discovery *d, Spill *spill, int part, FetchedRow *a, FetchedRow *b, Verifying *v)
{
	uint64		n;
	Edge	   *edges = (Edge *) SpillTake(spill, part, &n);
	uint64		fetched_lo = PG_UINT64_MAX;

	SortEdges(edges, n);
	for (uint64 i = 0; i < n; i++)
	{
		if (i > 0 && edges[i].lo == edges[i - 1].lo && edges[i].hi == edges[i - 1].hi)
			continue;
		d->candidates++;
		if (edges[i].lo != fetched_lo)
		{
			CHECK_FOR_INTERRUPTS();
			Fetch(d, edges[i].lo, a);
			fetched_lo = edges[i].lo;
			if (v && a->found)
			{
				MemoryContextReset(v->first_context);
				v->first = DiscoveryFirstTextSet(d, v->texts, edges[i].lo, a->slot, v->first_context);
			}
		}
		if (!a->found)
			continue;
		Fetch(d, edges[i].hi, b);
		if (b->found)
			ScorePair(d, a, b, edges[i].hi, v);
	}
	pfree(edges);
}

/* One partition: split again while it does not fit, then scored. */
static void
ScorePartition(Discovery *d, Spill *spill, int part, int level, FetchedRow *a, FetchedRow *b,
			   Verifying *v)
{
	uint64		n = SpillRecords(spill, part);

	CHECK_FOR_INTERRUPTS();
	if (n * sizeof(Edge) > d->budget && level < PAIRS_MAX_LEVEL)
	{
		int			nparts = DiscoveryPartitions(d->budget, (double) n, sizeof(Edge));
		Spill	   *split = SpillSplit(spill, part, Max(nparts, 2));

		for (int i = 0; i < SpillPartitions(split); i++)
			ScorePartition(d, split, i, level + 1, a, b, v);
		SpillEnd(split);
		return;
	}
	ScoreInMemory(d, spill, part, a, b, v);
}

/* Step 4: the partitions of candidates this participant claims, scored */
void
DiscoveryScorePairs(Discovery *d)
{
	Spill	   *edges = DiscoveryReadSpill(d, "g", d->edges, d->partitions, sizeof(Edge),
										   DiscoveryEdgePartition);
	FetchedRow	a = {0};
	FetchedRow	b = {0};
	Verifying	verifying = {0};
	Verifying  *v = NULL;
	int			part;

	a.slot = table_slot_create(d->rel, NULL);
	b.slot = table_slot_create(d->rel, NULL);
	if (d->shared)
		d->results = DiscoveryWriteSpill(d, "r", 1, sizeof(PairResult), NULL);
	if (d->verify_att > 0)
	{
		v = &verifying;
		v->texts = DiscoveryTextsCreate(d);
		v->first_context = AllocSetContextCreate(CurrentMemoryContext, "ndd discovery first text",
												 ALLOCSET_DEFAULT_SIZES);
	}
	while (DiscoveryClaim(d, DISCOVERY_STEP_SCORE, d->partitions, &part))
		ScorePartition(d, edges, part, 0, &a, &b, v);
	SpillEnd(edges);
	d->edges = NULL;
	if (d->results)
	{
		SpillEnd(d->results);
		d->results = NULL;
	}
	ExecDropSingleTupleTableSlot(a.slot);
	ExecDropSingleTupleTableSlot(b.slot);
}
