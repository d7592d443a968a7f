/*
 * discovery_group.c
 *		Step 4 of the discovery engine (discovery.h): the rows of each kept
 *		key paired, when their summaries are close enough.
 *
 * Each partition of entries is read into memory and sorted by key; within
 * the run of a key every two rows are tested on their summaries, the test
 * the SQL path's self-join applies (low bits for minhash, the distance for
 * simhash).  A pair that shares several keys comes out once per key here;
 * step 5 counts it once.  A partition that would not fit in work_mem is
 * split again by other bits of its keys' hashes first: a key's run is
 * never split, so only one key shared by a great many rows (a quadratic
 * number of pairs anyway) is read whole past the budget.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "base/radix_sort.h"
#include "features/discovery.h"

/* pair tests between checks for cancel */
#define GROUP_TESTS_PER_CHECK	65536

/*
 * An entry's key and its place in the partition, to sort by key: the radix
 * sort is stable, so a key's entries stay in the partition's order.  A
 * narrow entry's tag and place take 8 bytes (TagIndex), a wide one's 16.
 */
typedef struct TagIndex
{
	uint32		tag;
	uint32		index;
} TagIndex;

typedef struct KeyIndex
{
	uint64		key;
	uint64		index;
} KeyIndex;

/* the i-th of the sorted order: its key, and its entry's place */
static pg_attribute_always_inline uint64
OrderKey(const void *order, uint64 i, bool narrow)
{
	return narrow ? ((const TagIndex *) order)[i].tag : ((const KeyIndex *) order)[i].key;
}

static pg_attribute_always_inline uint64
OrderIndex(const void *order, uint64 i, bool narrow)
{
	return narrow ? ((const TagIndex *) order)[i].index : ((const KeyIndex *) order)[i].index;
}

/*
 * Entries of the sorted order looked ahead of: a run's entries lie anywhere
 * in the partition, so each read of one missed the cache (at 10M rows
 * GroupInMemory was a tenth of the engine's time); fetched this far ahead,
 * they are in cache when their run is gathered.
 */
#define GROUP_PREFETCH_AHEAD	16

/* Fetch order[j]'s entry into cache if it will be read: its key has another row. */
static pg_attribute_always_inline void
PrefetchEntry(const char *records, Size width, const void *order, uint64 n, uint64 j, bool narrow)
{
	const char *entry;
	uint64		key;

	if (j >= n)
		return;
	key = OrderKey(order, j, narrow);
	if (!((j > 0 && OrderKey(order, j - 1, narrow) == key) ||
		  (j + 1 < n && OrderKey(order, j + 1, narrow) == key)))
		return;
	entry = records + OrderIndex(order, j, narrow) * width;
	__builtin_prefetch(entry);
	__builtin_prefetch(entry + width - 1);
}

/*
 * A run's rows and summaries side by side: the run's entries lie anywhere
 * in the partition, and every row is tested against every other, so each
 * entry is read from memory once, not once per test.  Rows are as the
 * entries number them (narrow: 32-bit numbers; wide: packed TIDs).
 */
typedef struct Run
{
	uint32		n;
	uint32		room;
	uint64	   *rows;
	uint64	   *summaries;
} Run;

static pg_attribute_always_inline void
GatherRun(Discovery *d, Run *run, const char *records, const void *order, uint32 start,
		  uint32 end, bool narrow)
{
	int			words = d->keys.summary_words;

	if (end - start > run->room)
	{
		run->room = Max(end - start, 2 * run->room);
		if (run->rows)
		{
			pfree(run->rows);
			pfree(run->summaries);
		}
		run->rows = palloc_extended(run->room * sizeof(uint64), MCXT_ALLOC_HUGE);
		run->summaries = palloc_extended((Size) run->room * words * sizeof(uint64), MCXT_ALLOC_HUGE);
	}
	run->n = end - start;
	for (uint32 i = 0; i < run->n; i++)
	{
		const char *entry = records + OrderIndex(order, start + i, narrow) * d->entry_width;

		run->rows[i] = narrow ? ((const NarrowEntry *) entry)->row : ((const WideEntry *) entry)->row;
		memcpy(&run->summaries[(Size) i * words], entry + d->entry_header, words * sizeof(uint64));
	}
}

/* Every two rows of a run whose summaries pass, as candidates. */
static void
PairRun(Discovery *d, const Run *run, uint64 *tests)
{
	const BucketKeys *bk = &d->keys;
	int			words = bk->summary_words;

	for (uint32 i = 0; i < run->n; i++)
	{
		for (uint32 j = i + 1; j < run->n; j++)
		{
			uint64		lo = Min(run->rows[i], run->rows[j]);
			uint64		hi = Max(run->rows[i], run->rows[j]);

			if ((++*tests % GROUP_TESTS_PER_CHECK) == 0)
				CHECK_FOR_INTERRUPTS();
			if (lo == hi ||
				!bk->close_enough(bk, &run->summaries[(Size) i * words], &run->summaries[(Size) j * words]))
				continue;
			if (d->narrow)
			{
				uint64		pair = NarrowPair((uint32) lo, (uint32) hi);

				SpillAdd(d->edges, &pair);
			}
			else
			{
				Edge		edge = {lo, hi};

				SpillAdd(d->edges, &edge);
			}
		}
	}
}

/* The partition's keys in order: each entry's key and place, grouped by key. */
static void *
SortedOrder(Discovery *d, const char *records, uint64 n)
{
	Size		width = d->narrow ? sizeof(TagIndex) : sizeof(KeyIndex);
	char	   *order = palloc_extended(Max(n, 1) * width, MCXT_ALLOC_HUGE);
	char	   *scratch = palloc_extended(Max(n, 1) * width, MCXT_ALLOC_HUGE);

	for (uint32 i = 0; i < n; i++)
	{
		const char *entry = records + (Size) i * d->entry_width;

		if (d->narrow)
			((TagIndex *) order)[i] = (TagIndex) {((const NarrowEntry *) entry)->tag, i};
		else
			((KeyIndex *) order)[i] = (KeyIndex) {((const WideEntry *) entry)->key, i};
	}
	if (d->narrow)
		RadixGroupRecords32(order, scratch, n, width, offsetof(TagIndex, tag));
	else
		RadixGroupRecords(order, scratch, n, width, offsetof(KeyIndex, key));
	pfree(scratch);
	return order;
}

/* Each run of the sorted order of more than one row, gathered and paired. */
static pg_attribute_always_inline void
PairRuns(Discovery *d, const char *records, const void *order, uint32 n, bool narrow)
{
	uint64		tests = 0;
	uint32		start = 0;
	Run			run = {0};

	for (uint32 i = 1; i <= n; i++)
	{
		PrefetchEntry(records, d->entry_width, order, n, (uint64) i + GROUP_PREFETCH_AHEAD, narrow);
		if (i < n && OrderKey(order, i, narrow) == OrderKey(order, start, narrow))
			continue;
		if (i - start > 1)
		{
			GatherRun(d, &run, records, order, start, i, narrow);
			PairRun(d, &run, &tests);
		}
		start = i;
	}
	if (run.rows)
	{
		pfree(run.rows);
		pfree(run.summaries);
	}
}

/* One partition that fits: sorted by key, each run paired. */
static void
GroupInMemory(Discovery *d, Spill *spill, int part, void *arg)
{
	uint64		n;
	char	   *records = SpillTake(spill, part, &n);
	void	   *order;

	if (n > PG_UINT32_MAX)
		elog(ERROR, "ndd: a partition of discovery holds too many keys");
	order = SortedOrder(d, records, n);
	if (d->narrow)
		PairRuns(d, records, order, (uint32) n, true);
	else
		PairRuns(d, records, order, (uint32) n, false);
	pfree(order);
	pfree(records);
}

/* Step 4: the partitions of entries this participant claims, into its edges */
void
DiscoveryGroupKeys(Discovery *d)
{
	Spill	   *entries = DiscoveryReadSpill(d, "e", d->entries, d->partitions, d->entry_width,
											 DiscoveryEntryPartition);
	int			part;

	d->edges = DiscoveryWriteSpill(d, "g", d->partitions, d->edge_width, DiscoveryEdgePartition);
	while (DiscoveryClaim(d, DISCOVERY_STEP_GROUP, d->partitions, &part))
		DiscoveryFitPartition(d, entries, part,
							  d->entry_width + 2 * (d->narrow ? sizeof(TagIndex) : sizeof(KeyIndex)),
							  d->budget, GroupInMemory, NULL);
	SpillEnd(entries);
	d->entries = NULL;
	if (d->shared)
	{
		SpillEnd(d->edges);
		d->edges = NULL;
	}
}
