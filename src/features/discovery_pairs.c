/*
 * discovery_pairs.c
 *		Step 5 of the discovery engine (discovery.h): each candidate pair
 *		once, its rows fetched by heap position and scored.
 *
 * A partition of candidates holds every pair of its first rows, so sorted
 * by (first row, second row) each pair's copies (one per shared key) lie
 * together and each first row's partners follow it: the first row is
 * fetched once, each partner once per pair.  Both rows are read under the
 * engine's snapshot, so they are the versions steps 1 and 3 saw.  The
 * pair is reported as the SQL path reports it: ids in order, a pair of
 * rows with one id never, the score of the kind's functions.  With
 * verification a pair that passes is not reported yet but kept, by its
 * rows, for steps 6 and 7 (discovery_components.c, discovery_verify.c).
 */
#include "postgres.h"

#include "access/tableam.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "base/sketch_column.h"
#include "base/radix_sort.h"
#include "features/discovery.h"

/*
 * Candidates sorted by (lo, hi).  Narrow pairs are one 64-bit number each,
 * sorted once (at 10M rows the two sorts of 16-byte edges, by hi and then
 * stably by lo, moved 2.5 times the bytes); wide ones are sorted twice.
 */
static void
SortPairs(Discovery *d, char *pairs, uint64 n)
{
	char	   *scratch = palloc_extended(Max(n, 1) * d->edge_width, MCXT_ALLOC_HUGE);

	if (d->narrow)
		RadixSortRecords(pairs, scratch, n, sizeof(uint64), 0);
	else
	{
		RadixSortRecords(pairs, scratch, n, sizeof(Edge), offsetof(Edge, hi));
		RadixSortRecords(pairs, scratch, n, sizeof(Edge), offsetof(Edge, lo));
	}
	pfree(scratch);
}

/* The i-th pair's rows, as packed TIDs. */
static inline Edge
PairAt(const Discovery *d, const char *pairs, uint64 i)
{
	uint64		pair;
	Edge		edge;

	if (!d->narrow)
		return ((const Edge *) pairs)[i];
	pair = ((const uint64 *) pairs)[i];
	edge.lo = PackRowNumber((uint32) (pair >> 32));
	edge.hi = PackRowNumber((uint32) pair);
	return edge;
}

/* Fetch the row at a packed position, as the engine's snapshot sees it. */
void
DiscoveryFetch(Discovery *d, uint64 row, FetchedRow *r)
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

/*
 * A pair into the answer, ids in order: the leader's tuplestore, or a
 * parallel participant's file of pairs for the leader.
 */
void
DiscoveryAnswer(Discovery *d, int64 id_a, int64 id_b, double similarity, int32 distance,
				bool distance_null)
{
	if (d->results)
	{
		PairResult	r = {Min(id_a, id_b), Max(id_a, id_b), similarity, distance, distance_null};

		SpillAdd(d->results, &r);
	}
	else
	{
		Datum		values[4];
		bool		nulls[4] = {false, false, false, distance_null};

		values[0] = Int64GetDatum(Min(id_a, id_b));
		values[1] = Int64GetDatum(Max(id_a, id_b));
		values[2] = Float8GetDatum(similarity);
		values[3] = Int32GetDatum(distance);
		tuplestore_putvalues(d->out, d->out_desc, values, nulls);
	}
	d->counts[COUNT_PAIRS]++;
}

/*
 * Score one pair (rows lo and hi, fetched in a and b): when it qualifies,
 * into the answer, or with verification to be checked on its texts.
 */
static void
ScorePair(Discovery *d, const FetchedRow *a, const FetchedRow *b, uint64 lo, uint64 hi)
{
	const BucketKeys *bk = &d->keys;
	double		similarity;
	int32		distance;
	bool		distance_null = false;
	bool		qualifies;
	MemoryContext caller;

	if (a->id == b->id)
		return;
	caller = MemoryContextSwitchTo(d->row_context);
	qualifies = bk->score(bk, a->id < b->id ? a->sketch : b->sketch,
						  a->id < b->id ? b->sketch : a->sketch,
						  &similarity, &distance, &distance_null);
	MemoryContextSwitchTo(caller);
	MemoryContextReset(d->row_context);
	if (!qualifies)
		return;
	if (d->checks)
	{
		TextCheck	check = {lo, lo, hi, distance, distance_null};

		SpillAdd(d->checks, &check);
	}
	else
		DiscoveryAnswer(d, a->id, b->id, similarity, distance, distance_null);
}

/* One partition that fits: sorted, each pair once, scored. */
static void
ScoreInMemory(Discovery *d, Spill *spill, int part, void *arg)
{
	FetchedRow *a = &((FetchedRow *) arg)[0];
	FetchedRow *b = &((FetchedRow *) arg)[1];
	uint64		n;
	char	   *pairs = SpillTake(spill, part, &n);
	Edge		last = {PG_UINT64_MAX, PG_UINT64_MAX};

	SortPairs(d, pairs, n);
	for (uint64 i = 0; i < n; i++)
	{
		Edge		edge = PairAt(d, pairs, i);

		if (edge.lo == last.lo && edge.hi == last.hi)
			continue;
		d->counts[COUNT_CANDIDATES]++;
		if (edge.lo != last.lo)
		{
			CHECK_FOR_INTERRUPTS();
			DiscoveryFetch(d, edge.lo, a);
		}
		last = edge;
		if (!a->found)
			continue;
		DiscoveryFetch(d, edge.hi, b);
		if (b->found)
			ScorePair(d, a, b, edge.lo, edge.hi);
	}
	pfree(pairs);
}

/*
 * Step 5: the partitions of candidates this participant claims, scored;
 * with verification, those that pass kept for step 6.
 */
void
DiscoveryScorePairs(Discovery *d)
{
	Spill	   *edges = DiscoveryReadSpill(d, "g", d->edges, d->partitions, d->edge_width,
										   DiscoveryEdgePartition);
	FetchedRow	rows[2] = {{0}};
	int			part;

	rows[0].slot = table_slot_create(d->rel, NULL);
	rows[1].slot = table_slot_create(d->rel, NULL);
	if (d->verify_att > 0)
		d->checks = DiscoveryWriteSpill(d, "v", 1, sizeof(TextCheck), NULL);
	else if (d->shared)
		d->results = DiscoveryWriteSpill(d, "r", 1, sizeof(PairResult), NULL);
	while (DiscoveryClaim(d, DISCOVERY_STEP_SCORE, d->partitions, &part))
		DiscoveryFitPartition(d, edges, part, 2 * d->edge_width, d->budget, ScoreInMemory, rows);
	SpillEnd(edges);
	d->edges = NULL;
	if (d->shared && d->checks)
	{
		SpillEnd(d->checks);
		d->checks = NULL;
	}
	if (d->results)
	{
		SpillEnd(d->results);
		d->results = NULL;
	}
	ExecDropSingleTupleTableSlot(rows[0].slot);
	ExecDropSingleTupleTableSlot(rows[1].slot);
}
