/*
 * discovery_group.c
 *		Step 3 of the discovery engine (discovery.h): the rows of each kept
 *		key paired, when their summaries are close enough.
 *
 * Each partition of entries is read into memory and sorted by key; within
 * the run of a key every two rows are tested on their summaries, the test
 * the SQL path's self-join applies (low bits for minhash, the distance for
 * simhash).  A pair that shares several keys comes out once per key here;
 * step 4 counts it once.  A partition that would not fit in work_mem is
 * split again by other bits of its keys' hashes first: a key's run is
 * never split, so only one key shared by a great many rows (a quadratic
 * number of pairs anyway) is read whole past the budget.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "features/discovery.h"

/* splits of one partition, at most, before it is read as it is */
#define GROUP_MAX_LEVEL		4

/* pair tests between checks for cancel */
#define GROUP_TESTS_PER_CHECK	65536

/* an entry's key and its place in the partition, to sort */
typedef struct KeyIndex
{
	uint64		key;
	uint32		index;
} KeyIndex;

#define ST_SORT SortKeyIndex
#define ST_ELEMENT_TYPE KeyIndex
#define ST_COMPARE(a, b) \
	((a)->key != (b)->key ? ((a)->key > (b)->key) - ((a)->key < (b)->key) : \
	 ((a)->index > (b)->index) - ((a)->index < (b)->index))
#define ST_CHECK_FOR_INTERRUPTS
#define ST_SCOPE static
#define ST_DECLARE
#define ST_DEFINE
#include "lib/sort_template.h"

#define ENTRY(records, width, i) ((const KeyEntry *) ((records) + (Size) (i) * (width)))

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
GroupInMemory(Discovery *d, Spill *spill, int part)
{
	uint64		n;
	char	   *records = SpillTake(spill, part, &n);
	KeyIndex   *order = palloc_extended(Max(n, 1) * sizeof(KeyIndex), MCXT_ALLOC_HUGE);
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
	SortKeyIndex(order, n);
	for (uint32 i = 1; i <= n; i++)
	{
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

/* One partition: split again while it does not fit, then grouped. */
static void
GroupPartition(Discovery *d, Spill *spill, int part, int level)
{
	uint64		n = SpillRecords(spill, part);
	Size		need = n * (d->entry_width + sizeof(KeyIndex));

	CHECK_FOR_INTERRUPTS();
	if (n < 2)
	{
		pfree(SpillTake(spill, part, &n));
		return;
	}
	if (need > d->budget && level < GROUP_MAX_LEVEL)
	{
		int			nparts = DiscoveryPartitions(d->budget, (double) n, d->entry_width + sizeof(KeyIndex));
		Spill	   *split = SpillSplit(spill, part, Max(nparts, 2));

		for (int i = 0; i < SpillPartitions(split); i++)
			GroupPartition(d, split, i, level + 1);
		SpillEnd(split);
		return;
	}
	GroupInMemory(d, spill, part);
}

/* Step 3: the partitions of entries this participant claims, into its edges */
void
DiscoveryGroupKeys(Discovery *d)
{
	Spill	   *entries = DiscoveryReadSpill(d, "e", d->entries, d->partitions, d->entry_width,
											 DiscoveryEntryPartition);
	int			part;

	d->edges = DiscoveryWriteSpill(d, "g", d->partitions, sizeof(Edge), DiscoveryEdgePartition);
	while (DiscoveryClaim(d, DISCOVERY_STEP_GROUP, d->partitions, &part))
		GroupPartition(d, entries, part, 0);
	SpillEnd(entries);
	d->entries = NULL;
	if (d->shared)
	{
		SpillEnd(d->edges);
		d->edges = NULL;
	}
}
