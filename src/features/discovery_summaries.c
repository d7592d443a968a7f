/*
 * discovery_summaries.c
 *		Step 3 of the discovery engine (discovery.h): each heap range's
 *		shared keys joined to its rows' summaries, and each row's kept keys
 *		sent on with its summary.
 *
 * Step 1 wrote every row's summary once, and step 2 every shared key of
 * it, to the partition of the row's heap range; sorted by row, each row's
 * shared keys and their counts lie together, and its summary is found
 * where the join has got to.  The row's drop_frequent most frequent keys
 * are left out by exact count, as ndd_colliding leaves them out by the
 * filter's; the rest go out with the summary, by key, for step 4.  The
 * table is not read again: before, this step fetched each row for its
 * summary, and at 10M rows those fetches re-read a table larger than
 * shared_buffers.  A range that would not fit in work_mem is split by row
 * in both spills alike, so that a row's keys and summary meet in the same
 * piece.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "base/radix_sort.h"
#include "features/discovery.h"
#include "keys/key_filter.h"

/* One piece's summaries, sorted by row, and how far the join has read them. */
typedef struct Summaries
{
	char	   *records;
	uint64		n;
	uint64		next;
	Size		width;
} Summaries;

#define SUMMARY(s, i) ((const RowSummary *) ((s)->records + (Size) (i) * (s)->width))

/* The summary of row: rows come in order, so it lies at or after the last. */
static const uint32 *
SummaryOf(Summaries *s, uint32 row)
{
	while (s->next < s->n && SUMMARY(s, s->next)->row < row)
		s->next++;
	if (s->next == s->n || SUMMARY(s, s->next)->row != row)
		elog(ERROR, "ndd: discovery found no summary for a row with shared keys");
	return SUMMARY(s, s->next)->summary;
}

/* One row's shared keys[0 .. n) less its most frequent, spilled with its summary. */
static void
KeepRowKeys(Discovery *d, const uint32 *summary, const SharedKey *shared, int n)
{
	MemoryContext caller = MemoryContextSwitchTo(d->row_context);
	uint64	   *keys = palloc(n * sizeof(uint64));
	uint32	   *counts = palloc(n * sizeof(uint32));
	uint64	   *kept = palloc(n * sizeof(uint64));
	char	   *entry = palloc(d->entry_width);
	NarrowEntry *header = (NarrowEntry *) entry;
	int			nkept;

	/* counting exactly needs 32-bit row numbers (DiscoveryOpen) */
	Assert(d->narrow);
	for (int i = 0; i < n; i++)
	{
		keys[i] = SharedKeyKey(&shared[i]);
		counts[i] = SharedKeyCount(&shared[i]);
	}
	memcpy(EntrySummary(entry, d->entry_header), summary, d->keys.summary_words * sizeof(uint64));
	nkept = KeysLessMostFrequent(keys, counts, n, d->req->drop_frequent, kept);
	d->counts[COUNT_KEPT] += nkept;
	header->row = shared[0].row;
	for (int i = 0; i < nkept; i++)
	{
		/* a shared key's number is its partition of step 1, then its tag */
		header->tag = (uint32) kept[i];
		SpillAddTo(d->entries, (int) (kept[i] >> 32), entry);
	}
	MemoryContextSwitchTo(caller);
	MemoryContextReset(d->row_context);
}

/* One piece that fits: its shared keys and summaries sorted by row, joined. */
static void
JoinInMemory(Discovery *d, Spill *shared_keys, Spill *summaries, int part)
{
	uint64		n;
	SharedKey  *shared = (SharedKey *) SpillTake(shared_keys, part, &n);
	Summaries	s = {0};
	char	   *scratch;
	uint64		start = 0;

	s.records = SpillTake(summaries, part, &s.n);
	s.width = d->summary_width;
	scratch = palloc_extended(Max(Max(n * sizeof(SharedKey), s.n * s.width), 1), MCXT_ALLOC_HUGE);
	RadixSortRecords32((char *) shared, scratch, n, sizeof(SharedKey), offsetof(SharedKey, row));
	RadixSortRecords32(s.records, scratch, s.n, s.width, offsetof(RowSummary, row));
	pfree(scratch);
	for (uint64 i = 1; i <= n; i++)
	{
		if (i < n && shared[i].row == shared[start].row)
			continue;
		CHECK_FOR_INTERRUPTS();
		KeepRowKeys(d, SummaryOf(&s, shared[start].row), &shared[start], (int) (i - start));
		start = i;
	}
	pfree(s.records);
	pfree(shared);
}

/*
 * Partition part of both spills, split again by row, both alike, while
 * its records and their sorting space would not fit work_mem.
 */
static void
FitRange(Discovery *d, Spill *shared_keys, Spill *summaries, int part, int level)
{
	double		need = (double) SpillRecords(shared_keys, part) * 2 * sizeof(SharedKey) +
		(double) SpillRecords(summaries, part) * 2 * d->summary_width;

	CHECK_FOR_INTERRUPTS();
	if (need > d->budget && level < DISCOVERY_MAX_SPLITS)
	{
		int			nparts = Max(DiscoveryPartitions(d->budget, need, 1), 2);
		Spill	   *keys_split = SpillSplit(shared_keys, part, nparts);
		Spill	   *summaries_split = SpillSplit(summaries, part, nparts);

		for (int i = 0; i < nparts; i++)
			FitRange(d, keys_split, summaries_split, i, level + 1);
		SpillEnd(keys_split);
		SpillEnd(summaries_split);
		return;
	}
	JoinInMemory(d, shared_keys, summaries, part);
}

/* Step 3: the heap ranges this participant claims, into its spill of entries */
void
DiscoverySummaries(Discovery *d)
{
	Spill	   *shared_keys = DiscoveryReadSpill(d, "s", d->shared_keys, d->range_partitions,
												 sizeof(SharedKey), DiscoverySharedKeyPartition);
	Spill	   *summaries = DiscoveryReadSpill(d, "u", d->summaries, d->range_partitions,
											   d->summary_width, DiscoveryRowSummaryPartition);
	int			part;

	d->entries = DiscoveryWriteSpill(d, "e", d->partitions, d->entry_width, DiscoveryEntryPartition);
	while (DiscoveryClaim(d, DISCOVERY_STEP_SUMMARIES, d->range_partitions, &part))
		FitRange(d, shared_keys, summaries, part, 0);
	SpillEnd(shared_keys);
	d->shared_keys = NULL;
	SpillEnd(summaries);
	d->summaries = NULL;
	if (d->shared)
	{
		SpillEnd(d->entries);
		d->entries = NULL;
	}
}
