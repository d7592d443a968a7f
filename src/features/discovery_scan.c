/*
 * discovery_scan.c
 *		Step 1 of the discovery engine (discovery.h): one pass over the
 *		table under the engine's snapshot.
 *
 * Each row's bucket keys go out with its heap position, 16 bytes a key,
 * into partitions by key, for step 2 to count; and each sketch is checked
 * to be made like the first: one banding suits one kind of sketch.  Rows
 * without an id are left out, as the SQL path's join on ids never pairs
 * them: the counts then hold for the rows that can pair, and prefix
 * filtering needs only counts that are the same for every row.
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
		DiscoveryMixedSketches(req->sketch_name, req->relation_name,
							   psprintf("Some were made with %s, others with %s.",
										MinHashSettingsString(req->num_perm, req->source,
															  req->shingle_size, req->seed),
										MinHashSettingsString(mh->num_perm, mh->source,
															  mh->shingle_size, mh->seed)));
}

/*
 * Call visit for each row of the table with a sketch, in heap order: every
 * row, or this participant's share of the parallel scan.
 */
static void
ForEachSketch(Discovery *d, void (*visit) (Discovery *d, TupleTableSlot *slot, Datum sketch))
{
	TableScanDesc scan = d->shared ? table_beginscan_parallel(d->rel, d->scan) :
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
	rk.row = PackRow(&slot->tts_tid);
	for (int i = 0; i < n; i++)
	{
		rk.key = keys[i];
		SpillAdd(d->row_keys, &rk);
	}
}

/* Step 1: this participant's rows' keys into its spill of row keys */
void
DiscoveryKeyScan(Discovery *d)
{
	d->row_keys = DiscoveryWriteSpill(d, "k", d->partitions, sizeof(RowKey), DiscoveryEntryPartition);
	ForEachSketch(d, KeyRow);
	if (d->shared)
	{
		/* the files stay, for whoever counts their partitions */
		SpillEnd(d->row_keys);
		d->row_keys = NULL;
	}
}
