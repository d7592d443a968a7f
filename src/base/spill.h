/*
 * spill.h
 *		Fixed-width records spread over partitions kept in temporary files:
 *		how a pass over millions of rows groups what it found without holding
 *		it in memory.  Each partition is read back whole when it fits the
 *		caller's budget, or split again into smaller ones when it does not.
 *
 * The files are fd.c's temporary files, written and read in large calls
 * (spill.c says why not BufFiles): they count against temp_file_limit,
 * and they are deleted at the end of the transaction, or with a parallel
 * operation's shared file set, whether it commits or fails.  A spill is private to its backend, or written by
 * each participant of a parallel operation under its own name in a shared
 * file set and read as one by any of them (each partition the union of
 * every writer's file for it).
 */
#ifndef NDD_SPILL_H
#define NDD_SPILL_H

#include "storage/sharedfileset.h"

typedef struct Spill Spill;

/*
 * Which partition, of nparts, a record goes to; level counts re-splits,
 * arg is what the spill was made with.
 */
typedef int (*SpillPartitionOf) (const void *record, int level, int nparts, const void *arg);

/* a private spill, in this backend's temporary files */
extern Spill *SpillCreate(int nparts, Size width, SpillPartitionOf partition_of,
						  const void *partition_arg, int level);

/* one writer's part of a shared spill: files "<name>.<part>" in fileset */
extern Spill *SpillCreateShared(SharedFileSet *fileset, const char *name, int nparts, Size width,
								SpillPartitionOf partition_of, const void *partition_arg);

/* a shared spill to read: the files of every writer named in names */
extern Spill *SpillOpenShared(SharedFileSet *fileset, char **names, int nnames, int nparts,
							  Size width, SpillPartitionOf partition_of, const void *partition_arg);

extern int	SpillPartitions(const Spill *spill);
extern void SpillAdd(Spill *spill, const void *record);
/* A record into the given partition: the caller knows it from more than the record. */
extern void SpillAddTo(Spill *spill, int part, const void *record);
extern uint64 SpillRecords(Spill *spill, int part);
extern uint64 SpillTotal(const Spill *spill);

/* A writer is done: its files are closed, for others to read. */
extern void SpillEndWriting(Spill *spill);

/* Partition part's records, in one palloc'd array; its files are dropped. */
extern char *SpillTake(Spill *spill, int part, uint64 *nrecords);

/*
 * Call visit on each of partition part's records in turn, a chunk at a
 * time: SpillScan keeps the partition for another pass, SpillForEach drops
 * its files after.
 */
extern void SpillScan(Spill *spill, int part, void (*visit) (void *arg, const void *record),
					  void *arg);
extern void SpillForEach(Spill *spill, int part, void (*visit) (void *arg, const void *record),
						 void *arg);

/* Partition part's records split again into nparts, privately; its files are dropped. */
extern Spill *SpillSplit(Spill *spill, int part, int nparts);

extern void SpillEnd(Spill *spill);

/* partitions whose write buffers, a block each at least, take at most a quarter of budget bytes */
extern int	SpillMaxPartitions(Size budget);

#endif							/* NDD_SPILL_H */
