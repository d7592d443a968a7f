/*
 * shingle_group.c
 *		The shingle sets of up to 64 texts in one table; see shingle_group.h.
 *
 * Checking a family's pairs one by one probes each pair's smaller set into
 * the larger: a family of 12 texts of 1,500 shingles, in about 54 pairs,
 * costs some 80,000 probes after the 18,000 inserts that made its sets,
 * and that probing was the largest part of verification.  Here every text
 * of a group is added to one open-addressing table whose slots hold a
 * hash and the texts that hold it, one bit each: a text costs an insert
 * per shingle and nothing per pair.  Each text's size is counted as its
 * bits are first set; then the slots are gathered by their texts (a
 * family has few such combinations: the shingles every copy holds, and
 * those of each copy's own edits), and each combination adds its count to
 * every two texts it holds.  The counts are the ones probing gives, so
 * each Jaccard is the same to the bit (ShingleJaccardOfCounts).
 *
 * Slots are placed as shingle_set.c places them (multiply-shift with the
 * backend's salt, linear probing, at most half full).  The table keeps
 * within a budget of memory; past it the group says so, and the caller
 * checks the group's pairs one at a time instead.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/pg_bitutils.h"

#include "text/shingle_group.h"
#include "text/shingle_set.h"

/* slots of a new group's table */
#define SHINGLE_GROUP_START_SLOTS	1024

/* hashes placed between looks at interrupts */
#define SHINGLE_GROUP_RUN			256

struct ShingleGroup
{
	int			ntexts;
	Size		budget;			/* bytes the tables may take */
	bool		over;			/* they would take more: the group is not counted */
	uint64	   *hashes;			/* each slot's hash, SHINGLE_SET_FREE if free */
	uint64	   *holders;		/* each slot's texts, a bit each */
	size_t		mask;			/* slots less one */
	int			shift;			/* 64 less log2 of the slots */
	size_t		nslotted;
	uint64		free_holders;	/* the texts holding the hash SHINGLE_SET_FREE */
	uint64		adding;			/* the bit of the text being added */
	int			member;			/* and its number */
	uint32		sizes[SHINGLE_GROUP_MAX_TEXTS]; /* distinct shingles of each text */
	uint32	   *common;			/* after counting: [a * ntexts + b] for a < b */
};

static pg_attribute_always_inline size_t
Home(uint64 hash, uint64 salt, int shift)
{
	return (size_t) ((hash * salt) >> shift);
}

/*
 * Slots for nslots (a power of two), unless they would pass the budget with
 * as many again for counting (ShingleGroupCount's combinations).
 */
static bool
AllocSlots(ShingleGroup *group, size_t nslots)
{
	if (nslots * (2 * sizeof(uint64) + sizeof(uint64) + sizeof(uint32)) > group->budget)
	{
		group->over = true;
		return false;
	}
	group->hashes = palloc_extended(nslots * sizeof(uint64), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	group->holders = palloc_extended(nslots * sizeof(uint64), MCXT_ALLOC_HUGE);
	group->mask = nslots - 1;
	group->shift = 64 - pg_leftmost_one_pos64(nslots);
	return true;
}

/* A group of ntexts texts (at most SHINGLE_GROUP_MAX_TEXTS), none added yet. */
ShingleGroup *
ShingleGroupCreate(int ntexts, Size budget)
{
	ShingleGroup *group = palloc0(sizeof(ShingleGroup));

	Assert(ntexts > 0 && ntexts <= SHINGLE_GROUP_MAX_TEXTS);
	StaticAssertStmt(SHINGLE_SET_FREE == 0, "free slots are zeroed");
	group->ntexts = ntexts;
	group->budget = budget;
	AllocSlots(group, SHINGLE_GROUP_START_SLOTS);
	return group;
}

/* Double the slots, moving each hash and its texts; false past the budget. */
static bool
Grow(ShingleGroup *group)
{
	uint64	   *old_hashes = group->hashes;
	uint64	   *old_holders = group->holders;
	size_t		old_slots = group->mask + 1;
	uint64		salt = ShingleSetSalt();

	if (!AllocSlots(group, old_slots * 2))
		return false;
	for (size_t from = 0; from < old_slots; from++)
	{
		size_t		i;

		if (old_hashes[from] == SHINGLE_SET_FREE)
			continue;
		for (i = Home(old_hashes[from], salt, group->shift); group->hashes[i] != SHINGLE_SET_FREE;
			 i = (i + 1) & group->mask)
			;
		group->hashes[i] = old_hashes[from];
		group->holders[i] = old_holders[from];
	}
	pfree(old_hashes);
	pfree(old_holders);
	return true;
}

/* The text being added holds hash: its bit in the hash's slot, counted the first time. */
static pg_attribute_always_inline void
Place(ShingleGroup *group, uint64 hash, uint64 salt)
{
	size_t		i;

	if (unlikely(hash == SHINGLE_SET_FREE))
	{
		if (!(group->free_holders & group->adding))
			group->sizes[group->member]++;
		group->free_holders |= group->adding;
		return;
	}
	for (i = Home(hash, salt, group->shift);; i = (i + 1) & group->mask)
	{
		if (group->hashes[i] == SHINGLE_SET_FREE)
		{
			group->hashes[i] = hash;
			group->holders[i] = group->adding;
			group->nslotted++;
			group->sizes[group->member]++;
			return;
		}
		if (group->hashes[i] == hash)
		{
			if (!(group->holders[i] & group->adding))
				group->sizes[group->member]++;
			group->holders[i] |= group->adding;
			return;
		}
	}
}

/* A batch of the text's hashes (a ShingleHashSink): room made first, then placed. */
static void
AddBatch(void *arg, const uint64 *hashes, int n)
{
	ShingleGroup *group = arg;
	uint64		salt = ShingleSetSalt();

	for (int from = 0; from < n && !group->over; from += SHINGLE_GROUP_RUN)
	{
		int			run = Min(n - from, SHINGLE_GROUP_RUN);

		CHECK_FOR_INTERRUPTS();
		while (group->nslotted + run > group->mask / 2)
			if (!Grow(group))
				return;
		for (int i = from; i < from + run; i++)
			Place(group, hashes[i], salt);
	}
}

/*
 * Add text member (0 .. ntexts - 1, each once), shingled as cfg says.
 * False once the group would pass its budget: it can then not be counted.
 */
bool
ShingleGroupAddText(ShingleGroup *group, int member, const char *text, size_t len,
					const ShingleConfig *cfg)
{
	Assert(member >= 0 && member < group->ntexts);
	if (group->over)
		return false;
	group->member = member;
	group->adding = UINT64CONST(1) << member;
	ShingleHashes(text, len, cfg, AddBatch, group);
	return !group->over;
}

/* The count of shingles held by exactly the texts of holders, added to every two of them. */
static void
AddToPairs(ShingleGroup *group, uint64 holders, uint32 count)
{
	int			members[SHINGLE_GROUP_MAX_TEXTS];
	int			n = 0;

	for (uint64 rest = holders; rest != 0; rest &= rest - 1)
		members[n++] = pg_rightmost_one_pos64(rest);
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++)
			group->common[members[a] * group->ntexts + members[b]] += count;
}

/*
 * Count the shingles every two texts share, after the last text is added:
 * the slots gathered by their texts (a table keyed by the bits), then each
 * combination's count added to its pairs.
 */
void
ShingleGroupCount(ShingleGroup *group)
{
	size_t		nslots = pg_nextpower2_size_t(group->nslotted * 2 + 2);
	uint64	   *combos = palloc_extended(nslots * sizeof(uint64), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	uint32	   *counts = palloc_extended(nslots * sizeof(uint32), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	uint64		salt = ShingleSetSalt();
	int			shift = 64 - pg_leftmost_one_pos64(nslots);

	Assert(!group->over);
	group->common = palloc0(group->ntexts * group->ntexts * sizeof(uint32));
	for (size_t s = 0; s <= group->mask; s++)
	{
		size_t		i;

		if (group->hashes[s] == SHINGLE_SET_FREE)
			continue;
		/* holders are never 0: a slot is taken with a text's bit */
		for (i = Home(group->holders[s], salt, shift); combos[i] != 0 && combos[i] != group->holders[s];
			 i = (i + 1) & (nslots - 1))
			;
		combos[i] = group->holders[s];
		counts[i]++;
	}
	for (size_t i = 0; i < nslots; i++)
	{
		if ((i & 65535) == 0)
			CHECK_FOR_INTERRUPTS();
		if (combos[i] != 0)
			AddToPairs(group, combos[i], counts[i]);
	}
	if (group->free_holders != 0)
		AddToPairs(group, group->free_holders, 1);
	pfree(combos);
	pfree(counts);
}

/* The exact Jaccard resemblance of texts a and b, as ShingleSetJaccard gives it. */
double
ShingleGroupJaccard(const ShingleGroup *group, int a, int b)
{
	int			lo = Min(a, b);
	int			hi = Max(a, b);

	Assert(group->common != NULL && lo != hi);
	return ShingleJaccardOfCounts(group->common[lo * group->ntexts + hi],
								  group->sizes[a], group->sizes[b]);
}
