/*
 * discovery_count.c
 *		Step 2 of the discovery engine (discovery.h): each key's rows
 *		counted exactly, and the keys that more than one row holds sent on
 *		by the rows' heap ranges.
 *
 * Each partition of row keys is read into memory and grouped by key (a
 * radix sort: this is most of the engine's sorting); a key
 * of one row ends here (most keys, on most text), a key of several rows
 * goes out once for each of them, with its count, to the partition of the
 * row's heap range, where step 3 finds the row's summary.  A
 * partition that would not fit in work_mem is split again by other bits of
 * its keys' hashes first, as step 4 splits its own.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "base/radix_sort.h"
#include "features/discovery.h"

/*
 * The partition of a row's heap range: its block's share of the table's
 * blocks (every participant counts the same); split again, its row's
 * hash, so that a row's shared keys and its summary stay together.
 */
static int
RowRangePartition(uint32 row, int level, int nparts, const Discovery *d)
{
	if (level > 0)
		return DiscoveryPartitionOf(row, UINT64CONST(0x165667B19E3779F9) * (uint64) level, nparts);
	return DiscoveryBlockRange(d, row >> ROW_KEY_LINE_BITS, nparts);
}

int
DiscoverySharedKeyPartition(const void *record, int level, int nparts, const void *arg)
{
	return RowRangePartition(((const SharedKey *) record)->row, level, nparts, arg);
}

int
DiscoveryRowSummaryPartition(const void *record, int level, int nparts, const void *arg)
{
	return RowRangePartition(((const RowSummary *) record)->row, level, nparts, arg);
}

/*
 * The heap ranges of the summaries and shared keys: as many as the keys
 * expected would need if every key were shared, so that a range fits
 * work_mem (one that does not is split by row, both spills alike).  Known
 * before step 1, which writes the summaries; every participant computes
 * the same, from the shared request.
 */
int
DiscoveryRangePartitions(Discovery *d)
{
	return DiscoveryPartitions(d->budget, (double) Max(d->req->expected_keys, 1), sizeof(SharedKey));
}

/*
 * One partition that fits: grouped by tag, each key of several rows sent
 * on.  arg: the partition of step 1 it is (or a piece of), which with the
 * tag is the key.
 */
static void
CountInMemory(Discovery *d, Spill *spill, int part, void *arg)
{
	uint32		key_part = (uint32) *(int *) arg;
	uint64		n;
	RowKey	   *keys = (RowKey *) SpillTake(spill, part, &n);
	char	   *scratch = palloc_extended(Max(n, 1) * sizeof(RowKey), MCXT_ALLOC_HUGE);
	uint64		start = 0;

	RadixGroupRecords32((char *) keys, scratch, n, sizeof(RowKey), offsetof(RowKey, tag));
	pfree(scratch);
	for (uint64 i = 1; i <= n; i++)
	{
		if (i < n && keys[i].tag == keys[start].tag)
			continue;
		if (i - start > 1)
		{
			SharedKey	shared;

			shared.tag = keys[start].tag;
			shared.part_count = (key_part << SHARED_COUNT_BITS) |
				(uint32) Min(i - start, (uint64) SHARED_COUNT_MAX);
			for (uint64 j = start; j < i; j++)
			{
				shared.row = keys[j].row;
				SpillAdd(d->shared_keys, &shared);
			}
		}
		start = i;
	}
	pfree(keys);
}

/* Step 2: the partitions of row keys this participant claims, counted, into its shared keys */
void
DiscoveryCountKeys(Discovery *d)
{
	Spill	   *row_keys = DiscoveryReadSpill(d, "k", d->row_keys, d->partitions, sizeof(RowKey),
											  DiscoveryRowKeyPartition);
	int			part;

	d->shared_keys = DiscoveryWriteSpill(d, "s", d->range_partitions, sizeof(SharedKey),
										 DiscoverySharedKeyPartition);
	while (DiscoveryClaim(d, DISCOVERY_STEP_COUNT, d->partitions, &part))
	{
		/* a partition's number fits the shared key's bits for it */
		Assert(part < (1 << (32 - SHARED_COUNT_BITS)));
		DiscoveryFitPartition(d, row_keys, part, 2 * sizeof(RowKey), d->budget, CountInMemory, &part);
	}
	SpillEnd(row_keys);
	d->row_keys = NULL;
	if (d->shared)
	{
		SpillEnd(d->shared_keys);
		d->shared_keys = NULL;
	}
}
