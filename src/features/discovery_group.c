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

/* Every two rows of one key's run [start, end) whose summaries pass. */
static void
PairRun(Discovery *d, const char *records, const KeyIndex *order, uint32 start, uint32 end,
		uint64 *tests)
{
	const BucketKeys *bk = &d->keys;

	for (uint32 i = start; i < end; i++)
	{
		const KeyEntry *x = ENTRY(records, d->entry_width, order[i].index);

		for (uint32 j = i + 1; j < end; j++)
		{
			const KeyEntry *y = ENTRY(records, d->entry_width, order[j].index);
			Edge		edge;

			if ((++*tests % GROUP_TESTS_PER_CHECK) == 0)
				CHECK_FOR_INTERRUPTS();
			if (x->row == y->row || !bk->close_enough(bk, x->summary, y->summary))
				continue;
			edge.lo = Min(x->row, y->row);
			edge.hi = Max(x->row, y->row);
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
			PairRun(d, records, order, start, i, &tests);
		start = i;
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
