/*
 * discovery_scan.c
 *		Steps 1 and 2 of the discovery engine (discovery.h): two passes over
 *		the table under one snapshot.
 *
 * Step 1 adds every row's keys to the key filter, as the aggregate
 * ndd_colliding_keys does over the same rows (each with a sketch), and
 * checks that each sketch was made like the first: one banding suits one
 * kind of sketch.  Step 2 asks the filter which of each row's keys may be
 * shared, as ndd_colliding does, and spills those with the row's position
 * and summary, by key.  Rows without an id are counted and never paired,
 * as the SQL path's join on ids never pairs them.
 */
#include "postgres.h"

#include "access/tableam.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "base/hash.h"
#include "features/discovery.h"
#include "sketch/minhash.h"

/* Each sketch made like the first, or the error of mixed sketches. */
static void
CheckSettings(Discovery *d, Datum sketch)
{
	const DiscoveryRequest *req = d->req;
	MinHash    *mh = (MinHash *) PG_DETOAST_DATUM_SLICE(sketch, 0, MINHASH_HEADER_SIZE);

	if (mh->num_perm != req->num_perm || mh->source != req->source ||
		mh->shingle_size != req->shingle_size || mh->seed != req->seed)
		req->mixed(req->arg, MinHashSettingsString(mh->num_perm, mh->source,
												   mh->shingle_size, mh->seed));
}

/* Call visit for each row of the table with a sketch, in heap order. */
static void
ForEachSketch(Discovery *d, void (*visit) (Discovery *d, TupleTableSlot *slot, Datum sketch))
{
	TableScanDesc scan = table_beginscan(d->rel, d->snapshot, 0, NULL);
	TupleTableSlot *slot = table_slot_create(d->rel, NULL);
	MemoryContext caller = CurrentMemoryContext;

	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		bool		isnull;
		Datum		sketch;

		CHECK_FOR_INTERRUPTS();
		sketch = slot_getattr(slot, d->sketch_att, &isnull);
		if (isnull)
			continue;
		MemoryContextSwitchTo(d->row_context);
		visit(d, slot, sketch);
		MemoryContextSwitchTo(caller);
		MemoryContextReset(d->row_context);
	}
	ExecDropSingleTupleTableSlot(slot);
	table_endscan(scan);
}

static void
FilterRow(Discovery *d, TupleTableSlot *slot, Datum sketch)
{
	uint64	   *keys = palloc(Max(d->req->keys.max_keys, 1) * sizeof(uint64));
	uint64	   *summary = palloc(d->req->keys.summary_words * sizeof(uint64));
	int			n;

	if (d->req->check_settings)
		CheckSettings(d, sketch);
	n = d->req->keys.keys(&d->req->keys, sketch, keys, summary);
	KeyFilterAddKeys(d->filter, keys, n);
	d->rows++;
}

void
DiscoveryFilterScan(Discovery *d)
{
	d->filter = KeyFilterCreate(d->req->expected_keys);
	ForEachSketch(d, FilterRow);
}

/* A spilled entry's partition: its key's hash, mixed anew at each level. */
static int
EntryPartition(const void *record, int level, int nparts)
{
	const KeyEntry *entry = record;
	uint64		h = NddHashMix(entry->key ^ (UINT64CONST(0x9E3779B97F4A7C15) * (uint64) level));

	return (int) (((h >> 32) * (uint64) nparts) >> 32);
}

static void
KeyRow(Discovery *d, TupleTableSlot *slot, Datum sketch)
{
	const BucketKeys *bk = &d->req->keys;
	uint64	   *keys = palloc(Max(bk->max_keys, 1) * sizeof(uint64));
	uint64	   *kept = palloc(Max(bk->max_keys, 1) * sizeof(uint64));
	KeyEntry   *entry = palloc(d->entry_width);
	bool		id_null;
	int			n;

	n = bk->keys(bk, sketch, keys, entry->summary);
	n = KeyFilterColliding(d->filter, keys, n, d->req->drop_frequent, kept);
	d->kept_keys += n;
	(void) slot_getattr(slot, d->id_att, &id_null);
	if (id_null)
		return;
	entry->row = PackRow(&slot->tts_tid);
	for (int i = 0; i < n; i++)
	{
		entry->key = kept[i];
		SpillAdd(d->entries, entry);
	}
}

void
DiscoveryKeyScan(Discovery *d)
{
	double		most = (double) d->rows * d->req->keys.max_keys;

	d->partitions = DiscoveryPartitions(d->budget, most, d->entry_width);
	d->entries = SpillCreate(d->partitions, d->entry_width, EntryPartition, 0);
	ForEachSketch(d, KeyRow);
}
