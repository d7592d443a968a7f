/*
 * discovery_engine.c
 *		The discovery engine's driver (discovery.h): whether it can read a
 *		table, and its steps in order within work_mem.
 */
#include "postgres.h"

#include <math.h>

#include "access/table.h"
#include "catalog/pg_am.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/acl.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"

#include "base/hash.h"
#include "features/discovery.h"

int			ndd_discovery_path = DISCOVERY_PATH_AUTO;
bool		ndd_discovery_row_numbers = true;

const struct config_enum_entry discovery_path_options[] = {
	{"auto", DISCOVERY_PATH_AUTO, false},
	{"engine", DISCOVERY_PATH_ENGINE, false},
	{"sql", DISCOVERY_PATH_SQL, false},
	{NULL, 0, false}
};

/* The id's type, if the engine can read it as bigint: int2, int4, int8. */
static Oid
IdType(Oid relid, AttrNumber att)
{
	Oid			type = getBaseType(get_atttype(relid, att));

	return (type == INT2OID || type == INT4OID || type == INT8OID) ? type : InvalidOid;
}

/* The caller may read the column: the table, or the column itself. */
static bool
MayRead(Oid relid, AttrNumber att)
{
	/* the column's check leaves the table's own privileges out */
	return pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) == ACLCHECK_OK ||
		pg_attribute_aclcheck(relid, att, GetUserId(), ACL_SELECT) == ACLCHECK_OK;
}

/*
 * Whether the engine reads the table as the SQL path would: a plain heap
 * table or materialized view without children, row security off for the
 * caller, both columns readable, an integer id.  Else why not, in *why:
 * the SQL path then answers, or raises the error the user should see.
 */
bool
DiscoveryEngineReads(Oid relid, const char *sketch_name, const char *id_name,
					 const char *verify_name, const char **why)
{
	Relation	rel = table_open(relid, AccessShareLock);
	char		relkind = rel->rd_rel->relkind;
	AttrNumber	sketch_att = get_attnum(relid, sketch_name);
	AttrNumber	id_att = get_attnum(relid, id_name);
	AttrNumber	verify_att = verify_name ? get_attnum(relid, verify_name) : 0;

	*why = NULL;
	if (relkind != RELKIND_RELATION && relkind != RELKIND_MATVIEW)
		*why = "It reads tables and materialized views only";
	else if (relkind == RELKIND_MATVIEW && !RelationIsPopulated(rel))
		*why = "The materialized view has not been populated";
	else if (rel->rd_rel->relam != HEAP_TABLE_AM_OID)
		*why = "It reads heap tables only";
	else if (RELATION_IS_OTHER_TEMP(rel))
		*why = "The table is another session's temporary table";
	else if (has_subclass(relid))
		*why = "The table has inheritance children";
	else if (check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED)
		*why = "Row-level security applies to the table";
	else if (sketch_att <= 0 || id_att <= 0)
		*why = "A column is missing";
	else if (!MayRead(relid, sketch_att) || !MayRead(relid, id_att) ||
			 (verify_att > 0 && !MayRead(relid, verify_att)))
		*why = "The caller may not read every column it needs";
	else if (!OidIsValid(IdType(relid, id_att)))
		*why = "The id column is not smallint, integer or bigint";
	table_close(rel, AccessShareLock);
	return *why == NULL;
}

/* Which of nparts a value falls in: its hash with salt, scaled (no modulo bias). */
int
DiscoveryPartitionOf(uint64 value, uint64 salt, int nparts)
{
	uint64		h = NddHashMix(value ^ salt);

	return (int) (((h >> 32) * (uint64) nparts) >> 32);
}

/* the salt of the partitions by key, times the level */
#define KEY_PARTITION_SALT	UINT64CONST(0x9E3779B97F4A7C15)

/*
 * An entry's partition: a wide entry's key's hash, mixed anew at each
 * level.  A narrow entry is placed in its key's partition of step 1 by its
 * writer (SpillAddTo), its tag alone being no key; split again, its tag's
 * hash.
 */
int
DiscoveryEntryPartition(const void *record, int level, int nparts, const void *arg)
{
	const Discovery *d = arg;

	if (!d->narrow)
		return DiscoveryPartitionOf(((const WideEntry *) record)->key,
									KEY_PARTITION_SALT * (uint64) level, nparts);
	Assert(level > 0);
	return DiscoveryPartitionOf(((const NarrowEntry *) record)->tag, KEY_PARTITION_SALT * (uint64) level,
								nparts);
}

/*
 * A key's partition of step 1, from its hash's high bits (scaled, as
 * DiscoveryPartitionOf scales), and its tag, the low 32 (discovery.h).
 */
int
DiscoveryKeyTag(uint64 key, int nparts, uint32 *tag)
{
	uint64		h = NddHashMix(key);

	*tag = (uint32) h;
	return (int) (((h >> 32) * (uint64) nparts) >> 32);
}

/* A row key's partition when its partition is split again: its tag's hash. */
int
DiscoveryRowKeyPartition(const void *record, int level, int nparts, const void *arg)
{
	/* step 1 places each key itself (SpillAddTo): the tag alone cannot */
	Assert(level > 0);
	return DiscoveryPartitionOf(((const RowKey *) record)->tag, KEY_PARTITION_SALT * (uint64) level,
								nparts);
}

/*
 * A candidate's partition: its first row's heap range, so that step 5
 * fetches each range's rows together while their pages are in shared
 * buffers (partitions by the row's hash made each fetch of a table larger
 * than shared_buffers a read: at 10M rows those reads were a fifth of the
 * run); split again, the first row's hash, mixed anew at each level.
 */
int
DiscoveryEdgePartition(const void *record, int level, int nparts, const void *arg)
{
	const Discovery *d = arg;
	uint64		lo;
	uint64		block;

	if (d->narrow)
	{
		lo = *(const uint64 *) record >> 32;
		block = lo >> ROW_KEY_LINE_BITS;
	}
	else
	{
		lo = ((const Edge *) record)->lo;
		block = lo >> 16;
	}
	if (level > 0)
		return DiscoveryPartitionOf(lo, UINT64CONST(0xC2B2AE3D27D4EB4F) * (uint64) level, nparts);
	return DiscoveryBlockRange(d, block, nparts);
}

/* Which of nparts equal heap ranges a block falls in (every participant counts the same). */
int
DiscoveryBlockRange(const Discovery *d, uint64 block, int nparts)
{
	return (int) Min(block * (uint64) nparts / Max(d->nblocks, 1), (uint64) nparts - 1);
}

static void
FitPartition(Discovery *d, Spill *spill, int part, int level, Size need, Size budget,
			 DiscoveryInMemory process, void *arg)
{
	uint64		n = SpillRecords(spill, part);

	CHECK_FOR_INTERRUPTS();
	if (n * need > budget && level < DISCOVERY_MAX_SPLITS)
	{
		int			nparts = DiscoveryPartitions(budget, (double) n, need);
		Spill	   *split = SpillSplit(spill, part, Max(nparts, 2));

		for (int i = 0; i < SpillPartitions(split); i++)
			FitPartition(d, split, i, level + 1, need, budget, process, arg);
		SpillEnd(split);
		return;
	}
	process(d, spill, part, arg);
}

void
DiscoveryFitPartition(Discovery *d, Spill *spill, int part, Size need, Size budget,
					  DiscoveryInMemory process, void *arg)
{
	FitPartition(d, spill, part, 0, need, budget, process, arg);
}

int
DiscoveryPartitions(Size budget, double total, Size width)
{
	double		want = ceil(total * width / Max(budget / 2, 1));

	return (int) Max(1.0, Min(want, (double) SpillMaxPartitions(budget)));
}

/*
 * The same error naming two ways the sketches were made, in the order of
 * their text: which row a scan meets first (the probe, or the first row
 * that differs) changes with parallel workers and free space, and the
 * message should not.
 */
void
DiscoveryMixedSettings(const char *column, const char *relation, const char *one, const char *other)
{
	if (strcmp(one, other) > 0)
	{
		const char *swap = one;

		one = other;
		other = swap;
	}
	DiscoveryMixedSketches(column, relation, psprintf("Some were made with %s, others with %s.", one, other));
}

/*
 * The error of sketches made in different ways, in the same words on both
 * paths: one banding suits one kind of sketch.
 */
void
DiscoveryMixedSketches(const char *column, const char *relation, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("column \"%s\" of relation \"%s\" holds minhash sketches made in different ways",
					column, relation),
			 errdetail_internal("%s", detail),
			 errhint("Discovery compares sketches made one way: make them all with the same settings, or run it on a view that selects one kind.")));
}

/*
 * The bits a key below which the engine counts keys exactly rather than by
 * the filter.  At 1M documents and work_mem 64MB the filter has 5.6 bits a
 * key: there both ways took the same time on the scale corpus (8.4 s), and
 * the filter 11.9 s against 16.1 s on families of 4, whose keys are nearly
 * all shared; at 3M, 1.9 bits a key, exact counts took 26.7 s against
 * 29.9 s, and at 10M, 0.6 bits a key, 132.6 s against 153.7 s.
 */
#define FILTER_MIN_BITS_PER_KEY		4.0

/*
 * The records' layouts for a heap of d->nblocks blocks: narrow where rows
 * have 32-bit numbers.  A worker calls it again with the leader's count.
 */
void
DiscoveryLayout(Discovery *d)
{
	d->narrow = ndd_discovery_row_numbers && d->nblocks < ROW_KEY_MAX_BLOCKS;
	d->entry_header = d->narrow ? sizeof(NarrowEntry) : sizeof(WideEntry);
	d->entry_width = d->entry_header + d->keys.summary_words * sizeof(uint64);
	d->edge_width = d->narrow ? sizeof(uint64) : sizeof(Edge);
}

/* Open the table and learn its columns and keys, under one registered snapshot. */
void
DiscoveryOpen(Discovery *d, const DiscoveryRequest *req)
{
	memset(d, 0, sizeof(Discovery));
	d->req = req;
	if (req->simhash)
		BucketKeysSimhash(&d->keys, req->max_distance);
	else
		BucketKeysMinhash(&d->keys, req->num_perm, req->bands, req->rows, req->required, req->lower);
	d->rel = table_open(req->relid, AccessShareLock);
	d->snapshot = RegisterSnapshot(GetActiveSnapshot());
	d->sketch_att = get_attnum(req->relid, req->sketch_name);
	d->id_att = get_attnum(req->relid, req->id_name);
	d->id_type = IdType(req->relid, d->id_att);
	d->verify_att = req->verify_name ? get_attnum(req->relid, req->verify_name) : 0;
	d->budget = (Size) work_mem * 1024;
	d->row_context = AllocSetContextCreate(CurrentMemoryContext, "ndd discovery row",
										   ALLOCSET_DEFAULT_SIZES);
	d->nblocks = RelationGetNumberOfBlocks(d->rel);
	DiscoveryLayout(d);
	/* the filter where it keeps its quality, else exact counts (discovery.h) */
	d->exact = KeyFilterBitsPerKey(req->expected_keys) < FILTER_MIN_BITS_PER_KEY && d->narrow;
	/* partitions for about the keys the SQL path would size its filter for */
	d->partitions = DiscoveryPartitions(d->budget, (double) Max(req->expected_keys, 1),
										d->entry_width);
	d->summary_width = offsetof(RowSummary, summary) + d->keys.summary_words * sizeof(uint64);
	d->range_partitions = DiscoveryRangePartitions(d);
}

void
DiscoveryClose(Discovery *d)
{
	UnregisterSnapshot(d->snapshot);
	table_close(d->rel, AccessShareLock);
	MemoryContextDelete(d->row_context);
}

/*
 * The share of the work behind each NOTICE, for the time left: medians of
 * four runs at 1M documents (the bench corpus and families of 4, 0 and 2
 * workers, work_mem 64MB), where the first heap pass ended at 0.14 to 0.31
 * of the time and the second, with its spill, at 0.41 to 0.60.  With
 * verify_column the texts took about half the time on the bench corpus's
 * short texts (bench/verify.sh) and nine tenths on 1,500-word families:
 * the model takes half, so its estimate is rougher there.
 */
#define DONE_AFTER_KEYS		0.2
#define DONE_AFTER_SUMMARIES	0.5
#define VERIFY_SHARE		0.5

static double
Done(Discovery *d, int step)
{
	double		sketches = d->verify_att > 0 ? 1.0 - VERIFY_SHARE : 1.0;

	switch (step)
	{
		case DISCOVERY_STEP_KEYS:
			return DONE_AFTER_KEYS * sketches;
		case DISCOVERY_STEP_SUMMARIES:
			return DONE_AFTER_SUMMARIES * sketches;
		case DISCOVERY_STEP_SCORE:
			return sketches;
		default:
			return 1.0;
	}
}

/* The leader's NOTICE after a step, with the counts of every participant. */
void
DiscoveryReport(Discovery *d, int step)
{
	const DiscoveryRequest *req = d->req;
	double		done = Done(d, step);
	bool		verify = d->verify_att > 0;
	char	   *message = NULL;

	if (req->progress == NULL)
		return;
	switch (step)
	{
		case DISCOVERY_STEP_KEYS:
			if (d->exact)
				message = psprintf("ndd: 1/4 " INT64_FORMAT " keys of " INT64_FORMAT " rows",
								   DiscoveryTotal(d, COUNT_KEYS), DiscoveryTotal(d, COUNT_ROWS));
			else
				message = psprintf("ndd: 1/4 keys counted, in a filter of %d kB for about " INT64_FORMAT " rows",
								   (int) (KeyFilterBytes(d->filter) / 1024), req->expected_rows);
			break;
		case DISCOVERY_STEP_SUMMARIES:
			message = psprintf(d->exact ? "ndd: 2/4 " INT64_FORMAT " keys shared" :
							   "ndd: 2/4 " INT64_FORMAT " keys may be shared",
							   DiscoveryTotal(d, COUNT_KEPT));
			break;
		case DISCOVERY_STEP_SCORE:
			req->progress(req->arg, psprintf("ndd: 3/4 " INT64_FORMAT " candidate pairs",
											 DiscoveryTotal(d, COUNT_CANDIDATES)), done);
			if (!verify)
				message = psprintf("ndd: 4/4 " INT64_FORMAT " pairs", DiscoveryTotal(d, COUNT_PAIRS));
			break;
		case DISCOVERY_STEP_VERIFY:
			if (verify)
				message = psprintf("ndd: 4/4 " INT64_FORMAT " pairs", DiscoveryTotal(d, COUNT_PAIRS));
			break;
	}
	if (message)
		req->progress(req->arg, message, done);
}

/* One step of this participant's share of the work. */
void
DiscoveryStep(Discovery *d, int step)
{
	d->next_part = 0;
	switch (step)
	{
		case DISCOVERY_STEP_KEYS:
			/* 1. every row's keys, by key, and summary, by heap range; or the filter */
			if (d->exact)
				DiscoveryKeyScan(d);
			else
				DiscoveryFilterScan(d);
			break;
		case DISCOVERY_STEP_COUNT:
			/* 2. each key's rows counted; the shared ones by heap range */
			if (d->exact)
				DiscoveryCountKeys(d);
			break;
		case DISCOVERY_STEP_SUMMARIES:
			/* 3. shared keys less the most frequent, with summaries, by key */
			if (d->exact)
				DiscoverySummaries(d);
			else
				DiscoveryFilteredKeyScan(d);
			break;
		case DISCOVERY_STEP_GROUP:
			/* 4. rows that share a kept key, and whose summaries pass */
			DiscoveryGroupKeys(d);
			break;
		case DISCOVERY_STEP_SCORE:
			/* 5. each candidate once, scored */
			DiscoveryScorePairs(d);
			break;
		case DISCOVERY_STEP_COMPONENTS:
			/* 6. with verification: the pairs that passed, by component */
			DiscoveryGroupChecks(d);
			break;
		case DISCOVERY_STEP_VERIFY:
			/* 7. with verification: each pair checked on its texts */
			DiscoveryVerifyChecks(d);
			break;
	}
}

/* Every step in this backend alone. */
void
DiscoveryRunSerial(Discovery *d)
{
	if (!d->exact)
		d->filter = KeyFilterCreate(d->req->expected_keys);
	for (int step = 0; step < DISCOVERY_STEPS; step++)
	{
		DiscoveryStep(d, step);
		DiscoveryReport(d, step);
		/* the filter's memory goes to the partitions of the steps after */
		if (step == DISCOVERY_STEP_SUMMARIES && d->filter)
		{
			KeyFilterFree(d->filter);
			d->filter = NULL;
		}
	}
}

uint64
DiscoveryEngineRun(const DiscoveryRequest *req, Tuplestorestate *out, TupleDesc out_desc)
{
	Discovery	d;
	int			nworkers;
	uint64		pairs;

	DiscoveryOpen(&d, req);
	d.out = out;
	d.out_desc = out_desc;
	nworkers = DiscoveryWorkers(d.rel, d.verify_att > 0);
	if (nworkers > 0)
		DiscoveryRunParallel(&d, nworkers);
	else
		DiscoveryRunSerial(&d);
	pairs = (uint64) DiscoveryTotal(&d, COUNT_PAIRS);
	DiscoveryClose(&d);
	return pairs;
}
