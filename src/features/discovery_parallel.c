/*
 * discovery_parallel.c
 *		The discovery engine on several processes (discovery.h): the leader
 *		and parallel workers share the steps, each with its part.
 *
 * Step 1 is a parallel heap scan: each participant takes blocks as a
 * parallel sequential scan does and writes its rows' keys to its own files
 * of a shared file set, or adds them to one filter in shared memory
 * (atomically, so it ends the same whoever added what).  Steps 2, 3, 4, 5
 * and 7 hand out partitions: a participant claims the next one and reads
 * every participant's file of it (step 3's are heap ranges, claimed in
 * heap order; with the filter, step 3 is a second parallel heap scan);
 * step 6 is the leader's alone.  A barrier separates the steps: no one counts a
 * partition before every key is written.  Each participant writes its
 * pairs to its own file, and the leader copies them all into the answer at
 * the end.
 *
 * The workers see the leader's snapshot and read the table under its
 * locks (group locking); an error in any process ends them all, and the
 * shared file set's files are deleted with the segment.  The answer is the
 * same for any number of workers: the counts, the partitions and the
 * tests do not depend on who does the work.
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "optimizer/cost.h"
#include "optimizer/paths.h"
#include "storage/barrier.h"
#include "storage/bufmgr.h"
#include "storage/shm_toc.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/wait_event.h"

#include "features/discovery.h"

/* the places in the segment's table of contents */
#define DISCOVERY_KEY_SHARED	UINT64CONST(0xD15C000000000001)
#define DISCOVERY_KEY_FILTER	UINT64CONST(0xD15C000000000002)
#define DISCOVERY_KEY_SCANS		UINT64CONST(0xD15C000000000003)

struct DiscoveryShared
{
	/* the request, for the workers to make theirs */
	Oid			relid;
	NameData	sketch_name;
	NameData	id_name;
	NameData	relation_name;
	NameData	verify_name;	/* empty: no verification */
	NameData	verify_unit;
	int			verify_shingle_size;
	double		threshold;
	bool		simhash;
	int			num_perm;
	int			bands;
	int			rows;
	int			required;
	double		lower;
	int			max_distance;
	int			drop_frequent;
	int64		expected_keys;
	int64		expected_rows;
	bool		check_settings;
	int			source;
	int			shingle_size;
	int32		seed;
	int			partitions;
	BlockNumber nblocks;		/* the heap's, as the leader opened it */
	bool		exact;			/* keys counted exactly, or by the filter */
	int			group_partitions;	/* step 6's, for step 7 */

	int			nparticipants;	/* the leader and the workers planned */
	Barrier		barrier;		/* its phase: the step under way */
	pg_atomic_uint32 next_part[DISCOVERY_STEPS];
	pg_atomic_uint64 counts[DISCOVERY_COUNTS];	/* of the steps ended */
	SharedFileSet fileset;
};

PGDLLEXPORT void ndd_discovery_worker(dsm_segment *seg, shm_toc *toc);

/*
 * Workers for a scan of this table, as the planner would give a parallel
 * sequential scan of it: none below min_parallel_table_scan_size, one
 * more each time the table is three times larger, or the table's
 * parallel_workers; at most max_parallel_workers_per_gather.  With
 * verification the texts' TOAST pages count too: step 6 reads them all,
 * and long texts leave the table itself small.  None where workers cannot
 * help: already in parallel mode, a temporary table (its buffers are this
 * backend's), a single-user backend.
 */
int
DiscoveryWorkers(Relation rel, bool verify)
{
	double		pages = (double) RelationGetNumberOfBlocks(rel);
	double		threshold = Max(min_parallel_table_scan_size, 1);
	int			workers = 0;

	if (max_parallel_workers_per_gather <= 0 || IsInParallelMode() || !IsUnderPostmaster ||
		RelationUsesLocalBuffers(rel))
		return 0;
	if (verify && OidIsValid(rel->rd_rel->reltoastrelid))
	{
		Relation	toast = table_open(rel->rd_rel->reltoastrelid, AccessShareLock);

		pages += (double) RelationGetNumberOfBlocks(toast);
		table_close(toast, AccessShareLock);
	}
	if (RelationGetParallelWorkers(rel, -1) >= 0)
		workers = RelationGetParallelWorkers(rel, -1);
	else if (pages >= threshold)
	{
		workers = 1;
		while (pages >= threshold * 3 && workers < max_parallel_workers_per_gather)
		{
			workers++;
			threshold *= 3;
		}
	}
	return Min(workers, max_parallel_workers_per_gather);
}

/* The next partition of a step's for this participant; false when none is left. */
bool
DiscoveryClaim(Discovery *d, int step, int nparts, int *part)
{
	*part = d->shared ? (int) pg_atomic_fetch_add_u32(&d->shared->next_part[step], 1) :
		d->next_part++;
	return *part < nparts;
}

/* The processes planned to share the steps: the leader and its workers. */
int
DiscoveryParticipants(Discovery *d)
{
	return d->shared ? d->shared->nparticipants : 1;
}

/* A count of every participant's, for the steps ended (serially: this one's). */
int64
DiscoveryTotal(Discovery *d, DiscoveryCount which)
{
	return d->shared ? (int64) pg_atomic_read_u64(&d->shared->counts[which]) : d->counts[which];
}

/* Step 6's partitions, from the leader that made them to the steps after. */
void
DiscoveryShareGroupPartitions(Discovery *d)
{
	d->shared->group_partitions = d->group_partitions;
}

int
DiscoverySharedGroupPartitions(Discovery *d)
{
	return d->shared->group_partitions;
}

Spill *
DiscoveryWriteSpill(Discovery *d, const char *kind, int nparts, Size width,
					SpillPartitionOf partition_of)
{
	if (d->shared == NULL)
		return SpillCreate(nparts, width, partition_of, d, 0);
	return SpillCreateShared(&d->shared->fileset, psprintf("%s%d", kind, d->participant),
							 nparts, width, partition_of, d);
}

Spill *
DiscoveryReadSpill(Discovery *d, const char *kind, Spill *written, int nparts, Size width,
				   SpillPartitionOf partition_of)
{
	char	  **names;

	if (d->shared == NULL)
		return written;
	names = palloc(d->shared->nparticipants * sizeof(char *));
	for (int i = 0; i < d->shared->nparticipants; i++)
		names[i] = psprintf("%s%d", kind, i);
	return SpillOpenShared(&d->shared->fileset, names, d->shared->nparticipants, nparts,
						   width, partition_of, d);
}

/*
 * This participant's part of every step from the one under way, each
 * step ended by every participant before the next begins; the leader
 * reports each with everyone's counts.
 */
static void
Participate(Discovery *d, bool leader)
{
	DiscoveryShared *shared = d->shared;
	int			step = BarrierAttach(&shared->barrier);

	for (; step < DISCOVERY_STEPS; step++)
	{
		DiscoveryStep(d, step);
		for (int i = 0; i < DISCOVERY_COUNTS; i++)
		{
			pg_atomic_fetch_add_u64(&shared->counts[i], d->counts[i]);
			d->counts[i] = 0;
		}
		BarrierArriveAndWait(&shared->barrier, PG_WAIT_EXTENSION);
		if (leader)
			DiscoveryReport(d, step);
	}
	BarrierDetach(&shared->barrier);
}

/* The request as the leader made it, for the shared state. */
static void
ShareRequest(DiscoveryShared *shared, const Discovery *d)
{
	const DiscoveryRequest *req = d->req;

	memset(shared, 0, sizeof(DiscoveryShared));
	shared->relid = req->relid;
	namestrcpy(&shared->sketch_name, req->sketch_name);
	namestrcpy(&shared->id_name, req->id_name);
	namestrcpy(&shared->relation_name, req->relation_name);
	namestrcpy(&shared->verify_name, req->verify_name ? req->verify_name : "");
	namestrcpy(&shared->verify_unit, req->verify_unit ? req->verify_unit : "");
	shared->verify_shingle_size = req->verify_shingle_size;
	shared->threshold = req->threshold;
	shared->simhash = req->simhash;
	shared->num_perm = req->num_perm;
	shared->bands = req->bands;
	shared->rows = req->rows;
	shared->required = req->required;
	shared->lower = req->lower;
	shared->max_distance = req->max_distance;
	shared->drop_frequent = req->drop_frequent;
	shared->expected_keys = req->expected_keys;
	shared->expected_rows = req->expected_rows;
	shared->check_settings = req->check_settings;
	shared->source = req->source;
	shared->shingle_size = req->shingle_size;
	shared->seed = req->seed;
	shared->partitions = d->partitions;
	shared->nblocks = d->nblocks;
	shared->exact = d->exact;
}

/* The request a worker works on, from the shared state. */
static void
RequestOf(const DiscoveryShared *shared, DiscoveryRequest *req)
{
	memset(req, 0, sizeof(DiscoveryRequest));
	req->relid = shared->relid;
	req->sketch_name = NameStr(shared->sketch_name);
	req->id_name = NameStr(shared->id_name);
	req->relation_name = NameStr(shared->relation_name);
	req->verify_name = NameStr(shared->verify_name)[0] ? NameStr(shared->verify_name) : NULL;
	req->verify_unit = NameStr(shared->verify_unit);
	req->verify_shingle_size = shared->verify_shingle_size;
	req->threshold = shared->threshold;
	req->simhash = shared->simhash;
	req->num_perm = shared->num_perm;
	req->bands = shared->bands;
	req->rows = shared->rows;
	req->required = shared->required;
	req->lower = shared->lower;
	req->max_distance = shared->max_distance;
	req->drop_frequent = shared->drop_frequent;
	req->expected_keys = shared->expected_keys;
	req->expected_rows = shared->expected_rows;
	req->check_settings = shared->check_settings;
	req->source = shared->source;
	req->shingle_size = shared->shingle_size;
	req->seed = shared->seed;
}

/* The bytes of the shared filter: none when the keys are counted exactly. */
static Size
FilterSize(const Discovery *d)
{
	return d->exact ? 0 : KeyFilterSharedSize(d->req->expected_keys);
}

/* Lay out the segment: shared state, two parallel scans, the filter. */
static void
SetUpSegment(ParallelContext *pcxt, Discovery *d, int nworkers)
{
	Size		scan_size = table_parallelscan_estimate(d->rel, d->snapshot);
	DiscoveryShared *shared = shm_toc_allocate(pcxt->toc, sizeof(DiscoveryShared));
	char	   *scans = shm_toc_allocate(pcxt->toc, 2 * MAXALIGN(scan_size));

	ShareRequest(shared, d);
	shared->nparticipants = nworkers + 1;
	BarrierInit(&shared->barrier, 0);
	for (int step = 0; step < DISCOVERY_STEPS; step++)
		pg_atomic_init_u32(&shared->next_part[step], 0);
	for (int i = 0; i < DISCOVERY_COUNTS; i++)
		pg_atomic_init_u64(&shared->counts[i], 0);
	SharedFileSetInit(&shared->fileset, pcxt->seg);
	for (int i = 0; i < 2; i++)
	{
		d->scans[i] = (ParallelTableScanDesc) (scans + i * MAXALIGN(scan_size));
		table_parallelscan_initialize(d->rel, d->scans[i], d->snapshot);
	}
	if (!d->exact)
	{
		void	   *filter = shm_toc_allocate(pcxt->toc, FilterSize(d));

		d->filter = KeyFilterInShared(filter, d->req->expected_keys, true);
		shm_toc_insert(pcxt->toc, DISCOVERY_KEY_FILTER, filter);
	}
	shm_toc_insert(pcxt->toc, DISCOVERY_KEY_SHARED, shared);
	shm_toc_insert(pcxt->toc, DISCOVERY_KEY_SCANS, scans);
	d->shared = shared;
}

static void
CopyResult(void *arg, const void *record)
{
	Discovery  *d = arg;
	const PairResult *r = record;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, r->distance_null};

	values[0] = Int64GetDatum(r->id_a);
	values[1] = Int64GetDatum(r->id_b);
	values[2] = Float8GetDatum(r->similarity);
	values[3] = Int32GetDatum(r->distance);
	tuplestore_putvalues(d->out, d->out_desc, values, nulls);
}

/* Every participant's pairs into the answer, while the file set lives. */
static void
CopyResults(Discovery *d)
{
	Spill	   *results = DiscoveryReadSpill(d, "r", NULL, 1, sizeof(PairResult), NULL);

	SpillForEach(results, 0, CopyResult, d);
	SpillEnd(results);
	d->counts[COUNT_PAIRS] = (int64) pg_atomic_read_u64(&d->shared->counts[COUNT_PAIRS]);
}

/*
 * The leader: the segment, the workers, its own part, their pairs.
 * Without a segment (dynamic shared memory refused) it runs alone.
 */
void
DiscoveryRunParallel(Discovery *d, int nworkers)
{
	ParallelContext *pcxt;
	Size		scan_size = table_parallelscan_estimate(d->rel, d->snapshot);

	EnterParallelMode();
	pcxt = CreateParallelContext("ndd", "ndd_discovery_worker", nworkers);
	shm_toc_estimate_chunk(&pcxt->estimator, sizeof(DiscoveryShared));
	shm_toc_estimate_chunk(&pcxt->estimator, 2 * MAXALIGN(scan_size));
	if (!d->exact)
		shm_toc_estimate_chunk(&pcxt->estimator, FilterSize(d));
	shm_toc_estimate_keys(&pcxt->estimator, 3);
	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL)
	{
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		DiscoveryRunSerial(d);
		return;
	}
	SetUpSegment(pcxt, d, nworkers);
	LaunchParallelWorkers(pcxt);
	d->participant = 0;
	Participate(d, true);
	WaitForParallelWorkersToFinish(pcxt);
	CopyResults(d);
	DestroyParallelContext(pcxt);
	ExitParallelMode();
	d->shared = NULL;
}

/* A worker: the request and the shared state, then its part of each step. */
void
ndd_discovery_worker(dsm_segment *seg, shm_toc *toc)
{
	DiscoveryShared *shared = shm_toc_lookup(toc, DISCOVERY_KEY_SHARED, false);
	char	   *scans;
	DiscoveryRequest req;
	Discovery	d;

	RequestOf(shared, &req);
	DiscoveryOpen(&d, &req);
	d.partitions = shared->partitions;
	d.nblocks = shared->nblocks;
	DiscoveryLayout(&d);
	d.exact = shared->exact;
	d.shared = shared;
	d.participant = ParallelWorkerNumber + 1;
	SharedFileSetAttach(&shared->fileset, seg);
	scans = shm_toc_lookup(toc, DISCOVERY_KEY_SCANS, false);
	for (int i = 0; i < 2; i++)
		d.scans[i] = (ParallelTableScanDesc) (scans + i * MAXALIGN(table_parallelscan_estimate(d.rel, d.snapshot)));
	if (!d.exact)
		d.filter = KeyFilterInShared(shm_toc_lookup(toc, DISCOVERY_KEY_FILTER, false),
									 req.expected_keys, false);
	Participate(&d, false);
	DiscoveryClose(&d);
}
