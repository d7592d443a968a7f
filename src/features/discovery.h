/*
 * discovery.h
 *		The discovery engine: near_duplicate_pairs in C, in passes over the
 *		table and over temporary files, instead of SQL statements over
 *		temporary tables (pairs.c keeps those for what the engine does not
 *		read: tables across shards, views, row security, verification).
 *
 * Counting the keys exactly, its steps are:
 *
 *	1. key scan: every row's bucket keys with its heap position, into
 *	   partitions by key (spill.h), its summary into partitions by heap
 *	   range, and every sketch checked to be made like the first;
 *	2. counting: each partition sorted, each key's rows counted exactly,
 *	   and the keys that more than one row holds, with their counts, into
 *	   the partitions of their rows' heap ranges;
 *	3. summaries: each heap range's shared keys joined to its summaries
 *	   by row, each row's most frequent keys left out as prefix filtering
 *	   allows, the rest with the summary into partitions by key;
 *	4. grouping: each partition sorted in memory, and the rows of each key
 *	   paired when their summaries are close enough, into partitions of
 *	   candidate pairs;
 *	5. scoring: each partition's pairs sorted, each pair once, its two
 *	   rows fetched by heap position and scored as the SQL path scores them;
 *	with verify_column, the pairs that pass on their sketches then go on:
 *	6. components: those pairs grouped by connected component (the leader
 *	   alone), so that a family's texts are read together;
 *	7. verification: each group's texts shingled once, each pair's exact
 *	   Jaccard resemblance from them.
 *
 * That is when the table's keys are too many for the key filter in
 * work_mem (key_filter.h): a filter of keys seen twice, held to work_mem,
 * lets more and more single keys through as the table grows, where
 * counting by sorting is exact at any size, and a row's summary, four
 * times the size of a key, is spilled once by heap range (not re-read
 * from the table) and joined only to its shared keys.  When the
 * filter has its full bits a key, it is cheaper, most of all where most
 * keys are shared (families of near-duplicates), and the first steps are
 * the SQL path's: step 1 adds every row's keys to the filter, step 2 has
 * nothing to do, and step 3 is a second heap pass that spills the keys the
 * filter passes, less the most frequent, with the row's summary, by key.
 *
 * A row is known by its heap position (TID) under one snapshot: it needs
 * no index on the id, and sorts like the heap.  Memory is bounded by
 * work_mem: a partition that would not fit is split again before it is
 * read.
 */
#ifndef NDD_DISCOVERY_H
#define NDD_DISCOVERY_H

#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/tupdesc.h"
#include "executor/tuptable.h"
#include "utils/guc.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"
#include "utils/tuplestore.h"

#include "base/spill.h"
#include "keys/bucket_keys.h"
#include "keys/key_filter.h"

/* the engine's steps, in order; a parallel operation's barrier phases */
#define DISCOVERY_STEP_KEYS		0
#define DISCOVERY_STEP_COUNT	1
#define DISCOVERY_STEP_SUMMARIES	2
#define DISCOVERY_STEP_GROUP	3
#define DISCOVERY_STEP_SCORE	4
#define DISCOVERY_STEP_COMPONENTS	5
#define DISCOVERY_STEP_VERIFY	6
#define DISCOVERY_STEPS			7

/* what the steps count, for the NOTICEs (each participant its own) */
typedef enum DiscoveryCount
{
	COUNT_ROWS,					/* step 1: rows with a sketch and an id */
	COUNT_KEYS,					/* step 1: their keys */
	COUNT_KEPT,					/* step 3: keys shared, less the most frequent */
	COUNT_CANDIDATES,			/* step 5 */
	COUNT_PAIRS,				/* step 5, or 7 with verification */
	DISCOVERY_COUNTS
} DiscoveryCount;

/* ndd.discovery_path: which path near_duplicate_pairs takes */
typedef enum DiscoveryPath
{
	DISCOVERY_PATH_AUTO,		/* the engine where it can read the table */
	DISCOVERY_PATH_ENGINE,		/* the engine, or an error saying why not */
	DISCOVERY_PATH_SQL,			/* SQL statements over temporary tables */
} DiscoveryPath;

extern int	ndd_discovery_path;
extern bool ndd_discovery_row_numbers;	/* developer: off, records as for 64 GB tables */
extern const struct config_enum_entry discovery_path_options[];

/* what near_duplicate_pairs asks of the engine */
typedef struct DiscoveryRequest
{
	Oid			relid;
	const char *sketch_name;
	const char *id_name;
	const char *relation_name;	/* as error messages name it */

	/* the keys: minhash banding, or simhash distance */
	bool		simhash;
	int			num_perm;
	int			bands;
	int			rows;
	int			required;
	double		lower;
	int			max_distance;
	int			drop_frequent;	/* each row's most frequent keys left out */
	int64		expected_keys;	/* about how many keys, to size partitions */
	int64		expected_rows;

	/* verification: the text column, shingled so, and the exact threshold */
	const char *verify_name;	/* NULL: the estimate decides */
	const char *verify_unit;
	int			verify_shingle_size;
	double		threshold;

	/* minhash: every sketch must be made like the first */
	bool		check_settings;
	int			source;
	int			shingle_size;
	int32		seed;

	/*
	 * progress NOTICEs, through the caller (the leader only): the message,
	 * and the share of the work done by then as the engine's model has it
	 * (discovery_engine.c), for an estimate of the time left
	 */
	void		(*progress) (void *arg, const char *message, double done);
	void	   *arg;
} DiscoveryRequest;

typedef struct DiscoveryShared DiscoveryShared;

/* one participant's state over one call: the leader's, or a worker's */
typedef struct Discovery
{
	const DiscoveryRequest *req;
	BucketKeys	keys;
	Relation	rel;
	Snapshot	snapshot;
	AttrNumber	sketch_att;
	AttrNumber	id_att;
	Oid			id_type;		/* int2, int4 or int8 */
	AttrNumber	verify_att;		/* 0: no verification */
	Size		budget;			/* work_mem, in bytes */
	MemoryContext row_context;	/* reset after each row or pair */

	/* parallel: the shared state, this participant's number (leader 0) */
	DiscoveryShared *shared;
	int			participant;
	ParallelTableScanDesc scans[2]; /* step 1's, and step 3's with the filter */
	int			next_part;		/* serially: the next partition to take */

	bool		exact;			/* keys counted exactly, or by the filter */
	KeyFilterState *filter;

	BlockNumber nblocks;		/* the heap's, split into ranges in step 2 */
	bool		narrow;			/* rows have 32-bit numbers (RowKey) */
	Size		entry_header;	/* a NarrowEntry or a WideEntry */
	Size		entry_width;	/* the header with its summary */
	Size		edge_width;		/* a pair: narrow 8 bytes, wide an Edge */
	int			partitions;		/* of row keys, entries and candidates */
	int			range_partitions;	/* of summaries and shared keys, by heap range */
	Size		summary_width;	/* a RowSummary */
	Spill	   *row_keys;		/* of RowKey, by key */
	Spill	   *summaries;		/* of RowSummary, by heap range */
	Spill	   *shared_keys;	/* of SharedKey, by heap range */
	Spill	   *entries;		/* of NarrowEntry or WideEntry, by key */
	Spill	   *edges;			/* of pairs, by first row's heap range */
	Spill	   *checks;			/* verification: of TextCheck, to group */
	Spill	   *groups;			/* verification: of TextCheck, by group */
	int			group_partitions;	/* of groups */
	Spill	   *results;		/* parallel: of PairResult, for the leader */

	int64		counts[DISCOVERY_COUNTS];	/* this participant's */

	Tuplestorestate *out;
	TupleDesc	out_desc;
} Discovery;

/*
 * One key of one row, as spilled in step 1: 8 bytes, the key's tag and
 * the row's TID as one 32-bit number, its block times the lines a page
 * can hold plus its line.  That fits tables of fewer than
 * ROW_KEY_MAX_BLOCKS blocks (2^23 at 8kB, 64 GB): beyond, the engine
 * keeps the filter.
 *
 * A key is known by its partition of step 1 and a tag, both from its
 * hash (DiscoveryKeyTag): the partition from the hash's high bits, the
 * tag its low 32.  Two keys of one partition with one tag count as one
 * key (at 10M rows about one key in 16,000): that only adds candidates,
 * which their scores then reject, and the prefix drop stays exact, since
 * a row drops a key for each of its own that it holds (so a pair that
 * shares enough keys still keeps the last of them it shares, however
 * the keys fell together).
 */
typedef struct RowKey
{
	uint32		tag;
	uint32		row;
} RowKey;

#define ROW_KEY_LINE_BITS \
	(MaxHeapTuplesPerPage < 512 ? 9 : MaxHeapTuplesPerPage < 1024 ? 10 : \
	 MaxHeapTuplesPerPage < 2048 ? 11 : 12)
#define ROW_KEY_MAX_BLOCKS		((BlockNumber) 1 << (32 - ROW_KEY_LINE_BITS))

/* a row's 32-bit number (RowKey.row) as PackRow packs its TID */
static inline uint64
PackRowNumber(uint32 row)
{
	return ((uint64) (row >> ROW_KEY_LINE_BITS) << 16) | (row & ((1 << ROW_KEY_LINE_BITS) - 1));
}

/*
 * A row's summary, as spilled in step 1: its 32-bit number as in RowKey,
 * then the summary's words (bucket_keys.h), copied in and out.
 */
typedef struct RowSummary
{
	uint32		row;
	uint32		summary[FLEXIBLE_ARRAY_MEMBER];	/* uint64 words, 4-byte aligned */
} RowSummary;

/* a packed TID (PackRow) as RowKey numbers rows, for a table of fewer than ROW_KEY_MAX_BLOCKS */
static inline uint32
RowNumberOfPacked(uint64 row)
{
	return (uint32) (((row >> 16) << ROW_KEY_LINE_BITS) | (row & 0xFFFF));
}

/*
 * A key more than one row holds, as spilled in step 2: 12 bytes, the tag
 * and row as in RowKey, then the key's partition of step 1 (at most
 * 4,096: SpillMaxPartitions) and how many rows hold it, saturated (the
 * counts only order a row's keys for the prefix drop, exact under any
 * order).
 */
typedef struct SharedKey
{
	uint32		tag;
	uint32		row;
	uint32		part_count;		/* partition << SHARED_COUNT_BITS | count */
} SharedKey;

#define SHARED_COUNT_BITS	20
#define SHARED_COUNT_MAX	((1U << SHARED_COUNT_BITS) - 1)

/* a shared key as one number (its partition, then its tag), and its count */
static inline uint64
SharedKeyKey(const SharedKey *sk)
{
	return ((uint64) (sk->part_count >> SHARED_COUNT_BITS) << 32) | sk->tag;
}

static inline uint32
SharedKeyCount(const SharedKey *sk)
{
	return sk->part_count & SHARED_COUNT_MAX;
}

/*
 * One kept key of one row with the row's summary, as spilled in step 3.
 * Where rows have 32-bit numbers (Discovery.narrow: every table of fewer
 * than ROW_KEY_MAX_BLOCKS), the key is its tag within its partition of
 * step 1 and the row its number, 8 bytes before the summary (NarrowEntry);
 * else the whole key and the packed TID, 16 (WideEntry, the filter path
 * of tables of 64 GB and more).  At 10M rows the narrow entries are 0.75 GB
 * fewer of the temporary files.
 */
typedef struct NarrowEntry
{
	uint32		tag;
	uint32		row;
} NarrowEntry;

typedef struct WideEntry
{
	uint64		key;
	uint64		row;			/* the row's TID, packed */
} WideEntry;

/* an entry's summary, after its key and row */
static inline uint64 *
EntrySummary(char *entry, Size header)
{
	return (uint64 *) (entry + header);
}

/*
 * A candidate pair, rows in order: narrow, the two 32-bit row numbers as
 * one number (first row high); wide, an Edge of packed TIDs.
 */
typedef struct Edge
{
	uint64		lo;
	uint64		hi;
} Edge;

static inline uint64
NarrowPair(uint32 lo, uint32 hi)
{
	return ((uint64) lo << 32) | hi;
}

/*
 * A pair that passed on its sketches, to check on its texts: its rows, the
 * group of rows it is checked with (its connected component, or its first
 * row), and its distance as scored.
 */
typedef struct TextCheck
{
	uint64		group;
	uint64		lo;
	uint64		hi;
	int32		distance;
	bool		distance_null;
} TextCheck;

/* a TID as one ordered number, and back */
static inline uint64
PackRow(ItemPointer tid)
{
	return ((uint64) ItemPointerGetBlockNumberNoCheck(tid) << 16) |
		ItemPointerGetOffsetNumberNoCheck(tid);
}

static inline void
UnpackRow(uint64 row, ItemPointer tid)
{
	ItemPointerSet(tid, (BlockNumber) (row >> 16), (OffsetNumber) (row & 0xFFFF));
}

/* a pair that qualifies, as a parallel participant passes it to the leader */
typedef struct PairResult
{
	int64		id_a;
	int64		id_b;
	double		similarity;
	int32		distance;
	bool		distance_null;
} PairResult;

/* a fetched row: its id and sketch, valid while its slot holds it */
typedef struct FetchedRow
{
	TupleTableSlot *slot;
	bool		found;
	int64		id;
	bool		id_null;
	Datum		sketch;
} FetchedRow;

/* discovery_engine.c */
extern bool DiscoveryEngineReads(Oid relid, const char *sketch_name, const char *id_name,
								 const char *verify_name, const char **why);
extern uint64 DiscoveryEngineRun(const DiscoveryRequest *req, Tuplestorestate *out,
								 TupleDesc out_desc);
extern void DiscoveryOpen(Discovery *d, const DiscoveryRequest *req);
extern void DiscoveryLayout(Discovery *d);
extern void DiscoveryClose(Discovery *d);
extern void DiscoveryStep(Discovery *d, int step);
extern void DiscoveryRunSerial(Discovery *d);
extern void DiscoveryReport(Discovery *d, int step);
extern void DiscoveryMixedSketches(const char *column, const char *relation, const char *detail);
extern void DiscoveryMixedSettings(const char *column, const char *relation, const char *one,
								   const char *other);

/* discovery_parallel.c */
extern int	DiscoveryWorkers(Relation rel, bool verify);
extern int	DiscoveryParticipants(Discovery *d);
extern void DiscoveryShareGroupPartitions(Discovery *d);
extern int	DiscoverySharedGroupPartitions(Discovery *d);
extern void DiscoveryRunParallel(Discovery *d, int nworkers);
extern bool DiscoveryClaim(Discovery *d, int step, int nparts, int *part);
extern int64 DiscoveryTotal(Discovery *d, DiscoveryCount which);

/* discovery_scan.c: step 1, and step 3 with the filter */
extern void DiscoveryKeyScan(Discovery *d);
extern void DiscoveryFilterScan(Discovery *d);
extern void DiscoveryFilteredKeyScan(Discovery *d);

/* discovery_count.c: step 2 */
extern void DiscoveryCountKeys(Discovery *d);
extern int	DiscoveryRangePartitions(Discovery *d);

/* discovery_summaries.c: step 3 */
extern void DiscoverySummaries(Discovery *d);

/* discovery_group.c: step 4 */
extern void DiscoveryGroupKeys(Discovery *d);

/* discovery_pairs.c: step 5, and the answer's pairs */
extern void DiscoveryScorePairs(Discovery *d);
extern void DiscoveryFetch(Discovery *d, uint64 row, FetchedRow *r);
extern void DiscoveryAnswer(Discovery *d, int64 id_a, int64 id_b, double similarity,
							int32 distance, bool distance_null);

/* discovery_components.c: step 6 */
extern void DiscoveryGroupChecks(Discovery *d);
extern int	DiscoveryGroupPartition(const void *record, int level, int nparts, const void *arg);

/* discovery_verify.c: step 7 */
extern void DiscoveryVerifyChecks(Discovery *d);

/*
 * Partition part of spill, split again while its records, need bytes each
 * in memory, would not fit budget (at most DISCOVERY_MAX_SPLITS times: a
 * key's records are never split, so one key of a great many rows is read
 * whole), each piece then given to process.
 */
#define DISCOVERY_MAX_SPLITS	4

typedef void (*DiscoveryInMemory) (Discovery *d, Spill *spill, int part, void *arg);

extern void DiscoveryFitPartition(Discovery *d, Spill *spill, int part, Size need, Size budget,
								  DiscoveryInMemory process, void *arg);

/* partitions for records of width bytes, about total of them, in budget */
extern int	DiscoveryPartitions(Size budget, double total, Size width);

/* the heap range of nparts a block falls in */
extern int	DiscoveryBlockRange(const Discovery *d, uint64 block, int nparts);

/* the partition of nparts a value falls in, hashed with salt */
extern int	DiscoveryPartitionOf(uint64 value, uint64 salt, int nparts);

/* a key's partition of step 1's nparts, and its tag (RowKey) */
extern int	DiscoveryKeyTag(uint64 key, int nparts, uint32 *tag);

/*
 * the partition of a row key split again (step 1 gives the first with
 * SpillAddTo), an entry (by key) and a candidate (by first row)
 */
extern int	DiscoveryRowKeyPartition(const void *record, int level, int nparts, const void *arg);
extern int	DiscoveryEntryPartition(const void *record, int level, int nparts, const void *arg);
extern int	DiscoveryEdgePartition(const void *record, int level, int nparts, const void *arg);

/* a shared key's partition and a summary's: its row's heap range (split again: the row's hash) */
extern int	DiscoverySharedKeyPartition(const void *record, int level, int nparts, const void *arg);
extern int	DiscoveryRowSummaryPartition(const void *record, int level, int nparts, const void *arg);

/*
 * A spill of kind ("k" row keys, "u" summaries, "s" shared keys, "e"
 * entries, "g" candidates, "v" checks, "r" results) this
 * participant writes, and the spill of that kind every participant wrote,
 * to read (serially: written itself).
 */
extern Spill *DiscoveryWriteSpill(Discovery *d, const char *kind, int nparts, Size width,
								  SpillPartitionOf partition_of);
extern Spill *DiscoveryReadSpill(Discovery *d, const char *kind, Spill *written, int nparts,
								 Size width, SpillPartitionOf partition_of);

#endif							/* NDD_DISCOVERY_H */
