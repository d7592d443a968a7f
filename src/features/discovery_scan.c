/*
 * discovery_scan.c
 *		The discovery engine's passes over the table (discovery.h), under
 *		its snapshot.
 *
 * Counting exactly, step 1 sends each row's bucket keys with its heap
 * position, 8 bytes a key (a tag: discovery.h), into partitions by key,
 * for step 2 to count, and the row's summary once, into partitions by
 * heap range, for step 3 to join to the row's shared keys without reading
 * the table again.
 * Rows without an id are left out, as the SQL path's join on ids never
 * pairs them: the counts then hold for the rows that can pair, and prefix
 * filtering needs only counts that are the same for every row.
 *
 * With the filter, step 1 adds every row's keys to it, as the aggregate
 * ndd_colliding_keys does over the same rows (each with a sketch), and
 * step 3 asks it which of each row's keys may be shared, as ndd_colliding
 * does, and spills those with the row's position and summary, by key.
 *
 * Either way step 1 checks that each sketch was made like the first: one
 * banding suits one kind of sketch.
 */
#include "postgres.h"

#include "access/tableam.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/memutils.h"

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
		DiscoveryMixedSettings(req->sketch_name, req->relation_name,
							   MinHashSettingsString(req->num_perm, req->source,
													 req->shingle_size, req->seed),
							   MinHashSettingsString(mh->num_perm, mh->source,
													 mh->shingle_size, mh->seed));
}

/*
 * Call visit for each row of the table with a sketch, in heap order: every
 * row, or this participant's share of a parallel scan (scan: which).
 */
static void
ForEachSketch(Discovery *d, int which, void (*visit) (Discovery *d, TupleTableSlot *slot, Datum sketch))
{
	TableScanDesc scan = d->shared ? table_beginscan_parallel(d->rel, d->scans[which]) :
		table_beginscan(d->rel, d->snapshot, 0, NULL);
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
KeyRow(Discovery *d, TupleTableSlot *slot, Datum sketch)
{
	const BucketKeys *bk = &d->keys;
	uint64	   *keys = palloc(Max(bk->max_keys, 1) * sizeof(uint64));
	uint64	   *summary = palloc(bk->summary_words * sizeof(uint64));
	RowSummary *rs = palloc(d->summary_width);
	RowKey		rk;
	bool		id_null;
	int			n;

	if (d->req->check_settings)
		CheckSettings(d, sketch);
	(void) slot_getattr(slot, d->id_att, &id_null);
	if (id_null)
		return;
	n = bk->keys(bk, sketch, keys, summary);
	d->counts[COUNT_ROWS]++;
	d->counts[COUNT_KEYS] += n;
	/* a table that grew past the open's blocks has no row of this snapshot there */
	if (ItemPointerGetBlockNumber(&slot->tts_tid) >= ROW_KEY_MAX_BLOCKS)
		elog(ERROR, "ndd: a row beyond the blocks the discovery engine counts exactly");
	rk.row = (ItemPointerGetBlockNumber(&slot->tts_tid) << ROW_KEY_LINE_BITS) |
		ItemPointerGetOffsetNumber(&slot->tts_tid);
	for (int i = 0; i < n; i++)
	{
		int			part = DiscoveryKeyTag(keys[i], d->partitions, &rk.tag);

		SpillAddTo(d->row_keys, part, &rk);
	}
	/* a row without keys shares none: its summary is never asked for */
	if (n > 0)
	{
		rs->row = rk.row;
		memcpy(rs->summary, summary, bk->summary_words * sizeof(uint64));
		SpillAdd(d->summaries, rs);
	}
}

/* Step 1, counting exactly: this participant's rows' keys into its spill of row keys */
void
DiscoveryKeyScan(Discovery *d)
{
	d->row_keys = DiscoveryWriteSpill(d, "k", d->partitions, sizeof(RowKey), DiscoveryRowKeyPartition);
	d->summaries = DiscoveryWriteSpill(d, "u", d->range_partitions, d->summary_width,
									   DiscoveryRowSummaryPartition);
	ForEachSketch(d, 0, KeyRow);
	if (d->shared)
	{
		/* the files stay, for whoever reads their partitions */
		SpillEnd(d->row_keys);
		d->row_keys = NULL;
		SpillEnd(d->summaries);
		d->summaries = NULL;
	}
}

static void
FilterRow(Discovery *d, TupleTableSlot *slot, Datum sketch)
{
	uint64	   *keys = palloc(Max(d->keys.max_keys, 1) * sizeof(uint64));
	int			n;

	if (d->req->check_settings)
		CheckSettings(d, sketch);
	n = d->keys.keys(&d->keys, sketch, keys, NULL);
	KeyFilterAddKeys(d->filter, keys, n);
}

/*
 * Step 1 with the filter (made by the caller: private, or shared).  In
 * parallel each participant fills one of its own, added to the shared one
 * at the end (key_filter.h): work_mem of its own, as each participant of
 * a parallel hash join has.
 */
void
DiscoveryFilterScan(Discovery *d)
{
	KeyFilterState *shared = d->filter;

	if (d->shared)
		d->filter = KeyFilterCreate(d->req->expected_keys);
	ForEachSketch(d, 0, FilterRow);
	if (d->shared)
	{
		KeyFilterAddToShared(shared, d->filter);
		KeyFilterFree(d->filter);
		d->filter = shared;
	}
}

static void
FilteredKeyRow(Discovery *d, TupleTableSlot *slot, Datum sketch)
{
	const BucketKeys *bk = &d->keys;
	uint64	   *keys = palloc(Max(bk->max_keys, 1) * sizeof(uint64));
	uint64	   *kept = palloc(Max(bk->max_keys, 1) * sizeof(uint64));
	char	   *entry = palloc(d->entry_width);
	bool		id_null;
	int			n;

	n = bk->keys(bk, sketch, keys, EntrySummary(entry, d->entry_header));
	n = KeyFilterColliding(d->filter, keys, n, d->req->drop_frequent, kept);
	d->counts[COUNT_KEPT] += n;
	(void) slot_getattr(slot, d->id_att, &id_null);
	if (id_null)
		return;
	if (d->narrow)
		((NarrowEntry *) entry)->row = RowNumberOfPacked(PackRow(&slot->tts_tid));
	else
		((WideEntry *) entry)->row = PackRow(&slot->tts_tid);
	for (int i = 0; i < n; i++)
	{
		if (d->narrow)
			SpillAddTo(d->entries, DiscoveryKeyTag(kept[i], d->partitions, &((NarrowEntry *) entry)->tag),
					   entry);
		else
		{
			((WideEntry *) entry)->key = kept[i];
			SpillAdd(d->entries, entry);
		}
	}
}

/* Step 3 with the filter: the keys it passes into this participant's entries */
void
DiscoveryFilteredKeyScan(Discovery *d)
{
	d->entries = DiscoveryWriteSpill(d, "e", d->partitions, d->entry_width, DiscoveryEntryPartition);
	ForEachSketch(d, 1, FilteredKeyRow);
	if (d->shared)
	{
		/* the files stay, for whoever groups their partitions */
		SpillEnd(d->entries);
		d->entries = NULL;
	}
}
