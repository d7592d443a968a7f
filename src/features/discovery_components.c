/*
 * discovery_components.c
 *		Step 6 of the discovery engine, with verify_column (discovery.h): the
 *		pairs that passed on their sketches, grouped by connected component
 *		of their rows, for step 7 to check a group's pairs together.
 *
 * A family of near-duplicates spreads over the heap, so in the order of
 * their first rows its pairs lie far apart, and a text would be read and
 * shingled again for nearly every pair it is in.  Grouped by component,
 * the pairs of a family come one after the other and step 7's cache
 * holds each text's shingles for all of them.
 *
 * The components come from union-find over the rows (a simplehash from
 * PostgreSQL's template numbers them; union by rank, path halving).  The
 * leader builds it alone, from every participant's pairs: a pair costs
 * nearly constant time, far less than the texts it saves.  When its rows
 * come to take more than work_mem (about 30 bytes each) it is given up,
 * and each pair's group is its first row: step 7 then reads the pairs in
 * the order of step 5.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "base/hash.h"
#include "features/discovery.h"

/* partitions of step 7 a participant, at least, so that all share the texts */
#define GROUP_PARTITIONS_EACH	4

typedef struct RowSlot
{
	uint64		row;
	uint32		slot;
	char		status;			/* simplehash's */
} RowSlot;

#define SH_PREFIX rowslots
#define SH_ELEMENT_TYPE RowSlot
#define SH_KEY_TYPE uint64
#define SH_KEY row
#define SH_HASH_KEY(tb, key) ((uint32) NddHashMix(key))
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

typedef struct RowForest
{
	rowslots_hash *slots;		/* row -> slot */
	uint32	   *parent;			/* slot -> parent slot (itself at a root) */
	uint8	   *rank;			/* slot -> rank, at roots */
	uint32		count;
	uint32		room;			/* of parent and rank */
	Size		budget;
	bool		too_big;		/* it passed the budget: abandoned */
} RowForest;

/* The bytes the forest takes, about. */
static Size
ForestBytes(const RowForest *f)
{
	return (Size) f->slots->size * sizeof(RowSlot) + (Size) f->room * (sizeof(uint32) + 1);
}

/* A row's slot, a root of its own when it is new. */
static uint32
SlotOf(RowForest *f, uint64 row)
{
	bool		found;
	RowSlot    *entry = rowslots_insert(f->slots, row, &found);

	if (!found)
	{
		if (f->count == f->room)
		{
			f->room *= 2;
			f->parent = repalloc_huge(f->parent, (Size) f->room * sizeof(uint32));
			f->rank = repalloc_huge(f->rank, f->room);
		}
		entry->slot = f->count;
		f->parent[f->count] = f->count;
		f->rank[f->count] = 0;
		f->count++;
	}
	return entry->slot;
}

static uint32
Find(RowForest *f, uint32 slot)
{
	while (f->parent[slot] != slot)
	{
		f->parent[slot] = f->parent[f->parent[slot]];
		slot = f->parent[slot];
	}
	return slot;
}

static void
Union(void *arg, const void *record)
{
	RowForest  *f = arg;
	const TextCheck *check = record;
	uint32		a;
	uint32		b;

	if (f->too_big || (f->too_big = ForestBytes(f) > f->budget))
		return;
	a = Find(f, SlotOf(f, check->lo));
	b = Find(f, SlotOf(f, check->hi));
	if (a == b)
		return;
	if (f->rank[a] < f->rank[b])
		f->parent[a] = b;
	else
	{
		f->parent[b] = a;
		if (f->rank[a] == f->rank[b])
			f->rank[a]++;
	}
}

/* what step 6 passes to each pair it writes out */
typedef struct Grouping
{
	RowForest  *forest;			/* NULL: each pair's group is its first row */
	Spill	   *groups;
} Grouping;

static void
Regroup(void *arg, const void *record)
{
	Grouping   *g = arg;
	TextCheck	check = *(const TextCheck *) record;

	if (g->forest)
		check.group = Find(g->forest, rowslots_lookup(g->forest->slots, check.lo)->slot);
	SpillAdd(g->groups, &check);
}

/* A pair's partition: its group's hash, mixed anew at each level. */
int
DiscoveryGroupPartition(const void *record, int level, int nparts, const void *arg)
{
	const TextCheck *check = record;

	return DiscoveryPartitionOf(check->group, UINT64CONST(0x165667B19E3779F9) * (uint64) (level + 1),
								nparts);
}

/*
 * Step 6 (the leader, or the backend alone): every participant's pairs to
 * check, with their groups, into partitions by group.  The other
 * participants write nothing.
 */
void
DiscoveryGroupChecks(Discovery *d)
{
	Spill	   *checks;
	uint64		n;
	Grouping	g = {0};
	RowForest	forest = {0};

	if (d->verify_att <= 0 || d->participant != 0)
		return;
	checks = DiscoveryReadSpill(d, "v", d->checks, 1, sizeof(TextCheck), NULL);
	n = SpillRecords(checks, 0);
	/* a few partitions a participant at least: texts cost far more than pairs */
	d->group_partitions = Max(DiscoveryPartitions(d->budget, (double) n, sizeof(TextCheck)),
							  Min(SpillMaxPartitions(d->budget),
								  GROUP_PARTITIONS_EACH * DiscoveryParticipants(d)));
	g.groups = DiscoveryWriteSpill(d, "c", d->group_partitions, sizeof(TextCheck),
								   DiscoveryGroupPartition);

	/* 1. the components, unless their rows would take more than work_mem */
	forest.budget = d->budget;
	forest.room = 1024;
	forest.slots = rowslots_create(CurrentMemoryContext, forest.room, NULL);
	forest.parent = palloc(forest.room * sizeof(uint32));
	forest.rank = palloc(forest.room);
	SpillScan(checks, 0, Union, &forest);
	if (!forest.too_big)
		g.forest = &forest;

	/* 2. each pair with its group, into the partitions step 7 claims */
	SpillForEach(checks, 0, Regroup, &g);
	SpillEnd(checks);
	d->checks = NULL;
	rowslots_destroy(forest.slots);
	pfree(forest.parent);
	pfree(forest.rank);
	if (d->shared)
	{
		SpillEnd(g.groups);
		DiscoveryShareGroupPartitions(d);
	}
	else
		d->groups = g.groups;
}
