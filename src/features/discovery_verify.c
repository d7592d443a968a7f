/*
 * discovery_verify.c
 *		Step 4 of the discovery engine with verify_column (discovery.h): the
 *		exact Jaccard resemblance of a candidate's two texts, shingled as the
 *		sketches were.
 *
 * A pair whose sketches estimate at least the threshold less a margin
 * (the SQL path's rule, LSH_VERIFY_MARGIN) is checked on its texts: each
 * text's shingles go into a hash set (shingle_set.c, no sort), and the
 * smaller set is probed into the larger until the pair reaches the
 * threshold or can no longer.  A text takes part in several pairs, so the
 * sets of the rows seen last are kept, as many as half of work_mem holds.
 * The texts are read as the SQL path reads them, cast to text: char(n)
 * loses its trailing spaces.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "base/hash.h"
#include "features/discovery.h"
#include "text/shingle_set.h"

/* rows whose sets are kept, at most (a direct-mapped table) */
#define VERIFY_CACHED_ROWS	1024

typedef struct CachedSet
{
	uint64		row;
	ShingleSet *set;			/* NULL: free, or the text is NULL */
	bool		used;
} CachedSet;

struct DiscoveryTexts
{
	MemoryContext context;		/* the cached sets */
	Size		bytes;			/* what they take, about */
	Size		budget;
	ShingleConfig config;
	bool		bpchar;			/* char(n): trailing spaces do not count */
	CachedSet	cache[VERIFY_CACHED_ROWS];
};

DiscoveryTexts *
DiscoveryTextsCreate(Discovery *d)
{
	DiscoveryTexts *texts = palloc0(sizeof(DiscoveryTexts));
	const DiscoveryRequest *req = d->req;

	texts->context = AllocSetContextCreate(CurrentMemoryContext, "ndd discovery texts",
										   ALLOCSET_DEFAULT_SIZES);
	texts->budget = d->budget / 2;
	ShingleConfigInit(&texts->config, req->verify_unit, req->verify_shingle_size, false, 0);
	texts->bpchar = getBaseType(get_atttype(req->relid, d->verify_att)) == BPCHAROID;
	return texts;
}

/*
 * A row's place in the cache: its TID hashed, since a TID's low bits are its
 * line on the page, which few values fill.
 */
static inline CachedSet *
CacheSlot(DiscoveryTexts *texts, uint64 row)
{
	return &texts->cache[NddHashMix(row) % VERIFY_CACHED_ROWS];
}

/* Forget every set, when they would take more than their budget. */
static void
Forget(DiscoveryTexts *texts)
{
	MemoryContextReset(texts->context);
	memset(texts->cache, 0, sizeof(texts->cache));
	texts->bytes = 0;
}

/* The shingle set of a slot's text, in the current context; NULL for NULL. */
static ShingleSet *
SetOfText(Discovery *d, DiscoveryTexts *texts, TupleTableSlot *slot)
{
	bool		isnull;
	Datum		value = slot_getattr(slot, d->verify_att, &isnull);
	text	   *t;
	int			len;
	ShingleSet *set;

	if (isnull)
		return NULL;
	t = (text *) PG_DETOAST_DATUM_PACKED(value);
	len = VARSIZE_ANY_EXHDR(t);
	if (texts->bpchar)
		len = bpchartruelen(VARDATA_ANY(t), len);
	set = ShingleSetOfText(VARDATA_ANY(t), len, &texts->config);
	if ((Pointer) t != DatumGetPointer(value))
		pfree(t);
	return set;
}

/*
 * The set of a candidate's second row: from the cache, or made and kept
 * there (every set forgotten first when they hold their budget).  Valid
 * until the next call.
 */
ShingleSet *
DiscoveryTextSet(Discovery *d, DiscoveryTexts *texts, uint64 row, TupleTableSlot *slot)
{
	CachedSet  *c = CacheSlot(texts, row);
	MemoryContext caller;

	if (c->used && c->row == row)
		return c->set;
	if (texts->bytes > texts->budget)
		Forget(texts);
	caller = MemoryContextSwitchTo(texts->context);
	c->used = true;
	c->row = row;
	c->set = SetOfText(d, texts, slot);
	if (c->set)
		texts->bytes += (c->set->mask + 1) * sizeof(uint64) + sizeof(ShingleSet);
	MemoryContextSwitchTo(caller);
	return c->set;
}

/*
 * The set of a first row, kept apart (in context, which the caller resets
 * for the next first row) so that the cache may forget its sets meanwhile.
 */
ShingleSet *
DiscoveryFirstTextSet(Discovery *d, DiscoveryTexts *texts, uint64 row, TupleTableSlot *slot,
					  MemoryContext context)
{
	CachedSet  *c = CacheSlot(texts, row);
	MemoryContext caller = MemoryContextSwitchTo(context);
	ShingleSet *set;

	if (c->used && c->row == row)
	{
		set = NULL;
		if (c->set)
		{
			set = palloc(sizeof(ShingleSet));
			*set = *c->set;
			set->slots = palloc_extended((c->set->mask + 1) * sizeof(uint64), MCXT_ALLOC_HUGE);
			memcpy(set->slots, c->set->slots, (c->set->mask + 1) * sizeof(uint64));
		}
	}
	else
		set = SetOfText(d, texts, slot);
	MemoryContextSwitchTo(caller);
	return set;
}
