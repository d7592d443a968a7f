/*
 * discovery_summaries.c
 *		Step 3 of the discovery engine (discovery.h): the rows that share a
 *		key fetched in heap order, each once, for the summary of its sketch.
 *
 * A partition of shared keys holds one heap range; sorted by row, each
 * row's shared keys and their counts lie together.  The row is fetched
 * under the engine's snapshot (the version step 1 read), its summary made
 * as step 1 made its keys, and its drop_frequent most frequent keys left
 * out by exact count, as ndd_colliding leaves them out by the filter's.
 * The rest go out with the summary, by key, for step 4.  Ranges are
 * claimed in order, so the heap is read forward, block by block, by all
 * participants together.
 */
#include "postgres.h"

#include "access/tableam.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "base/radix_sort.h"
#include "features/discovery.h"
#include "keys/key_filter.h"

/* One row's shared keys[0 .. n): fetched, summarized, its kept keys spilled. */
static void
SummarizeRow(Discovery *d, FetchedRow *r, const SharedKey *shared, int n)
{
	const BucketKeys *bk = &d->keys;
	MemoryContext caller;
	uint64	   *keys;
	uint32	   *counts;
	uint64	   *kept;
	KeyEntry   *entry;
	int			nkept;

	DiscoveryFetch(d, PackRowNumber(shared[0].row), r);
	if (!r->found)
		return;
	caller = MemoryContextSwitchTo(d->row_context);
	keys = palloc(n * sizeof(uint64));
	counts = palloc(n * sizeof(uint32));
	kept = palloc(n * sizeof(uint64));
	entry = palloc(d->entry_width);
	for (int i = 0; i < n; i++)
	{
		keys[i] = SharedKeyKey(&shared[i]);
		counts[i] = shared[i].count;
	}
	(void) bk->keys(bk, r->sketch, NULL, entry->summary);
	nkept = KeysLessMostFrequent(keys, counts, n, d->req->drop_frequent, kept);
	d->counts[COUNT_KEPT] += nkept;
	entry->row = PackRowNumber(shared[0].row);
	for (int i = 0; i < nkept; i++)
	{
		entry->key = kept[i];
		SpillAdd(d->entries, entry);
	}
	MemoryContextSwitchTo(caller);
	MemoryContextReset(d->row_context);
}

/* One partition that fits: sorted by row, each row summarized once. */
static void
SummarizeInMemory(Discovery *d, Spill *spill, int part, void *arg)
{
	FetchedRow *r = arg;
	uint64		n;
	SharedKey  *shared = (SharedKey *) SpillTake(spill, part, &n);
	char	   *scratch = palloc_extended(Max(n, 1) * sizeof(SharedKey), MCXT_ALLOC_HUGE);
	uint64		start = 0;

	RadixSortRecords32((char *) shared, scratch, n, sizeof(SharedKey), offsetof(SharedKey, row));
	pfree(scratch);
	for (uint64 i = 1; i <= n; i++)
	{
		if (i < n && shared[i].row == shared[start].row)
			continue;
		CHECK_FOR_INTERRUPTS();
		SummarizeRow(d, r, &shared[start], (int) (i - start));
		start = i;
	}
	pfree(shared);
}

/* Step 3: the heap ranges this participant claims, into its spill of entries */
void
DiscoverySummaries(Discovery *d)
{
	Spill	   *shared_keys;
	FetchedRow	r = {0};
	int			part;

	/* a worker that joined after step 2 computes the ranges here */
	d->range_partitions = DiscoveryRangePartitions(d);
	shared_keys = DiscoveryReadSpill(d, "s", d->shared_keys, d->range_partitions,
									 sizeof(SharedKey), DiscoverySharedKeyPartition);
	r.slot = table_slot_create(d->rel, NULL);
	d->entries = DiscoveryWriteSpill(d, "e", d->partitions, d->entry_width, DiscoveryEntryPartition);
	while (DiscoveryClaim(d, DISCOVERY_STEP_SUMMARIES, d->range_partitions, &part))
		DiscoveryFitPartition(d, shared_keys, part, 2 * sizeof(SharedKey), d->budget, SummarizeInMemory, &r);
	SpillEnd(shared_keys);
	d->shared_keys = NULL;
	if (d->shared)
	{
		SpillEnd(d->entries);
		d->entries = NULL;
	}
	ExecDropSingleTupleTableSlot(r.slot);
}
