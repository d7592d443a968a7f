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
 * sort is stable, so a key's entries stay in the partition's order.
 */
typedef struct KeyIndex
{
	uint64		key;
	uint64		index;
} KeyIndex;

#define ENTRY(records, width, i) ((const KeyEntry *) ((records) + (Size) (i) * (width)))

/*
 * Entries of the sorted order looked ahead of: a run's entries lie anywhere
 * in the partition, so each read of one missed the cache (at 10M rows
 * GroupInMemory was a tenth of the engine's time); fetched this far ahead,
 * they are in cache when their run is gathered.
 */
#define GROUP_PREFETCH_AHEAD	16

/* Fetch order[j]'s entry into cache if it will be read: its key has another row. */
static pg_attribute_always_inline void
PrefetchEntry(const char *records, Size width, const KeyIndex *order, uint64 n, uint64 j)
{
	const char *entry;

	if (j >= n || !((j > 0 && order[j - 1].key == order[j].key) ||
					(j + 1 < n && order[j + 1].key == order[j].key)))
		return;
	entry = records + order[j].index * width;
	__builtin_prefetch(entry);
	__builtin_prefetch(entry + width - 1);
}

/*
 * A run's rows and summaries side by side: the run's entries lie anywhere
 * in the partition, and every row is tested against every other, so each
 * entry is read from memory once, not once per test.
 */
typedef struct Run
{
	uint32		n;
	uint32		room;
	uint64	   *rows;
	uint64	   *summaries;
} Run;

static void
GatherRun(Discovery *d, Run *run, const char *records, const KeyIndex *order, uint32 start,
		  uint32 end)
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
		const KeyEntry *entry = ENTRY(records, d->entry_width, order[start + i].index);

		run->rows[i] = entry->row;
		memcpy(&run->summaries[(Size) i * words], entry->summary, words * sizeof(uint64));
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
			Edge		edge;

			if ((++*tests % GROUP_TESTS_PER_CHECK) == 0)
				CHECK_FOR_INTERRUPTS();
			if (run->rows[i] == run->rows[j] ||
				!bk->close_enough(bk, &run->summaries[(Size) i * words], &run->summaries[(Size) j * words]))
				continue;
			edge.lo = Min(run->rows[i], run->rows[j]);
			edge.hi = Max(run->rows[i], run->rows[j]);
			SpillAdd(d->edges, &edge);
		}
	}
}

/* One partition that fits: sorted by key, each run paired. */
static void
GroupInMemory(Discovery *d, Spill *spill, int part, void *arg)
{
	uint64		n;
	char	   *records = SpillTake(spill, part, &n);
	KeyIndex   *order = palloc_extended(Max(n, 1) * sizeof(KeyIndex), MCXT_ALLOC_HUGE);
	char	   *scratch = palloc_extended(Max(n, 1) * sizeof(KeyIndex), MCXT_ALLOC_HUGE);
	uint64		tests = 0;
	uint32		start = 0;
	Run			run = {0};

	if (n > PG_UINT32_MAX)
		elog(ERROR, "ndd: a partition of discovery holds too many keys");
	for (uint32 i = 0; i < n; i++)
	{
		order[i].key = ENTRY(records, d->entry_width, i)->key;
		order[i].index = i;
	}
	RadixGroupRecords((char *) order, scratch, n, sizeof(KeyIndex), offsetof(KeyIndex, key));
	pfree(scratch);
	for (uint32 i = 1; i <= n; i++)
	{
		PrefetchEntry(records, d->entry_width, order, n, (uint64) i + GROUP_PREFETCH_AHEAD);
		if (i < n && order[i].key == order[start].key)
			continue;
		if (i - start > 1)
		{
			GatherRun(d, &run, records, order, start, i);
			PairRun(d, &run, &tests);
		}
		start = i;
	}
	if (run.rows)
	{
		pfree(run.rows);
		pfree(run.summaries);
	}
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

	d->edges = DiscoveryWriteSpill(d, "g", d->partitions, sizeof(Edge), DiscoveryEdgePartition);
	while (DiscoveryClaim(d, DISCOVERY_STEP_GROUP, d->partitions, &part))
		DiscoveryFitPartition(d, entries, part, d->entry_width + 2 * sizeof(KeyIndex), d->budget,
							  GroupInMemory, NULL);
	SpillEnd(entries);
	d->entries = NULL;
	if (d->shared)
	{
		SpillEnd(d->edges);
		d->edges = NULL;
	}
}
