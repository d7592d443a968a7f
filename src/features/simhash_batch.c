/*
 * simhash_batch.c
 *		simhash_batch(): every pair of a query fingerprint and a target
 *		fingerprint within max_distance bits, for whole tables of both, by
 *		Manku's permuted tables in memory instead of one index probe per
 *		query.
 *
 * Permuted tables
 * ---------------
 * Split the 64 bits into d + 1 blocks of contiguous bits (d = max_distance).
 * Two fingerprints within d bits differ in at most d blocks, so they agree
 * exactly on at least one (pigeonhole).  For each block t we keep the query
 * fingerprints rotated so that block t comes first, grouped into buckets by
 * their leading r_t bits (a counting sort; r_t is the block's length, or
 * log2 of the number of queries when that is smaller, so the directory
 * takes at most 4 bytes per query).  A target fingerprint, rotated the same
 * way, is compared with every query of its bucket in each table: a rotation
 * keeps the Hamming distance, so the test is one popcount.  A pair within d
 * bits sits in the same bucket of the table of any block it agrees on, so
 * none is missed; it is returned only from the table of the first block it
 * agrees on, so none is returned twice.
 *
 * At d = 3 and a million queries the four tables have buckets of 16 bits
 * holding about 15 queries each: 60 comparisons per target.  The cost
 * grows with d (shorter blocks, larger buckets): at d = 6, seven blocks of
 * 9 or 10 bits.
 *
 * Reading a bucket at random costs a trip to memory, which is most of the
 * time if targets are probed one by one.  So the targets are probed in
 * groups of up to 65,536: in each table the group is sorted by bucket
 * (again a counting sort) and the buckets are read in the order they lie
 * in memory, a sweep the CPU prefetches.
 *
 * The group of targets takes 28 bytes a target, at most a quarter of
 * work_mem and 1.8 MB.  The queries are read first, as many as the rest of
 * work_mem holds (20 + 16 (d + 1) bytes each: 84 at d = 3, so 84 MB for a
 * million).  The targets stream past the queries
 * straight from the executor into a DestReceiver, and each pair goes to
 * the result's tuplestore.  When the queries do not fit, the next part is
 * read and the targets are scanned again (with a NOTICE): memory stays
 * bounded, the time grows with the number of passes.  Both tables are read
 * through SPI, as the caller, so privileges and row security apply.
 */
#include "postgres.h"

#include "access/tupdesc.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "tcop/dest.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

#include "base/ndd_limits.h"
#include "base/sketch_column.h"
#include "sketch/simhash.h"

/* query rows fetched from the cursor at a time */
#define BATCH_FETCH_ROWS	10000

/* most targets probed together, and the bits they are sorted on */
#define BATCH_TARGET_ROWS	65536
#define BATCH_SORT_BITS		16

/* Bytes a target waiting to be probed takes: id, fingerprint, sorted key and its row. */
#define BATCH_BYTES_PER_TARGET \
	(sizeof(int64) + sizeof(SimHash) + sizeof(uint64) + sizeof(uint32))

/* One permuted table: the queries rotated so that one block leads. */
typedef struct BatchTable
{
	int			rotate;			/* rotate left by this to bring the block first */
	int			dirbits;		/* leading bits that pick a bucket */
	uint64		mask;			/* the block's bits, unrotated */
	uint32	   *dir;			/* bucket b holds entries dir[b] .. dir[b + 1] - 1 */
	uint64	   *keys;			/* rotated query fingerprints, by bucket */
	uint32	   *rows;			/* their rows in the chunk */
} BatchTable;

/* The queries in memory, and the receiver the targets stream into. */
typedef struct BatchState
{
	DestReceiver pub;			/* first: the executor sees a DestReceiver */
	int			max_distance;
	int			ntables;
	BatchTable	tables[NDD_SIMHASH_MAX_DISTANCE_MAX + 1];
	uint32		nqueries;		/* queries in the current chunk */
	uint32		capacity;		/* room for this many */
	uint32		limit;			/* most queries a chunk may hold in work_mem */
	int64	   *ids;			/* their ids */
	SimHash    *fps;			/* and fingerprints */
	int			npending;		/* targets waiting to be probed */
	int			maxpending;		/* room for this many */
	int64	   *pending_ids;	/* their ids */
	SimHash    *pending_fps;	/* and fingerprints */
	uint64	   *sorted_keys;	/* rotated, sorted by bucket, in one table */
	uint32	   *sorted_rows;	/* their rows among the pending */
	uint32	   *counts;			/* bucket counts of the sort */
	Tuplestorestate *result;
	TupleDesc	result_desc;
	MemoryContext chunk_cxt;	/* the tables of the current chunk */
} BatchState;

/*
 * Bytes a query takes in memory: id, fingerprint, a slot of the targets'
 * sort, and in each table a key, a row and at most a directory slot.
 */
#define BATCH_BYTES_PER_QUERY(ntables) \
	(sizeof(int64) + sizeof(SimHash) + sizeof(uint32) + \
	 (Size) (ntables) * (sizeof(uint64) + sizeof(uint32) + sizeof(uint32)))

/* v rotated left by s bits (0 <= s < 64). */
static inline uint64
RotateLeft(uint64 v, int s)
{
	return s == 0 ? v : (v << s) | (v >> (64 - s));
}

/* The bucket of a rotated fingerprint in a table. */
static inline uint64
BatchBucket(const BatchTable *table, uint64 key)
{
	return table->dirbits == 0 ? 0 : key >> (64 - table->dirbits);
}

/* Lay out d + 1 blocks of nearly equal length, the first from the top bit. */
static void
BatchLayoutInit(BatchState *state, int max_distance)
{
	int			nblocks = max_distance + 1;
	int			offset = 0;

	state->max_distance = max_distance;
	state->ntables = nblocks;
	for (int t = 0; t < nblocks; t++)
	{
		int			len = NDD_SIMHASH_BITS / nblocks + (t < NDD_SIMHASH_BITS % nblocks);

		state->tables[t].rotate = offset;
		state->tables[t].mask = (len == 64 ? ~UINT64CONST(0) :
								 ((UINT64CONST(1) << len) - 1) << (64 - offset - len));
		/* dirbits is set per chunk; the block's length bounds it */
		state->tables[t].dirbits = len;
		offset += len;
	}
}

/* Group the chunk's queries into the buckets of each table (counting sort). */
static void
BatchBuildTables(BatchState *state)
{
	uint32		n = state->nqueries;
	int			logn = n > 1 ? pg_leftmost_one_pos32(n) : 0;
	MemoryContext old = MemoryContextSwitchTo(state->chunk_cxt);

	/* the targets' sort counts buckets of at most BATCH_SORT_BITS bits */
	state->counts = palloc(((Size) 1 << Min(logn, BATCH_SORT_BITS)) * sizeof(uint32) + sizeof(uint32));

	for (int t = 0; t < state->ntables; t++)
	{
		BatchTable *table = &state->tables[t];
		int			len = NDD_SIMHASH_BITS / state->ntables + (t < NDD_SIMHASH_BITS % state->ntables);
		uint64		nbuckets;

		table->dirbits = Min(len, logn);
		nbuckets = UINT64CONST(1) << table->dirbits;
		table->dir = MemoryContextAllocHuge(state->chunk_cxt, (nbuckets + 1) * sizeof(uint32));
		memset(table->dir, 0, (nbuckets + 1) * sizeof(uint32));
		table->keys = MemoryContextAllocHuge(state->chunk_cxt, Max(n, 1) * sizeof(uint64));
		table->rows = MemoryContextAllocHuge(state->chunk_cxt, Max(n, 1) * sizeof(uint32));

		/* count, then each bucket's start, then place (shifting dir by one) */
		for (uint32 i = 0; i < n; i++)
			table->dir[BatchBucket(table, RotateLeft(state->fps[i], table->rotate)) + 1]++;
		for (uint64 b = 0; b < nbuckets; b++)
			table->dir[b + 1] += table->dir[b];
		for (uint32 i = 0; i < n; i++)
		{
			uint64		key = RotateLeft(state->fps[i], table->rotate);
			uint32		pos = table->dir[BatchBucket(table, key)]++;

			table->keys[pos] = key;
			table->rows[pos] = i;
			if ((i & 0xFFFF) == 0)
				CHECK_FOR_INTERRUPTS();
		}
		/* now dir[b] is the end of bucket b: move it back to the start */
		memmove(table->dir + 1, table->dir, nbuckets * sizeof(uint32));
		table->dir[0] = 0;
	}
	MemoryContextSwitchTo(old);
}

/*
 * Compare the pending targets with the queries of their buckets in every
 * table and put the pairs within max_distance into the result.  A bucket
 * read at random costs a trip to memory; so, in each table, the targets
 * are first sorted by bucket (a counting sort on the leading bits) and the
 * buckets read in the order they lie in memory.  Compiled twice on x86-64,
 * so that popcount is one instruction where the CPU has it.
 */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
__attribute__((target_clones("popcnt", "default")))
#endif
#endif
static void
BatchProbePending(BatchState *state)
{
	int			d = state->max_distance;
	uint32		n = state->npending;

	for (int t = 0; t < state->ntables; t++)
	{
		const BatchTable *table = &state->tables[t];
		int			sortbits = Min(table->dirbits, BATCH_SORT_BITS);
		int			shift = table->dirbits - sortbits;
		uint32		nsort = (uint32) 1 << sortbits;

		/* sort the targets by their bucket's leading bits */
		memset(state->counts, 0, (nsort + 1) * sizeof(uint32));
		for (uint32 j = 0; j < n; j++)
			state->counts[(BatchBucket(table, RotateLeft(state->pending_fps[j], table->rotate)) >> shift) + 1]++;
		for (uint32 b = 0; b < nsort; b++)
			state->counts[b + 1] += state->counts[b];
		for (uint32 j = 0; j < n; j++)
		{
			uint64		key = RotateLeft(state->pending_fps[j], table->rotate);
			uint32		pos = state->counts[BatchBucket(table, key) >> shift]++;

			state->sorted_keys[pos] = key;
			state->sorted_rows[pos] = j;
		}

		/* and sweep the table's buckets in that order */
		for (uint32 p = 0; p < n; p++)
		{
			uint64		key = state->sorted_keys[p];
			uint64		b = BatchBucket(table, key);
			uint32		end = table->dir[b + 1];

			if ((p & 0x3FF) == 0)
				CHECK_FOR_INTERRUPTS();
			for (uint32 i = table->dir[b]; i < end; i++)
			{
				int			distance = __builtin_popcountll(table->keys[i] ^ key);
				uint64		diff;
				bool		first = true;
				Datum		values[3];
				bool		nulls[3] = {false, false, false};

				if (distance > d)
					continue;
				/* a pair is returned from the first block it agrees on */
				diff = RotateLeft(table->keys[i] ^ key, (64 - table->rotate) % 64);
				if ((diff & table->mask) != 0)
					continue;
				for (int u = 0; u < t && first; u++)
					first = (diff & state->tables[u].mask) != 0;
				if (!first)
					continue;
				values[0] = Int64GetDatum(state->ids[table->rows[i]]);
				values[1] = Int64GetDatum(state->pending_ids[state->sorted_rows[p]]);
				values[2] = Int32GetDatum(distance);
				tuplestore_putvalues(state->result, state->result_desc, values, nulls);
			}
		}
	}
	state->npending = 0;
}

/* DestReceiver: each target row (id, fingerprint) as the executor makes it, probed by the group. */
static bool
BatchReceiveSlot(TupleTableSlot *slot, DestReceiver *self)
{
	BatchState *state = (BatchState *) self;
	bool		isnull_id;
	bool		isnull_fp;
	Datum		id = slot_getattr(slot, 1, &isnull_id);
	Datum		fp = slot_getattr(slot, 2, &isnull_fp);

	if (isnull_id || isnull_fp)
		return true;
	state->pending_ids[state->npending] = DatumGetInt64(id);
	state->pending_fps[state->npending++] = DatumGetSimHash(fp);
	if (state->npending == state->maxpending)
		BatchProbePending(state);
	return true;
}

static void
BatchStartup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
}

static void
BatchShutdown(DestReceiver *self)
{
}

static void
BatchDestroy(DestReceiver *self)
{
}

/* Append a query row to the chunk, growing the arrays up to the limit. */
static void
BatchAddQuery(BatchState *state, int64 id, SimHash fp)
{
	if (state->nqueries == state->capacity)
	{
		uint32		grown = (uint32) Min((uint64) state->limit, Max((uint64) state->capacity * 2, 1024));

		state->ids = repalloc_huge(state->ids, grown * sizeof(int64));
		state->fps = repalloc_huge(state->fps, grown * sizeof(SimHash));
		state->capacity = grown;
	}
	state->ids[state->nqueries] = id;
	state->fps[state->nqueries++] = fp;
}

/* The attribute number of a user column, or an error naming it. */
static AttrNumber
BatchColumn(Oid relid, Name column, Oid *type)
{
	AttrNumber	attnum = ResolveColumn(relid, NameStr(*column), type);

	/* a domain over simhash or an integer type serves as its base type */
	*type = getBaseType(*type);
	return attnum;
}

/* SELECT id, fp FROM rel for one relation, after checking its columns. */
static char *
BatchQuery(Oid relid, Name fp_column, Name id_column, Oid simhash_type)
{
	char	   *relname = get_rel_name(relid);
	char	   *nspname;
	Oid			type;

	if (relname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	nspname = get_namespace_name(get_rel_namespace(relid));

	BatchColumn(relid, fp_column, &type);
	if (type != simhash_type)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" of relation \"%s\" is not of type simhash",
						NameStr(*fp_column), relname)));
	(void) ResolveIdColumn(relid, NameStr(*id_column), "The ids are returned as bigint.", &type);

	/* rows without a fingerprint or an id have no pair to report */
	return psprintf("SELECT CAST(t.%1$s AS pg_catalog.int8), t.%2$s FROM %3$s t "
					"WHERE t.%1$s IS NOT NULL AND t.%2$s IS NOT NULL",
					quote_identifier(NameStr(*id_column)),
					quote_identifier(NameStr(*fp_column)),
					quote_qualified_identifier(nspname, relname));
}

/* ndd's simhash, found beside this function (the extension is relocatable). */
static Oid
BatchSimHashType(Oid fn_oid)
{
	Oid			simhash_type = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
											   CStringGetDatum("simhash"),
											   ObjectIdGetDatum(NddNamespace(fn_oid)));

	if (!OidIsValid(simhash_type))
		elog(ERROR, "type simhash not found beside function simhash_batch");
	return simhash_type;
}

/* The state of a batch: the receiver of the targets, the tables' layout, their room in work_mem. */
static BatchState *
BatchStateCreate(ReturnSetInfo *rsinfo, int max_distance)
{
	BatchState *state = palloc0(sizeof(BatchState));

	state->pub.receiveSlot = BatchReceiveSlot;
	state->pub.rStartup = BatchStartup;
	state->pub.rShutdown = BatchShutdown;
	state->pub.rDestroy = BatchDestroy;
	state->pub.mydest = DestNone;
	state->result = rsinfo->setResult;
	state->result_desc = rsinfo->setDesc;
	BatchLayoutInit(state, max_distance);
	/* a quarter of work_mem for the targets waiting to be probed, the rest for the queries */
	state->maxpending = (int) Max(Min((Size) work_mem * 1024 / 4 / BATCH_BYTES_PER_TARGET,
									  (Size) BATCH_TARGET_ROWS), 1);
	state->limit = (uint32) Min(((Size) work_mem * 1024 - (Size) state->maxpending * BATCH_BYTES_PER_TARGET) /
								BATCH_BYTES_PER_QUERY(state->ntables),
								(Size) PG_INT32_MAX);
	state->limit = Max(state->limit, 1);
	state->pending_ids = palloc(state->maxpending * sizeof(int64));
	state->pending_fps = palloc(state->maxpending * sizeof(SimHash));
	state->sorted_keys = palloc(state->maxpending * sizeof(uint64));
	state->sorted_rows = palloc(state->maxpending * sizeof(uint32));
	state->chunk_cxt = AllocSetContextCreate(CurrentMemoryContext, "simhash_batch tables",
											 ALLOCSET_DEFAULT_SIZES);
	state->ids = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(int64));
	state->fps = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(SimHash));
	state->capacity = 1;
	return state;
}

/* A cursor on the queries, as the caller (SPI must be connected). */
static Portal
BatchOpenQueries(const char *queries_sql)
{
	SPIPlanPtr	plan = SPI_prepare(queries_sql, 0, NULL);

	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	return SPI_cursor_open(NULL, plan, NULL, NULL, true);
}

/*
 * Read the next chunk of queries, as many as work_mem holds.  Returns
 * false when the cursor ran out of rows.
 */
static bool
BatchReadQueries(BatchState *state, Portal portal)
{
	state->nqueries = 0;
	while (state->nqueries < state->limit)
	{
		uint64		want = Min((uint64) BATCH_FETCH_ROWS, (uint64) (state->limit - state->nqueries));

		SPI_cursor_fetch(portal, true, (long) want);
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			HeapTuple	tuple = SPI_tuptable->vals[r];
			bool		isnull;
			int64		id = DatumGetInt64(SPI_getbinval(tuple, SPI_tuptable->tupdesc, 1, &isnull));
			SimHash		fp = DatumGetSimHash(SPI_getbinval(tuple, SPI_tuptable->tupdesc, 2, &isnull));

			BatchAddQuery(state, id, fp);
		}
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
		if (SPI_processed < want)
			return false;
	}
	return true;
}

/*
 * simhash_batch(queries regclass, targets regclass, max_distance int,
 * fingerprint_column name, id_column name): (query_id, target_id, distance)
 * for every pair within max_distance bits (NULL: ndd.hamming_threshold).
 */
PG_FUNCTION_INFO_V1(simhash_batch);
Datum
simhash_batch(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	BatchState *state;
	Oid			simhash_type;
	char	   *queries_sql;
	char	   *targets_sql;
	Portal		portal;
	SPIExecuteOptions options;
	int			max_distance;
	int			passes = 0;
	bool		more = true;

	for (int i = 0; i < 5; i++)
		if (i != 2 && PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("queries, targets, fingerprint_column and id_column must not be null")));
	max_distance = PG_ARGISNULL(2) ? ndd_hamming_threshold : PG_GETARG_INT32(2);
	NddCheckMaxDistance(max_distance);

	simhash_type = BatchSimHashType(fcinfo->flinfo->fn_oid);
	queries_sql = BatchQuery(PG_GETARG_OID(0), PG_GETARG_NAME(3), PG_GETARG_NAME(4), simhash_type);
	targets_sql = BatchQuery(PG_GETARG_OID(1), PG_GETARG_NAME(3), PG_GETARG_NAME(4), simhash_type);

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	state = BatchStateCreate(rsinfo, max_distance);

	SPI_connect();
	portal = BatchOpenQueries(queries_sql);
	memset(&options, 0, sizeof(options));
	options.read_only = true;
	options.dest = (DestReceiver *) state;

	while (more)
	{
		/* read as many queries as work_mem holds */
		more = BatchReadQueries(state, portal);
		if (state->nqueries == 0)
			break;
		if (passes++ == 1)
			ereport(NOTICE,
					(errmsg("simhash_batch scans the targets once per %u queries", state->limit),
					 errdetail("work_mem holds %u query fingerprints at max_distance %d, %zu bytes each.",
							   state->limit, max_distance, BATCH_BYTES_PER_QUERY(state->ntables)),
					 errhint("Raise work_mem for fewer scans.")));

		/* stream the targets past them */
		BatchBuildTables(state);
		/* (a SELECT into a receiver of DestNone reports SPI_OK_UTILITY) */
		if (SPI_execute_extended(targets_sql, &options) < 0)
			elog(ERROR, "SPI_execute_extended failed");
		BatchProbePending(state);
		MemoryContextReset(state->chunk_cxt);
	}
	SPI_cursor_close(portal);
	SPI_finish();
	return (Datum) 0;
}
