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

/* slots of a group's table, at least */
#define SHINGLE_GROUP_MIN_SLOTS		256

/* bytes of text per shingle, about, to size a table from its first text */
#define SHINGLE_GROUP_TEXT_BYTES	6

/* slots moved, or counted, between looks at interrupts */
#define SHINGLE_GROUP_CHECK_SLOTS	65536

/* hashes placed between looks at interrupts */
#define SHINGLE_GROUP_RUN			256

/* a hash (SHINGLE_SET_FREE: the slot is free) and the texts that hold it, a bit each */
typedef struct GroupSlot
{
	uint64		hash;
	uint64		holders;
} GroupSlot;

struct ShingleGroup
{
	int			ntexts;
	Size		budget;			/* bytes the tables may take */
	bool		over;			/* they would take more: the group is not counted */
	GroupSlot  *slots;			/* NULL until the first text */
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

/* bytes of a table of nslots, with as many for counting (ShingleGroupCount's combinations) */
#define GROUP_TABLE_BYTES(nslots) ((nslots) * (sizeof(GroupSlot) + sizeof(uint64) + sizeof(uint32)))

/* Slots for nslots (a power of two), unless they would pass the budget. */
static bool
AllocSlots(ShingleGroup *group, size_t nslots)
{
	if (GROUP_TABLE_BYTES(nslots) > group->budget)
	{
		group->over = true;
		return false;
	}
	group->slots = palloc_extended(nslots * sizeof(GroupSlot), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
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
	return group;
}

/* Double the slots, moving each hash and its texts; false past the budget. */
static bool
Grow(ShingleGroup *group)
{
	GroupSlot  *old = group->slots;
	size_t		old_slots = group->mask + 1;
	uint64		salt = ShingleSetSalt();

	if (!AllocSlots(group, old_slots * 2))
		return false;
	for (size_t from = 0; from < old_slots; from++)
	{
		size_t		i;

		if ((from & (SHINGLE_GROUP_CHECK_SLOTS - 1)) == 0)
			CHECK_FOR_INTERRUPTS();
		if (old[from].hash == SHINGLE_SET_FREE)
			continue;
		for (i = Home(old[from].hash, salt, group->shift); group->slots[i].hash != SHINGLE_SET_FREE;
			 i = (i + 1) & group->mask)
			;
		group->slots[i] = old[from];
	}
	pfree(old);
	return true;
}

/*
 * The first text's table: room for about twice its shingles (a family's
 * copies add few of their own), within the budget.
 */
static bool
FirstSlots(ShingleGroup *group, size_t len)
{
	size_t		nslots = pg_nextpower2_size_t(Max(4 * (len / SHINGLE_GROUP_TEXT_BYTES),
												  SHINGLE_GROUP_MIN_SLOTS));

	while (nslots > SHINGLE_GROUP_MIN_SLOTS && GROUP_TABLE_BYTES(nslots) > group->budget)
		nslots /= 2;
	return AllocSlots(group, nslots);
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
		GroupSlot  *slot = &group->slots[i];

		if (slot->hash == SHINGLE_SET_FREE)
		{
			slot->hash = hash;
			slot->holders = group->adding;
			group->nslotted++;
			group->sizes[group->member]++;
			return;
		}
		if (slot->hash == hash)
		{
			if (!(slot->holders & group->adding))
				group->sizes[group->member]++;
			slot->holders |= group->adding;
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
	if (group->over || (group->slots == NULL && !FirstSlots(group, len)))
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
	/* combinations: no more than the slots taken, nor than the texts allow */
	size_t		most = group->ntexts < 32 ?
		Min(group->nslotted, (UINT64CONST(1) << group->ntexts) - 1) : group->nslotted;
	size_t		nslots = pg_nextpower2_size_t(most * 2 + 2);
	uint64	   *combos = palloc_extended(nslots * sizeof(uint64), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	uint32	   *counts = palloc_extended(nslots * sizeof(uint32), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	uint64		salt = ShingleSetSalt();
	int			shift = 64 - pg_leftmost_one_pos64(nslots);

	Assert(!group->over);
	group->common = palloc0(group->ntexts * group->ntexts * sizeof(uint32));
	for (size_t s = 0; group->slots != NULL && s <= group->mask; s++)
	{
		uint64		holders = group->slots[s].holders;
		size_t		i;

		if (group->slots[s].hash == SHINGLE_SET_FREE)
			continue;
		/* holders are never 0: a slot is taken with a text's bit */
		for (i = Home(holders, salt, shift); combos[i] != 0 && combos[i] != holders;
			 i = (i + 1) & (nslots - 1))
			;
		combos[i] = holders;
		counts[i]++;
	}
	for (size_t i = 0; i < nslots; i++)
	{
		if ((i & (SHINGLE_GROUP_CHECK_SLOTS - 1)) == 0)
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
